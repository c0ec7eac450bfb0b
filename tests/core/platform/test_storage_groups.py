"""The unit of work's group commit (Storage.group): several independent requests in one durable commit, each
failing alone — a failing request leaves nothing behind and the others are committed together."""

from __future__ import annotations

import pytest

from app.core.storage.engines import open_database


class Refused(Exception):
    pass


def test_a_failing_request_is_rolled_back_alone_and_the_others_commit_together(tmp_path):
    storage = open_database(tmp_path / "yupana.db")
    try:
        commits_before = storage._checkpointer.commits
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
        assert storage._checkpointer.commits == commits_before + 1  # one commit for the three requests
        rows = {r["key"]: r["value"] for r in storage.query("SELECT key, value FROM settings")}
        assert rows == {"a": "1", "c": "1"}  # nothing of «b», not even its first write
    finally:
        storage.close()


def test_an_error_outside_any_request_rolls_the_whole_group_back(tmp_path):
    storage = open_database(tmp_path / "yupana.db")
    try:
        with pytest.raises(RuntimeError):
            with storage.group() as group:
                with group.each():
                    with storage.write() as conn:
                        conn.execute("INSERT INTO settings (key, value) VALUES ('a', '1')")
                raise RuntimeError("the disk is gone")
        assert storage.query("SELECT key FROM settings") == []
    finally:
        storage.close()
