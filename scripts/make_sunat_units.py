"""Write app/data/sunat-unidades.csv: every code of SUNAT's catalogue 03 (unidades de medida, UN/ECE
recommendation 20) with the description SUNAT's file gives it, from cat_03.xml of SUNAT's validation files.

    .venv/bin/python scripts/make_sunat_units.py ../shared/sunat/validation/commons/cpe/catalogo/cat_03.xml

The file's own header row (`<c id="Code">Name</c>`) is not a unit and is left out; a code written twice (N20) keeps
its first description. tests/core/invoicing/test_sunat_catalogues.py compares the bundled file with this output.
"""

from __future__ import annotations

import sys
from pathlib import Path

from app.core.invoicing.sunat_catalogues import units_file_text

TARGET = Path(__file__).resolve().parents[1] / "app" / "data" / "sunat-unidades.csv"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    TARGET.write_text(units_file_text(Path(argv[1])), encoding="utf-8", newline="\n")
    print(f"{TARGET}: written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
