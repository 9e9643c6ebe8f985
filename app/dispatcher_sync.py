"""Keep Kamailio's dispatcher list equal to the set of ready CallAssist instances.

In Kubernetes the chart runs this next to Kamailio (``callassist sip dispatcher-sync``):
it resolves the headless SIP Service (whose DNS name answers with the addresses of the
*ready* pods only, so a full or draining pod drops out), writes ``dispatcher.list``
atomically when the set changes, and asks Kamailio to reload it over JSON-RPC
(``dispatcher.reload``; kamailio.cfg's ``WITH_RPC_HTTP``). Kamailio's own OPTIONS
probing still marks an instance that answers 503 (full) as inactive between two syncs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

log = logging.getLogger(__name__)

Resolver = Callable[[str], list[str]]


def resolve_all(name: str) -> list[str]:
    """Every IPv4/IPv6 address ``name`` resolves to (a headless Service: one per ready pod)."""
    try:
        infos = socket.getaddrinfo(name, None, type=socket.SOCK_DGRAM)
    except socket.gaierror:
        return []  # no ready pod (NXDOMAIN): an empty set, not an error
    return sorted({str(info[4][0]) for info in infos})


def render_list(addresses: list[str], *, port: int, setid: int = 1) -> str:
    """dispatcher.list text for ``addresses`` (IPv6 in brackets), stable order."""
    lines = ["# Written by callassist sip dispatcher-sync: the ready CallAssist instances."]
    for addr in sorted(set(addresses)):
        host = f"[{addr}]" if ":" in addr else addr
        lines.append(f"{setid} sip:{host}:{port}")
    return "\n".join(lines) + "\n"


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".dispatcher.")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


@dataclass(frozen=True, kw_only=True)
class SyncOptions:
    name: str  # DNS name of the instances (the headless SIP Service)
    port: int = 5060
    list_path: Path
    rpc_url: str = "http://127.0.0.1:5071/RPC"
    interval_s: float = 5.0
    timeout_s: float = 2.0


class DispatcherSync:
    """One sync step at a time; :meth:`run` repeats it every ``interval_s``."""

    def __init__(self, options: SyncOptions, *, resolver: Resolver = resolve_all) -> None:
        self.options = options
        self._resolve = resolver
        self._written: str | None = None
        self.reloads = 0

    async def step(self, client: httpx.AsyncClient) -> bool:
        """Resolve, and rewrite + reload when the set changed. True when it reloaded."""
        addresses = await asyncio.to_thread(self._resolve, self.options.name)
        text = render_list(addresses, port=self.options.port)
        if text == self._written:
            return False
        await asyncio.to_thread(write_atomic, self.options.list_path, text)
        body = {"jsonrpc": "2.0", "method": "dispatcher.reload", "id": self.reloads + 1}
        resp = await client.post(self.options.rpc_url, json=body, timeout=self.options.timeout_s)
        resp.raise_for_status()
        answer = resp.json()
        if "error" in answer:
            raise RuntimeError(f"dispatcher.reload failed: {answer['error']}")
        self._written = text
        self.reloads += 1
        log.info("dispatcher list reloaded", extra={"instances": len(addresses)})
        return True

    async def run(self, *, stop: asyncio.Event | None = None) -> None:
        stop = stop or asyncio.Event()
        async with httpx.AsyncClient() as client:
            while not stop.is_set():
                try:
                    await self.step(client)
                except Exception as exc:  # Kamailio restarting, DNS hiccup: try again next round
                    log.warning("dispatcher sync failed; retrying", extra={"error": repr(exc)})
                    self._written = None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.options.interval_s)
