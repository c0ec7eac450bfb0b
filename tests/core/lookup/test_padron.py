"""The offline RUC register: streaming import of SUNAT's padrón reducido, atomic re-import, lookups."""

from __future__ import annotations

import json
import threading
import zipfile
from pathlib import Path

import pytest

from app.core.errors import ErrorCode, YupanaError
from app.core.lookup.padron_lines import _checked
from app.core.platform.ubigeo import lookup as ubigeo_lookup
from app.core.storage.sqlite.padron import MAX_OPEN_CONNECTIONS
from tests.helpers.base import run_cli
from tests.helpers.padron_files import make_padron

ROWS, BAD = 2000, 20


@pytest.fixture(scope="module")
def padron_zip(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[str]]]:
    out = tmp_path_factory.mktemp("padron") / "padron_reducido_ruc.zip"
    return out, make_padron(ROWS, out, bad=BAD)


def _text_of(zip_path: Path) -> bytes:
    with zipfile.ZipFile(zip_path) as archive:
        return archive.read("padron_reducido_ruc.txt")


def test_import_counts_damaged_lines_and_answers_with_ubigeo_names(engine, padron_zip):
    path, known = padron_zip
    *steps, last = engine.lookups.import_padron_steps(path)
    summary = last.result
    seen = [(step.done, step.total) for step in steps]
    assert summary.rows_loaded == ROWS - BAD
    assert summary.rows_skipped == BAD
    assert summary.seconds >= 0
    assert seen and seen[-1][0] == seen[-1][1] > 0
    assert len(known) == 3
    for fields in known:
        record = engine.lookups.ruc(fields[0])
        place = ubigeo_lookup(fields[4])
        assert record.razon_social == fields[1]
        assert record.estado == fields[2] and record.condicion == fields[3]
        assert (record.departamento, record.provincia, record.distrito) == (
            place.departamento.upper(), place.provincia.upper(), place.distrito.upper())
        assert record.tipo_contribuyente is None and record.actividad_economica is None
        assert record.fuente == "padron"
    status = engine.lookups.padron_status()
    assert status.rows == ROWS - BAD and status.source == path.name and status.loaded_at


def test_address_is_composed_the_sunat_way(engine, tmp_path):
    header = _text_of_header()
    line = "20100066603|COMERCIAL PEÑA S.A.C.|ACTIVO|HABIDO|150101|AV.|GRAU|SANTA ROSA|URB.|123|4|-|-|-|-|\n"
    path = tmp_path / "padron.txt"
    path.write_bytes((header + line).encode("latin-1"))
    assert engine.lookups.import_padron(path).rows_loaded == 1
    record = engine.lookups.ruc("20100066603")
    assert record.direccion == "AV. GRAU NRO. 123 INT. 4 URB. SANTA ROSA"
    assert record.razon_social == "COMERCIAL PEÑA S.A.C."
    assert (record.departamento, record.provincia, record.distrito) == ("LIMA", "LIMA", "LIMA")


def _text_of_header() -> str:
    return ("RUC|NOMBRE O RAZÓN SOCIAL|ESTADO DEL CONTRIBUYENTE|CONDICIÓN DE DOMICILIO|UBIGEO|TIPO DE VÍA|"
            "NOMBRE DE VÍA|CÓDIGO DE ZONA|TIPO DE ZONA|NÚMERO|INTERIOR|LOTE|DEPARTAMENTO|MANZANA|KILÓMETRO|\n")


def test_plain_text_with_windows_line_ends_and_the_parallel_parser_agree(engine, padron_zip, tmp_path):
    path, known = padron_zip
    text = tmp_path / "padron_reducido_ruc.txt"
    text.write_bytes(_text_of(path).replace(b"\n", b"\r\n"))
    summary = engine.lookups.import_padron(text, parallel=True)
    assert (summary.rows_loaded, summary.rows_skipped) == (ROWS - BAD, BAD)
    assert engine.lookups.ruc(known[0][0]).razon_social == known[0][1]
    assert engine.lookups.ruc(known[0][0]).estado == known[0][2]  # no stray '\r' or '|' in the fields


