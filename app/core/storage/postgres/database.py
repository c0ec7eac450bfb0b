"""PostgreSQL storage: one shared database for the desks of a business (issue 34), behind the same ports as SQLite.

The repositories speak the common dialect (app/core/storage/sql.py: `?` placeholders), most of their SQL written once
in the SQLite modules; this engine's connections translate it (`dialect.translate`) and run it with psycopg 3.

Concurrency discipline (as the SQLite engine's, docs/architecture.md):
- every thread gets its own connection (`conn()`), in autocommit: a read outside a write block is one statement;
- every write goes through `with storage.write() as conn:`: one READ COMMITTED transaction, under the process's
  writer lock (the desk's threads write one at a time, as they do on SQLite; other desks' transactions meet them in
  the server's row locks and unique indexes);
- durability: every connection runs `synchronous_commit = on` (a server configured otherwise is overruled), so a
  commit is on the server's disk before it returns: `durable=True` asks for nothing more here;
- leases and «now» are the server's clock (`clock_timestamp()`), the one every desk shares.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

from app.core.storage.ports.database import database_unavailable
from app.core.storage.postgres.cache_watch import CACHED_TABLES, CacheWatch
from app.core.storage.postgres.cache_watch import NOTE as CACHE_NOTE
from app.core.storage.postgres.dialect import translate
from app.core.storage.sqlite.database import RequestGroup

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 10
APPLICATION_NAME = "yupana"
# A desk using the database says so now and then (`yupana db estado` lists the desks seen recently): at most once a
# minute, after a commit of its own (an idle desk stops being seen).
HEARTBEAT_S = 60.0
SEE_DESK = ("INSERT INTO desks (host, app_version, first_seen, last_seen) VALUES (?, ?, "
            "extract(epoch from clock_timestamp()), extract(epoch from clock_timestamp())) "
            "ON CONFLICT (host) DO UPDATE SET app_version = excluded.app_version, last_seen = excluded.last_seen")


def connect(url: str, **options: Any) -> psycopg.Connection:
    """A connection to the database at `url` in autocommit, with the engine's session settings (and libpq's
    `options`). Client-side binding (`ClientCursor`): values are sent inside the statement, as SQLite's untyped
    parameters behave (a `? IS NULL` needs no declared type)."""
    conn = psycopg.connect(url, autocommit=True, cursor_factory=psycopg.ClientCursor,
                           connect_timeout=CONNECT_TIMEOUT_S, application_name=APPLICATION_NAME, **options)
    conn.execute("SET synchronous_commit = on")
    conn.execute("SET TimeZone = 'UTC'")
    return conn


class Cursor:
    """A statement's result as the repositories read it (sqlite3's cursor): rows as tuples, `rowcount`, and
    `lastrowid` for an INSERT into a table with a generated key (the translation added `RETURNING` for it)."""

    def __init__(self, cursor: psycopg.Cursor, returns_key: bool) -> None:
        self._cursor = cursor
        self.lastrowid: int | None = None
        if returns_key:
            row = cursor.fetchone()
            self.lastrowid = None if row is None else int(row[0])

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def description(self) -> Any:
        return self._cursor.description

    def fetchone(self) -> tuple | None:
        return self._cursor.fetchone()

    def fetchall(self) -> list[tuple]:
        return self._cursor.fetchall()

    def __iter__(self) -> Iterator[tuple]:
        return iter(self._cursor.fetchall())


def _reason(exc: psycopg.Error) -> str:
    """psycopg's first line (the server's or the socket's own words)."""
    return (str(exc).strip().splitlines() or ["sin respuesta"])[0]


