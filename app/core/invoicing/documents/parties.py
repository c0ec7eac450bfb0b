"""The parties of a sale document, pure: the issuer (a registered company, by RUC) and the customer as catalogue 06
type, number, name and address, checked against the voucher's rules (a factura's customer has a RUC; a boleta's may
go without a document up to S/ 700)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.contract import GenerarXmlRequest, Receptor
from app.core.errors import YupanaError
from app.core.invoicing import prevalidation as pv
from app.core.invoicing import ubl
from app.core.invoicing.documents.kind import CompanyOf, NameOf
from app.core.invoicing.sunat_catalogues import IDENTITY_DOCUMENTS, RUC, SIN_DOCUMENTO

if TYPE_CHECKING:  # the builder takes a profile; it never opens the store of them
    from app.core.platform.companies import Company

ANONYMOUS = "CLIENTES VARIOS"  # a boleta's customer without a document nor a name


def name_of_ruc(name_of: NameOf, ruc: str) -> str | None:
    try:
        name = name_of(ruc)
    except YupanaError:
        return None
    return (name or "").strip() or None


def issuer(company_of: CompanyOf, problems: pv.Problems, ruc: str) -> Company | None:
    problem = pv.ruc_problem(ruc)
    if problem:
        problems.add("emisor.ruc", f"El RUC «{ruc}» del campo «emisor.ruc» no es válido: {problem}.")
        return None
    company: Company | None = company_of(ruc)
    if company is None:
        problems.add("emisor.ruc", f"No hay una empresa emisora con RUC «{ruc}» (campo «emisor.ruc»). "
                     "Regístrela con `yupana company set`.")
    return company


def customer(name_of: NameOf, request: GenerarXmlRequest, problems: pv.Problems, exportacion: bool | None,
             boleta: bool) -> ubl.Party:
    """The customer as catalogue 06 type, number, name and address, checked against the voucher type (`boleta`: a
    boleta's rules, or those of the boleta a note modifies). `exportacion`: True (a customer without RUC), False
    (with RUC on a factura), None (either: an export of services SUNAT accepts to a domiciled customer)."""
    party = customer_identity(name_of, request.receptor, problems, exportacion, boleta)
    direccion = request.receptor.direccion
    if direccion:
        pv.check_address(problems, "receptor.direccion", direccion)
        party.direccion = direccion
    return party


def customer_identity(name_of: NameOf, receptor: Receptor, problems: pv.Problems, exportacion: bool | None,
                      boleta: bool) -> ubl.Party:
    """The customer as catalogue 06 type, number and name, checked against the voucher type."""
    pv.check_characters(problems, "receptor.razon_social", receptor.razon_social)
    pv.check_characters(problems, "receptor.numero_documento", receptor.numero_documento)
    pv.check_characters(problems, "receptor.ruc", receptor.ruc)
    tipo_doc = receptor.tipo_documento or (RUC if receptor.ruc else None)
    numero = receptor.ruc if tipo_doc == RUC and receptor.ruc else (receptor.numero_documento or "")
    name = receptor.razon_social or ""
    if name:
        pv.check_customer_name(problems, "receptor.razon_social", name)
    if tipo_doc is None:
        return _without_document(problems, name, boleta)
    if tipo_doc not in IDENTITY_DOCUMENTS:
        problems.add("receptor.tipo_documento", f"El tipo de documento «{tipo_doc}» del campo "
                     "«receptor.tipo_documento» no es válido: use 1 (DNI), 4 (CE), 6 (RUC), 7 (pasaporte), "
                     "A (cédula diplomática) o 0 (sin documento).", "2800")
        return ubl.Party(SIN_DOCUMENTO, "-", name or "-")
    if not boleta and exportacion is not None and (tipo_doc != RUC) != exportacion:
        detail = ("una exportación se emite a un cliente no domiciliado (sin RUC)" if exportacion
                  else "una factura y sus notas se emiten a un RUC (tipo 6)")
        problems.add("receptor.tipo_documento", f"El campo «receptor.tipo_documento» no es válido: {detail}.", "2800")
    if tipo_doc == RUC:
        return _with_ruc(name_of, receptor, problems, numero, name)
    return _with_document(problems, tipo_doc, numero, name, boleta)


def _without_document(problems: pv.Problems, name: str, boleta: bool) -> ubl.Party:
    """A customer with neither a document type nor a RUC: a boleta's anonymous customer; a factura's is refused."""
    if not boleta:
        problems.add("receptor.ruc", "El campo «receptor.ruc» es obligatorio en una factura y sus notas.", "2014")
        return ubl.Party(RUC, "-", name or "-")
    return ubl.Party(SIN_DOCUMENTO, "-", name or ANONYMOUS)


def _with_ruc(name_of: NameOf, receptor: Receptor, problems: pv.Problems, numero: str, name: str) -> ubl.Party:
    """A customer with a RUC: checked, and named by the lookups when the request has no name."""
    pv.check_customer_ruc(problems, numero, "receptor.ruc" if receptor.ruc else "receptor.numero_documento")
    if not name and not problems.details:
        name = name_of_ruc(name_of, numero) or ""
        if not name:
            problems.add("receptor.razon_social", f"No se pudo obtener la razón social del RUC «{numero}»: "
                         "indique el campo «receptor.razon_social».", "2021")
    return ubl.Party(RUC, numero, name or "-")


def _with_document(problems: pv.Problems, tipo_doc: str, numero: str, name: str, boleta: bool) -> ubl.Party:
    """A customer with a DNI, a carnet de extranjería, a passport, a diplomatic card or no document (0)."""
    if tipo_doc == SIN_DOCUMENTO:
        numero = numero or "-"
    elif not numero:
        problems.add("receptor.numero_documento", "El campo «receptor.numero_documento» es obligatorio para el "
                     f"tipo de documento {tipo_doc}.", "2014")
    pv.check_identity(problems, tipo_doc, numero, boleta)
    if not name:
        if tipo_doc == SIN_DOCUMENTO:
            name = ANONYMOUS
        else:
            problems.add("receptor.razon_social", "El campo «receptor.razon_social» (nombre del cliente) es "
                         f"obligatorio para el tipo de documento {tipo_doc}.", "2021")
    return ubl.Party(tipo_doc, numero or "-", name or "-")

