"""A throwaway PostgreSQL server for tests and measurements: Debian's `postgresql` binaries, a new cluster in a
temporary folder, a free loopback port, stopped and removed at the end.

PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` user the package creates, and its
commands run through `runuser`. Where the binaries are absent, `binaries()` says so (tests skip with that reason;
under CI=true they must not).

As a pytest plugin (tests/conftest.py) it gives the tests one server per session (`postgres_server`) and the
parametrised `engine_database` fixture: a test asking for it runs over SQLite and over PostgreSQL, the latter marked
`postgres` (`pytest -m postgres` runs those alone, `-m "not postgres"` the rest).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def binaries() -> Path | None:
    """The newest `/usr/lib/postgresql/<version>/bin` with initdb and pg_ctl, or None."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parts[-3]), reverse=True)
    return found[0].parent if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_owner(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


class Cluster:
    """A throwaway cluster's server, which a test may stop and start again (the server down while a desk works)."""

    def __init__(self, bin_dir: Path, folder: Path, port: int, durable: bool, database: str) -> None:
        self.bin_dir, self.folder, self.port = bin_dir, folder, port
        self.data = folder / "data"
        self.options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync={'on' if durable else 'off'}"
        self.url = f"postgresql://yupana@127.0.0.1:{port}/{database}"

    def pg_ctl(self, *args: str) -> None:
        subprocess.run(_as_owner([str(self.bin_dir / "pg_ctl"), "-D", str(self.data), *args]), check=True,
                       capture_output=True, text=True, timeout=120)

    def start(self) -> None:
        self.pg_ctl("-o", self.options, "-w", "-l", str(self.folder / "server.log"), "start")

    def stop(self) -> None:
        """At once (`-m immediate`): every connection is cut, as a server that dies or a network cut leaves them."""
        self.pg_ctl("-m", "immediate", "-w", "stop")


@contextlib.contextmanager
def restartable_postgres(database: str = "yupana", durable: bool = True) -> Iterator[Cluster]:
    """Start a cluster with an empty database (user `yupana`, trust on loopback) and yield it (`.url`, `.stop()`,
    `.start()`); removed at the end.

    `durable=False` (the tests' session server): nothing is synced to disk (initdb --no-sync, fsync=off), as nothing
    outlives the run; measurements keep the default, a server that syncs as a real one does. Either way it is stopped
    at once at the end (`-m immediate`: no final checkpoint of a cluster about to be removed)."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    folder = Path(tempfile.mkdtemp(prefix="yupana-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    cluster = Cluster(bin_dir, folder, _free_port(), durable, database)
    run = {"check": True, "capture_output": True, "text": True, "timeout": 120}
    subprocess.run(_as_owner([str(bin_dir / "initdb"), "-D", str(cluster.data), "-U", "postgres", "-A", "trust",
                              "-E", "UTF8", "--no-locale", *([] if durable else ["--no-sync"])]), **run)
    cluster.start()
    try:
        psql = [str(bin_dir / "psql"), "-h", "127.0.0.1", "-p", str(cluster.port), "-U", "postgres", "-v",
                "ON_ERROR_STOP=1", "-c"]
        subprocess.run(psql + ["CREATE ROLE yupana LOGIN"], **run)
        subprocess.run(psql + [f"CREATE DATABASE {database} OWNER yupana"], **run)
        yield cluster
    finally:
        with contextlib.suppress(subprocess.SubprocessError):
            cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def cluster_with_schema(durable: bool = False) -> Iterator[Cluster]:
    """A test's own restartable cluster (the session's server is shared: never stopped) whose database holds the
    current schema; the calling test is skipped where PostgreSQL is missing (`require`)."""
    require()
    from app.core.storage.postgres.database import PostgresStorage
    from app.core.storage.postgres.schema import create

    with restartable_postgres(durable=durable) as cluster:
        storage = PostgresStorage(cluster.url)
        try:
            create(storage)
        finally:
            storage.close()
        yield cluster


def desk_engine(home: Path, url: str) -> Any:
    """A desk's engine on the shared database at `url`: its data folder `home` (made if missing) names it in
    puesto.json, as `yupana db usar` leaves it."""
    from app.core.engine import Engine
    from app.core.platform.settings import DeskSettings

    home.mkdir(parents=True, exist_ok=True)
    DeskSettings(home).put("database_url", url)
    return Engine(home)


@contextlib.contextmanager
def throwaway_postgres(database: str = "yupana", durable: bool = True) -> Iterator[str]:
    """restartable_postgres's database URL alone (see there)."""
    with restartable_postgres(database, durable) as cluster:
        yield cluster.url


