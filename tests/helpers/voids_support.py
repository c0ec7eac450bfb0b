"""Shared by the voiding tests (tests/core/invoicing/test_voids.py, tests/cli/test_voids_cli.py): a SUNAT sandbox
with SUNAT's sheets whose tickets are answered at the first poll, and an engine pointed at it."""

from __future__ import annotations

import pytest

from app.core.invoicing import statuses
from app.sandbox.sunat import SunatSandbox
from tests.helpers import shared
from tests.helpers.base import ISSUER_RUC
from tests.helpers.shared import RULES_DIR


@pytest.fixture(scope="module")
def _voids_sandbox():
    shared.require()
    server = SunatSandbox(rules_dir=str(RULES_DIR), hold_limit_s=20, ticket_delay_s=0)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def voids_sandbox(_voids_sandbox):
    _voids_sandbox.reset()
    _voids_sandbox.summaries.configure(delay_s=0, pending_polls=0, hold=False)
    yield _voids_sandbox
    _voids_sandbox.summaries.release()
    _voids_sandbox.release()


@pytest.fixture
def voiding(engine, company, voids_sandbox):
    """An engine on the sandbox with the demo issuer's test certificate as its default."""
    voids_sandbox.configure(engine)
    engine.admin.config_set("sunat_timeout_s", "5")
    engine.admin.config_set("sunat_retry_base_s", "0.05")
    engine.admin.config_set("sunat_retry_max_s", "0.2")
    engine.invoicing.create_test_certificate(ISSUER_RUC)
    return engine


def issued(engine, request: dict) -> int:
    emission = engine.invoicing.issue(request)
    assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO, emission
    return emission.voucher_id
