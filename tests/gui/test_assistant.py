"""The first-run assistant leaves a working sandbox set-up."""

from __future__ import annotations

from app.gui.assistant import SetupAssistant
from tests.helpers.base import ISSUER_RUC
from tests.helpers.gui import open_widget, wait_idle


def fill_company(assistant, ubigeo="150101"):
    form = assistant.company_page.form
    form.ruc.setText(ISSUER_RUC)
    form.inputs["razon_social"].setText("COMERCIAL YUPANA S.A.C.")
    form.inputs["direccion"].setText("AV. ABANCAY 123")
    form.inputs["ubigeo"].setText(ubigeo)


def filled_assistant(qtbot, context) -> SetupAssistant:
    """The assistant open on the shared context, once its first loads are in, with the company filled in."""
    assistant = open_widget(qtbot, context, SetupAssistant, show=True)
    fill_company(assistant)
    return assistant


def test_assistant_leaves_a_sandbox_setup(qtbot, context, engine):
    assistant = filled_assistant(qtbot, context)
    assert assistant.environment_page.choice() == "sandbox"  # the default
    assistant.next()
    assistant.next()
    assistant.accept()
    qtbot.waitUntil(lambda: assistant.completed, timeout=15_000)
    assert engine.admin.company(ISSUER_RUC).razon_social == "COMERCIAL YUPANA S.A.C."
    assert engine.admin.config_get("environment") == "sandbox"
    assert any("sandbox" in line.lower() for line in assistant.result_lines)
    assert not assistant.isVisible()
    # a test certificate signs from the first voucher on
    assert engine.invoicing.default_certificate(ISSUER_RUC).es_prueba
    if "sunat" in context.sandboxes.running:  # working: a factura goes all the way to «aceptado», offline
        from decimal import Decimal

        from app.gui.emission import emit

        outcome = emit(engine, {"tipo": "01", "serie": "F001", "numero": 1, "emisor": {"ruc": ISSUER_RUC},
                                "receptor": {"ruc": "20601030013", "razon_social": "BODEGA SAN MARTÍN S.A.C."},
                                "items": [{"descripcion": "Arroz", "cantidad": Decimal("1"),
                                           "precio_unitario": Decimal("10")}]},
                       lambda _: None)
        assert outcome.estado == "aceptado"


def test_assistant_returns_to_the_wrong_field(qtbot, context, engine):
    assistant = SetupAssistant(context)
    qtbot.addWidget(assistant)
    assistant.show()
    fill_company(assistant, ubigeo="12")
    assistant.next()
    assistant.next()
    assistant.accept()
    wait_idle(qtbot, context.workers)
    assert assistant.currentPage() is assistant.company_page
    assert "ubigeo" in assistant.company_page.form.errors.visible()["ubigeo"]
    assert engine.admin.company(ISSUER_RUC) is None
    assert assistant.isVisible()
