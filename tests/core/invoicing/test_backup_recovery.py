"""Issue 35, item 1: the recovery passphrase. A folder whose keys the keyring keeps gets a recovery passphrase at its
first backup (`yupana respaldo crear` asks for it, or takes YUPANA_RECOVERY_PASSPHRASE); the backup carries the
master key wrapped by it, never in plain text; restored on «another PC» whose keyring has no entry (or that has no
keyring at all), the recovery passphrase opens the certificates and the SOL password, and signing goes on."""

from __future__ import annotations

import base64
import json
import zipfile
from pathlib import Path

import keyring
import pytest

from app.core.errors import ErrorCode, YupanaError
from app.core.invoicing import backups
from app.core.invoicing.xmldsig import verify_xml
from app.core.platform import secrets
from tests.helpers.base import ISSUER_RUC, run_cli
from tests.helpers.file_keyring import BACKEND, FILE_ENV, FileKeyring
from tests.helpers.golden import COMPANY
from tests.helpers.voucher_matrix import factura, item

RECOVERY = "la tienda de Rosa 2026"
LINES = [item("Arroz superior 5 kg", "2", "10.00")]


@pytest.fixture
def this_pc_keyring(tmp_path, monkeypatch):
    """The first PC's keyring, shared by this test and the `yupana` processes it starts."""
    monkeypatch.setenv(FILE_ENV, str(tmp_path / "llavero-pc1.json"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", BACKEND)
    monkeypatch.setenv(secrets.KEYRING_ENV, "1")
    monkeypatch.delenv(secrets.PASSPHRASE_ENV, raising=False)  # only the keyring opens the keys here
    previous = keyring.get_keyring()
    keyring.set_keyring(FileKeyring())
    yield tmp_path / "llavero-pc1.json"
    keyring.set_keyring(previous)


@pytest.fixture
def keyring_shop(home, this_pc_keyring):
    from app.core.engine import Engine

    engine = Engine(home)
    try:
        engine.admin.set_company(COMPANY)
        engine.invoicing.create_test_certificate(ISSUER_RUC)
        engine.invoicing.set_sol_credentials(ISSUER_RUC, "MODDATOS", "claveSOLsecreta")
        assert all(answer.success for answer in engine.invoicing.issue_batch(
            [factura("F001", n, LINES) for n in range(1, 6)]))
        assert engine._secrets.key_source() == secrets.SOURCE_KEYRING
        assert engine.admin.needs_recovery_passphrase()
    finally:
        engine.close()
    return home


def _master_key(keyring_file: Path) -> bytes:
    (stored,) = [value for name, value in json.loads(keyring_file.read_text()).items() if "master-key-" in name]
    return base64.b64decode(stored)


def test_the_first_backup_of_a_keyring_folder_needs_a_recovery_passphrase_and_carries_the_key_wrapped(
        keyring_shop, this_pc_keyring, tmp_path, monkeypatch):
    usb = tmp_path / "usb"
    usb.mkdir()
    refused = run_cli("respaldo", "crear", str(usb), home=keyring_shop)  # no terminal, no variable: refused
    assert refused.returncode == 1 and secrets.RECOVERY_ENV in refused.stderr.decode()
    assert not list(usb.glob("yupana-respaldo-*.zip"))

    monkeypatch.setenv(secrets.RECOVERY_ENV, RECOVERY)
    done = run_cli("respaldo", "crear", str(usb), home=keyring_shop)
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.decode().strip().splitlines()[-1])
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read(backups.MANIFEST))
        database = archive.read(backups.DATABASE)
    assert manifest["claves"] == {"origen": "keyring", "frase_recuperacion": True}
    master = _master_key(this_pc_keyring)
    assert master not in database and base64.b64encode(master) not in database  # only wrapped
    assert b"claveSOLsecreta" not in database

    monkeypatch.delenv(secrets.RECOVERY_ENV)  # the next backups reuse it: nothing asked
    assert run_cli("respaldo", "crear", str(usb), home=keyring_shop).returncode == 0


def _backup(home: Path, usb: Path) -> str:
    """A backup of `home` into a new folder `usb`, its recovery passphrase chosen (a short one refused first)."""
    from app.core.engine import Engine

    usb.mkdir()
    engine = Engine(home)
    try:
        with pytest.raises(YupanaError, match="al menos 8 caracteres"):
            engine.admin.create_backup(usb, "corta")
        return engine.admin.create_backup(usb, RECOVERY).path
    finally:
        engine.close()


