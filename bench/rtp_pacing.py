"""``callassist bench rtp``: how evenly the SIP path's RTP sender paces its 20 ms packets
on this machine (loopback, the real :class:`pipeline.sip.media.RtpSession`).

The test suite asserts the behaviour (a continuous 8 kHz clock, never faster than real
time); the spacing depends on how loaded the machine is, so it is a figure printed here.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time

import numpy as np

from pipeline.sip.media import RtpSession
from pipeline.sip.sdp import AudioPlan


async def measure(seconds: float) -> dict[str, float]:
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    rx.setblocking(False)
    session = RtpSession("127.0.0.1")
    await session.open()
    arrivals: list[float] = []
    loop = asyncio.get_running_loop()
    try:
        session.start(AudioPlan("127.0.0.1", rx.getsockname()[1], "PCMU", 0, None), signaling_host="127.0.0.1")
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                async with asyncio.timeout(max(0.01, end - time.monotonic())):
                    await loop.sock_recv(rx, 2048)
            except TimeoutError:
                break
            arrivals.append(time.monotonic())
    finally:
        await session.close()
        rx.close()
    gaps_ms = np.diff(arrivals) * 1000
    return {
        "packets": len(arrivals),
        "gap_mean_ms": round(float(np.mean(gaps_ms)), 2),
        "gap_p50_ms": round(float(np.percentile(gaps_ms, 50)), 2),
        "gap_p95_ms": round(float(np.percentile(gaps_ms, 95)), 2),
        "gap_p99_ms": round(float(np.percentile(gaps_ms, 99)), 2),
        "gap_max_ms": round(float(np.max(gaps_ms)), 2),
        "late_ticks": session.stats.late_ticks,
    }


def run_rtp_bench(seconds: float) -> None:
    print(json.dumps(asyncio.run(measure(seconds)), indent=2))
