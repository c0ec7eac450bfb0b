"""The windows name fields by their form labels; the API keeps the contract's names."""

from __future__ import annotations

from app.core.errors import ErrorDetail, invalid_many
from app.gui.field_labels import humanize, label_of
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

