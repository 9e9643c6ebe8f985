"""`callassist train nlu` on a small slice of the corpus: seeded and deterministic, and the
weights record the hash of the data they were trained on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from bench.nlu.data import data_hash
from bench.train_cli import train_cli
from coordinator.nlu import NLUModel

ROOT = Path(__file__).resolve().parent.parent


def _slice(tmp: Path) -> Path:
    """About a hundred rows of data/nlu/train (both languages, utterances and trigger pairs)."""
    root = tmp / "nlu"
    src = sorted((ROOT / "data" / "nlu" / "train").rglob("*.jsonl"))
    for path in [p for p in src if "utt-001" in p.name][:4] + [p for p in src if p.name.startswith("triggers")][:1]:
        dst = root / "train" / path.parent.name / path.name
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text("\n".join(path.read_text("utf-8").splitlines()[:25]) + "\n", "utf-8")
    return root


@pytest.mark.slow  # embeds about a hundred texts twice (~30 s)
def test_training_is_seeded_and_records_the_data_hash(tmp_path: Path) -> None:
    data = _slice(tmp_path)
    runner = CliRunner()
    outs = [tmp_path / "a.npz", tmp_path / "b.npz"]
    for out in outs:
        res = runner.invoke(train_cli, ["nlu", "--data", str(data), "--out", str(out), "--no-cache"])
        assert res.exit_code == 0, res.output
    a, b = (NLUModel.load(p) for p in outs)
    assert np.array_equal(a.W, b.W) and np.array_equal(a.pair_w, b.pair_w)
    assert a.meta["data_sha256"] == data_hash(data)
    (data / "train" / "extra.jsonl").write_text('{"id": "x"}\n', "utf-8")
    assert data_hash(data) != a.meta["data_sha256"]  # a new row: the weights no longer match


def test_bench_nlu_prints_and_writes_the_figures(tmp_path: Path) -> None:
    from bench.cli import bench_cli

    folder = tmp_path / "split" / "C1"
    folder.mkdir(parents=True)
    for name in ("utt-001.jsonl", "triggers-001.jsonl"):
        rows = (ROOT / "data" / "nlu" / "test" / "C1" / name).read_text("utf-8").splitlines()[:12]
        (folder / name).write_text("\n".join(rows) + "\n", "utf-8")
    out = tmp_path / "nlu.json"
    res = CliRunner().invoke(bench_cli, ["nlu", "--split", str(tmp_path / "split"), "--out", str(out)])
    assert res.exit_code == 0, res.output
    import json

    report = json.loads(out.read_text("utf-8"))
    assert report["utterances"]["all"]["n"] == 12 and report["triggers"]["all"]["n"] == 12
    assert 0.0 <= report["triggers"]["all"]["ece"] <= 1.0
    assert CliRunner().invoke(bench_cli, ["nlu", "--split", str(tmp_path / "nothing")]).exit_code == 1
    # A split named as a folder under the corpus root (as `--split eval-pairs` under data/nlu).
    named = CliRunner().invoke(bench_cli, ["nlu", "--data", str(tmp_path), "--split", "split"])
    assert named.exit_code == 0, named.output


@pytest.mark.slow  # embeds about a hundred texts three times (~45 s)
def test_pairs_only_refit_equals_a_full_run_and_refuses_changed_utterances(tmp_path: Path) -> None:
    data = _slice(tmp_path)
    runner = CliRunner()
    full, refit = tmp_path / "full.npz", tmp_path / "refit.npz"
    res = runner.invoke(train_cli, ["nlu", "--data", str(data), "--out", str(refit), "--no-cache"])
    assert res.exit_code == 0, res.output
    src = sorted((ROOT / "data" / "nlu" / "train").rglob("triggers-*.jsonl"))[-1]
    extra = data / "train" / "T9" / "triggers-001.jsonl"  # new trigger pairs only
    extra.parent.mkdir(parents=True)
    extra.write_text("\n".join(src.read_text("utf-8").splitlines()[:20]) + "\n", "utf-8")
    res = runner.invoke(train_cli, ["nlu", "--data", str(data), "--out", str(refit), "--no-cache", "--pairs-only"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(train_cli, ["nlu", "--data", str(data), "--out", str(full), "--no-cache"])
    assert res.exit_code == 0, res.output
    a, b = NLUModel.load(refit), NLUModel.load(full)
    assert np.array_equal(a.W, b.W) and np.allclose(a.pair_w, b.pair_w)
    assert a.trigger_threshold == b.trigger_threshold and a.meta["data_sha256"] == data_hash(data)
    utt = next((data / "train").rglob("utt-001.jsonl"))
    utt.write_text(utt.read_text("utf-8").splitlines()[0] + "\n", "utf-8")  # the utterances changed
    res = runner.invoke(train_cli, ["nlu", "--data", str(data), "--out", str(refit), "--no-cache", "--pairs-only"])
    assert res.exit_code != 0 and "utterances changed" in res.output + str(res.exception)
