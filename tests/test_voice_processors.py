"""The voice call's processors, in pipecat's test style: frames pushed through real
processors (CallProcessor, LocalTTS, PlaybackTracker, TurnRecorder/TurnBridge) with a
fake speech recognizer, a fake synthesizer and a fake output whose playback the test
releases frame by frame; the session, Redis and owner events are real.

Covers issue 14 item 5: a barge-in keeps the turn with where it was cut (and the state
agrees), one turn per caller utterance, and every hang-up path ends the call once,
saves the final record once and emits ``call.ended`` once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import numpy as np
import pytest
from pipecat.frames.frames import (
    BotStoppedSpeakingFrame,
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    SystemFrame,
    TTSSpeakFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.transports.base_transport import BaseTransport
from pipecat.turns.user_start import VADUserTurnStartStrategy
from pipecat.turns.user_stop import SpeechTimeoutUserTurnStopStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.workers.runner import WorkerRunner
from redis.asyncio import Redis

from pipeline.asr import Transcript
from pipeline.events import EventLog
from pipeline.records import CallRecord, CallStore
from pipeline.session import CallServices, CallSession
from pipeline.telephony import GuardedSerializer
from pipeline.tts import Audio
from pipeline.voice import (
    CallProcessor,
    Listener,
    LocalTTS,
    PlaybackTracker,
    TurnBridge,
    TurnRecorder,
    UserTurnText,
    VoiceCall,
    VoiceOptions,
    VoiceResources,
)
from pipeline.voice.frames import DropUnspoken, ReplySentence, SentenceEnded, SentenceStarted
from pipeline.voice_takeover import OwnerSpeech
from presets.owners import OwnerStore
from presets.pool import PresetStore

from .helpers import RedisProcess

BOUND_S = 20.0  # a safety bound on every wait (never a timing assertion)
PRESET = "Please leave it with the front desk."


def tone(seconds: float, rate: int = 16000) -> Audio:
    t = np.arange(int(rate * seconds)) / rate
    return Audio((np.sin(2 * np.pi * 440 * t) * 8000).astype(np.int16).tobytes(), rate)


class FakeSynthesizer:
    """Every unit is 0.2 s of audio per 10 characters, at once (or fails on ``fail_on``)."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.fail_on = fail_on

    def synthesize_unit(self, text: str) -> tuple[Audio, bool, str]:
        if self.fail_on is not None and self.fail_on in text:
            raise RuntimeError("voice model crashed")
        return tone(max(0.2, len(text) / 50)), True, "fake"


class FakeRecognizer:
    """Transcribes by audio length after a set delay: the caller's utterance is scripted
    as (seconds of speech, words) pieces; the transcript is the words of every piece the
    audio covers."""

    def __init__(self, pieces: list[tuple[float, str]], *, delay_s: float = 0.05) -> None:
        self.pieces = pieces
        self.delay_s = delay_s
        self.calls = 0

    async def transcribe(self, audio: Any, lang: str, **_kw: Any) -> Transcript:
        self.calls += 1
        await asyncio.sleep(self.delay_s)
        seconds, covered, words = len(audio) / 16000, 0.0, []
        for length, text in self.pieces:
            covered += length
            if seconds + 0.05 >= covered:
                words.append(text)
        return Transcript(" ".join(words), lang, self.delay_s, seconds)


class Capture(FrameProcessor):
    """Records every frame going ``direction`` past it."""

    def __init__(self, direction: FrameDirection) -> None:
        super().__init__()
        self.direction = direction
        self.frames: list[Frame] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if direction == self.direction:
            self.frames.append(frame)
        await self.push_frame(frame, direction)


