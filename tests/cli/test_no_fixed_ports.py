"""Every test and benchmark takes its ports from the OS (port 0): with the app open on this machine (its API and its
webhook listener on their default ports) or another `yupana serve` running, `make test` and `make bench` still pass.
This file names those ports only as arithmetic, so a plain text search for them finds real uses alone."""

from __future__ import annotations

import re

from tests.helpers.base import ROOT

API, LISTENER = 8700 + 87, 8700 + 88  # the app's defaults (app/core/platform/settings.py)

# A port written as a number where a server is bound or told where to listen.
FIXED_PORT = [
    re.compile(r'"--(?:listener-)?port",\s*"([1-9]\d*)"'),            # yupana serve --port N
    re.compile(r'\bport\s*=\s*([1-9]\d*)\b'),                          # LocalApi(engine, port=N)
    re.compile(r'\.bind\(\(\s*"[^"]*",\s*([1-9]\d*)\s*\)\)'),          # sock.bind(("127.0.0.1", N))
    re.compile(r'config_set\("\w*port",\s*"([1-9]\d*)"\)'),            # engine.config_set("listener_port", "N")
    re.compile(r'start_listener\(\s*"[^"]*",\s*([1-9]\d*)\s*\)'),      # engine.start_listener(host, N)
]


# The app's own default ports, named anywhere in a test or a benchmark (a URL, a setting's value): a running Yupana
# holds them, so a test that leans on them breaks or hides a break.
DEFAULT_PORTS = re.compile(r"(?<!\d)878[78](?!\d)")


def fixed_ports(text: str) -> list[str]:
    return [match.group(0) for pattern in (*FIXED_PORT, DEFAULT_PORTS) for match in pattern.finditer(text)]


def test_no_test_or_benchmark_binds_a_fixed_port():
    sources = [path for folder in ("tests", "bench") for path in (ROOT / folder).rglob("*.py")
               if path != ROOT / "tests" / "cli" / "test_no_fixed_ports.py"]
    assert len(sources) > 100
    found = {str(path.relative_to(ROOT)): fixed_ports(path.read_text(encoding="utf-8")) for path in sources}
    assert {path: hits for path, hits in found.items() if hits} == {}


def test_the_scan_sees_each_form_of_a_fixed_port():
    text = (f'serve("--port", "{API}"); LocalApi(engine, port={LISTENER}); sock.bind(("127.0.0.1", 9000))\n'
            f'engine.config_set("listener_port", "{LISTENER}"); engine.start_listener("127.0.0.1", {LISTENER})\n'
            'serve("--port", "0"); LocalApi(engine, port=0); sock.bind(("127.0.0.1", 0)); engine.config_set("api_port", "0")')
    assert len(fixed_ports(text)) == 5 + 4  # and the four mentions of the app's default ports
    assert fixed_ports(f'url = "http://127.0.0.1:{LISTENER}/webhooks"; port = " {API} "; other = 1{LISTENER}') == \
        [str(LISTENER), str(API)]