# ---------------------------------------------------------------- the tests' fixtures (a pytest plugin: tests/conftest.py)

def missing_reason() -> str | None:
    """Why the PostgreSQL tests cannot run here (None: they can)."""
    if binaries() is None:
        return "PostgreSQL is not installed (Debian: apt-get install postgresql)"
    return None


def require() -> None:
    """Skip the calling test where PostgreSQL is missing; under CI=true fail instead (CI installs it)."""
    reason = missing_reason()
    if reason is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and {reason}")
    pytest.skip(reason)


class Server:
    """One throwaway cluster for the whole session; each test gets a fresh database copied from a template that holds
    the schema (CREATE DATABASE … TEMPLATE: about 0.1 s, against 0.6 s to create the schema again)."""

    TEMPLATE = "yupana_template"

    def __init__(self, url: str) -> None:
        self.url = url
        self._base, _, _name = url.rpartition("/")
        self._names = itertools.count(1)
        from app.core.storage.postgres.database import connect

        self._admin = connect(self.database_url("postgres").replace("yupana@", "postgres@"))
        self._admin.execute(f"CREATE DATABASE {self.TEMPLATE} OWNER yupana")
        from app.core.storage.postgres.database import PostgresStorage
        from app.core.storage.postgres.schema import create

        template = PostgresStorage(self.database_url(self.TEMPLATE))
        try:
            create(template)
        finally:
            template.close()

    def database_url(self, name: str) -> str:
        return f"{self._base}/{name}"

    def empty_database(self) -> str:
        """The URL of a new database without tables (what `yupana db init` starts from)."""
        name = f"vacia_{next(self._names)}"
        self._admin.execute(f"CREATE DATABASE {name} OWNER yupana")
        return self.database_url(name)

    def fresh_database(self) -> str:
        """The URL of a new database holding the current schema and no rows."""
        name = f"prueba_{next(self._names)}"
        self._admin.execute(f"CREATE DATABASE {name} TEMPLATE {self.TEMPLATE} OWNER yupana")
        return self.database_url(name)

    def role_with_password(self, name: str, password: str) -> str:
        """A login role that must give `password` (scram-sha-256 from loopback, a rule put before the cluster's
        «trust») and may do what `yupana` does: the URL of a new database with the current schema, as that role,
        without the password (it goes in a pgpass file, as a desk keeps it)."""
        self._admin.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{password}' IN ROLE yupana")
        row = self._admin.execute("SHOW hba_file").fetchone()
        hba = Path(str(row[0]) if row else "")
        hba.write_text(f"host all {name} 127.0.0.1/32 scram-sha-256\n" + hba.read_text(encoding="utf-8"),
                       encoding="utf-8")
        self._admin.execute("SELECT pg_reload_conf()")
        return self.fresh_database().replace("yupana@", f"{name}@")

    def close(self) -> None:
        self._admin.close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    """The session's PostgreSQL (started on first use, stopped at the end)."""
    require()
    with throwaway_postgres(durable=False) as url:
        server = Server(url)
        try:
            yield server
        finally:
            server.close()


ENGINES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=ENGINES)
def engine_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A fresh database of each engine in turn (a test using it runs twice: `-m postgres` selects the second): SQLite
    in a data folder, or a new database on the session's PostgreSQL."""
    from app.core.storage.engines import open_database, open_shared_database

    if request.param == "sqlite":
        database: Any = open_database(tmp_path / "yupana.db")
    else:
        server: Server = request.getfixturevalue("postgres_server")
        database = open_shared_database(server.fresh_database(), tmp_path / "yupana.db")
    try:
        yield database
    finally:
        database.close()


@pytest.fixture
def repos(engine_database: Any) -> Any:
    """The repositories of `engine_database`'s engine (app.core.storage.engines.Repositories)."""
    from app.core.storage.engines import repositories

    return repositories(engine_database)
