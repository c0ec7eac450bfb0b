"""`yupana validar` as a real process against the SUNAT sandbox's consulta integrada de validez (the REST API with
OAuth of SUNAT's «Manual de consulta integrada de comprobante de pago por servicio web»): a voucher that exists, one
that does not, one voided, and Spanish errors naming what was typed."""

from __future__ import annotations

import json
import subprocess

from app.core.platform import clock
from tests.helpers.base import ISSUER_RUC, run_cli
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import factura, item


def lines(done: subprocess.CompletedProcess) -> list[str]:
    return done.stdout.decode().strip().splitlines()


def test_validar_a_voucher_that_exists(voiding, voids_sandbox, home):
    issued(voiding, factura("F001", 31, [item("Servicio de consultoría", "1", "100")]))
    before, today = voids_sandbox.validity.queries, clock.today()
    done = run_cli("validar", ISSUER_RUC, "01", "f001", "31", "--fecha", today.isoformat(), "--total", "118.00",
                   home=home)
    assert done.returncode == 0, done.stderr.decode()
    assert lines(done)[0] == (f"Factura F001-31 del RUC {ISSUER_RUC}, de fecha {today:%d/%m/%Y}, por 118.00 "
                              f"(consulta la empresa {ISSUER_RUC}):")
    assert "  Contribuyente: ACTIVO (00)" in lines(done)
    assert "  Domicilio fiscal: HABIDO (00)" in lines(done)
    assert lines(done)[-1] == "F001-31: ACEPTADO (comprobante aceptado por SUNAT) — válido"
    assert voids_sandbox.validity.queries == before + 1


def test_validar_a_voucher_that_does_not_exist_or_differs(voiding, voids_sandbox, home):
    issued(voiding, factura("F001", 32, [item("Servicio de consultoría", "1", "100")]))
    today = clock.today().isoformat()
    missing = run_cli("validar", ISSUER_RUC, "01", "F001", "999", "--fecha", today, home=home)
    assert missing.returncode == 1
    assert lines(missing)[-1] == "F001-999: NO EXISTE (comprobante no informado a SUNAT) — no válido"
    # SUNAT matches the total too: the same voucher with another amount is not one it has.
    other_total = run_cli("validar", ISSUER_RUC, "01", "F001", "32", "--fecha", today, "--total", "100", home=home)
    assert other_total.returncode == 1 and "NO EXISTE" in lines(other_total)[-1]


def test_validar_a_voided_voucher(voiding, voids_sandbox, home):
    voucher_id = issued(voiding, factura("F001", 33, [item("Servicio de consultoría", "1", "100")]))
    voiding.invoicing.void(voucher_id, "ERROR EN EL RUC DEL CLIENTE")
    done = run_cli("validar", ISSUER_RUC, "01", "F001", "33", "--fecha", clock.today().isoformat(), "--json",
                   home=home)
    assert done.returncode == 1
    answer = json.loads(done.stdout)
    assert (answer["estado_cp"], answer["estado"], answer["valido"]) == ("2", "ANULADO", False)


def test_validar_errors_are_spanish_and_name_what_was_typed(voiding, voids_sandbox, home):
    before = voids_sandbox.validity.queries
    bad_type = run_cli("validar", ISSUER_RUC, "12", "F001", "1", "--fecha", "2026-12-01", home=home)
    assert bad_type.returncode != 0 and "SUNAT no consulta comprobantes de tipo «12»" in bad_type.stderr.decode()
    bad_date = run_cli("validar", ISSUER_RUC, "01", "F001", "1", "--fecha", "01/12/2026", home=home)
    assert bad_date.returncode != 0 and "«01/12/2026» no es una fecha AAAA-MM-DD" in bad_date.stderr.decode()
    bad_ruc = run_cli("validar", "20100066600", "01", "F001", "1", "--fecha", "2026-12-01", home=home)
    assert bad_ruc.returncode != 0 and "20100066600" in bad_ruc.stderr.decode()
    assert voids_sandbox.validity.queries == before  # nothing SUNAT would refuse was sent
