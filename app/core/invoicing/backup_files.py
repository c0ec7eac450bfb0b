"""Between backups, every signed voucher and every CDR written to the backup folder as it is made (issue 35), so the
newest work survives a dead disk too: `<backup_folder>/comprobantes/ENTORNO/AAAAMM/RUC-TIPO-SERIE-NUMERO.xml` (the
signed XML, byte for byte as stored) and `R-RUC-TIPO-SERIE-NUMERO.xml` beside it (the CDR, the XML inside SUNAT's zip).

Every RA and RC is written too as it is made, into `<backup_folder>/resumenes/ENTORNO/RUC-RA-AAAAMMDD-N.xml` (its
signed XML; SUNAT's answer `R-….xml` beside it once there is one): after a restore the day's counters go on after the
highest found there (app.core.invoicing.numbering).

ENTORNO is the environment the voucher or RA/RC belongs to (sandbox, beta, produccion: the `environment` setting's
values), so a sandbox or beta trial written to the same folder is never read back as a production voucher after a
restore: each file is read back into the environment it was recorded in, and a serie's numbering (or a day's RA/RC
counter) takes only its own environment's files (`recorded_voucher_files`, `summary_files`). Versions
before this wrote `comprobantes/AAAAMM/…` and `resumenes/RUC-….xml` with no environment; those files are still read,
as before, as files of the environment in use when they are read back (their environment was never recorded).

Issuing never waits for it: a voucher's change (the engine's events) only puts its id in a set, and a background
loop writes the files. A folder that is unreachable or slow keeps the ids for a later try (every RETRY_S, or at once
when the folder setting changes); each file is written beside its name and renamed, so a file is whole or absent.

On a database several desks share (issue 34) every desk hears every voucher's change (platform.desk_events), and
one desk writes the files: the one holding the backups' turn (platform.turns; the scheduled backups go with it). Its
loop runs while a folder is set, renewing the turn; a desk with a folder and without the turn looks for it every
LOOK_AGAIN_S while it keeps ids, and keeps the ids it heard KEEP_S (twice the turn's duration) and at most KEEP_MOST
of them, oldest dropped first: when the holder dies before writing them, the desk that takes its turn over (at once
when its process is of this host and gone, else once the turn runs out) writes them. A file written twice (a handover,
a holder so slow its turn ran out) is only the same bytes again: `_put` leaves a file that has them alone, and each
write has a temporary file of its own (two desks writing one file at once never share one).

A holder whose folder stays unreachable (its USB drive pulled out) for UNREACHABLE_S lets the turn go, so a desk that
can write takes it over, writes what it kept and what comes after, and makes the scheduled backups. The desk that let
go keeps its own ids however long the folder is away (as a single desk does), does not look for the turn meanwhile,
and once its folder is back writes them into it and competes for the turn again. On a folder's own database (no turn)
nothing of this applies: the ids wait for the folder.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import tempfile
import threading
import time
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from app.core.invoicing.cdr import cdr_member
from app.core.platform.environments import NAMES, get
from app.core.platform.loops import IDLE, BackgroundLoop, Due
from app.core.platform.turns import LOOK_AGAIN_S, TURN_S, DeskTurn
from app.core.records import VoucherCdr, VoucherDetail

log = logging.getLogger(__name__)

FOLDER = "comprobantes"
SUMMARIES = "resumenes"
RETRY_S = 30.0
BLOCK = 200  # ids written per round (the loop looks at its stop between rounds)
RENEW_S = TURN_S / 3  # several desks: the turn's holder renews it this often while it has nothing to write
KEEP_S = 2 * TURN_S  # several desks: how long a desk without the turn keeps the ids it heard (module doc)
KEEP_MOST = 100_000  # ... and how many of each kind at most
# Several desks: a turn's holder whose folder has been unreachable this long (the first failed try and two retries
# RETRY_S apart) lets the turn go. Long enough that a USB drive pushed back in or a network folder's short outage does
# not move the turn; short enough that the desk taking it over still keeps (KEEP_S, twice this) what was heard since
# the folder went away.
UNREACHABLE_S = 2 * RETRY_S
_MONTH = re.compile(r"^\d{6}$")  # AAAAMM: the month folders of comprobantes/ (no environment before it: legacy)


def recorded_voucher_files(folder: str | Path | None, current: str) -> list[tuple[str, Path]]:
    """The XML files (vouchers and CDRs) of a backup folder with the environment each was recorded in, sorted:
    `comprobantes/ENTORNO/AAAAMM/` of every environment, and those written before the environment was recorded
    (`comprobantes/AAAAMM/`) as `current`'s, as always (module doc)."""
    root = Path(folder).expanduser() / FOLDER if folder else None
    if root is None or not root.is_dir():
        return []
    found = [(current, path) for path in root.glob("*/*.xml") if _MONTH.match(path.parent.name)]
    for name in NAMES:
        found += [(name, path) for path in (root / name).glob("*/*.xml")]
    return sorted(found, key=lambda item: (item[0] != current, item[0], item[1]))


