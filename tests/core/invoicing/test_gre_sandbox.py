"""Guías through SUNAT's GRE REST platform, against the GRE sandbox (issue 36, points 2 and 3): «Emitir» a guía
generates, signs, posts it (zip + SHA-256), stores its ticket durably and reads SUNAT's answer through the durable
outbox. The token is kept and renewed once when SUNAT refuses it; a lost answer is sent again with the same zip and
SUNAT registers the guía once; a rejection is stored with SUNAT's code and text; a ticket still in process is asked
again later, never sent twice. The sandbox is a real HTTP server on 127.0.0.1 port 0."""

from __future__ import annotations

import io
import zipfile

from lxml import etree

from app.core.api import statuses
from app.core.invoicing.documents.guia import GUIA_REMITENTE_TYPE, GuiaRemisionRequest
from app.core.invoicing.gre_rest import Credentials, GreClient, SunatOAuth, package
from app.sandbox.sunat_gre import CLIENT_ID, CLIENT_SECRET, QR_LINK, SunatGreSandbox
from tests.helpers import shared
from tests.helpers.base import ISSUER_RUC
from tests.helpers.guia_matrix import remitente, transportista
from tests.helpers.sunat_support import sign

CBC = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"


def _stem(numero: int, tipo: str = "09", serie: str = "T001") -> str:
    return f"{ISSUER_RUC}-{tipo}-{serie}-{numero}"


def _submission(engine, emission) -> dict:
    [row] = engine._storage.query("SELECT * FROM sunat_submissions WHERE voucher_id = ?", (emission.voucher_id,))
    return row


def _settled(engine, emission, timeout: float = 20) -> dict:
    row = engine._outbox.wait_settled(_submission(engine, emission)["id"], timeout)
    assert row is not None and row["state"] != statuses.SUBMISSION_PENDING, row
    return row


def _cdr_link(engine, voucher_id: int) -> str | None:
    cdr = engine.invoicing.voucher_cdr(voucher_id)
    return etree.fromstring(cdr.xml_text.encode()).findtext(f".//{{{CBC}}}DocumentDescription")


def test_a_guia_is_sent_its_ticket_kept_and_its_cdr_stored_with_the_qr_link(guias, gre):
    emission = guias.invoicing.issue(remitente(1))
    assert emission.refusal is None and emission.sent is not None, emission.refusal
    assert (emission.sent.codigo_respuesta, emission.sent.estado) == ("0", statuses.ACEPTADO)
    assert guias.invoicing.voucher(emission.voucher_id).status == statuses.ACEPTADO
    assert gre.received_counts == {_stem(1): 1}
    [ticket] = guias._storage.query("SELECT ticket, hash_zip FROM gre_tickets")
    assert len(ticket["hash_zip"]) == 64
    assert _cdr_link(guias, emission.voucher_id).startswith(QR_LINK)
    transported = guias.invoicing.issue(transportista(1))  # a transportista's guía takes the same way
    assert transported.sent is not None and transported.sent.estado == statuses.ACEPTADO
    assert gre.tokens_issued == 1  # one token for both: kept until it expires


def test_an_expired_token_is_renewed_once_and_the_guia_goes_through(guias, gre):
    assert guias.invoicing.issue(remitente(1)).sent is not None
    gre.expire_tokens()  # SUNAT no longer takes the token this side still holds
    emission = guias.invoicing.issue(remitente(2))
    assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO
    assert gre.tokens_issued == 2
    gre.fail_next("401")  # a token refused mid-way: renewed once, the guía sent once
    emission = guias.invoicing.issue(remitente(3))
    assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO
    assert gre.tokens_issued == 3 and gre.received_counts[_stem(3)] == 1


def test_a_lost_answer_is_sent_again_and_sunat_registers_the_guia_once(guias, gre):
    gre.fail_next("drop")  # registered by SUNAT, the answer lost on the way back
    emission = guias.invoicing.issue(remitente(1))
    assert emission.sent is None  # no answer: the outbox keeps it
    row = _settled(guias, emission)
    assert row["state"] == statuses.SUBMISSION_DONE
    assert gre.received_counts[_stem(1)] == 2 and list(gre.registered) == [_stem(1)]  # sent twice, registered once
    first_cdr = gre.registered[_stem(1)].cdr
    with zipfile.ZipFile(io.BytesIO(first_cdr)) as archive:
        first_xml = archive.read(f"R-{_stem(1)}.xml")
    stored = guias.invoicing.voucher_cdr(emission.voucher_id)
    assert stored.xml_text.encode() == first_xml  # the first guía's outcome ends it
    assert guias.invoicing.voucher(emission.voucher_id).status == statuses.ACEPTADO


def test_a_rejected_guia_is_stored_with_sunat_s_code_and_text(guias, gre):
    gre.fail_next("reject:2566")
    emission = guias.invoicing.issue(remitente(1))
    assert emission.sent is None and emission.refusal is not None
    assert emission.refusal.details[0].sunat_code == "2566"
    row = _submission(guias, emission)
    assert (row["state"], row["fault_code"]) == (statuses.SUBMISSION_FAILED, "2566")
    assert "placa" in row["last_error"].lower()  # SUNAT's catalogue text for 2566
    assert guias.invoicing.voucher(emission.voucher_id).status == statuses.RECHAZADO
    assert gre.received_counts[_stem(1)] == 1


