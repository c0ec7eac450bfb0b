"""Certificados: expiry badges; the page's state on this version's engine."""

from __future__ import annotations

from datetime import date

from app.gui.certificates import CertificatesPage, expiry
from tests import test_gui_support as support
from tests.test_gui_support import wait_idle

context = support.context  # shared fixture


def test_expiry_badges_differ():
    today = date(2026, 1, 1)
    assert expiry(date(2027, 1, 1), today)[0] == "Vigente"
    assert expiry(date(2026, 1, 20), today)[0] == "Vence en 19 días"
    assert expiry(date(2025, 12, 31), today)[0] == "Vencido"
    assert len({expiry(d, today)[1] for d in (date(2027, 1, 1), date(2026, 1, 20), date(2025, 12, 1))}) == 3


def test_page_lists_or_says_why_not(qtbot, context, company):
    page = CertificatesPage(context)
    qtbot.addWidget(page)
    wait_idle(qtbot, context.workers)
    assert page.company.currentData() == company.ruc
    if not hasattr(context.engine, "list_certificates"):
        assert "disponible" in page.banner.text.text()
        assert not page.import_button.isEnabled()
