"""Messaging instances, their messages and their operation-5 subscriptions belong to one environment, and the
sandbox gateway's «demo» lives only while its sandbox runs (docs/architecture.md, «Entornos»; issue 16).

Real parts throughout: the Evolution-compatible gateway sandbox, the engine's listener on port 0, a subscriber
server, `yupana sandbox gateway --configure` as a real process (stopped, then killed).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from app.core.engine import Engine
from app.core.errors import ErrorCode, YupanaError
from app.core.messaging.service import secret_name
from app.core.platform.processes import HOST
from app.sandbox.gateway import DEMO_INSTANCE
from tests.helpers.base import ROOT


def _names(engine) -> list[str]:
    return [row.name for row in engine.messaging.instances()]


def test_an_instance_of_the_sandbox_is_invisible_and_unusable_in_beta_and_back_in_the_sandbox(
        messaging_engine, gateway, subscriber):
    engine = messaging_engine
    gateway.create_instance("tienda", apikey="clave-tienda")
    engine.messaging.save_instance("tienda", "evolution", gateway.base_url, {"apikey": "clave-tienda"})
    engine.messaging.register_webhook("tienda")
    engine.messaging.subscribe({"instance": "tienda", "url": subscriber.url, "events": ["message.received"]})
    engine.messaging.send_message("tienda", "+51987111222", "Hola desde el sandbox")
    gateway.wait_sent(1)
    assert gateway.emit("message.received", "tienda", body="Primera") == [200]
    subscriber.wait(1)
    assert sorted(_names(engine)) == [DEMO_INSTANCE, "tienda"]

    engine.admin.config_set("environment", "beta")
    assert _names(engine) == []  # not listed
    assert engine.messaging.conversations() == [] and engine.messaging.messages("tienda") == []
    assert engine.messaging.subscriptions() == []
    status, envelope = engine.call("chat-send", {"instance": "tienda", "to": "+51987111222", "message": "x"})
    assert status == 404 and "entorno" in envelope["error"]["message"]
    status, envelope = engine.call("chat-webhook", {"instance": "tienda", "url": subscriber.url,
                                                    "events": ["message.read"]})
    assert status == 404
    with pytest.raises(YupanaError) as refused:
        engine.messaging.test_connection("tienda")
    assert refused.value.code == ErrorCode.NOT_FOUND
    with pytest.raises(YupanaError) as taken:  # the name is the sandbox's: beta makes its own instances
        engine.messaging.save_instance("tienda", "evolution", "https://evolution.example.pe", {"apikey": "k"})
    assert taken.value.code == ErrorCode.CONFLICT
    assert len(gateway.sent_messages()) == 1  # nothing was sent from beta
    # The gateway still posts (the listener keeps it, in the instance's environment), but beta neither shows it
    # nor delivers it to the sandbox's subscriber: the delivery waits for its environment.
    rounds = engine._forwarder.rounds
    assert gateway.emit("message.received", "tienda", body="Mientras tanto") == [200]
    assert engine._forwarder.wait_round(rounds)
    assert engine.messaging.conversations() == []
    assert len(subscriber.received) == 1
    assert engine._messaging.store.next_due_at() is None  # nothing due in beta

    engine.admin.config_set("environment", "sandbox")
    assert sorted(_names(engine)) == [DEMO_INSTANCE, "tienda"]  # back, nothing deleted
    bodies = [m.body for m in engine.messaging.messages("tienda")]
    assert bodies == ["Hola desde el sandbox", "Primera", "Mientras tanto"]
    assert [s.instance for s in engine.messaging.subscriptions()] == ["tienda"]
    assert json.loads(subscriber.wait(2)[1][1])["data"]["body"] == "Mientras tanto"  # the waiting one goes now
    engine.messaging.send_message("tienda", "+51987111222", "De vuelta")
    assert [m["text"] for m in gateway.wait_sent(2)] == ["Hola desde el sandbox", "De vuelta"]


def test_an_instance_made_in_beta_stays_in_beta(messaging_engine, gateway):
    engine = messaging_engine
    engine.admin.config_set("environment", "beta")
    gateway.create_instance("caja", apikey="clave-caja")
    engine.messaging.save_instance("caja", "evolution", gateway.base_url, {"apikey": "clave-caja"})
    engine.messaging.send_message("caja", "+51987111222", "Desde beta")
    assert _names(engine) == ["caja"]
    engine.admin.config_set("environment", "sandbox")
    assert "caja" not in _names(engine)
    assert [m.peer for m in engine.messaging.messages()] == []  # beta's message is not the sandbox's
    engine.admin.config_set("environment", "beta")
    assert [m.body for m in engine.messaging.messages("caja")] == ["Desde beta"]


def test_the_demo_instance_goes_when_the_sandbox_mode_stops(engine):
    from app.sandbox.mode import SandboxMode

    sandboxes = SandboxMode(engine)
    sandboxes.start()
    assert DEMO_INSTANCE in _names(engine)
    assert engine._secrets.get(secret_name(DEMO_INSTANCE, "apikey")) is not None
    sandboxes.stop()
    assert DEMO_INSTANCE not in _names(engine)
    assert engine._messaging.store.instance(DEMO_INSTANCE, anywhere=True) is None
    assert engine._secrets.get(secret_name(DEMO_INSTANCE, "apikey")) is None
    assert engine._secrets.get(secret_name(DEMO_INSTANCE, "webhook_token")) is None


def test_the_sandbox_demo_instance_is_made_for_the_sandbox_while_the_folder_works_in_beta(engine, gateway):
    engine.admin.config_set("environment", "beta")
    gateway.configure(engine)
    assert _names(engine) == []  # the sandbox's, not beta's
    engine.admin.config_set("environment", "sandbox")
    assert _names(engine) == [DEMO_INSTANCE]
    gateway.unconfigure(engine)
    assert _names(engine) == []


def _start_gateway_sandbox(home) -> subprocess.Popen:
    """`yupana sandbox gateway --configure` in its own process; returns once it serves."""
    env = {**os.environ, "YUPANA_HOME": str(home)}
    process = subprocess.Popen([sys.executable, "-m", "app", "sandbox", "gateway", "--configure"], cwd=ROOT,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    assert line and json.loads(line)["name"] == "gateway", process.stderr.read()
    return process


def _demo_rows(home) -> list[tuple]:
    from app.core.platform.paths import database_path

    with sqlite3.connect(f"file:{database_path(home)}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT name, environment, owner FROM messaging_instances").fetchall()


def _finish(process: subprocess.Popen) -> None:
    process.wait(20)
    process.stdout.close()
    process.stderr.close()


@pytest.mark.slow
def test_the_demo_instance_goes_when_yupana_sandbox_stops_and_after_it_was_killed(home):
    with Engine(home):
        pass  # the folder exists, migrated
    stopped = _start_gateway_sandbox(home)
    [(name, environment, owner)] = _demo_rows(home)
    assert (name, environment, owner) == (DEMO_INSTANCE, "sandbox", f"{HOST}/{stopped.pid}:sandbox")
    stopped.send_signal(signal.SIGTERM)  # a normal stop: it takes its instance along
    _finish(stopped)
    assert stopped.returncode == 0
    assert _demo_rows(home) == []

    killed = _start_gateway_sandbox(home)
    assert [row[0] for row in _demo_rows(home)] == [DEMO_INSTANCE]
    killed.kill()  # no chance to clean up
    _finish(killed)
    assert [row[0] for row in _demo_rows(home)] == [DEMO_INSTANCE]  # left behind…
    with Engine(home) as engine:  # …until the next engine opens the folder
        assert engine._messaging.store.instance(DEMO_INSTANCE, anywhere=True) is None
        assert engine._secrets.get(secret_name(DEMO_INSTANCE, "apikey")) is None
    assert _demo_rows(home) == []


def test_a_running_sandbox_keeps_its_demo_when_another_engine_opens_the_folder(messaging_engine, home):
    with Engine(home) as other:
        assert DEMO_INSTANCE in _names(other)  # this process runs it: not purged
    assert DEMO_INSTANCE in _names(messaging_engine)


def test_a_folder_of_the_previous_version_puts_its_instances_in_its_environment(tmp_path):
    import sqlite_utils

    from app.core.platform.paths import database_path
    from app.core.storage.sqlite.migrations import SETS

    home = tmp_path / "old"
    home.mkdir()
    db = sqlite_utils.Database(sqlite3.connect(database_path(home), isolation_level=None))
    for migrations in SETS:  # the folder as the previous version left it
        migrations.apply(db, stop_before={"m002_environment"})
    db.execute("INSERT INTO settings (key, value) VALUES ('environment', 'beta')")
    for name, base_url in (("tienda", "https://evolution.example.pe"), ("demo", "http://127.0.0.1:40123")):
        db.execute("INSERT INTO messaging_instances (name, gateway, base_url) VALUES (?, 'evolution', ?)",
                   (name, base_url))
        db.execute("INSERT INTO messages (id, instance, direction, peer, status, timestamp) VALUES (?, ?, 'out', "
                   "'+51987111222', 'sent', 1)", (f"msg_{name}", name))
    db.execute("INSERT INTO subscriptions (id, instance, url, events) VALUES ('sub_1', 'tienda', "
               "'https://crm.example.pe/hooks', '[\"message.received\"]')")
    db.conn.close()
    with Engine(home) as engine:
        assert _names(engine) == ["tienda"]  # the folder's environment; the sandbox's stale demo is purged
        assert engine._messaging.store.instance("demo", anywhere=True) is None
        assert [m.id for m in engine.messaging.messages()] == ["msg_tienda"]
        assert [s.id for s in engine.messaging.subscriptions()] == ["sub_1"]
        engine.admin.config_set("environment", "sandbox")
        assert [m.id for m in engine.messaging.messages()] == ["msg_demo"]  # the demo's history stays there
