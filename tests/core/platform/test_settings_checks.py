"""Issue 31, item 5: a setting is checked once, in app/core/platform/settings.py, and that check is what
`yupana config set` and Ajustes refuse and what `yupana serve` and the windows use: `config set api_host 0.0.0.0`
was accepted and then `serve` refused to start. Each refusal is Spanish and names the value and why."""

from __future__ import annotations

import pytest

from app.api.local import LocalApi
from app.core.errors import YupanaError
from app.core.platform.settings import SETTINGS, checked, is_loopback


def _refusal(key: str, value: str) -> str:
    with pytest.raises(YupanaError) as refused:
        checked(key, value)
    assert refused.value.details[0].field == key
    return refused.value.message


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "mi-pc.local", "", "127.0.0.1x"])
def test_the_api_listens_on_loopback_only_and_says_why_another_host_is_refused(host):
    message = _refusal("api_host", host)
    assert message.startswith(f"No se puede usar «{host}» en «api_host»: la API local solo escucha en este equipo")
    assert "token" in message and "docs/security.md" in message


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost", " 127.0.0.1 "])
def test_loopback_hosts_are_kept(host):
    assert checked("api_host", host) == host.strip() and is_loopback(host.strip())


@pytest.mark.parametrize("key", ["api_port", "listener_port"])
@pytest.mark.parametrize("port", ["65536", "70000", "-1", "80a", "", "8 0", "²", "1e3"])
def test_ports_are_whole_numbers_up_to_65535(key, port):
    message = _refusal(key, port)
    assert message == (f"No se puede usar «{port.strip()}» en «{key}»: un puerto es un número entero entre 1 y 65535 "
                       "(o 0: uno libre que el sistema elige al iniciar).")


@pytest.mark.parametrize(("port", "kept"), [("8080", "8080"), ("1", "1"), ("65535", "65535"), ("0", "0"),
                                            (" 08080 ", "8080")])
def test_good_ports_are_kept_as_numbers(port, kept):
    assert checked("api_port", port) == kept == checked("listener_port", port)


def test_the_listener_takes_an_address_of_this_computer_not_a_name():
    assert checked("listener_host", "192.168.1.20") == "192.168.1.20" and checked("listener_host", "::1") == "::1"
    assert "debe ser una dirección IP de este equipo" in _refusal("listener_host", "mi pc")


@pytest.mark.parametrize("url", ["http://", "https://", "ftp://sunat.gob.pe", "e-factura.sunat.gob.pe",
                                 "https://host:99999/x", "https://host:puerto/x", "https://con espacio.pe"])
def test_addresses_must_be_complete_http_urls(url):
    assert "debe ser una dirección completa que empiece por http:// o https://" in _refusal("sunat_url_beta", url)


def test_spellings_people_type_are_normalised_and_folders_must_exist(tmp_path):
    assert checked("sunat_url_beta", "https://e-beta.sunat.gob.pe/x/") == "https://e-beta.sunat.gob.pe/x"
    assert checked("api_autostart", "Sí") == "si" and checked("log_level", "debug") == "DEBUG"
    assert checked("sunat_rules_dir", str(tmp_path)) == str(tmp_path) and checked("sunat_rules_dir", "") == ""
    assert _refusal("sunat_rules_dir", str(tmp_path / "VALI")).endswith("no es una carpeta que exista en este equipo.")
    (tmp_path / "reglas.txt").write_text("x")
    assert _refusal("sunat_rules_dir", str(tmp_path / "reglas.txt")).endswith("es un archivo, no una carpeta.")
    assert "valores válidos: si, no" in _refusal("api_autostart", "quizás")


def test_every_default_passes_its_own_check():
    assert {key: checked(key, setting.default) for key, setting in SETTINGS.items()} == {
        key: setting.default for key, setting in SETTINGS.items()}


def test_config_set_refuses_and_keeps_the_value_before(engine):
    with pytest.raises(YupanaError) as refused:
        engine.admin.config_set("api_host", "0.0.0.0")
    assert "«0.0.0.0»" in refused.value.message and engine.admin.config_get("api_host") == "127.0.0.1"
    assert engine.admin.config_set("api_port", " 9090 ") == "9090" == engine.admin.config_get("api_port")


def test_the_local_api_uses_the_same_check_for_a_value_stored_before_it_existed(engine):
    engine._settings._repository.put("api_host", "0.0.0.0")  # as an older version let `config set` keep it
    engine._settings._cache.clear()
    with pytest.raises(YupanaError) as refused:
        LocalApi(engine, port=0)
    assert refused.value.message == _refusal("api_host", "0.0.0.0")
    beyond_the_last_port = 65_536  # refused before anything is bound
    with pytest.raises(YupanaError) as bad_port:
        LocalApi(engine, host="127.0.0.1", port=beyond_the_last_port)
    assert bad_port.value.details[0].field == "api_port" and "«65536»" in bad_port.value.message