def test_restored_on_a_pc_without_keyring_the_recovery_passphrase_opens_the_keys(keyring_shop, tmp_path,
                                                                                  monkeypatch):
    from app.core.engine import Engine

    path = _backup(keyring_shop, tmp_path / "usb")
    monkeypatch.setenv(secrets.KEYRING_ENV, "0")  # «another PC»: no keyring at all
    new_home = tmp_path / "otro-equipo"
    done = run_cli("--home", str(new_home), "respaldo", "restaurar", path, home=new_home)
    assert done.returncode == 0, done.stderr
    assert "se abren con su frase de recuperación" in done.stderr.decode()

    again = Engine(new_home)
    try:
        assert again.admin.secret_state() == secrets.LOCKED
        with pytest.raises(YupanaError, match="frase de recuperación de las copias"):
            again.invoicing.sol_credentials(ISSUER_RUC)
        with pytest.raises(YupanaError) as wrong:
            again.admin.unlock_secrets("otra frase cualquiera")
        assert wrong.value.code == ErrorCode.UNAUTHORIZED and "frase de recuperación no es correcta" in wrong.value.message
        again.admin.unlock_secrets(RECOVERY)
        assert again.invoicing.sol_credentials(ISSUER_RUC) == ("MODDATOS", "claveSOLsecreta")
        (answer,) = again.invoicing.issue_batch([factura("F001", 6, LINES)])  # the certificate's key signs
        assert answer.success
        signed = again.invoicing.voucher(again.invoicing.find_voucher("F001-6", ISSUER_RUC)).xml_firmado
        assert verify_xml(signed).valid
    finally:
        again.close()

    monkeypatch.setenv(secrets.RECOVERY_ENV, RECOVERY)  # for scripts: the variable opens them
    by_variable = Engine(new_home)
    try:
        assert by_variable.admin.secret_state() == secrets.UNLOCKED
    finally:
        by_variable.close()


def test_restored_on_a_pc_with_its_own_keyring_the_key_is_kept_there_after_the_passphrase(keyring_shop, tmp_path,
                                                                                         monkeypatch):
    from app.core.engine import Engine

    path = _backup(keyring_shop, tmp_path / "usb")
    second_pc = tmp_path / "llavero-pc2.json"
    monkeypatch.setenv(FILE_ENV, str(second_pc))  # another PC's keyring: empty, no entry for this folder
    monkeypatch.setenv(secrets.RECOVERY_ENV, RECOVERY)
    new_home = tmp_path / "otro-equipo"
    done = run_cli("--home", str(new_home), "respaldo", "restaurar", path, home=new_home)
    assert done.returncode == 0, done.stderr
    assert "Claves abiertas" in done.stderr.decode()
    assert _master_key(second_pc) == _master_key(tmp_path / "llavero-pc1.json")

    monkeypatch.delenv(secrets.RECOVERY_ENV)  # from now on this PC's keyring opens them, nothing asked
    again = Engine(new_home)
    try:
        assert again.invoicing.sol_credentials(ISSUER_RUC) == ("MODDATOS", "claveSOLsecreta")
        assert again._secrets.backend.startswith("keyring:")
    finally:
        again.close()


def test_scheduled_backups_without_a_recovery_passphrase_warn_until_one_is_chosen(keyring_shop, tmp_path):
    from app.core.engine import Engine
    from app.core.invoicing import backup_schedule

    usb = tmp_path / "usb"
    usb.mkdir()
    engine = Engine(keyring_shop)
    try:
        engine.admin.config_set("backup_folder", str(usb))
        path = engine.admin.create_backup(usb).path  # as the schedule makes them: never refused for lack of it
        with zipfile.ZipFile(path) as archive:
            assert json.loads(archive.read(backups.MANIFEST))["claves"] == {"origen": "keyring",
                                                                            "frase_recuperacion": False}
        assert engine.admin.backup_status().warning == backup_schedule.NO_RECOVERY_WARNING
        engine.admin.set_recovery_passphrase(RECOVERY)
        assert engine.admin.backup_status().warning is None and not engine.admin.needs_recovery_passphrase()
        engine.admin.set_recovery_passphrase(RECOVERY)  # the same one again: fine
        with pytest.raises(YupanaError, match="frase de recuperación no es correcta"):
            engine.admin.set_recovery_passphrase("otra frase distinta")  # never silently replaced
    finally:
        engine.close()


