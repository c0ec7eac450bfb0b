"""Issue 35, item 1 on SQLite: verified backups while Yupana runs (app/core/invoicing/backups.py,
app/core/storage/sqlite/backup.py) and `yupana respaldo crear|listar|verificar`.

A backup made while another thread keeps issuing is consistent and verifies; its manifest says the counts, the last
number of each serie and the last RA counter of the day; secrets stay encrypted inside; `verificar` refuses a
flipped byte, a missing member and a manifest that does not match, naming what is wrong in Spanish."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import threading
import zipfile
from pathlib import Path

import pytest

from app.core.errors import YupanaError
from app.core.invoicing import backups, statuses
from app.core.platform import clock
from tests.helpers.base import ISSUER_RUC, run_cli
from tests.helpers.damaged_backups import flipped_byte_copy
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import factura, item

LINES = [item("Arroz superior 5 kg", "2", "10.00")]


@pytest.fixture
def shop(engine, company):
    engine.invoicing.create_test_certificate(ISSUER_RUC)
    answers = list(engine.invoicing.issue_batch([factura("F001", n, LINES) for n in range(1, 41)]))
    assert all(answer.success for answer in answers)
    return engine


@pytest.fixture
def folder(tmp_path) -> Path:
    path = tmp_path / "usb"
    path.mkdir()
    return path


def _live_counts(engine, *tables: str) -> dict[str, int]:
    conn = sqlite3.connect(engine.admin.database_file())
    try:
        return {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in tables}
    finally:
        conn.close()


def _manifest(path: Path) -> dict:
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read(backups.MANIFEST))


def test_a_backup_holds_the_database_and_a_manifest_that_says_what_it_holds(shop, folder):
    shop.invoicing.set_sol_credentials(ISSUER_RUC, "MODDATOS", "claveSOLsecreta")
    check = shop.admin.create_backup(folder)
    assert check.ok and check.signatures_checked == 20 and check.info is not None
    path = Path(check.path)
    assert path.parent == folder and backups.NAME.match(path.name) and oct(path.stat().st_mode & 0o777) == "0o600"
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == sorted([backups.MANIFEST, backups.DATABASE])
        assert archive.getinfo(backups.DATABASE).compress_type == zipfile.ZIP_DEFLATED
        database = archive.read(backups.DATABASE)
    assert b"claveSOLsecreta" not in database  # the SOL password went in encrypted, as stored
    manifest = _manifest(path)
    assert manifest["version_yupana"] and manifest["formato"] == 1 and manifest["fecha"].startswith(f"{clock.today():%Y}")
    live = _live_counts(shop, "vouchers", "voucher_texts", "secrets", "companies")
    assert {table: manifest["tablas"][table] for table in live} == live and live["vouchers"] == 40
    assert manifest["series"] == [{"entorno": "sandbox", "ruc": ISSUER_RUC, "tipo": "01", "serie": "F001", "ultimo": 40}]
    assert len(manifest["base"]["sha256"]) == 64 and manifest["base"]["bytes"] > 0
    assert [tmp.name for tmp in folder.iterdir() if tmp != path] == [backups.LOCK]  # no temporary copy left behind
    assert [info.path for info in backups.backups(folder)] == [str(path)]


def test_the_last_ra_counter_of_the_day_is_in_the_manifest(voiding, folder):
    first = issued(voiding, factura("F001", 1, LINES))
    issued(voiding, factura("F001", 2, LINES))
    voiding.invoicing.void(first, "ERROR EN EL RUC DEL CLIENTE")
    manifest = _manifest(Path(voiding.admin.create_backup(folder).path))
    assert manifest["resumenes"] == [{"entorno": "sandbox", "ruc": ISSUER_RUC, "tipo": "RA",
                                      "dia": clock.today().isoformat(), "ultimo": 1}]
    assert voiding.invoicing.voucher(first).status == statuses.ANULADO


def test_a_backup_made_while_vouchers_are_issued_is_consistent(shop, folder):
    """Another thread keeps issuing through the engine while the backup is taken: the copy is one moment of the
    database (every voucher with its texts), it verifies, and issuing was never refused."""
    stop, first_block = threading.Event(), threading.Event()
    issued_numbers: list[int] = []
    errors: list[BaseException] = []

    def keep_issuing() -> None:
        numero = 1
        try:
            while not stop.is_set():
                answers = list(shop.invoicing.issue_batch([factura("F002", n, LINES)
                                                           for n in range(numero, numero + 5)]))
                assert all(answer.success for answer in answers)
                issued_numbers.extend(range(numero, numero + 5))
                first_block.set()
                numero += 5
        except BaseException as exc:  # noqa: BLE001 - reported by the test's thread
            errors.append(exc)

    def backed_up() -> dict:
        check = shop.admin.create_backup(folder)
        assert check.ok
        return _manifest(Path(check.path))  # read now: the next backup of the day rotates this one away

    worker = threading.Thread(target=keep_issuing)
    worker.start()
    try:
        manifests = [backed_up() for _ in range(2)] if first_block.wait(30) else []
    finally:
        stop.set()
        worker.join(timeout=60)
    assert not errors and len(manifests) == 2
    for manifest in manifests:
        assert manifest["tablas"]["vouchers"] == manifest["tablas"]["voucher_texts"]
        last = {entry["serie"]: entry["ultimo"] for entry in manifest["series"]}
        assert last["F001"] == 40 and manifest["tablas"]["vouchers"] == 40 + last.get("F002", 0)
    copied = [{e["serie"]: e["ultimo"] for e in manifest["series"]}.get("F002", 0) for manifest in manifests]
    assert 5 <= copied[0] <= copied[1] <= len(issued_numbers)  # each copy is a moment of the issuing


def test_the_folder_must_exist_and_be_outside_the_data_folder(shop, tmp_path):
    with pytest.raises(YupanaError, match="no existe"):
        shop.admin.create_backup(tmp_path / "falta")
    inside = shop.admin.home() / "copias"
    inside.mkdir()
    with pytest.raises(YupanaError, match="dentro de la carpeta de datos"):
        shop.admin.create_backup(inside)


# ---------------------------------------------------------------- verificar refuses a damaged backup

@pytest.fixture
def good_backup(shop, folder) -> Path:
    return Path(shop.admin.create_backup(folder).path)


def _rewritten(source: Path, target: Path, *, drop: str | None = None, manifest: dict | None = None) -> Path:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            if info.filename == drop:
                continue
            data = old.read(info.filename)
            if manifest is not None and info.filename == backups.MANIFEST:
                data = json.dumps(manifest).encode()
            new.writestr(info.filename, data)
    return target


def test_verificar_refuses_a_flipped_byte_in_the_database(good_backup, tmp_path):
    damaged = flipped_byte_copy(good_backup, tmp_path / "volteado.zip")  # a byte whose flip changes the data
    check = backups.verify(damaged)
    assert not check.ok and len(check.problems) == 1
    assert check.problems[0].startswith("«yupana.db» está dañado dentro del respaldo")


def test_verificar_refuses_a_flipped_byte_in_the_manifest(good_backup, tmp_path):
    data = bytearray(good_backup.read_bytes())
    data[40] ^= 0x01  # inside the first member, the manifest
    damaged = tmp_path / "manifiesto-volteado.zip"
    damaged.write_bytes(bytes(data))
    check = backups.verify(damaged)
    assert not check.ok and "manifiesto" in check.problems[0].lower()


@pytest.mark.parametrize("member", [backups.MANIFEST, backups.DATABASE])
def test_verificar_refuses_a_missing_member(good_backup, tmp_path, member):
    check = backups.verify(_rewritten(good_backup, tmp_path / "incompleto.zip", drop=member))
    assert check.problems == [f"Al respaldo «incompleto.zip» le falta «{member}»."]


def test_verificar_refuses_a_manifest_that_does_not_match(good_backup, tmp_path):
    manifest = _manifest(good_backup)
    manifest["tablas"]["vouchers"] += 1
    manifest["series"][0]["ultimo"] = 39
    check = backups.verify(_rewritten(good_backup, tmp_path / "otro-manifiesto.zip", manifest=manifest))
    assert check.problems == [
        "La tabla «vouchers» tiene 40 filas y el manifiesto dice 41 filas.",
        f"El último número de serie sandbox {ISSUER_RUC} 01 F001 es 40 en la base y 39 en el manifiesto."]
    manifest = _manifest(good_backup)
    manifest["base"]["sha256"] = "0" * 64
    check = backups.verify(_rewritten(good_backup, tmp_path / "otro-sha.zip", manifest=manifest))
    assert len(check.problems) == 1 and check.problems[0].startswith("El SHA-256 de «yupana.db» (")
    assert backups.verify(good_backup).ok


def test_verificar_refuses_a_file_that_is_not_a_zip(tmp_path):
    path = tmp_path / "yupana-respaldo-20261206-120000.zip"
    path.write_bytes(b"no soy un zip")
    check = backups.verify(path)
    assert not check.ok and check.problems[0].startswith("«yupana-respaldo-20261206-120000.zip» no es un zip")


def test_yupana_respaldo_crear_listar_verificar(shop, home, folder, tmp_path):
    shop.close()
    made = run_cli("respaldo", "crear", str(folder), home=home)
    assert made.returncode == 0, made.stderr
    path = Path(made.stdout.decode().strip().splitlines()[-1])
    assert path.parent == folder and "Copia verificada: 40 comprobantes" in made.stderr.decode()
    listed = run_cli("respaldo", "listar", str(folder), home=home)
    assert listed.returncode == 0 and str(path) in listed.stdout.decode() and "40 comprobantes" in listed.stdout.decode()
    good = run_cli("respaldo", "verificar", str(path), home=home)
    assert good.returncode == 0 and good.stdout.decode().startswith("Copia correcta:")
    broken = run_cli("respaldo", "verificar", str(_rewritten(path, tmp_path / "roto.zip", drop=backups.DATABASE)),
                     home=home)
    assert broken.returncode == 1 and "le falta «yupana.db»" in broken.stderr.decode()


# ---------------------------------------------------------------- rotation: 7 daily, 4 weekly, 12 monthly

def _fake(folder: Path, when: str) -> Path:
    path = folder / f"yupana-respaldo-{when}.zip"
    path.write_bytes(b"copia")
    return path


def test_rotation_keeps_7_daily_4_weekly_and_12_monthly(folder):
    day = dt.date(2025, 11, 1)
    while day <= dt.date(2026, 12, 6):  # one backup a day for 13 months, two on the last day
        _fake(folder, f"{day:%Y%m%d}-030000")
        day += dt.timedelta(days=1)
    _fake(folder, "20261206-150000")
    (folder / "yupana-respaldo-20250101-000000.fallido").write_bytes(b"x")
    (folder / "notas.txt").write_text("de la tienda")
    removed = backups.rotate(folder)
    kept = sorted(path.name.removeprefix("yupana-respaldo-")[:8] for path in folder.glob("yupana-respaldo-*.zip"))
    daily = ["20261130", "20261201", "20261202", "20261203", "20261204", "20261205", "20261206"]
    weekly = ["20261115", "20261122", "20261129"]  # Sundays: the newest of the three weeks before this one
    monthly = ["20260131", "20260228", "20260331", "20260430", "20260531", "20260630", "20260731", "20260831",
               "20260930", "20261031"]  # November and December are kept already
    assert kept == sorted(daily + weekly + monthly)
    assert (folder / "yupana-respaldo-20261206-150000.zip").exists()
    assert not (folder / "yupana-respaldo-20261206-030000.zip").exists()
    assert len(removed) == 402 - len(kept) and (folder / "notas.txt").exists()
    assert (folder / "yupana-respaldo-20250101-000000.fallido").exists()


def test_a_new_backup_rotates_the_folder(shop, folder):
    for day in range(1, 9):
        _fake(folder, f"202001{day:02d}-120000")
    check = shop.admin.create_backup(folder)
    assert check.rotated == ("yupana-respaldo-20200102-120000.zip", "yupana-respaldo-20200101-120000.zip")
    assert Path(check.path).exists() and len(list(folder.glob("yupana-respaldo-*"))) == 7


# ---------------------------------------------------------------- restoring into an empty data folder

def test_a_backup_restored_on_another_folder_has_every_voucher_signed_and_numbering_goes_on(shop, folder, tmp_path):
    from app.core.engine import Engine
    from app.core.invoicing.xmldsig import verify_xml

    shop.invoicing.set_sol_credentials(ISSUER_RUC, "MODDATOS", "claveSOLsecreta")
    path = shop.admin.create_backup(folder).path
    originals = {n: shop.invoicing.voucher(shop.invoicing.find_voucher(f"F001-{n}", ISSUER_RUC)).xml_firmado
                 for n in (1, 20, 40)}
    new_home = tmp_path / "otro-equipo"
    done = run_cli("--home", str(new_home), "respaldo", "restaurar", path, home=new_home)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert f"restaurada en «{new_home.resolve()}»: 40 comprobantes" in out and "F001-40  (tipo 01" in out
    assert f"F001 (tipo 01, RUC {ISSUER_RUC}): sigue en 41" in out  # the numbering checked (test_restore_numbering)
    again = Engine(new_home)  # the same passphrase (YUPANA_PASSPHRASE) opens its secrets
    try:
        assert again.invoicing.next_number(ISSUER_RUC, "01", "F001") == 41
        for n, signed in originals.items():
            restored = again.invoicing.voucher(again.invoicing.find_voucher(f"F001-{n}", ISSUER_RUC)).xml_firmado
            assert restored == signed and verify_xml(restored).valid
        assert again.invoicing.sol_credentials(ISSUER_RUC) == ("MODDATOS", "claveSOLsecreta")
        emission = list(again.invoicing.issue_batch([factura("F001", 41, LINES)]))
        assert emission[0].success
    finally:
        again.close()


def test_restore_refuses_a_folder_in_use_and_a_damaged_backup(good_backup, shop, tmp_path):
    with pytest.raises(YupanaError, match="ya tiene una base de datos de Yupana"):
        backups.restore(good_backup, shop.admin.home())
    broken = _rewritten(good_backup, tmp_path / "roto.zip", drop=backups.MANIFEST)
    empty = tmp_path / "vacia"
    empty.mkdir()
    with pytest.raises(YupanaError, match="No se restaura «roto.zip»: Al respaldo «roto.zip» le falta «manifiesto"):
        backups.restore(broken, empty)
    assert list(empty.iterdir()) == []
    done = run_cli("--home", str(empty), "respaldo", "restaurar", str(broken), home=empty)
    assert done.returncode == 1 and "le falta «manifiesto.json»" in done.stderr.decode()


def test_verificar_refuses_a_voucher_whose_signature_no_longer_verifies(good_backup, tmp_path):
    """A copy whose file is sound (its SHA-256 is the manifest's) but whose first voucher's text was changed after it
    was signed: the sample of signatures finds it."""
    import hashlib

    with zipfile.ZipFile(good_backup) as archive:
        database = tmp_path / "yupana.db"
        database.write_bytes(archive.read(backups.DATABASE))
    conn = sqlite3.connect(database)
    voucher_id = conn.execute("SELECT id FROM vouchers WHERE serie = 'F001' AND numero = 1").fetchone()[0]
    conn.close()
    signed = _signed_text(good_backup, voucher_id, tmp_path)
    conn = sqlite3.connect(database)
    conn.execute("UPDATE voucher_texts SET xml_firmado = ? WHERE voucher_id = ?",
                 (signed.replace("Arroz superior", "Arroz inferior"), voucher_id))
    conn.commit()
    conn.execute("VACUUM")
    conn.close()
    manifest = _manifest(good_backup)
    manifest["base"]["sha256"] = hashlib.sha256(database.read_bytes()).hexdigest()
    manifest["base"]["bytes"] = database.stat().st_size
    tampered = tmp_path / "firma-alterada.zip"
    with zipfile.ZipFile(tampered, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(backups.MANIFEST, json.dumps(manifest))
        archive.write(database, backups.DATABASE)
    check = backups.verify(tampered)
    assert len(check.problems) == 1 and check.problems[0].startswith("La firma de F001-1 no es válida: "), check


def _signed_text(backup: Path, voucher_id: int, tmp_path: Path) -> str:
    """The voucher's signed XML as the backup holds it (unpacked the way verify reads it)."""
    from app.core.invoicing.voucher_store import signed_text_of
    from app.core.storage.sqlite import backup as sqlite_backup

    with zipfile.ZipFile(backup) as archive:
        copy = tmp_path / "lectura.db"
        copy.write_bytes(archive.read(backups.DATABASE))
    rows, dictionaries = sqlite_backup.signed_sample(copy, 40)
    row = next(row for row in rows if row["id"] == voucher_id)
    text = signed_text_of(row, dictionaries.__getitem__)
    assert text and "Arroz superior" in text
    return text
