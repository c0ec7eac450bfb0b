"""SUNAT's rule sheets as the sandbox applies them, through Yupana's sheet runner (app.core.invoicing.sunat_rules)."""

from __future__ import annotations

from app.core.sandbox_kit import sunat_errors, sunat_rules


def run(rules_dir: str, xml: bytes, file_name: str) -> tuple[tuple[str, str] | None, list[tuple[str, str]]]:
    """(rejection (code, catalogue text) or None, observations [(code, catalogue text)]) for one voucher."""
    verdict = sunat_rules.check(rules_dir, xml, file_name)
    observations = [(code, sunat_errors.describe(code, rules_dir)) for code in verdict.observations]
    if verdict.rejection is None:
        return None, observations
    return (verdict.rejection, sunat_errors.describe(verdict.rejection, rules_dir)), observations
