"""The windows name fields by their form labels; the API keeps the contract's names."""

from __future__ import annotations

from app.core.errors import ErrorDetail, invalid_many
from app.gui.field_labels import guia_label_of, humanize, label_of
from app.gui.widgets import describe
from tests.gui.test_vouchers import open_form


def test_paths_become_form_labels_with_line_numbers():
    assert label_of("receptor.ruc") == "RUC del cliente"
    assert label_of("items[2].cantidad") == "Cantidad (línea 3)"
    assert label_of("forma_pago.cuotas[0].monto") == "Monto (cuota 1)"
    assert label_of("algo_nuevo") is None
    assert label_of("items[1].descuento") == "Descuento (línea 2)" and label_of("descuento_global") == "Descuento global"
    assert label_of("items[0].icbper") == "Bolsas plásticas (ICBPER) (línea 1)"
    assert humanize("El campo «numero» debe ser un número entero.") == "El campo «Número» debe ser un número entero."
    assert humanize("La placa «ABC-12» no es válida.") == "La placa «ABC-12» no es válida."  # user text stays


def test_error_dialogs_and_banners_show_labels_not_paths():
    exc = invalid_many([ErrorDetail("receptor.ruc", "El campo «receptor.ruc» debe tener 11 dígitos."),
                        ErrorDetail("items[0].precio_unitario", "El campo «items[0].precio_unitario» debe ser mayor que 0.")])
    _tone, headline, details = describe(exc)
    assert "receptor.ruc" not in headline + details and "precio_unitario" not in details
    assert "«RUC del cliente»" in details and "«Valor unitario (línea 1)»" in details


def test_the_voucher_form_says_what_the_person_sees(qtbot, context, company):
    form = open_form(qtbot, context)
    form.doc_type.setCurrentIndex(form.doc_type.findData("6"))
    form.doc_number.setText("2010")
    form.errors.show(invalid_many([ErrorDetail("receptor.ruc", "El campo «receptor.ruc» debe tener 11 dígitos.")]))
    shown = " ".join(form.errors.visible().values())
    assert "«RUC del cliente»" in shown and "receptor.ruc" not in shown



def test_a_guias_fields_are_named_as_the_guia_window_labels_them():
    assert guia_label_of("peso_bruto") == "Peso bruto total"
    assert guia_label_of("destinatario.numero_documento") == "Número del destinatario"
    assert guia_label_of("remitente.razon_social") == "Nombre o razón social del remitente"
    assert guia_label_of("partida.ubigeo") == "Partida (ubigeo)" and guia_label_of("llegada.direccion") == "Llegada (dirección)"
    assert guia_label_of("vehiculos[0].placa") == "Vehículo principal (placa)"
    assert guia_label_of("vehiculos[2].tuc") == "Vehículo secundario 2 (TUC)"
    assert guia_label_of("conductores[0].licencia") == "Licencia de conducir"
    assert guia_label_of("conductores[1].licencia") == "Licencia de conducir (secundario 1)"
    assert guia_label_of("transportista.registro_mtc") == "Registro MTC"
    assert guia_label_of("items[1].cantidad") == "Cantidad (línea 2)"
    assert guia_label_of("documentos_relacionados[0].numero") == "Documento relacionado 1 (número)"
    assert guia_label_of("algo_nuevo") is None
    message = "La placa «T4» del campo «vehiculos[1].placa» debe tener de 6 a 8 letras o dígitos."
    assert humanize(message, guia_label_of) == \
        "La placa «T4» del campo «Vehículo secundario 1 (placa)» debe tener de 6 a 8 letras o dígitos."
    assert humanize("El campo «receptor.ruc» falta.") == "El campo «RUC del cliente» falta."  # the vouchers' names stay