def test_a_ticket_still_in_process_is_asked_again_later_never_sent_twice(guias, gre):
    guias.admin.config_set("sunat_gre_wait_s", "0")
    gre.fail_next("pending:3")  # SUNAT answers 98 three times first
    emission = guias.invoicing.issue(remitente(1))
    assert emission.sent is None  # still in process: the outbox asks the stored ticket later
    row = _settled(guias, emission)
    assert row["state"] == statuses.SUBMISSION_DONE
    assert gre.received_counts[_stem(1)] == 1
    assert guias.invoicing.voucher(emission.voucher_id).status == statuses.ACEPTADO


def test_a_package_sunat_cannot_take_is_refused_with_its_code(gre):
    import base64

    import httpx

    token = httpx.post(f"{gre.url}/clientessol/yupana-sandbox/oauth2/token/", data={
        "grant_type": "password", "scope": "https://api-cpe.sunat.gob.pe", "client_id": "yupana-sandbox",
        "client_secret": "sandbox-secreto", "username": f"{ISSUER_RUC}MODDATOS", "password": "moddatos"}).json()
    headers = {"Authorization": f"Bearer {token['access_token']}"}
    archivo = {"nomArchivo": f"{_stem(1)}.zip", "arcGreZip": base64.b64encode(b"no es un zip").decode(),
               "hashZip": "0" * 64}
    answer = httpx.post(f"{gre.url}/contribuyente/gem/comprobantes/{_stem(1)}", json={"archivo": archivo},
                        headers=headers)
    assert answer.status_code == 422 and answer.json()["errors"][0]["cod"] == "0156"
    wrong = httpx.post(f"{gre.url}/clientessol/yupana-sandbox/oauth2/token/", data={"client_id": "x"})
    assert wrong.status_code == 400
    unknown = httpx.get(f"{gre.url}/contribuyente/gem/comprobantes/envios/no-existe", headers=headers)
    assert unknown.status_code == 422 and unknown.json()["errors"][0]["cod"] == "0127"


def test_the_sandbox_judges_a_guia_with_sunat_s_gre_sheet(engine, company, gre):
    """With SUNAT's rule folder the sandbox runs the GRE sheet, as SUNAT would: a guía Yupana would have refused
    (built here without the checks: a plate with a hyphen) comes back 99 with 2567 and its text; a good one, 0."""
    shared.require()
    gre.rules_dir = str(shared.RULES_DIR)
    client = GreClient(gre.url, SunatOAuth(gre.url, Credentials(CLIENT_ID, CLIENT_SECRET, f"{ISSUER_RUC}MODDATOS",
                                                                "moddatos")))
    tickets = {}
    for numero, plate in ((1, "ABC-123"), (2, "ABC123")):
        request = GuiaRemisionRequest.model_validate(remitente(numero, vehiculos=[{"placa": plate}]))
        doc = GUIA_REMITENTE_TYPE.build(request, engine._companies.get, lambda ruc: None, False)
        name = GUIA_REMITENTE_TYPE.file_name(doc.emisor_ruc, doc.serie, doc.numero)
        tickets[plate] = client.send(package(name, sign(GUIA_REMITENTE_TYPE.render(doc).encode())))
    rejected = client.status(tickets["ABC-123"].number)
    assert (rejected.code, rejected.error_code) == ("99", "2567")
    assert "placa" in rejected.error_text.lower()
    accepted = client.status(tickets["ABC123"].number)
    assert accepted.code == "0" and accepted.cdr_zip


def test_generation_runs_sunat_s_gre_sheet_when_a_rule_folder_is_set(engine, company):
    shared.require()
    engine.admin.config_set("sunat_rules_dir", str(shared.RULES_DIR))
    assert engine.invoicing.generate_xml(remitente(1)).observaciones == []
    assert engine.invoicing.generate_xml(transportista(1)).observaciones == []


def test_without_a_gre_sandbox_running_the_guia_waits_signed_and_says_why(engine, company):
    """The sandbox environment sends guías to the GRE sandbox only: with none running, «Emitir» keeps the guía signed
    (as a voucher without clave SOL) and says what is missing; nothing is queued."""
    engine.invoicing.create_test_certificate(company.ruc)
    emission = engine.invoicing.issue(remitente(1))
    assert emission.sent is None and emission.refusal is not None
    assert "sandbox" in emission.refusal.message
    assert engine.invoicing.voucher(emission.voucher_id).status == statuses.FIRMADO
    assert engine._storage.query("SELECT id FROM sunat_submissions") == []


def test_in_beta_guias_go_to_the_gre_sandbox_or_to_a_test_server_set_by_hand(guias, gre):
    """SUNAT publishes no beta for guías: beta's go to the running GRE sandbox, or to a third party's server named in
    `sunat_gre_url_beta` (here a second sandbox standing in for it)."""
    guias.admin.config_set("environment", "beta")
    emission = guias.invoicing.issue(remitente(1))
    assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO
    assert gre.received_counts == {_stem(1): 1}
    other = SunatGreSandbox()
    other.start()
    try:
        guias.admin.config_set("sunat_gre_url_beta", other.url)
        emission = guias.invoicing.issue(remitente(2))
        assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO
        assert other.received_counts == {_stem(2): 1} and _stem(2) not in gre.received_counts
    finally:
        other.stop()
