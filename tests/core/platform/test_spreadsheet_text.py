"""The one rule for text a spreadsheet must show as text (app.core.platform.spreadsheet_text, issue 35)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.core.platform.spreadsheet_text import guarded, looks_like_formula, unguarded


def test_each_formula_start_is_guarded_and_plain_text_is_not():
    for start in ("=", "+", "-", "@", "\t", "\r"):
        assert guarded(start + "SUM(A1:A9)") == "'" + start + "SUM(A1:A9)"
    for plain in ("Bodega Ñuñoa", "O'Higgins", "'quoted", "", "1=1", " =x"):
        assert guarded(plain) == plain and not looks_like_formula(plain)
    assert guarded("'=x") == "''=x" and unguarded("''=x") == "'=x" and unguarded("'quoted") == "'quoted"


@given(st.text(alphabet=st.sampled_from(["'", "=", "+", "-", "@", "\t", "\r", "a", " ", "Ñ"]), max_size=8))
def test_unguarded_gives_back_what_guarded_was_given(text):
    assert unguarded(guarded(text)) == text
    assert not guarded(text).startswith(("=", "+", "-", "@", "\t", "\r"))
