"""A sender process of the kill-storm test (tests/core/invoicing/test_kill_storm.py): sends every voucher of a data folder that
has no CDR yet through operation 3, in random order, until each has one. Killed at random by the test.

    python -m tests.helpers.kill_storm_sender HOME

Prints one JSON line per answer that is neither a CDR nor QUEUED (the test requires none), then `done`.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable

from app.core.engine import Engine
from app.core.errors import ErrorCode

WITHOUT_CDR = ("SELECT v.id FROM vouchers v WHERE NOT EXISTS (SELECT 1 FROM sunat_submissions s JOIN sunat_cdrs c "
               "ON c.submission_id = s.id WHERE s.voucher_id = v.id)")


def main(home: str) -> None:
    send_until_done(home, send_by_operation_3)


def send_by_operation_3(engine: Engine, voucher_id: int) -> None:
    xml = engine.invoicing.voucher(voucher_id).xml_firmado
    status, envelope = engine.call("enviar", {"xml_firmado": xml})
    if status != 200 and envelope["error"]["code"] != ErrorCode.QUEUED:
        print(json.dumps({"voucher_id": voucher_id, "status": status, "error": envelope["error"]}), flush=True)


def send_until_done(home: str, send: Callable[[Engine, int], None]) -> None:
    """Send every document of the folder without a CDR, in random order, round after round until each has one."""
    with Engine(home) as engine:
        for _round in range(200):
            pending = [row["id"] for row in engine._storage.query(WITHOUT_CDR)]
            if not pending:
                break
            random.shuffle(pending)
            for voucher_id in pending:
                send(engine, voucher_id)
            settle_queued(engine)
    print("done", flush=True)


def settle_queued(engine: Engine) -> None:
    """Let the queued submissions come due (or be finished by the other sender) for a moment."""
    row = engine._storage.query_one("SELECT id FROM sunat_submissions WHERE state = 'pendiente' "
                                    "ORDER BY next_attempt_at")
    if row:
        engine._outbox.wait_settled(row["id"], 0.3)


if __name__ == "__main__":
    main(sys.argv[1])
