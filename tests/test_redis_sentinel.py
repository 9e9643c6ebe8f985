"""Redis Sentinel on loopback: one master, two replicas, three sentinels (real
redis-server processes). Kill the master mid-call: the call goes on, writes resume after
the failover, and no acknowledged preset write is lost."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import redis

from app.embedded_redis import find_redis_server
from app.main import create_app
from app.redis_url import connect, parse_sentinel_url
from presets.owners import OwnerStore

from .conftest import make_settings
from .helpers import _wait_port, free_port, serve

MASTER = "mymaster"


def test_sentinel_urls_parse_and_bad_ones_say_why() -> None:
    s = parse_sentinel_url("redis+sentinel://:pw@10.0.0.1:26379,[::1]:26380,s3/cache/2")
    assert s.hosts == (("10.0.0.1", 26379), ("::1", 26380), ("s3", 26379))
    assert (s.master, s.db, s.password, s.ssl) == ("cache", 2, "pw", False)
    assert parse_sentinel_url("rediss+sentinel://h:1/m").ssl
    for url, why in [
        ("redis+sentinel://h:1", "master's name"),
        ("redis+sentinel:///m", "at least one host"),
        ("redis+sentinel://h:x/m", "bad port"),
        ("redis+sentinel://h:1/m/zero", "not a number"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_sentinel_url(url)


def _replicas_online(info: dict[str, object], n: int) -> bool:
    """At least ``n`` replicas online (initial sync done) and counted as good for writes."""
    online = sum(
        1 for k, v in info.items() if k.startswith("slave") and isinstance(v, dict) and v.get("state") == "online"
    )
    good = info.get("min_slaves_good_slaves", n)
    return online >= n and int(str(good)) >= 1


@dataclass
class SentinelCluster:
    folder: Path
    ports: dict[str, int] = field(default_factory=dict)
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{self.ports[f's{i}']}" for i in range(3))
        return f"redis+sentinel://{hosts}/{MASTER}/0"

    def _node(self, name: str, *extra: str) -> None:
        port = self.ports[name] = free_port()
        folder = self.folder / name
        folder.mkdir(parents=True)
        # Durability choice (docs/scaling.md): AOF fsync every second, and a master takes
        # writes only while a replica is connected and at most 5 s behind; the app's WAIT
        # makes an acknowledged preset write exist on a replica before the 200.
        self.procs[name] = subprocess.Popen(
            [
                find_redis_server(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder),
                "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
                "--min-replicas-to-write", "1", "--min-replicas-max-lag", "5",
                "--replica-announce-ip", "127.0.0.1", *extra,
            ],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        _wait_port(port)

    def start(self) -> None:
        self._node("m")
        for name in ("r1", "r2"):
            self._node(name, "--replicaof", "127.0.0.1", str(self.ports["m"]))
        for i in range(3):
            name = f"s{i}"
            port = self.ports[name] = free_port()
            conf = self.folder / f"{name}.conf"
            conf.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {self.folder}\n"
                f"sentinel monitor {MASTER} 127.0.0.1 {self.ports['m']} 2\n"
                f"sentinel down-after-milliseconds {MASTER} 1000\n"
                f"sentinel failover-timeout {MASTER} 4000\n"
                f"sentinel parallel-syncs {MASTER} 2\n"
            )
            self.procs[name] = subprocess.Popen(
                [find_redis_server(), str(conf), "--sentinel"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            _wait_port(port)
        # Both replicas in sync before the test starts: connected is not enough, a replica
        # still loading its first sync does not count for min-replicas-to-write (NOREPLICAS).
        deadline = time.monotonic() + 30
        m = redis.Redis(port=self.ports["m"], decode_responses=True)
        while not _replicas_online(m.info("replication"), 2):
            assert time.monotonic() < deadline, "replicas did not come online"
            time.sleep(0.1)
        m.close()

    def kill(self, name: str) -> None:
        proc = self.procs.pop(name)
        proc.send_signal(signal.SIGKILL)
        proc.wait(5)

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.terminate()
        for proc in self.procs.values():
            proc.wait(10)
        self.procs.clear()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[SentinelCluster]:
    c = SentinelCluster(tmp_path / "sentinel")
    try:
        c.start()
        yield c
    finally:
        c.stop()


async def _owner(url: str) -> str:
    r = connect(url, decode_responses=True, socket_timeout=1.0, socket_connect_timeout=0.5)
    try:
        _, key = await OwnerStore(r).create_owner("Alex Chen", "en")
    finally:
        await r.aclose()
    return key


async def test_master_killed_mid_call_writes_resume_and_nothing_acknowledged_is_lost(
    cluster: SentinelCluster, tmp_path: Path
) -> None:
    settings = make_settings(cluster.url, tmp_path / "app", redis_wait_replicas=1, redis_wait_timeout_ms=500)
    key = await _owner(cluster.url)
    with serve(create_app(settings)) as server:
        async with httpx.AsyncClient(
            base_url=server.base_url, timeout=5, headers={"Authorization": f"Bearer {key}"}
        ) as api:
            r = await api.post("/v1/calls/text", json={"lang": "en"})
            assert r.status_code == 201, r.text
            call_id = r.json()["call_id"]
            r = await api.post(f"/v1/calls/{call_id}/turns", json={"text": "Hi, this is Sam from the pharmacy."})
            assert r.status_code == 200, r.text

            acked: list[tuple[int, str]] = []  # (pool version, response) of every 200
            statuses: list[int] = []

            async def write(i: int) -> None:
                text = f"Leave it at the door, note {i}."
                resp = await api.put("/v1/presets/regular/takeout", json={"response": text})
                statuses.append(resp.status_code)
                assert resp.status_code in (200, 503), resp.text  # never a 500, never a lost 200
                if resp.status_code == 200:
                    acked.append((int(resp.headers["ETag"].strip('"')), text))

            for i in range(10):
                await write(i)
            assert len(acked) == 10
            cluster.kill("m")
            killed = time.monotonic()
            resumed = None
            i = 10
            while time.monotonic() - killed < 30 and (resumed is None or i < 40):
                before = len(acked)
                await write(i)
                if len(acked) > before and resumed is None:
                    resumed = time.monotonic() - killed
                i += 1
                await asyncio.sleep(0.05)
            assert resumed is not None, f"writes never resumed after the failover: {statuses[-10:]}"
            print(f"\nsentinel failover: writes resumed {resumed:.2f} s after SIGKILL of the master "
                  f"({statuses.count(503)} writes answered 503 meanwhile)")  # fmt: skip

            # The live call continues on the new master.
            deadline = time.monotonic() + 10
            while True:
                r = await api.post(f"/v1/calls/{call_id}/turns", json={"text": "Can you tell him the refill is ready?"})
                if r.status_code == 200 or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.2)
            assert r.status_code == 200, r.text
            record = (await api.get(f"/v1/calls/{call_id}")).json()
            assert [t["caller_text"] for t in record["turns"]][:1] == ["Hi, this is Sam from the pharmacy."]
            assert len(record["turns"]) == 2

            # Nothing acknowledged is lost: versions only grew, and the pool holds the last
            # acknowledged write (or a later one that landed without its acknowledgement).
            versions = [v for v, _ in acked]
            assert versions == sorted(versions) and len(set(versions)) == len(versions)
            pool = (await api.get("/v1/presets")).json()
            assert pool["version"] >= versions[-1]
            if pool["version"] == versions[-1]:
                assert pool["regular"]["takeout"]["response"] == acked[-1][1]
