"""«Conectar WhatsApp» in the engine (issue 30, item 3): an Evolution instance created with the global key or connected
with its token, its QR followed until the phone scans it, the token kept encrypted; Meta's connection test. Against
the gateway sandbox on 127.0.0.1 (app/sandbox/gateway_pairing.py), whose answers follow Evolution's source (tag 2.3.6:
instance.controller.ts, instance.router.ts, guards/auth.guard.ts, guards/instance.guard.ts) and the error shape of
Meta's «Graph API → Error handling» guide."""

from __future__ import annotations

import base64
import socket

import pytest

from app.core.api import CONNECT, CREATE, ErrorCode, EvolutionPairing, YupanaError, check_meta_number, pairing_case
from app.core.messaging.gateways.evolution_pairing import qr_of
from app.sandbox.gateway import GLOBAL_APIKEY
from app.sandbox.gateway_pairing import META_PHONE_NUMBER_ID, META_TOKEN


@pytest.fixture
def pairing(engine):
    session = EvolutionPairing(engine.messaging)
    yield session
    session.close()


def stored_apikey(engine, name: str) -> str:
    return engine.messaging._service.config(name).credentials["apikey"]


def refusal(call, *args, **kwargs) -> YupanaError:
    with pytest.raises(YupanaError) as caught:
        call(*args, **kwargs)
    return caught.value


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_the_case_follows_what_the_user_has():
    assert pairing_case("clave", "") == CREATE
    assert pairing_case("clave", "token") == CREATE  # the global key can create: it wins
    assert pairing_case("  ", "token") == CONNECT
    assert pairing_case("", " ") == ""


def test_the_global_key_creates_the_instance_keeps_its_token_and_follows_its_qr(engine, gateway, pairing, home):
    state = pairing.start(gateway.base_url + "/", "tienda", global_key=GLOBAL_APIKEY)
    assert (state.case, state.state, state.connected) == (CREATE, "connecting", False)
    shown = gateway.pairing.current_qr("tienda")
    assert state.qr is not None and state.qr.code == shown["code"] and state.qr.count == 1
    assert state.qr.image.startswith("data:image/png;base64,")
    token = gateway.apikey("tienda")
    assert stored_apikey(engine, "tienda") == token != GLOBAL_APIKEY  # the instance's token (`hash`), not the key
    assert token not in repr(pairing) and token not in repr(state)
    assert not any(token.encode() in path.read_bytes() for path in home.rglob("*") if path.is_file())  # encrypted
    assert [(i.name, i.gateway, i.base_url) for i in engine.messaging.instances()] == \
        [("tienda", "evolution", gateway.base_url)]
    assert pairing.poll().qr.code == shown["code"]  # the same QR until Evolution renews it
    renewed = gateway.pairing.renew_qr("tienda")
    assert pairing.poll().qr == qr_of(renewed) and renewed["count"] == 2
    gateway.pairing.scan("tienda")
    done = pairing.poll()
    assert (done.state, done.connected, done.qr, done.notice) == ("open", True, None, "")
    assert engine.messaging.instances()[0].state == "open"  # Mensajes shows it connected


def test_an_instance_token_connects_the_existing_instance_with_a_pairing_code(engine, gateway, pairing):
    gateway.create_instance("caja", state="close")
    state = pairing.start(gateway.base_url, "caja", instance_token=gateway.apikey("caja"), number="987 654 321")
    shown = gateway.pairing.current_qr("caja")
    assert state.case == CONNECT and state.qr.code == shown["code"]
    assert len(state.qr.pairing_code) == 8 and state.qr.pairing_code == shown["pairingCode"]
    assert stored_apikey(engine, "caja") == gateway.apikey("caja")
    gateway.pairing.scan("caja")
    assert pairing.poll().connected


def test_an_instance_already_paired_is_connected_at_once(engine, gateway, pairing):
    gateway.create_instance("abierta")  # the older route's instances are open from the start
    state = pairing.start(gateway.base_url, "abierta", instance_token=gateway.apikey("abierta"))
    assert state.connected and state.qr is None
    assert engine.messaging.instances()[0].state == "open"


def test_the_scan_posts_connection_update_to_a_registered_webhook(messaging_engine, gateway):
    session = EvolutionPairing(messaging_engine.messaging)
    session.start(gateway.base_url, "tienda", global_key=GLOBAL_APIKEY)
    url = messaging_engine.messaging.register_webhook("tienda")
    assert gateway.webhook_of("tienda") == url
    gateway.pairing.scan("tienda")
    assert session.poll().connected
    session.close()


def test_a_wrong_global_key_is_refused_naming_the_key_and_the_server(engine, gateway, pairing):
    error = refusal(pairing.start, gateway.base_url, "tienda", global_key="no-es-la-clave")
    assert error.code == ErrorCode.UPSTREAM_REJECTED
    assert [d.field for d in error.details] == ["global_key"]
    assert "clave global" in error.message and gateway.base_url in error.message
    assert "tienda" not in gateway.instances and engine.messaging.instances() == []
    assert "no-es-la-clave" not in error.message


