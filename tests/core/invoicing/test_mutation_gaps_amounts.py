"""Amounts: rounding, plain text and the legend in words, exactly; found by `make mutation`."""

from __future__ import annotations

from decimal import Decimal

import pytest

from app.core.invoicing.amounts import amount_in_words, integer_words, money, plain


@pytest.mark.parametrize(("value", "text"), [
    ("1.500", "1.5"), ("100", "100"), ("1E+2", "100"), ("0.000", "0"), ("10.0", "10"), ("0E-7", "0"),
    ("-1.50", "-1.5"), ("1.05", "1.05"), ("0.10", "0.1"), ("120.00", "120"), ("1E-7", "0.0000001"), ("0", "0")])
def test_plain(value, text):
    assert plain(Decimal(value)) == text


@pytest.mark.parametrize(("number", "words"), [
    (29, "VEINTINUEVE"), (30, "TREINTA"), (31, "TREINTA Y UNO"), (40, "CUARENTA"), (45, "CUARENTA Y CINCO"),
    (99, "NOVENTA Y NUEVE"), (100, "CIEN"), (101, "CIENTO UNO"), (110, "CIENTO DIEZ"), (121, "CIENTO VEINTIUNO"),
    (200, "DOSCIENTOS"), (999, "NOVECIENTOS NOVENTA Y NUEVE"), (1000, "UN MIL"), (2000, "DOS MIL"),
    (21000, "VEINTIÚN MIL"), (31000, "TREINTA Y UN MIL"), (101000, "CIENTO UN MIL"), (121000, "CIENTO VEINTIÚN MIL"),
    (100000, "CIEN MIL"), (999999, "NOVECIENTOS NOVENTA Y NUEVE MIL NOVECIENTOS NOVENTA Y NUEVE"),
    (1000000, "UN MILLÓN"), (1000001, "UN MILLÓN UNO"), (1001000, "UN MILLÓN UN MIL"), (2000000, "DOS MILLONES"),
    (21000000, "VEINTIÚN MILLONES"), (31000000, "TREINTA Y UN MILLONES"),
    (1000000000, "UN MIL MILLONES"), (2500000, "DOS MILLONES QUINIENTOS MIL")])
def test_integer_words(number, words):
    assert integer_words(number) == words


def test_negative_numbers_have_no_words():
    with pytest.raises(ValueError, match="negative amount"):
        integer_words(-1)


@pytest.mark.parametrize(("total", "currency", "legend"), [
    ("118", "PEN", "CIENTO DIECIOCHO CON 00/100 SOLES"),
    ("0.30", "PEN", "CERO CON 30/100 SOLES"),
    ("1.005", "PEN", "UNO CON 01/100 SOLES"),  # rounded half-up first
    ("21.99", "USD", "VEINTIUNO CON 99/100 DÓLARES AMERICANOS"),
    ("1000.5", "EUR", "UN MIL CON 50/100 EUR"),
    ("0.09", "PEN", "CERO CON 09/100 SOLES"),
])
def test_amount_in_words(total, currency, legend):
    assert amount_in_words(Decimal(total), currency) == legend


def test_amount_in_words_defaults_to_soles():
    assert amount_in_words(Decimal("2")) == "DOS CON 00/100 SOLES"


def test_money_keeps_the_sign_and_two_places():
    assert str(money(Decimal("-0.005"))) == "-0.01"
    assert str(money(Decimal("3"))) == "3.00"
