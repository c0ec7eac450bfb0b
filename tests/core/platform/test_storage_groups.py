"""The unit of work's group commit (Storage.group), on each engine (SQLite and PostgreSQL: `engine_database`):
several independent requests in one durable commit, each failing alone — a failing request leaves nothing behind and
the others are committed together."""

from __future__ import annotations

import pytest


class Refused(Exception):
    pass


def _commits(storage) -> int | None:
    """SQLite's count of this process's commits (PostgreSQL's server keeps no such count per client)."""
    checkpointer = getattr(storage, "_checkpointer", None)
    return None if checkpointer is None else checkpointer.commits


def test_a_failing_request_is_rolled_back_alone_and_the_others_commit_together(engine_database):
    storage = engine_database
    commits_before = _commits(storage)
    with storage.group(durable=True) as group:
        for key in ("a", "b", "c"):
            try:
                with group.each():
                    with storage.write() as conn:  # a repository's own write joins the group's transaction
                        conn.execute("INSERT INTO settings (key, value) VALUES (?, ?)", (key, "1"))
                        if key == "b":
                            conn.execute("INSERT INTO settings (key, value) VALUES ('b2', 'half written')")
                            raise Refused(key)
            except Refused:
                pass
    assert group.failed == 1
    if commits_before is not None:
        assert _commits(storage) == commits_before + 1  # one commit for the three requests
    rows = {r["key"]: r["value"] for r in storage.query("SELECT key, value FROM settings")}
    assert rows == {"a": "1", "c": "1"}  # nothing of «b», not even its first write


def test_an_error_outside_any_request_rolls_the_whole_group_back(engine_database):
    storage = engine_database
    with pytest.raises(RuntimeError):
        with storage.group() as group:
            with group.each():
                with storage.write() as conn:
                    conn.execute("INSERT INTO settings (key, value) VALUES ('a', '1')")
            raise RuntimeError("the disk is gone")
    assert storage.query("SELECT key FROM settings") == []
