"""The live voice call: a per-call pipecat pipeline around the shared CallSession.

    transport.input()          Twilio/Telnyx/Plivo WebSocket, WebRTC, SIP bridge
    VADProcessor               Silero VAD (ships in pipecat)
    TurnRecorder               records the caller's turn; speculative Whisper at each VAD stop
    TurnBridge                 Smart Turn v3 end-of-turn; emits the whole turn's text at once
    CallProcessor              CallSession.respond(): coordinator -> realizer -> safety guard
    LocalTTS                   cached / piper / Kokoro / espeak-ng audio, unit by unit
    transport.output()

Barge-in: the caller speaking starts a user turn, pipecat broadcasts an
InterruptionFrame, queued assistant audio is dropped and the serializer sends
Twilio's ``clear``; the reply task is cancelled and the new turn is handled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from pipecat.audio.turn.smart_turn.base_smart_turn import SmartTurnParams
from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import LocalSmartTurnAnalyzerV3
from pipecat.audio.utils import create_stream_resampler
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    CancelFrame,
    DataFrame,
    EndFrame,
    EndWorkerFrame,
    ErrorFrame,
    Frame,
    InputAudioRawFrame,
    InputDTMFFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    TranscriptionFrame,
    TTSSpeakFrame,
    UserStartedSpeakingFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.observers.user_bot_latency_observer import UserBotLatencyObserver
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.settings import TTSSettings
from pipecat.services.tts_service import TTSService
from pipecat.turns.user_start import VADUserTurnStartStrategy
from pipecat.turns.user_turn_processor import UserTurnProcessor
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.workers.runner import WorkerRunner

from . import memory, metrics
from .admission import CallSlots
from .asr import SpeechRecognizer
from .asr_bias import call_hotwords
from .owner_join import OwnerAudio, OwnerJoined
from .records import CallRecord, Channel
from .session import CallEnded, CallServices, CallSession
from .tts import Synthesizer, text_lang, units
from .turn_end import TranscriptAwareTurnStop
from .turns import TurnTranscriber
from .voice_takeover import OwnerSpeech, SentenceCut, VoiceControl

log = logging.getLogger(__name__)


ACTIVE_VOICE_CALLS = 0  # live voice calls in this process (precomputing waits while > 0)
SHORT_TURN_GRACE_S = 0.7  # "Okay." followed by more: wait this long before answering "Okay." alone


@dataclass
class VoiceOptions:
    silence_timeout_s: float = 7.0  # no caller speech after the assistant spoke -> a silence turn
    max_call_s: float = 600.0
    out_sample_rate: int = 8000
    record_dir: str | None = None  # write <call_id>.wav here when set


@dataclass
class VoiceResources:
    """Process-wide voice objects: one ASR model and one synthesizer for all calls."""

    services: CallServices
    recognizer: SpeechRecognizer
    synthesizer: Synthesizer
    options: VoiceOptions = field(default_factory=VoiceOptions)
    precomputer: Any = None  # pipeline.precompute.Precomputer
    slots: CallSlots = field(default_factory=CallSlots)  # shared by every transport's copy
    live: Any = None  # pipeline.takeover.LiveCalls: live calls register there for take-over


@dataclass
class UserTurnText(DataFrame):
    """The caller's whole turn, emitted once the turn has ended."""

    text: str
    asr_ms: float | None = None
    # Whisper's confidence in the turn (pipeline.asr.Confidence, as asr_* numbers), kept
    # in the turn's record beside asr_ms.
    asr: dict[str, float] = field(default_factory=dict)


# ------------------------------------------------------------------ ASR ----


