"""The wall clock's date is Peru's: the calendar SUNAT dates vouchers and counts deadlines in, whatever the computer's
time zone. A computer on UTC (CI, a server) is a day ahead of Lima from 19:00 to midnight there: the voucher was dated
the 24th and the deadline counted from the 25th."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime

import pytest

from app.core.platform import clock


@pytest.fixture
def computer_zone(monkeypatch):
    """Set the process's time zone (TZ) for one test, and put it back."""
    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield set_zone
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("zone", ["UTC0", "JST-9", "<-05>5", "PST8"])  # POSIX rules: no tz database needed
def test_today_is_the_date_in_peru_whatever_the_computers_zone(computer_zone, zone):
    computer_zone(zone)
    with clock.frozen(datetime(2026, 11, 25, 1, 30, tzinfo=UTC)):  # 20:30 of the 24th in Lima
        assert clock.today() == date(2026, 11, 24)
    with clock.frozen(datetime(2026, 11, 25, 5, 0, tzinfo=UTC)):  # midnight in Lima
        assert clock.today() == date(2026, 11, 25)
    with clock.frozen(datetime(2026, 11, 25, 4, 59, 59, tzinfo=UTC)):
        assert clock.today() == date(2026, 11, 24)


def test_peru_keeps_utc_minus_five():
    assert clock.PERU.utcoffset(None).total_seconds() == -5 * 3600