class GatedOutput(FrameProcessor):
    """A fake output transport: holds the assistant's audio and sentence markers until the
    test releases them (that is "played"); an interruption drops what is held, as the
    real output drops its queued audio."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[Frame] = []
        self.released: list[Frame] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if direction == FrameDirection.DOWNSTREAM and isinstance(frame, InterruptionFrame):
            self.held.clear()
        if direction == FrameDirection.DOWNSTREAM and not isinstance(frame, SystemFrame):
            self.held.append(frame)
            return
        await self.push_frame(frame, direction)

    async def release(self, until: Callable[[Frame], bool] | None = None) -> None:
        """Play held frames up to and including the first that ``until`` accepts (all if None)."""
        while self.held:
            frame = self.held.pop(0)
            self.released.append(frame)
            await self.push_frame(frame)
            if until is not None and until(frame):
                return


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait (bounded) for a condition on real objects that signal nothing to wait on."""
    async with asyncio.timeout(BOUND_S):
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.01)
    assert condition(), what


class Harness:
    """A pipeline of real processors between two captures, run by a real PipelineWorker."""

    def __init__(self, processors: list[FrameProcessor]) -> None:
        self.up = Capture(FrameDirection.UPSTREAM)
        self.down = Capture(FrameDirection.DOWNSTREAM)
        self.worker = PipelineWorker(
            Pipeline([self.up, *processors, self.down]),
            params=PipelineParams(audio_in_sample_rate=16000, audio_out_sample_rate=16000),
            enable_rtvi=False,
            cancel_on_idle_timeout=False,
        )
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Harness:
        started = asyncio.Event()

        @self.worker.event_handler("on_pipeline_started")
        async def _started(_w: Any, _f: Any) -> None:
            started.set()

        runner = WorkerRunner(handle_sigint=False)
        await runner.add_workers(self.worker)
        self._task = asyncio.get_running_loop().create_task(runner.run())
        async with asyncio.timeout(BOUND_S):
            await started.wait()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.worker.cancel()
        assert self._task is not None
        async with asyncio.timeout(BOUND_S):
            await self._task

    async def send(self, *frames: Frame) -> None:
        for frame in frames:
            await self.worker.queue_frame(frame)


class CountingStore(CallStore):
    """The real store, counting the saves of an ended record."""

    final_saves = 0

    async def save(self, record: CallRecord) -> bool:
        if record.ended_at is not None:
            self.final_saves += 1
        return await super().save(record)


@pytest.fixture
async def services(clean_redis: RedisProcess) -> AsyncIterator[CallServices]:
    redis = Redis.from_url(clean_redis.url, decode_responses=True)
    owners, presets = OwnerStore(redis), PresetStore(redis)
    yield CallServices(
        redis=redis, owners=owners, presets=presets, calls=CountingStore(redis, 3600), events=EventLog(redis)
    )
    await redis.aclose()


async def open_session(services: CallServices) -> CallSession:
    owner, _ = await services.owners.create_owner("Alex Chen", "en")
    await services.presets.put_regular(owner.owner_id, "delivery", PRESET)
    return await CallSession.open(services, owner_id=owner.owner_id, channel="twilio", line="+15550100")


def is_marker(reply: int, index: int) -> Callable[[Frame], bool]:
    return lambda f: isinstance(f, SentenceStarted) and f.reply == reply and f.index == index


# ------------------------------------------------------------- barge-in ----


async def test_barge_in_keeps_the_turn_with_its_cut_and_the_state_agrees(services: CallServices) -> None:
    session = await open_session(services)
    processor = CallProcessor(session, silence_timeout_s=60, transport_name="twilio")
    output = GatedOutput()
    async with Harness([processor, LocalTTS(FakeSynthesizer()), output, PlaybackTracker()]) as h:  # type: ignore[arg-type]
        await h.send(UserTurnText("Hi, this is FedEx with a package for Alex. Where should I leave it?"))
        await until(lambda: any(is_marker(1, 0)(f) for f in output.held), "the reply reached the output")
        assert session.draft is not None and not session.record.turns  # decided, not yet committed
        # The caller hears the first unit's start, then speaks over it.
        await output.release(is_marker(1, 0))
        audio = next(f for f in output.held if isinstance(f, OutputAudioRawFrame))
        await output.release(lambda f: f is audio)  # one 200 ms piece of it
        await h.send(InterruptionFrame())
        await until(lambda: len(session.record.turns) == 1, "the cut turn was recorded")

    turn = session.record.turns[0]
    assert turn.cut is not None and turn.cut["sentences"] == 0 and turn.cut["chars"] > 0, turn
    assert turn.spoken is not None and turn.reply.startswith(turn.spoken) and len(turn.spoken) < len(turn.reply)
    assert turn.caller_text and "FedEx" in turn.caller_text
    # The state remembers what the caller heard, and the preset they never heard is still owed.
    assert session.state.turn == 0 and session.state.history[-1] == (turn.caller_text, turn.spoken)
    assert PRESET not in turn.spoken and turn.preset_conveyed is None
    assert not session.state.conveyed and not session.state.record.presets_conveyed
    assert [e.role for e in session.record.transcript] == ["assistant", "caller", "assistant"]
    assert session.record.transcript[-1].text == turn.spoken
    stored = await services.calls.get(session.call_id)
    assert stored is not None and stored.turns[0].cut == turn.cut  # checkpointed with the turn