def summary_files(folder: str | Path | None, environment: str) -> list[Path]:
    """The RA/RC files of `environment` in a backup folder: `resumenes/ENTORNO/*.xml` and the legacy ones with no
    environment (`resumenes/*.xml`, read as the environment's; module doc)."""
    root = Path(folder).expanduser() / SUMMARIES if folder else None
    if root is None or not root.is_dir():
        return []
    return sorted([*root.glob("*.xml"), *(root / get(environment).name).glob("*.xml")])


class VoucherFileWriter:
    """The loop that writes vouchers' files into the backup folder (module doc). `turn`: on a shared database, the
    backups' turn (None: this desk always writes); `monotonic`: the clock the kept ids age by (tests pass their own)."""

    def __init__(self, folder: Callable[[], str], detail: Callable[[int], VoucherDetail | None],
                 cdr_of: Callable[[int], VoucherCdr | None],
                 summary: Callable[[int], Any] | None = None, *, turn: DeskTurn | None = None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._folder = folder
        self._detail = detail
        self._cdr_of = cdr_of
        self._summary = summary  # a RA/RC's SummaryOutcome by id (its signed XML, SUNAT's answer)
        self.turn = turn
        self._monotonic = monotonic
        self._pending: OrderedDict[int, float] = OrderedDict()  # id -> when it was last heard, oldest first
        self._summaries: OrderedDict[int, float] = OrderedDict()  # RA/RC ids, the same way
        self._lock = threading.Lock()
        self._holding = False  # several desks: the turn's last answer,
        self._looked_at: float | None = None  # ... asked at this `monotonic()` (again LOOK_AGAIN_S later)
        self._failing_since: float | None = None  # when the folder was first found unreachable (`monotonic()`)
        self._let_go = False  # several desks: the turn let go for an unreachable folder, not looked for until it is back
        self.written = 0  # files written so far (tests wait on it)
        self.loop = BackgroundLoop("yupana-backup-files", self._round, what="backup files", logger=log)

    def start(self) -> None:
        """At the engine's start and when the folder setting changes: the loop looks now when ids wait, and on a
        shared database whenever a folder is set (from then on it runs: it takes the turn or looks for it) or was
        just cleared (its turn given up at once)."""
        if self.pending() or (self.turn is not None and (self.loop.running or self._folder())):
            self.loop.wake()

    def changed(self, ids: Iterable[int]) -> None:
        """Vouchers changed (signed, answered by SUNAT): their files are due. Only a set and a wake: never slow."""
        if self._folder():
            self._heard(self._pending, ids)

    def summaries_changed(self, ids: Iterable[int]) -> None:
        """RA/RC stored or answered: their files are due (as `changed`)."""
        if self._folder() and self._summary is not None:
            self._heard(self._summaries, ids)

    def pending(self) -> int:
        """Ids waiting to be written (on a desk without the turn: kept, module doc)."""
        with self._lock:
            return len(self._pending) + len(self._summaries)

    def holding(self) -> bool:
        """Whether this desk writes the files: always on a folder's own database, on a shared one while it holds the
        turn (its last answer: the loop asks again every LOOK_AGAIN_S)."""
        return self.turn is None or self._holding

    def stop(self) -> None:
        self.loop.stop()

    def _heard(self, due: OrderedDict[int, float], ids: Iterable[int]) -> None:
        now = self._monotonic()
        with self._lock:
            for item_id in ids:
                due[item_id] = now
                due.move_to_end(item_id)  # the newest at the end: the oldest are dropped first (`_keep`)
        self.loop.wake()

    def _my_turn(self) -> bool:
        """Whether this desk writes now (`holding`): the turn asked again (taken, renewed) once LOOK_AGAIN_S passed."""
        if self.turn is None:
            return True
        now = self._monotonic()
        if self._looked_at is None or now - self._looked_at >= LOOK_AGAIN_S:
            self._holding, self._looked_at = self.turn.mine(), now
        return self._holding

    def _keep(self) -> Due:
        """A desk without the turn: the ids heard in the last KEEP_S kept (at most KEEP_MOST of each kind), for the
        case the holder dies before writing them; the next look at the turn is due LOOK_AGAIN_S after the last one
        while some are kept, RENEW_S after it when none is."""
        now = self._monotonic()
        with self._lock:
            for kept in (self._pending, self._summaries):
                while kept and (len(kept) > KEEP_MOST or next(iter(kept.values())) < now - KEEP_S):
                    kept.popitem(last=False)
            every = LOOK_AGAIN_S if self._pending or self._summaries else RENEW_S
        looked = now if self._looked_at is None else self._looked_at
        return max(0.0, looked + every - now)

    def _round(self) -> Due:
        folder = self._folder()
        if not folder:
            return self._no_folder()
        target = Path(folder).expanduser()
        if self._let_go:
            return self._after_letting_go(target)
        if not self._my_turn():
            self._failing_since = None  # another desk writes: its folder's failures are its own
            return self._keep()
        return self._write_as_holder(target)

    def _no_folder(self) -> Due:
        with self._lock:
            self._pending.clear()
            self._summaries.clear()
        self._failing_since, self._let_go = None, False
        if self.turn is not None:
            self._holding, self._looked_at = False, None
            self.turn.give_up()  # a desk with a folder writes from now on
        return IDLE

    def _write_as_holder(self, target: Path) -> Due:
        """Every id due written (a block per round); a failure retried RETRY_S later, and on a shared database the
        turn let go once the folder has failed for UNREACHABLE_S. The holder looks at its folder even with nothing
        to write: the scheduled backups go with the turn."""
        try:
            if self.turn is not None and not target.is_dir():
                log.warning("backup folder %s unreachable (looked at again in %.0f s)", target, RETRY_S)
                return self._failed(target)
            if not self._write_block(target):
                return 0  # the rest in the next round (the loop looks at its stop between rounds)
        except OSError:
            return self._failed(target)
        self._failing_since = None
        return IDLE if self.turn is None else RENEW_S  # the turn's holder renews it while a folder is set

    def _failed(self, target: Path) -> Due:
        now = self._monotonic()
        if self._failing_since is None:
            self._failing_since = now
        if self.turn is not None and now - self._failing_since >= UNREACHABLE_S:
            self._give_the_turn_up(target)
        return RETRY_S

    def _give_the_turn_up(self, target: Path) -> None:
        """The folder unreachable for UNREACHABLE_S: the turn left to a desk that can write (module doc)."""
        log.warning("backup folder %s unreachable for %.0f s: the backups' turn is left to a desk that can write; "
                    "this desk keeps its files to write until the folder is back", target, UNREACHABLE_S)
        self._let_go, self._holding, self._looked_at = True, False, None
        if self.turn is not None:
            self.turn.give_up()

    def _after_letting_go(self, target: Path) -> Due:
        """A desk that let the turn go: its ids kept (never dropped, as on a single desk) until its folder is back,
        then written into it; then it competes for the turn again (at once: the next round)."""
        if not target.is_dir():
            return RETRY_S  # still away: the turn stays with a desk that can write
        try:
            if not self._write_block(target):
                return 0
        except OSError:
            return RETRY_S
        log.info("backup folder %s reachable again: this desk looks for the backups' turn again", target)
        self._let_go, self._failing_since = False, None
        return 0

    def _write_block(self, target: Path) -> bool:
        """Up to BLOCK ids written; whether none is left. An id that fails is kept for the next try (OSError raised)."""
        budget = BLOCK
        for due, write, what in ((self._summaries, self._write_summary, "summary"),
                                 (self._pending, self._write, "voucher")):
            # Each id leaves the set before its files are read and written: a change told meanwhile (the CDR
            # stored while the signed XML was being written) puts it back for the next round instead of being lost.
            while True:
                with self._lock:
                    if not due:
                        break
                    if budget == 0:
                        return False
                    budget -= 1
                    item_id, _heard_at = due.popitem(last=False)
                try:
                    write(target, item_id)
                except OSError as exc:
                    with self._lock:
                        due.setdefault(item_id, self._monotonic())  # kept for the next try (at the end, as if heard now)
                    log.warning("%s files not written to %s (retried in %.0f s): %s", what, target, RETRY_S, exc)
                    raise
        return True

    def _write(self, folder: Path, voucher_id: int) -> None:
        if not folder.is_dir():
            raise FileNotFoundError(f"no folder {folder}")
        detail = self._detail(voucher_id)
        if detail is None or not detail.xml_firmado:
            return  # not signed (yet): nothing SUNAT-bound to keep
        month = folder / FOLDER / get(detail.environment).name / detail.fecha_emision[:7].replace("-", "")
        month.mkdir(parents=True, exist_ok=True)
        self._put(month / detail.nombre_archivo, detail.xml_firmado.encode("utf-8"))
        cdr = self._cdr_of(voucher_id)
        if cdr is not None and cdr.cdr_zip:
            with zipfile.ZipFile(io.BytesIO(cdr.cdr_zip)) as received:
                member = cdr_member(received)
                self._put(month / member.filename.rsplit("/", 1)[-1], received.read(member))

    def _write_summary(self, folder: Path, summary_id: int) -> None:
        if not folder.is_dir():
            raise FileNotFoundError(f"no folder {folder}")
        outcome = self._summary(summary_id) if self._summary else None
        if outcome is None or not outcome.xml_firmado:
            return
        target = folder / SUMMARIES / get(outcome.environment).name
        target.mkdir(parents=True, exist_ok=True)
        self._put(target / f"{outcome.emisor_ruc}-{outcome.ident}.xml", outcome.xml_firmado.encode("utf-8"))
        if outcome.cdr_zip:
            with zipfile.ZipFile(io.BytesIO(outcome.cdr_zip)) as received:
                member = cdr_member(received)
                self._put(target / f"R-{outcome.emisor_ruc}-{outcome.ident}.xml", received.read(member))

    def _put(self, target: Path, data: bytes) -> None:
        if target.is_file() and target.stat().st_size == len(data) and target.read_bytes() == data:
            return
        handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
        try:
            with os.fdopen(handle, "wb") as stream:  # mkstemp: readable and writable by its owner only
                stream.write(data)
            os.replace(partial, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(partial)
            raise
        self.written += 1
