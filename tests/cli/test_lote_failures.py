"""`yupana lote` when the disk or the database fails under a block: it stops, says so in Spanish and exits with 1; a
refusal still reaches the command line's own handling."""

from __future__ import annotations

import argparse
import json
from types import SimpleNamespace

import pytest

import app.commands
from app.commands.lote import cmd_lote
from app.core.api import YupanaError, invalid


class DatabaseFailure(Exception):
    """What a database driver raises when its disk fails (sqlite3's OperationalError, psycopg's OperationalError):
    engines share no base class, so the command must stop on any such error, not on one driver's."""


class _Item:
    def envelope(self):
        return {"success": True, "data": {"nombre_archivo": "20100066603-01-F001-1.xml", "xml_firmado": "<x/>"}}


def _engine(failure: BaseException):
    def issue_batch(batch, certificado_id):
        yield _Item()
        raise failure

    closed: list[bool] = []
    engine = SimpleNamespace(invoicing=SimpleNamespace(read_batch=lambda path: [{}, {}], issue_batch=issue_batch),
                             close=lambda: closed.append(True), closed=closed)
    return engine


def _run(monkeypatch, tmp_path, failure: BaseException):
    source = tmp_path / "lote.jsonl"
    source.write_text("{}\n{}\n", encoding="utf-8")
    engine = _engine(failure)
    monkeypatch.setattr(app.commands, "open_engine", lambda args: engine)
    args = argparse.Namespace(file=str(source), salida=None, pdf=False, ticket=False, quiet=True, certificado=None)
    return engine, lambda: cmd_lote(args)


@pytest.mark.parametrize("failure", [DatabaseFailure("disk I/O error"), OSError(28, "No space left")])
def test_a_block_that_cannot_be_written_stops_the_batch_with_a_spanish_message(monkeypatch, tmp_path, capsys, failure):
    engine, run = _run(monkeypatch, tmp_path, failure)
    assert run() == 1
    out, err = capsys.readouterr()
    assert json.loads(out.splitlines()[0])["success"] is True  # what was shown before stays shown
    assert "el lote se detuvo al guardar" in err and "vuelva a ejecutar el archivo" in err
    assert engine.closed == [True]


def test_a_refusal_is_left_to_the_command_line(monkeypatch, tmp_path):
    engine, run = _run(monkeypatch, tmp_path, invalid("archivo", "No."))
    with pytest.raises(YupanaError):
        run()
    assert engine.closed == [True]
