"""Phone numbers: checked and normalised to E.164 (`+51987654321`) before anything is sent.

Peruvian numbers must be mobiles (WhatsApp lives on mobiles): +51 and 9 digits starting with 9.
Other countries are checked by their country code's national length where we know it, otherwise
by E.164's general bounds.
"""

from __future__ import annotations

import re

from app.core.errors import invalid

# country code → allowed national number lengths (the countries a Peruvian shop writes to most).
NATIONAL_LENGTHS: dict[str, tuple[int, ...]] = {
    "1": (10,), "34": (9,), "52": (10,), "54": (10, 11), "55": (10, 11), "56": (9,), "57": (10,),
    "58": (10,), "591": (8,), "593": (9,), "595": (9,), "598": (8,), "506": (8,), "507": (8,),
    "39": (9, 10), "33": (9,), "49": (10, 11), "44": (10,), "86": (11,), "81": (10,),
}
PERU = "51"
_SEPARATORS = re.compile(r"[\s\-().]")


def normalise(raw: str, field: str = "to") -> str:
    """`+51 987 654 321` → `+51987654321`; a Spanish 400 naming what was typed when it is not valid."""
    typed = (raw or "").strip()
    text = _SEPARATORS.sub("", typed)
    if text.startswith("00"):
        text = "+" + text[2:]
    if not text.startswith("+") or not text[1:].isdigit():
        raise invalid(field, f"El número «{typed}» debe escribirse con código de país y signo +, "
                             "p. ej. +51987654321.")
    digits = text[1:]
    if digits.startswith(PERU):
        national = digits[len(PERU):]
        if len(national) != 9 or not national.startswith("9"):
            raise invalid(field, f"El número «{typed}» no es un celular peruano: después de +51 van 9 dígitos "
                                 "que empiezan por 9.")
        return text
    for length in (3, 2, 1):
        code = digits[:length]
        if code in NATIONAL_LENGTHS:
            if len(digits) - length not in NATIONAL_LENGTHS[code]:
                expected = " u ".join(str(n) for n in NATIONAL_LENGTHS[code])
                raise invalid(field, f"El número «{typed}» no es válido: después de +{code} van {expected} dígitos.")
            return text
    if not 8 <= len(digits) <= 15 or digits.startswith("0"):
        raise invalid(field, f"El número «{typed}» no es válido: con el código de país debe tener de 8 a 15 dígitos.")
    return text


def to_jid(number: str) -> str:
    """`+51987654321` → `51987654321@s.whatsapp.net` (WhatsApp's address of a person)."""
    return number.lstrip("+") + "@s.whatsapp.net"


def from_jid(jid: str) -> str:
    """`51987654321@s.whatsapp.net` (or `…:12@…` from a linked device) → `+51987654321`."""
    user = (jid or "").split("@", 1)[0].split(":", 1)[0]
    return "+" + user if user.isdigit() else user
