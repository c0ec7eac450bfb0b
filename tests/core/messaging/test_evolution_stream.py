"""Events through an outbound connection (issue 30, item 2): Evolution's Socket.IO stream read by the python-socketio
client, against the gateway sandbox's stream (a real Socket.IO server on 127.0.0.1, port 0).

What the sandbox plays, from Evolution API v2's source (github.com/EvolutionAPI/evolution-api, tag 2.3.6):

- src/api/integrations/event/websocket/websocket.controller.ts: Socket.IO on the server's own address when
  `WEBSOCKET_ENABLED`; `allowRequest` takes an `apikey` header (an instance's token or the global key); `emit` sends
  `{event, instance, data, server_url, date_time, sender, apikey}` to `/<instance>` when the instance's stream is on
  with the event (its name upper-cased, `.` → `_`), and to `/` too when `WEBSOCKET_GLOBAL_EVENTS`; nothing is kept
  for a client that is not connected;
- src/api/integrations/event/event.controller.ts and event.schema.ts: `POST /websocket/set/{instance}`
  `{websocket: {enabled, events}}`, events from `EventController.events` (a name outside it: 400 with the JSON
  schema's message, src/api/abstract/abstract.router.ts), an empty list meaning all; a server without the stream
  returns nothing (an empty 201);
- src/api/services/channel.service.ts (`fetchMessages`) and chat.router.ts: `POST /chat/findMessages/{instance}`
  `{where: {messageTimestamp: {gte, lte}}, page, offset}`, the filter applied only with both bounds, newest first,
  answered as `{messages: {total, pages, currentPage, records}}`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter

import pytest

from app.core.api import ErrorCode, YupanaError, events
from app.core.messaging.evolution_stream import backoff_s
from app.core.messaging.gateways.evolution import STREAM_OFF
from app.sandbox.gateway import GLOBAL_APIKEY
from tests.helpers.base import ROOT
from tests.helpers.messaging_support import wait_for

INSTANCE = "tienda"
NAMESPACE = "/" + INSTANCE


def received_bodies(engine, instance: str = INSTANCE) -> Counter:
    """How many times each received text was stored for the instance."""
    return Counter(m.body for m in engine.messaging.messages(instance) if m.direction == "in")


def save_streaming(engine, gateway, instance: str = INSTANCE, via: str = "stream") -> None:
    """An Evolution instance on the gateway sandbox whose events come by the stream; its stream turned on."""
    gateway.create_instance(instance)
    engine.messaging.save_instance(instance, "evolution", gateway.base_url, {"apikey": gateway.apikey(instance)},
                                   {"events_via": via})
    engine.messaging.register_webhook(instance)  # websocket/set for an instance that streams


@pytest.fixture
def streaming(engine, gateway):
    """The engine's receiver running (listener on port 0 and the streams), `tienda` streaming and connected."""
    save_streaming(engine, gateway)
    engine.admin.config_set("listener_port", "0")
    engine.messaging.start_listener()
    assert gateway.stream.wait_clients(NAMESPACE, 1)
    wait_for(lambda: stream_is(engine, "connected"))
    return engine


def stream_is(engine, state: str):
    """The instance's stream state if it is `state` (else None: wait_for goes on)."""
    found = engine.messaging.stream_state(INSTANCE)
    return found if found is not None and found.state == state else None


def test_the_stream_is_turned_on_at_evolution_with_the_events_yupana_reads(engine, gateway):
    save_streaming(engine, gateway)

    status, found = gateway.stream.answer("websocket/find", INSTANCE, {})
    assert found["enabled"] is True
    assert found["events"] == ["MESSAGES_UPSERT", "MESSAGES_UPDATE", "CONNECTION_UPDATE"]
    assert gateway.webhook_of(INSTANCE) is None  # no URL registered that a hosted Evolution could not reach


def test_messages_streamed_while_connected_are_stored_once(streaming, gateway):
    engine = streaming
    gateway.emit("message.received", INSTANCE, body="uno")
    gateway.emit("message.received", INSTANCE, body="dos", message_id="3EB0DUPLICADO0001", times=3)
    gateway.emit("message.received", INSTANCE, body="tres")

    wait_for(lambda: sum(received_bodies(engine).values()) >= 3)
    assert received_bodies(engine) == {"uno": 1, "dos": 1, "tres": 1}
    assert gateway.stream.finds == 0  # nothing missed: stored from the stream itself


