"""The Comprobantes list at scale (issue 19, point 6): a paging model that reads more as one scrolls, filtered and
searched by the database (dates, type, customer, state, serie-número and name)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from PySide6.QtCore import QDate
from PySide6.QtTest import QAbstractItemModelTester

from app.core.platform.identifiers import ruc_check_digit
from app.gui.voucher_list import PAGE
from app.gui.vouchers import VouchersPage
from tests.helpers.base import ISSUER_RUC
from tests.helpers.gui import open_widget, wait_idle
from tests.helpers.voucher_matrix import boleta, factura, item

COUNT = 3 * PAGE + 17  # a few hundred: more than three pages
FIRST_DAY = date(2026, 10, 1)
LINES = [item("Arroz extra 5 kg", "2", "18.50"), item("Aceite vegetal 1 L", "3", "9.90")]


def customer(n: int) -> dict:
    first10 = f"20{n:08d}"
    return {"ruc": first10 + ruc_check_digit(first10), "razon_social": f"BODEGA NÚMERO {n} S.A.C."}


@pytest.fixture
def many(engine, company) -> list[dict]:
    """COUNT facturas through the batch path (`yupana lote`'s), one a day from FIRST_DAY... cycling every 30 days, to
    10 customers; plus one boleta. Returns the requests."""
    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    requests = [factura("F001", n, LINES, receptor=customer(n % 10 + 1),
                        fecha_emision=(FIRST_DAY + timedelta(days=n % 30)).isoformat()) for n in range(1, COUNT + 1)]
    requests.append(boleta("B001", 1, LINES, {"tipo_documento": "1", "numero_documento": "45678901",
                                              "razon_social": "ÑUSTA PÉREZ"}, fecha_emision=FIRST_DAY.isoformat()))
    assert all(answer.success for answer in engine.invoicing.issue_batch(requests, certificado_id))
    return requests


def shown_numbers(page: VouchersPage) -> list[str]:
    return [page.text_of(row, 1) for row in range(page.model.rowCount())]


def test_scrolling_reads_the_next_pages_until_the_last(qtbot, context, many):
    page = open_widget(qtbot, context, VouchersPage, show=True)
    page.resize(900, 600)
    assert page.model.rowCount() == PAGE  # one page read, not the whole table
    assert page.text_of(0, 1) == "B001-1" and page.text_of(1, 1) == f"F001-{COUNT}"  # newest first
    for pages in (2, 3, 4):
        page.table.scrollToBottom()  # the view asks the model for more (canFetchMore/fetchMore)
        qtbot.waitUntil(lambda pages=pages: page.model.rowCount() == min(pages * PAGE, COUNT + 1))
        wait_idle(qtbot, context.workers)
    assert not page.model.canFetchMore(page.model.index(-1, -1))  # the last page was short: nothing more to read
    numbers = shown_numbers(page)
    assert len(numbers) == len(set(numbers)) == COUNT + 1  # every voucher once, none skipped or repeated
    assert numbers[1:] == [f"F001-{n}" for n in range(COUNT, 0, -1)]


def test_the_date_filter_narrows_the_list(qtbot, context, many):
    page = open_widget(qtbot, context, VouchersPage)
    # Qt's own checks of a model's consistency on every change (a broken rule is a Qt warning: the test fails)
    tester = QAbstractItemModelTester(page.model, QAbstractItemModelTester.FailureReportingMode.Warning, page)
    wait_idle(qtbot, context.workers)  # the tester itself asks for the next page: let it land
    assert not page.desde.isEnabled()
    page.by_date.setChecked(True)
    page.desde.setDate(QDate(2026, 10, 3))
    page.hasta.setDate(QDate(2026, 10, 4))
    wait_idle(qtbot, context.workers)
    expected = [f"F001-{n}" for n in range(COUNT, 0, -1) if n % 30 in (2, 3)]
    assert 0 < len(expected) < PAGE
    assert shown_numbers(page) == expected
    assert {page.text_of(row, 4) for row in range(page.model.rowCount())} == {"03/10/2026", "04/10/2026"}
    page.hasta.setDate(QDate(2026, 10, 2))  # before «Desde»: nothing, said with the dates the user chose
    wait_idle(qtbot, context.workers)
    assert page.model.rowCount() == 0
    assert "entre el 03/10/2026 y el 02/10/2026" in page.empty.text()
    page.by_date.setChecked(False)
    wait_idle(qtbot, context.workers)
    assert page.model.rowCount() >= PAGE and tester is not None


def test_search_by_number_prefix_and_name_and_the_other_filters(qtbot, context, many):
    page = open_widget(qtbot, context, VouchersPage)
    page.search.setText("F001-3")  # a number prefix: F001-3, F001-30..39, F001-300..
    qtbot.waitUntil(lambda: page.model.rowCount() > 0 and page.model.filters.get("search") == "F001-3")
    wait_idle(qtbot, context.workers)
    expected = [f"F001-{n}" for n in range(COUNT, 0, -1) if str(n).startswith("3")]
    assert shown_numbers(page)[:PAGE] == expected[:PAGE]
    page.search.setText("F001-00000123")  # as printed: the zeros are not part of the number
    qtbot.waitUntil(lambda: shown_numbers(page) == ["F001-123"])
    page.search.setText("nusta")  # a word of the name, without its accent
    qtbot.waitUntil(lambda: shown_numbers(page) == ["B001-1"])
    assert page.text_of(0, 2) == "ÑUSTA PÉREZ"
    page.search.clear()
    page.tipo.setCurrentIndex(page.tipo.findData("03"))
    wait_idle(qtbot, context.workers)
    assert shown_numbers(page) == ["B001-1"]
    page.tipo.setCurrentIndex(0)
    wanted = customer(4)["ruc"]
    page.cliente.setText(wanted)
    qtbot.waitUntil(lambda: page.model.filters.get("cliente") == wanted)
    wait_idle(qtbot, context.workers)
    assert shown_numbers(page) == [f"F001-{n}" for n in range(COUNT, 0, -1) if n % 10 == 3][:PAGE]
    page.cliente.clear()
    page.status.setCurrentIndex(page.status.findData("aceptado"))  # the batch signs; none is accepted yet
    wait_idle(qtbot, context.workers)
    assert page.model.rowCount() == 0 and "Ningún comprobante" in page.empty.text()


def test_a_status_change_keeps_what_was_scrolled_to(qtbot, context, many, engine):
    page = open_widget(qtbot, context, VouchersPage, show=True)
    page.table.scrollToBottom()
    qtbot.waitUntil(lambda: page.model.rowCount() == 2 * PAGE)
    wait_idle(qtbot, context.workers)
    voucher_id = page.rows[PAGE + 5].id
    engine._vouchers.set_status(voucher_id, "aceptado")  # an event: the list reads again what it shows
    qtbot.waitUntil(lambda: page.status_of(PAGE + 5) == "aceptado")
    assert page.model.rowCount() == 2 * PAGE
    assert page.text_of(PAGE + 5, 5) == "Aceptado"
    assert engine.invoicing.voucher(voucher_id).emisor_ruc == ISSUER_RUC
