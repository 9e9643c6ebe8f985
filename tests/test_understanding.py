"""The understanding seam: rules / learned / llm behind one protocol, the committed weights
and data, the LLM understander's deadline and fallback (scripted fake LLM on loopback),
and ``bench text --understander rules,learned`` side by side."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from app.main import create_app
from app.settings import Settings
from bench.fake_llm import FakeLLMConfig, create_fake_llm
from bench.nlu.data import data_hash, load_split
from coordinator import Act, CallState
from coordinator.nlu import LearnedUnderstander, NLUModel
from coordinator.nlu.model import INTENTS, WEIGHTS_PATH
from coordinator.understanding import RulesUnderstander
from pipeline.understanders import LLMUnderstander, MalformedAnswer, make_understander, parse_answer

from .conftest import create_owner, make_settings
from .coordinator_helpers import Call, embedder, emergent
from .helpers import RedisProcess, serve

ROOT = Path(__file__).resolve().parent.parent


def learned() -> LearnedUnderstander:
    return LearnedUnderstander(embed=embedder().embed_one)


# ------------------------------------------------------------ weights ----


def test_committed_weights_were_trained_on_the_committed_data() -> None:
    meta = NLUModel.load().meta
    assert meta["data_sha256"] == data_hash(ROOT / "data" / "nlu"), (
        "data/nlu changed without retraining: run `callassist train nlu` and commit both"
    )
    assert meta["seed"] == 20261201


def test_weights_are_small_and_loaded_once() -> None:
    assert WEIGHTS_PATH.stat().st_size < 20 * 1024 * 1024
    from coordinator.nlu import shared_model

    assert shared_model() is shared_model()


def test_corpus_has_both_languages_and_every_scene() -> None:
    split = load_split(ROOT / "data" / "nlu" / "train")
    assert {u.lang for u in split.utterances} == {"zh", "en"}
    assert {u.scene for u in split.utterances} == {"takeout", "delivery", "taxi", "work", "life", "harassment"}
    assert split.skipped == 0


# -------------------------------------------------------- the seam ----


def test_rules_and_learned_share_the_protocol() -> None:
    state, ctx = CallState(call_id="t", lang="zh"), Call().ctx
    for u in (RulesUnderstander(), learned()):
        reading = u.understand("喂你好，你的外卖到了，放哪儿啊？", state=state, ctx=ctx)
        assert reading.source == u.name
        assert reading.act.value in {"where_to_leave", "arrival"}
        assert reading.intents and all(0.0 <= p <= 1.0 for _, p in reading.intents)


@pytest.mark.parametrize(
    ("lang", "regular", "line"),
    [
        ("zh", {"takeout": "麻烦放在门口就可以了"}, "喂，你好，美团的，外卖到了，给你放哪？"),
        (
            "en",
            {"delivery": "Please leave it with the front desk."},
            "Hi, UPS here, I've got a package, where should I leave it?",
        ),
    ],
)
def test_learned_conveys_the_regular_preset_when_asked(lang: str, regular: dict[str, str], line: str) -> None:
    call = Call(owner="Alex" if lang == "en" else "陈先生", lang=lang, regular=regular, understander=learned())
    d = call.say(line)
    assert d.act == Act.CONVEY_PRESET, d
    assert next(iter(regular.values())) in d.text


def test_learned_reads_an_exception_and_suspends_the_preset() -> None:
    call = Call(regular={"takeout": "麻烦放在门口就可以了"}, understander=learned())
    d = call.say("不好意思啊，路上汤洒了一点，袋子都湿了")
    assert d.act == Act.RELAY_EXCEPTION
    assert call.record.exceptions


def test_learned_trigger_match_is_a_probability() -> None:
    trig = emergent("p1", "有人问我什么时候回来", "他今天会晚一点回来，有事可以留言。")
    call = Call(emergent=(trig,), understander=learned())
    d = call.say("你好，请问陈先生今天什么时候回来啊？")
    assert d.preset is not None and d.preset.id == "p1"
    u = learned().understand(
        "他住在哪个小区？", state=call.state, ctx=call.ctx, vec=embedder().embed_one("他住在哪个小区？")
    )
    assert 0.0 <= u.trigger.probs["p1"] <= 1.0
    assert u.trigger.best is None


def test_understander_setting_is_checked() -> None:
    assert Settings(understander="learned").understander == "learned"
    with pytest.raises(ValidationError):
        Settings(understander="regex")
    with pytest.raises(ValueError, match="LLM_BASE_URL"):
        make_understander("llm")
    assert isinstance(make_understander("rules"), RulesUnderstander)


# ---------------------------------------------------------------- llm ----


def test_parse_answer_rejects_malformed_json() -> None:
    ok = parse_answer(json.dumps({"intents": ["arrival"], "exception": None, "focus": None, "form": "plain"}))
    assert ok.intents["arrival"] == 1.0 and set(ok.intents) == set(INTENTS)
    for bad in ("not json", "[]", '{"intents": ["dance"], "exception": null, "focus": null, "form": "plain"}',
                '{"intents": ["arrival"], "exception": "volcano", "focus": null, "form": "plain"}'):  # fmt: skip
        with pytest.raises(MalformedAnswer):
            parse_answer(bad)


async def _prepare(cfg: FakeLLMConfig, deadline_ms: int) -> tuple[object, LLMUnderstander, float]:
    with serve(create_fake_llm(cfg)) as server:
        from openai import AsyncOpenAI

        client = AsyncOpenAI(base_url=server.base_url + "/v1", api_key="x", timeout=5, max_retries=0)
        u = LLMUnderstander(client, "fake", deadline_ms=deadline_ms, fallback=learned())
        call = Call(regular={"takeout": "麻烦放在门口就可以了"})
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        got = await u.prepare("外卖到了", state=call.state, ctx=call.ctx)
        elapsed = loop.time() - t0
        await client.close()
        return got, u, elapsed


async def test_llm_answer_within_the_deadline_is_used() -> None:
    # The scripted model reads "外卖到了" as a spill (the rules read an arrival): its reading wins.
    answer = json.dumps({"intents": ["exception"], "exception": "spilled", "focus": None, "form": "plain"})
    # A deadline far above the 30 ms TTFT: on a loaded 2-core CI box the first request
    # (client, connection, a server thread) has taken over 400 ms.
    got, u, _ = await _prepare(FakeLLMConfig(ttft_ms=30, mode="fixed", text=answer), deadline_ms=3000)
    assert got is not None and got.source == "llm"  # type: ignore[attr-defined]
    assert got.act.value == "exception" and got.exception == "spilled"  # type: ignore[attr-defined]
    assert u.answered == 1 and sum(u.fallbacks.values()) == 0


async def test_llm_past_the_deadline_falls_back_to_learned() -> None:
    answer = json.dumps({"intents": ["arrival"], "exception": None, "focus": None, "form": "plain"})
    got, u, elapsed = await _prepare(FakeLLMConfig(ttft_ms=900, mode="fixed", text=answer), deadline_ms=150)
    assert got is None and u.fallbacks["timeout"] == 1
    assert elapsed < 0.8  # gave up at the deadline, not when the model answered (0.9 s)


async def test_llm_malformed_answer_falls_back_to_learned() -> None:
    got, u, _ = await _prepare(FakeLLMConfig(ttft_ms=20, mode="fixed", text="Sure! The caller wants food."), 3000)
    assert got is None and u.fallbacks["malformed"] == 1


# --------------------------------------------------------------- bench ----


def test_bench_text_runs_understanders_side_by_side(tmp_path: Path) -> None:
    from bench.text import TextBenchConfig, run

    report = run(TextBenchConfig(suite="builtin:dev", k=1, limit=3, out=tmp_path, understanders=("rules", "learned")))
    assert set(report["agents"]) == {"callassist-rules", "callassist-learned"}
    assert report["meta"]["understander"] == "rules,learned"


# ------------------------------------------------- through the text API ----


@pytest.mark.parametrize(("ttft_ms", "act"), [(30, "relay_exception"), (4000, "convey_preset")])
async def test_text_call_with_the_llm_understander(
    ttft_ms: int, act: str, clean_redis: RedisProcess, tmp_path: Path
) -> None:
    """CALLASSIST_UNDERSTANDER=llm end to end: the scripted model reads "外卖到了" as a spill;
    in time its reading decides the reply, past the deadline the learned one does. The deadline is
    2 s here, not the 400 ms default: a fresh server's first request (connection set-up, a loaded
    CI machine) took over 200 ms once; the deadline logic itself is tested in-process above."""
    answer = json.dumps({"intents": ["exception"], "exception": "spilled", "focus": None, "form": "plain"})
    with serve(create_fake_llm(FakeLLMConfig(ttft_ms=ttft_ms, mode="fixed", text=answer))) as llm:
        settings = make_settings(
            clean_redis.url, tmp_path, understander="llm", llm_base_url=llm.base_url + "/v1", llm_model="fake",
            nlu_deadline_ms=2000,
        )  # fmt: skip
        with serve(create_app(settings)) as app:
            async with httpx.AsyncClient(base_url=app.base_url, timeout=10) as client:
                data = await create_owner(client, clean_redis.url, "陈先生", "zh")
                client.headers["Authorization"] = data["auth"]
                await client.put("/v1/presets/regular/takeout", json={"response": "麻烦放在门口就可以了"})
                call = (await client.post("/v1/calls/text", json={"lang": "zh", "scene_hint": "takeout"})).json()
                r = await client.post(f"/v1/calls/{call['call_id']}/turns", json={"text": "喂你好，外卖到了"})
                assert r.status_code == 200, r.text
                assert r.json()["act"] == act
