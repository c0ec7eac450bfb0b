"""One module per feature command of `yupana` (cert, sandbox, serve, padron, demo).

Each module defines `register(subparsers, summary)` adding its parser with `set_defaults(func=...)`;
the handler takes the parsed arguments and returns the exit code.
"""

import signal
import threading


def stop_requested() -> threading.Event:
    """An event SIGTERM sets. Installed before a command says it is ready, a stop that comes right after is
    kept, not fatal (the command still cleans up what it registered)."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    return stop


def wait_until_stopped(stop: threading.Event | None = None) -> None:
    """Block a serving command until SIGTERM (`stop`, installed earlier, or from now on) or Ctrl+C."""
    stop = stop or stop_requested()
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
