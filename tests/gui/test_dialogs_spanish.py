"""Dialogs in a shop owner's Spanish (issue 32, item 4 and Why items 5-6): the unlock dialog shows a wrong passphrase's
message whole; the assistant shows a wrong PFX password at its field, with the cursor there, and ends with a word of
what was done; «Resúmenes y bajas» says «nothing to send» as news and drops «se actualiza cuando SUNAT responda» once
SUNAT answered; Qt's own file and print dialogs read «Buscar en», «Tipo de archivo», «archivo» (our catalogue after
Qt's), open in Documents and propose the voucher's file name."""

from __future__ import annotations

import os
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QDate
from PySide6.QtWidgets import QAbstractButton, QComboBox, QDialog, QFileDialog, QLabel, QLineEdit, QMessageBox, QWidget

from app.core.engine import Engine
from app.core.invoicing import statuses
from app.core.platform import clock
from app.gui.app import OUR_CATALOGUE, application
from app.gui.main_window import MainWindow
from app.gui.summaries import SummariesPage
from tests.gui.test_assistant import filled_assistant
from tests.helpers.base import ISSUER_RUC
from tests.helpers.gui import open_widget, wait_idle

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "app" / "data" / OUR_CATALOGUE


def texts(dialog: QWidget) -> list[str]:
    found = [w.text() for w in dialog.findChildren(QLabel)] + [w.text() for w in dialog.findChildren(QAbstractButton)]
    found += [w.toolTip() for w in dialog.findChildren(QWidget)]
    found += [b.itemText(i) for b in dialog.findChildren(QComboBox) for i in range(b.count())]
    return [text.replace("&", "") for text in found if text]


# ------------------------------------------------------------ the unlock dialog


def test_a_wrong_passphrase_is_explained_in_full(monkeypatch, home, qtbot):
    monkeypatch.delenv("YUPANA_PASSPHRASE", raising=False)
    monkeypatch.setenv("YUPANA_KEYRING", "0")
    with Engine(home) as first:
        first.admin.unlock_secrets("mi bodega en Surquillo")
    engine = Engine(home)
    try:
        main = MainWindow(engine)
        qtbot.addWidget(main)
        main.show()
        qtbot.waitUntil(lambda: main.passphrase_dialog is not None and main.passphrase_dialog.isVisible())
        dialog = main.passphrase_dialog
        dialog.passphrase.setText("otra frase cualquiera")
        dialog.submit()
        qtbot.waitUntil(lambda: dialog.banner.isVisible() and "no es correcta" in dialog.banner.text.text())
        label = dialog.banner.text
        qtbot.waitUntil(lambda: label.height() >= label.heightForWidth(label.width()))  # every line of it shows
        assert label.wordWrap() and label.heightForWidth(label.width()) > label.fontMetrics().lineSpacing()
        assert dialog.buttons.geometry().bottom() <= dialog.height()  # and the buttons still below it
        wait_idle(qtbot, main.workers)
        main.close()
    finally:
        engine.close()


# ------------------------------------------------------------ the assistant


@pytest.fixture
def pfx(tmp_path, company) -> Path:
    from tests.helpers import certificates as files

    key, cert = files.key_and_certificate(files.subject_with_ruc(ISSUER_RUC))
    path = tmp_path / "mi-certificado.pfx"
    path.write_bytes(files.pfx_modern(key, cert))
    return path


def test_a_wrong_pfx_password_is_shown_at_its_field_with_the_cursor_there(qtbot, context, engine, pfx):
    from tests.helpers.certificates import PASSWORD

    assistant = filled_assistant(qtbot, context)
    assistant.next()
    page = assistant.certificate_page
    page.import_own.setChecked(True)
    page.path.setText(str(pfx))
    page.password.setText("equivocada")
    assistant.next()
    assistant.accept()
    wait_idle(qtbot, context.workers)
    assert assistant.currentPage() is page  # back at the certificate, not on the third step
    assert "contraseña" in page.errors.visible()["password"]
    assert not page.errors.labels["password"].isHidden()
    assert not assistant.environment_page.banner.isVisible()
    assert assistant.focusWidget() is page.password  # not «Ahora no»
    assert page.password.selectedText() == "equivocada"
    page.password.setText(PASSWORD)
    assistant.next()
    assistant.accept()
    qtbot.waitUntil(lambda: assistant.completed, timeout=15_000)
    assert engine.invoicing.default_certificate(ISSUER_RUC).es_prueba is False


def test_the_assistant_ends_with_a_word_of_what_was_done(qtbot, context, engine):
    assistant = filled_assistant(qtbot, context)
    assistant.next()
    assistant.next()
    assistant.accept()
    qtbot.waitUntil(lambda: assistant.completed, timeout=15_000)
    box = assistant.done_box
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert box.text().startswith("Listo")
    assert "Empresa COMERCIAL YUPANA S.A.C." in box.text() and "Certificado de prueba creado." in box.text()
    box.close()
    wait_idle(qtbot, context.workers)


# ------------------------------------------------------------ «Resúmenes y bajas»