class Connection:
    """One thread's connection, speaking the common dialect. A connection the server or the network cut is said in
    Spanish (ports.database.database_unavailable), never as the driver's exception; the next use makes a new one."""

    def __init__(self, raw: psycopg.Connection) -> None:
        self.raw = raw
        self.touched_cached = False  # the open transaction wrote a cached table (cache_watch): noted at its commit
        # A transaction begun and not yet told to the server: its BEGIN goes with its first statement (one round trip
        # less per transaction), or alone before anything that uses `raw` (`started`)
        self.pending_begin = False

    @property
    def lost(self) -> bool:
        return self.raw.broken or self.raw.closed

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        statement = translate(sql)
        try:
            cursor = self.raw.cursor()
            if self.pending_begin:  # BEGIN and the statement in one round trip: the cursor on the statement's result
                self.pending_begin = False
                cursor.execute(f"BEGIN; {statement.text}", tuple(params))
                cursor.nextset()
            else:
                cursor.execute(statement.text, tuple(params))
            self._wrote(statement.written)
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            raise self._cut(exc) from None
        return Cursor(cursor, statement.returns_key)

    def executemany(self, sql: str, rows: Any) -> None:
        rows = [tuple(row) for row in rows]
        if rows:
            statement = translate(sql)
            try:
                self.started().cursor().executemany(statement.text, rows)
                self._wrote(statement.written)
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                raise self._cut(exc) from None

    def _wrote(self, table: str | None) -> None:
        """A write to a cached table told the other desks (cache_watch): at the transaction's commit, or now when the
        statement was its own (autocommitted) transaction."""
        if table not in CACHED_TABLES:
            return
        if self.raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            self.raw.execute(CACHE_NOTE)
        else:
            self.touched_cached = True

    def begin(self) -> None:
        """BEGIN, sent with the transaction's first statement."""
        self.pending_begin = True

    def started(self) -> psycopg.Connection:
        """The driver's connection, inside the transaction begun (its BEGIN sent now if it waits): for what goes to
        psycopg directly (COPY, savepoints, executemany)."""
        if self.pending_begin:
            self.pending_begin = False
            self.command("BEGIN")
        return self.raw

    def commit(self) -> None:
        """COMMIT, the cached tables' note sent first inside the transaction when it wrote one (delivered only if it
        commits); nothing at all for a transaction that ran no statement."""
        if self.pending_begin:
            self.pending_begin = False
            return
        if self.touched_cached:
            self.touched_cached = False
            self.command(f"{CACHE_NOTE}; COMMIT", committing=True)
            return
        self.command("COMMIT", committing=True)

    def rolled_back(self) -> None:
        self.touched_cached = False
        self.pending_begin = False

    def command(self, text: str, *, committing: bool = False) -> None:
        """BEGIN, COMMIT: the transaction's own statements, as they are."""
        try:
            self.raw.execute(text)
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            raise self._cut(exc, committing=committing) from None

    def _cut(self, exc: psycopg.Error, committing: bool = False) -> Exception:
        """The Spanish error when the connection is gone; any other failure (a lock time-out, a serialization
        failure: the server's own refusal on a live connection) stays psycopg's for the repository to translate."""
        if not self.lost:
            return exc
        return database_unavailable(_reason(exc), committing=committing)

    def close(self) -> None:
        self.raw.close()


class _Held:
    """A thread's connection in the Storage's thread-local: closed when the thread ends (its locals are dropped)."""

    __slots__ = ("storage", "conn", "depth", "durable")

    def __init__(self, storage: PostgresStorage, conn: Connection) -> None:
        self.storage, self.conn, self.depth, self.durable = storage, conn, 0, False

    def __del__(self) -> None:
        try:
            self.storage._release(self.conn)
        except Exception:  # noqa: BLE001 - at interpreter exit anything may be half gone
            pass


_EPOCHS = itertools.count(1)  # ids of steady_reads blocks


