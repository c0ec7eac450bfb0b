"""Port of the voucher form's drafts: what a person typed and did not issue yet, kept per desk (issue 32).

A desk is the computer the windows run on (app/core/platform/processes.HOST): on a database shared by several desks
each one sees only its own drafts. A draft's content is the form's own JSON (what the form can fill itself back
from), stored as text; `updated_at` and the age are the database's clock.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol


class DraftRow(NamedTuple):
    """A stored draft: its content as stored, the customer and total shown when it is offered, and its age."""

    id: int
    content: str
    cliente: str
    total: str
    moneda: str
    updated_at: str
    age_seconds: float


class DraftRepository(Protocol):
    """The `voucher_drafts` of one database; every method is scoped to a desk."""

    def save(self, desk: str, draft_id: int | None, content: str, cliente: str, total: str, moneda: str) -> int:
        """Store a draft: a new one (`draft_id` None, or a draft of this desk that is gone) or the same draft
        replaced, its `updated_at` now. Returns its id."""
        ...

    def get(self, desk: str, draft_id: int) -> DraftRow | None: ...

    def list(self, desk: str) -> list[DraftRow]:
        """This desk's drafts, the most recently changed first."""
        ...

    def delete(self, desk: str, draft_id: int) -> bool:
        """Remove a draft of this desk; whether there was one."""
        ...
