"""The desks' change feed over PostgreSQL's LISTEN/NOTIFY (ports.database.ChangeFeed, issue 34 item 6).

One connection of its own listens on one channel, on a named daemon thread that blocks in psycopg's `notifies()`
(woken by the server, never polling the tables); notes go out through another connection of its own with
`pg_notify`, so a note never waits for, or joins, a transaction of the desk's. A server that goes away is tried again
with a backoff; once back, `on_back` lets the desk read again what it may have missed.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

import psycopg

from app.core.storage.postgres.database import connect

log = logging.getLogger(__name__)

CHANNEL = "yupana_changes"
MAX_NOTE = 7900  # PostgreSQL's payload limit is 8000 bytes
WAKE_S = 1.0  # how often the listening thread looks at `close()` while the server says nothing
RETRY_FIRST_S, RETRY_MAX_S = 0.5, 10.0
FLUSH_S = 2.0
OUTGOING_MAX = 10_000  # notes waiting to go out while the server is away; past it the newest are dropped (logged)


class PostgresChangeFeed:
    def __init__(self, url: str) -> None:
        self.url = url
        self._closed = threading.Event()
        self._outgoing: queue.Queue[str | None] = queue.Queue(OUTGOING_MAX)
        self._sender: threading.Thread | None = None
        self._sender_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.listening = threading.Event()  # set while the LISTEN connection is up (tests wait on it)

    # ------------------------------------------------------------ telling

    def publish(self, note: str) -> None:
        """Queued for the sender thread: the caller (an engine emitting an event, maybe the GUI's) never waits for
        the server, even one that is away."""
        if len(note.encode()) > MAX_NOTE:
            log.warning("change note of %s bytes not sent (over %s)", len(note.encode()), MAX_NOTE)
            return
        if self._closed.is_set():
            return
        self._start_sender()
        try:
            self._outgoing.put_nowait(note)
        except queue.Full:
            log.warning("change note dropped: %s notes wait for the server", OUTGOING_MAX)

    def _start_sender(self) -> None:
        with self._sender_lock:
            if self._sender is None:
                self._sender = threading.Thread(target=self._send_all, name="desk-changes-out", daemon=True)
                self._sender.start()

    def _send_all(self) -> None:
        publisher: psycopg.Connection | None = None
        delay = RETRY_FIRST_S
        note = self._outgoing.get()
        while note is not None:
            try:
                if publisher is None or publisher.closed:
                    publisher = connect(self.url)
                publisher.execute("SELECT pg_notify(%s, %s)", (CHANNEL, note))
                delay = RETRY_FIRST_S
                note = self._outgoing.get()
            except psycopg.Error as exc:  # kept and sent again once the server answers
                log.warning("change note not sent yet: %s", str(exc).strip())
                _closed_quietly(publisher)
                publisher = None
                if self._closed.wait(delay):
                    break
                delay = min(delay * 2, RETRY_MAX_S)
        _closed_quietly(publisher)

    # ------------------------------------------------------------ hearing

    def listen(self, on_note: Callable[[str], None], on_back: Callable[[], None]) -> None:
        if self._thread is not None:
            raise RuntimeError("the change feed listens already")
        self._thread = threading.Thread(target=self._run, args=(on_note, on_back), name="desk-changes", daemon=True)
        self._thread.start()

    def _run(self, on_note: Callable[[str], None], on_back: Callable[[], None]) -> None:
        delay, lost = RETRY_FIRST_S, False
        while not self._closed.is_set():
            try:
                with connect(self.url) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.listening.set()
                    if lost:
                        on_back()
                    delay, lost = RETRY_FIRST_S, False
                    self._hear(conn, on_note)
            except psycopg.Error as exc:
                self.listening.clear()
                if not lost:
                    log.warning("desk change feed lost: %s", str(exc).strip())
                lost = True
                if self._closed.wait(delay):
                    return
                delay = min(delay * 2, RETRY_MAX_S)
        self.listening.clear()

    def _hear(self, conn: psycopg.Connection, on_note: Callable[[str], None]) -> None:
        while not self._closed.is_set():
            for notify in conn.notifies(timeout=WAKE_S):
                try:
                    on_note(notify.payload)
                except Exception:  # a broken note must not end the feed
                    log.exception("change note failed: %.200s", notify.payload)

    def close(self) -> None:
        """What was told before goes out first (FLUSH_S at most: a server away does not hold the closing desk)."""
        try:
            self._outgoing.put_nowait(None)  # the sender's last note
        except queue.Full:
            pass
        if self._sender is not None:
            self._sender.join(FLUSH_S)
        self._closed.set()
        if self._thread is not None:
            self._thread.join(WAKE_S + 1)


def _closed_quietly(conn: psycopg.Connection | None) -> None:
    if conn is not None:
        try:
            conn.close()
        except psycopg.Error:
            pass