def test_nothing_to_send_is_news_and_sunats_answer_replaces_the_waiting_line(qtbot, context, engine, voiding):
    from tests.gui.test_summaries import signed_only
    from tests.helpers.voucher_matrix import boleta, item

    signed_only(engine, boleta("B002", 1, [item("Gorra", "1", "25")]))
    page = open_widget(qtbot, context, SummariesPage, show=True)
    page.day.setDate(QDate(clock.today()).addDays(-1))
    page.send_button.click()
    qtbot.waitUntil(lambda: page.banner.tone != "", timeout=10_000)
    assert page.banner.tone == "info" and "No hay boletas firmadas" in page.banner.text.text()
    voiding.summaries.hold()
    page.day.setDate(QDate(clock.today()))
    page.send_button.click()
    qtbot.waitUntil(lambda: "se actualiza cuando SUNAT responda" in page.banner.text.text(), timeout=10_000)
    qtbot.waitUntil(lambda: page.table.rowCount() == 1, timeout=10_000)
    voiding.summaries.release()
    qtbot.waitUntil(lambda: page.state_of(0) == statuses.SUBMISSION_DONE, timeout=30_000)
    qtbot.waitUntil(lambda: "se actualiza" not in page.banner.text.text(), timeout=10_000)
    assert page.banner.tone == "success" and "SUNAT respondió" in page.banner.text.text()
    assert "Aceptado" in page.banner.text.text()


# ------------------------------------------------------------ Qt's own dialogs in Peru's Spanish


def qm_messages(path: Path) -> dict[tuple[str, str], str]:
    """(context, source) → translation of a .qm file (its messages section, as lrelease writes it)."""
    data = path.read_bytes()
    position, messages = 16, b""
    while position < len(data):
        tag, length = data[position], struct.unpack(">I", data[position + 1:position + 5])[0]
        if tag == 0x69:
            messages = data[position + 5:position + 5 + length]
        position += 5 + length
    found: dict[tuple[str, str], str] = {}
    current: dict[int, str] = {}
    index = 0
    while index < len(messages):
        tag = messages[index]
        index += 1
        if tag == 1:
            found[(current[7], current[6])] = current[3]
            current = {}
        elif tag in (3, 6, 7, 8):
            length = struct.unpack(">I", messages[index:index + 4])[0]
            index += 4
            raw = messages[index:index + length]
            current[tag] = raw.decode("utf-16-be" if tag == 3 else "utf-8")
            index += length
        elif tag == 5:
            index += 4
    return found


def test_the_committed_catalogue_is_built_from_its_source():
    """app/data/i18n/yupana_es.qm is what `pyside6-lrelease` makes of yupana_es.ts (`make translations`)."""
    source = {(context.findtext("name"), message.findtext("source")): message.findtext("translation")
              for context in ET.parse(CATALOGUE.with_suffix(".ts")).getroot().iter("context")
              for message in context.iter("message")}
    assert source and qm_messages(CATALOGUE) == source
    assert not any("fichero" in text.lower() or "directorio" in text.lower() for text in source.values())


def test_qts_file_dialog_reads_in_peruvian_spanish(qtbot):
    application()
    dialog = QFileDialog(None, "Guardar")
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)  # Qt's own (Linux); Windows keeps its native one
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    qtbot.addWidget(dialog)
    dialog.show()
    shown = texts(dialog)
    assert {"Buscar en:", "Nombre del archivo:", "Tipo de archivo:", "Carpeta superior"} <= set(shown), shown
    assert not [t for t in shown if any(w in t for w in ("Look in", "Files of", "ichero", "irectorio"))]
    assert QCoreApplication.translate("QFileDialog", "All Files (*)") == "Todos los archivos (*)"
    assert QCoreApplication.translate("QFileDialog", "Show ") == "Mostrar "  # the rest still from Qt's catalogue


def test_qts_print_dialog_reads_in_peruvian_spanish(qtbot):
    from PySide6.QtPrintSupport import QPrintDialog, QPrinter

    application()
    printer = QPrinter()
    dialog = QPrintDialog(printer)
    qtbot.addWidget(dialog)
    QDialog.open(dialog)
    shown = texts(dialog)
    assert {"Archivo de salida:", "Páginas a imprimir:", "Imprimir en un archivo (PDF)"} <= set(shown), shown
    assert not [t for t in shown if any(w in t for w in ("Page Set", "binding", "ichero"))]
    dialog.reject()


# ------------------------------------------------------------ where the dialogs open, what they propose


@pytest.fixture
def documents(tmp_path, monkeypatch) -> Path:
    """A home with a Documents folder (XDG's default name), not the folder the program runs in."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    folder = tmp_path / "Documents"
    folder.mkdir()
    assert Path(os.getcwd()) != folder
    return folder


@pytest.fixture
def signed_id(engine, company) -> int:
    from tests.helpers.voucher_matrix import MATRIX

    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    request = next(request for name, request in MATRIX if name == "factura-credito")
    engine.invoicing.sign({"xml": engine.invoicing.generate_xml(request).xml, "certificado_id": certificado_id})
    return engine.invoicing.find_voucher("F001-9", tipo="01")


def test_save_and_print_open_in_documents_with_the_vouchers_name(qtbot, context, documents, signed_id):
    from tests.gui.test_pdf import open_detail

    detail = open_detail(qtbot, context, signed_id)
    panel = detail.print_panel
    saving = panel.choose_file()
    assert Path(saving.directory().absolutePath()) == documents
    assert saving.selectedFiles()[0] == str(documents / "20100066603-01-F001-9.pdf")
    saving.reject()
    printing = panel.choose_printer()
    assert panel.printer.docName() == "20100066603-01-F001-9.pdf"  # not «Comprobante 1»
    output = printing.findChild(QLineEdit, "filename")
    assert output is not None and output.text() == str(documents / "20100066603-01-F001-9.pdf")
    printing.reject()
    wait_idle(qtbot, context.workers)


def test_choosing_a_file_starts_in_documents(qtbot, context, documents, messaging_engine):
    from app.gui.messages import MessagesPage

    page = open_widget(qtbot, context, MessagesPage)
    page.attach_button.click()
    assert Path(page.file_dialog.directory().absolutePath()) == documents
    page.file_dialog.reject()
