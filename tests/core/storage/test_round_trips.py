"""Fewer round trips to a shared PostgreSQL per «Emitir» (issue 34, bench/desks.py): each statement is one.

- the server's snapshot (what tells a cache another desk committed while the cache watch's listener is away:
  tests/core/storage/test_cache_watch.py) is asked once per `steady_reads` block, whichever caches read in it, and
  again in the next block;
- a texts' dictionary read back from the database is known committed: packing against it writes its row no more.
"""

from __future__ import annotations

import pytest

from app.core.invoicing.voucher_store import VoucherStore

SCOPE = "signed:20100066603:01"
TEXT = b"<Invoice>" + b"<cbc:Note>Arroz Coste\xc3\xb1o 5 kg</cbc:Note>" * 40 + b"</Invoice>"


def test_the_snapshot_is_asked_once_per_steady_block_and_anew_in_the_next(postgres_server):
    from app.core.storage.postgres.database import PostgresStorage

    url = postgres_server.fresh_database()
    desk, other = PostgresStorage(url), PostgresStorage(url)
    try:
        with desk.steady_reads():
            before = desk.snapshot_version()
            with other.transaction():  # another desk commits meanwhile
                other.conn().execute("INSERT INTO settings (key, value) VALUES ('otro', '1')")
            assert desk.snapshot_version() == before  # not asked again inside the block
        with desk.steady_reads():
            assert desk.snapshot_version() != before  # the next block sees the other desk's commit
        assert desk.snapshot_version() != before  # outside any block: asked every time
    finally:
        desk.close()
        other.close()


def _dictionary_writes(repos) -> list[bytes]:
    """The digests of the texts' dictionaries written from now on (each a row of the vouchers' repository)."""
    written: list[bytes] = []
    keep = repos.vouchers.keep_dictionary

    def counted(digest: bytes, scope: str, data: bytes) -> None:
        written.append(digest)
        keep(digest, scope, data)

    repos.vouchers.keep_dictionary = counted
    return written


def test_a_dictionary_read_back_is_not_written_again(engine_database, repos):
    first = VoucherStore(engine_database, repos.vouchers, lambda: "sandbox")
    with engine_database.transaction():
        packed = first.pack_bytes(SCOPE, TEXT)  # the scope's first text becomes its dictionary, written here
    written = _dictionary_writes(repos)
    later = VoucherStore(engine_database, repos.vouchers, lambda: "sandbox")  # another desk, or this one reopened
    with engine_database.transaction():
        again = [later.pack_bytes(SCOPE, TEXT + bytes([n])) for n in range(3)]
    assert written == []
    assert later.unpack_bytes(packed) == TEXT and [later.unpack_bytes(p) for p in again] == [TEXT + bytes([n])
                                                                                             for n in range(3)]


def test_a_dictionary_written_in_a_committed_keeping_block_is_not_written_again(engine_database, repos):
    store = VoucherStore(engine_database, repos.vouchers, lambda: "sandbox")
    written = _dictionary_writes(repos)
    with pytest.raises(RuntimeError), store.keeping(), engine_database.transaction():
        store.pack_bytes(SCOPE, TEXT)  # the scope's dictionary written here, then rolled back with the text
        raise RuntimeError("deshecho")
    with store.keeping(), engine_database.transaction():
        first = store.pack_bytes(SCOPE, TEXT)  # written again: the rollback took it away
    assert len(written) == 2
    with store.keeping(), engine_database.transaction():
        again = [store.pack_bytes(SCOPE, TEXT + bytes([n])) for n in range(3)]
    assert len(written) == 2  # known committed since the last block: never written again
    reader = VoucherStore(engine_database, repos.vouchers, lambda: "sandbox")  # another desk reads them
    assert reader.unpack_bytes(first) == TEXT
    assert [reader.unpack_bytes(p) for p in again] == [TEXT + bytes([n]) for n in range(3)]


@pytest.mark.postgres
def test_a_transaction_sends_its_begin_with_its_first_statement_and_still_rolls_back_whole(postgres_server,
                                                                                        monkeypatch):
    import psycopg

    from app.core.storage.postgres.database import PostgresStorage

    storage = PostgresStorage(postgres_server.fresh_database())
    try:
        storage.conn()
        sent: list[str] = []
        execute = psycopg.Cursor.execute

        def counted(cursor, query, params=None, **kwargs):
            sent.append(str(query))
            return execute(cursor, query, params, **kwargs)

        monkeypatch.setattr(psycopg.Cursor, "execute", counted)
        monkeypatch.setattr(psycopg.Connection, "execute", lambda conn, query, params=None, **kw: counted(
            conn.cursor(), query, params, **kw))
        with storage.transaction():
            pass  # nothing asked: nothing sent
        assert sent == []
        with storage.transaction():
            storage.conn().execute("INSERT INTO settings (key, value) VALUES ('uno', '1')")
        assert len(sent) == 2 and sent[0].startswith("BEGIN; INSERT")  # one round trip, then COMMIT
        with pytest.raises(RuntimeError), storage.transaction():
            storage.conn().execute("INSERT INTO settings (key, value) VALUES ('dos', '2')")
            storage.conn().execute("INSERT INTO settings (key, value) VALUES ('tres', '3')")
            raise RuntimeError("deshecho")
        assert storage.query("SELECT key FROM settings ORDER BY key") == [{"key": "uno"}]  # both undone
    finally:
        storage.close()
