"""Backups of a data folder's database while Yupana runs (issue 35, item 1; SQLite, the single desk).

A backup is one zip, `yupana-respaldo-AAAAMMDD-HHMMSS.zip`, holding:

- `yupana.db`: a consistent copy of the database (storage/sqlite/backup.py: `VACUUM INTO`, one read transaction,
  issuing goes on meanwhile), deflated. The main database only: the padrón and the logs are not in it. Secrets go in
  as they are stored, encrypted under the folder's master key (keyring or passphrase); a keyring folder's manifest
  carries that key wrapped by its recovery passphrase (platform.secrets; `yupana respaldo frase` changes it), a
  shared database's keys open with the business passphrase (docs/security.md).
- `manifiesto.json`: Yupana's version, the date, the copy's size and SHA-256, the rows of every table, the last
  number of every serie and the last RA/RC counter of every day.

Every backup is verified once written (`verify`): the zip opens, both members are there, the database's SHA-256 is
the manifest's, SQLite's integrity check passes, the counts, series and counters are the manifest's and a sample of
the signed vouchers verifies (XML-DSig, the certificate each carries). It lives here, beside the vouchers, because
what it checks beyond the file is theirs: numbers, RA/RC counters, signatures.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app import __version__
from app.core.errors import invalid
from app.core.invoicing.voucher_store import signed_text_of
from app.core.invoicing.xmldsig import verify_xml
from app.core.platform import clock, environments
from app.core.platform.file_lock import exclusive_file_lock
from app.core.platform.paths import private_file
from app.core.platform.settings import DeskSettings
from app.core.storage.sqlite import backup as sqlite_backup

FORMAT = 1
DATABASE = "yupana.db"
MANIFEST = "manifiesto.json"
PREFIX = "yupana-respaldo-"
NAME = re.compile(r"^yupana-respaldo-(\d{8}-\d{6})(-\d+)?\.zip$")
SIGNATURE_SAMPLE = 20
# Bytes hashed, compressed or extracted at a time. Large on purpose: zlib, hashlib and file I/O let go of the GIL
# only for the length of one call, and a scheduled backup shares its process with «Emitir». With zipfile's 8 KiB
# copy, every small piece waited up to a switch interval (5 ms) to take the GIL back from the issuing thread, and a
# 300 000-voucher backup took 475 s instead of ~20 s (bench/backup.py).
CHUNK = 16 << 20
WORK_PREFIX = ".yupana-respaldo-"  # the work folder of a backup being written, beside the backups
ZIP64_FROM = 1 << 30  # a database this large gets zip64 sizes from the start (its size is known before it is written)
LOCK = ".yupana-respaldo.lock"  # held by the backup being written into the folder (one at a time)


@dataclass(frozen=True)
class BackupInfo:
    """A backup: its file, when it was made, by which Yupana, its size and what it holds."""

    path: str
    created_at: str  # UTC, ISO 8601
    app_version: str
    size: int  # bytes of the zip
    vouchers: int


@dataclass(frozen=True)
class BackupCheck:
    """`verify`'s answer: `problems` (Spanish, each naming what is wrong) is empty for a good backup."""

    path: str
    problems: list[str] = field(default_factory=list)
    info: BackupInfo | None = None
    signatures_checked: int = 0
    rotated: tuple[str, ...] = ()  # older backups `create` removed by rotation (their file names)

    @property
    def ok(self) -> bool:
        return not self.problems


class BackupFailed(Exception):
    """A backup that was written but failed its own verification (kept aside as `.fallido`)."""


