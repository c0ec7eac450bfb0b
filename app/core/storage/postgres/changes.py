"""The desks' change feed over PostgreSQL's LISTEN/NOTIFY (ports.database.ChangeFeed, issue 34 item 6).

Two background loops (app.core.platform.loops), each with a connection of its own: the listener blocks in psycopg's
`notifies()` on one channel (woken by the server, never polling the tables); the sender drains the notes queued by
`publish` with `pg_notify`, so a note never waits for, or joins, a transaction of the desk's, and an emitter never
waits for a server that is away. A lost connection is made again with a backoff; once the listener is back, `on_back`
lets the desk read again what it may have missed.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable

import psycopg

from app.core.platform.loops import UNTIL_WOKEN, BackgroundLoop, Due
from app.core.storage.postgres.database import connect

log = logging.getLogger(__name__)

CHANNEL = "yupana_changes"
MAX_NOTE = 7900  # PostgreSQL's payload limit is 8000 bytes
WAKE_S = 1.0  # the longest the listener waits for the server before it looks at a stop
RETRY_FIRST_S, RETRY_MAX_S = 0.5, 10.0
FLUSH_S = 2.0  # at close, how long the notes still queued may take to go out
OUTGOING_MAX = 10_000  # notes waiting to go out while the server is away; past it the newest are dropped (logged)


def _closed_quietly(conn: psycopg.Connection | None) -> None:
    if conn is not None:
        try:
            conn.close()
        except psycopg.Error:
            pass


class _Backoff:
    def __init__(self) -> None:
        self.delay = RETRY_FIRST_S

    def next(self) -> float:
        delay, self.delay = self.delay, min(self.delay * 2, RETRY_MAX_S)
        return delay

    def reset(self) -> None:
        self.delay = RETRY_FIRST_S


class PostgresChangeFeed:
    def __init__(self, url: str) -> None:
        self.url = url
        self._outgoing: deque[str] = deque()
        self._outgoing_lock = threading.Lock()
        self._publisher: psycopg.Connection | None = None
        self._send_backoff = _Backoff()
        self._sender = BackgroundLoop("desk-changes-out", self._send_round, what="desk change sender", logger=log)
        self._listener_conn: psycopg.Connection | None = None
        self._listen_backoff = _Backoff()
        self._lost = False
        self._on_note: Callable[[str], None] | None = None
        self._on_back: Callable[[], None] | None = None
        self._listener = BackgroundLoop("desk-changes", self._listen_round, what="desk change listener", logger=log)
        self.listening = threading.Event()  # set while the LISTEN connection is up

    # ------------------------------------------------------------ telling

    def publish(self, note: str) -> None:
        """Queued for the sender loop: the caller (an engine emitting an event, maybe on the GUI's thread) never
        waits for the server, even one that is away."""
        if len(note.encode()) > MAX_NOTE:
            log.warning("change note of %s bytes not sent (over %s)", len(note.encode()), MAX_NOTE)
            return
        with self._outgoing_lock:
            if len(self._outgoing) >= OUTGOING_MAX:
                log.warning("change note dropped: %s notes wait for the server", OUTGOING_MAX)
                return
            self._outgoing.append(note)
        self._sender.wake()

    def _send_round(self) -> Due:
        """Every queued note sent in order, those queued together in one statement (one round trip; the server
        delivers them in the order given, at its commit); a failure keeps them first in the queue and waits
        (backoff)."""
        while True:
            with self._outgoing_lock:
                if not self._outgoing:
                    break
                notes = list(self._outgoing)
            try:
                if self._publisher is None or self._publisher.closed:
                    self._publisher = connect(self.url)
                self._publisher.execute("SELECT pg_notify(%s, note) FROM unnest(%s::text[]) AS note", (CHANNEL, notes))
            except psycopg.Error as exc:  # sent again once the server answers
                log.warning("change note not sent yet: %s", str(exc).strip())
                _closed_quietly(self._publisher)
                self._publisher = None
                return self._send_backoff.next()
            self._send_backoff.reset()
            with self._outgoing_lock:
                for _ in notes:  # only these: others may have been queued meanwhile
                    self._outgoing.popleft()
        return UNTIL_WOKEN  # the next publish wakes it

    # ------------------------------------------------------------ hearing

    def listen(self, on_note: Callable[[str], None], on_back: Callable[[], None]) -> None:
        self._on_note, self._on_back = on_note, on_back
        self._listener.start()

    def _listen_round(self) -> Due:
        """One wait for the server's notes (WAKE_S at most), the connection made first when it is not up."""
        try:
            if self._listener_conn is None:
                self._listener_conn = connect(self.url)
                self._listener_conn.execute(f"LISTEN {CHANNEL}")
                self.listening.set()
                self._listen_backoff.reset()
                if self._lost and self._on_back is not None:
                    self._lost = False
                    self._on_back()
            for notify in self._listener_conn.notifies(timeout=WAKE_S):
                self._heard(notify.payload)
                if self._listener.stopping:
                    break
            return 0.0
        except psycopg.Error as exc:
            if not self._lost:
                log.warning("desk change feed lost: %s", str(exc).strip())
            self._lost = True
            self.listening.clear()
            _closed_quietly(self._listener_conn)
            self._listener_conn = None
            return self._listen_backoff.next()

    def _heard(self, note: str) -> None:
        if self._on_note is None:
            return
        try:
            self._on_note(note)
        except Exception:  # a broken note must not end the feed
            log.exception("change note failed: %.200s", note)

    def close(self) -> None:
        """What was told before goes out first (FLUSH_S at most: a server away does not hold the closing desk)."""
        self._sender.finish(FLUSH_S)
        self._sender.stop(FLUSH_S)
        self._listener.stop(WAKE_S + 1)
        _closed_quietly(self._publisher)
        _closed_quietly(self._listener_conn)
        self.listening.clear()
