"""`make screenshots` is deterministic: two runs give byte-identical PNGs, so regenerating the committed
pictures leaves `git status` clean (issue 16). The pieces: one wall clock (app.core.platform.clock) frozen at the
sample instant, a seeded sandbox, fixed ports painted, a named font."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.core.messaging import ids
from app.core.platform import clock

# The two runs compared (tests/helpers/screenshots.py) are made by tests/cli/test_make_targets.py::
# test_make_screenshots_writes_the_pictures_and_a_second_run_gives_the_same_bytes: one through `make screenshots`,
# one through the module it runs (each run renders every window for about 15 s; the suite made three of them).


def test_the_frozen_clock_is_what_every_reader_sees():
    from app.core.invoicing import certificates
    from app.sandbox.sunat_wire import Outcome, application_response

    instant = datetime(2026, 11, 23, 15, 30, tzinfo=UTC)
    with clock.frozen(instant):
        assert clock.now() == instant and clock.timestamp() == instant.timestamp()
        assert certificates._now() == instant
        _, certificate = certificates.make_test_certificate("20100066603")
        assert certificate.not_valid_before_utc == instant.replace(minute=25)
        cdr = application_response("20100066603-01-F001-1", Outcome("0", "aceptada", []))
        assert b"<cbc:IssueDate>2026-11-23</cbc:IssueDate>" in cdr and b"10:30:00" in cdr  # Lima, UTC-5
    assert clock.now() != instant  # the real clock again after the block


def test_a_naive_instant_is_refused():
    with pytest.raises(ValueError):
        with clock.frozen(datetime(2026, 11, 23, 10, 30)):
            pass


def test_message_ids_keep_their_order_within_one_millisecond():
    made = [ids.message_id() for _ in range(5000)]  # thousands per millisecond
    assert made == sorted(made) and len(set(made)) == len(made)