async def test_reply_heard_whole_is_committed_once_played_and_conveys_the_preset(services: CallServices) -> None:
    session = await open_session(services)
    output = GatedOutput()
    processor = CallProcessor(session, silence_timeout_s=60, transport_name="twilio")
    async with Harness([processor, LocalTTS(FakeSynthesizer()), output, PlaybackTracker()]) as h:  # type: ignore[arg-type]
        await h.send(UserTurnText("Hi, this is FedEx with a package for Alex. Where should I leave it?"))
        await until(lambda: session.draft is not None and session.draft.complete, "the reply was written")
        await until(lambda: bool(output.held), "the reply reached the output")
        assert not session.record.turns  # written but not yet played: not committed
        while session.draft is not None:
            await output.release()
            await asyncio.sleep(0.01)  # let the played markers travel upstream
        assert len(session.record.turns) == 1

    turn = session.record.turns[0]
    assert turn.cut is None and turn.spoken is None and PRESET in turn.reply
    assert turn.preset_conveyed == "regular:delivery" and session.state.conveyed == {"regular:delivery": 1}
    assert session.state.history[-1][1] == turn.reply


async def test_no_silence_check_in_in_a_pause_between_the_replys_sentences(services: CallServices) -> None:
    session = await open_session(services)
    output = GatedOutput()
    processor = CallProcessor(session, silence_timeout_s=0.05, transport_name="twilio")
    async with Harness([processor, LocalTTS(FakeSynthesizer()), output, PlaybackTracker()]) as h:  # type: ignore[arg-type]
        await h.send(UserTurnText("Hello?"))
        await until(lambda: session.draft is not None and session.draft.complete, "the reply was written")
        await until(
            lambda: any(isinstance(f, SentenceEnded) for f in output.held), "its first sentence reached the output"
        )
        assert session.draft is not None and len(session.draft.sentences) >= 2, session.draft.sentences
        rest = len(session.draft.sentences) - 1
        await output.release(lambda f: isinstance(f, SentenceEnded))  # the first sentence is heard
        await h.send(BotStoppedSpeakingFrame())  # the assistant's audio pauses before the next
        await until(lambda: any(isinstance(f, BotStoppedSpeakingFrame) for f in h.down.frames), "the pause")
        assert processor._silence_task is None  # no check-in armed mid-reply
        assert session.draft is not None and not session.record.turns  # not heard whole yet
        await until(lambda: sum(isinstance(f, SentenceEnded) for f in output.held) >= rest, "the rest queued")
        while session.draft is not None:
            await output.release()
            await asyncio.sleep(0.01)  # let the played markers travel upstream
        await h.send(BotStoppedSpeakingFrame())  # the reply is over: now the check-in is armed
        await until(lambda: session.draft is not None and session.draft.index == 1, "a check-in turn")
        assert session.draft is not None and session.draft.caller_text is None  # the caller stayed silent
        assert len(session.record.turns) == 1 and session.record.turns[0].cut is None
    # The call stopped before the check-in was played: it is kept, cut before its first word.
    assert session.record.turns[1].cut == {"sentences": 0, "chars": 0} and session.record.turns[1].spoken == ""


