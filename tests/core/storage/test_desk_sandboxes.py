"""Each desk's sandboxes are its own (issue 34, item 2): two desks on one shared PostgreSQL, each training against the
SUNAT sandbox running on its own computer, send each to its own; one stopping its sandbox leaves the other's alone.
Their addresses are kept in each desk's folder (beside puesto.json), never in the table the desks share."""

from __future__ import annotations

import pytest

from app.core.platform.companies import Company
from app.core.platform.environments import DESK_SANDBOX_FILE
from app.sandbox.sunat import SunatSandbox
from tests.helpers.postgres import desk_engine
from tests.helpers.voucher_matrix import factura, item

pytestmark = pytest.mark.postgres

RUC = "20100066603"


def test_two_desks_each_send_to_their_own_sandbox(postgres_server, tmp_path, monkeypatch):
    monkeypatch.setenv("YUPANA_PASSPHRASE", "frase de la prueba de los sandbox")
    monkeypatch.setenv("YUPANA_KEYRING", "0")
    url = postgres_server.fresh_database()
    with SunatSandbox() as first_sunat, SunatSandbox() as second_sunat:
        first = desk_engine(tmp_path / "caja1", url)
        try:
            second = desk_engine(tmp_path / "caja2", url)
            try:
                first.admin.set_company(Company(ruc=RUC, razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                                direccion="AV. ABANCAY 123"))
                first.invoicing.create_test_certificate(RUC)
                first_sunat.configure(first)
                second_sunat.configure(second)  # the second desk's, configured last: the first keeps its own
                assert (tmp_path / "caja1" / DESK_SANDBOX_FILE).exists()
                assert first._storage.query("SELECT key FROM sandbox_endpoints") == []  # nothing shared

                one = first.invoicing.issue(factura("F001", 1, [item("Arroz Costeño 5 kg", "2", "25.37")]))
                two = second.invoicing.issue(factura("F001", 2, [item("Azúcar rubia 1 kg", "3", "4.20")]))
                assert one.outcome is not None and one.outcome.estado == "aceptado"
                assert two.outcome is not None and two.outcome.estado == "aceptado"
                assert set(first_sunat.received_counts) == {f"{RUC}-01-F001-1"}
                assert set(second_sunat.received_counts) == {f"{RUC}-01-F001-2"}

                second_sunat.unconfigure(second)  # the second desk's sandbox stops: the first desk's stays
                three = first.invoicing.issue(factura("F001", 3, [item("Aceite 1 L", "1", "9.90")]))
                assert three.outcome is not None and three.outcome.estado == "aceptado"
                assert f"{RUC}-01-F001-3" in first_sunat.received_counts
                refused = second.invoicing.issue(factura("F001", 4, [item("Sal 1 kg", "1", "1.50")]))
                assert refused.outcome is None and refused.refusal is not None  # no sandbox on this desk: said
                assert "sandbox" in refused.refusal.message
            finally:
                second.close()
        finally:
            first.close()
