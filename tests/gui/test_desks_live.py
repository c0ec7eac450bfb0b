"""Several desks, live (issue 34, item 6): a voucher issued on one desk shows in the Comprobantes list of another
desk's window on the same shared PostgreSQL, told through LISTEN/NOTIFY (no polling, no refresh button)."""

from __future__ import annotations

import pytest

from app.core.platform.companies import Company
from app.core.platform.settings import DeskSettings
from app.gui.vouchers import VouchersPage
from tests.gui.test_voucher_list import shown_numbers
from tests.helpers.gui import open_widget
from tests.helpers.voucher_matrix import factura, item

pytestmark = pytest.mark.postgres


@pytest.fixture
def shared_url(postgres_server, home):
    """The window's desk (the `engine` fixture's folder) on a fresh shared database."""
    url = postgres_server.fresh_database()
    DeskSettings(home).put("database_url", url)
    return url


@pytest.fixture
def other_desk(shared_url, tmp_path):
    from app.core.engine import Engine

    folder = tmp_path / "caja2"
    folder.mkdir()
    DeskSettings(folder).put("database_url", shared_url)
    desk = Engine(folder)
    desk.admin.set_company(Company(ruc="20100066603", razon_social="COMERCIAL YUPANA S.A.C.", ubigeo="150101",
                                   direccion="AV. ABANCAY 123"))
    yield desk
    desk.close()


@pytest.fixture
def engine(shared_url, home):  # the window's engine, opened on the shared database
    from app.core.engine import Engine

    desk = Engine(home)
    yield desk
    desk.close()


def test_a_voucher_issued_on_another_desk_shows_in_the_list(qtbot, context, other_desk):
    page = open_widget(qtbot, context, VouchersPage, show=True)
    assert shown_numbers(page) == []
    other_desk.invoicing.generate_xml(factura("F001", 1, [item("Arroz Costeño 5 kg", "2", "25.37")]))
    qtbot.waitUntil(lambda: shown_numbers(page) == ["F001-1"], timeout=10_000)
