"""SUNAT's reference files, found in one place for every test and benchmark.

They live in the project's `shared/` folder (SUNAT's rule sheets, schemas, WSDLs, CDRs, signed samples and
`../shared/tools/sunat_check.py`), beside the clone as `../shared`, or wherever `YUPANA_TESTS_SHARED` names (`make mutation`
runs the tests from a copy of the clone). A clone without it still passes `make test`: the tests that need the files
are skipped with one line (`MISSING`), and under `CI=true` the run stops at collection naming the folder.

No Qt and nothing of the app here: the benchmarks import it too.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HELPER = Path(__file__).relative_to(ROOT)
ENVIRONMENT_VARIABLE = "YUPANA_TESTS_SHARED"
SHARED = Path(os.environ.get(ENVIRONMENT_VARIABLE) or ROOT.parent / "shared").resolve()
SUNAT_CHECK = SHARED / "tools" / "sunat_check.py"
MAKE_PADRON = SHARED / "tools" / "make_padron.py"
RULES_DIR = SHARED / "sunat" / "validation"
SAMPLES = SHARED / "sunat" / "samples"
WSDL_DIR = SHARED / "sunat" / "wsdl"

# What must be there for the folder to count as present (a half-copied folder is reported, not half-used).
_REQUIRED = (SUNAT_CHECK, MAKE_PADRON, RULES_DIR, SAMPLES, WSDL_DIR)


def missing() -> str | None:
    """Why SUNAT's files cannot be used, in one line naming the folder and how to get it; None when they can."""
    absent = [path for path in _REQUIRED if not path.exists()]
    if not absent:
        return None
    return (f"SUNAT's reference files are missing ({absent[0]} not found): put the project's shared/ folder beside "
            f"the clone as ../shared, or name it in {ENVIRONMENT_VARIABLE}")


MISSING = missing()


def in_ci() -> bool:
    """CI exports CI=true (.ci/run): there a missing folder is a failure, never a skip."""
    return os.environ.get("CI", "").lower() == "true"


def sample_files(relative: str, suffixes: tuple[str, ...] = (".xml", ".zip")) -> list[Path]:
    """The files of a samples folder (sorted), for a parametrised test. Without the folder: one placeholder, so
    the test is collected once and skipped with the same line as the others (never an empty parameter set)."""
    folder = SAMPLES / relative
    if MISSING:
        return [folder / "missing"]
    return sorted(path for path in folder.iterdir() if path.suffix in suffixes)


def require() -> None:
    """Skip the calling test when the files are missing: every such skip comes from this one line, so pytest
    prints them as one line with their count."""
    if MISSING:
        import pytest

        pytest.skip(MISSING)
