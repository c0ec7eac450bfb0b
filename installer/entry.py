"""Entry script for the frozen Yupana bundle (PyInstaller needs a script, not a console script)."""

import multiprocessing
import sys

if __name__ == "__main__":
    # A frozen app started as a "spawn" child (app.core.lookup.padron uses a process pool) must run
    # the child's work here instead of Yupana's command line.
    multiprocessing.freeze_support()

    from app.cli import main

    sys.exit(main())
