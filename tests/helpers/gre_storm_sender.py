"""A sender process of the GRE kill-storm test (tests/core/invoicing/test_gre_kill_storm.py): sends every guía of a
data folder that has no CDR yet (by its id, as the guía's detail does), in random order, until each has one. Killed
at random by the test.

    python -m tests.helpers.gre_storm_sender HOME

Prints one JSON line per outcome that is neither a CDR's state nor pending (the test requires none), then `done`.
"""

from __future__ import annotations

import json
import sys

from app.core.api import YupanaError, statuses
from app.core.engine import Engine
from tests.helpers.kill_storm_sender import send_until_done

FINE = (statuses.ACEPTADO, statuses.OBSERVADO, statuses.PENDIENTE)


def main(home: str) -> None:
    send_until_done(home, resend)


def resend(engine: Engine, voucher_id: int) -> None:
    try:
        emission = engine.invoicing.resend(voucher_id)
    except YupanaError as exc:
        print(json.dumps({"voucher_id": voucher_id, "error": exc.message}), flush=True)
        return
    if emission.outcome is None or emission.outcome.estado not in FINE:
        print(json.dumps({"voucher_id": voucher_id, "outcome": str(emission.outcome)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
