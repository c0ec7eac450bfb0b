"""Open every window and dialog of the app on the screen Qt's offscreen platform was given, and print what fits.

Run by tests/gui/test_fits_screen.py in a subprocess (the platform, and so the screen, is chosen when the
QApplication is created): `QT_QPA_PLATFORM=offscreen:configfile=<json> python -m tests.gui.fits_screen_runner <home>`.
The last line of stdout is a JSON object: the screen's work area and, for each window opened, its frame, the
buttons that are not inside the work area, the texts that do not fit their widget, and (the voucher form) how many
lines its table shows.

The application font is DejaVu Sans 9 pt (app.gui.screenshots.FONT): the Windows bundle sets no font, so Qt uses
Windows' own, Segoe UI 9 pt, which Linux does not have; DejaVu Sans is wider than Segoe UI, so a text that fits
here fits there.
"""

from __future__ import annotations

import json
import os
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect
from PySide6.QtGui import QFont, QTextDocument
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QApplication,
    QCheckBox,
    QComboBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QStyle,
    QStyleOptionComboBox,
    QTableWidget,
    QTabWidget,
    QWidget,
)

ISSUER = "20100066603"
ISSUER_NAME = "CORPORACIÓN DISTRIBUIDORA DE ABARROTES SAN MARTÍN DE PORRES S.A.C."  # a long one, as many are
CUSTOMER = ("20601030013", "BODEGA SAN MARTÍN S.A.C.")
LONG_CUSTOMER = ("20512345671", "DISTRIBUIDORA Y COMERCIALIZADORA DE PRODUCTOS ALIMENTICIOS DEL SUR ANDINO E.I.R.L.")


def settle(app: QApplication, workers: Any) -> None:
    """Let background work finish and the layouts settle (a deadline, then the measurement says what it saw)."""
    from PySide6.QtTest import QTest

    deadline = time.monotonic() + 30
    while True:
        app.processEvents()
        if workers.running == 0 or time.monotonic() > deadline:
            break
        QTest.qWait(10)
    for _ in range(3):
        app.processEvents()


def rect(r: QRect) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def _shown(widget: QWidget, window: QWidget) -> bool:
    return widget.isVisible() and widget.window() is window


def _clipped(widget: QWidget, window: QWidget) -> bool:
    """Part of `widget` lies outside one of its parents (up to the window): that part is not drawn."""
    child, where = widget, widget.rect()
    while child is not window and child.parentWidget() is not None:
        where = where.translated(child.pos())
        child = child.parentWidget()
        if not child.rect().contains(where):
            return True
    return False


def _scrolls(widget: QWidget, window: QWidget) -> bool:
    """Inside a scroll area of the window (it can be scrolled into view)."""
    parent = widget.parentWidget()
    while parent is not None and parent is not window:
        if isinstance(parent, QAbstractScrollArea):
            return True
        parent = parent.parentWidget()
    return False


def _plain(label: QLabel) -> str:
    text = label.text()
    if label.textFormat() == 1 or (label.textFormat() == 2 and "<" in text):  # RichText / AutoText with tags
        document = QTextDocument()
        document.setHtml(text)
        return document.toPlainText()
    return text


def elided_labels(window: QWidget) -> list[str]:
    cut = []
    for label in window.findChildren(QLabel):
        if not _shown(label, window) or label.wordWrap() or not label.text() or not label.pixmap().isNull():
            continue
        room = label.contentsRect().width() - 2 * label.margin() - max(label.indent(), 0)
        metrics = label.fontMetrics()
        for line in _plain(label).splitlines():
            if metrics.horizontalAdvance(line) > room:
                cut.append(f"etiqueta «{line}» ({metrics.horizontalAdvance(line)} > {room})")
    return cut


def elided_headers(window: QWidget) -> list[str]:
    cut = []
    for header in window.findChildren(QHeaderView):
        if header.orientation().name != "Horizontal" or not _shown(header, window) or header.model() is None:
            continue
        margin = header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
        metrics = header.fontMetrics()
        for section in range(header.count()):
            if header.isSectionHidden(section):
                continue
            text = str(header.model().headerData(section, header.orientation()) or "")
            need = metrics.horizontalAdvance(text) + 2 * margin
            if text and need > header.sectionSize(section):
                cut.append(f"encabezado «{text}» ({need} > {header.sectionSize(section)})")
    return cut