async def test_the_owners_words_drop_only_assistant_sentences_not_started() -> None:
    tts = LocalTTS(FakeSynthesizer())  # type: ignore[arg-type]
    async with Harness([tts]) as h:
        await h.send(DropUnspoken(1))  # the owner speaks over reply 1 before its sentences start
        await h.send(ReplySentence("Second one.", reply=1, index=1), ReplySentence("Third one.", reply=1, index=2))
        owner = TTSSpeakFrame("The owner's words.")
        owner.interruptible = False
        await h.send(owner, ReplySentence("Second one.", reply=2, index=0))  # a later reply may say the same
        await until(lambda: sum(isinstance(f, SentenceEnded) for f in h.down.frames) == 2, "two sentences spoken")
    spoken = [(f.reply, f.text) for f in h.down.frames if isinstance(f, SentenceStarted)]
    assert spoken == [(-1, "The owner's words."), (2, "Second one.")], spoken


# ---------------------------------------------------------- end of turn ----


def timeout_bridge(listener: Listener) -> TurnBridge:
    """The turn bridge with a plain 0.5 s speech timeout (no Smart Turn) ending each turn."""
    return TurnBridge(
        listener,
        user_turn_strategies=UserTurnStrategies(
            start=[VADUserTurnStartStrategy()],
            stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.5, wait_for_transcript=False)],
        ),
    )


def speech(seconds: float) -> list[Frame]:
    samples = tone(seconds).pcm
    step = 640  # 20 ms at 16 kHz
    return [InputAudioRawFrame(samples[i : i + step], 16000, 1) for i in range(0, len(samples), step)]


async def test_one_turn_per_caller_utterance_with_a_pause_inside(services: CallServices) -> None:
    session = await open_session(services)
    recognizer = FakeRecognizer([(1.0, "Hi, this is FedEx."), (1.0, "Where should I leave the package?")])
    listener = Listener(
        recognizer,  # type: ignore[arg-type]
        lang="en",
        languages=("en",),
        owner_name="Alex Chen",
        preset_texts=[PRESET],
        preset_scenes=["delivery"],
    )
    bridge = timeout_bridge(listener)
    turns = Capture(FrameDirection.DOWNSTREAM)
    processor = CallProcessor(session, silence_timeout_s=60, transport_name="twilio")
    pipeline = [TurnRecorder(listener), bridge, turns, processor, LocalTTS(FakeSynthesizer()), PlaybackTracker()]
    async with Harness(pipeline) as h:  # type: ignore[arg-type]
        # One utterance: speech, a short pause (the VAD stops and starts again), speech.
        await h.send(VADUserStartedSpeakingFrame(), *speech(1.0), VADUserStoppedSpeakingFrame())
        await h.send(*speech(0.1), VADUserStartedSpeakingFrame(), *speech(1.0), VADUserStoppedSpeakingFrame())
        await until(lambda: len(session.record.turns) == 1, "the turn was answered and its reply played")
        await h.send(*speech(0.5))  # more line silence: no second turn comes of it

    texts = [f.text for f in turns.frames if isinstance(f, UserTurnText)]
    assert texts == ["Hi, this is FedEx. Where should I leave the package?"], texts
    assert len(session.record.turns) == 1 and session.record.turns[0].caller_text == texts[0]
    assert session.state.turn == 0 and session.draft is None
    assert session.record.turns[0].preset_conveyed == "regular:delivery"


# -------------------------------------------------------------- hang-up ----


class FakeTransport(BaseTransport):
    """Input and output that pass frames through; the test fires the client events."""

    def __init__(self) -> None:
        super().__init__()
        self._in = Capture(FrameDirection.UPSTREAM)
        self._out = Capture(FrameDirection.DOWNSTREAM)
        self._register_event_handler("on_client_connected")
        self._register_event_handler("on_client_disconnected")

    def input(self) -> FrameProcessor:
        return self._in

    def output(self) -> FrameProcessor:
        return self._out

    async def fire(self, event: str) -> None:
        await self._call_event_handler(event, None)


async def _caller_hangs_up(call: VoiceCall, transport: FakeTransport) -> None:
    await transport.fire("on_client_disconnected")