def test_a_name_in_use_asks_for_another_name_or_the_instance_token(engine, gateway, pairing):
    gateway.create_instance("tienda")
    error = refusal(pairing.start, gateway.base_url, "tienda", global_key=GLOBAL_APIKEY)
    assert error.code == ErrorCode.CONFLICT and error.details[0].field == "instance"
    assert "ya tiene una instancia «tienda»" in error.message and "token" in error.message
    assert engine.messaging.instances() == []


def test_an_unknown_instance_and_a_wrong_token_are_told_apart(engine, gateway, pairing):
    unknown = refusal(pairing.start, gateway.base_url, "nadie", instance_token="un-token")
    assert unknown.code == ErrorCode.NOT_FOUND and unknown.details[0].field == "instance"
    assert "no tiene la instancia «nadie»" in unknown.message
    gateway.create_instance("caja", state="close")
    wrong = refusal(pairing.start, gateway.base_url, "caja", instance_token="otro-token")
    assert wrong.code == ErrorCode.UPSTREAM_REJECTED and wrong.details[0].field == "instance_token"
    assert "«caja»" in wrong.message
    assert engine.messaging.instances() == []  # a token that was not proved is not kept


def test_what_is_typed_is_checked_before_the_server_is_asked(pairing, gateway):
    neither = refusal(pairing.start, gateway.base_url, "tienda")
    assert {d.field for d in neither.details} == {"global_key", "instance_token"}
    assert refusal(pairing.start, "evolution.mi-empresa.pe", "tienda", global_key="k").details[0].field == "base_url"
    bad_name = refusal(pairing.start, gateway.base_url, "mi tienda", global_key="k")
    assert bad_name.details[0].field == "instance" and "«mi tienda»" in bad_name.message
    bad_number = refusal(pairing.start, gateway.base_url, "tienda", global_key="k", number="12")
    assert bad_number.details[0].field == "number" and "«12»" in bad_number.message
    assert gateway.instances == {}
    assert refusal(pairing.poll).details[0].field == "instance"  # nothing started yet


def test_a_server_that_is_not_there_or_not_evolution_is_named(pairing, subscriber):
    down = closed_port_url()
    error = refusal(pairing.start, down, "tienda", global_key="k")
    assert error.code == ErrorCode.UPSTREAM_UNAVAILABLE and error.details[0].field == "base_url"
    assert down in error.message
    other = subscriber.url.rsplit("/", 1)[0]  # an HTTP server that is not Evolution: 501 to everything
    error = refusal(pairing.start, other, "tienda", global_key="k")
    assert other in error.message


def test_qr_of_reads_both_of_evolutions_shapes():
    create = {"instance": {"status": "connecting"}, "hash": "ABC",
              "qrcode": {"pairingCode": None, "code": "2@x,y,z,w", "base64": "data:image/png;base64,AA", "count": 1}}
    assert qr_of(create).code == "2@x,y,z,w" and qr_of(create).pairing_code == "" and qr_of(create).count == 1
    connect = {"pairingCode": "WZYEH1YY", "code": "2@a", "base64": "", "count": 3}
    assert (qr_of(connect).pairing_code, qr_of(connect).count) == ("WZYEH1YY", 3)
    assert qr_of({"instance": {"instanceName": "x", "state": "open"}}) is None
    assert qr_of({"count": 0}) is None and qr_of([]) is None


# ---------------------------------------------------------------- Meta's connection test


def graph(gateway) -> str:
    return gateway.base_url + "/v21.0"


def test_meta_accepts_the_right_token_and_phone_number_id(gateway):
    number = check_meta_number(f" {META_TOKEN} ", META_PHONE_NUMBER_ID, graph(gateway))
    assert (number.id, number.display_phone_number, number.quality_rating) == \
        (META_PHONE_NUMBER_ID, "+51 987 654 321", "GREEN")
    assert number.verified_name


def test_meta_refusals_are_spanish_and_name_the_field(gateway):
    token = refusal(check_meta_number, "EAAG-vencido", META_PHONE_NUMBER_ID, graph(gateway))
    assert token.code == ErrorCode.UPSTREAM_REJECTED and token.details[0].field == "token"
    assert "token de acceso" in token.message and "código 190" in token.message
    assert "EAAG-vencido" not in token.message  # a token is never repeated
    unknown = refusal(check_meta_number, META_TOKEN, "999888777", graph(gateway))
    assert unknown.code == ErrorCode.NOT_FOUND and unknown.details[0].field == "phone_number_id"
    assert "«999888777»" in unknown.message and "código 100" in unknown.message
    typed = refusal(check_meta_number, META_TOKEN, "+51 987 654 321", graph(gateway))
    assert typed.details[0].field == "phone_number_id" and "«+51 987 654 321»" in typed.message
    assert refusal(check_meta_number, "", META_PHONE_NUMBER_ID, graph(gateway)).details[0].field == "token"
    down = closed_port_url()
    assert refusal(check_meta_number, META_TOKEN, META_PHONE_NUMBER_ID, down).details[0].field == "base_url"


def test_evolution_s_own_picture_is_handed_as_png_bytes():
    from app.core.messaging.gateways.evolution_pairing import QrCode

    picture = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
    image = "data:image/png;base64," + base64.b64encode(picture).decode()
    assert QrCode(image=image).png() == picture
    assert QrCode(image="data:image/png;base64,@@@").png() == b"" and QrCode().png() == b""
