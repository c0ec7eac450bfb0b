"""The GRE tickets' repository (issue 36) on each engine, SQLite and a real PostgreSQL: a guía's first ticket is kept
(a second one for the same guía does not replace it), per environment."""

from __future__ import annotations


def test_a_guia_keeps_its_first_ticket_per_environment(repos):
    tickets = repos.gre_tickets
    key = ("sandbox", "20100066603", "09", "T001", "7")
    assert tickets.find(*key) is None
    first = tickets.record(*key, "ticket-1", "a" * 64)
    assert (first.ticket, first.hash_zip) == ("ticket-1", "a" * 64)
    again = tickets.record(*key, "ticket-2", "b" * 64)  # the answer lost, the guía sent again: the first stays
    assert again == first and tickets.find(*key) == first
    other = tickets.record("produccion", *key[1:], "ticket-3", "c" * 64)
    assert other.ticket == "ticket-3" and tickets.find(*key).ticket == "ticket-1"