def test_the_client_stopped_messages_emitted_meanwhile_then_restart_every_message_stored_once(streaming, gateway):
    engine = streaming
    gateway.emit("message.received", INSTANCE, body="antes 1")
    gateway.emit("message.received", INSTANCE, body="antes 2")
    wait_for(lambda: sum(received_bodies(engine).values()) == 2)
    sent = engine.messaging.send_message(INSTANCE, "+51911222333", "Su factura F001-1")

    engine.messaging.stop_listener()  # the receiver (listener and streams) stops: the client disconnects
    assert gateway.stream.wait_clients(NAMESPACE, 0)
    for text in ("durante 1", "durante 2", "durante 3"):
        gateway.emit("message.received", INSTANCE, body=text)
    gateway.emit("message.delivered", INSTANCE)  # a status during the gap: lost (docs/messaging.md)
    gateway.emit("instance.disconnected", INSTANCE)  # a connection change during the gap: its state is re-read
    assert sum(received_bodies(engine).values()) == 2  # nobody was listening

    engine.messaging.start_listener()
    wait_for(lambda: sum(received_bodies(engine).values()) == 5)
    gateway.emit("message.received", INSTANCE, body="después")
    wait_for(lambda: sum(received_bodies(engine).values()) == 6)

    assert received_bodies(engine) == {"antes 1": 1, "antes 2": 1, "durante 1": 1, "durante 2": 1, "durante 3": 1,
                                       "después": 1}
    assert gateway.stream.finds >= 1  # the gap came from findMessages
    # The live event can be stored before the round that caught up says so (it still re-reads the instance's state)
    wait_for(lambda: engine.messaging.stream_state(INSTANCE).caught_up == 3)
    ours = next(m for m in engine.messaging.messages(INSTANCE) if m.id == sent.id)
    assert ours.status == "sent"  # the delivery emitted during the gap is not recoverable
    wait_for(lambda: next(i for i in engine.messaging.instances() if i.name == INSTANCE).state == "close")


def test_a_connection_dropped_by_the_server_reconnects_and_misses_nothing(streaming, gateway):
    engine = streaming
    gateway.emit("message.received", INSTANCE, body="primero")
    wait_for(lambda: received_bodies(engine))

    gateway.stream.stop()  # Evolution drops every connection (a restart of its server)
    for text in ("a", "b", "c"):
        gateway.emit("message.received", INSTANCE, body=text)  # streamed to nobody, or to the new connection

    wait_for(lambda: sum(received_bodies(engine).values()) == 4)
    assert received_bodies(engine) == {"primero": 1, "a": 1, "b": 1, "c": 1}
    assert gateway.stream.wait_clients(NAMESPACE, 1)
    assert wait_for(lambda: stream_is(engine, "connected"))


def test_each_change_of_a_streams_state_is_told_on_the_bus(engine, gateway):
    """Mensajes shows a stream's state from these events alone (StreamChanged, typed): connecting, connected; after
    the server drops it and refuses to come back, reconnecting (waiting, with Evolution's reason); connected again;
    stopped with the receiver."""
    told: list = []
    engine.admin.subscribe(lambda name, payload: told.append(payload.stream)
                           if name == events.STREAM_CHANGED and payload.stream.instance == INSTANCE else None)
    save_streaming(engine, gateway)
    engine.admin.config_set("listener_port", "0")
    engine.messaging.start_listener()
    wait_for(lambda: told and told[-1].state == "connected")
    assert [(s.state, s.reconnecting) for s in told] == [("connecting", False), ("connected", False)]
    assert engine.messaging.stream_states() == [told[-1]]

    gateway.stream.enabled = False  # Evolution restarted without its stream
    gateway.stream.stop()
    waiting = wait_for(lambda: next((s for s in told if s.state == "waiting"), None))
    assert waiting.reconnecting and waiting.detail == STREAM_OFF.format(base=gateway.base_url)
    assert ("connecting", True) in [(s.state, s.reconnecting) for s in told]
    gateway.stream.enabled = True
    wait_for(lambda: told[-1].state == "connected", timeout=15)
    assert not told[-1].reconnecting

    engine.messaging.stop_listener()
    assert (told[-1].state, told[-1].reconnecting) == ("stopped", False)
    assert engine.messaging.stream_states() == []


def test_the_global_namespace_keeps_only_this_instances_events(engine, gateway):
    gateway.stream.global_events = True  # WEBSOCKET_GLOBAL_EVENTS=true
    save_streaming(engine, gateway, via="stream-global")
    gateway.create_instance("otra-empresa")
    engine.admin.config_set("listener_port", "0")
    engine.messaging.start_listener()
    assert gateway.stream.wait_clients("/", 1)

    gateway.emit("message.received", "otra-empresa", body="de otra empresa")
    gateway.emit("message.received", INSTANCE, body="nuestro")

    wait_for(lambda: received_bodies(engine))
    assert received_bodies(engine) == {"nuestro": 1}
    assert "de otra empresa" not in [m.body for m in engine.messaging.messages()]


