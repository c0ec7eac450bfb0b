# Every target creates .venv by itself when it is missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev
RUN_STAMP := $(VENV)/.installed

.PHONY: run test demo bench lint soak desks mutation package windows-installer windows-smoke screenshots clean translations

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(RUN_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e .
	touch $@

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e ".[dev]"
	touch $@ $(RUN_STAMP)

# Our small Qt catalogue (what qtbase_es.qm lacks, Peru's words; docs/gui.md): yupana_es.ts is the source, the .qm
# beside it is committed (a test checks it matches the .ts) and rebuilt here whenever the .ts is newer.
QM := app/data/i18n/yupana_es.qm
$(QM): app/data/i18n/yupana_es.ts | $(RUN_STAMP)
	$(VENV)/bin/pyside6-lrelease -silent $< -qm $@

translations: $(QM)

# ARGS are passed to yupana (`make run ARGS=--self-test` checks a start without a screen). Without a display
# (no DISPLAY or WAYLAND_DISPLAY on Linux) `yupana` says so in Spanish and exits instead of opening windows nowhere.
run: $(RUN_STAMP) $(QM)
	$(VENV)/bin/yupana $(ARGS)

# Spread over every core (pytest-xdist, the slowest tests scheduled first by worksteal), two test processes per
# core: many tests wait on a server, a child process or a condition, and a second process per core fills that time
# (on 2 cores, 2 563 tests: 382 s with 2 processes, 328 s with 4). JOBS=1 runs them in one process, e.g.
# make test JOBS=1. MARKS narrows the run by marker: .ci/run runs MARKS="not postgres", then MARKS=postgres (the
# tests over a throwaway PostgreSQL) as a step of its own.
JOBS ?= $(shell echo $$((2 * $$(nproc 2>/dev/null || echo 1))))
MARKS ?=
test: $(STAMP) $(QM)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -p no:cacheprovider -n $(JOBS) --dist worksteal $(if $(MARKS),-m "$(MARKS)")

demo: $(RUN_STAMP)
	$(VENV)/bin/yupana demo

# BENCHES narrows a run, e.g. make bench BENCHES=bench/sign.py (YUPANA_BENCH_QUICK=1: tiny sizes, see bench/_sizes.py).
BENCHES ?= $(sort $(wildcard bench/[!_]*.py))
bench: $(RUN_STAMP)
	@for b in $(BENCHES); do echo "== $$b"; $(PY) $$b || exit 1; done

lint: $(STAMP)
	$(PY) -m ruff check app tests bench scripts
	$(PY) -m mypy

# A shop's day compressed (docs/testing.md, «make soak»): the sandboxes, `yupana serve` SIGKILLed every 20-40 s, SUNAT's
# faults, then a quiet phase (the last third of MINUTES, at most 3 min) and the checks. Minutes long: never part of
# `make test`; CI runs it as its own step with MINUTES=3.
# Several desks (docs/architecture.md, «Several desks on one PostgreSQL»): the three-desk test at the issue's size,
# 3 desk processes × 1,000 vouchers on one serie over a throwaway PostgreSQL (`make test` runs it with 40 each).
desks: $(STAMP)
	YUPANA_DESKS_VOUCHERS=1000 $(PY) -m pytest -q -p no:cacheprovider -p no:xdist tests/core/storage/test_desks.py

MINUTES ?= 10
soak: $(RUN_STAMP)
	$(PY) -m scripts.soak --minutes $(MINUTES)

# Mutation testing (docs/testing.md): slow, never in CI nor in `make test`. The modules and the tests are set in
# pyproject.toml ([tool.mutmut]); MUTANTS narrows a run, e.g. make mutation MUTANTS='app.core.invoicing.amounts.*'
MUTANTS ?=
mutation: $(STAMP)
	YUPANA_TESTS_SHARED=$(abspath ../shared) QT_QPA_PLATFORM=offscreen $(PY) -m mutmut run $(MUTANTS)
	$(PY) scripts/mutation_report.py

SHOTS ?= docs/screenshots
screenshots: $(STAMP) $(QM)
	QT_QPA_PLATFORM=offscreen $(PY) -m app.gui.screenshots $(SHOTS)

clean:
	rm -rf build dist .pytest_cache

# --- Packaging (issue 8; see docs/packaging.md) --------------------------
PYINSTALLER_VERSION ?= 6.22.3
PYI_STAMP := $(VENV)/.installed-pyinstaller-$(PYINSTALLER_VERSION)

$(PYI_STAMP): $(RUN_STAMP)
	$(PY) -m pip install -q "pyinstaller==$(PYINSTALLER_VERSION)"
	touch $@

# Native Linux bundle in dist/linux/yupana, then its --self-test.
package: $(PYI_STAMP) $(QM)
	bash installer/build_linux.sh $(PY)

# dist/Yupana-Setup-<version>.exe, built on Linux with Wine + makensis.
windows-installer:
	bash installer/install_build_tools.sh
	bash installer/build_windows.sh

# Silent install under Wine, self-test + screenshot, lote/serve/db beside services run by the venv (scripts/wine_smoke.py),
# silent uninstall. The screenshot goes to dist/windows-wine.png;
# WINE_SHOT=docs/screenshots/windows-wine.png updates the README's picture.
WINE_SHOT ?= dist/windows-wine.png
windows-smoke: $(STAMP)
	bash installer/install_build_tools.sh
	WINE_SHOT=$(WINE_SHOT) YUPANA_HOST_PYTHON=$(abspath $(PY)) bash installer/smoke_windows.sh