def create(database: Path | Callable[[Path], None], folder: str | Path, data_home: Path, *,
           now: dt.datetime | None = None, keys: dict[str, Any] | None = None,
           environment: str | None = None) -> BackupCheck:
    """Back up `database` (a SQLite file, or what writes a consistent copy of the desk's database into the path it is
    given: a shared database's, storage.engines.backup_snapshot) into `folder` (outside the data folder), verified;
    a 400 naming the problem otherwise. `keys` (where the master key comes from, whether a recovery passphrase wraps
    it) and `environment` (the desk's, kept in puesto.json and so not in the database: restore puts it back) go into
    the manifest."""
    target_folder = _backup_folder(folder, data_home)
    extra: dict[str, Any] = {"claves": keys or {}}
    if environment is not None:
        extra[ENVIRONMENT] = environments.get(environment).name
    with exclusive_file_lock(target_folder / LOCK):
        _remove_leftovers(target_folder)
        return _create_locked(database, target_folder, now, extra)


def _create_locked(database: Path | Callable[[Path], None], target_folder: Path, now: dt.datetime | None,
                   extra: dict[str, Any]) -> BackupCheck:
    moment = (now or clock.now()).astimezone(dt.UTC)
    final = _free_name(target_folder, f"{PREFIX}{moment:%Y%m%d-%H%M%S}")
    with tempfile.TemporaryDirectory(prefix=WORK_PREFIX, dir=target_folder) as work:
        copy = Path(work) / DATABASE
        if isinstance(database, Path):
            sqlite_backup.snapshot(database, copy)
        else:
            database(copy)
        manifest = _manifest(copy, moment) | extra
        partial = final.with_name(final.name + ".partial")
        private_file(partial)
        # Level 1: the vouchers' texts are stored deflated already, so a higher level saves ~3 % of the size for
        # twice the CPU, taken from the issuing that goes on meanwhile (bench/backup.py).
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
            archive.writestr(MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1))
            _deflate_into(archive, copy)
        _sync(partial)
        os.replace(partial, final)
    check = verify(final)
    if not check.ok:
        final.replace(final.with_suffix(".fallido"))
        raise invalid("respaldo", f"La copia «{final.name}» no pasó su verificación: {'; '.join(check.problems)}")
    return dataclasses.replace(check, rotated=tuple(path.name for path in rotate(target_folder)))


def _deflate_into(archive: zipfile.ZipFile, copy: Path) -> None:
    """`copy` into the archive as DATABASE, CHUNK bytes per call (zipfile.write copies 8 KiB at a time)."""
    size = copy.stat().st_size
    with open(copy, "rb") as source, archive.open(DATABASE, "w", force_zip64=size > ZIP64_FROM) as member:
        for chunk in iter(lambda: source.read(CHUNK), b""):
            member.write(chunk)


def _remove_leftovers(folder: Path) -> None:
    """What a backup killed midway left in `folder` (its work folder, its half-written zip). Called holding the
    folder's lock: every backup into the folder holds it while it writes, so what is there now has no owner."""
    for path in folder.glob(f"{WORK_PREFIX}*"):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
    for path in folder.glob(f"{PREFIX}*.zip.partial"):
        path.unlink(missing_ok=True)


def _free_name(folder: Path, stem: str) -> Path:
    """`stem`.zip, or `stem`-2.zip, -3… when a backup of the same second is there already."""
    candidate, number = folder / f"{stem}.zip", 1
    while candidate.exists():
        number += 1
        candidate = folder / f"{stem}-{number}.zip"
    return candidate


def _backup_folder(folder: str | Path, data_home: Path) -> Path:
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise invalid("carpeta", f"La carpeta «{folder}» no existe (¿está conectada la memoria USB?).")
    resolved, home = path.resolve(), data_home.resolve()
    if resolved == home or home in resolved.parents:
        raise invalid("carpeta", f"La carpeta «{folder}» está dentro de la carpeta de datos de Yupana: elija otra "
                                 "(una memoria USB o una carpeta sincronizada), para que la copia sobreviva al disco.")
    return path


