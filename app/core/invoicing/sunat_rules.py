"""SUNAT's own validation sheets (the VALI folder of Facturador SUNAT), run under lxml's libxslt.

The sheets expect SUNAT's DataPower environment: data files under `local:///commons/...` and the
sent file name through `dp:variable('var://context/cpe/nombreArchivoEnviado')`. Here `local:///`
maps onto the configured folder (a missing data file reads as an empty `<l/>`), catalogue paths
are found wherever they are written, and `dp:variable` answers the current file name.
A rejection ends the sheet with a message holding `errorCode NNNN`; observations are non-fatal
messages that start with their 4xxx code. Compiled sheets are cached: compiling takes seconds.
"""

from __future__ import annotations

import codecs
import os
import re
import threading
from dataclasses import dataclass, field

from lxml import etree

from app.core.invoicing.documents import registry

DATAPOWER_NS = "http://www.datapower.com/extensions"
# Summaries (RUC-RA-YYYYMMDD-N.xml, RUC-RC-…), routed as SUNAT's cat_cpe_ose.xml does; a voucher's sheet is its
# document type's (app/core/invoicing/documents/).
SUMMARY_SHEETS = {"RA": "ValidaExprRegSummaryVoided-1.0.1.xsl", "RC": "ValidaExprRegSummary-1.1.0.xsl"}
_REJECTION = re.compile(r"errorCode\s+(\d{4})")
SFS_LAYOUT = "sunat_archivos/sfs/VALI/"
XSL = "http://www.w3.org/1999/XSL/Transform"
_EXPRESSIONS = ("select", "test", "use", "value", "count", "from")
_OBSERVATION = re.compile(r"\s*(\d{4})")

_current = threading.local()  # the file name the running transformation asks for
_cache: dict[tuple[str, str], tuple[etree.XSLT, threading.Lock]] = {}
_cache_lock = threading.Lock()


@dataclass
class Verdict:
    rejection: str | None
    message: str = ""
    observations: list[str] = field(default_factory=list)


def safe_parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


class _RulesResolver(etree.Resolver):
    def __init__(self, folder: str) -> None:
        super().__init__()
        self.folder = folder

    def resolve(self, url, pubid, context):  # noqa: ANN001 - lxml's signature
        if SFS_LAYOUT in url:  # the GRE sheets reach the shared sheets as SFS installs them
            return self.resolve_filename(os.path.join(self.folder, url.split(SFS_LAYOUT, 1)[1]), context)
        if "cpe/catalogo/" in url:
            name = url.split("cpe/catalogo/", 1)[1]
            return self.resolve_filename(os.path.join(self.folder, "commons", "cpe", "catalogo", name), context)
        if url.startswith("local:///"):
            path = os.path.join(self.folder, url[len("local:///"):])
            if os.path.exists(path):
                return self.resolve_filename(path, context)
            return self.resolve_string("<l/>", context)
        if "://" in url and not url.startswith("file:"):
            return self.resolve_string("<l/>", context)  # never the network
        return None


def _sent_file_name(_context: object, name: object) -> str:
    return getattr(_current, "file_name", "") if "nombreArchivoEnviado" in str(name) else ""


# lxml keeps one function per namespace and name for the whole process: another copy of SUNAT's runner (the
# checker the tests load) registers its own and would answer for ours, so ours is put back before each run.
_DATAPOWER = etree.FunctionNamespace(DATAPOWER_NS)


def _compiled(folder: str, sheet: str) -> tuple[etree.XSLT, threading.Lock]:
    key = (os.path.abspath(folder), sheet)
    with _cache_lock:
        if key not in _cache:
            parser = etree.XMLParser(no_network=True)
            parser.resolvers.add(_RulesResolver(key[0]))
            path = os.path.join(key[0], sheet)
            with open(path, "rb") as handle:  # the GRE remitente sheet has one Latin-1 byte (in a comment)
                raw = handle.read().decode("utf-8", "sunat_latin1").encode("utf-8")
            document = etree.fromstring(raw, parser, base_url=path).getroottree()
            _rename_redefinitions(document)
            # libxslt counts `local:///` as network; the resolver answers every such URL itself.
            access = etree.XSLTAccessControl(read_file=True, write_file=False, create_dir=False,
                                             read_network=True, write_network=False)
            _cache[key] = (etree.XSLT(document, access_control=access), threading.Lock())
        return _cache[key]


def _latin1(error: UnicodeError) -> tuple[str | bytes, int]:
    assert isinstance(error, UnicodeDecodeError)  # registered for decoding only
    return error.object[error.start:error.end].decode("latin-1"), error.end


codecs.register_error("sunat_latin1", _latin1)


def _rename_redefinitions(sheet: etree._ElementTree) -> None:
    """A variable declared again while an earlier one of its name is in scope becomes NAME__2 with the references
    after it: XSLT 1.0 forbids the redeclaration (libxslt stops: «Redefinition of variable»), SUNAT's processor lets
    the later one shadow the earlier (the GRE remitente sheet declares motivoTraslado twice in its main template).
    In memory: the files stay as SUNAT ships them."""
    for template in sheet.getroot().iterfind(f"{{{XSL}}}template"):
        _rename_in(template, set())


def _rename_in(element: etree._Element, visible: set[str]) -> None:
    visible = set(visible)
    for child in element:
        if not isinstance(child.tag, str):
            continue
        _rename_in(child, visible)
        if child.tag not in (f"{{{XSL}}}variable", f"{{{XSL}}}param"):
            continue
        name = child.get("name") or ""
        if name in visible:
            renamed = f"{name}__2"
            child.set("name", renamed)
            pattern = re.compile(r"\$" + re.escape(name) + r"(?![\w.-])")
            for sibling in child.itersiblings():
                for node in sibling.iter():
                    if isinstance(node.tag, str) and node.tag.startswith(f"{{{XSL}}}"):
                        for attribute in _EXPRESSIONS:
                            if node.get(attribute):
                                node.set(attribute, pattern.sub("$" + renamed, node.get(attribute) or ""))
            name = renamed
        visible.add(name)


def check(folder: str, xml: str | bytes, file_name: str) -> Verdict:
    """Run the sheet for the document type named in `file_name` (RUC-TT-SERIE-NUMERO.xml, RUC-RA-…, RUC-RC-…)."""
    tipo = file_name[12:14]
    sheet = SUMMARY_SHEETS.get(tipo) or registry.sheet_for(tipo)
    if sheet is None or not os.path.exists(os.path.join(folder, sheet)):
        return Verdict(None, f"sin hoja de reglas para el tipo {tipo} en {folder}")
    data = xml.encode("utf-8") if isinstance(xml, str) else xml
    document = etree.fromstring(data, safe_parser()).getroottree()
    transform, lock = _compiled(folder, sheet)
    with lock:
        _current.file_name = file_name
        _DATAPOWER["variable"] = _sent_file_name
        try:
            transform(document, nombreArchivoEnviado=etree.XSLT.strparam(file_name))
            rejection, message = None, ""
        except etree.XSLTApplyError as exc:
            message = str(exc)
            found = _REJECTION.search(message)
            rejection = found.group(1) if found else "0000"
        observations = sorted({m.group(1) for entry in transform.error_log
                               if not entry.message.startswith("ERROR:")
                               and (m := _OBSERVATION.match(entry.message))})
    return Verdict(rejection, message[:400], observations)
