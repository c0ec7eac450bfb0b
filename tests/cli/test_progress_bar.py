"""The command line's progress (app/commands/padron.ProgressBar, used by `yupana padron import` and `yupana lote`):
redrawn in place on a terminal and taken off it before a result line is printed; whole lines anywhere else, so a
log or a pipe never gets a line without its end (issue 32: the lote's progress line ended without a newline)."""

from __future__ import annotations

import io

from app.commands.padron import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_off_a_terminal_every_progress_line_is_whole():
    stream = io.StringIO()
    bar = ProgressBar(stream, every_s=0, amount=lambda done: f"{done} comprobantes")
    for done in range(1, 4):
        bar(done, 3)
    bar.finish()
    lines = stream.getvalue().split("\n")
    assert lines[-1] == "" and "\r" not in stream.getvalue()  # ends with its newline, nothing drawn in place
    assert len(lines) == 4 and all(f"  {n} comprobantes  " in line for n, line in zip((1, 2, 3), lines, strict=False))


def test_on_a_terminal_the_bar_is_cleared_before_a_result_and_ended_at_the_finish():
    stream = Terminal()
    bar = ProgressBar(stream, every_s=0)
    bar(1, 2)
    drawn = stream.getvalue()
    assert drawn.startswith("\r[") and "\n" not in drawn
    bar.clear()
    cleared = stream.getvalue()[len(drawn):]
    assert cleared == "\r" + " " * (len(drawn) - 1) + "\r"  # the line blanked, the cursor back at its start
    stream.write('{"numero": 1}\n')  # what lote prints on stdout, on the same terminal
    bar(2, 2)
    bar.finish()
    assert stream.getvalue().endswith("\n") and stream.getvalue().count("\r[") == 2


def test_a_finish_with_nothing_drawn_in_place_adds_no_empty_line():
    stream = Terminal()
    ProgressBar(stream).finish()
    assert stream.getvalue() == ""