def elided_inputs(window: QWidget) -> list[str]:
    cut = []
    for combo in window.findChildren(QComboBox):
        if not _shown(combo, window) or not combo.currentText():
            continue
        option = QStyleOptionComboBox()
        option.initFrom(combo)
        option.editable = combo.isEditable()
        room = combo.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                            QStyle.SubControl.SC_ComboBoxEditField, combo).width()
        need = combo.fontMetrics().horizontalAdvance(combo.currentText())
        if need > room:
            cut.append(f"lista «{combo.currentText()}» ({need} > {room})")
    for edit in window.findChildren(QLineEdit):
        if not _shown(edit, window) or edit.text() or not edit.placeholderText():
            continue
        margins = edit.textMargins()
        frame = edit.style().pixelMetric(QStyle.PixelMetric.PM_DefaultFrameWidth, None, edit) if edit.hasFrame() else 0
        # QLineEdit draws its text inside the frame, the text margins and its own 2 px a side
        room = edit.contentsRect().width() - 2 * frame - margins.left() - margins.right() - 4
        need = edit.fontMetrics().horizontalAdvance(edit.placeholderText())
        if need > room:
            cut.append(f"campo «{edit.placeholderText()}» ({need} > {room})")
    for button in window.findChildren(QAbstractButton):
        if isinstance(button, (QPushButton, QCheckBox, QRadioButton)) and _shown(button, window) and button.text():
            if button.width() < button.minimumSizeHint().width():
                cut.append(f"botón «{button.text()}» ({button.width()} < {button.minimumSizeHint().width()})")
    return cut


def elided_cells(table: QTableWidget) -> list[str]:
    """Cells whose text is wider than their column (what the CSV preview must not do)."""
    cut = []
    margin = 2 * (table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table) + 1)
    metrics = table.fontMetrics()
    for row in range(table.rowCount()):
        for column in range(table.columnCount()):
            item = table.item(row, column)
            text = item.text() if item is not None else ""
            if text and metrics.horizontalAdvance(text) + margin > table.columnWidth(column):
                cut.append(f"celda «{text}» ({metrics.horizontalAdvance(text) + margin} > {table.columnWidth(column)})")
    return cut


def measure(name: str, window: QWidget, area: QRect, primary: list[QWidget] | None = None) -> dict[str, Any]:
    """The window's frame and client size, its buttons (those not in a scroll area, or the `primary` ones) that
    are not inside the work area, and its cut texts."""
    outside = []
    buttons = primary if primary is not None else [
        b for b in window.findChildren(QPushButton) if _shown(b, window) and not _scrolls(b, window)]
    for button in buttons:
        where = QRect(button.mapToGlobal(button.rect().topLeft()), button.size())
        if not button.isVisible() or not area.contains(where) or _clipped(button, window):
            outside.append(f"«{button.text()}» {rect(where)}")
    return {"name": name, "frame": rect(window.frameGeometry()), "client": [window.width(), window.height()],
            "minimum": [window.minimumSizeHint().width(), window.minimumSizeHint().height()],
            "buttons": len(buttons), "outside": outside,
            "cut": elided_labels(window) + elided_headers(window) + elided_inputs(window)}


def form_measure(name: str, form: Any, area: QRect) -> dict[str, Any]:
    """The voucher form: «Emitir» on the screen, the lines it shows, the boxes above them never wider than it."""
    result = {**measure(name, form, area, [form.emit_button]), "lines": lines_visible(form)}
    if form.upper.horizontalScrollBar().isVisible():
        result["cut"].append(f"los recuadros de arriba no caben a lo ancho ({form.upper.widget().minimumSizeHint()})")
    return result


def lines_visible(form: Any) -> float:
    table = form.items
    while table.rowCount() < 8:
        form.add_line()
    return round(table.viewport().height() / table.rowHeight(0), 2)


