"""The messaging tables: instances, messages, received events (stored once), subscriptions, deliveries.

Stores only store: no HTTP here. Every received event goes through `ingest`, one transaction that
stores it once (by its dedup key), applies it (a new incoming message, a status moving forward, an
instance's state) and queues one delivery per matching subscription, so what the listener
acknowledged is never lost and never doubled.

Each instance belongs to one environment (app.core.platform.environments), and so do its messages, received events
and subscriptions (a delivery follows its subscription): the lists, the sends and the forwarder see the current
environment's only; the others wait, untouched, until their environment is chosen again. An instance made by a
running sandbox has that sandbox's process as `owner` and goes when it stops (or dies: `stopped_sandbox_instances`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Migrations

from app.core.messaging import clock
from app.core.messaging import events as ev
from app.core.messaging.events import InboundEvent
from app.core.messaging.ids import delivery_id
from app.core.platform.processes import owner_alive
from app.core.platform.storage import Storage, register_migrations, where_equal

log = logging.getLogger(__name__)
migrations = register_migrations(Migrations("yupana.messaging"))

DELIVERY_PENDING = "pending"
DELIVERY_DONE = "delivered"
DELIVERY_FAILED = "failed"
DELIVERY_CANCELLED = "cancelled"
SUB_ACTIVE = "active"
SUB_FAILING = "failing"
SUB_DISABLED = "disabled"
_RANK_SQL = "CASE status WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2 WHEN 'read' THEN 3 ELSE 0 END"


@migrations()
def m001_messaging(db) -> None:
    db.execute("""CREATE TABLE messaging_instances (
        name TEXT PRIMARY KEY, gateway TEXT NOT NULL, base_url TEXT NOT NULL, options TEXT NOT NULL DEFAULT '{}',
        state TEXT NOT NULL DEFAULT 'unknown', state_at INTEGER,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))""")
    db.execute("""CREATE TABLE messages (
        id TEXT PRIMARY KEY, instance TEXT NOT NULL, gateway_id TEXT, direction TEXT NOT NULL,
        peer TEXT NOT NULL, name TEXT NOT NULL DEFAULT '', type TEXT NOT NULL DEFAULT 'text',
        body TEXT NOT NULL DEFAULT '', media TEXT, status TEXT NOT NULL, timestamp INTEGER NOT NULL)""")
    db.execute("CREATE UNIQUE INDEX messages_gateway ON messages (instance, gateway_id)")
    db.execute("CREATE INDEX messages_peer ON messages (instance, peer, timestamp)")
    db.execute("""CREATE TABLE webhook_events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, instance TEXT NOT NULL, dedup_key TEXT NOT NULL,
        event TEXT NOT NULL, gateway_id TEXT, timestamp INTEGER NOT NULL, payload TEXT NOT NULL,
        received_at REAL NOT NULL, UNIQUE (instance, dedup_key))""")
    db.execute("CREATE INDEX webhook_events_gateway ON webhook_events (instance, gateway_id)")
    db.execute("""CREATE TABLE subscriptions (
        id TEXT PRIMARY KEY, instance TEXT NOT NULL, url TEXT NOT NULL, events TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'active', last_attempt_at REAL, last_status INTEGER, last_error TEXT,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))""")
    db.execute("""CREATE TABLE deliveries (
        id TEXT PRIMARY KEY, subscription_id TEXT NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
        event_seq INTEGER NOT NULL REFERENCES webhook_events (seq), state TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at REAL NOT NULL, lease_until REAL NOT NULL DEFAULT 0,
        last_status INTEGER, last_error TEXT, last_attempt_at REAL)""")
    db.execute("CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at)")
    db.execute("CREATE INDEX deliveries_subscription ON deliveries (subscription_id, state)")


@migrations()
def m002_environment(db) -> None:
    """Instances, messages, received events and subscriptions belong to one environment (docs/architecture.md,
    «Entornos»). Rows stored before go to the folder's environment (sandbox when never set), except the sandbox
    gateway's own «demo» (an Evolution instance on this computer), which is the sandbox's and, its sandbox being
    gone, is purged at the next start (owner "": no process)."""
    setting = db.execute("SELECT value FROM settings WHERE key = 'environment'").fetchone() \
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'settings'").fetchone() else None
    folder = setting[0] if setting else "sandbox"
    for table in ("messaging_instances", "messages", "webhook_events", "subscriptions"):
        db.execute(f"ALTER TABLE {table} ADD COLUMN environment TEXT NOT NULL DEFAULT 'sandbox'")
    db.execute("ALTER TABLE messaging_instances ADD COLUMN owner TEXT")  # NULL: the user's; else a sandbox process
    db.execute("UPDATE messaging_instances SET environment = ?", [folder])
    db.execute("UPDATE messaging_instances SET environment = 'sandbox', owner = '' WHERE name = 'demo' AND "
               "gateway = 'evolution' AND (base_url LIKE 'http://127.0.0.1:%' OR base_url LIKE 'http://localhost:%')")
    for table in ("messages", "webhook_events", "subscriptions"):
        db.execute(f"UPDATE {table} SET environment = COALESCE((SELECT i.environment FROM messaging_instances i "
                   f"WHERE i.name = {table}.instance), ?)", [folder])
    db.execute("CREATE INDEX messages_environment ON messages (environment, instance, peer)")
    db.execute("CREATE INDEX subscriptions_environment ON subscriptions (environment, instance)")


# The environment of an instance's rows: its own (set when it was saved), else the current one.
_ENVIRONMENT_OF = "COALESCE((SELECT environment FROM messaging_instances WHERE name = ?), ?)"


@dataclass
class Due:
    id: str
    subscription_id: str
    url: str
    attempts: int
    payload: str
    timestamp: int


class MessagingStore:
    """`environment` names the current environment (the settings' `environment`); without it (a bare store in
    a test or a benchmark) every environment is seen."""

    def __init__(self, storage: Storage, environment: Callable[[], str] | None = None) -> None:
        self.storage = storage
        self.environment = environment or (lambda: "")

    def _here(self, alias: str = "") -> tuple[str, tuple[str, ...]]:
        """An SQL condition (and its parameter) keeping the current environment's rows: '1' when unfiltered."""
        current = self.environment()
        return (f"{alias}environment = ?", (current,)) if current else ("1", ())

    # ------------------------------------------------------------ instances

    def save_instance(self, name: str, gateway: str, base_url: str, options: dict[str, Any], environment: str,
                      owner: str | None = None) -> None:
        with self.storage.write() as conn:
            conn.execute("INSERT INTO messaging_instances (name, gateway, base_url, options, environment, owner) "
                         "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET gateway = excluded.gateway, "
                         "base_url = excluded.base_url, options = excluded.options, "
                         "environment = excluded.environment, owner = excluded.owner",
                         (name, gateway, base_url, json.dumps(options), environment, owner))

    def instance(self, name: str, anywhere: bool = False) -> dict[str, Any] | None:
        """The instance if it belongs to the current environment (`anywhere`: whichever it belongs to)."""
        where, params = ("1", ()) if anywhere else self._here()
        row = self.storage.query_one(f"SELECT * FROM messaging_instances WHERE name = ? AND {where}", (name, *params))
        if row:
            row["options"] = json.loads(row["options"])
        return row

    def instances(self, anywhere: bool = False) -> list[dict[str, Any]]:
        where, params = ("1", ()) if anywhere else self._here()
        rows = self.storage.query(f"SELECT * FROM messaging_instances WHERE {where} ORDER BY name", params)
        for row in rows:
            row["options"] = json.loads(row["options"])
        return rows

    def delete_instance(self, name: str, owner: str | None = None) -> bool:
        """Delete an instance (only if `owner` made it, when given); its messages and subscriptions stay."""
        with self.storage.write() as conn:
            if owner is None:
                return conn.execute("DELETE FROM messaging_instances WHERE name = ?", (name,)).rowcount > 0
            return conn.execute("DELETE FROM messaging_instances WHERE name = ? AND owner = ?",
                                (name, owner)).rowcount > 0

    def stopped_sandbox_instances(self) -> list[dict[str, Any]]:
        """Instances whose sandbox process no longer runs (killed without stopping its sandboxes)."""
        rows = self.storage.query("SELECT name, gateway, owner FROM messaging_instances WHERE owner IS NOT NULL")
        return [row for row in rows if not owner_alive(row["owner"])]

    def set_instance_state(self, name: str, state: str, at: int | None = None) -> None:
        with self.storage.write() as conn:
            conn.execute("UPDATE messaging_instances SET state = ?, state_at = ? WHERE name = ?",
                         (state, at or int(time.time()), name))

    # ------------------------------------------------------------ messages

    def add_outgoing(self, message_id: str, instance: str, gateway_id: str | None, to: str, body: str,
                     media: str | None, timestamp: int) -> str:
        """Store a sent message; a status the gateway reported before we stored it is applied at once."""
        status = ev.SENT
        with self.storage.write() as conn:
            if gateway_id:
                early = conn.execute("SELECT event FROM webhook_events WHERE instance = ? AND gateway_id = ? "
                                     "AND event IN (?, ?)", (instance, gateway_id, ev.MESSAGE_DELIVERED,
                                                             ev.MESSAGE_READ)).fetchall()
                for (name,) in early:
                    candidate = ev.STATUS_OF_EVENT[name]
                    if ev.STATUS_RANK[candidate] > ev.STATUS_RANK[status]:
                        status = candidate
            if gateway_id and conn.execute("SELECT 1 FROM messages WHERE instance = ? AND gateway_id = ?",
                                           (instance, gateway_id)).fetchone():
                # The gateway reused an id: the message was sent all the same, so it is kept, unlinked.
                log.warning("gateway id %s of instance %s is already taken; %s kept without it",
                            gateway_id, instance, message_id)
                gateway_id = None
            conn.execute("INSERT INTO messages (id, instance, gateway_id, direction, peer, type, body, media, status, "
                         f"timestamp, environment) VALUES (?, ?, ?, 'out', ?, ?, ?, ?, ?, ?, {_ENVIRONMENT_OF})",
                         (message_id, instance, gateway_id, to, "media" if media else "text", body, media, status,
                          timestamp, instance, self.environment()))
        return status

    def message(self, message_id: str) -> dict[str, Any] | None:
        return self.storage.query_one("SELECT * FROM messages WHERE id = ?", (message_id,))

    def messages(self, instance: str | None = None, peer: str | None = None, limit: int = 500) -> list[dict]:
        here, current = self._here()
        where, params = [here], [*current]
        where_equal(where, params, {"instance": instance, "peer": peer})
        sql = "SELECT * FROM messages WHERE " + " AND ".join(where)
        rows = self.storage.query(sql + " ORDER BY id DESC LIMIT ?", (*params, limit))
        return list(reversed(rows))

    def conversations(self) -> list[dict[str, Any]]:
        """One row per (instance, peer): the last message, its time and the sender's name."""
        where, params = self._here()
        return self.storage.query(
            "SELECT instance, peer, MAX(id) AS last_id, MAX(timestamp) AS last_at, "
            "MAX(CASE WHEN direction = 'in' THEN name END) AS name, COUNT(*) AS messages "
            f"FROM messages WHERE {where} GROUP BY instance, peer ORDER BY last_id DESC", params)

    # ------------------------------------------------------------ received events

    def ingest(self, events: list[InboundEvent], now: float | None = None) -> list[InboundEvent]:
        """Store each event once and apply it, in one transaction; returns the events that were new."""
        now = clock.now() if now is None else now
        current = self.environment()
        fresh: list[InboundEvent] = []
        with self.storage.write() as conn:
            for event in events:
                if event.event in ev.STATUS_OF_EVENT and event.gateway_id:
                    self._apply_status(conn, event)
                payload = json.dumps(event.contract(), ensure_ascii=False, separators=(",", ":"))
                cursor = conn.execute(
                    "INSERT OR IGNORE INTO webhook_events (instance, dedup_key, event, gateway_id, timestamp, payload, "
                    f"received_at, environment) VALUES (?, ?, ?, ?, ?, ?, ?, {_ENVIRONMENT_OF})",
                    (event.instance, event.dedup_key, event.event, event.gateway_id, event.timestamp, payload, now,
                     event.instance, current))
                if cursor.rowcount == 0:
                    continue  # a duplicate: stored already, told already
                seq = cursor.lastrowid
                assert seq is not None  # an INSERT's row id
                if event.event == ev.MESSAGE_RECEIVED:
                    data = event.data
                    conn.execute("INSERT OR IGNORE INTO messages (id, instance, gateway_id, direction, peer, name, "
                                 "type, body, status, timestamp, environment) VALUES (?, ?, ?, 'in', ?, ?, ?, ?, ?, ?, "
                                 f"{_ENVIRONMENT_OF})",
                                 (data["id"], event.instance, event.gateway_id, data["from"], data.get("name", ""),
                                  data.get("type", "text"), data.get("body", ""), ev.RECEIVED, event.timestamp,
                                  event.instance, current))
                elif event.state:
                    conn.execute("UPDATE messaging_instances SET state = ?, state_at = ? WHERE name = ?",
                                 (event.state, event.timestamp, event.instance))
                self._queue(conn, event, seq, now)
                fresh.append(event)
        return fresh

    @staticmethod
    def _apply_status(conn: Any, event: InboundEvent) -> None:
        """Move the message's status forward (never back) and name our id and its number in the event's data."""
        status = ev.STATUS_OF_EVENT[event.event]
        conn.execute(f"UPDATE messages SET status = ? WHERE instance = ? AND gateway_id = ? AND {_RANK_SQL} < ?",
                     (status, event.instance, event.gateway_id, ev.STATUS_RANK[status]))
        row = conn.execute("SELECT id, peer FROM messages WHERE instance = ? AND gateway_id = ?",
                           (event.instance, event.gateway_id)).fetchone()
        if row:
            event.data["id"], event.data["to"] = row[0], row[1]

    @staticmethod
    def _queue(conn: Any, event: InboundEvent, seq: int, now: float) -> None:
        subscriptions = conn.execute("SELECT id, events FROM subscriptions WHERE instance = ? AND state != ?",
                                     (event.instance, SUB_DISABLED)).fetchall()
        for sub_id, names in subscriptions:
            if event.event in json.loads(names):
                conn.execute("INSERT INTO deliveries (id, subscription_id, event_seq, next_attempt_at) "
                             "VALUES (?, ?, ?, ?)", (delivery_id(), sub_id, seq, now))

    def event_count(self, instance: str | None = None) -> int:
        where, params = ("WHERE instance = ?", (instance,)) if instance else ("", ())
        rows = self.storage.query(f"SELECT COUNT(*) AS n FROM webhook_events {where}", params)
        return int(rows[0]["n"])  # an aggregate has its one row

    def recent_events(self, limit: int = 100) -> list[dict[str, Any]]:
        rows = self.storage.query("SELECT payload FROM webhook_events ORDER BY seq DESC LIMIT ?", (limit,))
        return [json.loads(r["payload"]) for r in reversed(rows)]

    # ------------------------------------------------------------ subscriptions and deliveries

    def add_subscription(self, sub_id: str, instance: str, url: str, events: list[str]) -> None:
        with self.storage.write() as conn:
            conn.execute(f"INSERT INTO subscriptions (id, instance, url, events, environment) VALUES (?, ?, ?, ?, "
                         f"{_ENVIRONMENT_OF})", (sub_id, instance, url, json.dumps(sorted(set(events))), instance,
                                                 self.environment()))

    def subscriptions(self, instance: str | None = None) -> list[dict[str, Any]]:
        sql = ("SELECT s.*, (SELECT COUNT(*) FROM deliveries d WHERE d.subscription_id = s.id AND d.state = 'pending') "
               "AS pending, (SELECT MIN(next_attempt_at) FROM deliveries d WHERE d.subscription_id = s.id "
               "AND d.state = 'pending') AS next_attempt_at, (SELECT COUNT(*) FROM deliveries d WHERE "
               "d.subscription_id = s.id AND d.state = 'delivered') AS delivered FROM subscriptions s")
        here, params = self._here("s.")
        by_instance = " AND s.instance = ?" if instance else ""
        rows = self.storage.query(f"{sql} WHERE {here}{by_instance} ORDER BY s.id",
                                  (*params, instance) if instance else params)
        for row in rows:
            row["events"] = json.loads(row["events"])
        return rows

    def subscription(self, sub_id: str) -> dict[str, Any] | None:
        rows = [s for s in self.subscriptions() if s["id"] == sub_id]
        return rows[0] if rows else None

    def next_due_at(self) -> float | None:
        """When the current environment's next pending delivery is due (another environment's wait)."""
        here, params = self._here("s.")
        row = self.storage.query_one("SELECT MIN(MAX(d.next_attempt_at, d.lease_until)) AS at FROM deliveries d "
                                     "JOIN subscriptions s ON s.id = d.subscription_id "
                                     f"WHERE d.state = 'pending' AND {here}", params)
        return row["at"] if row else None

    def claim_due(self, now: float, limit: int, lease_s: float = 120.0) -> list[Due]:
        """Take up to `limit` due deliveries for this worker; a lease keeps another process off them,
        and expires by itself if this process dies mid-attempt, so the delivery is tried again. Only the
        current environment's: another environment's wait until it is chosen again."""
        here, params = self._here("s.")
        with self.storage.write() as conn:
            rows = conn.execute(
                "SELECT d.id, d.subscription_id, s.url, d.attempts, e.payload, e.timestamp FROM deliveries d "
                "JOIN subscriptions s ON s.id = d.subscription_id JOIN webhook_events e ON e.seq = d.event_seq "
                f"WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND d.lease_until <= ? AND {here} "
                "ORDER BY d.next_attempt_at LIMIT ?", (now, now, *params, limit)).fetchall()
            conn.executemany("UPDATE deliveries SET lease_until = ? WHERE id = ?", [(now + lease_s, r[0]) for r in rows])
        return [Due(*row) for row in rows]

    def record_outcomes(self, outcomes: list[tuple[Due, int | None, str | None, str, float | None]],
                        now: float) -> None:
        """Each outcome: (delivery, HTTP status or None, error, new state, next attempt time)."""
        with self.storage.write() as conn:
            for due, status, error, state, next_at in outcomes:
                conn.execute("UPDATE deliveries SET state = ?, attempts = attempts + 1, last_status = ?, last_error = ?, "
                             "last_attempt_at = ?, next_attempt_at = COALESCE(?, next_attempt_at), lease_until = 0 "
                             "WHERE id = ?", (state, status, error, now, next_at, due.id))
                sub_state = {DELIVERY_DONE: SUB_ACTIVE, DELIVERY_FAILED: SUB_FAILING}.get(state)
                if status == 410:
                    sub_state = SUB_DISABLED
                    conn.execute("UPDATE deliveries SET state = ? WHERE subscription_id = ? AND state = 'pending'",
                                 (DELIVERY_CANCELLED, due.subscription_id))
                conn.execute("UPDATE subscriptions SET last_attempt_at = ?, last_status = ?, last_error = ?, "
                             "state = CASE WHEN state = 'disabled' THEN state ELSE COALESCE(?, state) END "
                             "WHERE id = ?", (now, status, error, sub_state, due.subscription_id))

    def resend(self, sub_id: str, now: float) -> int:
        """«Reenviar»: failed deliveries and waiting ones are due now again; the subscription is active again."""
        with self.storage.write() as conn:
            conn.execute("UPDATE subscriptions SET state = 'active' WHERE id = ?", (sub_id,))
            return conn.execute("UPDATE deliveries SET state = 'pending', next_attempt_at = ?, lease_until = 0 "
                                "WHERE subscription_id = ? AND state IN ('pending', 'failed', 'cancelled')",
                                (now, sub_id)).rowcount

    def deliveries(self, sub_id: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT * FROM deliveries" + (" WHERE subscription_id = ?" if sub_id else "") + " ORDER BY id"
        return self.storage.query(sql, (sub_id,) if sub_id else ())
