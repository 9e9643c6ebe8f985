"""``callassist bench ...`` commands (registered through the callassist.cli entry point)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

bench_cli = typer.Typer(no_args_is_help=True, help="Benchmarks and evaluation that print figures.")


@bench_cli.command("api")
def bench_api(
    clients: Annotated[int, typer.Option(help="Concurrent clients")] = 8,
    seconds: Annotated[float, typer.Option(help="Duration of each phase, seconds")] = 5.0,
) -> None:
    """GET /v1/presets and PUT regular on loopback: requests/s, p50 and p99 latency."""
    from .api import run_api_bench

    run_api_bench(clients=clients, seconds=seconds)


@bench_cli.command("text")
def bench_text(
    suite: Annotated[str, typer.Option(help="Suite file or builtin:dev/dev2/test/test2/test3")] = "builtin:test",
    k: Annotated[int, typer.Option(help="Attempts per scenario (pass^k)", min=1)] = 5,
    realizer: Annotated[str, typer.Option(help="CallAssist realizer: template or llm")] = "template",
    out: Annotated[Path, typer.Option(help="Folder for report.json/.html and runs.jsonl")] = Path("var/bench/text"),
    baselines: Annotated[bool, typer.Option("--baselines", help="Also run the baselines (incl. guard off)")] = False,
    agent: Annotated[
        list[str] | None,
        typer.Option(help="Agent(s) under test (repeatable): callassist, reference, echo, ..."),
    ] = None,
    noise: Annotated[bool, typer.Option(help="Simulated phone-line errors")] = True,
    concurrency: Annotated[int, typer.Option(help="Calls at once per agent", min=1)] = 4,
    scene_hint: Annotated[bool, typer.Option(help="Tell CallAssist the scene")] = True,
    limit: Annotated[int | None, typer.Option(help="Only the first N scenarios")] = None,
    caller_base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible URL: an adaptive caller")] = None,
    caller_model: Annotated[str, typer.Option(help="Model of the adaptive caller")] = "default",
    judge_base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible URL: the optional LLM judge")] = None,
    judge_model: Annotated[str, typer.Option(help="Model of the LLM judge")] = "default",
    llm_base_url: Annotated[
        str | None, typer.Option(help="CallAssist's LLM realizer endpoint(s), comma-separated")
    ] = None,
    llm_model: Annotated[str | None, typer.Option(help="CallAssist's LLM realizer model")] = None,
    understander: Annotated[
        str | None,
        typer.Option(help="CallAssist's understander(s), comma-separated (rules,learned,llm): side by side"),
    ] = None,
) -> None:
    """Text calls over a simulated noisy phone line: pass@1, pass^k, error types, HTML report."""
    from .suite import SuiteError
    from .text import BenchError, TextBenchConfig, run

    if realizer not in ("template", "llm"):
        raise typer.BadParameter("--realizer must be template or llm")
    settings: dict[str, str] = {}
    if llm_base_url:
        settings["llm_base_url"] = llm_base_url
    if llm_model:
        settings["llm_model"] = llm_model
    cfg = TextBenchConfig(
        suite=suite,
        k=k,
        realizer=realizer,
        out=out,
        agents=tuple(agent or ("callassist",)),
        baselines=baselines,
        noise=noise,
        concurrency=concurrency,
        scene_hint=scene_hint,
        limit=limit,
        caller_base_url=caller_base_url,
        caller_model=caller_model,
        judge_base_url=judge_base_url,
        judge_model=judge_model,
        settings=settings,
        understanders=tuple(u.strip() for u in (understander or "").split(",") if u.strip()),
    )
    try:
        run(cfg)
    except (BenchError, SuiteError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc


@bench_cli.command("voice")
def bench_voice(
    suite: Annotated[str, typer.Option(help="Suite file or builtin:dev/dev2/test/test2/test3")] = "builtin:test",
    limit: Annotated[int, typer.Option(help="Scenarios to call (an even mix of languages)")] = 12,
    concurrency: Annotated[
        str, typer.Option(help="Calls at once to sweep, comma-separated (stops when p90 doubles)")
    ] = "1,2,3,4",
    sweep_calls: Annotated[int, typer.Option(help="Calls per concurrency level (at least the level)")] = 4,
    out: Annotated[Path, typer.Option(help="Folder for voice.json and the server log")] = Path("var/bench/voice"),
    line: Annotated[
        str, typer.Option(help="clean, realistic (voices and line conditions cycled, seeded), or one condition")
    ] = "clean",
    calls_at_once: Annotated[int, typer.Option(help="Calls at once in the main run", min=1)] = 1,
    data_dir: Annotated[Path | None, typer.Option(help="Keep the server's data (TTS cache) here across runs")] = None,
) -> None:
    """Scenarios through the real Twilio WebSocket path with synthesized caller audio: the
    verifier's gates, end of caller speech -> first assistant audio (p50/p90/p99), ASR,
    decision and TTS times, and the most concurrent calls before p90 doubles; with
    ``--line realistic``, recognition error, gates and latency per language and line condition."""
    from .line_audio import CONDITIONS
    from .voice import run_voice_bench

    if line not in ("clean", "realistic", *CONDITIONS):
        raise typer.BadParameter(f"--line must be clean, realistic or one of: {', '.join(CONDITIONS)}")
    levels = [int(x) for x in concurrency.split(",") if x.strip()]
    run_voice_bench(
        suite=suite,
        limit=limit,
        concurrency=levels,
        out=out,
        sweep_calls=sweep_calls,
        line=line,
        calls_at_once=calls_at_once,
        data_dir=data_dir,
    )


@bench_cli.command("safety")
def bench_safety(
    out: Annotated[Path, typer.Option(help="Folder for safety.json")] = Path("var/bench/safety"),
    corpora: Annotated[bool, typer.Option(help="Also run the packaged injection corpora")] = True,
) -> None:
    """The red-team suite (attacks, injection corpora, benign turns) through text calls with the
    template realizer and an adversarial fake LLM: per-constraint counts, every failure,
    benign over-blocking, and the guard's time per sentence."""
    from .safety_bench import run_safety_bench

    report = run_safety_bench(out=out, corpora=corpora)
    if not report["passed"]:
        raise typer.Exit(1)


