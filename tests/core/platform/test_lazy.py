"""app.core.platform.lazy: a module stands in until one of its attributes is first read (issue 33, start-up)."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers.base import ROOT

# In a fresh interpreter, where nothing has imported colorsys (a small standard module nothing of ours uses).
SCRIPT = """
import sys
from app.core.platform.lazy import lazy_module
colorsys = lazy_module("colorsys")
assert "colorsys" not in sys.modules, "imported before its first use"
assert colorsys.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)
assert "colorsys" in sys.modules and colorsys.ONE_THIRD == sys.modules["colorsys"].ONE_THIRD
sys.modules["colorsys"].ONE_THIRD = 0.5  # what a test patches on the real module is seen through the stand-in
assert colorsys.ONE_THIRD == 0.5
try:
    colorsys.no_such_name
except AttributeError:
    pass
else:
    raise AssertionError("a missing attribute must raise AttributeError")
print("ok")
"""


def test_a_lazy_module_is_imported_at_its_first_use_and_read_live():
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
