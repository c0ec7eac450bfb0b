"""`scripts/mutation_report.py` sets apart as equivalent only the mutants that change the case of SQL text SQLite
reads the same: not a quoted literal, not a name a SELECT hands back, not any other text."""

from __future__ import annotations

import importlib.util

import pytest

from tests.helpers.base import ROOT

spec = importlib.util.spec_from_file_location("mutation_report", ROOT / "scripts" / "mutation_report.py")
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)

ORIGINAL = '''def f(self):
    rows = self.storage.query("SELECT environment, COUNT(*) AS n FROM sunat_submissions WHERE state = ? "
                              "GROUP BY environment", (PENDING,))
    conn.execute("UPDATE vouchers SET status = 'enviado' WHERE id = ?", (1,))
    log.info("sendBill %s", name)'''


@pytest.mark.parametrize(("old", "new", "equivalent"), [
    ('"GROUP BY environment"', '"group by environment"', True),  # keywords
    ('"GROUP BY environment"', '"GROUP BY ENVIRONMENT"', True),  # a column name SQLite reads the same
    ("WHERE state = ? \"", "where state = ? \"", True),
    ("SET status = 'enviado' WHERE", "SET STATUS = 'ENVIADO' WHERE", False),  # a quoted literal is data
    ('"SELECT environment, COUNT(*) AS n FROM', '"SELECT ENVIRONMENT, COUNT(*) AS N FROM', False),  # read as "n"
    ('"sendBill %s"', '"sendbill %s"', False),  # not SQL
    ('"GROUP BY environment"', '"XXGROUP BY environmentXX"', False),  # not only case
])
def test_only_sql_case_swaps_are_equivalent(old, new, equivalent):
    assert old in ORIGINAL
    assert report.only_sql_case(ORIGINAL, ORIGINAL.replace(old, new, 1)) is equivalent


def test_an_unchanged_function_is_not_a_mutant():
    assert report.only_sql_case(ORIGINAL, ORIGINAL) is False