def test_bad_and_unknown_rucs_answer_400_and_404(engine, padron_zip):
    engine.lookups.import_padron(padron_zip[0])
    status, envelope = engine.call("ruc", numero="20100066604")  # wrong check digit
    assert status == 400 and "dígito verificador" in envelope["error"]["message"]
    status, envelope = engine.call("ruc", numero="3010006660")
    assert status == 400 and envelope["error"]["details"][0]["field"] == "numero"
    status, envelope = engine.call("ruc", numero="20100066603")  # valid, not in this register
    assert status == 404 and envelope["error"]["code"] == "NOT_FOUND"


def test_a_file_that_is_not_the_padron_is_refused_and_the_old_data_stays(engine, padron_zip, tmp_path):
    path, known = padron_zip
    engine.lookups.import_padron(path)
    wrong = tmp_path / "clientes.txt"
    wrong.write_bytes(b"RUC|NOMBRE|DIRECCION|\n20100066603|ACME|AV. GRAU|\n")
    with pytest.raises(YupanaError) as caught:
        engine.lookups.import_padron(wrong)
    assert caught.value.code == ErrorCode.INVALID_INPUT and "no es el padrón" in caught.value.message
    with pytest.raises(YupanaError):
        engine.lookups.import_padron(wrong, parallel=True)
    assert engine.lookups.ruc(known[0][0]).razon_social == known[0][1]
    assert engine.lookups.padron_status().rows == ROWS - BAD
    assert [p.name for p in (engine.admin.home() / "padron").iterdir()] == [engine.lookups.padron_status().file]


def test_cancelled_import_leaves_nothing_behind(engine, padron_zip, monkeypatch):
    summaries = []
    import_file = engine._padron.import_file
    monkeypatch.setattr(engine._padron, "import_file", lambda *args, **options: summaries.append(
        import_file(*args, **options)) or summaries[-1])  # what the register answered the service
    steps = engine.lookups.import_padron_steps(padron_zip[0])
    assert next(steps).result is None  # the first lines read…
    steps.close()  # …and the import cancelled
    [summary] = summaries
    assert summary["cancelled"] is True
    assert engine.lookups.padron_status().loaded is False
    assert list((engine.admin.home() / "padron").iterdir()) == []


def test_reimport_while_lookups_run_never_fails_nor_answers_half_loaded(engine, padron_zip, tmp_path):
    """Lookups during a re-import answer the whole old register, then the whole new one."""
    path, known = padron_zip
    engine.lookups.import_padron(path)
    # The new register: the same RUCs with other names, so every answer tells which register gave it.
    renamed = tmp_path / "nuevo.txt"
    lines = _text_of(path).split(b"\n")
    renamed.write_bytes(b"\n".join([lines[0]] + [line.replace(b"|", b" NUEVO|", 2).replace(b" NUEVO|", b"|", 1)
                                                 if line.count(b"|") == 15 else line for line in lines[1:]]))
    rucs = [fields[0] for fields in known]
    old_names = {fields[0]: fields[1] for fields in known}
    stop = threading.Event()
    answers: list[tuple[str, str]] = []
    errors: list[BaseException] = []

    def keep_looking_up() -> None:
        while not stop.is_set():
            for ruc in rucs:
                try:
                    answers.append((ruc, engine.lookups.ruc(ruc).razon_social))
                except BaseException as exc:  # any error is a failure of the test
                    errors.append(exc)

    def looked_up_mid_import(done: int, total: int | None) -> None:
        # Each progress item is handled before the import goes on, so before the switch: lookups made now must
        # see the complete old register.
        results: list[str] = []
        probe = threading.Thread(target=lambda: results.extend(engine.lookups.ruc(r).razon_social for r in rucs))
        probe.start()
        probe.join(timeout=10)
        assert results == [old_names[r] for r in rucs]

    workers = [threading.Thread(target=keep_looking_up) for _ in range(3)]
    for worker in workers:
        worker.start()
    try:
        for step in engine.lookups.import_padron_steps(renamed):
            if step.result is None:
                looked_up_mid_import(step.done, step.total)
            else:
                summary = step.result
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=10)
    assert errors == []
    assert summary.rows_loaded == ROWS - BAD
    assert answers, "the lookup threads ran"
    assert all(name in (old_names[ruc], old_names[ruc] + " NUEVO") for ruc, name in answers)
    assert [engine.lookups.ruc(r).razon_social for r in rucs] == [old_names[r] + " NUEVO" for r in rucs]
    assert len(list((engine.admin.home() / "padron").glob("padron-*.db"))) == 1  # the old file was removed


