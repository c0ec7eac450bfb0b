"""The voucher form's drafts (issue 32) through their port: saved, replaced, listed and removed per desk; another
desk sharing the database never sees them; a folder of schema version 1 gets their table."""

from __future__ import annotations

from decimal import Decimal

import pytest

from app.core.errors import YupanaError
from app.core.invoicing.drafts import Drafts
from app.core.storage import schema
from app.core.storage.engines import open_database
from app.core.storage.ports.drafts import DraftRepository
from app.core.storage.sqlite.database import Storage
from app.core.storage.sqlite.schema import ADOPTED, UPGRADED


@pytest.fixture
def drafts(repos) -> DraftRepository:
    return repos.drafts


def test_a_draft_is_saved_replaced_listed_and_removed(drafts):
    first = drafts.save("caja-1", None, '{"items": []}', "Juan Pérez", "590.00", "PEN")
    second = drafts.save("caja-1", None, '{"items": [1]}', "Bodega Rosa", "12.50", "USD")
    assert first != second
    stored = drafts.get("caja-1", first)
    assert stored is not None and stored.content == '{"items": []}' and stored.cliente == "Juan Pérez"
    assert stored.updated_at.endswith("Z") and 0 <= stored.age_seconds < 60  # the database's clock
    assert drafts.save("caja-1", first, '{"items": [1, 2]}', "Juan Pérez", "600.00", "PEN") == first  # replaced
    listed = drafts.list("caja-1")
    assert {row.id for row in listed} == {first, second}
    times = [row.updated_at for row in listed]
    assert times == sorted(times, reverse=True)  # the most recently saved first
    replaced = next(row for row in listed if row.id == first)
    assert replaced.content == '{"items": [1, 2]}' and replaced.total == "600.00" and replaced.updated_at >= \
        stored.updated_at
    assert drafts.delete("caja-1", first) is True
    assert drafts.delete("caja-1", first) is False
    assert [row.id for row in drafts.list("caja-1")] == [second]
    assert drafts.get("caja-1", first) is None


def test_another_desks_drafts_are_not_seen(drafts):
    mine = drafts.save("caja-1", None, "{}", "Juan", "1.00", "PEN")
    theirs = drafts.save("caja-2", None, "{}", "Rosa", "2.00", "PEN")
    assert [row.id for row in drafts.list("caja-1")] == [mine]
    assert [row.id for row in drafts.list("caja-2")] == [theirs]
    assert drafts.get("caja-1", theirs) is None
    assert drafts.delete("caja-1", theirs) is False  # nor removed
    # saving over another desk's id leaves theirs alone and keeps a new draft of this desk
    again = drafts.save("caja-1", theirs, '{"x": 1}', "Juan", "3.00", "PEN")
    assert again not in (mine, theirs)
    assert drafts.get("caja-2", theirs).content == "{}"


def test_the_part_keeps_the_forms_content_as_json(repos):
    part = Drafts(repos.drafts, desk="caja-1")
    other = Drafts(repos.drafts, desk="caja-2")
    content = {"receptor": {"razon_social": "Juan Pérez"}, "items": [{"descripcion": "Arroz", "cantidad": "2"}]}
    saved = part.save(content, cliente="Juan Pérez", total=Decimal("590.00"))
    assert saved.content == content and saved.total == Decimal("590.00") and 0 <= saved.age_seconds < 60
    [listed] = part.list()  # its age is read again from the database's clock: the rest is the same
    assert (listed.id, listed.content, listed.cliente, listed.total, listed.updated_at) == \
        (saved.id, saved.content, saved.cliente, saved.total, saved.updated_at) and other.list() == []
    with pytest.raises(YupanaError):
        other.get(saved.id)
    with pytest.raises(YupanaError):
        part.save(["not", "an", "object"])  # type: ignore[arg-type]
    assert part.discard(saved.id) and part.list() == []


def test_a_folder_of_version_1_gets_the_drafts_table_once(tmp_path):
    path = tmp_path / "yupana.db"
    open_database(path).close()
    raw = Storage.open(path)  # back to version 1, as a folder written before drafts (no step run on opening)
    with raw.write() as conn:  # what versions 2 to 5 (issues 32, 30, 34 and 36) brought, undone
        for undo in ("DROP TABLE voucher_drafts", "DROP TABLE voucher_numbering", "DROP TABLE summary_numbering",
                     "DROP TABLE desk_turns", "ALTER TABLE products DROP COLUMN version",
                     "ALTER TABLE deliveries DROP COLUMN lease_holder", "DROP TABLE gre_tickets",
                     "DROP TABLE transport_entries", "DELETE FROM schema_version WHERE version > 1"):
            conn.execute(undo)
        conn.execute("INSERT INTO products (codigo, descripcion, precio) VALUES ('P1', 'Arroz', '4.50')")
    raw.close()
    open_database(path).close()
    storage = open_database(path)
    try:
        assert [(row["version"], row["how"]) for row in
                storage.query("SELECT version, how FROM schema_version ORDER BY version")] == \
            [(1, ADOPTED)] + [(later, UPGRADED) for later in range(2, schema.VERSION + 1)]
        assert storage.query_one("SELECT COUNT(*) AS n FROM voucher_drafts") == {"n": 0}
        assert storage.query_one("SELECT COUNT(*) AS n FROM transport_entries") == {"n": 0}
        assert storage.query_one("SELECT version FROM products") == {"version": 1}  # a product from before: version 1
    finally:
        storage.close()
    assert schema.upgrades(schema.SQLITE, schema.VERSION) == []
