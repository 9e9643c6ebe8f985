"""``callassist bench owner`` runs end to end (small: no voice, a few calls) and its
figures are sane: every event seen, every webhook signed, nothing lost across a restart."""

from __future__ import annotations

from bench.owner import run_owner_bench


def test_bench_owner_small() -> None:
    result = run_owner_bench(calls=2, says=0, restart_calls=3)
    assert result["sse_turn_event"]["n"] == 4
    assert result["hangup_to_first_webhook_attempt"]["n"] == 2
    assert result["bad_signatures"] == 0
    restart = result["restart"]
    assert restart["expected"] == 3 and restart["lost"] == 0 and restart["bad_signatures"] == 0
    assert restart["failed_attempts_before_restart"] >= 3
