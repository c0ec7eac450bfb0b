"""Each desk's messaging sandbox is its own (issue 34, item 2): two desks on one shared PostgreSQL, each in sandbox
mode with the gateway sandbox running on its own computer, each get their own sandbox instance (its address and
credentials), send through their own gateway, and neither one's instance replaces or is used by the other's. The
business's real instances stay shared."""

from __future__ import annotations

import pytest

from app.core.errors import YupanaError
from app.sandbox.gateway import DEMO_INSTANCE, GatewaySandbox
from tests.helpers.postgres import desk_engine

pytestmark = pytest.mark.postgres


def _names(engine) -> list[str]:
    return sorted(instance.name for instance in engine.messaging.instances())


def test_two_desks_each_send_through_their_own_messaging_sandbox(postgres_server, tmp_path, monkeypatch):
    monkeypatch.setenv("YUPANA_PASSPHRASE", "frase de la prueba de los sandbox de mensajería")
    monkeypatch.setenv("YUPANA_KEYRING", "0")
    url = postgres_server.fresh_database()
    with GatewaySandbox() as first_gateway, GatewaySandbox() as second_gateway:
        first = desk_engine(tmp_path / "caja1", url)
        try:
            second = desk_engine(tmp_path / "caja2", url)
            try:
                first_gateway.configure(first)
                second_gateway.configure(second)  # configured last: the first desk keeps its own instance
                mine, theirs = first_gateway.instance_name, second_gateway.instance_name
                assert first.messaging.instance_base_url(mine) == first_gateway.base_url  # not replaced
                assert first._messaging.store.instance(mine, anywhere=True)["base_url"] == first_gateway.base_url
                assert second.messaging.instance_base_url(theirs) == second_gateway.base_url
                assert mine != theirs and DEMO_INSTANCE in mine and DEMO_INSTANCE in theirs
                assert mine in _names(first) and theirs not in _names(first)  # each desk sees its own sandbox's
                assert theirs in _names(second) and mine not in _names(second)

                first.messaging.send_message(mine, "+51987654321", "Desde la caja 1")
                second.messaging.send_message(theirs, "+51912345678", "Desde la caja 2")
                assert [m["text"] for m in first_gateway.sent_messages()] == ["Desde la caja 1"]
                assert [m["text"] for m in second_gateway.sent_messages()] == ["Desde la caja 2"]
                with pytest.raises(YupanaError, match="de prueba de otro puesto"):  # never through the other desk's
                    second.messaging.send_message(mine, "+51912345678", "Por la pasarela de la caja 1")
                assert len(first_gateway.sent_messages()) == 1

                # The second desk's listener moves: it tells its own sandbox, never the first desk's.
                told_first = first_gateway.webhook_of(mine)
                second.admin.config_set("listener_public_url", "https://caja2.example.pe")
                assert second.messaging.reregister_webhooks() == []
                assert second_gateway.webhook_of(theirs).startswith("https://caja2.example.pe/")
                assert first_gateway.webhook_of(mine) == told_first

                # A real instance of the business is shared: saved on one desk, seen and used on the other.
                first_gateway.create_instance("tienda")
                first.messaging.save_instance("tienda", "evolution", first_gateway.base_url,
                                              {"apikey": first_gateway.apikey("tienda")})
                assert "tienda" in _names(second)
                second.messaging.send_message("tienda", "+51912345678", "Por la instancia del negocio")
                assert [m["text"] for m in first_gateway.sent_messages("tienda")] == ["Por la instancia del negocio"]

                second_gateway.unconfigure(second)  # the second desk's sandbox stops: the first desk's stays
                assert theirs not in _names(second)
                assert mine in _names(first)
                first.messaging.send_message(mine, "+51987654321", "Sigue en la caja 1")
                assert [m["text"] for m in first_gateway.sent_messages(mine)] == ["Desde la caja 1",
                                                                                  "Sigue en la caja 1"]
            finally:
                second.close()
        finally:
            first_gateway.unconfigure(first)
            first.close()
