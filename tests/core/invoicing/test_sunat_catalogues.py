"""SUNAT's catalogues in one home (app/core/invoicing/sunat_catalogues.py, issue 29): their codes are SUNAT's (the
cat_NN.xml files of its validation folder), every code of catalogue 03 is known from the bundled data file (equal to
what cat_03.xml gives), about 80 shop units have Spanish names, and shop spellings are read as their code."""

from __future__ import annotations

import pytest
from lxml import etree

from app.core.invoicing import prevalidation, sunat_catalogues
from app.core.invoicing.catalog import records
from app.core.invoicing.printing import document
from tests.helpers import shared

CATALOGUES = shared.RULES_DIR / "commons" / "cpe" / "catalogo"


def sunat_codes_of(number: str) -> set[str]:
    shared.require()
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.parse(str(CATALOGUES / f"cat_{number}.xml"), parser).getroot()
    return {(entry.get("id") or "").strip() for entry in root.iter("c")}


@pytest.mark.parametrize(("number", "codes"), [
    ("01", sunat_catalogues.DOCUMENT_TYPES), ("06", sunat_catalogues.IDENTITY_DOCUMENTS),
    ("07", sunat_catalogues.AFFECTATIONS), ("09", {**sunat_catalogues.CREDIT_NOTE_REASONS, "12": ""}),
    ("10", {**sunat_catalogues.DEBIT_NOTE_REASONS, "12": ""}), ("12", sunat_catalogues.RELATED_DOCUMENTS),
    ("16", sunat_catalogues.PRICE_TYPES), ("51", sunat_catalogues.OPERATION_TYPES), ("52", sunat_catalogues.LEGENDS),
    ("53", sunat_catalogues.DISCOUNTS), ("54", sunat_catalogues.DETRACCIONES),
    ("59", sunat_catalogues.MEANS_OF_PAYMENT), ("03", sunat_catalogues.UNITS)])
def test_every_code_of_the_home_is_sunat_s(number, codes):
    assert set(codes) <= sunat_codes_of(number)


def test_every_code_of_catalogue_03_is_known_from_the_bundled_file():
    catalogue = sunat_catalogues.unit_catalogue()
    assert set(catalogue) == sunat_codes_of("03") - {"Code"}  # SUNAT's header row is not a unit
    assert catalogue["KGM"] == "kilogram" and catalogue["NIU"] == "number of international units"
    assert sunat_catalogues.is_unit("X1") and not sunat_catalogues.is_unit("UND")


def test_the_bundled_file_is_what_the_generator_writes_from_cat_03():
    shared.require()
    bundled = (shared.ROOT / "app" / "data" / sunat_catalogues.UNITS_FILE).read_text(encoding="utf-8")
    assert bundled == sunat_catalogues.units_file_text(CATALOGUES / "cat_03.xml")
    assert bundled.startswith("# ") and "scripts/make_sunat_units.py" in bundled.splitlines()[1]  # how it was made


def test_about_eighty_shop_units_have_spanish_names():
    units = sunat_catalogues.UNITS
    assert 75 <= len(units) <= 90
    assert all(sunat_catalogues.is_unit(code) for code in units)
    assert {code: units[code] for code in ("NIU", "KGM", "BX", "SA", "RO", "LTR", "DZN")} == {
        "NIU": "unidad", "KGM": "kilogramo", "BX": "caja", "SA": "saco", "RO": "rollo", "LTR": "litro",
        "DZN": "docena"}
    assert set(units) <= set(sunat_catalogues.UNITS_ACCEPTED)  # the curated units are accepted
    # Operation 1 accepts every code of catalogue 03 (issue 37), no more: prevalidation reads the home's set.
    assert prevalidation.UNITS is sunat_catalogues.UNITS_ACCEPTED
    assert set(sunat_catalogues.UNITS_ACCEPTED) == set(sunat_catalogues.unit_catalogue())
    assert len(sunat_catalogues.UNITS_ACCEPTED) > 2000 and "QQQ" not in sunat_catalogues.UNITS_ACCEPTED
    assert sunat_catalogues.unit_name("KGM") == "kilogramo"
    assert sunat_catalogues.unit_name("X1") == "Gunter's chain"  # a unit shops do not use: SUNAT's words


@pytest.mark.parametrize(("typed", "code"), [
    ("UND", "NIU"), ("und", "NIU"), ("Unidades", "NIU"), ("KG", "KGM"), ("Kg.", "KGM"), ("kilos", "KGM"),
    ("LT", "LTR"), ("litros", "LTR"), ("GALÓN", "GLL"), ("CJ", "BX"), ("caja", "BX"), ("doc", "DZN"),
    ("SACO", "SA"), ("rollo", "RO"), ("M2", "MTK"), ("servicio", "ZZ"), ("NIU", "NIU"), ("zz", "ZZ"),
    ("X1", "X1"), ("chuspa", None), ("", None)])
def test_shop_spellings_are_read_as_their_code(typed, code):
    assert sunat_catalogues.unit_code(typed) == code


def test_every_shop_spelling_names_a_unit_with_a_spanish_name():
    assert set(sunat_catalogues.UNIT_SPELLINGS.values()) <= set(sunat_catalogues.UNITS)


def test_products_read_shop_spellings_as_the_code_vouchers_accept():
    assert records.unidad("niu") == "NIU" and records.unidad("") == "NIU"
    assert [records.unidad(typed) for typed in ("UND", "Kg.", "litros", "caja")] == ["NIU", "KGM", "LTR", "BX"]
    # a code of catalogue 03 shops rarely use, a shop spelling of a curated unit: operation 1 accepts both (issue 37)
    assert records.unidad("X1") == "X1" and records.unidad("SACO") == "SA" and records.unidad("fot") == "FOT"
    for typed in ("chuspa", "QQQ"):
        with pytest.raises(records.FieldProblem) as refused:
            records.unidad(typed)
        assert str(refused.value) == f"La unidad «{typed}» no está en el catálogo 03 de SUNAT (p. ej. NIU, ZZ, KGM)."


def test_the_printed_voucher_takes_its_titles_and_document_names_from_the_home():
    assert document.TITLES == {"01": "FACTURA ELECTRÓNICA", "03": "BOLETA DE VENTA ELECTRÓNICA",
                               "07": "NOTA DE CRÉDITO ELECTRÓNICA", "08": "NOTA DE DÉBITO ELECTRÓNICA"}
    assert document.DOCUMENT_LABELS is sunat_catalogues.IDENTITY_PRINTED
    assert set(sunat_catalogues.IDENTITY_PRINTED) == set(sunat_catalogues.IDENTITY_DOCUMENTS)


def test_identity_documents_have_one_wording():
    assert sunat_catalogues.IDENTITY_DOCUMENTS == {"6": "RUC", "1": "DNI", "4": "Carnet de extranjería",
                                                   "7": "Pasaporte", "0": "Sin documento", "A": "Cédula diplomática"}
    assert sunat_catalogues.IDENTITY_DOCUMENTS_OFFERED == ("6", "1", "4", "7", "0")
    assert set(sunat_catalogues.IDENTITY_SPELLINGS.values()) <= set(sunat_catalogues.IDENTITY_DOCUMENTS)
