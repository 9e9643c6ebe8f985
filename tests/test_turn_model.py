"""The text end-of-turn classifier: its training examples, fitting, and the packaged weights."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

from bench.turn_end_train import as_heard, cuts, examples, fit, train
from pipeline.turn_model import TurnTextModel


def test_cuts_at_sentence_and_clause_boundaries() -> None:
    assert cuts("Hello, this is the driver. Your pickup is at the temple. Which gate?", "en") == [
        "Hello, this is the driver.",
        "Hello, this is the driver. Your pickup is at the temple.",
    ]
    assert "喂 你好 我是顺丰快递" in cuts("喂 你好 我是顺丰快递 有个包裹要签收", "zh")
    assert cuts("Hi.", "en") == []  # nothing to cut


def test_heard_with_and_without_a_full_stop_but_a_question_keeps_its_mark() -> None:
    rng = random.Random(0)
    assert as_heard("I'm at your building now,", "en", rng) == ["I'm at your building now.", "I'm at your building now"]
    assert as_heard("放哪儿？", "zh", rng) == ["放哪儿？"]


def _corpus(tmp: Path) -> Path:
    rows = [
        ("en", "Hi, this is the driver. Where should I put it?"),
        ("en", "Hello, it's Sam from work. The meeting moved to three, can you tell him?"),
        ("zh", "你好 我是送外卖的 放哪儿？"),
        ("zh", "喂 我是他同事 帮我跟他说一声 会改到三点了"),
    ]
    for split in ("train", "dev"):
        folder = tmp / split / "a"
        folder.mkdir(parents=True)
        lines = [
            json.dumps({"id": f"{split}-{i}", "lang": lang, "scene": "life", "context": None, "text": text,
                        "intents": ["greeting"], "exception": None, "focus": None, "form": "plain"},
                       ensure_ascii=False)
            for i, (lang, text) in enumerate(rows * 3)
        ]  # fmt: skip
        (folder / "utt-001.jsonl").write_text("\n".join(lines), encoding="utf-8")
    return tmp


def test_training_is_seeded_and_learns_the_examples(tmp_path: Path) -> None:
    data = _corpus(tmp_path)
    texts, y, langs = examples(data / "train", seed=1)
    assert set(y.tolist()) == {0.0, 1.0}
    a = fit(texts, y, langs, seed=3, epochs=60)
    b = fit(texts, y, langs, seed=3, epochs=60)
    assert np.array_equal(a.weights, b.weights)
    assert a.p_complete("Hi, this is the driver. Where should I put it?") > a.p_complete("Hi, this is the driver.")
    meta = train(data=data, out=tmp_path / "w.npz", seed=3, log=lambda _m: None)
    loaded = TurnTextModel.load(tmp_path / "w.npz")
    assert loaded.threshold == meta["threshold"]
    assert 0.5 <= loaded.threshold <= 0.99


def test_empty_text_is_never_a_complete_turn() -> None:
    model = TurnTextModel(np.zeros(1 << 15, np.float32), bias=10.0)
    assert model.p_complete("  ") == 0.0


def test_bench_turn_end_counts_a_split_utterance_not_a_stray_turn_after_it() -> None:
    from bench.turn_end_bench import cut_in

    said = ["Hi, this is the delivery driver.", "I have your food.", "Where should I put it?"]
    whole = "Hi, this is the delivery driver. I have your food. Where should I put it?"
    assert not cut_in([whole, "you"], said, "en", early=False)  # Whisper's "you" afterwards
    assert not cut_in(
        ["Hi this is the delivery driver I have your food where should I put in"], said, "en", early=False
    )
    assert cut_in(
        ["Hi, this is the delivery driver.", "I have your food. Where should I put it?"], said, "en", early=False
    )
    assert cut_in([whole], said, "en", early=True)  # the assistant spoke over the caller
    zh = ["你好，我是送外卖的。", "你的餐已经到楼下了。", "放哪儿比较好？"]
    assert cut_in(["你好 我是送外卖的", "你的餐已经到楼下了 放哪儿比较好"], zh, "zh", early=False)
    assert not cut_in(["你好我是送外卖的你的餐已经到楼下了放哪比较好"], zh, "zh", early=False)


def test_the_benchs_unseen_turns_are_not_in_the_understanding_corpus() -> None:
    """bench turn-end's second twelve turns per language must not be measured on what the
    classifier was trained on (nor chosen on): none of their sentences is in data/nlu."""
    import re

    from bench.turn_end_bench import TURNS, UNSEEN_TURNS

    def norm(text: str) -> str:
        return re.sub(r"[^\w]", "", text.lower())

    corpus = []
    for path in Path("data/nlu").rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                corpus += [
                    norm(row[k]) for k in ("text", "utterance", "context", "trigger") if isinstance(row.get(k), str)
                ]
    blob = "\n".join(corpus)
    assert len(corpus) > 10_000
    for lang in ("en", "zh"):
        assert len(UNSEEN_TURNS[lang]) == 12 and len(TURNS[lang]) == 12
        for turn in UNSEEN_TURNS[lang]:
            assert turn not in TURNS[lang]
            for sentence in turn:
                assert norm(sentence) not in blob, sentence