async def _provider_stop(call: VoiceCall, transport: FakeTransport) -> None:
    serializer = GuardedSerializer(None, "twilio", call)  # type: ignore[arg-type]
    assert await serializer.deserialize('{"event": "stop", "streamSid": "MZ1"}') is None


async def _owner_ends(call: VoiceCall, transport: FakeTransport) -> None:
    assert call.worker is not None
    await call.worker.queue_frame(OwnerSpeech("Sorry, I have to go now.", end=True))


async def _assistant_closes(call: VoiceCall, transport: FakeTransport) -> None:
    assert call.worker is not None
    await call.worker.queue_frame(UserTurnText("That's all, thanks. Bye!"))


async def _nothing(call: VoiceCall, transport: FakeTransport) -> None:
    return None  # MAX_CALL_S or the speaker ends it


HANGUPS: list[tuple[str, Callable[[VoiceCall, FakeTransport], Awaitable[None]], dict[str, Any], str]] = [
    ("caller_hangup", _caller_hangs_up, {}, "caller_hangup"),
    ("provider_stop", _provider_stop, {}, "caller_hangup"),
    ("owner_end", _owner_ends, {}, "owner_ended"),
    ("assistant_close", _assistant_closes, {}, "assistant_closed"),
    ("max_call_s", _nothing, {"max_call_s": 2.0}, "max_duration"),
    ("speaker_failure", _nothing, {"fail_on": "assistant"}, "speaker_failed"),
]


@pytest.mark.parametrize(("path", "act", "opts", "reason"), HANGUPS, ids=[h[0] for h in HANGUPS])
async def test_every_hang_up_path_ends_once_saves_once_tells_the_owner_once(
    services: CallServices,
    path: str,
    act: Callable[[VoiceCall, FakeTransport], Awaitable[None]],
    opts: dict[str, Any],
    reason: str,
) -> None:
    session = await open_session(services)
    options = VoiceOptions(silence_timeout_s=60, max_call_s=opts.get("max_call_s", 60.0))
    synth = FakeSynthesizer(fail_on=opts.get("fail_on"))
    voice = VoiceResources(services, FakeRecognizer([]), synth, options)  # type: ignore[arg-type]
    call = VoiceCall(voice, session, "twilio")
    transport = FakeTransport()
    media_ends: list[str | None] = []
    on_media_end = lambda: media_ends.append(session.record.end_reason)  # noqa: E731
    run = asyncio.get_running_loop().create_task(call.run(transport, on_media_end=on_media_end))
    await until(lambda: call.worker is not None, "the pipeline was built")
    await asyncio.sleep(0.2)  # the worker starts
    await transport.fire("on_client_connected")  # the greeting
    await act(call, transport)
    async with asyncio.timeout(BOUND_S):
        record = await run
    # A second hang-up of any kind changes nothing.
    await call.end("caller_hangup", outcome="caller_hangup")
    await transport.fire("on_client_disconnected")

    assert record.end_reason == reason, (path, record.end_reason)
    assert media_ends == [reason], media_ends  # the slot is freed once, after the call ended
    assert voice.slots.finishing == 0  # run() returned with its post-call work done
    store = services.calls
    assert isinstance(store, CountingStore) and store.final_saves == 1, (path, store.final_saves)
    assert services.events is not None
    ended = [e for e in await services.events.history(record.owner_id) if e.type == "call.ended"]
    assert len(ended) == 1 and ended[0].data["end_reason"] == reason
    stored = await store.get(record.call_id)
    assert stored is not None and stored.end_reason == reason and stored.ended_at is not None
    if path == "speaker_failure":
        assert "voice model crashed" in stored.stats["speaker_error"]
    if path == "assistant_close":
        assert stored.turns and stored.turns[-1].end_call


class GatedStore(CountingStore):
    """The real store whose final save waits until the test opens the gate."""

    def __init__(self, redis: Redis, retention_s: int) -> None:
        super().__init__(redis, retention_s)
        self.gate = asyncio.Event()

    async def save(self, record: CallRecord) -> bool:
        if record.ended_at is not None:
            await self.gate.wait()
        return await super().save(record)


