"""Certificados: expiry badges; the page's state on this version's engine."""

from __future__ import annotations

import datetime as dt

from app.core.invoicing.certificates import CertificateInfo
from app.gui.certificates import CertificatesPage, certificate_badge, common_name
from tests.helpers.gui import open_widget, wait_idle


def test_holder_name_is_the_common_name():
    assert common_name("serialNumber=RUC20100066603,CN=YUPANA PRUEBA,O=COMERCIAL YUPANA S.A.C.") == "YUPANA PRUEBA"
    assert common_name("CN=PEREZ\\, JUAN,C=PE") == "PEREZ, JUAN"
    assert common_name("O=SIN NOMBRE") == "O=SIN NOMBRE"


def _valid_until(day: dt.date) -> CertificateInfo:
    until = dt.datetime.combine(day, dt.time(12), dt.UTC)
    return CertificateInfo(certificado_id="c", sujeto="CN=X", ruc="20100066603", emisor="CN=X", serie="1",
                           valido_desde=until - dt.timedelta(days=700), valido_hasta=until, huella_sha256="0",
                           es_prueba=True)


def test_expiry_badges_differ():
    now = dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC)
    badges = {day: certificate_badge(_valid_until(day), now)
              for day in (dt.date(2027, 1, 1), dt.date(2026, 1, 20), dt.date(2025, 12, 31))}
    assert badges[dt.date(2027, 1, 1)][0] == "Vigente"
    assert badges[dt.date(2026, 1, 20)][0] == "Vence en 19 días"
    assert badges[dt.date(2025, 12, 31)][0] == "Vencido"
    assert len({colour for _, colour in badges.values()}) == 3


def test_page_lists_or_says_why_not(qtbot, context, company):
    page = CertificatesPage(context)
    qtbot.addWidget(page)
    wait_idle(qtbot, context.workers)
    assert page.company.currentData() == company.ruc
    assert page.table.rowCount() == 0 and "Todavía no hay certificados" in page.banner.text.text()


def open_page(qtbot, context) -> CertificatesPage:
    return open_widget(qtbot, context, CertificatesPage)


def test_import_a_pfx_through_the_password_dialog(qtbot, context, company, engine, tmp_path):
    from tests.helpers import certificates as files

    key, cert = files.key_and_certificate(files.subject_with_ruc(company.ruc))
    pfx = tmp_path / "mi-certificado.pfx"
    pfx.write_bytes(files.pfx_triple_des(key, cert))
    page = open_page(qtbot, context)
    dialog = page.ask_password(str(pfx))
    assert dialog.password.echoMode() == dialog.password.EchoMode.Password
    dialog.password.setText("equivocada")
    dialog.accept()
    wait_idle(qtbot, context.workers)
    assert page.banner.tone == "error" and page.banner.text.text()  # the wrong password is explained
    assert engine.invoicing.certificates() == []
    dialog = page.ask_password(str(pfx))
    dialog.password.setText(files.PASSWORD)
    dialog.accept()
    wait_idle(qtbot, context.workers)
    qtbot.waitUntil(lambda: page.table.rowCount() == 1)
    assert page.table.item(0, 1).text() == company.ruc
    assert page.table.cellWidget(0, 4).text().strip() == "Vigente"
    assert page.table.item(0, 3).text() == cert.not_valid_after_utc.date().isoformat()


def test_test_certificate_default_and_delete_with_confirmation(qtbot, context, company, engine):
    from PySide6.QtWidgets import QMessageBox

    page = open_page(qtbot, context)
    page.create_button.click()
    qtbot.waitUntil(lambda: page.table.rowCount() == 1, timeout=15_000)
    wait_idle(qtbot, context.workers)
    assert "(prueba)" in page.table.item(0, 0).text()
    assert page.table.item(0, 5).text() == "★ sí"  # the first certificate of a RUC is its default
    page.create_button.click()
    qtbot.waitUntil(lambda: page.table.rowCount() == 2, timeout=15_000)
    wait_idle(qtbot, context.workers)
    newest = next(r for r in range(2) if page.table.item(r, 5).text() == "")
    page.table.selectRow(newest)
    page.default_button.click()
    wait_idle(qtbot, context.workers)
    qtbot.waitUntil(lambda: page.table.item(newest, 5) is not None and page.table.item(newest, 5).text() == "★ sí")
    chosen = page.certificates[newest].certificado_id
    assert engine.invoicing.default_certificate(company.ruc).certificado_id == chosen
    page.table.selectRow(newest)
    page.ask_delete()
    page.confirm_box.button(QMessageBox.StandardButton.No).click()
    wait_idle(qtbot, context.workers)
    assert len(engine.invoicing.certificates()) == 2  # «No» keeps it
    page.table.selectRow(newest)
    page.ask_delete()
    page.confirm_box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: len(engine.invoicing.certificates()) == 1)
    wait_idle(qtbot, context.workers)
    assert all(c.certificado_id != chosen for c in engine.invoicing.certificates())