def sample_engine(home: str) -> tuple[Any, int]:
    """An engine with the issuer, a test certificate and one factura generated (not sent): its id."""
    from app.core.api import Company, Engine

    engine = Engine(home)
    engine.admin.set_company(Company(ruc=ISSUER, razon_social=ISSUER_NAME, ubigeo="150101",
                                     direccion="AV. ABANCAY 123, CERCADO DE LIMA", nombre_comercial="YUPANA"))
    engine.invoicing.create_test_certificate(ISSUER)
    engine.invoicing.generate_xml({
        "tipo": "01", "serie": "F001", "numero": 1, "emisor": {"ruc": ISSUER},
        "receptor": {"ruc": CUSTOMER[0], "razon_social": CUSTOMER[1]},
        "items": [{"descripcion": "Arroz extra 5 kg", "cantidad": Decimal(3), "precio_unitario": Decimal("21.50")}]})
    engine.catalog.save_customer({"tipo_documento": "6", "numero": LONG_CUSTOMER[0], "nombre": LONG_CUSTOMER[1]},
                                 None)
    return engine, engine.invoicing.find_voucher("F001-1", tipo="01")


def form_errors(form: Any) -> Any:
    """A YupanaError with a message for every field of the form, and one per line for twelve lines."""
    from app.core.api import ErrorCode, ErrorDetail, YupanaError

    details = [ErrorDetail(field, "Este dato no es válido: revíselo antes de emitir el comprobante.")
               for field in form.errors.labels if field != "items"]
    details += [ErrorDetail(f"items[{n}].cantidad", f"Línea {n + 1}: la cantidad debe ser un número mayor que cero.")
                for n in range(12)]
    return YupanaError(ErrorCode.INVALID_INPUT, "Revise los datos marcados.", details)


def completion_popup(app: QApplication, window: Any, form: Any) -> dict[str, Any]:
    """Type the start of a long customer name: the suggestions' popup, whole, inside the work area."""
    from PySide6.QtTest import QTest

    form.activateWindow()
    form.customer_name.setFocus()
    QTest.keyClicks(form.customer_name, "DISTRI")
    completer = form.name_completion.completer
    deadline = time.monotonic() + 10
    while not completer.popup().isVisible() and time.monotonic() < deadline:
        QTest.qWait(10)
    settle(app, window.workers)
    popup = completer.popup()
    room = popup.viewport().width() - 8  # the row's own margins (Fusion: 4 px a side)
    cut = []
    for row in range(popup.model().rowCount()):
        text = str(popup.model().index(row, 0).data())
        if popup.fontMetrics().horizontalAdvance(text) > room:
            cut.append(f"sugerencia «{text}» ({popup.fontMetrics().horizontalAdvance(text)} > {room})")
    where = QRect(popup.mapToGlobal(popup.rect().topLeft()), popup.size())
    area = popup.screen().availableGeometry()
    form.customer_name.clear()
    completer.popup().hide()
    return {"name": "Sugerencias de clientes", "frame": rect(where), "client": [popup.width(), popup.height()],
            "minimum": [0, 0], "buttons": 0, "shown": popup.model().rowCount(),
            "outside": [] if area.contains(where) else [f"la lista {rect(where)}"], "cut": cut}


