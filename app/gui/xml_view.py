"""A read-only XML viewer: indented for reading, with tags, attributes and values in colour.

Only what is shown is indented; the stored and exported bytes stay exactly as signed.
"""

from __future__ import annotations

import re

from lxml import etree
from PySide6.QtGui import QColor, QFont, QFontDatabase, QSyntaxHighlighter, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import QPlainTextEdit, QWidget

# Display only: never resolve entities or touch the network, whatever the text holds.
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, remove_blank_text=True, huge_tree=False)


def indented(text: str) -> str:
    """`text` re-indented two spaces a level, or unchanged when it is not well-formed XML."""
    if not text.lstrip().startswith("<"):
        return text
    try:
        root = etree.fromstring(text.encode("utf-8"), _PARSER)
    except (etree.XMLSyntaxError, ValueError):
        return text
    etree.indent(root, space="  ")
    declaration = '<?xml version="1.0" encoding="UTF-8"?>\n' if text.lstrip().startswith("<?xml") else ""
    return declaration + etree.tostring(root, encoding="unicode")


def _format(colour: str, bold: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(colour))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    return fmt


class XmlHighlighter(QSyntaxHighlighter):
    RULES = [
        (re.compile(r"</?[\w:.-]+|/?>"), _format("#1f5fa8", bold=True)),  # tags
        (re.compile(r"\s([\w:.-]+)(?==)"), _format("#8a4b08")),  # attribute names
        (re.compile(r"\"[^\"]*\"|'[^']*'"), _format("#2e7d32")),  # attribute values
        (re.compile(r"<!--.*?-->|<\?.*?\?>"), _format("#777777")),  # comments, declarations
    ]

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt's name
        for pattern, fmt in self.RULES:
            for found in pattern.finditer(text):
                start, end = found.span(1) if pattern.groups else found.span()
                self.setFormat(start, end - start, fmt)


class XmlView(QPlainTextEdit):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.highlighter = XmlHighlighter(self.document())

    def set_xml(self, text: str) -> None:
        self.setPlainText(indented(text))
