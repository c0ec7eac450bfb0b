"""Issue 35: every signed voucher and its CDR written to the backup folder as they are made, by a background loop
(app/core/invoicing/backup_files.py): byte for byte what is stored, under SUNAT's file names; issuing goes on while
the folder is unreachable, and the files come once it is back."""

from __future__ import annotations

import io
import threading
import zipfile
from pathlib import Path

import pytest

from app.core.invoicing.cdr import cdr_member
from tests.helpers.base import ISSUER_RUC
from tests.helpers.messaging_support import wait_for
from tests.helpers.voucher_matrix import factura, item

LINES = [item("Arroz superior 5 kg", "2", "10.00")]


@pytest.fixture
def shop(sunat_engine, company, tmp_path):
    """An engine sending to the SUNAT sandbox, its backup folder set (no scheduled backup in the way)."""
    sunat_engine.invoicing.create_test_certificate(ISSUER_RUC)
    folder = tmp_path / "usb"
    folder.mkdir()
    sunat_engine.admin.config_set("backup_every_vouchers", "0")
    sunat_engine.admin.config_set("backup_hour", "23")
    sunat_engine.admin.config_set("backup_folder", str(folder))
    return sunat_engine, folder


def _issued(engine, first: int, count: int) -> list[int]:
    ids = []
    for numero in range(first, first + count):
        emission = engine.invoicing.issue(factura("F001", numero, LINES))
        assert emission.sent is not None and emission.sent.estado == "aceptado", emission
        ids.append(emission.voucher_id)
    return ids


def _expected(engine, voucher_id: int) -> dict[str, bytes]:
    detail = engine.invoicing.voucher(voucher_id)
    with zipfile.ZipFile(io.BytesIO(engine.invoicing.voucher_cdr(voucher_id).cdr_zip)) as received:
        member = cdr_member(received)
        cdr = {member.filename.rsplit("/", 1)[-1]: received.read(member)}
    return {detail.nombre_archivo: detail.xml_firmado.encode("utf-8"), **cdr}


def _written(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in (folder / "comprobantes").rglob("*.xml")}


def test_each_signed_voucher_and_cdr_is_written_to_the_backup_folder(shop, tmp_path):
    engine, folder = shop
    ids = _issued(engine, 1, 3)
    expected = {name: data for voucher_id in ids for name, data in _expected(engine, voucher_id).items()}
    assert len(expected) == 6 and all(name.startswith(("R-", ISSUER_RUC)) for name in expected)
    wait_for(lambda: _written(folder) == expected, timeout=30)
    month = engine.invoicing.voucher(ids[0]).fecha_emision[:7].replace("-", "")
    assert {path.parent.relative_to(folder).as_posix() for path in (folder / "comprobantes").rglob("*.xml")} == {
        f"comprobantes/sandbox/{month}"}  # the environment's folder: a trial never mixes with real vouchers
    assert list((folder / "comprobantes").rglob("*.partial")) == []


def test_an_unreachable_folder_never_stops_issuing_and_gets_the_files_later(shop, tmp_path):
    engine, folder = shop
    folder.rename(tmp_path / "desconectada")  # the USB drive unplugged
    ids = _issued(engine, 1, 2)  # issued and accepted all the same
    writer = engine._backup_files
    wait_for(lambda: writer.loop.rounds >= 1 and writer.pending() == 2, timeout=30)  # tried, kept for later
    assert not folder.exists()

    (tmp_path / "desconectada").rename(folder)
    writer.loop.wake()  # what the retry (or a new folder setting) does
    expected = {name: data for voucher_id in ids for name, data in _expected(engine, voucher_id).items()}
    wait_for(lambda: _written(folder) == expected, timeout=30)
    assert writer.pending() == 0


def test_a_slow_folder_never_delays_issuing(shop, tmp_path, monkeypatch):
    engine, folder = shop
    writer = engine._backup_files
    stuck, release = threading.Event(), threading.Event()
    real_put = writer._put

    def slow_put(target, data):  # fault injection: a network folder that hangs until released
        stuck.set()
        assert release.wait(60)
        real_put(target, data)

    monkeypatch.setattr(writer, "_put", slow_put)
    ids = _issued(engine, 1, 1)
    assert stuck.wait(30)
    ids += _issued(engine, 2, 3)  # issued and accepted while the writer hangs
    assert _written(folder) == {}
    release.set()
    expected = {name: data for voucher_id in ids for name, data in _expected(engine, voucher_id).items()}
    wait_for(lambda: _written(folder) == expected, timeout=30)


def test_a_change_told_while_its_files_are_written_is_written_again(shop):
    """The CDR's change can be told while the loop is writing the same voucher's signed XML (read before the CDR was
    stored): the id goes back into the set and is written again, instead of being dropped with the first write (a CI
    run lost a CDR this way)."""
    engine, folder = shop
    [voucher_id] = _issued(engine, 1, 1)
    writer = engine._backup_files
    wait_for(lambda: writer.pending() == 0 and len(_written(folder)) == 2, timeout=30)
    writer.loop.stop()  # the rounds run here, in order, from now on
    reads_of = []
    reads = writer._detail

    def detail_then_told(read_id):  # fault injection: the change arrives in the middle of the write
        reads_of.append(read_id)
        found = reads(read_id)
        if len(reads_of) == 1:
            writer.changed([read_id])
        return found

    writer._detail = detail_then_told
    writer.changed([voucher_id])
    writer._round()
    assert reads_of == [voucher_id, voucher_id] and writer.pending() == 0  # read again after the change, not lost
