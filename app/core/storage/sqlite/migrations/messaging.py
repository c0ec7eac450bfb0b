"""The `yupana.messaging` migrations of SQLite data folders, as they were written in app/core/messaging/store.py (moved here
unchanged: a folder records each step by this set's name and the step's, so names and order never change)."""

from __future__ import annotations

from sqlite_utils import Migrations

migrations = Migrations("yupana.messaging")


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
