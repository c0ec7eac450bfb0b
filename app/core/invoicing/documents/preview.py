"""The totals' preview (issue 29): what a voucher will amount to, computed by its type's builder from the request
as it stands — while a person is still typing it. The voucher form's totals panel shows this, so the windows never
repeat the builder's arithmetic (docs/architecture.md, «The totals' preview»).

Here: the answer (`TotalsPreview`, one `LineAmounts` per item) and the reading of a request that may be partial
(`read_partial`): an item that does not read as the contract's `Item` (a quantity that is not a number, a missing
one) has no amounts and says why, the other items still count. What the amounts are is the builder's:
app.core.invoicing.documents.sale.preview runs the same functions `sale.build` runs (lines, totals, detracción).
Pure: no storage, no issuer (the amounts do not depend on who issues).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from app.core.contract import GenerarXmlRequest, Item, parse_model, translate_validation_error
from app.core.errors import ErrorDetail

# A partial request's fields that bear on its amounts; the rest (customer, numbering, references, payment terms) is
# not read. Stand-ins fill the required fields that do not.
AMOUNT_FIELDS = ("tipo", "fecha_emision", "moneda", "codigo_motivo", "descuento_global", "detraccion", "tipo_cambio",
                 "anticipos", "percepcion", "retencion")
STAND_INS: dict[str, Any] = {"serie": "-", "numero": 1, "emisor": {"ruc": "-"}}


@dataclass(frozen=True)
class LineAmounts:
    """One item's line as the builder computes it."""

    valor_venta: Decimal  # cantidad × valor unitario, rounded, after the line's discount; a free line's reference value
    igv: Decimal  # a free line's too: stated, never charged
    icbper: Decimal  # the bags' tax (0.00 when the line has none)
    descuento: Decimal  # the line's discount, without IGV
    gratuita: bool  # a free transfer (catalogue 07 11-16, 21, 31-37): nothing is charged


@dataclass(frozen=True)
class TotalsPreview:
    """What a voucher amounts to, in its currency (the detracción in soles). `lines` has one entry per item of the
    request, in order: None when that item's amounts cannot be computed yet; `problems` says why, and anything else
    the builder found on the way (a global discount it would refuse is not applied, and said). A request without
    problems is built with exactly these amounts."""

    moneda: str
    gravadas: Decimal  # the gravado base, after the global discount
    exoneradas: Decimal
    inafectas: Decimal
    exportacion: Decimal
    gratuitas: Decimal  # the free lines' reference value: stated, not charged
    descuentos: Decimal  # the lines' discounts and the global one applied, without IGV
    descuento_global: Decimal  # the global discount applied (0.00: none)
    igv: Decimal  # charged: the free lines' is not
    icbper: Decimal
    total: Decimal  # the payable amount
    detraccion: Decimal | None  # in soles; None: no detracción asked, or its rate or exchange rate not known yet
    lines: tuple[LineAmounts | None, ...]
    problems: tuple[ErrorDetail, ...]
    anticipos: Decimal = Decimal("0.00")  # the advances deducted (cbc:PrepaidAmount, with IGV)
    percepcion: Decimal | None = None  # in soles; None: no percepción asked, or not computable yet
    total_con_percepcion: Decimal | None = None  # in soles: what the customer pays with the percepción
    retencion: Decimal | None = None  # the IGV the customer (a retention agent) will retain

    @property
    def complete(self) -> bool:
        """Whether every line was computed and nothing was found wrong with the amounts."""
        return not self.problems and all(line is not None for line in self.lines)


def read_partial(payload: Any) -> tuple[GenerarXmlRequest, list[Item | None], list[ErrorDetail]]:
    """(the request, its items with None where an item cannot be read, the problems of what could not be read) of
    a request that may be partial. A field that bears on the amounts and does not read is left out (and said); a
    request without a readable `tipo` is refused with the contract's 400, as the builder refuses it."""
    if isinstance(payload, GenerarXmlRequest):
        return payload, list(payload.items), []
    if not isinstance(payload, dict):
        parse_model(GenerarXmlRequest, payload)  # raises the contract's answer to a request that is not an object
    raw_items = payload.get("items")
    fields = {**STAND_INS, **{name: payload[name] for name in AMOUNT_FIELDS if name in payload},
              "items": raw_items if raw_items is not None else []}
    try:
        request = GenerarXmlRequest.model_validate(fields)
    except ValidationError as exc:
        return _read_leaving_out(fields, exc)
    return request, list(request.items), []


def _read_leaving_out(fields: dict[str, Any], exc: ValidationError
                      ) -> tuple[GenerarXmlRequest, list[Item | None], list[ErrorDetail]]:
    """The request without the fields and items that did not read, and what each of them was."""
    problems = list(translate_validation_error(exc).details)
    bad_fields, bad_items = set(), set()
    for err in exc.errors():
        loc = err["loc"]
        if loc and loc[0] == "items" and len(loc) > 1 and isinstance(loc[1], int):
            bad_items.add(loc[1])
        elif loc:
            bad_fields.add(loc[0])
    if "tipo" in bad_fields:
        raise translate_validation_error(exc) from None
    raw_items = [] if "items" in bad_fields else fields["items"]
    kept = {name: value for name, value in fields.items() if name not in bad_fields}
    request = GenerarXmlRequest.model_validate({**kept, "items": [
        item for index, item in enumerate(raw_items) if index not in bad_items]})
    readable = iter(request.items)
    items = [None if index in bad_items else next(readable) for index in range(len(raw_items))]
    return request, items, problems
