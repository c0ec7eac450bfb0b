"""Entry script for the frozen Yupana bundle (PyInstaller needs a script, not a console script)."""

import sys

from app.cli import main

if __name__ == "__main__":
    sys.exit(main())
