"""What one call tells its owner, as events (see :mod:`pipeline.events`).

The session calls these methods at the points that matter; writes go out in order on a
short-lived background task, so a slow Redis never holds up the caller's reply. The task
exits when its queue is empty (a text call left idle keeps no task) and :meth:`flush`
waits for it (at hang-up).
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Any

from .events import EventLog, EventType
from .records import CallRecord
from .screening import should_alert

log = logging.getLogger(__name__)


class CallEvents:
    def __init__(self, events: EventLog, record: CallRecord) -> None:
        self._log = events
        self._record = record
        self._owner_id = record.owner_id
        self._call_id = record.call_id
        self._queue: collections.deque[tuple[EventType, dict[str, Any]]] = collections.deque()
        self._task: asyncio.Task[None] | None = None
        self._messages = len(record.owner_record.get("messages", [])) + len(record.owner_record.get("exceptions", []))
        self._urgent = record.owner_record.get("urgency") == "urgent"

    # ---------------------------------------------------------- the call ----

    def started(self, record: CallRecord) -> None:
        self._post(
            "call.started",
            {
                "channel": record.channel, "line": record.line, "lang": record.lang,
                "caller_number": record.caller_number, "screening": record.screening,
                "greeting": record.greeting,
            },
        )  # fmt: skip

    def caller_turn(self, turn: int, text: str | None) -> None:
        self._post("turn.caller", {"turn": turn, "text": text})

    def assistant_turn(self, record: CallRecord, turn: int, reply: str, *, act: str, preset: str | None) -> None:
        self._post("turn.assistant", {"turn": turn, "text": reply, "act": act, "preset_conveyed": preset})
        orec = record.owner_record
        left = [*orec.get("messages", []), *orec.get("exceptions", [])]
        if len(left) > self._messages:
            self._post(
                "message.left",
                {"turn": turn, "messages": left[self._messages :], "callback_number": orec.get("callback_number")},
            )
            self._messages = len(left)
        if orec.get("urgency") == "urgent" and not self._urgent:
            self._urgent = True
            self._post("call.urgent", {"turn": turn, "reason": orec.get("reason"), "messages": left})

    def owner_turn(self, text: str, *, via: str) -> None:
        self._post("turn.owner", {"text": text, "via": via})

    def ended(self, record: CallRecord) -> None:
        duration = None
        if record.ended_at is not None:
            duration = round((record.ended_at - record.started_at).total_seconds(), 3)
        self._post(
            "call.ended",
            {
                "end_reason": record.end_reason,
                "duration_s": duration,
                "summary": record.summary,
                "turns": len(record.turns),
            },
        )

    # ----------------------------------------------------------- writing ----

    def _post(self, type_: EventType, data: dict[str, Any]) -> None:
        data["alert"] = should_alert(self._record.screening, type_, self._record.owner_record)
        self._queue.append((type_, data))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain(), name=f"events:{self._call_id}")

    async def _drain(self) -> None:
        while self._queue:
            type_, data = self._queue.popleft()
            try:
                await self._log.emit(self._owner_id, type_, call_id=self._call_id, data=data)
            except Exception:
                log.exception("could not write an owner event", extra={"event_type": type_})

    async def flush(self, timeout_s: float = 2.0) -> None:
        """Wait until every posted event is written (or ``timeout_s``)."""
        task = self._task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout_s)
            except TimeoutError:
                log.warning("owner events still pending at hang-up", extra={"pending": len(self._queue)})
