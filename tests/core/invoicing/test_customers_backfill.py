"""Issue 19: the customers of vouchers issued before customers were remembered are added once, when a folder is
opened (migration `m002_customers_of_stored_vouchers`): the latest voucher's name and address win, a customer already
in the catalogue (edited by hand) is left as it is, nobody is added for a voucher without a customer document. A real
engine folder, closed and opened again."""

from __future__ import annotations

from app.core.engine import Engine
from app.core.invoicing.catalog import records
from app.core.platform.identifiers import ruc_check_digit
from tests.helpers.base import ISSUER_RUC

ANDINA, SUR, MISTI = (first10 + ruc_check_digit(first10) for first10 in ("2060103001", "2045678901", "2099887766"))
DNI = "45678912"


def factura(numero: int, ruc: str, nombre: str, direccion: str | None = None) -> dict:
    receptor = {"ruc": ruc, "razon_social": nombre, **({"direccion": direccion} if direccion else {})}
    return {"tipo": "01", "serie": "F001", "numero": numero, "emisor": {"ruc": ISSUER_RUC}, "receptor": receptor,
            "items": [{"descripcion": "Arroz extra", "cantidad": "2", "precio_unitario": "3.50"}]}


def boleta(numero: int, receptor: dict) -> dict:
    return {"tipo": "03", "serie": "B001", "numero": numero, "emisor": {"ruc": ISSUER_RUC}, "receptor": receptor,
            "items": [{"descripcion": "Pan", "cantidad": "10", "precio_unitario": "0.25"}]}


def as_before_customers_were_remembered(engine) -> None:
    """The folder as a version without the catalogue left it: vouchers, no customers, the backfill not applied."""
    with engine._storage.write() as conn:
        conn.execute("DELETE FROM customers")
        conn.execute("DELETE FROM _sqlite_migrations WHERE migration_set = 'yupana.customers'"
                     " AND name = 'm002_customers_of_stored_vouchers'")


def catalogue(engine) -> dict[tuple[str, str | None], tuple]:
    return {(c.tipo_documento, c.numero): (c.nombre, c.direccion, c.whatsapp) for c in engine._customers.all()}


def test_customers_of_vouchers_issued_before_are_added_once_latest_wins_hand_edits_kept(engine, company, home):
    engine.invoicing.generate_xml(factura(1, ANDINA, "ANDINA ANTIGUA S.R.L.", "AV. VIEJA 1"))
    engine.invoicing.generate_xml(factura(2, SUR, "COMERCIAL DEL SUR S.A.C.", "JR. CUSCO 45"))
    engine.invoicing.generate_xml(factura(3, ANDINA, "DISTRIBUIDORA ANDINA S.A.C.", "AV. LOS ANDES 123"))
    engine.invoicing.generate_xml(factura(4, MISTI, "EL MISTI E.I.R.L.", "CALLE MERCADERES 9"))
    engine.invoicing.generate_xml(boleta(1, {"tipo_documento": "1", "numero_documento": DNI,
                                             "razon_social": "MARÍA QUISPE"}))
    engine.invoicing.generate_xml(boleta(2, {"tipo_documento": "0", "numero_documento": "-",
                                             "razon_social": "CLIENTES VARIOS"}))
    sur = engine._vouchers.find(ISSUER_RUC, "01", "F001", 2)
    as_before_customers_were_remembered(engine)
    with engine._storage.write() as conn:  # one request stored before packing (TEXT): read as it is
        conn.execute("UPDATE voucher_texts SET request_json = ? WHERE voucher_id = ?", (sur["request_json"], sur["id"]))
    engine._customers.save(records.customer(tipo_documento="6", numero=MISTI, nombre="MISTI (NOMBRE A MANO)",
                                            whatsapp="987654321"))  # edited by hand meanwhile
    assert len(catalogue(engine)) == 1
    engine.close()

    opened = Engine(home)
    try:
        assert catalogue(opened) == {
            ("6", ANDINA): ("DISTRIBUIDORA ANDINA S.A.C.", "AV. LOS ANDES 123", None),  # the latest voucher's
            ("6", SUR): ("COMERCIAL DEL SUR S.A.C.", "JR. CUSCO 45", None),
            ("6", MISTI): ("MISTI (NOMBRE A MANO)", None, "+51987654321"),  # not overwritten
            ("1", DNI): ("MARÍA QUISPE", None, None),
        }
        assert [c.numero for c in opened._customers.search("quisp")] == [DNI]  # in the name index too
        opened._customers.delete(opened._customers.get("6", SUR).id)
    finally:
        opened.close()
    again = Engine(home)  # done once: a customer deleted afterwards is not brought back
    try:
        assert ("6", SUR) not in catalogue(again) and len(catalogue(again)) == 3
    finally:
        again.close()


def test_a_new_folder_backfills_nothing(engine):
    assert engine._customers.count() == 0
    assert engine._storage.query_one("SELECT name FROM _sqlite_migrations WHERE name = ?",
                                     ("m002_customers_of_stored_vouchers",)) is not None
