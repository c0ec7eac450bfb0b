"""Every voucher of the matrix, built by the pure builder and rendered, byte for byte against the XML kept in
`tests/core/invoicing/golden/vouchers/`: a change in what Yupana writes (an amount, a tag, a code, a blank, the order
of two elements) shows here, where the XPath and SUNAT-sheet tests only look at what they name.

The dates are fixed (tests/helpers/golden.py). After a deliberate change of the output,
`YUPANA_UPDATE_GOLDEN=1 pytest <this file>` writes the files again; review their diff like code.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from app.core.invoicing.amounts import MAX_BAGS
from tests.helpers.golden import AT, ISSUED, check_golden, rendered
from tests.helpers.voucher_matrix import MATRIX, boleta, factura, item

GOLDEN = Path(__file__).parent / "golden" / "vouchers"
# Beside the matrix: prices with IGV on each kind of line, and the most bags one line may hold.
MORE = [
    ("factura-precios-con-igv", factura("F011", 1, [
        {"descripcion": "Gaseosa 500 ml", "cantidad": Decimal("3"), "precio_con_igv": Decimal("2.50")},
        {"descripcion": "Libro escolar", "cantidad": Decimal("2"), "precio_con_igv": Decimal("35.90"),
         "tipo_afectacion_igv": "20"},
        {"descripcion": "Naranjas", "cantidad": Decimal("1.5"), "precio_con_igv": Decimal("4.20"),
         "tipo_afectacion_igv": "30"}])),
    ("factura-bolsas-maximas", factura("F011", 2, [item("Bolsa plástica", str(MAX_BAGS), "0.10", icbper=True)])),
    # the IGV of a price with IGV is what makes the line cost that price: 1.54 = 1.31 + 0.23 (not 18 % of 1.31)
    ("boleta-precio-con-igv-exacto", boleta("B011", 1, [
        {"descripcion": "Caramelos", "cantidad": Decimal("1"), "precio_con_igv": Decimal("1.54")}])),
    # half a cent rounds up; an exonerado unit value that rounding moved is written as value ÷ quantity
    ("boleta-medio-centimo", boleta("B011", 2, [item("Tornillo", "1", "0.125"),
                                                item("Clavos", "5", "0.001", "20")])),
    ("boleta-sin-documento-con-nombre", boleta("B011", 3, [item("Pan", "10", "0.30")],
                                               {"tipo_documento": "0", "razon_social": "JUAN PÉREZ"})),
    ("boleta-precio-con-igv-y-descuento", boleta("B011", 5, [
        {"descripcion": "Polo", "cantidad": Decimal("2"), "precio_con_igv": Decimal("59.00"),
         "descuento": Decimal("5.00")}])),
    ("factura-muestra-con-precio-con-igv", factura("F011", 3, [
        item("Servicio", "1", "100"),
        {"descripcion": "Muestra", "cantidad": Decimal("1"), "precio_con_igv": Decimal("11.80"),
         "tipo_afectacion_igv": "13"}])),
    ("boleta-sin-documento-ni-nombre", boleta("B011", 4, [item("Pan", "10", "0.30")], {"tipo_documento": "0"})),
]


@pytest.mark.parametrize(("name", "request_"), MATRIX + MORE, ids=[name for name, _ in MATRIX + MORE])
def test_rendered_voucher_is_the_golden_one(name, request_):
    check_golden(GOLDEN / f"{name}.xml", rendered(request_))


def test_every_golden_file_belongs_to_a_matrix_voucher():
    assert {path.name for path in GOLDEN.glob("*.xml")} == {f"{name}.xml" for name, _ in MATRIX + MORE}


def test_the_dates_are_fixed_whatever_today_is():
    # the voucher dated today keeps ISSUED; an instalment 30 days after today falls 30 days after ISSUED
    text = rendered(dict(MATRIX)["factura-credito"])
    assert f"<cbc:IssueDate>{ISSUED.isoformat()}</cbc:IssueDate>" in text
    assert "<cbc:PaymentDueDate>2026-04-01</cbc:PaymentDueDate>" in text
    assert f"<cbc:IssueTime>{AT.isoformat()}</cbc:IssueTime>" in text
