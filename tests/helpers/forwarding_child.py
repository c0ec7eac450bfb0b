"""A forwarder alone in a process, for the SIGKILL test (tests/core/messaging/test_fair_forwarding.py).

    python -m tests.helpers.forwarding_child <database> <slots per subscription> <lease seconds>

It opens the database, forwards what is due with the lease given (the tests give one longer than they wait: a restart
after a kill takes the killed process's deliveries over at once, their holder's process being gone), prints «ready»
and runs until its stdin closes (then it stops cleanly) or it is killed.
"""

from __future__ import annotations

import sys
from pathlib import Path

SECRET = "whsec_" + "Zm9yd2FyZGluZy1raWxsLXRlc3Qtc2VjcmV0MTIzNA=="


def main() -> None:
    from app.core.messaging import forwarding
    from app.core.messaging.forwarding import Forwarder
    from app.core.messaging.store import MessagingStore
    from app.core.storage.engines import open_database
    from app.core.storage.sqlite.messaging import SqliteMessagingRepository

    path, slots, lease = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    forwarding.LEASE_S = lease
    forwarding.RENEW_EVERY_S = lease / 3
    storage = open_database(path)
    store = MessagingStore(storage, SqliteMessagingRepository(storage))
    forwarder = Forwarder(store, lambda _sub: SECRET, workers=slots)
    forwarder.start()
    print("ready", flush=True)
    sys.stdin.read()  # until the test closes it
    forwarder.stop()
    storage.close()


if __name__ == "__main__":
    main()
