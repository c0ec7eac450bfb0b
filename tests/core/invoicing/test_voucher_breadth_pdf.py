"""Issue 37 on paper: the printed voucher (read back with poppler's pdftotext) states the percepción in soles with the
total including it, and the retención of the IGV with the net amount to pay, after the total they are not part of;
the anticipo deducted and the charges and rounding come from the XML's totals."""

from __future__ import annotations

import shutil

import pytest

from tests.core.invoicing.test_pdf import issue
from tests.core.invoicing.test_pdf_amounts import layout_text
from tests.helpers.voucher_breadth import requests

needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils is installed by .ci/run")
REQUESTS = requests()


def _printed(engine, certificado_id, name: str, tmp_path, formato: str = "a4") -> str:
    voucher_id = issue(engine, certificado_id, REQUESTS[name])
    return "\n".join(layout_text(engine.invoicing.pdf(voucher_id, formato).content, tmp_path))


@needs_poppler
@pytest.mark.parametrize("formato", ["a4", "ticket"])
def test_the_percepcion_is_printed_in_soles_after_the_total(engine, certificado_id, tmp_path, formato):
    text = _printed(engine, certificado_id, "factura-percepcion-venta-interna", tmp_path, formato)
    flat = " ".join(text.split())
    assert flat.count("Percepción (2 %)") == 1 and "Total con percepción" in flat
    assert "59.99" in flat and "3,059.55" in flat  # 2 % of 2,999.56, and the total with it
    assert "IMPORTE TOTAL" in flat and "2,999.56" in flat  # the total does not include it


@needs_poppler
def test_the_retencion_is_printed_with_the_net_to_pay(engine, certificado_id, tmp_path):
    text = _printed(engine, certificado_id, "factura-retencion", tmp_path)
    flat = " ".join(text.split())
    assert "Retención del IGV (3 %)" in flat and "70.80" in flat
    assert "Neto a pagar" in flat and "2,289.20" in flat  # 2,360.00 − 70.80
    assert "Descuentos globales" not in flat  # the retención is no discount


@needs_poppler
def test_the_anticipo_is_printed_deducted(engine, certificado_id, tmp_path):
    flat = " ".join(_printed(engine, certificado_id, "factura-con-anticipo", tmp_path).split())
    assert "Anticipo F108-1 - S/ 5,900.00" in flat  # which advance voucher, and what was paid with it
    assert "Descuentos globales" not in flat  # the anticipo's 04 is printed as the anticipo, not as a discount
    boleta = " ".join(_printed(engine, certificado_id, "boleta-con-anticipo", tmp_path, "ticket").split())
    assert "Anticipo B108-5: - S/ 118.00" in boleta  # a boleta's totals (with taxes) name it too
