"""Benchmark: «Emitir» on several desks (issue 34). One voucher per call (`engine.invoicing.issue` with the serie's next
number, its send to the SUNAT sandbox included), each desk a process of its own (tests/helpers/desk_process.py):

- 1 desk over PostgreSQL, 2 desks over the same PostgreSQL (one serie: they take numbers under the serie's lock), and
  1 desk over SQLite in its data folder, alternating in each round, median of the rounds;
- PostgreSQL is a throwaway server (tests/helpers/postgres.py) that syncs its commits as a real one does; the SUNAT
  sandbox runs in this process on 127.0.0.1 (port 0).

A desk's rate is its vouchers over the seconds its issuing took (from the start signal, the desks starting together;
its process's start and the final wait for its outbox are left out); two desks' total is all their vouchers over the
slower one's seconds. Goals on the 2-core machine: one desk over PostgreSQL >= 0.7 of one over SQLite
(`postgres_over_sqlite`); two desks >= 0.9 of one desk's total (`two_desks_over_one`).

    python bench/desks.py            (YUPANA_BENCH_QUICK=1: a few vouchers, one round: it runs, figures mean nothing)

Prints a line per round, then one JSON object of figures as the last line.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _sizes import QUICK, size  # noqa: E402 - bench/ is the script's folder

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VOUCHERS = size(300, 4)  # per desk and round
ROUNDS = 1 if QUICK else 3
ISSUER = "20100066603"


def prepared_desk(home: Path, url: str, sandbox) -> None:
    """A data folder on `url` ("": SQLite in it) with the issuer, its default test certificate and the sandbox."""
    from app.core.api import Company, Engine
    from app.core.platform.settings import DeskSettings

    home.mkdir(parents=True)
    DeskSettings(home).put("database_url", url)
    with Engine(home) as engine:
        engine.admin.set_company(Company(ruc=ISSUER, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                         direccion="AV. ABANCAY 123"))
        engine.invoicing.create_test_certificate(ISSUER)
        sandbox.configure(engine)


def desk_home(folder: Path, url: str) -> Path:
    """A new desk on `url`, using the sandbox configured for the main desk (a desk's sandbox addresses are its own,
    in its folder)."""
    from app.core.platform.environments import DESK_SANDBOX_FILE
    from app.core.platform.settings import DeskSettings

    home = Path(tempfile.mkdtemp(dir=folder, prefix="caja-"))
    DeskSettings(home).put("database_url", url)
    shutil.copy(folder / "principal" / DESK_SANDBOX_FILE, home / DESK_SANDBOX_FILE)
    return home


def run_desks(homes: list[Path], mark: str) -> list[float]:
    """Each home's desk issues VOUCHERS at once with the others: the seconds each took."""
    env = dict(os.environ)
    desks = []
    for n, home in enumerate(homes):
        desks.append(subprocess.Popen(
            [sys.executable, "-m", "tests.helpers.desk_process", "issue", str(home), str(VOUCHERS), f"{mark}-{n}",
             "--wait"], cwd=ROOT, env={**env, "YUPANA_HOME": str(home)}, text=True, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for desk in desks:
        assert desk.stdout is not None and desk.stdout.readline().strip() == "ready", desk.communicate()[1][-2000:]
    for desk in desks:
        assert desk.stdin is not None
        desk.stdin.write("go\n")
        desk.stdin.flush()
    seconds = []
    for desk in desks:
        out, err = desk.communicate(timeout=600)
        lines = [line for line in out.splitlines() if line.strip()]
        if desk.returncode != 0 or len(lines) != 1:  # a voucher not accepted, or a failure
            raise SystemExit(f"a desk failed: {out[-2000:]} {err[-2000:]}")
        seconds.append(float(lines[0].split()[1]))
    return seconds


def main() -> None:
    os.environ.setdefault("YUPANA_PASSPHRASE", "frase de la prueba de los puestos")
    os.environ.setdefault("YUPANA_KEYRING", "0")
    from app.sandbox.sunat import SunatSandbox
    from tests.helpers import postgres

    if postgres.binaries() is None:
        print(json.dumps({"benchmark": "desks", "skipped": "PostgreSQL is not installed"}))
        return
    with tempfile.TemporaryDirectory(prefix="yupana-desks-") as tmp, SunatSandbox() as sandbox, \
            postgres.throwaway_postgres() as url:
        folder = Path(tmp)
        from app.core.storage.postgres.database import PostgresStorage
        from app.core.storage.postgres.schema import create

        created = PostgresStorage(url)
        try:
            create(created)  # what `yupana db init` does
        finally:
            created.close()
        prepared_desk(folder / "principal", url, sandbox)
        sqlite_home = folder / "sola"
        prepared_desk(sqlite_home, "", sandbox)
        rates: dict[str, list[float]] = {"postgres_1": [], "postgres_2": [], "sqlite_1": []}
        for n in range(ROUNDS):
            one = run_desks([desk_home(folder, url)], f"R{n}P1")
            two = run_desks([desk_home(folder, url), desk_home(folder, url)], f"R{n}P2")
            alone = run_desks([sqlite_home], f"R{n}S1")
            rates["postgres_1"].append(VOUCHERS / one[0])
            rates["postgres_2"].append(2 * VOUCHERS / max(two))
            rates["sqlite_1"].append(VOUCHERS / alone[0])
            print(f"round {n + 1}: " + ", ".join(f"{name} {values[-1]:.1f}/s" for name, values in rates.items()),
                  file=sys.stderr)
    median = {name: statistics.median(values) for name, values in rates.items()}
    postgres_over_sqlite = median["postgres_1"] / median["sqlite_1"]
    two_over_one = median["postgres_2"] / median["postgres_1"]
    print(json.dumps({
        "benchmark": "desks",
        "vouchers_per_desk": VOUCHERS, "rounds": ROUNDS,
        "postgres_1_desk_per_s": round(median["postgres_1"], 1),
        "postgres_2_desks_per_s": round(median["postgres_2"], 1),
        "sqlite_1_desk_per_s": round(median["sqlite_1"], 1),
        "postgres_over_sqlite": round(postgres_over_sqlite, 3),
        "postgres_over_sqlite_goal_met": postgres_over_sqlite >= 0.7,
        "two_desks_over_one": round(two_over_one, 3),
        "two_desks_over_one_goal_met": two_over_one >= 0.9,
    }))


if __name__ == "__main__":
    main()