class PostgresStorage:
    """The shared database, used by every thread of this desk (ports.database.Database)."""

    engine = "postgres"

    def __init__(self, url: str, path: Path | None = None) -> None:
        self.url = url
        # The data folder's database file a SQLite desk would use: what the port's `path` names (the folder's
        # diagnostics); nothing is stored there on this engine.
        self.path = Path(path) if path is not None else Path()
        self._local = threading.local()
        self._steady = threading.local()
        self._write_lock = threading.RLock()
        self._connections: list[Connection] = []
        self._connections_lock = threading.Lock()
        self._closed = False
        self.syncs = 0  # commits asked to be durable so far (the port's count; every commit here is)
        self.desk: tuple[str, str] | None = None  # (host, app version) of the desk it beats for, if any
        self._next_beat = 0.0
        self.cache_watch = CacheWatch(url, connect)  # other desks' changes to the cached tables (data_version)

    # ------------------------------------------------------------ connections

    def _held(self) -> _Held:
        if self._closed:
            raise RuntimeError("storage is closed")
        held = getattr(self._local, "held", None)
        if held is not None and held.depth == 0 and held.conn.lost:  # cut since its last use: made anew
            self._release(held.conn)
            held = self._local.held = None
            self.cache_watch.suspect()  # its notes may have been lost with it
        if held is None:
            try:
                conn = Connection(connect(self.url))
            except psycopg.OperationalError as exc:
                raise database_unavailable(_reason(exc)) from None
            with self._connections_lock:
                self._connections.append(conn)
            held = self._local.held = _Held(self, conn)
        return held

    def conn(self) -> Connection:
        """This thread's connection (autocommit outside `write()`)."""
        return self._held().conn

    def _release(self, conn: Connection) -> None:
        with self._connections_lock:
            if conn not in self._connections:
                return  # close() got there first
            self._connections.remove(conn)
        try:
            conn.close()
        except psycopg.Error:
            log.warning("closing a finished thread's connection failed", exc_info=True)

    # ------------------------------------------------------------ the unit of work

    @contextmanager
    def write(self, durable: bool = False) -> Iterator[Connection]:
        """One transaction under the process's writer lock; commits, or rolls back on error. A nested block joins
        the outer transaction. Every commit is durable (synchronous_commit = on), so `durable` changes nothing."""
        held = self._held()
        with self._write_lock:
            held.durable = held.durable or durable
            if held.depth:
                held.depth += 1
                try:
                    yield held.conn
                finally:
                    held.depth -= 1
                return
            held.conn.begin()
            held.depth = 1
            try:
                yield held.conn
            except BaseException:
                held.depth, held.durable = 0, False
                self._roll_back(held.conn)
                raise
            held.depth = 0
            held.conn.commit()
            if held.durable:
                self.syncs += 1  # under the writer lock
            held.durable = False
            self._beat(held.conn)

    def _beat(self, conn: Connection) -> None:
        """The desk's heartbeat row, when a minute has passed since the last (its own autocommitted statement)."""
        if self.desk is None or time.monotonic() < self._next_beat:
            return
        self._next_beat = time.monotonic() + HEARTBEAT_S
        try:
            conn.execute(SEE_DESK, self.desk)
        except psycopg.Error:  # a diagnostic: never fails the commit that came before it
            log.warning("the desk's heartbeat failed", exc_info=True)

    def see_desk(self, host: str, app_version: str) -> None:
        """Record this desk as using the database now, and again after its commits (at most once a minute)."""
        self.desk, self._next_beat = (host, app_version), 0.0
        with self._write_lock:
            self._beat(self.conn())

    @staticmethod
    def _roll_back(conn: Connection) -> None:
        sent = not conn.pending_begin  # a BEGIN still waiting: nothing was sent, nothing to undo
        conn.rolled_back()
        if not sent:
            return
        try:
            conn.raw.execute("ROLLBACK")
        except psycopg.Error:  # the connection broke: the server rolled back already
            log.warning("rolling back failed", exc_info=True)

    @contextmanager
    def transaction(self, durable: bool = False) -> Iterator[None]:
        with self.write(durable):
            yield

    @contextmanager
    def group(self, durable: bool = False) -> Iterator[RequestGroup]:
        """Several independent requests in one transaction, each in a savepoint (ports.database.Database.group)."""
        with self.write(durable) as conn:
            yield RequestGroup(conn)  # type: ignore[arg-type]  # it only asks execute() of the connection

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """Inside a write block: what the block does is undone alone when it raises (PostgreSQL aborts the whole
        transaction at a failed statement; SQLite undoes only the statement). Outside one, the block is its own
        transaction."""
        if not self._held().depth:
            with self.write():
                yield
            return
        with self.write() as conn:
            name = f"step_{next(_EPOCHS)}"
            conn.started().execute(f"SAVEPOINT {name}")
            try:
                yield
            except BaseException:
                conn.raw.execute(f"ROLLBACK TO SAVEPOINT {name}")
                raise
            conn.raw.execute(f"RELEASE SAVEPOINT {name}")

    # ------------------------------------------------------------ reads

    def query(self, sql: str, params: tuple | dict = ()) -> list[dict]:
        cursor = self.conn().execute(sql, tuple(params))
        names = [column.name for column in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def query_one(self, sql: str, params: tuple | dict = ()) -> dict | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    @contextmanager
    def steady_reads(self) -> Iterator[None]:
        """Within the block, cached reads (ReadCache) look for other writers once (see the SQLite engine's)."""
        outer = getattr(self._steady, "epoch", 0)
        self._steady.epoch = next(_EPOCHS)
        try:
            yield
        finally:
            self._steady.epoch = outer

    def steady_epoch(self) -> int:
        return getattr(self._steady, "epoch", 0)

    def data_version(self) -> int:
        """What tells the cached reads (ReadCache) to read again: the cache watch's counter of the cached tables'
        changes by any desk (cache_watch.py; nothing asked of the server) while its listener is up, else the
        snapshot (`snapshot_version`)."""
        watched = self.cache_watch.version()
        if watched is not None:
            return -1 - watched  # never a snapshot's value (those are >= 0): switching over clears the caches
        return self.snapshot_version()

    def snapshot_version(self) -> int:
        """The server's snapshot as this thread's connection sees it now: the set of transactions committed and
        running. Two equal snapshots show the same data, so a cache read under one stays true under the other; it
        changes whenever any connection commits (and when one starts writing). Inside a `steady_reads` block it is
        asked once, whichever cache asks (each is a round trip to the server)."""
        epoch = self.steady_epoch()
        if epoch and getattr(self._steady, "asked_in", 0) == epoch:
            return int(self._steady.version)
        snapshot = self.conn().execute("SELECT pg_current_snapshot()::text").fetchone()
        version = zlib.crc32(str(snapshot[0] if snapshot else "").encode())
        if epoch:
            self._steady.asked_in, self._steady.version = epoch, version
        return version

    def change_counter(self) -> int:
        """Changes whenever any connection commits (the local API's memory), as the port says: the snapshot."""
        return self.snapshot_version()

    def quick_check(self, budget_s: float, *, clock: Callable[[], float] | None = None,
                    every: int = 10_000) -> tuple[list[str], bool]:
        """The server checks its own pages (checksums, WAL): here, only that it answers."""
        self.conn().execute("SELECT 1").fetchone()
        return ["ok"], True

    def table_count(self) -> int:
        row = self.conn().execute("SELECT count(*) FROM information_schema.tables "
                                  "WHERE table_schema = current_schema()").fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        self._closed = True
        self.cache_watch.close()
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            try:
                conn.close()
            except psycopg.Error:
                pass  # broken already
