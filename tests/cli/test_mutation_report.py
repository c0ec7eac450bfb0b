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
    ('"SELECT environment, COUNT(*) AS n FROM', '"SELECT ENVIRONMENT, COUNT(*) AS n FROM', True),  # a column: as declared
    ('"sendBill %s"', '"sendbill %s"', False),  # not SQL
    ('"GROUP BY environment"', '"XXGROUP BY environmentXX"', False),  # not only case
])
def test_only_sql_case_swaps_are_equivalent(old, new, equivalent):
    assert old in ORIGINAL
    assert report.only_sql_case(ORIGINAL, ORIGINAL.replace(old, new, 1)) is equivalent


def test_an_unchanged_function_is_not_a_mutant():
    assert report.only_sql_case(ORIGINAL, ORIGINAL) is False


SPLIT = '''def g(self):
    row = self.storage.query_one(
        "SELECT c.codigo, c.estado, "
        "c.received_at "
        "FROM sunat_cdrs c JOIN sunat_submissions s ON s.id = c.submission_id "
        "WHERE s.voucher_id = ? ORDER BY c.id DESC LIMIT 1", (voucher_id,))
    return row'''


@pytest.mark.parametrize(("old", "new", "equivalent"), [
    ('"FROM sunat_cdrs c JOIN', '"FROM SUNAT_CDRS C JOIN', True),  # the line has SQL words of its own
    ('"WHERE s.voucher_id = ? ORDER BY c.id DESC LIMIT 1"', '"where s.voucher_id = ? order by c.id desc limit 1"',
     True),
    ('"c.received_at "', '"C.RECEIVED_AT "', True),  # no SQL word on the line; a column SQLite names as declared
    ('"SELECT c.codigo, c.estado, "', '"SELECT C.CODIGO, C.ESTADO, "', True),
])
def test_a_text_split_over_lines_is_judged_whole(old, new, equivalent):
    assert old in SPLIT
    assert report.only_sql_case(SPLIT, SPLIT.replace(old, new, 1)) is equivalent


UPDATE = '''def h(self):
    conn.execute("UPDATE sunat_submissions SET state = ?, "
                 "claimed_by = NULL, claimed_until = NULL "
                 "WHERE id = ?", (DONE, 1))
    log.info("claimed_by %s", 1)'''


@pytest.mark.parametrize(("old", "new", "equivalent"), [
    ('"claimed_by = NULL, claimed_until = NULL "', '"CLAIMED_BY = NULL, CLAIMED_UNTIL = NULL "', True),
    ('"claimed_by %s"', '"CLAIMED_BY %s"', False),  # a log text, not SQL
])
def test_a_line_without_sql_words_is_judged_with_the_text_it_belongs_to(old, new, equivalent):
    assert report.only_sql_case(UPDATE, UPDATE.replace(old, new, 1)) is equivalent


@pytest.mark.parametrize(("sql", "names"), [
    ("SELECT s.id, S.STATE, count(*), MIN(x) AS at, COALESCE(a, b) AS n FROM t", ["id", "state", "count(*)", "at", "n"]),
    ("SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b)", ["id", "1"]),
])
def test_the_names_a_select_hands_back(sql, names):
    assert report._result_names(sql) == names
