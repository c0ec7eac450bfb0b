"""SQLite repository of messaging (ports.messaging): instances, messages, received events, subscriptions, deliveries."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from app.core.storage.ports.messaging import Due
from app.core.storage.sql import where_equal
from app.core.storage.sqlite.database import DB_NOW, Storage

# The environment of an instance's rows: its own (set when it was saved), else the one given.
_ENVIRONMENT_OF = "COALESCE((SELECT environment FROM messaging_instances WHERE name = ?), ?)"
_RANK_SQL = "CASE status WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2 WHEN 'read' THEN 3 ELSE 0 END"


def _here(environment: str, alias: str = "") -> tuple[str, tuple[str, ...]]:
    """An SQL condition (and its parameter) keeping one environment's rows: '1 = 1' when unfiltered ("")."""
    return (f"{alias}environment = ?", (environment,)) if environment else ("1 = 1", ())


def _held(dead: Sequence[str], alias: str = "d.") -> tuple[str, tuple[str, ...]]:
    """An SQL condition (and its parameters) true while a delivery's lease holds it: it has not run out on the
    database's clock and its holder is not one of `dead` (processes known to be gone)."""
    if not dead:
        return f"{alias}lease_until > {DB_NOW}", ()
    marks = ", ".join("?" * len(dead))
    return f"({alias}lease_until > {DB_NOW} AND COALESCE({alias}lease_holder, '') NOT IN ({marks}))", tuple(dead)


def _instance(row: dict[str, Any]) -> dict[str, Any]:
    row["options"] = json.loads(row["options"])
    return row


class SqliteMessagingRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    # ------------------------------------------------------------ instances

    def save_instance(self, name: str, gateway: str, base_url: str, options: dict[str, Any], environment: str,
                      owner: str | None) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO messaging_instances (name, gateway, base_url, options, environment, owner) "
                         "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET gateway = excluded.gateway, "
                         "base_url = excluded.base_url, options = excluded.options, "
                         "environment = excluded.environment, owner = excluded.owner",
                         (name, gateway, base_url, json.dumps(options), environment, owner))

    def instance(self, name: str, environment: str) -> dict[str, Any] | None:
        where, params = _here(environment)
        row = self._db.query_one(f"SELECT * FROM messaging_instances WHERE name = ? AND {where}", (name, *params))
        return _instance(row) if row else None

    def instances(self, environment: str) -> list[dict[str, Any]]:
        where, params = _here(environment)
        return [_instance(row) for row in
                self._db.query(f"SELECT * FROM messaging_instances WHERE {where} ORDER BY name", params)]

    def delete_instance(self, name: str, owner: str | None) -> bool:
        with self._db.write() as conn:
            if owner is None:
                return conn.execute("DELETE FROM messaging_instances WHERE name = ?", (name,)).rowcount > 0
            return conn.execute("DELETE FROM messaging_instances WHERE name = ? AND owner = ?",
                                (name, owner)).rowcount > 0

    def owned_instances(self) -> list[dict[str, Any]]:
        return self._db.query("SELECT name, gateway, owner FROM messaging_instances WHERE owner IS NOT NULL")

    def set_instance_state(self, name: str, state: str, at: int) -> None:
        with self._db.write() as conn:
            conn.execute("UPDATE messaging_instances SET state = ?, state_at = ? WHERE name = ?", (state, at, name))

    # ------------------------------------------------------------ messages

    def received_events_of(self, instance: str, gateway_id: str, events: Sequence[str]) -> list[str]:
        marks = ", ".join("?" * len(events))
        rows = self._db.query(f"SELECT event FROM webhook_events WHERE instance = ? AND gateway_id = ? "
                              f"AND event IN ({marks})", (instance, gateway_id, *events))
        return [row["event"] for row in rows]

    def gateway_id_taken(self, instance: str, gateway_id: str) -> bool:
        return self._db.query_one("SELECT 1 AS taken FROM messages WHERE instance = ? AND gateway_id = ?",
                                  (instance, gateway_id)) is not None

    def add_outgoing(self, message_id: str, instance: str, gateway_id: str | None, peer: str, kind: str, body: str,
                     media: str | None, status: str, timestamp: int, environment: str) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO messages (id, instance, gateway_id, direction, peer, type, body, media, status, "
                         f"timestamp, environment) VALUES (?, ?, ?, 'out', ?, ?, ?, ?, ?, ?, {_ENVIRONMENT_OF})",
                         (message_id, instance, gateway_id, peer, kind, body, media, status, timestamp, instance,
                          environment))

    def add_incoming(self, message_id: str, instance: str, gateway_id: str | None, peer: str, name: str, kind: str,
                     body: str, status: str, timestamp: int, environment: str) -> None:
        with self._db.write() as conn:
            # No conflict target: a message stored already by its id or by its gateway id is kept as it is.
            conn.execute("INSERT INTO messages (id, instance, gateway_id, direction, peer, name, type, body, status, "
                         f"timestamp, environment) VALUES (?, ?, ?, 'in', ?, ?, ?, ?, ?, ?, {_ENVIRONMENT_OF}) "
                         "ON CONFLICT DO NOTHING",
                         (message_id, instance, gateway_id, peer, name, kind, body, status, timestamp, instance,
                          environment))

    def advance_status(self, instance: str, gateway_id: str, status: str, rank: int) -> tuple[str, str] | None:
        with self._db.write() as conn:
            conn.execute(f"UPDATE messages SET status = ? WHERE instance = ? AND gateway_id = ? AND {_RANK_SQL} < ?",
                         (status, instance, gateway_id, rank))
            rows = conn.execute("SELECT id, peer FROM messages WHERE instance = ? AND gateway_id = ?",
                                (instance, gateway_id)).fetchall()
        return (rows[0][0], rows[0][1]) if rows else None

    def message(self, message_id: str) -> dict[str, Any] | None:
        return self._db.query_one("SELECT * FROM messages WHERE id = ?", (message_id,))

    def messages(self, environment: str, instance: str | None, peer: str | None, limit: int) -> list[dict[str, Any]]:
        here, current = _here(environment)
        where, params = [here], [*current]
        where_equal(where, params, {"instance": instance, "peer": peer})
        sql = "SELECT * FROM messages WHERE " + " AND ".join(where)
        rows = self._db.query(sql + " ORDER BY id DESC LIMIT ?", (*params, limit))
        return list(reversed(rows))

    def conversations(self, environment: str) -> list[dict[str, Any]]:
        where, params = _here(environment)
        return self._db.query(
            "SELECT instance, peer, MAX(id) AS last_id, MAX(timestamp) AS last_at, "
            "MAX(CASE WHEN direction = 'in' THEN name END) AS name, COUNT(*) AS messages "
            f"FROM messages WHERE {where} GROUP BY instance, peer ORDER BY last_id DESC", params)

    # ------------------------------------------------------------ received events

    def add_event(self, instance: str, dedup_key: str, event: str, gateway_id: str | None, timestamp: int,
                  payload: str, received_at: float, environment: str) -> int | None:
        with self._db.write() as conn:
            # SQLite tells an insert from a skipped duplicate by the row count, and the new row's id without RETURNING
            # (a third cheaper on the listener's path); PostgreSQL: `… DO NOTHING RETURNING seq`.
            cursor = conn.execute(
                "INSERT INTO webhook_events (instance, dedup_key, event, gateway_id, timestamp, payload, received_at, "
                f"environment) VALUES (?, ?, ?, ?, ?, ?, ?, {_ENVIRONMENT_OF}) ON CONFLICT (instance, dedup_key) DO NOTHING",
                (instance, dedup_key, event, gateway_id, timestamp, payload, received_at, instance, environment))
            if cursor.rowcount == 0:
                return None  # a duplicate, stored already (lastrowid would still name an earlier row)
            return cursor.lastrowid

    def event_count(self, instance: str | None) -> int:
        where, params = ("WHERE instance = ?", (instance,)) if instance else ("", ())
        rows = self._db.query(f"SELECT COUNT(*) AS n FROM webhook_events {where}", params)
        return int(rows[0]["n"])  # an aggregate has its one row

    def recent_payloads(self, limit: int) -> list[str]:
        rows = self._db.query("SELECT payload FROM webhook_events ORDER BY seq DESC LIMIT ?", (limit,))
        return [r["payload"] for r in reversed(rows)]

    # ------------------------------------------------------------ subscriptions

    def add_subscription(self, sub_id: str, instance: str, url: str, events: list[str], environment: str) -> None:
        with self._db.write() as conn:
            conn.execute(f"INSERT INTO subscriptions (id, instance, url, events, environment) VALUES (?, ?, ?, ?, "
                         f"{_ENVIRONMENT_OF})", (sub_id, instance, url, json.dumps(events), instance, environment))

    def subscriptions(self, environment: str, instance: str | None) -> list[dict[str, Any]]:
        sql = ("SELECT s.*, (SELECT COUNT(*) FROM deliveries d WHERE d.subscription_id = s.id AND d.state = 'pending') "
               "AS pending, (SELECT MIN(next_attempt_at) FROM deliveries d WHERE d.subscription_id = s.id "
               "AND d.state = 'pending') AS next_attempt_at, (SELECT COUNT(*) FROM deliveries d WHERE "
               "d.subscription_id = s.id AND d.state = 'delivered') AS delivered FROM subscriptions s")
        here, params = _here(environment, "s.")
        by_instance = " AND s.instance = ?" if instance else ""
        rows = self._db.query(f"{sql} WHERE {here}{by_instance} ORDER BY s.id",
                              (*params, instance) if instance else params)
        for row in rows:
            row["events"] = json.loads(row["events"])
        return rows

    def listening(self, instance: str) -> list[tuple[str, list[str]]]:
        rows = self._db.query("SELECT id, events FROM subscriptions WHERE instance = ? AND state != 'disabled'",
                              (instance,))
        return [(row["id"], json.loads(row["events"])) for row in rows]

    def note_attempt(self, sub_id: str, at: float, status: int | None, error: str | None,
                     state: str | None) -> None:
        with self._db.write() as conn:
            conn.execute("UPDATE subscriptions SET last_attempt_at = ?, last_status = ?, last_error = ?, "
                         "state = CASE WHEN state = 'disabled' THEN state ELSE COALESCE(?, state) END "
                         "WHERE id = ?", (at, status, error, state, sub_id))

    def activate(self, sub_id: str) -> None:
        with self._db.write() as conn:
            conn.execute("UPDATE subscriptions SET state = 'active' WHERE id = ?", (sub_id,))

    # ------------------------------------------------------------ deliveries

    def add_deliveries(self, rows: list[tuple[str, str, int, float]]) -> None:
        with self._db.write() as conn:
            conn.executemany("INSERT INTO deliveries (id, subscription_id, event_seq, next_attempt_at) "
                             "VALUES (?, ?, ?, ?)", rows)

    def next_due_at(self, environment: str, now: float, excluding: Sequence[str] = (),
                    dead: Sequence[str] = ()) -> float | None:
        here, params = _here(environment, "s.")
        others = f" AND d.subscription_id NOT IN ({', '.join('?' * len(excluding))})" if excluding else ""
        held, held_params = _held(dead)
        # A held lease's end on the caller's clock: now + what is left of it by the database's.
        lease_end = f"(? + d.lease_until - {DB_NOW})"
        row = self._db.query_one(
            f"SELECT MIN(CASE WHEN {held} AND {lease_end} > d.next_attempt_at THEN {lease_end} "
            "ELSE d.next_attempt_at END) AS at FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id "
            f"WHERE d.state = 'pending' AND {here}{others}", (*held_params, now, now, *params, *excluding))
        return row["at"] if row else None

    def lease_holders(self) -> list[str]:
        rows = self._db.query(f"SELECT DISTINCT lease_holder FROM deliveries WHERE state = 'pending' "
                              f"AND lease_until > {DB_NOW} AND lease_holder IS NOT NULL")
        return [row["lease_holder"] for row in rows]

    def claim_due(self, environment: str, now: float, limit: int, lease_s: float, holder: str,
                  busy: Mapping[str, int] | None = None, dead: Sequence[str] = ()) -> list[Due]:
        here, params = _here(environment, "s.")
        held, held_params = _held(dead)
        free = f"NOT {held}"  # its lease ran out, or its holder is dead
        due = ("SELECT d.id, d.subscription_id, s.url, d.attempts, e.payload, e.timestamp FROM deliveries d "
               "JOIN subscriptions s ON s.id = d.subscription_id JOIN webhook_events e ON e.seq = d.event_seq "
               f"WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND {free} AND {here}")
        with self._db.write() as conn:
            if busy is None:  # the oldest due, whichever their subscription
                rows = conn.execute(f"{due} ORDER BY d.next_attempt_at LIMIT ?",
                                    (now, *held_params, *params, limit)).fetchall()
            else:  # each subscription's oldest due, up to its room: one's backlog never holds another's back
                rows = []
                for (sub_id,) in conn.execute(f"SELECT s.id FROM subscriptions s WHERE {here} ORDER BY s.id",
                                              params).fetchall():
                    room = limit - busy.get(sub_id, 0)
                    if room > 0:
                        rows += conn.execute(f"{due} AND d.subscription_id = ? ORDER BY d.next_attempt_at LIMIT ?",
                                             (now, *held_params, *params, sub_id, room)).fetchall()
            if not rows:
                return []
            # The lease is taken in one statement on the database's clock, and only where it is still free (another
            # engine's statement may come first on a server).
            marks = ", ".join("?" * len(rows))
            taken, _ = _held(dead, alias="")
            leases = dict(conn.execute(
                f"UPDATE deliveries SET lease_until = {DB_NOW} + ?, lease_holder = ? WHERE id IN ({marks}) "
                f"AND state = 'pending' AND NOT {taken} RETURNING id, lease_until",
                (lease_s, holder, *(r[0] for r in rows), *held_params)).fetchall())
        return [Due(row[0], row[1], row[2], row[3], row[4], row[5], leases[row[0]], holder)
                for row in rows if row[0] in leases]

    def renew_lease(self, delivery_id: str, holder: str, lease: float, lease_s: float) -> float | None:
        with self._db.write() as conn:
            rows = conn.execute(f"UPDATE deliveries SET lease_until = {DB_NOW} + ? WHERE id = ? AND lease_until = ? "
                                "AND lease_holder = ? AND state = 'pending' RETURNING lease_until",
                                (lease_s, delivery_id, lease, holder)).fetchall()
        return float(rows[0][0]) if rows else None

    def record_attempt(self, delivery_id: str, holder: str, lease: float, state: str, status: int | None,
                       error: str | None, at: float, next_at: float | None) -> bool:
        with self._db.write() as conn:
            return conn.execute(
                "UPDATE deliveries SET state = ?, attempts = attempts + 1, last_status = ?, last_error = ?, "
                "last_attempt_at = ?, next_attempt_at = COALESCE(?, next_attempt_at), lease_until = 0, "
                "lease_holder = NULL WHERE id = ? AND lease_until = ? AND lease_holder = ?",
                (state, status, error, at, next_at, delivery_id, lease, holder)).rowcount > 0

    def cancel_pending(self, sub_id: str, state: str) -> None:
        with self._db.write() as conn:
            conn.execute("UPDATE deliveries SET state = ? WHERE subscription_id = ? AND state = 'pending'",
                         (state, sub_id))

    def retry_deliveries(self, sub_id: str, now: float) -> int:
        with self._db.write() as conn:
            # A live lease stays: the delivery in flight is its holder's until it records the attempt.
            return conn.execute("UPDATE deliveries SET state = 'pending', next_attempt_at = ? "
                                "WHERE subscription_id = ? AND state IN ('pending', 'failed', 'cancelled')",
                                (now, sub_id)).rowcount

    def deliveries(self, sub_id: str | None) -> list[dict[str, Any]]:
        sql = "SELECT * FROM deliveries" + (" WHERE subscription_id = ?" if sub_id else "") + " ORDER BY id"
        return self._db.query(sql, (sub_id,) if sub_id else ())
