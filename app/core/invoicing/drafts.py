"""The voucher form's drafts (issue 32): what a person typed in «Nuevo comprobante» and did not issue yet.

The form saves its content a moment after each change and when it is closed with «Guardar borrador»; a draft
survives the program being killed and is offered when the form opens again on the same desk. Drafts belong to the
desk (the computer: app/core/platform/processes.HOST), so desks sharing one database never see each other's. A
draft goes when its voucher is issued or the person discards it.

The content is the form's own JSON object (the engine does not read it): numbers are kept as typed, as text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from app.core.errors import invalid, not_found
from app.core.platform.processes import HOST
from app.core.storage.ports.drafts import DraftRepository, DraftRow

MAX_CONTENT_CHARS = 1_000_000  # a form with thousands of lines fits; anything larger is not a typed voucher


@dataclass(frozen=True)
class VoucherDraft:
    """A stored draft: the form's content, the customer and total it showed, when it was last saved (the database's
    clock, ISO 8601 UTC) and how long ago that was."""

    id: int
    content: dict[str, Any]
    cliente: str
    total: Decimal
    moneda: str
    updated_at: str
    age_seconds: float


def _record(row: DraftRow) -> VoucherDraft:
    try:
        content = json.loads(row.content)
    except ValueError:
        content = {}
    try:
        total = Decimal(row.total)
    except InvalidOperation:
        total = Decimal("0.00")
    return VoucherDraft(row.id, content if isinstance(content, dict) else {}, row.cliente, total, row.moneda,
                        row.updated_at, row.age_seconds)


class Drafts:
    """This desk's drafts."""

    def __init__(self, repository: DraftRepository, desk: str = HOST) -> None:
        self._repository = repository
        self.desk = desk

    def list(self) -> list[VoucherDraft]:
        """The desk's drafts, the most recently saved first."""
        return [_record(row) for row in self._repository.list(self.desk)]

    def get(self, draft_id: int) -> VoucherDraft:
        row = self._repository.get(self.desk, draft_id)
        if row is None:
            raise not_found("draft_id", f"El borrador {draft_id} ya no existe.")
        return _record(row)

    def save(self, content: dict[str, Any], *, cliente: str = "", total: Decimal | str = "0.00", moneda: str = "PEN",
             draft_id: int | None = None) -> VoucherDraft:
        """Store the form's content as a new draft, or over draft `draft_id` (a new one when that one is gone)."""
        if not isinstance(content, dict):
            raise invalid("content", "Un borrador es un objeto JSON.")
        text = json.dumps(content, ensure_ascii=False, default=str, sort_keys=True)
        if len(text) > MAX_CONTENT_CHARS:
            raise invalid("content", "El borrador es demasiado grande para guardarlo.")
        try:
            amount = Decimal(str(total))
        except InvalidOperation:
            amount = Decimal("0.00")
        saved = self._repository.save(self.desk, draft_id, text, cliente.strip()[:200], str(amount), moneda)
        return self.get(saved)

    def discard(self, draft_id: int) -> bool:
        """Remove a draft (issued or discarded); whether it was there."""
        return self._repository.delete(self.desk, draft_id)