NEW_RECOVERY = "la nueva frase de Rosa 2027"


def _opened_by(path: str, home: Path, monkeypatch) -> dict[str, bool]:
    """Restored on «another PC» (no keyring): which of the two phrases opens the keys."""
    from app.core.engine import Engine

    monkeypatch.setenv(secrets.KEYRING_ENV, "0")
    backups.restore(path, home)
    engine = Engine(home)
    try:
        with pytest.raises(YupanaError, match="frase de recuperación"):  # the keys are not open here: no change
            engine.admin.change_recovery_passphrase("una tercera frase larga")
        opened = {}
        for phrase in (RECOVERY, NEW_RECOVERY):
            try:
                engine.admin.unlock_secrets(phrase)
                opened[phrase] = engine.invoicing.sol_credentials(ISSUER_RUC) == ("MODDATOS", "claveSOLsecreta")
            except YupanaError as exc:
                assert exc.code == ErrorCode.UNAUTHORIZED
                opened[phrase] = False
        return opened
    finally:
        engine.close()
        monkeypatch.setenv(secrets.KEYRING_ENV, "1")


def test_the_recovery_passphrase_changes_for_the_backups_made_from_then_on(keyring_shop, tmp_path, monkeypatch):
    from app.core.engine import Engine

    engine = Engine(keyring_shop)
    try:
        (tmp_path / "antes").mkdir()
        (tmp_path / "despues").mkdir()
        before = engine.admin.create_backup(tmp_path / "antes", RECOVERY).path
        assert engine.admin.has_recovery_passphrase()
        with pytest.raises(YupanaError, match="al menos 8 caracteres"):
            engine.admin.change_recovery_passphrase("corta")
        engine.admin.change_recovery_passphrase(NEW_RECOVERY)  # the keyring opens the keys: the old one not asked
        assert engine.admin.has_recovery_passphrase() and not engine.admin.needs_recovery_passphrase()
        engine.admin.set_recovery_passphrase(NEW_RECOVERY)  # the one in force now: accepted as before
        after = engine.admin.create_backup(tmp_path / "despues").path
    finally:
        engine.close()
    assert _opened_by(before, tmp_path / "pc-a", monkeypatch) == {RECOVERY: True, NEW_RECOVERY: False}
    assert _opened_by(after, tmp_path / "pc-b", monkeypatch) == {RECOVERY: False, NEW_RECOVERY: True}


def test_the_command_changes_the_recovery_passphrase(keyring_shop, tmp_path, monkeypatch):
    refused = run_cli("respaldo", "frase", home=keyring_shop)  # no terminal, no variable: refused, nothing chosen
    assert refused.returncode == 1 and secrets.RECOVERY_ENV in refused.stderr.decode()
    monkeypatch.setenv(secrets.RECOVERY_ENV, RECOVERY)
    first = run_cli("respaldo", "frase", home=keyring_shop)  # none yet: this one is the first
    assert first.returncode == 0, first.stderr
    assert "Frase de recuperación guardada" in first.stdout.decode()
    usb = tmp_path / "usb"
    usb.mkdir()
    before = run_cli("respaldo", "crear", str(usb), home=keyring_shop)
    assert before.returncode == 0, before.stderr

    monkeypatch.setenv(secrets.RECOVERY_ENV, NEW_RECOVERY)
    changed = run_cli("respaldo", "frase", home=keyring_shop)
    assert changed.returncode == 0, changed.stderr
    assert "Las copias hechas antes siguen abriéndose solo con la frase anterior" in changed.stdout.decode()
    monkeypatch.delenv(secrets.RECOVERY_ENV)
    assert _opened_by(before.stdout.decode().strip().splitlines()[-1], tmp_path / "pc-a", monkeypatch) == {
        RECOVERY: True, NEW_RECOVERY: False}


def test_the_command_says_a_passphrase_folder_needs_no_recovery_passphrase(home, monkeypatch):
    monkeypatch.setenv(secrets.KEYRING_ENV, "0")
    monkeypatch.setenv(secrets.PASSPHRASE_ENV, "frase secreta de la carpeta")
    monkeypatch.setenv(secrets.RECOVERY_ENV, RECOVERY)
    done = run_cli("respaldo", "frase", home=home)
    assert done.returncode == 1 and "no necesita una frase de recuperación" in done.stderr.decode()
