"""The XML and CDR tabs: indented and coloured for reading; nothing expanded, nothing changed."""

from __future__ import annotations


def test_xml_is_indented_for_reading_and_left_alone_when_not_xml():
    from app.gui.xml_view import indented

    assert indented('<?xml version="1.0"?><a><b x="1">t</b></a>') == \
        '<?xml version="1.0" encoding="UTF-8"?>\n<a>\n  <b x="1">t</b>\n</a>'
    assert indented("Todavía no hay respuesta") == "Todavía no hay respuesta"
    assert indented("<a><b></a>") == "<a><b></a>"  # not well-formed: shown as it is
    bomb = '<!DOCTYPE a [<!ENTITY x "yyyy">]><a>&x;&x;</a>'
    assert "yyyy" not in indented(bomb)  # entities are never expanded, even to display
