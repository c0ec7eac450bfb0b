"""The breadth matrix (issue 37): requests for operation 1 that SUNAT's schema and rules must accept, one or more per
item of the issue's Why that Yupana expresses. Each is built, signed and passed through SUNAT's checker in
tests/core/invoicing/test_voucher_breadth.py, which also checks the amounts and legends SUNAT's guide states for it.
Separate from voucher_matrix.MATRIX (whose vouchers have golden files): same issuer, same customer."""

from __future__ import annotations

from decimal import Decimal

from tests.helpers.voucher_matrix import DNI_CUSTOMER, _due, boleta, factura, item, nota


def cd(codigo: str, monto: str, base: str | None = None) -> dict:
    """A charge or discount of catalogue 53 (`cargos_descuentos`)."""
    out: dict = {"codigo": codigo, "monto": Decimal(monto)}
    if base is not None:
        out["base"] = Decimal(base)
    return out


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
    # e. charges and discounts beside the base (catalogue 53) and the rounding of the payable amount.
    ("factura-descuento-pronto-pago", factura("F105", 1, [item("Televisor 50 pulgadas", "1", "1500")],
                                              cargos_descuentos=[cd("03", "35.40", "1770.00")])),
    ("boleta-recargo-al-consumo", boleta("B105", 1, [item("Ceviche mixto", "2", "38.14")],
                                         cargos_descuentos=[cd("46", "7.63", "76.28")])),
    ("factura-flete-en-la-base", factura("F105", 2, [item("Cemento Portland tipo I", "100", "24.50", unidad="SA")],
                                         cargos_descuentos=[cd("49", "150.00")])),
    ("factura-cargo-de-entrega", factura("F105", 3, [item("Licencia de software", "1", "1000")],
                                         cargos_descuentos=[cd("50", "25.00")])),
    ("factura-cargos-y-descuentos-por-linea", factura("F105", 4, [
        item("Laptop 14 pulgadas", "1", "2000", cargos_descuentos=[cd("01", "100.00")]),
        item("Instalación en domicilio", "1", "300", unidad="ZZ", cargos_descuentos=[cd("47", "50.00")]),
        item("Impresora multifuncional", "1", "500", cargos_descuentos=[cd("48", "20.00")])])),
    ("boleta-redondeo", boleta("B105", 2, [item("Gaseosa 500 ml", "3", "2.54")], redondeo=Decimal("0.01"))),
    ("factura-todo-junto", factura("F105", 5, [item("Balón de gas 10 kg", "2", "38.14", unidad="NIU"),
                                               item("Válvula", "1", "25.42", cargos_descuentos=[cd("01", "2.00")])],
                                   descuento_global=Decimal("5.00"),
                                   cargos_descuentos=[cd("45", "1.20"), cd("03", "3.00")],
                                   redondeo=Decimal("-0.03"))),
    # e. due date, the place of delivery, other related documents and the means of payment.
    ("factura-vencimiento-entrega-documentos-medio", factura("F106", 1, [item("Refrigeradora 300 L", "1", "1800")],
                                                            fecha_vencimiento=_due(15),
                                                            lugar_entrega={"direccion": "JR. AMAZONAS 245, IQUITOS",
                                                                           "ubigeo": "160101"},
                                                            documentos_relacionados=[
                                                                {"tipo": "99", "numero": "CONTRATO-2026-015"},
                                                                {"tipo": "04", "numero": "TS-88412"}],
                                                            medio_pago="005")),
    ("boleta-medio-de-pago-y-entrega", boleta("B106", 1, [item("Colchón de 2 plazas", "1", "550")], DNI_CUSTOMER,
                                              medio_pago="009",
                                              lugar_entrega={"direccion": "FERIA DOMINICAL, PLAZA DE ARMAS DE PISAC"})),
    ("factura-credito-con-vencimiento-y-detraccion", factura("F106", 2, [item("Servicio de limpieza industrial", "1",
                                                                              "3000")],
                                                             forma_pago={"tipo": "Credito", "cuotas": [
                                                                 {"monto": Decimal("3115.20"),
                                                                  "fecha_vencimiento": _due(30)}]},
                                                             fecha_vencimiento=_due(45), medio_pago="003",
                                                             detraccion={"codigo": "022",
                                                                         "cuenta": "00-741-123456"})),
    # f. percepción (operation 2001, charges 51-53) and retención noted on a factura (62): beside the payable amount.
    ("factura-percepcion-venta-interna", factura("F107", 1, [item("Cemento Portland tipo I", "100", "25.42",
                                                                  unidad="SA")], percepcion={"codigo": "51"})),
    ("boleta-percepcion-combustible", boleta("B107", 1, [item("Petróleo diésel B5", "50", "12.71", unidad="GLL")],
                                             DNI_CUSTOMER, percepcion={"codigo": "52"})),
    ("factura-percepcion-usd-tasa-especial", factura("F107", 2, [item("Harina de trigo", "10", "100", unidad="BG")],
                                                     moneda="USD", tipo_cambio=Decimal("3.75"),
                                                     percepcion={"codigo": "53"}, tipo_operacion="2001")),
    ("factura-retencion", factura("F107", 3, [item("Servicio de mantenimiento", "1", "2000", unidad="ZZ")],
                                  retencion={})),
    ("factura-retencion-credito", factura("F107", 4, [item("Servicio de mantenimiento", "1", "2000", unidad="ZZ")],
                                          retencion={"porcentaje": Decimal("3")},
                                          forma_pago={"tipo": "Credito", "cuotas": [
                                              {"monto": Decimal("2289.20"), "fecha_vencimiento": _due(30)}]})),
    # f. anticipos: the advance's voucher named and its payment deducted in the final one.
    ("factura-con-anticipo", factura("F108", 2, [item("Maquinaria industrial", "1", "10000")],
                                     anticipos=[{"tipo": "02", "serie": "F108", "numero": 1,
                                                 "monto": Decimal("5900.00")}])),
    ("boleta-con-anticipo", boleta("B108", 6, [item("Paquete escolar completo", "1", "500")], DNI_CUSTOMER,
                                   anticipos=[{"tipo": "03", "serie": "B108", "numero": 5,
                                               "monto": Decimal("118.00")}])),
    ("factura-dos-anticipos-y-exonerado", factura("F108", 4, [item("Equipo de cómputo", "2", "1500"),
                                                              item("Libros técnicos", "20", "50", "20")],
                                                  anticipos=[{"tipo": "02", "serie": "F108", "numero": 3,
                                                              "monto": Decimal("1180.00")},
                                                             {"tipo": "02", "serie": "0001", "numero": 77,
                                                              "monto": Decimal("300.00"),
                                                              "tipo_afectacion_igv": "20"}])),
    # f. IVAP: rice pilado at 4 % (affectation 17, scheme 1016, legend 2007) and its notes of reason 12.
    ("factura-arroz-pilado-ivap", factura("F109", 1, [item("Arroz pilado extra", "50", "120", "17", unidad="BG")])),
    ("nc-ajuste-ivap", nota("07", "F109", 1, ("01", "F109", 1), "12",
                            [item("Arroz pilado extra: ajuste de precio", "50", "5", "17", unidad="BG")])),
    ("nd-ajuste-ivap", nota("08", "F109", 1, ("01", "F109", 1), "12",
                            [item("Arroz pilado extra: flete adicional", "1", "150", "17", unidad="ZZ")])),
    # f. ISC (scheme 2000) in its three systems, inside the IGV base.
    ("factura-isc-al-valor", factura("F110", 1, [item("Perfume importado 100 ml", "2", "200",
                                                      isc={"sistema": "01", "tasa": Decimal("10")})])),
    ("boleta-isc-monto-fijo", boleta("B110", 1, [item("Cigarrillos (cajetilla de 20)", "10", "8.50",
                                                      isc={"sistema": "02", "monto": Decimal("0.90")}),
                                                 item("Bolsa plástica", "1", "0.10", icbper=True)])),
    ("factura-isc-precio-publico", factura("F110", 2, [item("Cerveza 620 ml (caja x 12)", "5", "38",
                                                            isc={"sistema": "03", "tasa": Decimal("30"),
                                                                 "precio_publico": Decimal("45.76")}),
                                                       item("Gaseosa 3 L", "4", "9.32")])),
    # Mixes of the above.
    ("factura-usd-cargos-y-redondeo", factura("F111", 1, [item("Consultoría ambiental", "1", "2500", unidad="ZZ",
                                                               cargos_descuentos=[cd("48", "35.00")])],
                                              moneda="USD", cargos_descuentos=[cd("50", "40.00")],
                                              redondeo=Decimal("0.20"))),
    ("boleta-anticipo-y-bolsas", boleta("B111", 2, [item("Torta de cumpleaños", "1", "120"),
                                                    item("Bolsa plástica", "2", "0.10", icbper=True)], DNI_CUSTOMER,
                                        anticipos=[{"tipo": "03", "serie": "B111", "numero": 1,
                                                    "monto": Decimal("50.00")}])),
    ("factura-isc-anticipo-y-retencion", factura("F111", 3, [item("Pisco quebranta (caja x 6)", "10", "180",
                                                                  isc={"sistema": "01", "tasa": Decimal("20")})],
                                                 anticipos=[{"tipo": "02", "serie": "F111", "numero": 2,
                                                             "monto": Decimal("1000.00")}], retencion={})),
    ("factura-contingencia-con-percepcion", factura("0003", 15, [item("Cerveza (caja x 12)", "8", "42.37")],
                                                    percepcion={"codigo": "51"}, medio_pago="009")),
]


def requests() -> dict[str, dict]:
    return dict(BREADTH)


__all__ = ["BREADTH", "cd", "DNI_CUSTOMER", "Decimal", "boleta", "factura", "item", "nota", "requests"]