def test_cli_import_shows_progress_and_ends_with_a_json_summary(home, padron_zip):
    path, known = padron_zip
    done = run_cli("padron", "import", str(path), home=home)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert (summary["rows_loaded"], summary["rows_skipped"]) == (ROWS - BAD, BAD)
    assert "100.0%" in done.stderr.decode()
    looked_up = run_cli("call", "ruc", known[1][0], home=home)
    assert json.loads(looked_up.stdout)["data"]["razon_social"] == known[1][1]
    status = run_cli("padron", "status", home=home)
    assert json.loads(status.stdout)["rows"] == ROWS - BAD


def test_cli_refuses_a_wrong_file_in_spanish(home, tmp_path):
    wrong = tmp_path / "otro.txt"
    wrong.write_text("hola|mundo\n", encoding="latin-1")
    done = run_cli("padron", "import", str(wrong), "--quiet", home=home)
    assert done.returncode == 1
    assert "no es el padrón reducido de RUC de SUNAT" in done.stderr.decode()


@pytest.mark.parametrize("parallel", [False, True])
def test_a_file_out_of_ruc_order_with_a_repeated_ruc_still_answers_every_row(engine, padron_zip, tmp_path, parallel):
    path, known = padron_zip
    lines = _text_of(path).split(b"\n")
    body = lines[1:-1]  # the file ends with a newline
    original = next(line for line in body if line.startswith(known[0][0].encode() + b"|"))
    repeated = original.replace(b"|", b" REPETIDO|", 2).replace(b" REPETIDO|", b"|", 1)
    in_a_block = _checked(body[1500:])[0]
    block_repeat = in_a_block.replace(b"|", b" REPETIDO|", 2).replace(b" REPETIDO|", b"|", 1)
    out = tmp_path / "desordenado.txt"
    out.write_bytes(b"\n".join([lines[0], *body[1000:], *body[:1000], repeated, block_repeat]) + b"\n")
    summary = engine.lookups.import_padron(out, parallel=parallel)
    assert (summary.rows_loaded, summary.rows_skipped) == (ROWS - BAD, BAD + 2)  # the repeats are skipped
    ruc, name = in_a_block.decode("latin-1").split("|")[:2]
    assert engine.lookups.ruc(ruc).razon_social == name
    for fields in known:
        assert engine.lookups.ruc(fields[0]).razon_social == fields[1]  # the first line of a repeated RUC answers


def test_lookups_from_many_short_lived_threads_keep_open_files_bounded(engine, padron_zip):
    path, known = padron_zip
    engine.lookups.import_padron(path)
    assert engine.lookups.ruc(known[1][0]).razon_social == known[1][1]  # this thread's connection, soon the oldest
    names: list[str] = []
    for _ in range(MAX_OPEN_CONNECTIONS + 8):
        worker = threading.Thread(target=lambda: names.append(engine.lookups.ruc(known[0][0]).razon_social))
        worker.start()
        worker.join(timeout=10)
    assert names == [known[0][1]] * (MAX_OPEN_CONNECTIONS + 8)
    assert len(engine._padron._files._opened) <= MAX_OPEN_CONNECTIONS
    assert engine.lookups.ruc(known[1][0]).razon_social == known[1][1]  # closed as the oldest: reopened