@bench_cli.command("decisions")
def bench_decisions(
    suite: Annotated[list[str] | None, typer.Option(help="Suites (repeatable)")] = None,
    repeats: Annotated[int, typer.Option(help="Calls per scenario")] = 3,
    out: Annotated[Path | None, typer.Option(help="Folder for decisions.json")] = None,
    understander: Annotated[
        str, typer.Option(help="Understander(s), comma-separated: rules,learned")
    ] = "rules,learned",
) -> None:
    """Decision time per turn (p50, p99) and the template realizer's first-token time over many
    scripted calls through CallSession, per understander (the embedding included)."""
    from .decisions import run_decision_bench

    names = tuple(u.strip() for u in understander.split(",") if u.strip())
    bad = [u for u in names if u not in ("rules", "learned", "llm")]
    if bad:
        raise typer.BadParameter(f"unknown understander(s) {bad}; choose rules, learned or llm")
    run_decision_bench(suites=suite or ["builtin:dev", "builtin:test"], repeats=repeats, out=out, understanders=names)


@bench_cli.command("nlu")
def bench_nlu(
    split: Annotated[str, typer.Option(help="dev, test, eval-pairs (under --data) or a folder")] = "dev",
    data: Annotated[Path, typer.Option(help="Corpus root")] = Path("data/nlu"),
    out: Annotated[Path | None, typer.Option(help="Write the figures as JSON here")] = None,
) -> None:
    """Utterance-level figures of the learned understander vs the rules on a held-out corpus
    split: intent / exception / focus / form accuracy per language, trigger-match accuracy,
    a confusion table of the primary intent, and calibration (ECE)."""
    from .nlu.report import run_nlu_bench

    # A split's name (dev, test, eval-pairs, ...) is a folder under the corpus root; any
    # other value is a folder path.
    folder = data / split if (data / split).is_dir() else Path(split)
    if not run_nlu_bench(folder, out=out):
        raise typer.Exit(1)


@bench_cli.command("asr")
def bench_asr(repeats: Annotated[int, typer.Option(help="Runs per turn (best is kept)")] = 3) -> None:
    """Whisper on synthesized phone turns (8 kHz mu-law): CallAssist's short window vs. the 30 s one."""
    from .asr_bench import run_asr_bench

    run_asr_bench(repeats=repeats)


@bench_cli.command("rtp")
def bench_rtp(seconds: Annotated[float, typer.Option(help="How long to receive", min=1)] = 10.0) -> None:
    """The SIP RTP sender's 20 ms pacing on loopback: packet gaps (mean, p50, p95, p99, max)."""
    from .rtp_pacing import run_rtp_bench

    run_rtp_bench(seconds)


