"""SUNAT's rule sheets as the sandbox applies them (through Yupana's sheet runner when present)."""

from __future__ import annotations


def run(rules_dir: str, xml: bytes, file_name: str) -> tuple[tuple[str, str] | None, list[tuple[str, str]]]:
    """(rejection (code, text) or None, observations [(code, text)]) for one voucher."""
    return None, []
