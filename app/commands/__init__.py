"""One module per feature command of `yupana` (cert, sandbox, serve, padron, demo).

Each module defines `register(subparsers, summary)` adding its parser with `set_defaults(func=...)`;
the handler takes the parsed arguments and returns the exit code.
"""

import signal
import threading


def wait_until_stopped() -> None:
    """Block a serving command until SIGTERM or Ctrl+C."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
