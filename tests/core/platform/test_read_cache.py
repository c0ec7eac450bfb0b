"""In-memory company profiles and settings: read once, dropped when this or another process writes them."""

import threading

from app.core.engine import Engine
from app.core.platform.companies import Company
from tests.helpers.base import ISSUER_RUC, run_cli


def _statements(engine, action):
    """The SQL statements `action` runs on this thread's connection."""
    seen = []
    conn = engine.storage.conn()
    conn.set_trace_callback(seen.append)
    try:
        action()
    finally:
        conn.set_trace_callback(None)
    return seen


def test_a_company_and_settings_are_read_once_then_served_from_memory(engine, company):
    engine.company(ISSUER_RUC)
    engine.config_get("signature_algorithm")
    statements = _statements(engine, lambda: (engine.company(ISSUER_RUC), engine.config_get("signature_algorithm")))
    assert statements == ["PRAGMA data_version", "PRAGMA data_version"]


def test_writing_in_this_process_is_seen_at_once(engine, company):
    assert engine.company(ISSUER_RUC).razon_social == "COMERCIAL YUPANA S.A.C."
    assert engine.config_get("environment") == "sandbox"
    engine.set_company(Company(ruc=ISSUER_RUC, razon_social="OTRA RAZON S.A.C.", ubigeo="150101",
                               direccion="AV. ABANCAY 123"))
    engine.config_set("environment", "beta")
    assert engine.company(ISSUER_RUC).razon_social == "OTRA RAZON S.A.C."
    assert engine.config_get("environment") == "beta"
    engine.companies.delete(ISSUER_RUC)
    assert engine.company(ISSUER_RUC) is None


def test_a_write_from_another_thread_is_seen(engine, company):
    assert engine.config_get("log_level") == "INFO"
    writer = threading.Thread(target=engine.config_set, args=("log_level", "DEBUG"))
    writer.start()
    writer.join(timeout=30)
    assert engine.config_get("log_level") == "DEBUG"


def test_a_write_by_another_engine_on_the_same_folder_is_seen(engine, company, home):
    assert engine.config_get("environment") == "sandbox"
    other = Engine(home)
    try:
        other.config_set("environment", "produccion")
        other.set_company(Company(ruc=ISSUER_RUC, razon_social="CAMBIADA S.A.C.", ubigeo="150101",
                                  direccion="JR. CUSCO 1"))
    finally:
        other.close()
    assert engine.config_get("environment") == "produccion"
    assert engine.company(ISSUER_RUC).direccion == "JR. CUSCO 1"


def test_a_write_by_another_process_is_seen(engine, company, home):
    assert engine.company(ISSUER_RUC).razon_social == "COMERCIAL YUPANA S.A.C."
    assert engine.config_get("environment") == "sandbox"
    changed = run_cli("company", "set", "--ruc", ISSUER_RUC, "--razon-social", "DESDE OTRO PROCESO S.A.C.",
                      "--ubigeo", "150101", "--direccion", "AV. ABANCAY 123", home=home)
    assert changed.returncode == 0, changed.stderr.decode()
    configured = run_cli("config", "set", "environment", "beta", home=home)
    assert configured.returncode == 0, configured.stderr.decode()
    assert engine.company(ISSUER_RUC).razon_social == "DESDE OTRO PROCESO S.A.C."
    assert engine.config_get("environment") == "beta"


def test_steady_reads_check_once_per_block_and_see_changes_after_it(engine, company, home):
    engine.company(ISSUER_RUC)
    engine.config_get("signature_algorithm")
    with engine.storage.steady_reads():
        inside = _statements(engine, lambda: [(engine.company(ISSUER_RUC), engine.config_get("signature_algorithm"))
                                              for _ in range(50)])
        other = Engine(home)
        try:
            other.config_set("signature_algorithm", "rsa-sha256")
        finally:
            other.close()
        assert engine.config_get("signature_algorithm") == "rsa-sha1"  # the block keeps what it read
    assert inside == ["PRAGMA data_version", "PRAGMA data_version"]  # one per cache, not 100
    assert engine.config_get("signature_algorithm") == "rsa-sha256"  # seen once the block ends
