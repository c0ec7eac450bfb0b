"""Sizes of the benchmarks: the real ones, or tiny ones when YUPANA_BENCH_QUICK=1.

The quick sizes only show that every benchmark runs and prints its JSON line (a test runs `make bench`
that way); their figures mean nothing. Files whose name starts with «_» are not benchmarks.
"""

from __future__ import annotations

import os

QUICK = os.environ.get("YUPANA_BENCH_QUICK", "") not in ("", "0")


def size(full: int, quick: int) -> int:
    return quick if QUICK else full
