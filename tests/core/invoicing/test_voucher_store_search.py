"""The Comprobantes list at scale (issue 19, point 6): searches by serie-número, RUC/DNI and name answer from the FTS5
index and the list pages from indexes — EXPLAIN QUERY PLAN shows no scan of the vouchers table — with the filters by
date, type, customer and state, and keyset paging."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.core.records import Voucher
from tests.helpers.voucher_matrix import CUSTOMER_RUC, DNI_CUSTOMER, TODAY, boleta, factura, item

OTHER = {"ruc": "20512345671", "razon_social": "PANADERÍA SEÑOR DE LOS MILAGROS E.I.R.L."}


@pytest.fixture
def issued(engine, company) -> None:
    lines = [item("Arroz extra 5 kg", "2", "18.50")]
    yesterday = (TODAY - timedelta(days=1)).isoformat()
    for numero in range(1, 13):  # F001-1 … F001-12, the odd ones to OTHER, yesterday's the first four
        extra = {"receptor": OTHER} if numero % 2 else {}
        if numero <= 4:
            extra["fecha_emision"] = yesterday
        engine.invoicing.generate_xml(factura("F001", numero, lines, **extra))
    engine.invoicing.generate_xml(factura("F001", 123, lines))
    engine.invoicing.generate_xml(boleta("B001", 7, lines, receptor=DNI_CUSTOMER))


def names(rows: list[Voucher]) -> list[str]:
    return [f"{r.serie}-{r.numero}" for r in rows]


def test_search_by_serie_numero_exact_and_prefix(engine, issued):
    assert names(engine.invoicing.vouchers(search="F001-123")) == ["F001-123"]
    assert names(engine.invoicing.vouchers(search="f001-00000123")) == ["F001-123"]  # as printed, leading zeros
    assert names(engine.invoicing.vouchers(search="F001-12")) == ["F001-123", "F001-12"]
    assert names(engine.invoicing.vouchers(search="F001-1")) == ["F001-123", "F001-12", "F001-11", "F001-10", "F001-1"]
    assert engine.invoicing.vouchers(search="F001-124") == [] and engine.invoicing.vouchers(search="F002") == []


def test_search_by_document_prefix_and_name_word_prefix(engine, issued):
    assert names(engine.invoicing.vouchers(search="4567")) == ["B001-7"]  # the DNI's beginning
    assert len(engine.invoicing.vouchers(search=CUSTOMER_RUC[:6])) == 7  # F001-2 … F001-12 even, and F001-123
    assert names(engine.invoicing.vouchers(search="quis")) == ["B001-7"]  # MARÍA QUISPE MAMANI
    # every word begins a word, accents folded
    assert names(engine.invoicing.vouchers(search="maria mam")) == ["B001-7"]
    assert len(engine.invoicing.vouchers(search="SENOR milag")) == 6  # «SEÑOR DE LOS MILAGROS» typed without the Ñ
    assert engine.invoicing.vouchers(search="ispe") == []  # a word's middle is not its beginning
    assert engine.invoicing.vouchers(search='"') == [] and engine.invoicing.vouchers(search="F001 - ") == []


def test_filters_and_keyset_paging(engine, issued):
    everything = engine.invoicing.vouchers(limit=1000)
    assert len(everything) == 14
    first = engine.invoicing.vouchers(limit=5)
    second = engine.invoicing.vouchers(limit=5, before_id=first[-1].id)
    third = engine.invoicing.vouchers(limit=5, before_id=second[-1].id)
    assert first + second + third == everything
    assert engine.invoicing.vouchers(limit=5, offset=5) == second
    yesterday = (TODAY - timedelta(days=1)).isoformat()
    assert names(engine.invoicing.vouchers(hasta=yesterday)) == ["F001-4", "F001-3", "F001-2", "F001-1"]
    assert len(engine.invoicing.vouchers(desde=TODAY.isoformat())) == 10
    assert names(engine.invoicing.vouchers(tipo="03")) == ["B001-7"]
    assert names(engine.invoicing.vouchers(cliente=OTHER["ruc"], hasta=yesterday)) == ["F001-3", "F001-1"]
    assert names(engine.invoicing.vouchers(cliente=OTHER["ruc"], search="F001-1", limit=2)) == ["F001-11", "F001-1"]
    assert engine.invoicing.vouchers(cliente=OTHER["ruc"][:5]) == []  # the customer filter is exact
    engine._vouchers.set_status(first[0].id, "rechazado")
    assert [r.id for r in engine.invoicing.vouchers(status="rechazado")] == [first[0].id]
    assert engine.invoicing.vouchers(status="rechazado", before_id=first[0].id) == []


def test_no_query_scans_the_vouchers_table(engine, issued, monkeypatch):
    plans: list[str] = []
    marks: list[str] = []  # the page's bajas por confirmar (issue 31): the summaries' indexes, never a scan
    query = engine._storage.query

    def explained(sql: str, params: tuple = ()) -> list[dict]:
        rows = engine._storage.conn().execute(f"EXPLAIN QUERY PLAN {sql}", params).fetchall()
        (marks if "FROM sunat_summary_lines" in sql else plans).append(" / ".join(row[-1] for row in rows))
        return query(sql, params)

    monkeypatch.setattr(engine._storage, "query", explained)
    calls = [{"search": "F001-12"}, {"search": "2060"}, {"search": "quis"}, {}, {"status": "generado"},
             {"desde": TODAY.isoformat()}, {"tipo": "03"}, {"cliente": CUSTOMER_RUC}, {"before_id": 5, "limit": 3},
             {"search": "maria", "desde": "2020-01-01", "hasta": TODAY.isoformat(), "status": "generado"}]
    for call in calls:
        engine.invoicing.vouchers(**call)
    assert len(plans) == len(calls)
    assert marks and all("SCAN" not in plan and "USING INDEX" in plan for plan in marks), marks  # by index only
    for call, plan in zip(calls, plans, strict=True):
        assert "SCAN v " not in plan + " " and "SCAN vouchers " not in plan + " ", (call, plan)
        # The FTS5 index's matches (":M", a MATCH) joined to their rows by id, or one of the table's indexes.
        assert ("SCAN f VIRTUAL TABLE INDEX" in plan and ":M" in plan and "SEARCH v USING INTEGER PRIMARY KEY" in plan
                or "SEARCH v USING INDEX vouchers_" in plan), (call, plan)


def test_the_migration_indexes_vouchers_stored_before(engine, issued, tmp_path):
    """A folder from before m005: the migration fills the index with the vouchers already stored."""
    conn = engine._storage.conn()
    with engine._storage.write() as write:
        write.execute("DROP TABLE vouchers_fts")
        write.execute("DROP INDEX vouchers_environment")
        write.execute("DROP INDEX vouchers_fecha")
        write.execute("DELETE FROM _sqlite_migrations WHERE name = 'm005_search_index'")
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'vouchers_fts'").fetchone()[0] == 0
    home = engine.admin.home()
    engine.close()
    from app.core.engine import Engine

    again = Engine(home)
    try:
        assert names(again.invoicing.vouchers(search="F001-123")) == ["F001-123"]
        assert names(again.invoicing.vouchers(search="quispe")) == ["B001-7"]
        assert len(again.invoicing.vouchers(limit=1000)) == 14
    finally:
        again.close()
