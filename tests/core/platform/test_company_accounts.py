"""The company's Banco de la Nación account for detracciones: remembered by the voucher form, apart from the
profile (issue 17, point 10)."""

from __future__ import annotations

import pytest

from app.core.errors import YupanaError


def test_the_account_is_kept_apart_from_the_profile(company, engine):
    assert engine.admin.detraction_account(company.ruc) is None
    assert engine.admin.set_detraction_account(company.ruc, " 00-000-111111 ") == "00-000-111111"
    engine.admin.set_company(company)  # saving the profile keeps it
    assert engine.admin.detraction_account(company.ruc) == "00-000-111111"
    assert engine.admin.set_detraction_account(company.ruc, "") is None


def test_an_unknown_company_is_named(engine):
    with pytest.raises(YupanaError) as refused:
        engine.admin.set_detraction_account("20000000001", "00-000-111111")
    assert "20000000001" in refused.value.message
