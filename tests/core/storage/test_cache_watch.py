"""Cached reads over a shared PostgreSQL (issue 34, bench/desks.py): what every «Emitir» reads and hardly ever
changes (settings, companies, certificates, secrets…) is kept in memory and costs no statement, however many commits
of other tables come between; a change to those tables by another desk is still seen (its note, cache_watch.py),
and while the listener is away every read asks the server's snapshot as before."""

from __future__ import annotations

import pytest

from app.core.storage.postgres.database import PostgresStorage
from app.core.storage.read_cache import ReadCache
from tests.helpers.messaging_support import wait_for
from tests.helpers.postgres import desk_engine

pytestmark = pytest.mark.postgres

WAIT = 10.0
RUC = "20100066603"


class Counted:
    """The statements a storage's connections run (the round trips to the server)."""

    def __init__(self, monkeypatch) -> None:
        from app.core.storage.postgres import database

        self.statements: list[str] = []
        execute = database.Connection.execute

        def counted(conn, sql, params=()):
            self.statements.append(sql)
            return execute(conn, sql, params)

        monkeypatch.setattr(database.Connection, "execute", counted)


def _setting(storage: PostgresStorage) -> str | None:
    row = storage.query_one("SELECT value FROM settings WHERE key = 'sunat_timeout_s'")
    return row["value"] if row else None


def _set(storage: PostgresStorage, value: str, *, autocommit: bool = False) -> None:
    sql = (
        "INSERT INTO settings (key, value) VALUES ('sunat_timeout_s', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
    )
    if autocommit:
        storage.conn().execute(sql, (value,))  # a statement that is its own transaction
        return
    with storage.transaction():
        storage.conn().execute(sql, (value,))


@pytest.fixture
def desks(postgres_server):
    url = postgres_server.fresh_database()
    desk, other = PostgresStorage(url), PostgresStorage(url)
    try:
        desk.data_version()  # starts the desk's listener
        assert wait_for(lambda: desk.cache_watch.listening, WAIT)
        yield desk, other
    finally:
        desk.close()
        other.close()


def test_a_cached_read_costs_nothing_after_commits_of_other_tables(desks, monkeypatch):
    desk, other = desks
    cache = ReadCache(desk)
    assert cache.get("timeout", lambda: _setting(desk)) is None
    counted = Counted(monkeypatch)
    for n in range(3):  # this desk's and another desk's commits of a table no cache keeps
        for storage in (desk, other):
            with storage.transaction():
                storage.conn().execute(
                    "INSERT INTO desk_turns (name, holder, until) VALUES (?, 'x', 0)", (f"turno-{id(storage)}-{n}",)
                )
        with desk.steady_reads():
            assert cache.get("timeout", lambda: _setting(desk)) is None
    assert [s for s in counted.statements if "desk_turns" not in s] == []  # no snapshot, no read again


@pytest.mark.parametrize("autocommit", [False, True], ids=["transaction", "own-statement"])
def test_another_desks_change_to_a_cached_table_is_seen(desks, autocommit):
    desk, other = desks
    cache = ReadCache(desk)
    assert cache.get("timeout", lambda: _setting(desk)) is None
    heard = desk.cache_watch.heard
    _set(other, "41", autocommit=autocommit)
    assert wait_for(lambda: cache.get("timeout", lambda: _setting(desk)) == "41", WAIT)
    assert desk.cache_watch.heard > heard  # by the other desk's note, not by a snapshot


def test_a_rolled_back_change_sends_no_note(desks):
    """What the server delivers on the channel, in order, to a listener of the test's own: between the rolled-back
    change and a marker sent last, only the committed change's note (the desk's counter moves with it too)."""
    from app.core.storage.postgres.cache_watch import CHANNEL
    from app.core.storage.postgres.database import connect

    desk, other = desks
    heard = desk.cache_watch.heard
    with connect(other.url) as listener:
        listener.execute(f"LISTEN {CHANNEL}")
        with pytest.raises(RuntimeError), other.transaction():
            _set(other, "55")
            raise RuntimeError("deshecho")
        _set(other, "42")
        listener.execute(f"SELECT pg_notify('{CHANNEL}', 'marca')")
        notes = []
        for note in listener.notifies(timeout=WAIT):
            notes.append(note.payload)
            if note.payload == "marca":
                break
    assert notes == ["", "marca"]  # one note before the marker: the committed change's
    assert wait_for(lambda: desk.cache_watch.heard > heard, WAIT)


def test_without_the_listener_every_steady_block_asks_the_server(desks):
    desk, other = desks
    desk.cache_watch.close()  # the listener away (closed: it does not come back)
    cache = ReadCache(desk)
    with desk.steady_reads():
        assert cache.get("timeout", lambda: _setting(desk)) is None
    _set(other, "43")
    with desk.steady_reads():  # no note heard: the snapshot changed
        assert cache.get("timeout", lambda: _setting(desk)) == "43"


def test_a_desk_whose_connection_was_cut_trusts_its_listener_again_only_once_it_reconnected(desks, postgres_server):
    desk, other = desks
    cache = ReadCache(desk)
    assert cache.get("timeout", lambda: _setting(desk)) is None
    admin = postgres_server.database_url("postgres").replace("yupana@", "postgres@")
    from app.core.storage.postgres.database import connect

    with connect(admin) as conn:  # every connection of the database cut, as a server restart leaves them
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (desk.url.rsplit("/", 1)[1],)
        )
    _once_back(lambda: _set(other, "44"))  # its own connection made again
    # This desk's cached read comes back to the server: at once if its own use found the cut (it suspects), else
    # once its listener has noticed the cut and reconnected (a reconnection reads every cache again).
    assert wait_for(lambda: _once_back(lambda: cache.get("timeout", lambda: _setting(desk))) == "44", WAIT)
    assert wait_for(lambda: desk.cache_watch.listening, WAIT)
    _set(other, "45")
    assert wait_for(lambda: cache.get("timeout", lambda: _setting(desk)) == "45", WAIT)


def _once_back(call):
    """`call`, again after the Spanish «connection lost» a cut connection answers once (the next use reconnects)."""
    from app.core.errors import YupanaError

    try:
        return call()
    except YupanaError:
        return call()


def test_two_engines_see_each_others_settings_and_sol_credentials(postgres_server, tmp_path, monkeypatch):
    monkeypatch.setenv("YUPANA_PASSPHRASE", "frase de la prueba de la cache")
    monkeypatch.setenv("YUPANA_KEYRING", "0")
    url = postgres_server.fresh_database()
    first = desk_engine(tmp_path / "caja1", url)
    try:
        second = desk_engine(tmp_path / "caja2", url)
        try:
            assert first.admin.config_get("sunat_timeout_s") == second.admin.config_get("sunat_timeout_s")
            second.admin.config_set("sunat_timeout_s", "37")
            assert wait_for(lambda: first.admin.config_get("sunat_timeout_s") == "37", WAIT)
            first.invoicing.set_sol_credentials(RUC, "MODDATOS", "moddatos")
            assert second.invoicing.sol_credentials(RUC) == ("MODDATOS", "moddatos")
            first.invoicing.set_sol_credentials(RUC, "OTROUSER", "otraclave")
            assert wait_for(lambda: second.invoicing.sol_credentials(RUC) == ("OTROUSER", "otraclave"), WAIT)
        finally:
            second.close()
    finally:
        first.close()