def _sync(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _manifest(copy: Path, moment: dt.datetime) -> dict[str, Any]:
    facts = sqlite_backup.facts(copy)
    return {"formato": FORMAT, "version_yupana": __version__, "fecha": moment.isoformat(timespec="seconds"),
            "base": {"archivo": DATABASE, "bytes": copy.stat().st_size, "sha256": _sha256(copy)},
            "tablas": facts.tables, "series": facts.series, "resumenes": facts.summaries}


# ---------------------------------------------------------------- restoring

ENVIRONMENT = "entorno"  # the manifest's key: the environment the backed-up folder's desk was in


@dataclass(frozen=True)
class Restored:
    """A backup put back into an empty data folder: which, where, the last numbers it holds per serie, and the
    environment the new folder's desk was set to (`environment_recorded` False: an older backup that did not say
    it, so the folder starts in the sandbox, as a new folder does)."""

    backup: BackupInfo
    database: str
    series: list[dict[str, Any]]
    environment: str = environments.SANDBOX
    environment_recorded: bool = True

    def environment_note(self) -> str:
        """What a person reads about the environment after a restore (the command's and the window's output)."""
        if self.environment_recorded:
            return (f"Entorno de la copia: {self.environment} ({environments.get(self.environment).label}); esta "
                    "carpeta trabaja en él y la numeración se comprobó para él.")
        return ("La copia no dice en qué entorno trabajaba la carpeta (se hizo con una versión anterior de Yupana): "
                "esta carpeta empieza en el sandbox y la numeración se comprobó para el sandbox. Si trabajaba en "
                "producción, cambie el entorno (yupana config set environment produccion, o Ajustes → Entorno) y "
                "vuelva a comprobar la numeración (yupana numeracion verificar --tras-restaurar).")


def restore(path: str | Path, data_home: Path, release: Callable[[], None] | None = None) -> Restored:
    """Put a verified backup's database into `data_home`, which must hold no database (a new folder, another PC):
    refused, naming the problem, when the backup does not verify or the folder is in use. The zip is read once: the
    database verification extracts (into the data folder) is the one moved into place. `release` (the first-start
    assistant's new folder, whose empty database is open) runs once the backup verified, before the folder must be
    free of a database."""
    if release is None:
        _refuse_used(data_home)
    created = not data_home.exists()
    data_home.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(prefix=".yupana-restaurando-", dir=data_home) as work:
            copy = Path(work) / DATABASE
            private_file(copy)
            check, manifest = _verified(Path(path), copy)
            if not check.ok or check.info is None or manifest is None:
                raise invalid("respaldo", f"No se restaura «{Path(path).name}»: {' '.join(check.problems)}")
            if release is not None:
                release()
                _refuse_used(data_home)
            _sync(copy)
            os.replace(copy, data_home / DATABASE)
    except BaseException:
        if created and not any(data_home.iterdir()):
            data_home.rmdir()  # a refused restore leaves no new folder behind
        raise
    recorded = manifest.get(ENVIRONMENT)
    environment = environments.get(str(recorded)).name if recorded is not None else environments.SANDBOX
    if recorded is not None:  # the desk's setting (puesto.json): the numbering check then runs for it
        DeskSettings(data_home).put("environment", environment)
    return Restored(check.info, str(data_home / DATABASE), list(manifest["series"]), environment, recorded is not None)


def _refuse_used(data_home: Path) -> None:
    if any(data_home.joinpath(f"{DATABASE}{suffix}").exists() for suffix in ("", "-wal", "-shm")):
        raise invalid("carpeta", f"La carpeta de datos «{data_home}» ya tiene una base de datos de Yupana: restaure "
                                 "en una carpeta vacía (yupana --home CARPETA_NUEVA respaldo restaurar …).")


# ---------------------------------------------------------------- rotation

KEEP_DAILY, KEEP_WEEKLY, KEEP_MONTHLY = 7, 4, 12


def rotate(folder: Path, daily: int = KEEP_DAILY, weekly: int = KEEP_WEEKLY, monthly: int = KEEP_MONTHLY) -> list[Path]:
    """Keep the newest backup of each of the last `daily` days, `weekly` ISO weeks and `monthly` months that have
    one (grandfather-father-son, by the date in the file's name); remove the other backups of `folder`. Only files
    named as Yupana's backups are touched (a `.fallido` one stays). Returns what was removed."""
    dated = sorted(((dt.datetime.strptime(match.group(1), "%Y%m%d-%H%M%S"), match.group(2) or "", path)
                    for path in folder.iterdir() if (match := NAME.match(path.name))), reverse=True)
    keep: set[Path] = set()
    for limit, period in ((daily, lambda when: when.date()), (weekly, lambda when: when.isocalendar()[:2]),
                          (monthly, lambda when: (when.year, when.month))):
        seen: set[object] = set()
        for when, _, path in dated:
            key = period(when)
            if key not in seen and len(seen) < limit:
                seen.add(key)
                keep.add(path)
    removed = [path for _, _, path in dated if path not in keep]
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


# ---------------------------------------------------------------- listing

def backups(folder: str | Path) -> list[BackupInfo]:
    """The backups in `folder`, newest first, as their manifests describe them (an unreadable one is left out:
    `verify` says what is wrong with it)."""
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise invalid("carpeta", f"La carpeta «{folder}» no existe.")
    found = []
    for candidate in sorted(path.iterdir(), reverse=True):
        if NAME.match(candidate.name):
            try:
                with zipfile.ZipFile(candidate) as archive:
                    found.append(_info(candidate, json.loads(archive.read(MANIFEST))))
            except (zipfile.BadZipFile, KeyError, ValueError, OSError):
                continue
    return found


def _info(path: Path, manifest: dict[str, Any]) -> BackupInfo:
    return BackupInfo(path=str(path), created_at=str(manifest["fecha"]), app_version=str(manifest["version_yupana"]),
                      size=path.stat().st_size, vouchers=int(manifest["tablas"].get("vouchers", 0)))


# ---------------------------------------------------------------- verifying

def verify(path: str | Path) -> BackupCheck:
    """Every check of a backup (module doc); the first one that cannot go on ends it."""
    with tempfile.TemporaryDirectory(prefix=".yupana-verificar-") as work:
        return _verified(Path(path), Path(work) / DATABASE)[0]


def _verified(target: Path, copy: Path) -> tuple[BackupCheck, dict[str, Any] | None]:
    """`verify`'s checks with the database extracted into `copy` (left there) and the manifest read (None when the
    zip or the manifest cannot be read)."""
    if not target.is_file():
        return BackupCheck(str(target), [f"No existe el archivo «{target}»."]), None
    problems: list[str] = []
    manifest = _read_members(target, copy, problems)
    if manifest is None:
        return BackupCheck(str(target), problems), None
    problems += _file_problems(copy, manifest)
    if problems:
        return BackupCheck(str(target), problems), manifest
    problems += _content_problems(copy, manifest)
    checked, signature_problems = _signature_problems(copy)
    problems += signature_problems
    return BackupCheck(str(target), problems, _info(target, manifest), checked), manifest


def _read_members(target: Path, copy: Path, problems: list[str]) -> dict[str, Any] | None:
    """The manifest, with the database extracted into `copy`; None (and why, in `problems`) when either fails."""
    try:
        with zipfile.ZipFile(target) as archive:
            names = set(archive.namelist())
            missing = [name for name in (MANIFEST, DATABASE) if name not in names]
            if missing:
                problems.append(f"Al respaldo «{target.name}» le falta {' y '.join(f'«{m}»' for m in missing)}.")
                return None
            manifest = _parsed_manifest(archive, problems)
            _extract(archive, copy, problems)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        problems.append(f"«{target.name}» no es un zip de respaldo legible ({exc}).")
        return None
    return None if problems else manifest


def _parsed_manifest(archive: zipfile.ZipFile, problems: list[str]) -> dict[str, Any] | None:
    try:
        manifest = json.loads(archive.read(MANIFEST))
    except (zipfile.BadZipFile, zlib.error, ValueError) as exc:
        problems.append(f"El manifiesto «{MANIFEST}» está dañado o no se puede leer ({exc}).")
        return None
    absent = [key for key in ("formato", "version_yupana", "fecha", "base", "tablas", "series", "resumenes")
              if key not in manifest]
    if absent:
        problems.append(f"Al manifiesto le falta {', '.join(f'«{key}»' for key in absent)}.")
        return None
    if manifest["formato"] != FORMAT:
        problems.append(f"El manifiesto es del formato {manifest['formato']} y esta versión de Yupana lee el {FORMAT}.")
    return dict(manifest)


def _extract(archive: zipfile.ZipFile, target: Path, problems: list[str]) -> None:
    """The database out of the zip; a flipped byte in it fails zip's CRC-32 or the decompression."""
    try:
        with archive.open(DATABASE) as source, open(target, "wb") as out:
            for chunk in iter(lambda: source.read(CHUNK), b""):
                out.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        problems.append(f"«{DATABASE}» está dañado dentro del respaldo ({exc}).")


def _file_problems(copy: Path, manifest: dict[str, Any]) -> list[str]:
    expected = str(manifest["base"].get("sha256", ""))
    actual = _sha256(copy)
    if actual != expected:
        return [f"El SHA-256 de «{DATABASE}» ({actual[:12]}…) no es el del manifiesto ({expected[:12]}…)."]
    integrity = sqlite_backup.integrity_problems(copy)
    if integrity:
        return [f"«{DATABASE}» no pasa la verificación de integridad de SQLite: {'; '.join(integrity[:3])}."]
    return []


def _content_problems(copy: Path, manifest: dict[str, Any]) -> list[str]:
    facts = sqlite_backup.facts(copy)
    problems = []
    for table in sorted(set(facts.tables) | set(manifest["tablas"])):
        counted, said = facts.tables.get(table), manifest["tablas"].get(table)
        if counted != said:
            problems.append(f"La tabla «{table}» tiene {_rows(counted)} y el manifiesto dice {_rows(said)}.")
    problems += _listed_problems("serie", facts.series, manifest["series"], ("entorno", "ruc", "tipo", "serie"))
    problems += _listed_problems("resumen", facts.summaries, manifest["resumenes"], ("entorno", "ruc", "tipo", "dia"))
    return problems


def _rows(count: int | None) -> str:
    return "que no existe" if count is None else f"{count:,} filas"


def _listed_problems(what: str, found: list[dict[str, Any]], said: list[dict[str, Any]],
                     key: tuple[str, ...]) -> list[str]:
    """The series (or RA/RC days) whose last number differs between the copy and the manifest."""
    def by_key(items: list[dict[str, Any]]) -> dict[tuple[str, ...], int]:
        return {tuple(str(item.get(k)) for k in key): int(item.get("ultimo", -1)) for item in items}

    copy, manifest = by_key(found), by_key(said)
    return [f"El último número de {what} {' '.join(name)} es {copy.get(name, 'ninguno')} en la base y "
            f"{manifest.get(name, 'ninguno')} en el manifiesto."
            for name in sorted(set(copy) | set(manifest)) if copy.get(name) != manifest.get(name)]


def _signature_problems(copy: Path) -> tuple[int, list[str]]:
    rows, dictionaries = sqlite_backup.signed_sample(copy, SIGNATURE_SAMPLE)
    problems = []
    for row in rows:
        shown = f"{row['serie']}-{row['numero']}"
        try:
            text = signed_text_of(row, dictionaries.__getitem__)
        except (KeyError, ValueError, zlib.error) as exc:
            problems.append(f"El XML firmado de {shown} no se puede leer ({exc}).")
            continue
        outcome = verify_xml(text or "")
        if not outcome.valid:
            problems.append(f"La firma de {shown} no es válida: {outcome.reason}.")
    return len(rows), problems

