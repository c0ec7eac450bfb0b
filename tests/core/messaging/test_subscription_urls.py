"""Operation 5 checks the subscriber's URL when it is registered (issue 30, item 5): http or https in any case, a
host, no credentials, no control characters, at most 2,048 characters; link-local and multicast destinations
refused, loopback and the LAN allowed. Through the engine's operation (the same path as the local API's
`POST /api/v1/chat/webhook`), against the gateway sandbox."""

from __future__ import annotations

import pytest

from app.core.errors import YupanaError
from app.core.messaging.service import MAX_URL_CHARS, check_url

EVENTS = ["message.received"]


def register(engine, url: str) -> tuple[int, dict]:
    return engine.call("chat-webhook", {"instance": "demo", "url": url, "events": EVENTS})


@pytest.mark.parametrize("url", [
    "HTTP://127.0.0.1:8080/hooks",  # a scheme in upper case is valid (RFC 3986, 3.1)
    "Https://caja.mi-tienda.pe/yupana",
    "http://localhost:9000/hooks",
    "http://[::1]:9000/hooks",
    "http://192.168.1.20/hooks",  # the point of sale on the shop's network
    "http://10.0.0.5:8080/hooks",
    "http://172.16.4.2/hooks",
    "http://[fd12:3456:789a::1]/hooks",  # IPv6 unique local (a LAN)
    "https://erp.example.com/hooks?" + "a" * (MAX_URL_CHARS - len("https://erp.example.com/hooks?")),  # 2,048
])
def test_a_url_a_subscriber_can_be_reached_at_is_accepted(messaging_engine, url):
    status, answer = register(messaging_engine, url)
    assert status == 200, answer
    assert answer["data"]["url"] == url and answer["data"]["id"].startswith("sub_")
    assert [s.url for s in messaging_engine.messaging.subscriptions()] == [url]


@pytest.mark.parametrize("url, words", [
    ("http://127.0.0.1:8080/hooks\r\nX-Inyectada: 1", "caracteres de control"),
    ("http://127.0.0.1:8080/ho\x00oks", "caracteres de control"),
    ("http://127.0.0.1:8080/ho\toks", "caracteres de control"),
    ("https://erp.example.com/hooks?" + "a" * (MAX_URL_CHARS + 1 - len("https://erp.example.com/hooks?")),
     "tiene 2049 caracteres"),
    ("https://erp.example.com/hooks?" + "a" * 100_000, "hasta 2048"),
    ("http://usuario:clave@erp.example.com/hooks", "usuario ni contraseña"),
    ("http://usuario@erp.example.com/hooks", "usuario ni contraseña"),
    ("http://169.254.169.254/latest/meta-data", "enlace local"),  # a cloud's metadata service
    ("http://169.254.0.1:8080/hooks", "enlace local"),
    ("http://2852039166/latest/meta-data", "enlace local"),  # 169.254.169.254 written as one number
    ("http://[fe80::1]/hooks", "enlace local"),
    ("http://[::ffff:169.254.169.254]/hooks", "enlace local"),
    ("http://224.0.0.1/hooks", "multidifusión"),
    ("http://239.255.255.250:1900/hooks", "multidifusión"),
    ("http://[ff02::1]/hooks", "multidifusión"),
    ("http://0.0.0.0:8080/hooks", "sin especificar"),
    ("ftp://erp.example.com/hooks", "http:// o https://"),
    ("javascript:alert(1)", "http:// o https://"),
    ("erp.example.com/hooks", "http:// o https://"),
    ("http:///hooks", "http:// o https://"),
    ("http://erp.example.com:99999/hooks", "http:// o https://"),
    ("http://[::1/hooks", "http:// o https://"),
    ("", "http:// o https://"),
])
def test_a_url_no_delivery_could_use_is_a_spanish_400_naming_the_field_and_the_value(messaging_engine, url, words):
    status, answer = register(messaging_engine, url)
    assert status == 400 and answer["error"]["code"] == "INVALID_INPUT", answer
    message = answer["error"]["message"]
    assert words in message and "«url»" in message
    assert answer["error"]["details"][0]["field"] == "url"
    assert "\r" not in message and "\n" not in message and "\x00" not in message  # written out, never raw
    shown = url.strip()[:60].replace("\r", "\\r").replace("\n", "\\n").replace("\x00", "\\x00").replace("\t", "\\t")
    assert shown in message  # the value, as typed…
    assert len(message) < 600  # …cut when long
    assert messaging_engine.messaging.subscriptions() == []


def test_the_gateway_address_takes_a_scheme_in_any_case_and_still_refuses_control_characters():
    assert check_url("base_url", "HTTPS://evolution.mi-empresa.pe") == "HTTPS://evolution.mi-empresa.pe"
    with pytest.raises(YupanaError) as caught:
        check_url("media_url", "https://cdn.example.com/F001-1.pdf\r\nHost: otro")
    assert caught.value.details[0].field == "media_url" and "caracteres de control" in caught.value.message
