"""Port of the submissions to SUNAT (the outbox): one row per voucher and environment, written before anything is
sent, its lease (who is attempting it now), its retry schedule and the CDR that ends it.

Leases are kept on the database's clock: a lease's expiry is written and compared by the database in the same
statement, so every process and host sharing the database agrees on when it runs out, whatever its own clock says.
Rows come back as dicts with their signed XML and CDR as stored (packed or not): the outbox unpacks them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Lease:
    """Who holds a submission now: its state, the lease's owner (None: nobody) and whether the lease is still running
    by the database's clock."""

    state: str
    owner: str | None
    running: bool


class SubmissionRepository(Protocol):
    # ------------------------------------------------------------ rows

    def enqueue(self, environment: str, ruc: str, tipo: str, serie: str, numero: str, *, voucher_id: int | None,
                ambiente: str, file_name: str, xml: bytes, digest: str | None) -> None:
        """Write the submission of this serie-número unless it exists; an existing one without a CDR takes `xml` and
        `digest` and is pending again when it failed, or when it is pending and nothing may have reached SUNAT
        (never attempted)."""
        ...

    def enqueue_sending(self, environment: str, ruc: str, tipo: str, serie: str, numero: str, *, voucher_id: int,
                        ambiente: str, file_name: str, xml: bytes, digest: str, owner: str,
                        seconds: float) -> int | None:
        """Write a new submission already claimed by `owner` for `seconds` (the database's clock) and marked as
        sending (one attempt counted, something may reach SUNAT): «Emitir» writes it in the transaction that stores
        its voucher, so both and the mark commit once. Its id; None, and nothing written, when the serie-número has a
        submission already."""
        ...

    def find(self, environment: str, ruc: str, tipo: str, serie: str, numero: str) -> dict[str, Any] | None: ...

    def get(self, submission_id: int) -> dict[str, Any] | None: ...

    def due(self, environment: str, now: float) -> list[int]:
        """The ids of an environment's pending submissions whose next attempt is due at `now` (the scheduler's clock),
        soonest first."""
        ...

    def next_due_at(self, environment: str) -> float | None:
        """When the first of an environment's pending submissions is due; None when none is pending."""
        ...

    def pending_by_environment(self) -> dict[str, int]: ...

    # ------------------------------------------------------------ leases

    def lease(self, submission_id: int) -> Lease | None:
        """The submission's state and lease, None when it does not exist."""
        ...

    def claim(self, submission_id: int, owner: str, seconds: float, replacing: str | None = None) -> bool:
        """Take the lease of a pending submission for `seconds` from the database's now: when nobody holds it, its
        lease ran out (database clock), or it is held by `replacing` (an owner known to be dead). Checked and written
        in one statement: of two claimants one wins."""
        ...

    def renew_lease(self, submission_id: int, owner: str, seconds: float) -> bool:
        """Extend `owner`'s lease to `seconds` from the database's now; False when it is no longer `owner`'s."""
        ...

    def now(self) -> float:
        """The database's clock in epoch seconds (the one leases are kept on)."""
        ...

    # ------------------------------------------------------------ an attempt

    def mark_sending(self, submission_id: int, owner: str) -> bool:
        """Count an attempt about to send, marking that something may reach SUNAT; only while the row is pending and
        `owner` holds it."""
        ...

    def store_cdr(self, submission_id: int, *, codigo: str, descripcion: str, notas: str, estado: str | None,
                  hash_cdr: str, cdr_xml: bytes, member: str) -> bool:
        """Keep a CDR (the first one stays) and end the row as done, its lease let go. True when this CDR is the one
        kept; False when the row had one already (that one stays the answer)."""
        ...

    def fail(self, submission_id: int, *, code: str, text: str, owner: str | None) -> bool:
        """End a pending row without a CDR as failed with SUNAT's code and text (when `owner` is given, only while it
        holds the row); False when it was finished or taken meanwhile."""
        ...

    def retry_later(self, submission_id: int, *, owner: str, must_reconcile: int, next_attempt_at: float,
                    reason: str) -> bool:
        """Let go of `owner`'s lease on a pending row and schedule its next attempt (`next_attempt_at` on the
        scheduler's clock); False when it was finished or taken meanwhile."""
        ...

    # ------------------------------------------------------------ CDRs

    def cdr(self, submission_id: int) -> dict[str, Any] | None: ...

    def latest_cdr_of_voucher(self, voucher_id: int) -> dict[str, Any] | None:
        """The latest CDR of a voucher's submissions (codigo, descripcion, notas, estado, hash_cdr, cdr_zip, cdr_xml,
        cdr_member, received_at)."""
        ...

    # ------------------------------------------------------------ repair on open

    def unfinished_with_cdr(self) -> list[int]:
        """Pending or failed submissions that have a CDR (a process killed between two writes)."""
        ...

    def finish(self, submission_id: int) -> None:
        """End a row as done, its lease let go (it has its CDR)."""
        ...

    def cdr_states_of_vouchers(self, voucher_ids: Iterable[int]) -> list[tuple[int, str]]:
        """(voucher id, the CDR's status) of every CDR with a status stored for these vouchers, oldest first."""
        ...

    # ------------------------------------------------------------ one path per boleta

    def submitted_vouchers(self, voucher_ids: Iterable[int]) -> set[int]:
        """Those of these vouchers that have a submission (in any state): sent alone, or queued to be. Read inside the
        caller's transaction (the resumen diario's numbering), so a submission queued meanwhile is seen."""
        ...
