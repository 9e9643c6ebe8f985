"""A durable spool for call-record saves that could not reach Redis.

:class:`pipeline.records.CallStore` keeps saves that failed in memory and retries them;
when the process then exits (SIGTERM drain while Redis is still down, a crash) those
saves would be lost. With a spool each queued save is also appended to a small file
under the data dir and fsync'd before :meth:`RecordSpool.append` returns:

- ``<data dir>/spool/records-<pid>-<random>.jsonl``, one JSON line per save
  (``{"call_id", "revision", "args"}``: the arguments of the store's save script), held
  under an exclusive ``flock`` while this process lives;
- at start-up :meth:`RecordSpool.recover` takes the files no live process holds (their
  ``flock`` is free), in the order they were written; the store queues them again (the
  newest revision of each record wins; the save script refuses anything older than what
  Redis has, so a record never goes backwards), appends them to its own spool, and the
  old files are deleted;
- when the store's queue is empty again the spool is truncated;
- the file is bounded (``RECORD_SPOOL_MAX_MB``): when full it is rewritten with only the
  newest save of each queued record; if it is still full, the save stays in memory only,
  ``callassist_errors_total{component="record_spool_full"}`` counts it and an error is
  logged.

A torn last line (the process died mid-write) is skipped on recovery.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from . import metrics

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SpooledSave:
    call_id: str
    revision: int
    args: list[Any]


def _line(entry: SpooledSave) -> bytes:
    doc = {"call_id": entry.call_id, "revision": entry.revision, "args": entry.args}
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _read(path: Path) -> list[SpooledSave]:
    entries: list[SpooledSave] = []
    with path.open("rb") as f:
        for raw in f:
            try:
                doc = json.loads(raw)
                entries.append(SpooledSave(str(doc["call_id"]), int(doc["revision"]), list(doc["args"])))
            except (ValueError, KeyError, TypeError):
                log.warning("skipped a torn or unreadable record spool line", extra={"spool": path.name})
    return entries


class RecordSpool:
    """This process's append-only spool file (see the module docstring)."""

    def __init__(self, folder: Path, *, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.full = 0  # saves that did not fit (kept in memory only)
        self.path = folder / f"records-{os.getpid()}-{secrets.token_hex(4)}.jsonl"
        self._file: IO[bytes] | None = None
        self._size = 0

    def _open(self) -> IO[bytes]:
        if self._file is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            f = self.path.open("ab")
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # ours while we live
            self._file, self._size = f, f.tell()
        return self._file

    def append(self, entry: SpooledSave, *, compact: Callable[[], list[SpooledSave]] | None = None) -> bool:
        """Append ``entry`` durably (fsync). Full: rewrite the file with ``compact()`` (the
        newest save of each queued record, ``entry`` included) as far as it fits; False
        if ``entry`` is not on disk then."""
        data = _line(entry)
        full = self._size + len(data) > self.max_bytes
        if full and compact is not None and (entry.call_id, entry.revision) in self._rewrite(compact()):
            return True
        if self._size + len(data) > self.max_bytes:
            self._full(entry)
            return False
        f = self._open()
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
        self._size += len(data)
        return True

    def _full(self, entry: SpooledSave) -> None:
        self.full += 1
        metrics.ERRORS.labels(component="record_spool_full").inc()
        log.error("record spool full: a queued save is kept in memory only", extra={"call_id": entry.call_id})

    def _rewrite(self, entries: list[SpooledSave]) -> set[tuple[str, int]]:
        """The file again with ``entries`` (oldest first, up to the bound); returns what it holds."""
        tmp = self.path.with_suffix(".tmp")
        f = tmp.open("wb")
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # locked before it takes the name
        written: set[tuple[str, int]] = set()
        size = 0
        for e in entries:
            data = _line(e)
            if size + len(data) > self.max_bytes:
                self._full(e)
                continue
            f.write(data)
            size += len(data)
            written.add((e.call_id, e.revision))
        f.flush()
        os.fsync(f.fileno())
        os.replace(tmp, self.path)  # atomic: the old file or the new one, never half
        if self._file is not None:
            self._file.close()
        self._file, self._size = f, size
        return written

    def clear(self) -> None:
        """Everything spooled is in Redis: start the file afresh."""
        if self._file is not None and self._size:
            self._file.truncate(0)
            os.fsync(self._file.fileno())
            self._size = 0

    def recover(self) -> tuple[list[SpooledSave], list[Path]]:
        """Saves left by processes that are gone, oldest file first, and those files
        (delete them with :meth:`forget` once the saves are spooled here)."""
        entries: list[SpooledSave] = []
        files: list[Path] = []
        if not self.folder.is_dir():
            return entries, files
        for path in sorted(self.folder.glob("records-*.jsonl"), key=lambda p: p.stat().st_mtime):
            if path == self.path:
                continue
            with path.open("rb") as probe:
                try:
                    fcntl.flock(probe.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live process's spool
                entries += _read(path)
                files.append(path)
        return entries, files

    @staticmethod
    def forget(files: list[Path]) -> None:
        for path in files:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def close(self) -> None:
        """Release the file (it stays on disk when it still holds saves)."""
        if self._file is not None:
            empty = self._size == 0
            self._file.close()
            self._file = None
            if empty:
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()