class TurnRecorder(FrameProcessor):
    """Feeds the caller's audio and VAD events to the call's TurnTranscriber; forwards
    everything (Smart Turn needs the audio downstream)."""

    def __init__(self, call: VoiceCall, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._call = call

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        turns = self._call.transcriber
        if isinstance(frame, InputAudioRawFrame):
            turns.audio(frame.audio)
            leg = self._call.owner_leg
            if leg is not None:
                await leg.to_owner(frame.audio, frame.sample_rate)
        elif isinstance(frame, VADUserStartedSpeakingFrame):
            turns.speech_started()
        elif isinstance(frame, VADUserStoppedSpeakingFrame):
            turns.speech_stopped()
        await self.push_frame(frame, direction)


class TurnBridge(UserTurnProcessor):
    """Emits the caller's whole turn as one UserTurnText when Smart Turn ends it (the
    transcript comes from the TurnTranscriber, started speculatively at the VAD stop)."""

    def __init__(self, call: VoiceCall, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._call = call
        self.add_event_handler("on_user_turn_stopped", self._on_stopped)

    async def _on_stopped(self, _proc: Any, _strategy: Any) -> None:
        text, result = await self._call.transcriber.turn_text(grace_s=SHORT_TURN_GRACE_S)
        if text is None:
            return  # the caller kept talking: one reply to the whole utterance, later
        session = self._call.session
        if result is not None and result.lang != session.state.lang and self._call.detecting_lang:
            session.state.lang = result.lang  # type: ignore[assignment]
        if text:
            self._call.detecting_lang = False
        asr_ms = None if result is None else round(result.seconds * 1000, 1)
        conf = result.confidence if result is not None else None
        asr = {f"asr_{k}": float(v) for k, v in conf.as_dict().items()} if conf is not None else {}
        await self.push_frame(UserTurnText(text=text, asr_ms=asr_ms, asr=asr))


# ------------------------------------------------------------ the session ----


class CallProcessor(FrameProcessor):
    """Runs CallSession.respond() per caller turn and speaks each guarded sentence."""

    def __init__(self, call: VoiceCall, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._call = call
        self._reply_task: asyncio.Task[None] | None = None
        self._silence_task: asyncio.Task[None] | None = None
        self._bot_speaking = False
        self._user_active = False  # the caller is speaking, or their turn is being handled
        self._pending_end = False

    def can_generate_metrics(self) -> bool:
        return True

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, UserTurnText):
            self._user_active = False
            await self._cancel_silence()
            if frame.text and self._call.owner_leg is not None:
                await self._call.session.caller_heard(frame.text)  # the owner is talking: no reply
            elif frame.text:
                await self._start_reply(frame.text, {"asr_ms": frame.asr_ms, **frame.asr})
            return
        if isinstance(frame, OwnerSpeech):
            await self._owner_speech(frame)
            return
        if isinstance(frame, OwnerAudio):
            await self.push_frame(OutputAudioRawFrame(audio=frame.audio, sample_rate=frame.sample_rate, num_channels=1))
            return
        if isinstance(frame, OwnerJoined):
            await self._go_quiet()
            return
        if isinstance(frame, (TranscriptionFrame, InputAudioRawFrame)):
            return  # consumed: mic audio and partial transcripts stop here
        if isinstance(frame, InputDTMFFrame):
            self._call.session.record.stats.setdefault("dtmf", []).append(str(frame.button.value))
            return
        if isinstance(frame, (UserStartedSpeakingFrame, VADUserStartedSpeakingFrame)):
            self._user_active = True
            await self._cancel_silence()
        if isinstance(frame, InterruptionFrame):
            await self._on_barge_in()
        if isinstance(frame, BotStartedSpeakingFrame):
            self._bot_speaking = True
        if isinstance(frame, BotStoppedSpeakingFrame):
            self._bot_speaking = False
            idle = self._reply_task is None or self._reply_task.done()
            if not self._pending_end and idle and not self._user_active:
                self._arm_silence()
        if isinstance(frame, (EndFrame, CancelFrame)):
            await self._cancel_silence()
        await self.push_frame(frame, direction)

    async def say_greeting(self) -> None:
        frame = TTSSpeakFrame(self._call.session.greeting)
        if self._call.session.ended:  # screening blocked the caller: the short close, then hang up
            frame.interruptible = False
            self._pending_end = True
            await self.push_frame(frame)
            await self.push_frame(EndWorkerFrame(reason="blocked"))
            return
        await self.push_frame(frame)

    async def _start_reply(self, text: str | None, timings: dict[str, float | None] | None = None) -> None:
        if text is not None:
            await self._cancel_silence()
        if self._reply_task is not None and not self._reply_task.done():
            await self.cancel_task(self._reply_task)
        self._reply_task = self.create_task(self._reply(text, timings or {}))

    async def _reply(self, text: str | None, timings: dict[str, float | None]) -> None:
        session = self._call.session
        if session.ended:
            return
        await self.start_ttfb_metrics()
        first = True
        self._call.begin_answer()
        try:
            async for sentence in session.respond(text, timings=timings):
                if first:
                    await self.stop_ttfb_metrics()
                    first = False
                frame = TTSSpeakFrame(sentence)
                self._call.cut.queued(sentence)
                if session.current_decision is not None and session.current_decision.end_call:
                    frame.interruptible = False  # the goodbye is always heard
                await self.push_frame(frame)
        except CallEnded:
            return
        except asyncio.CancelledError:
            raise
        except Exception:
            metrics.ERRORS.labels(component="coordinator").inc()
            log.exception("reply failed", extra={"call_id": session.call_id})
            return
        self._call.answer_recorded()
        if session.ended:
            self._pending_end = True
            await self.push_frame(EndWorkerFrame(reason="assistant_closed"))

    async def _owner_speech(self, frame: OwnerSpeech) -> None:
        """The owner's words: cut the assistant's pending reply, speak them, record them."""
        session = self._call.session
        if session.ended or self._pending_end:
            return
        await self._go_quiet()
        speak = TTSSpeakFrame(frame.text)
        speak.interruptible = False  # the owner's words are always heard
        await self.push_frame(speak)
        await session.owner_said(frame.text, via="end" if frame.end else "say")
        if frame.end:
            self._pending_end = True
            await session.hangup("owner_ended", outcome="owner_ended")
            await self.push_frame(EndWorkerFrame(reason="owner_ended"))

    async def _go_quiet(self) -> None:
        """The owner speaks or joined: stop the reply in progress (at a sentence boundary)."""
        await self._cancel_silence()
        if self._reply_task is not None and not self._reply_task.done():
            await self.cancel_task(self._reply_task)
            self._reply_task = None
        self._call.cut.cut()

    def _arm_silence(self) -> None:
        if self._call.owner_leg is not None:
            return  # the owner is in the call: no check-in
        if self._silence_task is None or self._silence_task.done():
            self._silence_task = self.create_task(self._silence_after(self._call.voice.options.silence_timeout_s))

    async def _silence_after(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        await self._start_reply(None, None)

    async def _cancel_silence(self) -> None:
        if self._silence_task is not None and not self._silence_task.done():
            await self.cancel_task(self._silence_task)
        self._silence_task = None

    async def _on_barge_in(self) -> None:
        session = self._call.session
        if self._bot_speaking:
            self._call.barge_ins += 1
            if session.record.turns:
                session.record.turns[-1].timings["barge_in"] = 1.0
        if self._reply_task is not None and not self._reply_task.done() and not self._pending_end:
            await self.cancel_task(self._reply_task)
            self._reply_task = None


# ------------------------------------------------------------------ TTS ----


class LocalTTS(TTSService):
    """Speaks each unit from the audio cache when known, else synthesizes it (in a thread)."""

    def __init__(self, call: VoiceCall, **kwargs: Any) -> None:
        super().__init__(
            push_start_frame=True,
            push_stop_frames=True,
            settings=TTSSettings(model=None, voice=None, language=None),
            **kwargs,
        )
        self._call = call
        # pipecat's stream resampler is bound to the first input rate it sees; engines
        # differ (piper 22,050 Hz, Kokoro 24,000 Hz), so a call that switches language
        # needs one resampler per rate or it goes mute.
        self._resamplers: dict[int, Any] = {}

    def can_generate_metrics(self) -> bool:
        return True

    def _use_resampler(self, rate: int) -> None:
        if rate not in self._resamplers:
            self._resamplers[rate] = create_stream_resampler()
        self._resampler = self._resamplers[rate]

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame | None, None]:
        try:
            async for frame in self._speak(text, context_id):
                yield frame
        except Exception as exc:
            # A speaker that cannot speak must not leave the caller in silence.
            yield ErrorFrame(error=f"tts failed: {exc!r}")
            await self._call.speaker_failed(exc)

    async def _speak(self, text: str, context_id: str) -> AsyncGenerator[Frame | None, None]:
        synth = self._call.voice.synthesizer
        if not self._call.cut.starting(text):
            return  # the owner spoke over this sentence before it started
        t0 = time.perf_counter()
        first = True
        for unit in units(text):
            audio, cached, engine = await asyncio.to_thread(synth.synthesize_unit, unit)
            if first:
                first_ms = (time.perf_counter() - t0) * 1000
                metrics.TTS_FIRST_AUDIO.labels(engine=engine.split(":")[0], cached=str(cached).lower()).observe(
                    first_ms / 1000
                )
                self._call.note_tts_first_audio(first_ms, cached)
                first = False

            self._use_resampler(audio.rate)
            async for frame in self._stream_audio_frames_from_iterator(
                _pieces(audio.pcm, audio.rate * 2 // 5), in_sample_rate=audio.rate, context_id=context_id
            ):
                await self.stop_ttfb_metrics()
                yield frame


async def _pieces(pcm: bytes, step: int) -> AsyncIterator[bytes]:
    """Audio in 200 ms pieces, so playback can start and be interrupted promptly."""
    for i in range(0, len(pcm), step):
        yield pcm[i : i + step]


# ------------------------------------------------------------------ call ----


class VoiceCall:
    """One voice call: its session, pipeline and bookkeeping."""

    def __init__(self, voice: VoiceResources, session: CallSession, transport_name: str) -> None:
        self.voice = voice
        self.session = session
        self.transport_name = transport_name
        # A bilingual owner's caller may speak either language: detect it on the first turn.
        self.detecting_lang = len(session.ctx.languages) > 1
        # One language: Whisper is held to it, so Latin text in a Chinese call (or the
        # reverse) is Whisper failing on unclear audio ("喂？喂？" -> "way way sir"), not the
        # caller switching: the reply stays in the call's language (a "didn't catch that").
        session.state.lang_locked = not self.detecting_lang
        self.barge_ins = 0
        ctx = session.ctx
        preset_texts = [c.preset.trigger or "" for c in ctx.emergent] + [c.preset.response for c in ctx.emergent]
        preset_texts += list(ctx.regular.values())
        preset_scenes = list(ctx.regular)
        self.worker: PipelineWorker | None = None
        self._answering: int | None = None
        self._pending: dict[str, float] = {}  # timings that came before the turn was recorded
        self._save_task: asyncio.Task[None] | None = None
        self._cancel_task: asyncio.Task[None] | None = None
        self.cut = SentenceCut()
        self.owner_leg: Any = None  # pipeline.owner_join.OwnerLeg while the owner is in the call
        self.transcriber = TurnTranscriber(
            voice.recognizer,
            lang=lambda: session.state.lang,
            hotwords=lambda: call_hotwords(
                lang=session.state.lang,
                scene=session.state.scene,
                owner_name=ctx.owner_name,
                preset_texts=[t for t in preset_texts if text_lang(t) == session.state.lang],
                scenes=preset_scenes,
            ),
            candidates=lambda: tuple(session.ctx.languages) if self.detecting_lang else (),
        )

    # The audio-side timings of a turn (TTS first audio, voice-to-voice) arrive while
    # its reply is being spoken: before CallSession has recorded the turn (the first
    # sentence plays while the reply is still streaming) or after it saved the record.
    # They are kept for the turn being answered and written to it either way.

    def owner_left(self, leg: Any) -> None:
        if self.owner_leg is leg:
            self.owner_leg = None

    def begin_answer(self) -> None:
        """A reply to the next turn starts: its timings belong to that turn."""
        self._answering = len(self.session.record.turns)
        self._pending = {}

    def answer_recorded(self) -> None:
        """CallSession has recorded the turn: add the timings that came first."""
        idx = self._answering
        if self._pending and idx is not None and idx < len(self.session.record.turns):
            for key, value in self._pending.items():
                self.session.record.turns[idx].timings.setdefault(key, value)
            self._save_soon()
        self._pending = {}

    def _note(self, values: dict[str, float]) -> bool:
        """Timings for the turn being answered: on its record, or pending until it exists.
        Only the first of each per turn counts."""
        idx = self._answering
        if idx is None:
            return False  # the greeting
        turns = self.session.record.turns
        recorded = idx < len(turns)
        target = turns[idx].timings if recorded else self._pending
        if any(k in target for k in values):
            return False
        target.update(values)
        if recorded:
            self._save_soon()
        return True

    def _save_soon(self) -> None:
        if self._save_task is None or self._save_task.done():
            self._save_task = asyncio.get_running_loop().create_task(self._save_later())

    async def _save_later(self) -> None:
        await asyncio.sleep(0.05)
        with contextlib.suppress(Exception):
            await self.voice.services.calls.save(self.session.record)

    async def speaker_failed(self, exc: Exception) -> None:
        """The speech output failed: end the call cleanly, the record saying why."""
        metrics.ERRORS.labels(component="tts").inc()
        log.error("speech output failed; ending the call", extra={"call_id": self.session.call_id, "error": repr(exc)})
        self.session.record.stats["speaker_error"] = f"{type(exc).__name__}: {exc}"[:300]
        await self.session.hangup("speaker_failed", outcome="error")
        if self.worker is not None and self._cancel_task is None:
            self._cancel_task = asyncio.get_running_loop().create_task(self.worker.cancel())

    def note_tts_first_audio(self, ms: float, cached: bool) -> None:
        self._note({"tts_first_audio_ms": round(ms, 1), "tts_cached": 1.0 if cached else 0.0})

    def note_voice_to_voice(self, seconds: float) -> None:
        if self._note({"voice_to_voice_ms": round(seconds * 1000, 1)}):
            metrics.VOICE_TO_VOICE.labels(transport=self.transport_name, lang=self.session.state.lang).observe(seconds)

    def build(self, transport: Any) -> PipelineWorker:
        processor = CallProcessor(self)
        recorder = self._recorder()
        pipeline = Pipeline(
            [
                transport.input(),
                VADProcessor(vad_analyzer=SileroVADAnalyzer()),
                TurnRecorder(self),
                TurnBridge(
                    self,
                    user_turn_strategies=UserTurnStrategies(
                        # Only speech starts a turn: a late transcript must not look like barge-in.
                        start=[VADUserTurnStartStrategy()],
                        stop=[
                            TranscriptAwareTurnStop(
                                self,
                                # An "incomplete" verdict waits at most 1.2 s of silence (not 3 s),
                                # less when the transcript reads as a finished sentence.
                                turn_analyzer=LocalSmartTurnAnalyzerV3(params=SmartTurnParams(stop_secs=1.2)),
                                wait_for_transcript=False,
                            )
                        ],
                    ),
                ),
                processor,
                LocalTTS(self),
                transport.output(),
                *([recorder] if recorder is not None else []),
            ]
        )
        latency = UserBotLatencyObserver()

        @latency.event_handler("on_latency_measured")
        async def _measured(_obs: Any, seconds: float) -> None:
            self.note_voice_to_voice(seconds)

        worker = PipelineWorker(
            pipeline,
            params=PipelineParams(
                audio_in_sample_rate=16000,
                audio_out_sample_rate=self.voice.options.out_sample_rate,
                enable_metrics=True,
                send_initial_empty_metrics=False,
            ),
            observers=[latency],
            enable_rtvi=False,
            idle_timeout_secs=max(60.0, self.voice.options.silence_timeout_s * 4),
        )

        @transport.event_handler("on_client_connected")
        async def _connected(_t: Any, _client: Any) -> None:
            await processor.say_greeting()

        @transport.event_handler("on_client_disconnected")
        async def _disconnected(_t: Any, _client: Any) -> None:
            await self.session.hangup("caller_hangup", outcome="caller_hangup")
            await worker.cancel()

        self.worker = worker
        return worker

    def _recorder(self) -> Any:
        """With recording on: the call as a stereo WAV (caller left, assistant right)."""
        folder = self.voice.options.record_dir
        if not folder:
            return None
        import wave
        from pathlib import Path

        from pipecat.processors.audio.audio_buffer_processor import AudioBufferProcessor

        recorder = AudioBufferProcessor(num_channels=2, auto_start_recording=True)
        path = Path(folder) / f"{self.session.call_id}.wav"

        @recorder.event_handler("on_audio_data")
        async def _save(_proc: Any, audio: bytes, sample_rate: int, num_channels: int) -> None:
            def write() -> None:
                path.parent.mkdir(parents=True, exist_ok=True)
                with wave.open(str(path), "wb") as w:
                    w.setnchannels(num_channels)
                    w.setsampwidth(2)
                    w.setframerate(sample_rate)
                    w.writeframes(audio)

            await asyncio.to_thread(write)
            self.session.record.recording = str(path)

        return recorder

    async def run(self, transport: Any) -> CallRecord:
        global ACTIVE_VOICE_CALLS
        ACTIVE_VOICE_CALLS += 1
        live = self.voice.live
        if live is not None:
            await live.register(VoiceControl(self))
        try:
            return await self._run(transport)
        finally:
            ACTIVE_VOICE_CALLS -= 1
            metrics.call_finished(self)  # alive after this (past a gc) means a leak: soak bench
            if ACTIVE_VOICE_CALLS == 0:  # allocator retention, not a leak: hand the pages back
                await asyncio.to_thread(memory.trim)
            if live is not None:
                await live.unregister(self.session.call_id)

    async def _run(self, transport: Any) -> CallRecord:
        worker = self.build(transport)
        runner = WorkerRunner(handle_sigint=False)
        await runner.add_workers(worker)
        try:
            async with asyncio.timeout(self.voice.options.max_call_s):
                await runner.run()
        except TimeoutError:
            await self.session.hangup("max_duration", outcome="timeout")
            with contextlib.suppress(Exception):
                await worker.cancel()
        except Exception:
            metrics.ERRORS.labels(component="pipeline").inc()
            log.exception("voice call failed", extra={"call_id": self.session.call_id})
            await self.session.hangup("error", outcome="error")
        finally:
            if self.owner_leg is not None:
                await self.owner_leg.leave()
            self.transcriber.close()
            self.session.record.stats["barge_ins"] = self.barge_ins
            await self.session.hangup("caller_hangup", outcome="caller_hangup")
            with contextlib.suppress(Exception):
                await self.voice.services.calls.save(self.session.record)
        return self.session.record


async def open_voice_call(
    voice: VoiceResources,
    *,
    owner_id: str,
    line: str | None,
    channel: Channel,
    transport_name: str,
    caller_number: str | None = None,
) -> VoiceCall:
    session = await CallSession.open(
        voice.services, owner_id=owner_id, channel=channel, line=line, caller_number=caller_number
    )
    if voice.precomputer is not None:
        # Owners set up without the API (CLI) have no cached wordings yet: prepare them now.
        from coordinator.render import all_wordings

        ctx = session.ctx
        texts = [w for lang in ctx.languages for w in all_wordings(ctx.owner_name, lang)]
        voice.precomputer.submit([*ctx.regular.values(), *(c.preset.response for c in ctx.emergent), *texts])
    return VoiceCall(voice, session, transport_name)
