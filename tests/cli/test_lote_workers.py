"""`yupana lote` on every core (issue 33): the file's lines are read as they are issued, the vouchers are made by
the engine's signing workers, and a worker never loads Qt (nor opens a window), even from a process that has."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from app.core.api import YupanaError
from app.core.invoicing import batches
from app.core.invoicing.batches import RequestLines, read_requests
from scripts.wine_smoke import signing_workers
from tests.helpers.base import ROOT, run_cli
from tests.helpers.voucher_matrix import factura, item


def lines_file(tmp_path, count: int, first: int = 1):
    requests = [factura("F920", n, [item("Pan", "10", "0.50")]) for n in range(first, first + count)]
    path = tmp_path / "lote.jsonl"
    path.write_text("\n".join(json.dumps(request, default=str) for request in requests) + "\n", encoding="utf-8")
    return path, requests


def test_a_lines_file_is_checked_whole_and_read_line_by_line(tmp_path):
    path = tmp_path / "lote.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\n  \n{"b": "\xc3\xb1"}\n{"c": 3}')
    lines = read_requests(path)
    assert isinstance(lines, RequestLines) and len(lines) == 3
    assert list(lines) == ['{"a": 1}', '{"b": "ñ"}', '{"c": 3}']
    assert lines[1] == '{"b": "ñ"}' and lines[-1] == '{"c": 3}' and lines[1:3] == ['{"b": "ñ"}', '{"c": 3}']
    assert lines[5:9] == []
    with pytest.raises(IndexError):
        lines[3]
    (tmp_path / "latin1.jsonl").write_bytes(b'{"a": 1}\n{"b": "\xf1"}\n')
    with pytest.raises(YupanaError, match="no está en UTF-8"):
        read_requests(tmp_path / "latin1.jsonl")
    (tmp_path / "array.json").write_text('\ufeff [{"a": 1}, {"b": 2.50}]', encoding="utf-8")
    assert read_requests(tmp_path / "array.json") == [{"a": 1}, {"b": 2.5}]


def test_the_lote_command_signs_on_the_workers(engine, company, home, tmp_path):
    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    engine.close()
    path, _requests = lines_file(tmp_path, batches.POOL_FROM + 6)  # enough to start the workers
    done = run_cli("lote", str(path), "--certificado", certificado_id, "--quiet", home=home, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    out = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [o["item"] for o in out[:-1]] == list(range(1, batches.POOL_FROM + 7))
    assert out[-1]["emitidos"] == batches.POOL_FROM + 6 and out[-1]["con_error"] == 0
    assert out[-2]["nombre_archivo"].endswith(f"-01-F920-{batches.POOL_FROM + 6}.xml")
    # The log says which processes signed, in the line the Wine smoke reads of the installed app (issue 33): one per
    # core, each a process of its own that signed part of the batch and never loaded Qt.
    log_text = (home / "logs" / "yupana.log").read_text(encoding="utf-8")
    if (os.cpu_count() or 1) >= 2:
        workers = signing_workers(log_text, batches.POOL_FROM + 6)
        assert len(workers) == os.cpu_count()
    else:
        assert f"batch of {batches.POOL_FROM + 6} requests made by 1 signing processes" in log_text


_QT_PARENT = textwrap.dedent("""
    import json, sys

    if __name__ == "__main__":  # as the windows do: Qt loaded (and an application made) before a batch
        from PySide6.QtWidgets import QApplication

        from app.core.engine import Engine
        from app.core.platform.companies import Company

        application = QApplication([])
        engine = Engine(sys.argv[1])
        try:
            engine.admin.set_company(Company(ruc="20100066603", razon_social="COMERCIAL YUPANA S.A.C.",
                                             ubigeo="150101", direccion="AV. ABANCAY 123"))
            certificado_id = engine.invoicing.create_test_certificate("20100066603").certificado_id
            requests = [line for line in open(sys.argv[2], encoding="utf-8")]
            issued = sum(item.success for item in engine.invoicing.issue_batch(requests, certificado_id))
            print(json.dumps({"issued": issued, "workers": engine._batches.pool.about(),
                              "windows": len(application.topLevelWidgets())}))
        finally:
            engine.close()
""")


@pytest.mark.skipif(sys.platform == "win32", reason="the offscreen Qt platform of the test machines")
def test_a_worker_never_loads_qt_even_when_the_app_has(home, tmp_path):
    script = tmp_path / "qt_parent.py"
    script.write_text(_QT_PARENT, encoding="utf-8")
    path, _requests = lines_file(tmp_path, batches.POOL_FROM)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script), str(home), str(path)], capture_output=True, cwd=ROOT,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stdout.decode().splitlines()[-1])
    assert report["issued"] == batches.POOL_FROM and report["windows"] == 0
    assert len(report["workers"]) >= 1 and not any(worker["qt_loaded"] for worker in report["workers"])


def test_the_module_a_worker_loads_as_main_does_not_bring_qt():
    # A spawned worker imports its parent's main module under the name __mp_main__ (python -m app: app.__main__);
    # only `if __name__ == "__main__"` would start the windows, and nothing it imports loads Qt.
    probe = ("import runpy, sys; runpy.run_module('app.__main__', run_name='__mp_main__'); "
             "print(sorted(m for m in sys.modules if m.startswith('PySide6')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "[]"
