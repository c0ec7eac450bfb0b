"""The soak's stage: a temp data folder, the three sandboxes, `yupana serve` as a real process (killed and restarted),
the local API as a client sees it, and the two webhook subscribers (one slow).

The sandboxes run in the soak's own process, as the tests run them: their counters, tickets and fault queues are
read and filled directly. The app is `python -m app serve --port 0`, its API's address read from its first line at
every start; its webhook listener keeps one port for the whole run (taken from the OS at set-up), because the
gateway sandbox posts to the address registered once.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx

from app.core.api import Company, Engine
from app.core.sandbox_kit import TICKET_PENDING, ServerThread
from app.sandbox.gateway import GatewaySandbox
from app.sandbox.registry import RegistrySandbox
from app.sandbox.sunat import SunatSandbox

ROOT = Path(__file__).resolve().parents[2]
ISSUER = "20100066603"
PASSPHRASE = "frase secreta del soak"
START_TIMEOUT_S = 60.0
SETTINGS = {"sunat_timeout_s": "3", "sunat_retry_base_s": "0.5", "sunat_retry_max_s": "4", "api_port": "0",
            "registry_timeout_s": "3"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def process_env(home: Path) -> dict[str, str]:
    """Every process of the soak: the temp data folder, the passphrase from the environment, no system keyring."""
    return {**os.environ, "YUPANA_HOME": str(home), "YUPANA_PASSPHRASE": PASSPHRASE, "YUPANA_KEYRING": "0",
            "PYTHONPATH": str(ROOT)}


class SoakSunat(SunatSandbox):
    """The SUNAT sandbox, noting each summary whose sendSummary answer the fault injector dropped (only those may
    leave a voucher «Baja por confirmar» at the end: `dropped_summaries`) and each whose final ticket answer reached
    the app whole (`told`: the soak waits for them before it stops the app)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dropped_summaries: set[str] = set()
        self._taken = threading.local()  # the failure the request in this handler thread took
        desk_send = self.summaries.send_summary

        def send_summary(request: Any, ruc: str, fields: dict[str, str]) -> bytes | None:
            self._taken.mode = None
            try:
                return desk_send(request, ruc, fields)
            finally:
                if self._taken.mode == "drop_after_receive":
                    stem = fields.get("fileName", "").removesuffix(".zip")
                    with self.lock:
                        self.dropped_summaries.add(stem.split("-", 1)[1])

        self.summaries.send_summary = send_summary  # type: ignore[method-assign]
        self.told: set[str] = set()  # tickets whose final answer (accepted or rejected) went back whole to the app
        desk_status = self.summaries.get_status

        def get_status(request: Any, ruc: str, fields: dict[str, str]) -> bytes | None:
            self._taken.mode = None
            answer = desk_status(request, ruc, fields)
            ticket = self.summaries.ticket(fields.get("ticket", "").strip())
            if answer is not None and self._taken.mode is None and ticket is not None \
                    and ticket.status != TICKET_PENDING:
                with self.lock:
                    self.told.add(ticket.ident)
            return answer

        self.summaries.get_status = get_status  # type: ignore[method-assign]

    def next_failure(self, operation: str = "sendBill") -> str | None:
        mode = super().next_failure(operation)
        if operation in ("sendSummary", "getStatus"):
            self._taken.mode = mode
        return mode


class Subscriber:
    """A webhook subscriber on loopback (port 0): answers 204 after `delay_s`, keeps each delivery's webhook-id by
    the sender in its payload (each soak message has its own: scripts/soak/shop.sender)."""

    def __init__(self, name: str, delay_s: float) -> None:
        self.name = name
        self.delay_s = delay_s
        self.lock = threading.Lock()
        self.received: dict[str, set[str]] = {}
        self.posts = 0
        self._server = ServerThread(f"soak-{name}")

    def start(self) -> str:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
                pass

            def handle(self) -> None:
                try:
                    super().handle()
                except (ConnectionResetError, BrokenPipeError):
                    pass  # the app was killed mid-delivery: it sends it again after a restart

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                time.sleep(owner.delay_s)  # the slow subscriber's whole point
                owner.record(self.headers.get("webhook-id", ""), body)
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

        return self._server.start("127.0.0.1", 0, Handler) + "/hooks"

    def record(self, webhook_id: str, body: bytes) -> None:
        try:
            sender = str(json.loads(body)["data"]["from"])
        except (ValueError, KeyError, TypeError):
            sender = "?"
        with self.lock:
            self.posts += 1
            self.received.setdefault(sender, set()).add(webhook_id)

    def has(self, sender: str) -> bool:
        with self.lock:
            return sender in self.received

    def snapshot(self) -> dict[str, set[str]]:
        with self.lock:
            return {k: set(v) for k, v in self.received.items()}

    def stop(self) -> None:
        self._server.stop()


