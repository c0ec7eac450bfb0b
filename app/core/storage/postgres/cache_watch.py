"""What tells a desk's cached reads (app/core/storage/read_cache.py) that another desk changed what they keep.

The caches keep what every «Emitir» reads and hardly ever changes (settings, companies, sandbox endpoints, the API
token, certificates and their defaults, secrets). Asking the server whether anything changed costs a round trip; this
engine used to ask for the server's snapshot, which changes at every commit of any desk (a voucher stored included),
so after each «Emitir» every cache was read again.

Instead, a commit that wrote one of CACHED_TABLES sends a note on CHANNEL inside its transaction (the server delivers
it only if the transaction commits, once it has), and each desk listens on a connection of its own (a background
loop, woken by the server, never polling): every note heard, and every (re)connection of the listener, bumps a
counter in memory. A cached read compares that counter, which costs nothing. A note arrives within moments of the
commit (milliseconds on a local network); while the listener is not connected (starting, the server away, a cut
connection) `version()` says None and the storage asks for the server's snapshot as before, so a change is never
missed: once the listener is back the counter moves and every cache is read again.

What writes the tables without this engine (an administrator's psql) is seen at the listener's next reconnection.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import psycopg

from app.core.platform.loops import BackgroundLoop, Due

log = logging.getLogger(__name__)

CHANNEL = "yupana_cache"
# The tables behind the ReadCaches (platform settings, companies, environments' sandbox endpoints, the API token,
# certificates' defaults) and the secrets the sends read (SOL credentials).
CACHED_TABLES = frozenset({"settings", "companies", "sandbox_endpoints", "api_token", "certificates",
                           "default_certificates", "secrets"})
NOTE = f"SELECT pg_notify('{CHANNEL}', '')"
WAKE_S = 1.0  # the longest the listener waits for the server before it looks at a stop or a suspicion
RETRY_FIRST_S, RETRY_MAX_S = 0.5, 10.0
# A cut the listener cannot see (a half-open connection after a network cut) is found by TCP keepalives in ~11 s;
# meanwhile a cut seen by any other connection of the desk makes it reconnect at once (`suspect`).
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 3}


class CacheWatch:
    """The counter of other desks' changes to the cached tables, kept by a listener loop (see the module's doc)."""

    def __init__(self, url: str, connect: Callable[..., psycopg.Connection]) -> None:
        self.url = url
        self._connect: Callable[..., Any] = connect  # database.connect (with libpq's options)
        self._version = 0
        self._lock = threading.Lock()
        self._conn: psycopg.Connection | None = None
        self._up = False  # listening: the counter is to be trusted
        self._suspect = False
        self._closed = False
        self._delay = RETRY_FIRST_S
        self._loop = BackgroundLoop("desk-cache-watch", self._round, what="shared cache watch", logger=log)
        self.heard = 0  # notes heard (tests)

    def version(self) -> int | None:
        """The counter while the listener is up; None while it is not (it is started on the first ask)."""
        if self._up:
            return self._version
        if not self._closed:
            self._loop.start()
        return None

    def suspect(self) -> None:
        """A connection of this desk was found cut: the listener's may be too (its notes lost): not trusted until it
        has connected again."""
        self._up = False
        self._suspect = True
        self._loop.wake()

    def _bump(self) -> None:
        with self._lock:
            self._version += 1

    def _round(self) -> Due:
        try:
            if self._conn is None or self._suspect:
                self._suspect = False
                self._drop()
                self._conn = self._connect(self.url, **KEEPALIVES)
                self._conn.execute(f"LISTEN {CHANNEL}")
                self._bump()  # whatever was missed while not listening: every cache is read again
                self._up = not self._suspect
                self._delay = RETRY_FIRST_S
            for _note in self._conn.notifies(timeout=WAKE_S):
                self._bump()
                self.heard += 1
                if self._loop.stopping or self._suspect:
                    break
            return 0.0
        except psycopg.Error as exc:
            if self._up:
                log.warning("shared cache watch lost: %s", str(exc).strip())
            self._up = False
            self._drop()
            delay, self._delay = self._delay, min(self._delay * 2, RETRY_MAX_S)
            return delay

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:
                pass

    @property
    def listening(self) -> bool:
        return self._up

    def close(self) -> None:
        self._closed = True
        self._up = False
        self._loop.stop(WAKE_S + 1)
        self._drop()
