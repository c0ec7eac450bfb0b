"""Port of the tickets SUNAT's GRE platform gives the guías de remisión sent to it (issue 36).

A guía is sent to SUNAT's REST platform and answered at once with a ticket (`numTicket`); its outcome is asked for
with that ticket later. The ticket is written durably as soon as it arrives, before it is asked about: a process
killed while waiting asks the same ticket again instead of sending the guía a second time. The first ticket of a
guía stays (a guía is registered once).
"""

from __future__ import annotations

from typing import NamedTuple, Protocol


class GreTicket(NamedTuple):
    ticket: str
    hash_zip: str  # SHA-256 (hex) of the zip that ticket answers


class GreTicketRepository(Protocol):
    """The `gre_tickets` of one database, by environment and guía."""

    def record(self, environment: str, ruc: str, tipo: str, serie: str, numero: str, ticket: str,
               hash_zip: str) -> GreTicket:
        """Keep a guía's ticket durably (committed and synced before it returns); a guía that has one keeps its first.
        Returns the ticket kept."""
        ...

    def find(self, environment: str, ruc: str, tipo: str, serie: str, numero: str) -> GreTicket | None: ...
