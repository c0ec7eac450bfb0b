"""The test process's one forkserver (multiprocessing's), shared by the helpers that fork real processes from it:
`yupana ARGS` (tests/helpers/forked_cli.py) and the outbox storm's senders (tests/helpers/storm.py).

A process has a single forkserver, and its preload list is taken only when it starts (the first fork): each helper
setting its own list would leave the other's modules to be imported again in every child of a test process that
used the first helper first. So the list is one, the union of what both need."""

from __future__ import annotations

import multiprocessing

PRELOADED = (
    # the tests' lower costs (scrypt, a pool of RSA keys), as in the test process
    "tests.helpers.costs",
    # `yupana` (the published module loads the engine lazily)
    "app.cli",
    "app.core.api",
    "app.core.engine",
    # the storm's senders
    "tests.helpers.kill_storm_sender",
    "tests.helpers.gre_storm_sender",
)


def context() -> multiprocessing.context.ForkServerContext:
    forkserver = multiprocessing.get_context("forkserver")
    forkserver.set_forkserver_preload(list(PRELOADED))  # taken by the server when it starts (the first fork)
    return forkserver
