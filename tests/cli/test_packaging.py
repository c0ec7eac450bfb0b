"""Cheap static checks of the packaging files, and of built bundles when dist/ has them."""

from __future__ import annotations

import ast
import re
import struct
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALLER = ROOT / "installer"
SPEC = INSTALLER / "yupana.spec"
NSI = INSTALLER / "yupana.nsi"
STUB_DIR = INSTALLER / "wine-stubs"
# Bundles made by `make package` and `make windows-installer`.
BUNDLES = [ROOT / "dist" / "linux" / "yupana", ROOT / "dist" / "windows" / "yupana"]


def _spec_list(name: str) -> list[str]:
    tree = ast.parse(SPEC.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return [ast.literal_eval(elt) for elt in node.value.elts]
    raise AssertionError(f"{name} not found in {SPEC}")


def test_spec_is_one_folder_windowed_with_icon_and_version():
    text = SPEC.read_text(encoding="utf-8")
    assert "COLLECT(" in text and "exclude_binaries=True" in text, "one-folder bundle"
    assert "console=False" in text, "windowed"
    assert 'RESOURCES / "yupana.ico"' in text
    assert "version_info.txt" in text
    assert "upx=False" in text


def test_spec_excludes_unused_qt_modules():
    unused = set(_spec_list("UNUSED_QT"))
    for module in ("QtQml", "QtQuick", "QtQuickWidgets", "Qt3DCore", "QtMultimedia", "QtNetwork", "QtSql",
                   "QtTest", "QtDesigner", "QtOpenGL", "QtPdf", "QtWebEngineCore"):
        assert module in unused, module
    for needed in ("QtCore", "QtGui", "QtWidgets"):
        assert needed not in unused, needed


def test_spec_bundles_app_data_and_signxml_schemas():
    text = SPEC.read_text(encoding="utf-8")
    assert '"app" / "data"' in text and '"app/data"' in text
    assert 'collect_data_files("signxml")' in text


def test_spec_finds_app_modules_on_disk():
    # collect_submodules("app") silently finds nothing under Wine's embeddable Python.
    text = SPEC.read_text(encoding="utf-8")
    assert "hiddenimports=app_modules()" in text
    assert 'collect_submodules("app")' not in text


def test_entry_script_supports_frozen_multiprocessing():
    text = (INSTALLER / "entry.py").read_text(encoding="utf-8")
    assert text.index("multiprocessing.freeze_support()") < text.index("from app.cli import main")


def test_project_depends_on_essentials_not_full_pyside6():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'"PySide6-Essentials', pyproject)
    assert not re.search(r'"PySide6[<>=~"]', pyproject)
    windows_reqs = (INSTALLER / "requirements-windows.txt").read_text(encoding="utf-8")
    assert re.search(r"^PySide6-Essentials==", windows_reqs, re.M)
    assert not re.search(r"^PySide6==", windows_reqs, re.M)


def test_windows_requirements_are_pinned():
    for line in (INSTALLER / "requirements-windows.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][A-Za-z0-9.]*", line), line


def test_every_runtime_dependency_is_bundled_for_windows():
    """Each of the project's dependencies has its pinned Windows wheel (the bundle's self-test failed on a new one:
    charset-normalizer)."""
    import tomllib

    def name(requirement: str) -> str:
        return re.split(r"[<>=~!\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")

    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    pinned = {name(line) for line in (INSTALLER / "requirements-windows.txt").read_text(encoding="utf-8").splitlines()
              if line.split("#", 1)[0].strip()}
    assert len(dependencies) > 10 and {name(d) for d in dependencies} - pinned == set()


def test_nsis_script_essentials():
    text = NSI.read_text(encoding="utf-8")
    assert re.search(r"^Target amd64-unicode$", text, re.M)
    assert re.search(r"^SetCompressor /SOLID lzma$", text, re.M)
    assert "!include MUI2.nsh" in text
    assert "WriteUninstaller" in text and 'Section "Uninstall"' in text
    assert "MULTIUSER_INSTALLMODE_COMMANDLINE" in text, "per-user or per-machine install"
    assert "$SMPROGRAMS" in text and "$DESKTOP" in text, "Start-menu and desktop shortcuts"
    assert 'MUI_LANGUAGE "Spanish"' in text


def test_icon_files_are_valid():
    png = (ROOT / "resources" / "yupana.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    ico = (ROOT / "resources" / "yupana.ico").read_bytes()
    reserved, kind, count = struct.unpack_from("<HHH", ico)
    assert (reserved, kind) == (0, 1) and count >= 4
    sizes = {ico[6 + 16 * i] or 256 for i in range(count)}
    assert {16, 32, 48, 256} <= sizes


def _wine_stub_names() -> set[str]:
    return {f"{path.stem}.dll".lower() for path in STUB_DIR.glob("*.c")}


def test_wine_stubs_are_the_expected_ones():
    assert _wine_stub_names() == {"bcryptprimitives.dll", "icuuc.dll"}
    for source in STUB_DIR.glob("*.c"):
        assert "YUPANA-WINE-BUILD-STUB" in source.read_text(encoding="utf-8"), source


def _is_wine_built(path: Path) -> bool:
    data = path.read_bytes()
    # Wine's own DLLs carry "Wine builtin DLL"; our stubs carry a marker string.
    return any(mark in data for mark in (b"Wine builtin DLL", b"Wine placeholder DLL", b"YUPANA-WINE-BUILD-STUB"))


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: p.name if p.parent.name != "dist" else p.parent.name)
def test_built_bundle_holds_no_wine_dll(bundle: Path):
    if not bundle.is_dir():
        pytest.skip(f"no bundle at {bundle.relative_to(ROOT)} (built by make package / make windows-installer)")
    stubs = _wine_stub_names()
    offenders = []
    for path in bundle.rglob("*"):
        if not path.is_file():
            continue
        if path.name.lower() in stubs:
            offenders.append(path)
        elif path.suffix.lower() in (".dll", ".pyd") and _is_wine_built(path):
            offenders.append(path)
    assert not offenders, f"Wine-only DLLs in the bundle: {offenders}"


@pytest.mark.parametrize("bundle", BUNDLES, ids=["linux", "windows"])
def test_built_bundle_leaves_unused_qt_out(bundle: Path):
    if not bundle.is_dir():
        pytest.skip(f"no bundle at {bundle.relative_to(ROOT)}")
    names = {path.name.lower() for path in bundle.rglob("*")}
    for module in ("qtqml", "qtquick", "qtnetwork", "qtsql", "qttest"):
        assert not any(name.startswith(f"{module}.") for name in names), module
    assert not any("qt6network" in name or "qt6quick" in name or "qt6qml" in name for name in names)
    assert "opengl32sw.dll" not in names
    translations = [name for name in names if name.endswith(".qm")]
    assert all(name.endswith("_es.qm") for name in translations), translations


def test_wine_dll_check_recognises_stubs_and_wine_builtins(tmp_path):
    stub = tmp_path / "stub.dll"
    stub.write_bytes(b"MZ\0\0...YUPANA-WINE-BUILD-STUB\0")
    builtin = tmp_path / "kernel32.dll"
    builtin.write_bytes(b"MZ\0\0This program cannot be run in DOS mode.\0Wine builtin DLL\0")
    real = tmp_path / "Qt6Core.dll"
    real.write_bytes(b"MZ\0\0ucnv_open\0ucnv_countAvailable\0icuuc.dll\0")
    assert _is_wine_built(stub) and _is_wine_built(builtin)
    assert not _is_wine_built(real)
