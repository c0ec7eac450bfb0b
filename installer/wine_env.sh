# Shared settings for the Wine-based Windows build; sourced by the other scripts.
# shellcheck shell=bash

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${YUPANA_BUILD_CACHE:-$HOME/.cache/yupana-build}"
PY_EMBED_VERSION=3.13.0
PIP_WHEEL_VERSION=26.3
WHEELS="$CACHE/wheels-win-cp313"
DOWNLOADS="$CACHE/downloads"

export WINEPREFIX="$CACHE/wineprefix"
export WINEARCH=win64
export WINEDEBUG=-all
# No Mono/Gecko prompts: the app needs neither.
export WINEDLLOVERRIDES="mscoree,mshtml="
WIN_C="$WINEPREFIX/drive_c"
PYDIR="$WIN_C/yupana-build/python"

if command -v wine64 >/dev/null 2>&1; then
    WINE=wine64
elif [ -x /usr/lib/wine/wine64 ]; then
    WINE=/usr/lib/wine/wine64
else
    WINE=wine
fi

VERSION="$(sed -n 's/^__version__ *= *["'\'']\([^"'\'']*\)["'\''].*/\1/p' "$ROOT/app/__init__.py")"

# pip on the build host; drops the noise about this machine's absent local index folders.
host_pip() {
    local rc=0
    "${PYTHON:-python3}" -m pip "$@" 2>&1 | grep -v "^WARNING: Location 'file:" || true
    rc="${PIPESTATUS[0]}"
    return "$rc"
}

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# A Unix path as Wine sees it (drive Z: maps /).
winpath() { printf 'Z:%s' "$1" | tr / '\\'; }

# Run a Windows program under Wine with a time limit. Standard input must not be
# a regular file and output goes through a pipe (Python under Wine 8 dies at start
# when a standard handle is a regular file). The host's pip settings point at
# Linux-only paths, so they are not passed on.
wine_run() {
    local limit="$1"
    shift
    timeout --kill-after=20 "$limit" env -u PIP_FIND_LINKS -u PIP_CERT -u PIP_CONFIG_FILE -u PIP_INDEX_URL \
        -u PIP_EXTRA_INDEX_URL -u PYTHONPATH -u PYTHONHOME -u VIRTUAL_ENV \
        "$WINE" "$@" </dev/null 2>&1 | cat
    return "${PIPESTATUS[0]}"
}

# Let the prefix settle (wineserver writes the registry on exit).
wine_wait() { timeout 60 wineserver -w 2>/dev/null || true; }
