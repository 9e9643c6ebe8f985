"""Prometheus metrics of the call path. Label sets are bounded: never call or owner ids."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref

from prometheus_client import Counter, Gauge, Histogram

from . import memory

_LATENCY_BUCKETS = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.2,
    0.3,
    0.4,
    0.5,
    0.6,
    0.8,
    1.0,
    1.25,
    1.5,
    2.0,
    3.0,
    5.0,
    10.0,
)
_FAST_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25)

VOICE_TO_VOICE = Histogram(
    "callassist_voice_to_voice_seconds",
    "End of caller speech to first assistant audio",
    ["transport", "lang"],
    buckets=_LATENCY_BUCKETS,
)
ASR_SECONDS = Histogram(
    "callassist_asr_seconds",
    "Speech recognition time per utterance",
    ["lang"],
    buckets=_LATENCY_BUCKETS,
)
DECISION_SECONDS = Histogram(
    "callassist_decision_seconds",
    "Coordinator decision time per turn (incl. utterance embedding)",
    buckets=(*_FAST_BUCKETS, 0.5, 1.0),
)
UNDERSTANDING_PRECOMPUTED = Counter(
    "callassist_understanding_precomputed_total",
    "Voice turns whose utterance embedding was ready from the speculative transcript (hit) or not (miss)",
    ["outcome"],
)
REALIZER_TTFT = Histogram(
    "callassist_realizer_ttft_seconds",
    "Realizer time to first token",
    ["realizer", "endpoint"],
    buckets=(*_FAST_BUCKETS[:4], *_LATENCY_BUCKETS),
)
TTS_FIRST_AUDIO = Histogram(
    "callassist_tts_first_audio_seconds",
    "TTS time to first audio per reply",
    ["engine", "cached"],
    buckets=_LATENCY_BUCKETS,
)
GUARD_SECONDS = Histogram("callassist_safety_guard_seconds", "Safety guard time per sentence", buckets=_FAST_BUCKETS)

CALLS = Counter("callassist_calls_total", "Calls ended", ["transport", "outcome"])
CALLS_STARTED = Counter("callassist_calls_started_total", "Calls started", ["transport"])
TURNS = Counter("callassist_turns_total", "Caller turns handled", ["transport"])
PRESETS_CONVEYED = Counter("callassist_presets_conveyed_total", "Presets conveyed", ["kind"])
SAFETY_INTERVENTIONS = Counter(
    "callassist_safety_interventions_total",
    "Sentences replaced by the safety guard",
    ["constraint"],
)
INPUT_FLAGS = Counter("callassist_input_flags_total", "Caller turns flagged by the input guard", ["kind"])
TTFT_FALLBACKS = Counter(
    "callassist_ttft_guard_fallbacks_total", "Turns where the template replaced the LLM", ["reason"]
)
DROPPED_FRAMES = Counter(
    "callassist_dropped_frames_total",
    "Malformed or oversized transport frames dropped",
    ["transport", "reason"],
)
ERRORS = Counter("callassist_errors_total", "Errors on the call path", ["component"])
OWNER_EVENTS = Counter("callassist_owner_events_total", "Owner events written", ["kind"])
WEBHOOK_ATTEMPTS = Counter("callassist_webhook_attempts_total", "Webhook delivery attempts", ["outcome"])

ACTIVE_CALLS = Gauge("callassist_active_calls", "Calls in progress", ["transport"])
MODELS_LOADED = Gauge(
    "callassist_models_loaded", "1 once the text path's models are loaded (before /readyz answers ready)"
)
ENDPOINT_UP = Gauge("callassist_llm_endpoint_up", "1 if the LLM endpoint is in service", ["endpoint"])
ENDPOINT_MEDIAN_TTFT = Gauge(
    "callassist_llm_median_ttft_seconds", "Rolling median TTFT of the LLM endpoint", ["endpoint"]
)

# Runtime figures for soak tests (read on each scrape): what must return to its baseline
# once calls are over. A voice call object still alive after its call ended is a leak:
# finished calls are held by weak reference only, so that count is normally 0.
RUNTIME = Gauge("callassist_runtime", "asyncio tasks, threads, finished voice calls still alive", ["kind"])
_FINISHED: weakref.WeakSet[object] = weakref.WeakSet()


def call_finished(call: object) -> None:
    _FINISHED.add(call)


def _finished_alive() -> int:
    if _FINISHED:
        gc.collect()  # only when something is suspected: cycles die at the next collection
    return len(_FINISHED)


def _tasks() -> int:
    try:
        return len(asyncio.all_tasks())
    except RuntimeError:  # scraped outside the event loop
        return -1


RUNTIME.labels(kind="tasks").set_function(_tasks)
RUNTIME.labels(kind="threads").set_function(threading.active_count)
RUNTIME.labels(kind="finished_calls_alive").set_function(_finished_alive)
RUNTIME.labels(kind="memory_trims").set_function(lambda: memory.TRIMMER.trims)  # malloc_trim runs so far
