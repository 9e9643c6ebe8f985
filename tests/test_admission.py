"""Slots and post-call work (pipeline/admission.py), and the SIGTERM drain waiting for both
(app/drain.py): a slot is released once whoever gets there first, post-call work is
counted, bounded in time and awaited, and the drain does not exit while a call's final
save is still running."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest
import uvicorn

from app.drain import DrainingServer
from pipeline import metrics
from pipeline.admission import CallSlots


def test_a_slot_is_released_once() -> None:
    slots = CallSlots(limit=1)
    slot = slots.take("twilio")
    assert slot is not None and slots.full and slots.take("sip") is None
    slot.release()
    slot.release()  # the call freed it at hang-up; the transport's finally changes nothing
    assert slots.in_use == 0
    other = slots.take("sip")
    assert other is not None and slots.in_use == 1


async def test_post_call_work_is_counted_and_awaited() -> None:
    slots = CallSlots(limit=2)
    gate = asyncio.Event()
    done: list[str] = []

    async def work() -> None:
        await gate.wait()
        done.append("saved")

    slots.after(work(), call_id="call_a")
    assert slots.finishing == 1 and slots.busy == 1 and slots.in_use == 0
    assert not await slots.wait_finished(0.05)
    gate.set()
    assert await slots.wait_finished(5)
    assert done == ["saved"] and slots.finishing == 0 and slots.busy == 0


async def test_post_call_work_is_bounded_and_failures_are_counted() -> None:
    slots = CallSlots(post_call_timeout_s=0.1)
    errors = metrics.ERRORS.labels(component="post_call")
    before = errors._value.get()

    async def hangs() -> None:
        await asyncio.sleep(3600)

    async def fails() -> None:
        raise RuntimeError("summary failed")

    slots.after(hangs(), call_id="call_hangs")
    slots.after(fails(), call_id="call_fails")
    assert await slots.wait_finished(5)  # the hanging one was stopped at its bound
    assert slots.finishing == 0 and errors._value.get() == before + 2


def _drainer(slots: CallSlots) -> DrainingServer:
    resources = SimpleNamespace(voice=SimpleNamespace(slots=slots), draining=False)
    app = SimpleNamespace(state=SimpleNamespace(resources=resources))
    server = DrainingServer(uvicorn.Config(app=lambda *a: None), app=app, max_drain_s=10, poll_s=0.01)
    server.drain_started = time.monotonic()
    return server


async def test_the_drain_waits_for_post_call_work_not_only_for_calls() -> None:
    slots = CallSlots(limit=2)
    gate = asyncio.Event()
    saved: list[float] = []

    async def final_save() -> None:
        await gate.wait()
        saved.append(time.monotonic())

    slots.after(final_save(), call_id="call_a")  # media over (slot free), record not yet saved
    server = _drainer(slots)
    drain = asyncio.get_running_loop().create_task(server._drain_then_exit())
    await asyncio.sleep(0.2)
    assert slots.draining and slots.full  # no new calls ...
    assert not server.should_exit and not drain.done()  # ... and no exit before the save
    gate.set()
    async with asyncio.timeout(5):
        await drain
    assert server.should_exit and saved


@pytest.mark.parametrize("in_use", [0, 1])
async def test_the_drain_exits_at_once_when_nothing_is_left(in_use: int) -> None:
    slots = CallSlots(limit=2)
    slot = slots.take("twilio") if in_use else None
    server = _drainer(slots)
    drain = asyncio.get_running_loop().create_task(server._drain_then_exit())
    await asyncio.sleep(0.1)
    assert drain.done() != bool(in_use)
    if slot is not None:
        slot.release()
    async with asyncio.timeout(5):
        await drain
    assert server.should_exit
