"""The listener's port (issue 30, item 6): kept across restarts; when another program holds it, or the user changes it
in Ajustes, a new one is used, the Evolution instances that receive by webhook are told the new URL (failures listed,
never fatal) and the listener's state carries a Spanish notice about what must be changed by hand (Meta, a tunnel).

Real parts: the gateway sandbox (Evolution's webhook/set), the engine's listener and engines reopened on the same data
folder. Ports come from the OS (port 0); a port is made «taken» by a socket this test holds listening on it.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

from app.core.engine import Engine
from app.core.platform import events
from app.sandbox.gateway import DEMO_INSTANCE


def port_of(url: str | None) -> int:
    assert url is not None
    port = urlsplit(url).port
    assert port is not None
    return port


@contextmanager
def held(port: int) -> Iterator[None]:
    """Another program's socket listening on `port` for as long as the block runs."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", port))
        other.listen(1)
        yield


@contextmanager
def dead_address() -> Iterator[str]:
    """An address nothing answers on (bound, never listening: connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def first_run(home, gateway) -> int:
    """An engine whose listener takes a free port (0) and whose sandbox instance is registered with it."""
    engine = Engine(home)
    try:
        engine.admin.config_set("listener_port", "0")
        port = port_of(engine.messaging.start_listener())
        gateway.configure(engine)
        assert port_of(gateway.webhook_of(DEMO_INSTANCE)) == port
    finally:
        engine.close()
    return port


def test_the_port_first_chosen_is_stored_and_reused_at_the_next_start(home, gateway):
    port = first_run(home, gateway)
    engine = Engine(home)
    try:
        assert engine.admin.config_get("listener_port") == str(port)  # the system's pick, kept
        assert port_of(engine.messaging.start_listener()) == port
        state = engine.messaging.listener_state()
        assert state.state == "running" and state.notice is None
        assert port_of(gateway.webhook_of(DEMO_INSTANCE)) == port
        assert gateway.emit("message.received", body="Sigue llegando") == [200]
    finally:
        engine.close()


def test_a_taken_port_is_replaced_the_webhooks_follow_and_the_user_is_told(home, gateway):
    port = first_run(home, gateway)
    engine = Engine(home)
    heard: list[events.ListenerChanged] = []
    engine.admin.subscribe(lambda name, payload: heard.append(payload) if name == events.LISTENER_CHANGED else None)
    try:
        with dead_address() as nowhere:
            engine.messaging.save_instance("caja2", "evolution", nowhere, {"apikey": "k"})  # will not answer
            engine.messaging.save_instance("caja3", "evolution", nowhere, {"apikey": "k"},
                                           {"events_via": "stream"})  # streams: no URL to change
            engine.messaging.save_instance("tienda", "meta", "https://graph.facebook.com/v21.0",
                                           {"token": "t", "app_secret": "s", "verify_token": "v"},
                                           {"phone_number_id": "106540352242922"})
            with held(port):
                moved = port_of(engine.messaging.start_listener())  # started, not refused
        assert moved != port
        assert engine.admin.config_get("listener_port") == str(moved)  # stored: the next start reuses it
        assert port_of(gateway.webhook_of(DEMO_INSTANCE)) == moved
        assert gateway.emit("message.received", body="Llega al puerto nuevo") == [200]
        notice = engine.messaging.listener_state().notice
        assert notice is not None
        assert f"cambió al puerto {moved}" in notice and f"el puerto {port} lo ocupa otro programa" in notice
        assert "Meta" in notice and "túnel" in notice
        assert "«caja2»" in notice and "caja3" not in notice and "tienda" not in notice  # only the failure
        assert heard and heard[-1].listener.notice == notice  # the windows hear it with the state
    finally:
        engine.close()
    engine = Engine(home)
    try:
        assert port_of(engine.messaging.start_listener()) == moved
        assert engine.messaging.listener_state().notice is None  # nothing changed this time
    finally:
        engine.close()


def test_a_port_changed_in_ajustes_re_registers_the_webhooks(engine, gateway):
    engine.admin.config_set("listener_port", "0")
    before = port_of(engine.messaging.start_listener())
    gateway.configure(engine)
    with socket.socket() as probe:  # a port the OS says is free, for the user to type
        probe.bind(("127.0.0.1", 0))
        chosen = probe.getsockname()[1]
    engine.admin.config_set("listener_port", str(chosen))
    state = engine.messaging.listener_state()
    assert state.state == "running" and port_of(state.url) == chosen != before
    assert port_of(gateway.webhook_of(DEMO_INSTANCE)) == chosen
    assert state.notice is not None and f"cambió de {before} a {chosen} en Ajustes" in state.notice
    assert gateway.emit("message.received", body="Tras el cambio") == [200]


def a_free_port() -> int:
    """A port the OS says is free, for the user to type."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_port_changed_while_the_listener_is_stopped_is_registered_at_the_next_start(home, gateway):
    """The port is changed (Ajustes, `yupana config set`) by a run whose listener never starts; the next run starts
    the listener on the new port: the instances receiving by webhook are told, and the user too."""
    port = first_run(home, gateway)
    chosen = a_free_port()
    engine = Engine(home)
    try:
        engine.admin.config_set("listener_port", str(chosen))  # the listener is not running: nothing restarts
        assert engine.messaging.listener_state().state == "stopped"
        assert port_of(gateway.webhook_of(DEMO_INSTANCE)) == port  # the gateway still has the old port
    finally:
        engine.close()
    engine = Engine(home)
    try:
        assert port_of(engine.messaging.start_listener()) == chosen
        assert port_of(gateway.webhook_of(DEMO_INSTANCE)) == chosen
        notice = engine.messaging.listener_state().notice
        assert notice is not None and f"cambió de {port} a {chosen} en Ajustes" in notice
        assert "Meta" in notice and "túnel" in notice
        assert gateway.emit("message.received", body="Tras el cambio con el receptor detenido") == [200]
    finally:
        engine.close()
    engine = Engine(home)
    try:  # told once: the next start on the same port changes nothing
        assert port_of(engine.messaging.start_listener()) == chosen
        assert engine.messaging.listener_state().notice is None
    finally:
        engine.close()


def test_a_port_changed_before_the_first_start_of_this_run_is_registered_at_that_start(home, gateway):
    port = first_run(home, gateway)
    chosen = a_free_port()
    engine = Engine(home)
    try:
        engine.admin.config_set("listener_port", str(chosen))
        assert port_of(engine.messaging.start_listener()) == chosen
        assert port_of(gateway.webhook_of(DEMO_INSTANCE)) == chosen
        notice = engine.messaging.listener_state().notice
        assert notice is not None and f"cambió de {port} a {chosen} en Ajustes" in notice
    finally:
        engine.close()
