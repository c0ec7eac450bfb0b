"""SUNAT's codes classified in one place: accepted, observed, rejected, an exception, held by SUNAT."""

from __future__ import annotations

import pytest

from app.core.invoicing import statuses, sunat_codes


@pytest.mark.parametrize("code,notes,expected", [
    ("0", False, "aceptado"), ("0", True, "observado"), ("0000", False, "aceptado"),
    ("4000", False, "observado"), ("4031", False, "observado"), ("4999", True, "observado"),
    ("2000", False, "rechazado"), ("2800", False, "rechazado"), ("3999", False, "rechazado"),
    ("1999", False, None), ("0100", False, None), ("0109", False, None), ("1033", False, None),
    ("", False, None), ("abc", False, None), (None, False, None),
])
def test_cdr_status_by_range(code, notes, expected):
    assert sunat_codes.cdr_status(code, notes) == expected


@pytest.mark.parametrize("code,rejection,exception,observation", [
    ("1999", False, True, False), ("2000", True, False, False), ("3999", True, False, False),
    ("4000", False, False, True), ("0102", False, True, False), ("0", False, False, False),
    (2335, True, False, False), (" 2335 ", True, False, False), ("x2335", False, False, False),
])
def test_range_edges(code, rejection, exception, observation):
    assert sunat_codes.is_rejection(code) is rejection
    assert sunat_codes.is_exception(code) is exception
    assert sunat_codes.is_observation(code) is observation


def test_a_refusal_spends_the_number_only_when_it_is_a_rejection():
    assert sunat_codes.refusal_status("2800") == statuses.RECHAZADO
    assert sunat_codes.refusal_status("0102") == statuses.NO_ENVIADO
    assert sunat_codes.refusal_status("") == statuses.NO_ENVIADO


@pytest.mark.parametrize("code,held", [("1033", True), ("1032", True), (1033, True), ("1034", False),
                                       ("2033", False), ("", False)])
def test_registered_before_means_ask_for_the_cdr(code, held):
    assert sunat_codes.is_held_by_sunat(code) is held


def test_duplicate_fault_follows_the_first_answer():
    assert sunat_codes.duplicate_fault("2800") == "1032"
    assert sunat_codes.duplicate_fault("0") == "1033"
    assert sunat_codes.duplicate_fault("4031") == "1033"


def test_every_status_has_a_label_and_a_hex_colour():
    for name in (*statuses.VOUCHER_STATUSES, statuses.NO_ENVIADO):
        status = statuses.STATUSES[name]
        assert status.label and status.label[0].isupper()
        assert len(status.colour) == 7 and status.colour.startswith("#")
        int(status.colour[1:], 16)
    assert statuses.label("observado") == "Observado"
    assert statuses.label("desconocido") == "desconocido" and statuses.colour("desconocido") == statuses.UNKNOWN_COLOUR
    assert set(statuses.CDR_STATUSES) <= set(statuses.VOUCHER_STATUSES)
    assert set(statuses.ISSUED) <= set(statuses.VOUCHER_STATUSES)
    assert statuses.SUBMISSION_PENDING in statuses.SUBMISSION_STATES