def open_form(app: QApplication, window: Any, area: QRect) -> list[dict[str, Any]]:
    from app.core.api import sunat_catalogues as cat

    results = []
    form = window.show_section("Comprobantes").new_voucher()
    settle(app, window.workers)
    results.append(form_measure("Nuevo comprobante (vacío)", form, area))
    form.items.setRowCount(0)
    form.add_line()
    popup = completion_popup(app, window, form)
    form.fill_example(CUSTOMER[0], CUSTOMER[1], [("Arroz extra 5 kg", "4", "21.50", "10"),
                                                 ("Aceite vegetal 1 L", "6", "8.90", "10")])
    settle(app, window.workers)
    results.append(popup)
    primary = [form.emit_button]
    results.append(form_measure("Nuevo comprobante", form, area))
    form.prices_with_igv.setChecked(True)  # «Precio unitario (con IGV)»
    form.doc_type.setCurrentIndex(form.doc_type.findData(cat.SIN_DOCUMENTO))
    form.doc_number.clear()
    form.extras.descuento_global.setText("10.00")  # the optional totals show
    form.add_line("Bolsa plástica", "1", "0.10", "10", "", True)
    form.add_line("Mouse de cortesía", "1", "25.00", "15")
    settle(app, window.workers)
    results.append(form_measure("Nuevo comprobante (con IGV, sin documento)", form, area))
    for kind in range(form.doc_type.count()):  # each document's hint in the number box
        form.doc_type.setCurrentIndex(kind)
        settle(app, window.workers)
        hint = measure(f"Nuevo comprobante ({form.doc_type.currentText()})", form, area, primary)
        results[-1]["cut"] += [text for text in hint["cut"] if text not in results[-1]["cut"]]
    form.doc_type.setCurrentIndex(form.doc_type.findData(cat.RUC))
    form.forma_pago.setCurrentIndex(form.forma_pago.findData("Credito"))
    form.instalments.add_cuota()
    form.errors.show(form_errors(form))
    form.banner.show_error(form_errors(form))
    form.banner.toggle.setChecked(True)  # «Detalles» open
    for key in form.total_labels:  # every row of the totals panel, as a voucher with all of them shows it
        form.total_labels[key].show()
        form.total_names[key].show()
    form.print_button.show()
    settle(app, window.workers)
    results.append(form_measure("Nuevo comprobante (al crédito, con errores)", form, area))
    form.errors.clear()
    form.banner.clear()
    form.forma_pago.setCurrentIndex(form.forma_pago.findData("Contado"))
    form.add_line("Mantenimiento de equipos de cómputo", "1", "1500.00", "10")
    form.detraccion_hint.button.click()  # the detracción section open (its code's long names)
    settle(app, window.workers)
    results.append(form_measure("Nuevo comprobante (con detracción)", form, area))
    form.tipo.setCurrentIndex(form.tipo.findData(cat.NOTA_CREDITO))
    settle(app, window.workers)
    results.append(form_measure("Nuevo comprobante (nota de crédito)", form, area))
    form.close()
    return results


def open_dialogs(app: QApplication, window: Any, area: QRect, voucher_id: int, home: str) -> list[dict[str, Any]]:
    from app.core.api import NEW_PASSPHRASE, UNLOCKED
    from app.gui.passphrase import PassphraseDialog
    from app.gui.voucher_detail import VoucherDetail

    results = []
    detail = VoucherDetail(window.context, voucher_id, window)
    detail.show()
    settle(app, window.workers)
    results.append(measure("Comprobante (detalle)", detail, area))
    for dialog_name, opener in (("Anular", detail.void), ("Enviar por WhatsApp", detail.send_by_whatsapp),
                                ("Nueva guía de remisión (desde un comprobante)", detail.new_guia)):
        dialog = opener()
        settle(app, window.workers)
        results.append(measure(dialog_name, dialog, area))
        if dialog_name.startswith("Nueva guía"):  # a transportista's: the remitente, the TUCs, its own MTC
            dialog.tipo.setCurrentIndex(dialog.tipo.findData("31"))
            settle(app, window.workers)
            results.append(measure("Nueva guía de remisión (transportista)", dialog, area))
        dialog.reject()
    detail.close()
    for state in (NEW_PASSPHRASE, UNLOCKED):
        dialog = PassphraseDialog(window.context, state, lambda: None, window)
        dialog.show()
        settle(app, window.workers)
        results.append(measure(f"Frase secreta ({state})", dialog, area))
        dialog.reject()
    assistant = window.open_assistant()
    settle(app, window.workers)
    results.append(measure("Asistente", assistant, area))
    assistant.reject()
    results += restore_dialogs(app, window, area, home)
    products = window.show_section("Productos")
    editor = products.open_editor(None)
    settle(app, window.workers)
    results.append(measure("Producto", editor, area))
    editor.reject()
    csv = Path(home) / "productos.csv"
    csv.write_text("codigo,descripcion,unidad,precio\nARR-5,Arroz extra graneado de la costa norte bolsa de 5 kg,NIU,"
                   "25.37\nAZU-1,Azúcar rubia 1 kg,KGM,4.20\n", encoding="cp1252")  # as Excel writes it
    products.preview_file(str(csv))
    settle(app, window.workers)
    if products.preview_dialog is not None:
        preview = measure("Importar productos (CSV)", products.preview_dialog, area)
        preview["cut"] += elided_cells(products.preview_dialog.table)
        preview["cells"] = products.preview_dialog.table.rowCount()
        results.append(preview)
        products.preview_dialog.reject()
    connect = window.show_section("Mensajes").open_connect_whatsapp()
    settle(app, window.workers)
    results.append(measure("Conectar WhatsApp", connect, area))
    connect.tabs.setCurrentIndex(1)
    settle(app, window.workers)
    results.append(measure("Conectar WhatsApp (Meta)", connect, area))
    connect.reject()
    settle(app, window.workers)
    validity = window.show_section("Comprobantes").consult_validity()
    settle(app, window.workers)
    results.append(measure("Consultar validez", validity, area))
    validity.reject()
    settle(app, window.workers)
    certificates = window.show_section("Certificados")
    password = certificates.ask_password(str(Path(home) / "empresa.pfx"))
    settle(app, window.workers)
    results.append(measure("Contraseña del certificado", password, area))
    password.reject()
    return results


