"""What credit and debit notes share: the voucher they modify (a factura or a boleta, whose series letter and
customer rules they take), their reason (catalogue 09 or 10) and what reasons 11 (exports) and 13 (instalments) ask
of their lines. credit_note.py and debit_note.py are the two types."""

from __future__ import annotations

import re
from decimal import Decimal

from app.core.contract import DocumentoReferencia, GenerarXmlRequest
from app.core.invoicing import prevalidation as pv
from app.core.invoicing import ubl
from app.core.invoicing.documents import invoice, sale
from app.core.invoicing.documents.kind import Numbering
from app.core.invoicing.sunat_catalogues import (
    BOLETA,
    EXPORT_REASON,
    EXPORTACION,
    FACTURA,
    INSTALMENTS_REASON,
    IVAP,
    IVAP_REASON,
)

# The vouchers a note modifies, by type: their series letter.
MODIFIED_LETTERS = {rules.code: rules.letter for rules in (invoice.FacturaRules(), invoice.BoletaRules())}


# The reasons whose lines are all of one affectation: (the affectation, what the reason adjusts, SUNAT's code).
LINES_OF_REASON = {EXPORT_REASON: (EXPORTACION, "una operación de exportación", "3107"),
                   IVAP_REASON: (IVAP, "una operación afecta al IVAP", "2172")}


def numbering(example: str) -> Numbering:
    """A note's series: F or B (the letter of the voucher it modifies) and three letters or digits, or four digits
    (contingency)."""
    return Numbering(re.compile(r"^([FB][A-Z0-9]{3}|[0-9]{4})$"), example)


class NoteRules(sale.SaleRules):
    """A note: no operation type, global discount nor detracción of its own; its serie's letter and its customer's
    rules are those of the voucher it modifies."""

    takes_operation_type = False
    takes_global_discount = False
    reasons: dict[str, str]  # the catalogue's reasons Yupana issues, with the description a note gets by default
    catalogue: str  # «09» or «10», for messages
    reference_type_error: str  # SUNAT's code for a modified voucher of another type
    reference_number_error: str  # SUNAT's code for a modified voucher's serie-número that is not one

    def reference(self, request: GenerarXmlRequest, problems: pv.Problems
                  ) -> tuple[sale.Reference | None, sale.Reason | None, str | None]:
        ref = request.documento_referencia
        letter, reference = self._modified(problems, ref)
        return reference, self._reason(request, problems, ref), letter

    def _modified(self, problems: pv.Problems, ref: DocumentoReferencia | None
                  ) -> tuple[str | None, sale.Reference | None]:
        """(the serie's letter, the reference) of the voucher the note modifies."""
        if ref is None:
            problems.add("documento_referencia", "El campo «documento_referencia» (comprobante que modifica la nota) "
                         "es obligatorio.", "2128")
            return None, None
        letter = MODIFIED_LETTERS.get(ref.tipo)
        if letter is None:
            problems.add("documento_referencia.tipo", "El campo «documento_referencia.tipo» debe ser 01 (factura) o "
                         "03 (boleta).", self.reference_type_error)
            return None, None
        if not (pv.modifiable_serie(ref.serie, letter) and 1 <= ref.numero <= pv.MAX_NUMERO):
            problems.add("documento_referencia.serie", f"«documento_referencia» ({ref.serie}-{ref.numero}) no es "
                         f"una serie-número válida de tipo {ref.tipo}: serie {letter}001, o de 1 a 4 dígitos para un "
                         "comprobante impreso o de contingencia (0001), y número de 1 a 8 dígitos.",
                         self.reference_number_error)
        return letter, (ref.tipo, f"{ref.serie}-{ref.numero}")

    def _reason(self, request: GenerarXmlRequest, problems: pv.Problems, ref: DocumentoReferencia | None
                ) -> sale.Reason | None:
        """(code, description) of the note's reason, checked against its catalogue."""
        code = request.codigo_motivo
        if code not in self.reasons:
            problems.add("codigo_motivo", f"El campo «codigo_motivo» debe ser un código del catálogo {self.catalogue}: "
                         f"{', '.join(self.reasons)}.", "2172")
            if not code:
                return None
        if code == INSTALMENTS_REASON and ref is not None and ref.tipo != FACTURA:
            problems.add("documento_referencia.tipo", f"El campo «documento_referencia.tipo» ({ref.tipo}) debe ser 01: "
                         "una nota de crédito de motivo 13 (ajuste de montos y/o fechas de pago) solo modifica una "
                         "factura.", "3259")
        assert code  # a reason in the catalogue, or one refused above
        description = request.descripcion_motivo or self.reasons.get(code, "-")
        pv.check_text(problems, "descripcion_motivo", description, pv.MAX_REASON, "2135")
        if "\n" in description or "\r" in description:
            problems.add("descripcion_motivo", "El campo «descripcion_motivo» debe ser una sola línea.", "2135")
        return code, description

    def boleta_customer(self, request: GenerarXmlRequest) -> bool:
        ref = request.documento_referencia
        return ref is not None and ref.tipo == BOLETA

    def check_lines(self, request: GenerarXmlRequest, problems: pv.Problems, lines: list[ubl.Line],
                    total: Decimal) -> None:
        """Reason 11 adjusts an export: every line of affectation 40 (SUNAT's 3107); reason 12 adjusts IVAP lines:
        every line of affectation 17."""
        wanted = LINES_OF_REASON.get(request.codigo_motivo or "")
        if wanted is None:
            return
        afectacion, what, code = wanted
        index = next((i for i, line in enumerate(lines) if line.afectacion != afectacion), None)
        if index is not None:
            problems.add(f"items[{index}].tipo_afectacion_igv", f"El campo «items[{index}].tipo_afectacion_igv» debe "
                         f"ser {afectacion}: el motivo {request.codigo_motivo} ajusta {what}.", code)
