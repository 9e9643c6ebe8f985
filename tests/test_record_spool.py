"""Record saves queued while Redis is down survive the process (issue 15 leftover): the
spool (pipeline/spool.py) is fsync'd, replayed in order at the next start and when Redis
is back, never moves a record backwards, and is bounded. A real redis-server is stopped
and started; the call runs in a separate Python process that exits while Redis is down."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

from redis.asyncio import Redis

from app.resources import make_redis
from pipeline.records import CallStore, RetryOptions
from pipeline.spool import RecordSpool, SpooledSave

from .conftest import make_settings
from .helpers import RedisProcess, free_port

CALLER = r"""
import asyncio, sys
from pathlib import Path
from app.resources import make_redis
from pipeline.records import CallStore
from pipeline.session import CallServices, CallSession
from pipeline.spool import RecordSpool
from presets.owners import OwnerStore
from presets.pool import PresetStore
from tests.conftest import make_settings

async def main(url: str, spool: str) -> None:
    redis = make_redis(url, make_settings(url, Path(spool)))
    calls = CallStore(redis, 3600, spool=RecordSpool(Path(spool)))
    owners = OwnerStore(redis)
    services = CallServices(redis=redis, owners=owners, presets=PresetStore(redis), calls=calls)
    owner, _ = await owners.create_owner("Alex", "en")
    session = await CallSession.open(services, owner_id=owner.owner_id, channel="twilio", line="+15550100")
    await session.turn("Hi, is Alex there?")
    print("READY", session.call_id, flush=True)
    sys.stdin.readline()  # the test stops Redis now
    await session.turn("Please tell him Sam called about the invoice.")
    await session.hangup("caller_hangup", outcome="caller_hangup")
    print("PENDING", calls.pending, flush=True)
    await calls.close()  # the drain's last attempt fails: the saves stay in the spool
    await redis.aclose()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def _wait_saved(store: CallStore) -> None:
    for _ in range(200):
        if store.pending == 0:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{store.pending} saves still queued")


def _call_in_a_process_that_exits_while_redis_is_down(rp: RedisProcess, spool_dir: Path) -> str:
    """The caller's process: one turn saved, Redis stopped, a turn and the hang-up queued,
    the drain's last attempt, exit. Returns the call id."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CALLER, rp.url, str(spool_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        ready = proc.stdout.readline().split()
        assert ready[:1] == ["READY"], ready
        rp.stop()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().split() == ["PENDING", "1"]  # the newest version only
        assert proc.wait(60) == 0
        return ready[1]
    finally:
        if proc.poll() is None:
            proc.kill()


async def test_queued_saves_survive_a_process_exit_and_never_go_backwards(tmp_path: Path) -> None:
    rp = RedisProcess(tmp_path / "r", free_port())
    rp.start()
    spool_dir = tmp_path / "spool"
    redis: Redis | None = None
    try:
        call_id = _call_in_a_process_that_exits_while_redis_is_down(rp, spool_dir)
        left = list(spool_dir.glob("records-*.jsonl"))
        assert len(left) == 1 and left[0].stat().st_size > 0
        stale_copy = tmp_path / "stale.jsonl"
        shutil.copy(left[0], stale_copy)

        rp.start()  # Redis is back; the process that made the call is gone
        redis = make_redis(rp.url, make_settings(rp.url, tmp_path))
        store = CallStore(redis, 3600, retry=RetryOptions(first_delay_s=0.05), spool=RecordSpool(spool_dir))
        assert await store.recover_spool() == 2  # the turn's save, then the hang-up's, in order
        await _wait_saved(store)
        record = await store.get(call_id)
        assert record is not None and record.end_reason == "caller_hangup" and record.ended_at is not None
        assert [t.caller_text for t in record.turns] == [
            "Hi, is Alex there?",
            "Please tell him Sam called about the invoice.",
        ]
        assert not list(spool_dir.glob("records-*.jsonl")) or all(
            p.stat().st_size == 0 for p in spool_dir.glob("records-*.jsonl")
        )

        # The record moves on (a later save), then an old spool turns up: it is refused.
        record.stats["marker"] = "newer"
        assert await store.save(record)
        shutil.copy(stale_copy, spool_dir / "records-1-deadbeef.jsonl")
        assert await store.recover_spool() == 2
        await _wait_saved(store)
        again = await store.get(call_id)
        assert again is not None and again.stats.get("marker") == "newer" and again.revision == record.revision
        await store.close()
    finally:
        if redis is not None:
            await redis.aclose()
        rp.stop()


async def test_replayed_when_redis_comes_back_in_the_same_process(tmp_path: Path) -> None:
    """A live process: queued while Redis is down, each on disk before save() returns;
    written when Redis is back, and the spool is emptied."""
    from pipeline.session import CallServices, CallSession
    from presets.owners import OwnerStore
    from presets.pool import PresetStore

    rp = RedisProcess(tmp_path / "r", free_port())
    rp.start()
    redis = make_redis(rp.url, make_settings(rp.url, tmp_path))
    spool = RecordSpool(tmp_path / "spool")
    calls = CallStore(redis, 3600, retry=RetryOptions(first_delay_s=0.05, max_delay_s=0.2), spool=spool)
    try:
        owners = OwnerStore(redis)
        services = CallServices(redis=redis, owners=owners, presets=PresetStore(redis), calls=calls)
        owner, _ = await owners.create_owner("Alex", "en")
        session = await CallSession.open(services, owner_id=owner.owner_id, channel="twilio", line="+15550100")
        rp.stop()
        await session.turn("Hello, this is the courier.")
        assert spool.path.stat().st_size > 0  # on disk already
        rp.start()
        await _wait_saved(calls)
        assert spool.path.stat().st_size == 0
        record = await calls.get(session.call_id)
        assert record is not None and [t.caller_text for t in record.turns] == ["Hello, this is the courier."]
        await calls.close()
    finally:
        await redis.aclose()
        rp.stop()


def test_the_spool_is_bounded(tmp_path: Path) -> None:
    """Many saves of one record compact to its newest; distinct records past the bound
    are kept in memory only, counted and logged."""
    spool = RecordSpool(tmp_path, max_bytes=2000)
    args: list[object] = [["k1", "k2"], ["x" * 200, 1]]
    newest = {"c1": SpooledSave("c1", 1, args)}
    for rev in range(1, 40):  # one call's turns: compacted, never full
        newest["c1"] = SpooledSave("c1", rev, args)
        assert spool.append(newest["c1"], compact=lambda: list(newest.values()))
    assert spool.full == 0 and spool.path.stat().st_size <= 2000
    results = []
    for i in range(20):  # twenty calls at once: the bound holds
        newest[f"d{i}"] = SpooledSave(f"d{i}", 1, args)
        results.append(spool.append(newest[f"d{i}"], compact=lambda: list(newest.values())))
    assert not all(results) and spool.full >= results.count(False) > 0
    assert spool.path.stat().st_size <= 2000
    spool.close()
    other = RecordSpool(tmp_path)
    entries, files = other.recover()
    assert (entries[0].call_id, entries[0].revision) == ("c1", 39)  # in the order written
    assert files == [spool.path]
