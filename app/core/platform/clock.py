"""The wall clock: the date and time a person or SUNAT reads (issue dates and times, CDR dates, certificate
validity, message timestamps). One seam: `frozen(instant)` fixes it for a whole run (`make screenshots`, so
the same sample data gives the same pixels; tests). Schedulers (retries, leases, cache ages) keep their own
clocks: they must move on even while this one stands still.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta, timezone

PERU = timezone(timedelta(hours=-5))  # Peru keeps UTC-5 all year: the calendar SUNAT dates and counts days in

_fixed: datetime | None = None


def now() -> datetime:
    """This instant, timezone-aware (UTC); the fixed instant while `frozen`."""
    return _fixed if _fixed is not None else datetime.now(UTC)


def timestamp() -> float:
    """Seconds since the epoch, from `now()`."""
    return now().timestamp()


def today() -> date:
    """Today in Peru, from `now()`: the date a voucher is issued on and SUNAT's deadlines count from, whatever the
    computer's time zone (one set to UTC is a day ahead from 19:00 in Lima)."""
    return now().astimezone(PERU).date()


@contextmanager
def frozen(instant: datetime) -> Iterator[datetime]:
    """Every reading of this clock is `instant` (aware) until the block ends."""
    global _fixed
    if instant.tzinfo is None:
        raise ValueError("frozen() needs a timezone-aware instant")
    previous, _fixed = _fixed, instant.astimezone(UTC)
    try:
        yield _fixed
    finally:
        _fixed = previous
