"""The voucher matrix: requests for operation 1 that SUNAT's schema and rules must accept.

`MATRIX` is a list of (name, request). Every type (01, 03, 07, 08), PEN and USD, every IGV
affectation and mixed lines, boletas to a DNI and without document, Contado and Crédito with
instalments, credit notes 01/06/07 and debit notes, large quantities and many-decimal prices.
The issuer is tests.conftest.ISSUER_RUC; the customers' names are given (no registry needed).
The signing tests sign each one and run the full oracle on it.
"""

from __future__ import annotations

import copy
from datetime import timedelta
from decimal import Decimal

from app.core.platform import clock

ISSUER = "20100066603"
CUSTOMER_RUC = "20601030013"
CUSTOMER_NAME = "DISTRIBUIDORA ANDINA S.A.C."
TODAY = clock.today()


def _due(days: int) -> str:
    return (TODAY + timedelta(days=days)).isoformat()


def item(descripcion: str, cantidad: str, precio: str, afectacion: str | None = None, **extra: object) -> dict:
    out: dict = {"descripcion": descripcion, "cantidad": Decimal(cantidad), "precio_unitario": Decimal(precio)}
    if afectacion:
        out["tipo_afectacion_igv"] = afectacion
    out.update(extra)
    return out


def factura(serie: str, numero: int, items: list[dict], **extra: object) -> dict:
    request: dict = {"tipo": "01", "serie": serie, "numero": numero, "emisor": {"ruc": ISSUER},
                     "receptor": {"ruc": CUSTOMER_RUC, "razon_social": CUSTOMER_NAME}, "items": items}
    request.update(extra)
    return request


def boleta(serie: str, numero: int, items: list[dict], receptor: dict | None = None, **extra: object) -> dict:
    request: dict = {"tipo": "03", "serie": serie, "numero": numero, "emisor": {"ruc": ISSUER}, "items": items}
    if receptor is not None:
        request["receptor"] = receptor
    request.update(extra)
    return request


def nota(tipo: str, serie: str, numero: int, ref: tuple[str, str, int], motivo: str, items: list[dict],
         receptor: dict | None = None, **extra: object) -> dict:
    request: dict = {"tipo": tipo, "serie": serie, "numero": numero, "emisor": {"ruc": ISSUER},
                     "receptor": receptor or {"ruc": CUSTOMER_RUC, "razon_social": CUSTOMER_NAME},
                     "items": items, "documento_referencia": {"tipo": ref[0], "serie": ref[1], "numero": ref[2]},
                     "codigo_motivo": motivo}
    request.update(extra)
    return request


DNI_CUSTOMER = {"tipo_documento": "1", "numero_documento": "45678912", "razon_social": "MARÍA QUISPE MAMANI"}
CE_CUSTOMER = {"tipo_documento": "4", "numero_documento": "001234567", "razon_social": "JOHN SMITH"}
FOREIGN_CUSTOMER = {"tipo_documento": "0", "numero_documento": "US-88412", "razon_social": "ACME TRADING LLC"}
CREDITO = {"tipo": "Credito", "cuotas": [{"monto": Decimal("59.00"), "fecha_vencimiento": _due(30)},
                                         {"monto": Decimal("59.00"), "fecha_vencimiento": _due(60)}]}
CREDITO_MIXTO = {"tipo": "Credito", "cuotas": [{"monto": Decimal("1000.00"), "fecha_vencimiento": _due(30)}]}

