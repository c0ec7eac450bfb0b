"""A throwaway PostgreSQL server for tests and measurements: Debian's `postgresql` binaries, a new cluster in a
temporary folder, a free loopback port, stopped and removed at the end.

PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` user the package creates, and its
commands run through `runuser`. Where the binaries are absent, `binaries()` says so (tests skip with that reason;
under CI=true they must not).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


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


@contextlib.contextmanager
def throwaway_postgres(database: str = "yupana") -> Iterator[str]:
    """Start a cluster and yield the URL of an empty database in it (user `yupana`, trust on loopback)."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    folder = Path(tempfile.mkdtemp(prefix="yupana-pg-"))
    data = folder / "data"
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    port = _free_port()
    run = {"check": True, "capture_output": True, "text": True, "timeout": 120}
    subprocess.run(_as_owner([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
                              "-E", "UTF8", "--no-locale"]), **run)
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=on"
    subprocess.run(_as_owner([str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l",
                              str(folder / "server.log"), "start"]), **run)
    try:
        psql = [str(bin_dir / "psql"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-v", "ON_ERROR_STOP=1",
                "-c"]
        subprocess.run(psql + ["CREATE ROLE yupana LOGIN"], **run)
        subprocess.run(psql + [f"CREATE DATABASE {database} OWNER yupana"], **run)
        yield f"postgresql://yupana@127.0.0.1:{port}/{database}"
    finally:
        subprocess.run(_as_owner([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
                       capture_output=True, timeout=120)
        shutil.rmtree(folder, ignore_errors=True)
