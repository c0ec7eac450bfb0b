"""scrypt's cost is recorded beside a salt when it is not the shipped one (app.core.platform.secrets.salt_record): the
folders the tests make at their lower cost (tests/helpers/costs.py) open in a `yupana` at the shipped cost, and a
folder made at the shipped cost records its salt as every folder always did, and opens in the tests' process."""

from __future__ import annotations

import json

import pytest

from app.core.engine import Engine
from app.core.platform import secrets
from tests.helpers.base import ISSUER_RUC, run_cli


def _salt_record(home) -> str:
    engine = Engine(home)
    try:
        return engine._secrets._meta("scrypt_salt") or ""
    finally:
        engine.close()


def test_the_tests_run_at_the_lowest_cost_a_record_may_carry():
    assert secrets.SCRYPT_N == secrets.SCRYPT_N_RANGE[0] < secrets.UNRECORDED_N


def test_a_folder_made_at_a_lower_cost_opens_in_a_yupana_at_the_shipped_cost(home):
    engine = Engine(home)
    try:
        engine.invoicing.create_test_certificate(ISSUER_RUC)  # the folder's key derived, its salt recorded
    finally:
        engine.close()
    assert _salt_record(home).endswith(f"${secrets.SCRYPT_N}")
    made = run_cli("cert", "new-test", "--ruc", ISSUER_RUC, home=home, new_interpreter=True)  # the shipped cost
    assert made.returncode == 0, made.stderr.decode()
    listed = run_cli("cert", "list", "--json", home=home, new_interpreter=True)
    assert len(json.loads(listed.stdout)) == 2


def test_a_folder_made_at_the_shipped_cost_records_its_salt_as_before_and_opens_here(home):
    made = run_cli("cert", "new-test", "--ruc", ISSUER_RUC, home=home, new_interpreter=True)
    assert made.returncode == 0, made.stderr.decode()
    record = _salt_record(home)
    assert "$" not in record and secrets.read_salt_record(record)[1] == secrets.UNRECORDED_N
    engine = Engine(home)
    try:
        engine.invoicing.create_test_certificate(ISSUER_RUC)  # derives at the recorded (shipped) cost: the probe opens
        assert len(engine.invoicing.certificates()) == 2
    finally:
        engine.close()


@pytest.mark.parametrize("record", ["c2FsdA==$512", "c2FsdA==$3000", "c2FsdA==$1048577", "c2FsdA==$x"])
def test_a_damaged_cost_is_refused(record):
    with pytest.raises(ValueError):
        secrets.read_salt_record(record)


def test_a_record_reads_back_as_written():
    assert secrets.read_salt_record(secrets.salt_record(b"salt", 2 ** 12)) == (b"salt", 2 ** 12)
    assert secrets.salt_record(b"salt", secrets.UNRECORDED_N) == "c2FsdA=="
