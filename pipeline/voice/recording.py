"""With recording on: the call as a stereo WAV (caller left, assistant right)."""

from __future__ import annotations

import asyncio
import wave
from pathlib import Path
from typing import Any

from ..session import CallSession


def wav_recorder(folder: str | None, session: CallSession) -> Any:
    """An AudioBufferProcessor writing ``<folder>/<call_id>.wav`` at the end, or None."""
    if not folder:
        return None
    from pipecat.processors.audio.audio_buffer_processor import AudioBufferProcessor

    recorder = AudioBufferProcessor(num_channels=2, auto_start_recording=True)
    path = Path(folder) / f"{session.call_id}.wav"

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
        session.record.recording = str(path)

    return recorder
