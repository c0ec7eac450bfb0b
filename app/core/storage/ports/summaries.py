"""Port of the summaries sent to SUNAT to void or report vouchers (RA, RC: one row each, numbered per environment,
issuer, kind and day, with one line per voucher) and of the CDRs asked of SUNAT for our vouchers (getStatusCdr).
CDRs come back as stored (their XML packed, or a zip kept before): the voids unpack them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class SummaryEntry:
    """One voucher in a summary: its identity, the line's condition (RC: 1 added, 3 voided) and the reason (RA)."""

    voucher_id: int
    tipo: str
    serie: str
    numero: int
    condition: str
    motivo: str


class SummaryRepository(Protocol):
    # ------------------------------------------------------------ numbering and storing

    def pending_ident_of_voucher(self, voucher_id: int) -> str | None:
        """The ident of a pending summary the voucher is in, or None."""
        ...

    def first_pending_line(self, voucher_ids: list[int]) -> tuple[str, int, str] | None:
        """(serie, numero, ident) of one of these vouchers a summary holds (see `held_voucher_ids`), or None; read
        inside the caller's transaction."""
        ...

    def held_voucher_ids(self, voucher_ids: Iterable[int]) -> set[int]:
        """Those of these vouchers a summary holds: in a pending summary, or reported (a line with status 1 or 2) by
        one whose outcome could not be learnt (`sin_confirmar`: SUNAT may have them, they are never reported again)."""
        ...

    def reported_by(self, voucher_ids: Iterable[int]) -> dict[int, str]:
        """voucher id → ident of a summary that reports it to SUNAT (a line with status 1 or 2: a boleta or its note
        «added» by a resumen diario) and is pending, accepted or `sin_confirmar` (its outcome never learnt: SUNAT may
        have it); for one path per boleta, read inside the caller's transaction (the outbox's queueing)."""
        ...

    def refused_with(self, voucher_ids: Iterable[int], codigo: str) -> set[int]:
        """Those of these vouchers reported (status 1 or 2) by a summary SUNAT refused (`fallido`) with `codigo`."""
        ...

    def void_lines(self, voucher_ids: Iterable[int]) -> list[dict[str, Any]]:
        """The lines voiding these vouchers (status 3, every RA line) in a summary pending or `sin_confirmar`, oldest
        summary first: voucher_id, serie, numero, and the summary's id, ident, kind, state and created_at."""
        ...

    def last_counter(self, environment: str, emisor_ruc: str, kind: str, issue_date: str) -> int:
        """The highest counter of an environment's, issuer's, kind's and day's summaries (0: none)."""
        ...

    def raise_counter(self, environment: str, emisor_ruc: str, kind: str, issue_date: str, at_least: int) -> None:
        """The day's counter goes on after `at_least` at the lowest (summaries made elsewhere: a restore)."""
        ...

    def take_counter(self, environment: str, emisor_ruc: str, kind: str, issue_date: str) -> int:
        """The next counter of an environment's, issuer's, kind's and day's summaries, handed out inside the caller's
        transaction (which stores the summary): the day's numbering row stays locked until it ends, so desks making
        summaries at once make them one after the other, each seeing what the one before stored."""
        ...

    def add(self, *, environment: str, emisor_ruc: str, kind: str, ident: str, issue_date: str, counter: int,
            reference_date: str, xml_firmado: str, lines: list[SummaryEntry]) -> int:
        """Store a pending summary and its lines; its id."""
        ...

    # ------------------------------------------------------------ reading

    def get(self, summary_id: int) -> dict[str, Any] | None: ...

    def find(self, environment: str, emisor_ruc: str, ident: str) -> dict[str, Any] | None:
        """id and state of an environment's and issuer's summary named `ident` (RA-AAAAMMDD-N), or None."""
        ...

    def brief(self, summary_id: int) -> dict[str, Any] | None:
        """id, ident, state and ticket (what the engine's event tells)."""
        ...

    def lines(self, summary_id: int) -> list[dict[str, Any]]:
        """The summary's lines (voucher_id, tipo, serie, numero, condition, motivo) by voucher id."""
        ...

    def recent(self, environment: str, limit: int) -> list[dict[str, Any]]:
        """An environment's summaries, newest first, without their texts; `comprobantes` lists the serie-números of
        each («F001-7, F001-8»)."""
        ...

    def for_voucher(self, voucher_id: int) -> list[dict[str, Any]]:
        """The summaries a voucher was put in, newest first, with the line's condition and reason."""
        ...

    def pending(self) -> list[int]:
        """The ids of the pending summaries of every environment, oldest first."""
        ...

    # ------------------------------------------------------------ sending and SUNAT's answer

    def claim_send(self, summary_id: int, send_attempts: int, updated_at: str) -> bool:
        """Count a send of a pending summary without a ticket, if `send_attempts` is still its count (compare and
        set: only one process sends what it read)."""
        ...

    def note(self, summary_id: int, descripcion: str) -> None:
        """Keep why the last send failed (sent again at the next poll)."""
        ...

    def mark_received(self, summary_id: int, *, codigo: str, descripcion: str, updated_at: str) -> bool:
        """SUNAT answered a send again with `codigo` (2403, 2324, 2223): it holds the summary, whose ticket was lost.
        The summary stays pending without a ticket, `codigo` and `descripcion` saying so; False when it was not pending
        without a ticket any more."""
        ...

    def store_ticket(self, summary_id: int, ticket: str, updated_at: str) -> None: ...

    def count_poll(self, summary_id: int) -> None: ...

    def finish(self, summary_id: int, *, state: str, codigo: str | None, descripcion: str, cdr_xml: bytes | None,
               cdr_member: str | None, updated_at: str) -> bool:
        """Record SUNAT's answer (or, for a summary whose outcome could not be learnt, `sin_confirmar`) on a pending
        summary; False when it was not pending any more (answered meanwhile)."""
        ...

    # ------------------------------------------------------------ CDRs asked of SUNAT for our vouchers

    def add_consulted_cdr(self, *, voucher_id: int, environment: str, codigo: str, descripcion: str, cdr_xml: bytes,
                          cdr_member: str) -> None: ...

    def latest_consulted_cdr(self, voucher_id: int) -> dict[str, Any] | None:
        """codigo, descripcion, cdr_zip, cdr_xml, cdr_member and received_at of the latest one, or None."""
        ...