def test_a_refused_websocket_set_repeats_evolutions_reason(engine, gateway):
    gateway.stream.known_events.remove("MESSAGES_UPDATE")  # an Evolution that does not know one of our events
    gateway.create_instance(INSTANCE)
    engine.messaging.save_instance(INSTANCE, "evolution", gateway.base_url, {"apikey": gateway.apikey(INSTANCE)},
                                   {"events_via": "stream"})

    with pytest.raises(YupanaError) as refused:
        engine.messaging.register_webhook(INSTANCE)

    assert refused.value.message.startswith(f"Evolution rechazó activar el stream de eventos de la instancia "
                                            f"«{INSTANCE}»: websocket.events[1] is not one of enum values")
    assert refused.value.code == ErrorCode.UPSTREAM_REJECTED


def test_a_server_without_the_stream_says_websocket_enabled_is_needed(engine, gateway):
    gateway.stream.enabled = False  # WEBSOCKET_ENABLED=false: no /socket.io/, websocket/set answers an empty 201
    gateway.create_instance(INSTANCE)
    engine.messaging.save_instance(INSTANCE, "evolution", gateway.base_url, {"apikey": gateway.apikey(INSTANCE)},
                                   {"events_via": "stream"})
    expected = STREAM_OFF.format(base=gateway.base_url)

    with pytest.raises(YupanaError) as refused:
        engine.messaging.register_webhook(INSTANCE)
    assert refused.value.message == expected
    assert "WEBSOCKET_ENABLED=true" in expected

    engine.admin.config_set("listener_port", "0")
    engine.messaging.start_listener()  # the stream tries anyway, and says why it cannot connect
    state = wait_for(lambda: stream_is(engine, "waiting"))
    assert state.detail == expected


def test_a_webhook_instance_has_no_stream(messaging_engine, gateway):
    assert messaging_engine.messaging.stream_state("demo") is None
    assert gateway.webhook_of("demo")


def test_the_wait_between_attempts_doubles_up_to_its_cap():
    assert [backoff_s(n, 1.0, 60.0) for n in (1, 2, 3, 4, 5, 6, 7, 8)] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert backoff_s(1, 0.5, 3.0) == 0.5 and backoff_s(4, 0.5, 3.0) == 3.0


# ---------------------------------------------------------------- the client killed (SIGKILL of `yupana serve`)

def serve(home) -> subprocess.Popen:
    env = {**os.environ, "YUPANA_HOME": str(home)}
    return subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", "0"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_the_app_killed_messages_emitted_during_the_gap_restart_every_message_stored_once(home, engine, gateway):
    save_streaming(engine, gateway)
    engine.admin.config_set("listener_port", "0")
    process = serve(home)
    try:
        assert gateway.stream.wait_clients(NAMESPACE, 1, timeout=30)
        gateway.emit("message.received", INSTANCE, body="antes")
        wait_for(lambda: received_bodies(engine) == {"antes": 1}, timeout=20)

        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        assert gateway.stream.wait_clients(NAMESPACE, 0)
        for text in ("gap 1", "gap 2", "gap 3"):
            gateway.emit("message.received", INSTANCE, body=text)
        assert received_bodies(engine) == {"antes": 1}

        process = serve(home)
        wait_for(lambda: sum(received_bodies(engine).values()) == 4, timeout=30)
        gateway.emit("message.received", INSTANCE, body="después")
        wait_for(lambda: sum(received_bodies(engine).values()) == 5, timeout=20)
    finally:
        process.kill()
        process.wait(timeout=10)
    assert received_bodies(engine) == {"antes": 1, "gap 1": 1, "gap 2": 1, "gap 3": 1, "después": 1}


# ---------------------------------------------------------------- the sandbox's findMessages

def test_find_messages_filters_by_both_bounds_and_pages_newest_first(gateway):
    import httpx

    gateway.create_instance(INSTANCE)
    for n in range(7):
        gateway.stream.keep(INSTANCE, {"key": {"id": f"ID{n}", "fromMe": False}, "messageTimestamp": 1000 + n})
    url = f"{gateway.base_url}/chat/findMessages/{INSTANCE}"
    window = {"gte": "1970-01-01T00:16:42.000Z", "lte": "1970-01-01T00:16:45.000Z"}  # 1002 … 1005

    first = httpx.post(url, json={"where": {"messageTimestamp": window}, "page": 1, "offset": 3},
                       headers={"apikey": GLOBAL_APIKEY}).json()["messages"]
    second = httpx.post(url, json={"where": {"messageTimestamp": window}, "page": 2, "offset": 3},
                        headers={"apikey": GLOBAL_APIKEY}).json()["messages"]
    one_bound = httpx.post(url, json={"where": {"messageTimestamp": {"gte": window["gte"]}}},
                           headers={"apikey": GLOBAL_APIKEY}).json()["messages"]

    assert (first["total"], first["pages"]) == (4, 2)
    assert [r["key"]["id"] for r in first["records"] + second["records"]] == ["ID5", "ID4", "ID3", "ID2"]
    assert one_bound["total"] == 7  # Evolution applies the filter only with both bounds
