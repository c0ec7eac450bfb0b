"""Issue 35 on several desks: the backup folder's files are written by the desk holding the backups' turn
(app/core/invoicing/backup_files.py); a desk without it keeps the ids it heard for a bounded time, so the desk that
takes the turn over writes what the holder may not have written; a holder whose folder stays unreachable lets the
turn go. Here the keeping and the letting go alone, on a real turn (a folder's own database) and a clock the test
moves; two desks on one PostgreSQL in test_backup_desks.py."""

from __future__ import annotations

from app.core.invoicing import backup_files
from app.core.invoicing.backup_files import KEEP_S, VoucherFileWriter
from app.core.platform.processes import owner_of_this_process
from app.core.platform.turns import LOOK_AGAIN_S, DeskTurn
from app.core.storage.engines import open_database, repositories


def test_a_desk_without_the_turn_keeps_what_it_heard_for_a_bounded_time_and_writes_it_once_it_has_the_turn(
        tmp_path, monkeypatch):
    storage = open_database(tmp_path / "yupana.db")
    try:
        turns = repositories(storage).desk_turns
        holder = DeskTurn(turns, "backups", owner=owner_of_this_process("caja1"))  # a live desk of this process
        assert holder.mine()
        now = [1000.0]
        asked: list[int] = []  # the ids the writer went to write (an unsigned voucher: nothing to put in the folder)
        folder = tmp_path / "usb"
        folder.mkdir()
        writer = VoucherFileWriter(lambda: str(folder), lambda voucher_id: asked.append(voucher_id), lambda _id: None,
                                   turn=DeskTurn(turns, "backups", owner=owner_of_this_process("caja2")),
                                   monotonic=lambda: now[0])
        writer.loop.stop()  # its rounds run here, in order

        writer.changed([1, 2])
        assert writer._round() == LOOK_AGAIN_S and not writer.holding()  # another desk's turn: kept, looked again
        now[0] += KEEP_S / 2
        writer.changed([3, 1])  # 1 heard again: kept from now
        assert writer._round() == LOOK_AGAIN_S and writer.pending() == 3 and asked == []
        now[0] += KEEP_S / 2 + 1
        assert writer._round() == LOOK_AGAIN_S and writer.pending() == 2  # 2 dropped: heard more than KEEP_S ago
        now[0] += 1  # within LOOK_AGAIN_S of the last look: the turn is not asked again
        holder.give_up()
        assert writer._round() == LOOK_AGAIN_S - 1 and not writer.holding()

        monkeypatch.setattr(backup_files, "KEEP_MOST", 3)
        writer.changed([4, 5, 6])
        assert writer._round() == LOOK_AGAIN_S - 1 and writer.pending() == 3  # the oldest (3, 1) dropped first

        now[0] += LOOK_AGAIN_S  # the holder left: the next look takes the turn, and what was kept is written
        assert writer._round() == backup_files.RENEW_S and writer.holding()
        assert asked == [4, 5, 6] and writer.pending() == 0
        assert turns.current("backups") == (writer.turn.owner, True)
        assert not holder.mine()  # the turn is the writer's now
    finally:
        storage.close()


def test_a_desk_whose_folder_is_cleared_gives_the_turn_up_for_a_desk_with_a_folder(tmp_path):
    storage = open_database(tmp_path / "yupana.db")
    try:
        turns = repositories(storage).desk_turns
        folder = [str(tmp_path)]
        writer = VoucherFileWriter(lambda: folder[0], lambda _id: None, lambda _id: None,
                                   turn=DeskTurn(turns, "backups", owner=owner_of_this_process("caja1")))
        writer.loop.stop()  # its rounds run here
        assert writer._round() == backup_files.RENEW_S and writer.holding()  # a folder: the turn taken, renewed
        folder[0] = ""
        writer.changed([1])  # heard with no folder: nothing to keep
        assert writer._round() is None and not writer.holding() and writer.pending() == 0
        assert turns.current("backups") is None  # free: the next desk with a folder takes it at once
    finally:
        storage.close()


def test_a_holder_whose_folder_stays_unreachable_lets_the_turn_go_and_writes_its_own_ids_when_the_folder_is_back(
        tmp_path):
    storage = open_database(tmp_path / "yupana.db")
    try:
        turns = repositories(storage).desk_turns
        other = DeskTurn(turns, "backups", owner=owner_of_this_process("caja2"))  # a live desk with a reachable folder
        now = [1000.0]
        asked: list[int] = []
        usb = tmp_path / "usb"  # pulled out: never made yet
        writer = VoucherFileWriter(lambda: str(usb), lambda voucher_id: asked.append(voucher_id), lambda _id: None,
                                   turn=DeskTurn(turns, "backups", owner=owner_of_this_process("caja1")),
                                   monotonic=lambda: now[0])
        writer.loop.stop()  # its rounds run here, in order

        assert writer._round() == backup_files.RETRY_S and writer.holding()  # the turn taken, the folder missing
        writer.changed([1, 2])
        now[0] += backup_files.RETRY_S
        assert writer._round() == backup_files.RETRY_S and writer.holding()  # not yet: a USB drive pushed back in
        assert not other.mine()
        now[0] = 1000.0 + backup_files.UNREACHABLE_S
        assert writer._round() == backup_files.RETRY_S and not writer.holding()  # unreachable long enough: let go
        assert turns.current("backups") is None and other.mine()  # a desk that can write takes it at once

        writer.changed([3])
        now[0] += 10 * KEEP_S  # its own ids are kept, however long the folder is away (as on a single desk)
        assert writer._round() == backup_files.RETRY_S and writer.pending() == 3 and not writer.holding()
        assert turns.current("backups") == (other.owner, True) and asked == []  # the turn not taken back

        usb.mkdir()  # plugged in again: its own ids written into its folder, then it competes for the turn again
        assert writer._round() == 0 and asked == [1, 2, 3] and writer.pending() == 0
        assert writer._round() == backup_files.RENEW_S and not writer.holding()  # the other desk still holds it
        other.give_up()
        now[0] += LOOK_AGAIN_S
        assert writer._round() == backup_files.RENEW_S and writer.holding()
    finally:
        storage.close()
