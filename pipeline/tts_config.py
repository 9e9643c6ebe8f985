"""Which TTS engine speaks each language: engine specs from configuration.

A spec is ``ENGINE[:ARG][?key=value&...]`` (``CALLASSIST_TTS_ZH``, ``CALLASSIST_TTS_EN``):

- ``kokoro[:VOICE][?voices=PATH&model=PATH&speed=X]``: Kokoro-82M through misaki's
  Mandarin G2P; the packaged int8 model and Japanese voices by default, or a voices
  file / model an owner supplies (Kokoro v1.0's ``zf_xiaobei`` etc.).
- ``piper[:MODEL.onnx][?speed=X]``: the packaged English joe voice, or any piper voice
  file (``.onnx`` with its ``.onnx.json`` beside it, e.g. ``zh_CN-huayan-medium.onnx``).
- ``espeak``: espeak-ng (Chinese through pinyin), instant and robotic.

espeak-ng is always kept as the last fallback. Parsing is strict: a bad spec is a
configuration error at start-up, not a silent fallback on the first call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

ENGINES = ("kokoro", "piper", "espeak")
DEFAULT_SPECS = {"en": "piper", "zh": "kokoro:jf_gongitsune"}
_OPTIONS = {"kokoro": {"voices", "model", "speed"}, "piper": {"speed"}, "espeak": set()}


class EngineSpecError(ValueError):
    """A TTS engine spec that cannot be used (unknown engine or option, missing file)."""


@dataclass(frozen=True)
class EngineSpec:
    engine: str
    arg: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    @property
    def speed(self) -> float:
        return float(self.options.get("speed", "1"))


def parse_spec(spec: str, *, check_files: bool = True) -> EngineSpec:
    """``"kokoro:jm_kumo?speed=0.9"`` -> EngineSpec; raises EngineSpecError naming the problem."""
    text = spec.strip()
    if not text:
        raise EngineSpecError("empty TTS engine spec")
    head, _, query = text.partition("?")
    engine, _, arg = head.partition(":")
    engine = engine.strip().lower()
    if engine not in ENGINES:
        raise EngineSpecError(f"unknown TTS engine {engine!r} (use one of: {', '.join(ENGINES)})")
    try:
        options = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
    except ValueError as exc:
        raise EngineSpecError(f"malformed options {query!r} in TTS spec {spec!r}") from exc
    unknown = set(options) - _OPTIONS[engine]
    if unknown:
        raise EngineSpecError(f"unknown option(s) {', '.join(sorted(unknown))} for TTS engine {engine}")
    if engine == "espeak" and arg:
        raise EngineSpecError("espeak takes no argument")
    if "speed" in options:
        try:
            speed = float(options["speed"])
        except ValueError:
            speed = 0.0
        if not 0.5 <= speed <= 2.0:
            raise EngineSpecError(f"speed must be a number from 0.5 to 2.0, got {options['speed']!r}")
    parsed = EngineSpec(engine, arg or None, options)
    if check_files:
        paths = [parsed.options.get("voices"), parsed.options.get("model")]
        if engine == "piper" and parsed.arg:
            paths += [parsed.arg, f"{parsed.arg}.json"]
        for path in paths:
            if path and not Path(path).is_file():
                raise EngineSpecError(f"file not found: {path}")
    return parsed


def engine_factory(spec: str | EngineSpec, lang: str) -> Callable[[], Any]:
    """A zero-argument factory building the engine (models load when it is called)."""
    from .tts import EspeakEngine, KokoroZhEngine, PiperEngine

    s = parse_spec(spec) if isinstance(spec, str) else spec
    if s.engine == "kokoro":
        kwargs: dict[str, Any] = {"voices": s.options.get("voices"), "model": s.options.get("model")}
        return lambda: KokoroZhEngine(s.arg or "jf_gongitsune", speed=s.speed, **kwargs)
    if s.engine == "piper":
        return lambda: PiperEngine(s.arg, speed=s.speed)
    return lambda: EspeakEngine(lang)
