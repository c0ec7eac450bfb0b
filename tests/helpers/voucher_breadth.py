"""The breadth matrix (issue 37): requests for operation 1 that SUNAT's schema and rules must accept, one or more per
item of the issue's Why that Yupana expresses. Each is built, signed and passed through SUNAT's checker in
tests/core/invoicing/test_voucher_breadth.py, which also checks the amounts and legends SUNAT's guide states for it.
Separate from voucher_matrix.MATRIX (whose vouchers have golden files): same issuer, same customer."""

from __future__ import annotations

from decimal import Decimal

from tests.helpers.voucher_matrix import DNI_CUSTOMER, boleta, factura, item, nota

BREADTH: list[tuple[str, dict]] = [
    # a. defects: a free line with bags states its IGV in the line's TaxAmount, as a plain free line does.
    ("boleta-bolsas-gratis-con-igv", boleta("B101", 1, [item("Polo estampado", "1", "25.42"),
                                                       item("Bolsa de regalo", "5", "0.50", "11", icbper=True)],
                                            DNI_CUSTOMER)),
    ("boleta-bolsas-gratis-inafectas", boleta("B101", 2, [item("Pan francés", "20", "0.30", "20"),
                                                         item("Bolsa de regalo", "2", "0.20", "31", icbper=True)])),
    # b. units of measure: every code of catalogue 03, those shops use (saco, rollo, pie) as much as NIU.
    ("factura-ferreteria-sacos-rollos-pies", factura("F102", 1, [item("Cemento Portland tipo I", "40", "24.50",
                                                                      unidad="SA"),
                                                                 item("Alambre negro N.° 16", "3", "85", unidad="RO"),
                                                                 item("Listón de madera tornillo", "120", "2.35",
                                                                      unidad="FOT")])),
    ("boleta-unidades-raras", boleta("B102", 1, [item("Tela de algodón", "12.5", "8.40", unidad="YRD"),
                                                 item("Cable eléctrico", "2", "45", unidad="X1"),
                                                 item("Energía de generador", "36", "0.85", unidad="KWH")])),
]


def requests() -> dict[str, dict]:
    return dict(BREADTH)


__all__ = ["BREADTH", "DNI_CUSTOMER", "Decimal", "boleta", "factura", "item", "nota", "requests"]
