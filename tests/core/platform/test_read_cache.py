"""In-memory company profiles and settings: read once, dropped when this or another process writes them."""

import threading

from app.core.engine import Engine
from app.core.platform.companies import Company
from tests.helpers.base import ISSUER_RUC, run_cli


def _statements(engine, action):
    """The SQL statements `action` runs on this thread's connection."""
    seen = []
    conn = engine._storage.conn()
    conn.set_trace_callback(seen.append)
    try:
        action()
    finally:
        conn.set_trace_callback(None)
    return seen


def test_a_company_and_settings_are_read_once_then_served_from_memory(engine, company):
    engine.admin.company(ISSUER_RUC)
    engine.admin.config_get("signature_algorithm")
    statements = _statements(engine, lambda: (engine.admin.company(ISSUER_RUC),
                                              engine.admin.config_get("signature_algorithm")))
    assert statements == ["PRAGMA data_version", "PRAGMA data_version"]


def test_writing_in_this_process_is_seen_at_once(engine, company):
    assert engine.admin.company(ISSUER_RUC).razon_social == "COMERCIAL YUPANA S.A.C."
    assert engine.admin.config_get("environment") == "sandbox"
    engine.admin.set_company(Company(ruc=ISSUER_RUC, razon_social="OTRA RAZON S.A.C.", ubigeo="150101",
                                     direccion="AV. ABANCAY 123"))
    engine.admin.config_set("environment", "beta")
    assert engine.admin.company(ISSUER_RUC).razon_social == "OTRA RAZON S.A.C."
    assert engine.admin.config_get("environment") == "beta"
    engine._companies.delete(ISSUER_RUC)
    assert engine.admin.company(ISSUER_RUC) is None


def test_a_write_from_another_thread_is_seen(engine, company):
    assert engine.admin.config_get("log_level") == "INFO"
    writer = threading.Thread(target=engine.admin.config_set, args=("log_level", "DEBUG"))
    writer.start()
    writer.join(timeout=30)
    assert engine.admin.config_get("log_level") == "DEBUG"


def test_a_write_by_another_engine_on_the_same_folder_is_seen(engine, company, home):
    assert engine.admin.config_get("environment") == "sandbox"
    other = Engine(home)
    try:
        other.admin.config_set("environment", "produccion")
        other.admin.set_company(Company(ruc=ISSUER_RUC, razon_social="CAMBIADA S.A.C.", ubigeo="150101",
                                        direccion="JR. CUSCO 1"))
    finally:
        other.close()
    assert engine.admin.config_get("environment") == "produccion"
    assert engine.admin.company(ISSUER_RUC).direccion == "JR. CUSCO 1"


def test_a_write_by_another_process_is_seen(engine, company, home):
    assert engine.admin.company(ISSUER_RUC).razon_social == "COMERCIAL YUPANA S.A.C."
    assert engine.admin.config_get("environment") == "sandbox"
    changed = run_cli("company", "set", "--ruc", ISSUER_RUC, "--razon-social", "DESDE OTRO PROCESO S.A.C.",
                      "--ubigeo", "150101", "--direccion", "AV. ABANCAY 123", home=home)
    assert changed.returncode == 0, changed.stderr.decode()
    configured = run_cli("config", "set", "environment", "beta", home=home)
    assert configured.returncode == 0, configured.stderr.decode()
    assert engine.admin.company(ISSUER_RUC).razon_social == "DESDE OTRO PROCESO S.A.C."
    assert engine.admin.config_get("environment") == "beta"


def test_steady_reads_check_once_per_block_and_see_changes_after_it(engine, company, home):
    engine.admin.company(ISSUER_RUC)
    engine.admin.config_get("signature_algorithm")
    with engine._storage.steady_reads():
        inside = _statements(engine, lambda: [(engine.admin.company(ISSUER_RUC),
                                               engine.admin.config_get("signature_algorithm")) for _ in range(50)])
        other = Engine(home)
        try:
            other.admin.config_set("signature_algorithm", "rsa-sha256")
        finally:
            other.close()
        assert engine.admin.config_get("signature_algorithm") == "rsa-sha1"  # the block keeps what it read
    assert inside == ["PRAGMA data_version", "PRAGMA data_version"]  # one per cache, not 100
    assert engine.admin.config_get("signature_algorithm") == "rsa-sha256"  # seen once the block ends
