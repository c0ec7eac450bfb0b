"""Issue 36: a SIGKILL storm on the GRE outbox. Two sender processes on one data folder send 60 guías to the GRE
sandbox on loopback (SUNAT's REST platform: token, POST, ticket) while the test SIGKILLs one of them after every
few guías reach it (at least 20 kills, landing mid-POST, before the ticket is stored, while it is polled, anywhere).
Afterwards: each guía registered once (SUNAT's platform has one first outcome per guía), none lost (every guía has
its CDR stored), none left pending (each submission finished, each guía's status its CDR's)."""

from __future__ import annotations

import json
import random
import sqlite3
import time

import pytest

from app.core.invoicing import outbox
from tests.helpers import gre_storm_sender
from tests.helpers.base import ISSUER_RUC
from tests.helpers.guia_matrix import remitente
from tests.helpers.storm import ForkedSender, Sandboxed, storm

GUIAS = 60
MIN_KILLS = 20
STORM_LIMIT_S = 120


def sender(home) -> ForkedSender:
    return ForkedSender(gre_storm_sender.main, home)


@pytest.mark.slow
def test_a_kill_storm_on_the_gre_outbox_registers_each_guia_once_loses_none_leaves_none_pending(
        engine, company, gre, home):
    gre.configure(engine)
    engine.admin.config_set("sunat_timeout_s", "2")
    engine.admin.config_set("sunat_retry_base_s", "0.05")
    engine.admin.config_set("sunat_retry_max_s", "0.3")
    engine.admin.config_set("sunat_gre_wait_s", "1")
    certificado_id = engine.invoicing.create_test_certificate(ISSUER_RUC).certificado_id
    for numero in range(1, GUIAS + 1):
        generated = engine.invoicing.generate_xml(remitente(numero))
        engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado_id})
    engine.close()
    gre.fail_next("pending:1", GUIAS)  # each ticket answers 98 once: kills land while tickets are polled too

    started = time.monotonic()
    kills, outputs = storm(lambda: sender(home), Sandboxed(gre.sends, gre.wait_for_sends,
                                                           lambda: len(gre.registered) >= GUIAS),
                           MIN_KILLS, STORM_LIMIT_S, random.Random(36), most_between_kills=3)
    assert kills >= MIN_KILLS, f"only {kills} kills in {STORM_LIMIT_S} s"
    refused = [line for output in outputs for line in output.splitlines() if line and line != "done"]
    assert refused == [], refused[:5]

    db = sqlite3.connect(home / "yupana.db")  # read as stored, before any engine opens (and repairs) it again
    try:
        guias = db.execute(
            "SELECT v.serie || '-' || v.numero, v.status, s.state, c.estado, c.cdr_xml "
            "FROM vouchers v LEFT JOIN sunat_submissions s ON s.voucher_id = v.id "
            "LEFT JOIN sunat_cdrs c ON c.submission_id = s.id").fetchall()
    finally:
        db.close()
    assert len(guias) == GUIAS
    lost = [g[:4] for g in guias if g[3] is None]
    pending = [g[:4] for g in guias if g[3] is not None and (g[1] != g[3] or g[2] != outbox.DONE)]
    assert lost == [] and pending == [], (lost[:5], pending[:5])
    assert len(gre.registered) == GUIAS  # each guía registered once: one first outcome each
    print(json.dumps({"kills": kills, "sends": gre.sends(), "registered": len(gre.registered),
                      "most_sends_of_one_guia": max(gre.received_counts.values()),
                      "seconds": round(time.monotonic() - started, 1)}))
