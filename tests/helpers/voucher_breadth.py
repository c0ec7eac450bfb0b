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
    # c. contingency and paper vouchers: a numeric serie, and notes that correct a voucher printed on paper.
    ("factura-contingencia", factura("0001", 1, [item("Servicio de instalación eléctrica", "1", "850")])),
    ("boleta-contingencia", boleta("0002", 1, [item("Menú del día", "3", "10.17")], DNI_CUSTOMER)),
    ("nc-factura-en-papel", nota("07", "F103", 1, ("01", "0001", 5), "07",
                                 [item("Devolución de 2 focos LED", "2", "12.50")])),
    ("nc-boleta-en-papel", nota("07", "B103", 1, ("03", "0002", 148), "01", [item("Menú del día", "1", "10.17")],
                                receptor=DNI_CUSTOMER)),
    ("nd-factura-en-papel", nota("08", "F103", 1, ("01", "0001", 5), "01",
                                 [item("Intereses por mora", "1", "18.40")])),
    ("nc-contingencia-de-contingencia", nota("07", "0001", 2, ("01", "0001", 1), "01",
                                             [item("Servicio de instalación eléctrica", "1", "850")])),
    # d. bags on an exonerado or inafecto line: a shop in the Amazonía sells exonerated and still owes ICBPER.
    ("boleta-amazonia-bolsas-exoneradas", boleta("B104", 1, [item("Arroz costeño", "5", "3.80", "20", unidad="KGM"),
                                                            item("Bolsa plástica", "3", "0.10", "20", icbper=True)],
                                                 fecha_emision="2024-05-10")),
    ("factura-amazonia-bolsas-inafectas", factura("F104", 1, [item("Plátano de seda", "40", "0.60", "30",
                                                                   unidad="KGM"),
                                                              item("Bolsa plástica grande", "10", "0.20", "30",
                                                                   icbper=True),
                                                              item("Gaseosa 3 L", "2", "9.32")])),
]


def requests() -> dict[str, dict]:
    return dict(BREADTH)


__all__ = ["BREADTH", "DNI_CUSTOMER", "Decimal", "boleta", "factura", "item", "nota", "requests"]
