"""Messaging through real processes: `yupana serve` stores and forwards, is killed between two attempts
and the delivery still arrives after a restart; `yupana sandbox emit` posts through a running sandbox."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys

import pytest
from standardwebhooks import Webhook

from app.core.messaging import clock
from app.core.platform.paths import database_path
from tests.helpers.base import ROOT, run_cli
from tests.helpers.messaging_support import Subscriber, wait_for


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_serve(home) -> tuple[subprocess.Popen, dict[str, str]]:
    env = {**os.environ, "YUPANA_HOME": str(home)}
    process = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", "0"], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    urls = {}
    while "listener" not in urls:
        line = process.stdout.readline()
        if not line:
            raise AssertionError("yupana serve ended early: " + process.stderr.read())
        entry = json.loads(line)
        urls[entry["name"]] = entry["base_url"]
    return process, urls


def deliveries(home) -> list[dict]:
    with sqlite3.connect(f"file:{database_path(home)}?mode=ro", uri=True) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute("SELECT * FROM deliveries")]


def test_a_delivery_survives_the_app_being_killed_between_attempts(home, gateway, monkeypatch):
    from app.core.engine import Engine

    listener_port, subscriber_port = free_port(), free_port()
    with Engine(home) as engine:
        engine.admin.config_set("listener_port", str(listener_port))
        gateway.configure(engine)
        secret = engine.messaging.subscribe({"instance": "demo", "url": f"http://127.0.0.1:{subscriber_port}/hooks",
                                             "events": ["message.received"]}).secret
    process, urls = start_serve(home)
    try:
        assert urls["listener"] == f"http://127.0.0.1:{listener_port}"
        assert gateway.emit("message.received", "demo", body="Pedido 42") == [200]
        [first] = wait_for(lambda: [d for d in deliveries(home) if d["attempts"] == 1] or None, timeout=20)
        assert first["state"] == "pending" and first["last_status"] is None  # nobody listening yet
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        process.stdout.close()
        process.stderr.close()
    receiver = Subscriber(port=subscriber_port)
    receiver.start()
    try:
        later = first["next_attempt_at"] + 1
        monkeypatch.setattr(clock, "now", lambda: later)  # the restart happens after the retry is due
        with Engine(home) as engine:
            headers, body = receiver.wait(1, timeout=20)[0]
            assert Webhook(secret).verify(body, headers)["data"]["body"] == "Pedido 42"
            assert headers["webhook-id"] == first["id"]
            wait_for(lambda: engine._messaging.store.deliveries()[0]["state"] == "delivered")
            assert engine._messaging.store.deliveries()[0]["attempts"] == 2
    finally:
        receiver.stop()


@pytest.mark.parametrize("times", [1, 2])
def test_yupana_sandbox_emit_posts_through_the_running_gateway(home, gateway, times):
    from app.core.engine import Engine

    with Engine(home) as engine:
        engine.admin.config_set("listener_port", "0")
        engine.messaging.start_listener()
        gateway.configure(engine)
        named = ["--instance", "demo"] if times == 1 else []  # without it: this desk's sandbox instance, `demo`
        result = run_cli("sandbox", "emit", "message.received", *named, "--from", "+51 987 000 333",
                         "--body", "Hola desde la consola", "--name", "Ana", "--message-id", "3EB0CLI",
                         "--times", str(times), home=home)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["listener_status"] == [200] * times
        assert json.loads(result.stdout)["instance"] == "demo"
        [message] = engine.messaging.messages("demo")
        assert (message.peer, message.body, message.name) == ("+51987000333", "Hola desde la consola", "Ana")


def test_yupana_sandbox_emit_names_a_bad_event_or_instance(home):
    result = run_cli("sandbox", "emit", "message.sent", home=home)
    assert result.returncode == 2 and "message.sent" in result.stderr.decode()
    result = run_cli("sandbox", "emit", "message.read", "--instance", "nadie", home=home)
    assert result.returncode == 1 and "nadie" in result.stderr.decode()


def test_the_documented_command_line_flow_sandbox_serve_emit(home):
    """`yupana sandbox --configure` (instance demo), `yupana serve` (listener), `yupana sandbox emit`."""
    port = free_port()
    assert run_cli("config", "set", "listener_port", str(port), home=home).returncode == 0
    env = {**os.environ, "YUPANA_HOME": str(home)}
    sandboxes = subprocess.Popen([sys.executable, "-m", "app", "sandbox", "--configure"], cwd=ROOT, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    serve = None
    try:
        names = set()
        while "gateway" not in names:
            line = sandboxes.stdout.readline()
            assert line, sandboxes.stderr.read()
            names.add(json.loads(line)["name"])
        serve, urls = start_serve(home)
        assert urls["listener"] == f"http://127.0.0.1:{port}"
        result = run_cli("sandbox", "emit", "message.received", "--instance", "demo", "--body", "Hola por consola",
                         "--times", "2", home=home)
        assert result.returncode == 0, result.stderr.decode()
        assert json.loads(result.stdout)["listener_status"] == [200, 200]
        with sqlite3.connect(f"file:{database_path(home)}?mode=ro", uri=True) as conn:
            rows = conn.execute("SELECT direction, body FROM messages WHERE instance = 'demo'").fetchall()
        assert rows == [("in", "Hola por consola")]
    finally:
        for process in (serve, sandboxes):
            if process is not None:
                process.terminate()
                process.wait(10)
                process.stdout.close()
                process.stderr.close()


def test_yupana_serve_moves_the_listener_off_a_taken_port_and_says_so(home):
    """Issue 30, item 6: another program holds the stored port: the listener serves on a free one (stored), and the
    shop is told, in Spanish, that Meta's URL and a tunnel must be changed by hand."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert run_cli("config", "set", "listener_port", str(port), home=home).returncode == 0
        env = {**os.environ, "YUPANA_HOME": str(home)}
        process = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", "0"], cwd=ROOT, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            warning = process.stderr.readline()
            assert warning.startswith("Aviso: El receptor de mensajes cambió al puerto") and str(port) in warning
            assert "Meta" in warning and "túnel" in warning
            assert json.loads(process.stdout.readline())["name"] == "api"
            listener = json.loads(process.stdout.readline())
            moved = int(listener["base_url"].rsplit(":", 1)[1])
            assert listener["name"] == "listener" and moved != port and f"puerto {moved}" in warning
        finally:
            process.terminate()
            process.wait(10)
            process.stdout.close()
            process.stderr.close()
    assert run_cli("config", "get", "listener_port", home=home).stdout.decode().strip() == str(moved)


def test_opening_the_engine_does_not_import_the_web_stack():
    """The listener's FastAPI/uvicorn and the signer load on first use: the window opens without them."""
    code = ("import sys, tempfile; from app.core.engine import Engine; Engine(tempfile.mkdtemp()).close(); "
            "print(sorted(m for m in ('fastapi', 'uvicorn', 'starlette', 'standardwebhooks') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
