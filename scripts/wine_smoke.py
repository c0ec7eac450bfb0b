"""The Windows smoke test's checks that need a service beside the installed app (installer/smoke_windows.sh runs it
under the project's Linux venv, with the app installed in the Wine prefix; docs/packaging.md):

- `lote` (issue 33): the installed yupana.exe signs a batch on its worker processes: its XMLs verify with xmlsec1,
  its log names two or more workers (distinct pids, each signed part of the batch, none loaded Qt), and the
  yupana.exe processes seen while it ran were the command itself and workers started by multiprocessing
  (`--multiprocessing-fork`: freeze_support ran them), never a second app (a second window);
- `stream` (issue 30): `yupana serve` of the installed app opens Evolution's Socket.IO stream against the gateway
  sandbox (run here, on 127.0.0.1, a port the OS picks), stores a message emitted twice with one id once, and
  forwards it once to a subscriber (also here);
- `postgres` (issue 34): a throwaway PostgreSQL here (tests/helpers/postgres.py), the installed app's
  `yupana db usar/init/estado` on it: the server's version and psycopg's binary part (`binary`, its own libpq).

    python -m scripts.wine_smoke --wine WINE --exe INSTALLED_YUPANA_EXE --work FOLDER [lote|stream|postgres ...]

Everything it writes goes under FOLDER (the smoke gives build/wine-smoke). Each check prints one line; the exit code
is the number of checks that failed.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import http.server
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a file too
    sys.path.insert(0, str(ROOT))

ISSUER = "20100066603"
CUSTOMER = "20601030013"
INSTANCE = "tienda"
LOTE_COUNT = 70  # above batches.POOL_FROM (64): the batch goes to the worker processes
LOTE_TIMEOUT_S = 420
SERVE_TIMEOUT_S = 180
# The host's pip settings point at Linux paths and its Python variables at the venv: never passed to Windows.
HOST_ONLY = ("PIP_FIND_LINKS", "PIP_CERT", "PIP_CONFIG_FILE", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PYTHONPATH",
             "PYTHONHOME", "VIRTUAL_ENV")


class SmokeFailed(Exception):
    """A check saw the installed app do something other than expected (the message says what)."""


def winpath(path: Path) -> str:
    """A Linux path as Wine shows it (drive Z: is /)."""
    return "Z:" + str(path).replace("/", "\\")


# ---------------------------------------------------------------- running the installed app under Wine

@dataclass
class Wine:
    """The installed app under Wine (`wine yupana.exe …`); the tests give the checks this checkout's app instead
    (`launcher` None: `exe` is the whole command, paths are given as they are)."""

    launcher: str | None
    exe: list[str]
    passphrase: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    def path(self, path: Path) -> str:
        return winpath(path) if self.launcher else str(path)

    def env(self) -> dict[str, str]:
        """The Windows app's environment: secrets under a passphrase (no keyring in a Wine prefix), no host Python."""
        env = {name: value for name, value in os.environ.items() if name not in HOST_ONLY}
        env.update({"YUPANA_KEYRING": "0", "YUPANA_PASSPHRASE": self.passphrase})
        env.pop("QT_QPA_PLATFORM", None)  # a worker that started the app would try a real window, not an offscreen one
        return env

    def command(self, home: Path, *args: str) -> list[str]:
        return [*([self.launcher] if self.launcher else []), *self.exe, "--home", self.path(home), *args]

    def run(self, home: Path, *args: str, timeout: float = 300) -> str:
        """`yupana ARGS` of the installed app; its output (Wine: standard handles must be pipes, never files)."""
        done = subprocess.run(self.command(home, *args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, env=self.env(), timeout=timeout, check=False)
        out = done.stdout.decode("utf-8", "replace").replace("\r\n", "\n")
        if done.returncode != 0:
            raise SmokeFailed(f"yupana {' '.join(args)} exited with {done.returncode}:\n{out}")
        return out

    def start(self, home: Path, *args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(self.command(home, *args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env=self.env())

    @contextmanager
    def host_engine(self, home: Path) -> Iterator[Any]:
        """This machine's engine on a data folder the Windows app then opens (same passphrase, no keyring). The
        variables stay set: this process exists for the smoke, and every engine it opens uses this passphrase."""
        os.environ.update({"YUPANA_KEYRING": "0", "YUPANA_PASSPHRASE": self.passphrase})
        from app.core.api import Engine

        with Engine(home) as engine:
            yield engine


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.1)
    raise SmokeFailed(f"{what}: not seen in {timeout:.0f} s")


def fresh(folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


# ---------------------------------------------------------------- lote: two workers sign, no second app

WORKER_LINE = re.compile(r"batch of (\d+) requests made by (\d+) signing processes: (.*)$")
WORKER = re.compile(r"pid (\d+) signed (\d+) \(Qt: ([^)]*)\)")
WINDOW_MODULES = {"QtGui", "QtWidgets"}  # what a window needs; QtCore alone cannot open one


def signing_workers(log_text: str, requests: int) -> list[tuple[int, int]]:
    """The workers that signed the batch of `requests`, as the app's log names them: (pid, vouchers signed).
    SmokeFailed unless two or more distinct processes each signed part of it, together all of it, none with what a
    window needs (QtGui, QtWidgets; a frozen app's processes all have QtCore: PyInstaller's PySide6 runtime hook)."""
    lines = [m for m in map(WORKER_LINE.search, log_text.splitlines()) if m and int(m.group(1)) == requests]
    if not lines:
        raise SmokeFailed(f"the log has no line «batch of {requests} requests made by … signing processes»: the "
                          "batch was not made by the worker processes")
    workers = [(int(pid), int(signed), qt) for pid, signed, qt in WORKER.findall(lines[-1].group(3))]
    problems = []
    if len(workers) < 2:
        problems.append(f"{len(workers)} worker(s), two or more expected")
    if len({pid for pid, _, _ in workers}) != len(workers):
        problems.append("two workers with one pid")
    if any(signed == 0 for _, signed, _ in workers):
        problems.append("a worker that signed nothing")
    if sum(signed for _, signed, _ in workers) != requests:
        problems.append(f"{sum(signed for _, signed, _ in workers)} signed by the workers of {requests}")
    if any(WINDOW_MODULES & set(qt.split(", ")) for _, _, qt in workers):
        problems.append("a worker loaded QtGui or QtWidgets (it could open a window)")
    if problems:
        raise SmokeFailed(f"{'; '.join(problems)}: {lines[-1].group(0)}")
    return [(pid, signed) for pid, signed, _ in workers]


def yupana_processes() -> dict[int, list[str]]:
    """The yupana.exe processes running now (Wine shows a Windows program's command line in /proc): pid → argv."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode("utf-8", "replace").split("\0")
        except OSError:
            continue
        if argv and re.split(r"[\\/]", argv[0])[-1].lower() == "yupana.exe":
            found[int(entry.name)] = [arg for arg in argv if arg]
    return found


def second_apps(seen: dict[int, list[str]], command: str) -> tuple[list[int], list[list[str]]]:
    """Split the yupana.exe processes seen during `yupana COMMAND`: the workers multiprocessing started (pids), and
    every other one that is not the command itself (each would be a second app: a second window)."""
    workers, others = [], []
    for pid, argv in sorted(seen.items()):
        if "--multiprocessing-fork" in argv:
            workers.append(pid)
        elif command not in argv:
            others.append(argv)
    # Wine may show one program under two pids with the same command line (its loader and the program: seen in
    # CI's run, not in every run), so the command's own line counts once; another line naming it is a second app.
    commands = {tuple(argv) for argv in seen.values() if command in argv}
    if len(commands) > 1:
        others += [list(argv) for argv in sorted(commands)]
    return workers, others


class ProcessWatch:
    """Samples the yupana.exe processes every 50 ms while a command runs."""

    def __init__(self) -> None:
        self.seen: dict[int, list[str]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> ProcessWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.is_set():
            self.seen.update(yupana_processes())
            self._stop.wait(0.05)


def lote_requests(count: int) -> str:
    return "".join(json.dumps({
        "tipo": "01", "serie": "F901", "numero": number, "emisor": {"ruc": ISSUER},
        "receptor": {"ruc": CUSTOMER, "razon_social": "DISTRIBUIDORA ANDINA S.A.C."},
        "items": [{"descripcion": "Pan", "cantidad": "10", "precio_unitario": "0.50"}],
    }) + "\n" for number in range(1, count + 1))


def verify_with_xmlsec(xml_path: Path, fingerprint: str) -> None:
    """xmlsec1 checks the signature with the certificate it carries, which must be the one stored (its SHA-256)."""
    text = xml_path.read_text(encoding="utf-8")
    found = re.search(r"<ds:X509Certificate>([^<]+)</ds:X509Certificate>", text)
    if found is None:
        raise SmokeFailed(f"{xml_path.name} carries no certificate")
    der = base64.b64decode(found.group(1))
    if hashlib.sha256(der).hexdigest().lower() != fingerprint.replace(":", "").lower():
        raise SmokeFailed(f"{xml_path.name} is signed with another certificate than the stored one")
    pem = xml_path.with_suffix(".pem")
    pem.write_text("-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(der).decode("ascii")
                   + "-----END CERTIFICATE-----\n", encoding="ascii")
    done = subprocess.run(["xmlsec1", "--verify", "--pubkey-cert-pem", str(pem), "--enabled-reference-uris", "empty",
                           str(xml_path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SmokeFailed(f"xmlsec1 refuses the signature of {xml_path.name}: {done.stderr.strip()}")


def check_lote(wine: Wine, work: Path) -> str:
    from app.core.api import Company

    home, out = fresh(work / "lote-home"), fresh(work / "lote-xml")
    with wine.host_engine(home) as engine:
        engine.admin.set_company(Company(ruc=ISSUER, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                         direccion="AV. ABANCAY 123, CERCADO DE LIMA"))
        certificate = engine.invoicing.create_test_certificate(ISSUER)
    requests = work / "lote.jsonl"
    requests.write_text(lote_requests(LOTE_COUNT), encoding="utf-8")
    started = time.monotonic()
    with ProcessWatch() as watch:
        printed = wine.run(home, "lote", wine.path(requests), "--certificado", certificate.certificado_id,
                           "--salida", wine.path(out), "--quiet", timeout=LOTE_TIMEOUT_S)
    seconds = time.monotonic() - started
    summary = [json.loads(line) for line in printed.splitlines() if line.startswith('{"emitidos"')]
    if summary and (summary[-1]["emitidos"], summary[-1]["con_error"]) != (LOTE_COUNT, 0):
        raise SmokeFailed(f"lote reports {summary[-1]}")
    xmls = sorted(out.glob("*.xml"))
    if len(xmls) != LOTE_COUNT:
        raise SmokeFailed(f"{len(xmls)} signed XMLs in {out}, {LOTE_COUNT} expected")
    for xml in xmls:
        verify_with_xmlsec(xml, certificate.huella_sha256)
    workers = signing_workers((home / "logs" / "yupana.log").read_text(encoding="utf-8"), LOTE_COUNT)
    started_workers, others = second_apps(watch.seen, "lote")
    if others:
        raise SmokeFailed(f"yupana.exe processes other than lote and its workers ran meanwhile: {others}")
    if len(started_workers) < len(workers):
        raise SmokeFailed(f"{len(started_workers)} worker processes (--multiprocessing-fork) seen, the log names "
                          f"{len(workers)}")
    return (f"lote: {LOTE_COUNT} vouchers in {seconds:.0f} s, XMLs verified by xmlsec1, signed by "
            f"{len(workers)} worker processes ({', '.join(f'{signed}' for _, signed in workers)} each, no QtGui), "
            f"no yupana.exe but lote and its {len(started_workers)} workers")


# ---------------------------------------------------------------- stream: Evolution's Socket.IO from the installed app

class Subscriber:
    """Operation 5's subscriber on 127.0.0.1 (a port the OS picks): keeps every delivery's body."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        posts = self.posts

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                posts.append(json.loads(body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/eventos"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def bodies(self, text: str) -> list[dict[str, Any]]:
        return [post for post in list(self.posts) if json.dumps(post, ensure_ascii=False).find(text) >= 0]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def check_stream(wine: Wine, work: Path) -> str:
    from app.sandbox.gateway import GatewaySandbox

    home = fresh(work / "stream-home")
    token = secrets.token_hex(4)
    body, closing = f"Hola desde Wine {token}", f"Fin de la prueba {token}"
    gateway, subscriber = GatewaySandbox(), Subscriber()
    gateway.start()
    gateway_url, serve = gateway.base_url, None
    try:
        gateway.create_instance(INSTANCE)
        with wine.host_engine(home) as engine:
            engine.messaging.save_instance(INSTANCE, "evolution", gateway.base_url,
                                           {"apikey": gateway.apikey(INSTANCE)}, {"events_via": "stream"})
            engine.messaging.register_webhook(INSTANCE)  # websocket/set: the instance's stream on, at the gateway
            engine.admin.config_set("listener_port", "0")
            engine.messaging.subscribe({"instance": INSTANCE, "url": subscriber.url, "events": ["message.received"]})
        serve = wine.start(home, "serve", "--port", "0")
        if not gateway.stream.wait_clients("/" + INSTANCE, 1, timeout=SERVE_TIMEOUT_S):
            raise SmokeFailed(f"the installed app's serve opened no stream to the gateway sandbox in "
                              f"{SERVE_TIMEOUT_S} s{_ended(serve)}")
        gateway.emit("message.received", INSTANCE, body=body, message_id="3EB0WINESMOKE00001", times=2)
        gateway.emit("message.received", INSTANCE, body=closing)  # streamed after both copies
        wait_for(lambda: subscriber.bodies(closing), 60, "the streamed messages forwarded to the subscriber")
    finally:
        if serve is not None:
            _stop(serve)
        subscriber.close()
        gateway.stop()
    forwarded, caught_up = subscriber.bodies(body), gateway.stream.finds
    if caught_up:
        raise SmokeFailed(f"the installed app asked findMessages {caught_up} time(s): the messages did not come live "
                          "through the stream")
    with wine.host_engine(home) as engine:
        stored = [m for m in engine.messaging.messages(INSTANCE) if m.body == body]
    if len(stored) != 1 or len(forwarded) != 1:
        raise SmokeFailed(f"the message emitted twice (one id) was stored {len(stored)} and forwarded "
                          f"{len(forwarded)} times; once each expected")
    return (f"stream: the installed app's serve connected to the gateway sandbox's Socket.IO ({gateway_url}), "
            "stored the message emitted twice once and forwarded it once")


def _ended(process: subprocess.Popen[bytes]) -> str:
    if process.poll() is None:
        return ""
    return f" (serve ended with {process.returncode}: {process.stdout.read().decode('utf-8', 'replace') if process.stdout else ''})"


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the installed app's serve (SIGTERM to its Wine process; a Windows program has no Ctrl+C from here)."""
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(30)


# ---------------------------------------------------------------- postgres: psycopg's binary part, a real server

def check_postgres(wine: Wine, work: Path) -> str:
    from tests.helpers.postgres import binaries, throwaway_postgres

    if binaries() is None:
        raise SmokeFailed("PostgreSQL is not installed here (Debian: apt-get install postgresql)")
    home = fresh(work / "postgres-home")
    with throwaway_postgres(durable=False) as url:
        from app.core.api import shared_database

        shared_database.use(home, url)  # the desk's setting only (a file): written here, one Wine start saved
        wine.run(home, "db", "init")
        state = wine.run(home, "db", "estado")
    engine = re.search(r"^Motor: PostgreSQL (\S+)", state, re.M)
    driver = re.search(r"^Controlador: (psycopg \S+ \((\w+), libpq [\d.]+\))", state, re.M)
    if engine is None or driver is None or driver.group(2) != "binary" or "Puestos vistos" not in state:
        raise SmokeFailed(f"yupana db estado of the installed app does not show PostgreSQL through psycopg's binary "
                          f"part:\n{state}")
    return f"postgres: the installed app's db init/estado on PostgreSQL {engine.group(1)} through {driver.group(1)}"


CHECKS: dict[str, Callable[[Wine, Path], str]] = {"lote": check_lote, "stream": check_stream,
                                                  "postgres": check_postgres}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wine", required=True)
    parser.add_argument("--exe", required=True, type=Path, help="the installed yupana.exe (a Linux path)")
    parser.add_argument("--work", required=True, type=Path, help="where everything is written (build/wine-smoke)")
    parser.add_argument("checks", nargs="*", metavar="CHECK", help=f"some of {', '.join(CHECKS)} (all by default)")
    args = parser.parse_args(argv)
    unknown = [name for name in args.checks if name not in CHECKS]
    if unknown:
        parser.error(f"unknown check(s) {', '.join(unknown)}: {', '.join(CHECKS)}")
    wine = Wine(args.wine, [str(args.exe)])
    failed = 0
    for name in args.checks or list(CHECKS):
        started = time.monotonic()
        try:
            line = CHECKS[name](wine, fresh(args.work / name))
        except SmokeFailed as exc:
            failed += 1
            print(f"FALLA {name}: {exc}", flush=True)
            continue
        print(f"OK    {line} [{time.monotonic() - started:.0f} s]", flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(main())
