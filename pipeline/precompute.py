"""Synthesizing known sentences ahead of calls: every preset response when the pool is
saved, the owner's template wordings (and default quick replies) when the profile is
saved, the owner's own quick replies when they are saved. One background thread,
so call-path synthesis is never starved for long; ``pending`` tells how much is queued."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

from coordinator.render import all_wordings
from presets.models import PresetPool, Profile
from presets.screening import DEFAULT_QUICK_REPLIES

from .tts import Synthesizer

log = logging.getLogger(__name__)


class _Stopped(Exception):
    pass


class Precomputer:
    def __init__(self, synthesizer: Synthesizer, *, busy: Callable[[], bool] | None = None) -> None:
        self.synthesizer = synthesizer
        # While calls are live they own the CPU: precomputing waits between sentences.
        self._busy = busy or (lambda: False)
        self._stop = threading.Event()
        self._q: queue.Queue[list[str] | None] = queue.Queue()
        self._pending = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="tts-precompute", daemon=True)
        self._thread.start()
        self.synthesized = 0

    @property
    def pending(self) -> int:
        with self._lock:
            return self._pending

    def submit(self, texts: list[str]) -> None:
        texts = [t for t in texts if t and t.strip()]
        if not texts:
            return
        with self._lock:
            self._pending += 1
        self._q.put(texts)

    def wait_idle(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.pending and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.pending == 0

    def _run(self) -> None:
        while True:
            job = self._q.get()
            if job is None:
                return
            try:
                t0 = time.perf_counter()
                n = self.synthesizer.precompute(job, before_each=self._wait_idle)
                self.synthesized += n
                if n:
                    log.info(
                        "precomputed speech",
                        extra={"units": n, "seconds": round(time.perf_counter() - t0, 2)},
                    )
            except _Stopped:
                return
            except Exception:
                log.exception("speech precompute failed")
            finally:
                with self._lock:
                    self._pending -= 1

    def _wait_idle(self) -> None:
        waited = 0.0
        while self._busy() and waited < 30.0 and not self._stop.is_set():
            time.sleep(0.2)
            waited += 0.2
        if self._stop.is_set():
            raise _Stopped

    def close(self, timeout: float = 60.0) -> None:
        """Stop after the sentence being synthesized (a native thread must not outlive
        the interpreter: that aborts the process)."""
        self._stop.set()
        self._q.put(None)
        self._thread.join(timeout)

    # ------------------------------------------------------------ hooks ----

    async def on_pool_saved(self, owner_id: str, pool: PresetPool) -> None:
        """PresetHook: every regular and emergent response, spoken the way calls will."""
        texts = [slot.response for slot in pool.regular.values() if slot is not None]
        texts += [p.response for p in pool.emergent if p.enabled]
        self.submit(texts)
        # Recognition bias for this owner's calls: key terms of every trigger and response,
        # extracted now (cached per process) rather than on a caller's first turn.
        from .asr_bias import key_terms
        from .tts import text_lang

        for text in texts + [p.trigger or "" for p in pool.emergent if p.enabled]:
            if text:
                key_terms(text, text_lang(text))

    async def on_profile_saved(self, owner_id: str, profile: Profile) -> None:
        """ProfileHook: the greeting and every template wording with the owner's name."""
        texts: list[str] = []
        if profile.greeting:
            texts.append(profile.greeting)
        for lang in profile.languages:
            texts += all_wordings(profile.display_name, lang)
        texts += DEFAULT_QUICK_REPLIES.get(profile.languages[0], [])  # one-click replies, shown in this language
        self.submit(texts)
