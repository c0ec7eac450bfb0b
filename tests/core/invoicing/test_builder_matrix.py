"""Acceptance 1: every voucher of the matrix, generated through `yupana call xml`, passes SUNAT's schema
and rules (no rejection, no observation). Unsigned here; the signing tests sign the same matrix."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest

from tests.helpers.base import ISSUER_RUC, run_cli
from tests.helpers.oracles import load_sunat_check
from tests.helpers.voucher_matrix import MATRIX

# The schema wants a child in ext:ExtensionContent (the signature goes there). A placeholder in a
# foreign namespace (validated laxly) stands in for it, so the rest of the schema is checked strictly.
PLACEHOLDER = '<ext:ExtensionContent><y:firma-pendiente xmlns:y="urn:yupana:test"/></ext:ExtensionContent>'


def _load_oracle():
    return load_sunat_check()


def _dumps(request: dict) -> str:
    return json.dumps(request, ensure_ascii=False, default=lambda v: str(v) if isinstance(v, Decimal) else v)


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict[str, dict]:
    home = tmp_path_factory.mktemp("matrix-home")
    made = run_cli("company", "set", "--ruc", ISSUER_RUC, "--razon-social", "COMERCIAL YUPANA S.A.C.",
                   "--ubigeo", "150101", "--direccion", "AV. ABANCAY 123", "--nombre-comercial", "YUPANA", home=home)
    assert made.returncode == 0, made.stderr.decode()

    def call(entry: tuple[str, dict]) -> tuple[str, dict]:
        name, request = entry
        done = run_cli("call", "xml", "-", stdin=_dumps(request), home=home)
        envelope = json.loads(done.stdout)
        assert done.returncode == 0 and envelope["success"], (name, envelope)
        return name, envelope["data"]

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(call, MATRIX))


def test_matrix_covers_the_issue():
    requests = [r for _, r in MATRIX]
    assert len(MATRIX) >= 25
    assert {r["tipo"] for r in requests} == {"01", "03", "07", "08"}
    assert {r.get("moneda", "PEN") for r in requests} == {"PEN", "USD"}
    affectations = {i.get("tipo_afectacion_igv", "10") for r in requests for i in r["items"]}
    assert affectations >= {"10", "20", "30", "40", "11", "13", "14", "15", "21", "31", "32"}
    assert {r["codigo_motivo"] for r in requests if r["tipo"] == "07"} >= {"01", "06", "07"}
    assert any(r.get("forma_pago", {}).get("tipo") == "Credito" for r in requests)
    assert any(r["tipo"] == "03" and "receptor" not in r for r in requests)


def test_matrix_covers_issue_17():
    """At least 30 vouchers beyond the plain sale (issue 17's acceptance), each feature alone and mixed."""
    requests = [r for _, r in MATRIX]
    extras = ("descuento_global", "detraccion", "guias", "orden_compra", "tipo_operacion")
    line_extras = ("icbper", "descuento")
    plain_affectations = {"10", "20", "30", "40"}
    beyond = [r for r in requests
              if any(key in r for key in extras) or r.get("codigo_motivo") in ("10", "11", "13")
              or ("direccion" in r.get("receptor", {}))
              or any(key in i for i in r["items"] for key in line_extras)
              or any(i.get("tipo_afectacion_igv", "10") not in plain_affectations for i in r["items"])
              or any(isinstance(i["cantidad"], float) for i in r["items"])]
    assert len(beyond) >= 30
    assert {r["codigo_motivo"] for r in requests if r["tipo"] == "07"} >= {"10", "11", "13"}
    assert {r["codigo_motivo"] for r in requests if r["tipo"] == "08"} >= {"11"}
    assert {r.get("tipo_operacion") for r in requests} >= {"0200", "0201", "0206", "0208"}
    assert {r.get("moneda", "PEN") for r in requests if "detraccion" in r} == {"PEN", "USD"}


@pytest.fixture(scope="module")
def oracle():
    module = _load_oracle()
    schemas: dict[str, object] = {}

    def xsd_errors(path) -> list[str]:
        """The oracle's schema check, with each schema compiled once for the module."""
        doc = module.etree.parse(str(path))
        root = module.etree.QName(doc.getroot()).localname
        if root not in schemas:
            schemas[root] = module.etree.XMLSchema(module.etree.parse(f"{module.XSD}/{module.ROOTS[root][0]}"))
        schema = schemas[root]
        return [] if schema.validate(doc) else [e.message for e in schema.error_log]

    def rules(path, file_name: str) -> dict:
        doc = module.etree.parse(str(path))
        local, tipo, *_ = module.describe(doc)
        return module.check_rules(doc, local, tipo, file_name)

    return xsd_errors, rules


@pytest.mark.parametrize("name", [name for name, _ in MATRIX])
def test_sunat_accepts(name, generated, oracle, tmp_path):
    xsd_errors, rules = oracle
    data = generated[name]
    xml = data["xml"]
    assert xml.count("<ext:ExtensionContent></ext:ExtensionContent>") == 1 and "<cac:Signature><cbc:ID>SignatureSP</cbc:ID>" in xml
    unsigned = tmp_path / data["nombre_archivo"]
    unsigned.write_text(xml, encoding="utf-8")
    verdict = rules(unsigned, data["nombre_archivo"])
    assert verdict["rejection"] is None, verdict["message"]
    assert verdict["observations"] == []
    assert all("ExtensionContent" in error for error in xsd_errors(unsigned))  # only the empty slot
    filled = tmp_path / "filled.xml"
    filled.write_text(xml.replace("<ext:ExtensionContent></ext:ExtensionContent>", PLACEHOLDER), encoding="utf-8")
    assert xsd_errors(filled) == []