def restore_dialogs(app: QApplication, window: Any, area: QRect, home: str) -> list[dict[str, Any]]:
    """«Restaurar desde una copia»: the list of what was found (long lines, as a real restore writes them) and its
    two questions, the recovery passphrase (after a wrong one) and the last boleta printed."""
    from app.core.api import SerieFinding
    from app.gui.restore import LAST_NUMBER_QUESTION, PASSPHRASE_QUESTION, RestoreDialog

    dialog = RestoreDialog("yupana-respaldo-20261206-203015.zip", Path(home) / "otra-carpeta", window)
    dialog.found.setPlainText("\n".join(
        [f"Copia «yupana-respaldo-20261206-203015.zip» del 06/12/2026 15:30 restaurada en «{home}»: 300,000 "
         "comprobantes.", "Comprobantes recuperados de los archivos escritos al emitir: 120 (118 con su CDR): "
         + ", ".join(f"F001-{n}" for n in range(1000, 1020)) + " …", "Numeración:"]
        + [f"F00{n} (tipo 01, RUC {ISSUER}): sigue en 1235; en SUNAT después de la copia: 1230, 1231, 1233, 1234; "
           "números dudosos (pueden estar impresos): 1232" for n in range(1, 10)]))
    dialog.show()
    settle(app, window.workers)
    results = [measure("Restaurar desde una copia", dialog, area)]
    boleta = SerieFinding(ISSUER, "03", "B001", 1200, 1210, False,
                          motivo="SUNAT no responde la consulta del estado de boletas ni de sus notas")
    for name, question in (("Restaurar: frase de recuperación",
                            (PASSPHRASE_QUESTION, "La frase de recuperación no es correcta.")),
                           ("Restaurar: último número impreso", (LAST_NUMBER_QUESTION, boleta))):
        dialog._show_question(question, lambda _: None)
        settle(app, window.workers)
        assert dialog.question is not None
        results.append(measure(name, dialog.question, area))
        dialog.question.reject()
    dialog.reject()
    return results


def main(home: str) -> dict[str, Any]:
    from app.gui.app import application
    from app.gui.main_window import SECTIONS, MainWindow
    from app.gui.screenshots import FONT

    app = application()
    family, size = FONT
    app.setFont(QFont(family, size))
    screen = app.primaryScreen()
    area, dpr = screen.availableGeometry(), screen.devicePixelRatio()
    engine, voucher_id = sample_engine(home)
    try:
        window = MainWindow(engine, first_run=False)
        window.show()
        settle(app, window.workers)
        results = []
        for section in SECTIONS:
            page = window.show_section(section)
            settle(app, window.workers)
            results.append(measure(f"Ventana principal: {section}", window, area))
            for tabs in page.findChildren(QTabWidget):  # Ajustes, Mensajes…: every tab
                for index in range(tabs.count()):
                    tabs.setCurrentIndex(index)
                    settle(app, window.workers)
                    if tabs.isVisible():
                        results.append(measure(f"{section} → {tabs.tabText(index)}", window, area))
        results += open_form(app, window, area)
        results += open_dialogs(app, window, area, voucher_id, home)
        window.close()
    finally:
        engine.close()
    return {"area": rect(area), "dpr": dpr, "font": QApplication.font().family(),
            "windows": results}


if __name__ == "__main__":
    os.environ.setdefault("YUPANA_KEYRING", "0")
    os.environ.setdefault("YUPANA_PASSPHRASE", "pantallas de prueba")
    print(json.dumps(main(sys.argv[1])))