MATRIX: list[tuple[str, dict]] = [
    ("factura-simple", factura("F001", 1, [item("Servicio de consultoría", "1", "100")])),
    ("factura-igv-dado", factura("F001", 2, [item("Laptop 14 pulgadas", "2", "1500.00", igv=Decimal("540.00"))])),
    ("factura-varias-lineas", factura("F001", 3, [item(f"Producto {n}", str(n), f"{n * 3}.75", codigo=f"P{n:03d}")
                                                  for n in range(1, 11)])),
    ("factura-exonerada", factura("F001", 4, [item("Libros escolares", "12", "35.50", "20")])),
    ("factura-inafecta", factura("F001", 5, [item("Papa amarilla", "150", "2.80", "30", unidad="KGM")])),
    ("factura-mixta", factura("F001", 6, [item("Arroz extra", "50", "4.20", "20", unidad="KGM"),
                                          item("Aceite vegetal", "10", "8.90"),
                                          item("Camote", "30", "1.50", "30", unidad="KGM")])),
    ("factura-usd", factura("F001", 7, [item("Licencia de software anual", "3", "250.00")], moneda="USD")),
    ("factura-usd-mixta", factura("F001", 8, [item("Equipo médico", "1", "1999.99", "20"),
                                              item("Instalación", "1", "300")], moneda="USD")),
    ("factura-credito", factura("F001", 9, [item("Mercadería", "1", "100")], forma_pago=CREDITO)),
    ("factura-credito-3-cuotas", factura("F001", 10, [item("Maquinaria", "1", "12000")], forma_pago={
        "tipo": "Credito", "cuotas": [{"monto": Decimal("4720.00"), "fecha_vencimiento": _due(30)},
                                      {"monto": Decimal("4720.00"), "fecha_vencimiento": _due(60)},
                                      {"monto": Decimal("4720.00"), "fecha_vencimiento": _due(90)}]})),
    ("factura-contado-explicito", factura("F002", 1, [item("Servicio técnico", "1", "85")],
                                          forma_pago={"tipo": "Contado"}, fecha_emision=TODAY.isoformat(),
                                          hora_emision="10:30:00")),
    ("factura-exportacion", factura("F002", 2, [item("Café orgánico de exportación", "1000", "18.40", "40",
                                                     unidad="KGM")], receptor=FOREIGN_CUSTOMER, moneda="USD")),
    ("factura-cantidad-grande", factura("F002", 3, [item("Tornillos", "1250000", "0.0125"),
                                                    item("Arandelas", "999999.5", "0.003")])),
    ("factura-precio-decimales", factura("F002", 4, [item("Gasolina 90", "37.123", "14.4067796610", unidad="GLL"),
                                                     item("Servicio por horas", "2.5", "33.3333333333",
                                                          unidad="HUR")])),
    ("factura-texto-especial", factura("F002", 5, [item('Caja <grande> & "fuerte" d\'acero ñandú 😀', "1", "10")])),
    ("factura-monto-grande", factura("F002", 6, [item("Edificio comercial", "1", "1234567.89")])),
    ("boleta-sin-documento", boleta("B001", 1, [item("Menú del día", "2", "12.71")])),
    ("boleta-dni", boleta("B001", 2, [item("Zapatillas", "1", "211.86")], DNI_CUSTOMER)),
    ("boleta-dni-grande", boleta("B001", 3, [item("Refrigeradora", "1", "2541.53")], DNI_CUSTOMER)),
    ("boleta-ce-usd", boleta("B001", 4, [item("Tour Machu Picchu", "2", "150")], CE_CUSTOMER, moneda="USD")),
    ("boleta-ruc", boleta("B001", 5, [item("Útiles de oficina", "5", "4.24")],
                          {"ruc": CUSTOMER_RUC, "razon_social": CUSTOMER_NAME})),
    ("boleta-mixta", boleta("B001", 6, [item("Pan", "20", "0.30", "20"), item("Gaseosa", "3", "2.54"),
                                        item("Frutas", "2", "3.10", "30", unidad="KGM")])),
    ("boleta-contado", boleta("B002", 1, [item("Corte de cabello", "1", "25.42")], DNI_CUSTOMER,
                              forma_pago={"tipo": "Contado"})),
    ("nc-anulacion-factura", nota("07", "F001", 1, ("01", "F001", 1), "01", [item("Servicio de consultoría", "1",
                                                                                  "100")])),
    ("nc-devolucion-total", nota("07", "F001", 2, ("01", "F001", 6), "06",
                                 [item("Arroz extra", "50", "4.20", "20", unidad="KGM"),
                                  item("Aceite vegetal", "10", "8.90")])),
    ("nc-devolucion-item", nota("07", "F001", 3, ("01", "F001", 3), "07", [item("Producto 2", "1", "6.75")],
                                descripcion_motivo="Devolución de una unidad dañada")),
    ("nc-boleta", nota("07", "B001", 1, ("03", "B001", 2), "07", [item("Zapatillas", "1", "211.86")],
                       receptor=DNI_CUSTOMER)),
    ("nc-usd", nota("07", "F001", 4, ("01", "F001", 7), "07", [item("Licencia de software anual", "1", "250.00")],
                    moneda="USD")),
    ("nd-intereses", nota("08", "F001", 1, ("01", "F001", 9), "01", [item("Intereses por mora", "1", "15.25")])),
    ("factura-direccion-cliente", factura("F003", 1, [item("Asesoría legal", "1", "500")], receptor={
        "ruc": CUSTOMER_RUC, "razon_social": CUSTOMER_NAME, "direccion": "AV. JAVIER PRADO ESTE 4200, SURCO"})),
    ("boleta-direccion-cliente", boleta("B003", 1, [item("Lavadora", "1", "1271.19")],
                                        {**DNI_CUSTOMER, "direccion": "JR. HUALLAGA 320 - CERCADO DE LIMA"})),
    # JSON numbers computed in binary floating point (issue 17, point 9): 1.5 + 9 * 3.37 and 0.1 + 0.2.
    ("boleta-numeros-con-ruido", boleta("B003", 2, [{"descripcion": "Gasolina 90", "cantidad": 1.5 + 9 * 3.37,
                                                     "precio_unitario": 0.1 + 0.2, "unidad": "GLL"}])),
    # ICBPER, the plastic bag tax (issue 17, point 2): the rate of the emission year, on any IGV affectation.
    ("boleta-restaurante-bolsas", boleta("B004", 1, [item("Menú ejecutivo", "2", "12.71"),
                                                    item("Bolsa plástica", "2", "0.10", icbper=True)])),
    ("factura-bolsas-2021", factura("F004", 1, [item("Abarrotes surtidos", "1", "84.75"),
                                                item("Bolsa plástica mediana", "5", "0.08", icbper=True)],
                                    fecha_emision="2021-11-15")),
    ("boleta-bolsas-de-regalo", boleta("B004", 2, [item("Polo estampado", "1", "25.42"),
                                                  item("Bolsa biodegradable", "4", "0.20", "11", icbper=True)],
                                       DNI_CUSTOMER)),
    # Line discounts (issue 17, point 3): catalogue 53 code 00, reducing the line's base.
    ("factura-descuento-linea", factura("F004", 2, [item("Zapatillas urbanas", "2", "150", descuento=Decimal("30")),
                                                    item("Medias deportivas", "6", "8.50")])),
    ("boleta-descuento-exonerado", boleta("B004", 3, [item("Libro de texto", "3", "45", "20",
                                                           descuento=Decimal("13.50"))], DNI_CUSTOMER)),
    ("boleta-bolsas-y-descuento", boleta("B004", 4, [item("Pollo a la brasa", "1", "50.85", descuento=Decimal("5.08")),
                                                     item("Bolsa plástica", "1", "0.10", icbper=True)])),
    # The global discount (catalogue 53 code 02) on the gravado base, alone and with line discounts and bags.
    ("factura-descuento-global", factura("F004", 3, [item("Servicio de mantenimiento", "1", "1200"),
                                                     item("Repuestos", "4", "37.50")],
                                         descuento_global=Decimal("135.00"))),
    ("factura-descuentos-mixtos", factura("F004", 4, [item("Laptop", "1", "2500", descuento=Decimal("250")),
                                                      item("Libro técnico", "2", "80", "20"),
                                                      item("Bolsa plástica", "1", "0.20", icbper=True)],
                                          descuento_global=Decimal("225.00"), forma_pago=CREDITO_MIXTO)),
    ("boleta-descuento-global", boleta("B004", 5, [item("Menú familiar", "1", "84.75")],
                                       descuento_global=Decimal("8.47"))),
    # Free transfers (issue 17, point 4): reference value, nothing charged, the 9996 subtotal and legend 1002.
    ("boleta-restaurante-bolsas-postre-gratis", boleta("B008", 1, [
        item("Lomo saltado", "2", "25.42"), item("Bolsa plástica", "2", "0.10", icbper=True),
        item("Postre de cortesía", "1", "5.08", "13")])),
    ("factura-muestra-gratuita", factura("F008", 1, [item("Muestra de shampoo", "10", "4.50", "15")])),
    ("factura-gratuita-y-pagada", factura("F008", 2, [item("Impresora", "1", "850", descuento=Decimal("50")),
                                                      item("Cartucho de regalo", "1", "60", "11"),
                                                      item("Manual impreso", "1", "12", "21"),
                                                      item("Cable de obsequio", "1", "8", "31")],
                                          descuento_global=Decimal("40"))),
    ("boleta-gratuita-inafecta", boleta("B008", 2, [item("Fruta de obsequio", "2", "1.50", "32", unidad="KGM"),
                                                    item("Pan", "10", "0.25", "20")])),
    ("factura-bonificacion-usd", factura("F008", 3, [item("Licencia anual", "5", "120"),
                                                     item("Licencia de bonificación", "1", "120", "14")],
                                         moneda="USD")),
    # Detracción (issue 17, point 1): operation 1001, legend 2006, the account and the amount in PEN.
    ("factura-detraccion", factura("F009", 1, [item("Servicio de consultoría empresarial", "1", "1271.19",
                                                    codigo_detraccion="022")],
                                   detraccion={"codigo": "022", "cuenta": "00-741-123456"})),
    ("factura-detraccion-usd", factura("F009", 2, [item("Mantenimiento de maquinaria", "1", "2000")], moneda="USD",
                                       tipo_cambio=Decimal("3.745"),
                                       detraccion={"codigo": "020", "cuenta": "00741123456", "medio_pago": "003"})),
    ("factura-detraccion-porcentaje-credito", factura("F009", 3, [item("Arrendamiento de grúa", "2", "1500")],
                                                      detraccion={"codigo": "019", "porcentaje": Decimal("10"),
                                                                  "cuenta": "00-741-123456"},
                                                      forma_pago={"tipo": "Credito", "cuotas": [
                                                          {"monto": Decimal("3186.00"),
                                                           "fecha_vencimiento": _due(30)}]})),
    ("factura-detraccion-construccion", factura("F009", 4, [item("Obra civil: vereda", "1", "25000"),
                                                            item("Materiales", "10", "84.75")],
                                                detraccion={"codigo": "030", "cuenta": "00-741-123456"},
                                                descuento_global=Decimal("500"))),
    # References (issue 17, point 5): despatch advices (type 09) and the customer's purchase order.
    ("factura-descuentos-guia", factura("F010", 1, [item("Cemento Portland", "40", "25.42", descuento=Decimal("40")),
                                                    item("Fierro corrugado 1/2", "20", "38.14")],
                                        descuento_global=Decimal("50"), guias=[{"serie": "T001", "numero": 245}],
                                        orden_compra="OC-2026-0087")),
    ("factura-dos-guias", factura("F010", 2, [item("Mercadería surtida", "1", "800")],
                                  guias=[{"serie": "T001", "numero": 246}, {"serie": "EG01", "numero": 34}])),
    ("boleta-guia", boleta("B010", 1, [item("Colchón de 2 plazas", "1", "550")], DNI_CUSTOMER,
                           guias=[{"serie": "0001", "numero": 1532}])),
    ("nc-orden-compra", nota("07", "F010", 1, ("01", "F010", 2), "07", [item("Mercadería surtida", "1", "100")],
                             orden_compra="OC-2026-0090", guias=[{"serie": "T001", "numero": 246}])),
    # Operation types (issue 17, point 6): export of services (catalogue 51, 0201-0208) and of goods (0200).
    ("factura-exportacion-servicios", factura("F011", 1, [item("Desarrollo de software a medida", "120", "45", "40",
                                                               unidad="HUR")], receptor=FOREIGN_CUSTOMER,
                                              moneda="USD", tipo_operacion="0201")),
    ("factura-exportacion-servicios-parcial", factura("F011", 2, [item("Auditoría en Lima y Santiago", "1", "9500",
                                                                       "40", unidad="ZZ")],
                                                      receptor=FOREIGN_CUSTOMER, tipo_operacion="0208")),
    ("factura-exportacion-carga-ruc", factura("F011", 3, [item("Almacenaje de carga de exportación", "3", "800",
                                                               "40", unidad="DAY")], tipo_operacion="0206")),
    ("boleta-exportacion-servicios", boleta("B011", 1, [item("Clases de español en línea", "10", "20", "40",
                                                             unidad="HUR")],
                                            {"tipo_documento": "7", "numero_documento": "X1234567",
                                             "razon_social": "ANNA MÜLLER"}, moneda="USD", tipo_operacion="0201")),
    ("factura-exportacion-bienes-explicita", factura("F011", 4, [item("Quinua orgánica", "500", "3.20", "40",
                                                                      unidad="KGM")], receptor=FOREIGN_CUSTOMER,
                                                     moneda="USD", tipo_operacion="0200")),
    # Note reasons (issue 17, point 7): credit 10, 11 and 13 (corrected instalments), debit 11.
    ("nc-otros-conceptos", nota("07", "F001", 20, ("01", "F001", 3), "10", [item("Producto 5", "1", "15.75")],
                                descripcion_motivo="Regularización por redondeo en el precio acordado")),
    ("nc-ajuste-exportacion", nota("07", "F002", 20, ("01", "F002", 2), "11",
                                   [item("Café orgánico de exportación", "20", "18.40", "40", unidad="KGM")],
                                   receptor=FOREIGN_CUSTOMER, moneda="USD")),
    ("nc-cuotas", nota("07", "F001", 21, ("01", "F001", 10), "13", [item("Maquinaria", "1", "0")],
                       forma_pago={"tipo": "Credito", "cuotas": [
                           {"monto": Decimal("7080.00"), "fecha_vencimiento": _due(45)},
                           {"monto": Decimal("7080.00"), "fecha_vencimiento": _due(90)}]})),
    ("nd-ajuste-exportacion", nota("08", "F002", 20, ("01", "F002", 2), "11",
                                   [item("Diferencia de precio FOB", "1000", "0.35", "40", unidad="KGM")],
                                   receptor=FOREIGN_CUSTOMER, moneda="USD")),
    ("nd-aumento-boleta", nota("08", "B001", 1, ("03", "B001", 2), "02", [item("Ajuste de precio", "1", "8.47")],
                               receptor=DNI_CUSTOMER)),
]


def variant(name: str, **changes: object) -> dict:
    """A copy of the matrix voucher `name` with fields changed by path, `__` between keys (`items__0__igv=...` sets
    `items[0].igv`); a value of None removes the key."""
    request = copy.deepcopy(dict(MATRIX)[name])
    for path, value in changes.items():
        keys = path.split("__")
        target = request
        for key in keys[:-1]:
            target = target[int(key)] if key.isdigit() else target.setdefault(key, {})
        if value is None:
            target.pop(keys[-1], None)
        else:
            target[keys[-1]] = value
    return request
