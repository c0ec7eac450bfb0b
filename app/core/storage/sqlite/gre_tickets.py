"""SQLite repository of the GRE tickets (ports.gre_tickets.GreTicketRepository): the `gre_tickets` table."""

from __future__ import annotations

from app.core.storage.ports.gre_tickets import GreTicket
from app.core.storage.sqlite.database import Storage

KEY = "environment = ? AND ruc = ? AND tipo = ? AND serie = ? AND numero = ?"


class SqliteGreTicketRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    def record(self, environment: str, ruc: str, tipo: str, serie: str, numero: str, ticket: str,
               hash_zip: str) -> GreTicket:
        key = (environment, ruc, tipo, serie, numero)
        with self._db.write(durable=True) as conn:  # the ticket is what a kill must never take
            conn.execute("INSERT INTO gre_tickets (environment, ruc, tipo, serie, numero, ticket, hash_zip) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", (*key, ticket, hash_zip))
        found = self.find(*key)
        assert found is not None  # inserted now, or there before
        return found

    def find(self, environment: str, ruc: str, tipo: str, serie: str, numero: str) -> GreTicket | None:
        row = self._db.query_one(f"SELECT ticket, hash_zip FROM gre_tickets WHERE {KEY}",
                                 (environment, ruc, tipo, serie, numero))
        return None if row is None else GreTicket(row["ticket"], row["hash_zip"])