@bench_cli.command("soak")
def bench_soak(
    calls: Annotated[int, typer.Option(help="Voice calls in sequence first", min=1)] = 200,
    concurrency: Annotated[int, typer.Option(help="Then this many calls at once", min=0)] = 8,
    minutes: Annotated[float, typer.Option(help="... for this long", min=0)] = 10.0,
    warmup: Annotated[int, typer.Option(help="Calls before the baseline is taken", min=1)] = 10,
    malloc_arena_max: Annotated[
        int | None, typer.Option(help="MALLOC_ARENA_MAX for the server (allocator retention vs leak)")
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder for soak.json")] = Path("var/bench/soak"),
) -> None:
    """Voice calls over the Twilio WebSocket: RSS after warm-up, threads, tasks, live call objects."""
    from .soak import run_soak

    env = {"MALLOC_ARENA_MAX": str(malloc_arena_max)} if malloc_arena_max else None
    run_soak(calls=calls, concurrency=concurrency, minutes=minutes, warmup=warmup, out=out, env=env)


@bench_cli.command("owner")
def bench_owner(
    calls: Annotated[int, typer.Option(help="Text calls for the SSE and webhook figures", min=1)] = 50,
    say: Annotated[int, typer.Option(help="Owner 'say's into one live Twilio-format call (0: skip)", min=0)] = 10,
    restart_calls: Annotated[int, typer.Option(help="Deliveries pending across the restart", min=1)] = 20,
) -> None:
    """Owner in the loop: SSE event latency, hang-up -> first webhook attempt, say -> first
    audio at the caller, deliveries lost across a restart (loopback, real server)."""
    from .owner import run_owner_bench

    run_owner_bench(calls=calls, says=say, restart_calls=restart_calls)


@bench_cli.command("tts")
def bench_tts(
    lang: Annotated[str, typer.Option(help="zh or en")] = "zh",
    voices: Annotated[
        str | None,
        typer.Option(help="Engine specs to compare, comma-separated (CALLASSIST_TTS_ZH form)"),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N sentences")] = None,
    out: Annotated[Path, typer.Option(help="Folder for tts-<lang>.json")] = Path("var/bench/tts"),
) -> None:
    """Round-trip intelligibility of each voice: every template sentence and suite preset
    response synthesized, sent through an 8 kHz mu-law phone line and recognized by Whisper;
    CER (zh) / WER (en) per voice, first-audio time and real-time factor."""
    from pipeline.tts_config import EngineSpecError, parse_spec

    from .tts_bench import run_tts_bench

    if lang not in ("zh", "en"):
        raise typer.BadParameter("--lang must be zh or en")
    default = "kokoro:jf_gongitsune,kokoro:jm_kumo,espeak" if lang == "zh" else "piper"
    specs = [v.strip() for v in (voices or default).split(",") if v.strip()]
    for spec in specs:
        try:
            parse_spec(spec)
        except EngineSpecError as exc:
            raise typer.BadParameter(f"--voices: {exc}") from exc
    run_tts_bench(lang=lang, voices=specs, limit=limit, out=out)


@bench_cli.command("readback")
def bench_readback(
    per_lang: Annotated[int, typer.Option(help="Calls per language, each giving a callback number", min=1)] = 24,
    out: Annotated[Path, typer.Option(help="Folder for readback-<set>.json")] = Path("var/bench/readback"),
    case_set: Annotated[
        str, typer.Option("--set", help="Callback utterances: dev (tuned on) or heldout (the reported figure)")
    ] = "dev",
    redecode: Annotated[bool, typer.Option(help="Re-decode low-confidence turns (CALLASSIST_ASR_REDECODE)")] = False,
    clean: Annotated[bool, typer.Option(help="Also recognize each first sentence over a clean line")] = True,
) -> None:
    """Callback numbers over the realistic line: exact before and after the read-back
    (real Whisper, real coordinator, a caller who says no and repeats when it is wrong)."""
    from .readback_bench import run_readback_bench
    from .readback_caller import SETS

    if case_set not in SETS:
        raise typer.BadParameter(f"one of {', '.join(SETS)}", param_hint="--set")
    run_readback_bench(per_lang=per_lang, out=out, case_set=case_set, redecode=redecode, clean=clean)


@bench_cli.command("recognition")
def bench_recognition(
    per_lang: Annotated[int, typer.Option(help="Scenarios per language and split (dev, test)", min=1)] = 10,
    out: Annotated[Path, typer.Option(help="Folder for recognition.json")] = Path("var/bench/recognition"),
) -> None:
    """Whisper over the realistic line: recognition error with today's hotwords, with context
    biasing, and with beam re-decoding; and the ask-for-repeat confidence threshold chosen on
    the dev split, with its precision and recall on the test split."""
    from .recognition_bench import run_recognition_bench

    run_recognition_bench(per_lang=per_lang, out=out)


@bench_cli.command("turn-end")
def bench_turn_end(
    per_lang: Annotated[int, typer.Option(help="Multi-sentence turns per language (24 scripts each)", min=1)] = 24,
    out: Annotated[Path, typer.Option(help="Folder for turn-end.json")] = Path("var/bench/turn-end"),
    data_dir: Annotated[Path | None, typer.Option(help="Keep the server's data (TTS cache) here across runs")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the pauses between sentences")] = 0,
    text_model: Annotated[
        bool | None,
        typer.Option(
            "--text-model/--no-text-model",
            help="Text end-of-turn classifier on/off for the server (default: CALLASSIST_TURN_TEXT_MODEL)",
        ),
    ] = None,
) -> None:
    """False cut-ins on three-sentence caller turns with 300-900 ms pauses, over the Twilio
    WebSocket, per language, next to end of speech -> first assistant audio."""
    from .turn_end_bench import run_turn_end_bench

    run_turn_end_bench(per_lang=per_lang, out=out, data_dir=data_dir, seed=seed, text_model=text_model)