async def _active_gauge(transport: str) -> float:
    from pipeline import metrics

    return float(metrics.ACTIVE_CALLS.labels(transport=transport)._value.get())


async def test_the_slot_is_free_at_hang_up_while_the_post_call_work_runs(clean_redis: RedisProcess) -> None:
    """The caller hangs up; the final save is held back: the slot is already free (a next
    caller is admitted), the call is not counted active, the post-call work is counted
    and awaited, and ``run`` returns only once the record is final."""
    from pipeline.admission import CallSlots

    redis = Redis.from_url(clean_redis.url, decode_responses=True)
    store = GatedStore(redis, 3600)
    services = CallServices(
        redis=redis, owners=OwnerStore(redis), presets=PresetStore(redis), calls=store, events=EventLog(redis)
    )
    try:
        slots = CallSlots(limit=1)
        voice = VoiceResources(services, FakeRecognizer([]), FakeSynthesizer(), VoiceOptions(), slots=slots)  # type: ignore[arg-type]
        before = await _active_gauge("twilio")
        session = await open_session(services)
        slot = slots.take("twilio")
        assert slot is not None and slots.full
        call = VoiceCall(voice, session, "twilio")
        transport = FakeTransport()
        run = asyncio.get_running_loop().create_task(call.run(transport, on_media_end=slot.release))
        await until(lambda: call.worker is not None, "the pipeline was built")
        await asyncio.sleep(0.2)
        await transport.fire("on_client_connected")
        assert await _active_gauge("twilio") == before + 1

        await transport.fire("on_client_disconnected")  # the caller hangs up
        await until(lambda: slots.finishing == 1, "the post-call work started")
        assert slots.in_use == 0 and not slots.full  # freed before the record is saved
        assert await _active_gauge("twilio") == before  # a call in post-processing is not active
        assert slots.busy == 1  # ... but the drain still waits for it
        nxt = slots.take("twilio")
        assert nxt is not None  # the next caller is admitted
        nxt.release()
        assert not run.done() and store.final_saves == 0

        store.gate.set()
        async with asyncio.timeout(BOUND_S):
            record = await run
        assert store.final_saves == 1 and slots.finishing == 0 and slots.busy == 0
        stored = await store.get(record.call_id)
        assert stored is not None and stored.end_reason == "caller_hangup" and stored.summary is not None
        slot.release()  # the transport's finally: no second release
        assert slots.in_use == 0
    finally:
        await redis.aclose()


async def test_a_cancelled_transport_does_not_lose_the_post_call_work(clean_redis: RedisProcess) -> None:
    """Shutdown cancels a WebRTC or SIP call's task: the record is still saved, by the
    post-call task that shutdown (and the drain) waits for."""
    redis = Redis.from_url(clean_redis.url, decode_responses=True)
    store = GatedStore(redis, 3600)
    services = CallServices(
        redis=redis, owners=OwnerStore(redis), presets=PresetStore(redis), calls=store, events=EventLog(redis)
    )
    try:
        voice = VoiceResources(services, FakeRecognizer([]), FakeSynthesizer(), VoiceOptions())  # type: ignore[arg-type]
        session = await open_session(services)
        call = VoiceCall(voice, session, "webrtc")
        transport = FakeTransport()
        run = asyncio.get_running_loop().create_task(call.run(transport))
        await until(lambda: call.worker is not None, "the pipeline was built")
        await asyncio.sleep(0.2)
        await transport.fire("on_client_connected")
        await transport.fire("on_client_disconnected")
        await until(lambda: voice.slots.finishing == 1, "the post-call work started")
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        assert voice.slots.finishing == 1  # the work goes on without its caller
        assert not await voice.slots.wait_finished(0.05)  # bounded wait: not yet
        store.gate.set()
        assert await voice.slots.wait_finished(BOUND_S)
        stored = await store.get(session.call_id)
        assert stored is not None and stored.ended_at is not None and store.final_saves == 1
    finally:
        await redis.aclose()
