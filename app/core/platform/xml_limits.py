"""Size limits of a voucher's XML, checked before any signature work.

The signature check canonicalises the document; its cost grows with the namespaces in scope times the
elements, so a few megabytes of `xmlns:` declarations on one element took minutes (issue 12). These caps
are far above any real voucher (the largest Yupana issues, 500 lines and 555 kB signed, has 5 declarations,
13 000 elements and at most a few attributes on an element; other issuers' software writes up to about six) and are checked in one pass over the bytes (declarations) and one over the
parsed tree (attributes, elements): a document past them is refused in milliseconds, never canonicalised.
Pure: knows nothing of storage or the engine.
"""

from __future__ import annotations

import re

from lxml import etree

MAX_NAMESPACE_DECLARATIONS = 100
MAX_ATTRIBUTES_PER_ELEMENT = 32
MAX_ELEMENTS = 100_000

_DECLARATION = re.compile(rb"\sxmlns(?::[^\s=/>]+)?\s*=")


class LimitExceeded(ValueError):
    """The document is past one of the limits; the message says which, in Spanish."""


def check_bytes(xml: bytes) -> None:
    """Before parsing: the number of namespace declarations in the whole document."""
    declarations = len(_DECLARATION.findall(xml))
    if declarations > MAX_NAMESPACE_DECLARATIONS:
        raise LimitExceeded(f"declara {declarations} espacios de nombres (xmlns); un comprobante no necesita más de "
                            f"{MAX_NAMESPACE_DECLARATIONS}")


def check_tree(root: etree._Element) -> None:
    """After parsing: attributes on any one element and the number of elements."""
    count = 0
    for element in root.iter():
        count += 1
        if count > MAX_ELEMENTS:
            raise LimitExceeded(f"tiene más de {MAX_ELEMENTS} elementos")
        if len(element.attrib) > MAX_ATTRIBUTES_PER_ELEMENT:
            name = etree.QName(element).localname if isinstance(element.tag, str) else "?"
            raise LimitExceeded(f"el elemento «{name}» tiene {len(element.attrib)} atributos; el máximo es "
                                f"{MAX_ATTRIBUTES_PER_ELEMENT}")