class Stage:
    """The sandboxes and the data folder, set up as a shop in sandbox mode with a test certificate."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.sunat = SoakSunat(hold_limit_s=4, ticket_delay_s=0.5)
        self.registry = RegistrySandbox()
        self.gateway = GatewaySandbox()
        self.listener_port = free_port()
        self.token = ""
        self.certificado_id = ""

    def start(self) -> None:
        for sandbox in (self.sunat, self.registry, self.gateway):
            sandbox.start()
        with Engine(self.home) as engine:
            engine.admin.set_company(Company(ruc=ISSUER, razon_social="BODEGA DEL SOAK S.A.C.", ubigeo="150101",
                                             direccion="AV. ABANCAY 123", nombre_comercial="SOAK"))
            self.certificado_id = engine.invoicing.create_test_certificate(ISSUER).certificado_id
            for name, value in {**SETTINGS, "listener_port": str(self.listener_port)}.items():
                engine.admin.config_set(name, value)
            for sandbox in (self.sunat, self.registry, self.gateway):
                sandbox.configure(engine)  # the gateway registers the listener's address for instance demo
            self.token = engine.admin.api_token()

    def stop(self) -> None:
        for sandbox in (self.gateway, self.registry, self.sunat):
            sandbox.stop()


class AppDown(Exception):
    """The app did not answer (killed, or starting again)."""


class AppProcess:
    """`yupana serve --port 0` on the stage's data folder: started, SIGKILLed, restarted; its API's address and its
    memory (VmRSS) read from the outside. `up` is set while a started process has printed its addresses."""

    def __init__(self, home: Path, logs: Path) -> None:
        self.home = home
        self.logs = logs
        self.process: subprocess.Popen[str] | None = None
        self.api_url = ""
        self.listener_url: str | None = None
        self.starts = 0
        self.listener_missing = 0
        self.up = threading.Event()
        self.lock = threading.Lock()

    def start(self) -> None:
        self.starts += 1
        stderr = open(self.logs / f"serve-{self.starts}.log", "w", encoding="utf-8")  # noqa: SIM115 - the child's
        process = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", "0"], cwd=ROOT,
                                   env=process_env(self.home), stdout=subprocess.PIPE, stderr=stderr, text=True)
        stderr.close()
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_pump, args=(process, lines), daemon=True).start()
        urls = _addresses(process, lines)
        with self.lock:
            self.process = process
            self.api_url = urls["api"]
            self.listener_url = urls.get("listener")
        if self.listener_url is None:
            self.listener_missing += 1
        self.up.set()

    def kill(self) -> None:
        self.up.clear()
        with self.lock:
            process = self.process
        if process is not None and process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(30)

    def stop(self) -> None:
        """SIGTERM: the app closes its engine as a shop closing for the night would."""
        self.up.clear()
        with self.lock:
            process = self.process
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)

    def rss_kb(self) -> int:
        with self.lock:
            pid = self.process.pid if self.process else None
        if pid is None:
            return 0
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0


def _pump(process: subprocess.Popen[str], lines: queue.Queue[str]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        lines.put(line)
    lines.put("")


def _addresses(process: subprocess.Popen[str], lines: queue.Queue[str]) -> dict[str, str]:
    """The API's and the listener's base URLs as `yupana serve` prints them (the listener may be missing: its port
    still held, the app says why on stderr and serves the API all the same)."""
    urls: dict[str, str] = {}
    deadline = time.monotonic() + START_TIMEOUT_S
    while "listener" not in urls:
        wait = deadline - time.monotonic() if "api" not in urls else min(3.0, deadline - time.monotonic())
        try:
            line = lines.get(timeout=max(0.1, wait))
        except queue.Empty:
            if "api" in urls:
                return urls
            process.kill()
            raise RuntimeError("yupana serve did not print its address in time") from None
        if not line:
            if "api" in urls:
                return urls
            raise RuntimeError(f"yupana serve ended early (exit {process.wait()})")
        entry = json.loads(line)
        urls[entry["name"]] = entry["base_url"]
    return urls


class Api:
    """The local HTTP API as a point of sale calls it: a connection error means the app is down; the caller waits
    for it to be up again and repeats the same request (every operation the soak repeats is idempotent)."""

    def __init__(self, app: AppProcess, token: str) -> None:
        self.app = app
        self.client = httpx.Client(timeout=30.0, headers={"Authorization": f"Bearer {token}"})

    def call(self, method: str, path: str, body: dict[str, Any] | None = None,
             stop: threading.Event | None = None) -> tuple[int, dict[str, Any]]:
        while True:
            if not self.app.up.wait(1.0):
                if stop is not None and stop.is_set():
                    raise AppDown(path)
                continue
            try:
                response = self.client.request(method, self.app.api_url + path, json=body)
                return response.status_code, response.json()
            except (httpx.TransportError, ValueError):
                if stop is not None and stop.is_set():
                    raise AppDown(path) from None
                time.sleep(0.2)  # killed under us: wait for the restart

    def close(self) -> None:
        self.client.close()
