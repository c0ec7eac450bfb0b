"""The consulta integrada de validez (app.core.invoicing.validity) against the SUNAT sandbox's REST endpoint, and
the OAuth it shares with the guías (app.core.invoicing.sunat_oauth): client credentials, the token kept and renewed
once on a 401, SUNAT's states (estadoCp 0-4, estadoRuc, condDomiRuc) and its refusals, as SUNAT's «Manual de
consulta integrada de comprobante de pago por servicio web» gives them."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from app.core.errors import ErrorCode, YupanaError
from app.core.invoicing import sunat_catalogues as catalogues
from app.core.invoicing.sunat_oauth import (
    SANDBOX_CLIENT_ID,
    SANDBOX_CLIENT_SECRET,
    VALIDITY_SCOPE,
    Credentials,
    SunatOAuth,
    SunatRefused,
    SunatUnavailable,
    stored_api_credentials,
)
from app.core.invoicing.validity import ValidityClient, ValidityQuery
from app.core.platform import clock
from tests.helpers.base import ISSUER_RUC
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import CUSTOMER_RUC, factura, item

OTHER_COMPANY = "20601030021"  # a RUC that is neither the issuer nor the customer (check digit valid)


def client(sandbox, now=None) -> ValidityClient:
    oauth = SunatOAuth(f"{sandbox.base_url}/v1", Credentials(SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET),
                       **({"now": now} if now else {}), scope=VALIDITY_SCOPE)
    return ValidityClient(f"{sandbox.base_url}/v1", oauth)


def test_the_token_is_asked_once_with_client_credentials_and_renewed_once_on_a_401(voiding, voids_sandbox):
    issued(voiding, factura("F001", 41, [item("Servicio de consultoría", "1", "100")]))
    query = ValidityQuery(ISSUER_RUC, catalogues.FACTURA, "F001", 41, clock.today(), Decimal("118.00"))
    validity = client(voids_sandbox)
    assert validity.oauth.url.endswith(f"/v1/clientesextranet/{SANDBOX_CLIENT_ID}/oauth2/token/")
    assert validity.check(ISSUER_RUC, query).estado_cp == catalogues.CP_ACEPTADO
    assert validity.check(ISSUER_RUC, query).estado_cp == catalogues.CP_ACEPTADO
    assert validity.oauth.issued == 1  # kept between queries
    voids_sandbox.fail_next("401", operation="validarComprobante")  # every token refused from now on
    assert validity.check(ISSUER_RUC, query).estado_cp == catalogues.CP_ACEPTADO
    assert validity.oauth.issued == 2  # renewed once, the query repeated once


def test_wrong_credentials_and_faults_are_told_apart(voids_sandbox):
    wrong = SunatOAuth(f"{voids_sandbox.base_url}/v1", Credentials(SANDBOX_CLIENT_ID, "otro"), scope=VALIDITY_SCOPE)
    with pytest.raises(SunatRefused) as refused:
        ValidityClient(f"{voids_sandbox.base_url}/v1", wrong).check(
            ISSUER_RUC, ValidityQuery(ISSUER_RUC, "01", "F001", 1, clock.today()))
    assert refused.value.status == 400
    voids_sandbox.fail_next("500", operation="validarComprobante")
    with pytest.raises(SunatUnavailable):
        client(voids_sandbox).check(ISSUER_RUC, ValidityQuery(ISSUER_RUC, "01", "F001", 1, clock.today()))


def test_a_query_sunat_cannot_take_is_refused_with_its_message(voids_sandbox):
    query = ValidityQuery(ISSUER_RUC, "12", "F001", 1, clock.today())  # a type SUNAT's query does not answer
    with pytest.raises(SunatRefused) as refused:
        client(voids_sandbox).check(ISSUER_RUC, query)
    assert refused.value.status == 400 and refused.value.message == "El tipo de comprobante es incorrecto: 12"


def test_states_of_paper_vouchers_the_taxpayer_and_another_customer(voiding, voids_sandbox):
    issued(voiding, factura("F001", 42, [item("Servicio de consultoría", "1", "100")]))
    voids_sandbox.validity.authorize_printed(ISSUER_RUC, "01", "0001", 1, 500)
    voids_sandbox.validity.set_taxpayer(ISSUER_RUC, "02", "12")
    validity, today = client(voids_sandbox), clock.today()
    try:
        printed = validity.check(OTHER_COMPANY, ValidityQuery(ISSUER_RUC, "01", "0001", 77, today))
        assert (printed.estado_cp, printed.estado_ruc, printed.cond_domicilio) == (
            catalogues.CP_AUTORIZADO, "02", "12")
        outside = validity.check(OTHER_COMPANY, ValidityQuery(ISSUER_RUC, "01", "0001", 501, today))
        assert outside.estado_cp == catalogues.CP_NO_AUTORIZADO
        to_customer = validity.check(CUSTOMER_RUC, ValidityQuery(ISSUER_RUC, "01", "F001", 42, today))
        assert to_customer.observaciones == []
        to_other = validity.check(OTHER_COMPANY, ValidityQuery(ISSUER_RUC, "01", "F001", 42, today))
        assert to_other.observaciones == ["El comprobante de pago consultado ha sido emitido a otro contribuyente."]
        another_day = validity.check(CUSTOMER_RUC, ValidityQuery(ISSUER_RUC, "01", "F001", 42,
                                                                 today - dt.timedelta(days=1)))
        assert another_day.estado_cp == catalogues.CP_NO_EXISTE  # SUNAT matches the issue date
    finally:
        voids_sandbox.validity.taxpayers.clear()
        voids_sandbox.validity.printed.clear()


def test_the_engine_names_the_states_and_refuses_in_spanish(voiding, voids_sandbox):
    issued(voiding, factura("F001", 43, [item("Servicio de consultoría", "1", "100")]))
    answer = voiding.invoicing.check_validity(ISSUER_RUC, "01", "F001", 43, clock.today(), Decimal("118"))
    assert (answer.estado, answer.estado_ruc_nombre, answer.cond_domicilio_nombre, answer.valido) == (
        "ACEPTADO", "ACTIVO", "HABIDO", True)
    with pytest.raises(YupanaError) as refused:
        voiding.invoicing.check_validity(ISSUER_RUC, "01", "F01", 43, clock.today())
    assert "La serie «F01» no es válida" in refused.value.message
    with pytest.raises(YupanaError) as stranger:
        voiding.invoicing.check_validity(ISSUER_RUC, "01", "F001", 43, clock.today(), consultante=OTHER_COMPANY)
    assert f"El RUC {OTHER_COMPANY} no es de una empresa registrada" in stranger.value.message
    voids_sandbox.fail_next("500", operation="validarComprobante")
    with pytest.raises(YupanaError) as unavailable:
        voiding.invoicing.check_validity(ISSUER_RUC, "01", "F001", 43, clock.today())
    assert unavailable.value.code == ErrorCode.UPSTREAM_UNAVAILABLE
    assert "No se pudo consultar a SUNAT la validez de F001-43" in unavailable.value.message


def test_each_api_s_credentials_are_kept_apart_trimmed_and_refused_when_empty(engine):
    """The guías' and the consulta's API credentials: one home (sunat_oauth.keep_api_credentials), kept under each
    API's own names in the secret store, the RUC checked and an empty value refused naming client_id."""
    engine.invoicing.set_gre_credentials(ISSUER_RUC, " gre-id ", " gre-secreto ")
    engine.invoicing.set_validity_credentials(ISSUER_RUC, "validez-id", "validez-secreto")
    assert stored_api_credentials(engine._secrets, "gre", ISSUER_RUC) == ("gre-id", "gre-secreto")
    assert stored_api_credentials(engine._secrets, "validez", ISSUER_RUC) == ("validez-id", "validez-secreto")
    assert stored_api_credentials(engine._secrets, "validez", "20100070970") is None
    for setter, api in ((engine.invoicing.set_gre_credentials, "guías"),
                        (engine.invoicing.set_validity_credentials, "consulta")):
        with pytest.raises(YupanaError) as empty:
            setter(ISSUER_RUC, "id", "  ")
        assert empty.value.details[0].field == "client_id" and f"API de {api}" in empty.value.message
        with pytest.raises(YupanaError):
            setter("2010007097", "id", "secreto")  # ten digits: not a RUC
