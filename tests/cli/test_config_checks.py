"""Issue 31, item 5, as a real process: `yupana config set` refuses what `yupana serve` could not use, in Spanish,
naming the value and why (it accepted `api_host 0.0.0.0`, then `serve` refused to start); `serve` checks a stored
value with the same check."""

from __future__ import annotations

from tests.helpers.base import run_cli


def test_config_set_refuses_a_host_the_api_would_not_listen_on(home):
    refused = run_cli("config", "set", "api_host", "0.0.0.0")
    assert refused.returncode == 1 and refused.stdout == b""
    error = refused.stderr.decode()
    assert "No se puede usar «0.0.0.0» en «api_host»: la API local solo escucha en este equipo" in error
    assert "Traceback" not in error
    assert run_cli("config", "get", "api_host").stdout.decode().strip() == "127.0.0.1"
    kept = run_cli("config", "set", "api_host", "::1")
    assert kept.returncode == 0 and kept.stdout.decode().strip() == "::1"


def test_config_set_refuses_a_port_out_of_range_and_keeps_a_good_one(home):
    refused = run_cli("config", "set", "api_port", "70000")
    assert refused.returncode == 1
    assert "«70000»" in refused.stderr.decode() and "entre 1 y 65535" in refused.stderr.decode()
    kept = run_cli("config", "set", "listener_port", "8899")
    assert kept.returncode == 0 and run_cli("config", "get", "listener_port").stdout.decode().strip() == "8899"


def test_serve_refuses_a_stored_host_with_the_same_words(home, engine):
    engine._settings._repository.put("api_host", "0.0.0.0")  # stored before `config set` checked it
    engine.close()
    done = run_cli("serve", "--no-listener", timeout=60)
    assert done.returncode != 0 and done.stdout == b""
    assert "No se puede usar «0.0.0.0» en «api_host»: la API local solo escucha en este equipo" in done.stderr.decode()
