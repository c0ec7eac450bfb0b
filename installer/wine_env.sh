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
# No Mono/Gecko prompts (the app needs neither) and no menu entries or
# .desktop files written into the host's home by winemenubuilder.
export WINEDLLOVERRIDES="mscoree,mshtml=;winemenubuilder.exe=d"
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
    local out rc=0
    out="$("${PYTHON:-python3}" -m pip "$@" 2>&1)" || rc=$?
    printf '%s\n' "$out" | grep -v -e "^WARNING: Location 'file:" -e '^$' || true
    return "$rc"
}

# One Wine build or smoke test at a time per cache (a developer and CI may share it).
lock_cache() {
    mkdir -p "$CACHE"
    exec 9>"$CACHE/.lock"
    if ! flock -n 9; then
        echo "waiting for another Yupana Windows build using $CACHE ..." >&2
        flock -w 1800 9 || { echo "gave up waiting for $CACHE/.lock" >&2; exit 1; }
    fi
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

# Wine links Desktop, Documents... to the host's home; the installer's desktop
# shortcut must land inside the prefix instead.
isolate_prefix() {
    prefix_fonts
    local user_dir link
    for user_dir in "$WIN_C"/users/*/; do
        for link in "$user_dir"*; do
            if [ -L "$link" ]; then
                rm -f "$link"
                mkdir -p "$link"
            fi
        done
    done
}

# Wine keeps its fonts outside C:\windows\Fonts, where Qt's offscreen platform
# looks for them (app/selftest.py); put Wine's Tahoma (and DejaVu Sans when
# the host has it) there, as a real Windows would have its fonts.
prefix_fonts() {
    local fonts="$WIN_C/windows/Fonts" font
    mkdir -p "$fonts"
    for font in /usr/share/wine/fonts/tahoma.ttf /usr/share/wine/fonts/tahomabd.ttf \
        /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf; do
        [ -f "$font" ] && [ ! -f "$fonts/$(basename "$font")" ] && cp "$font" "$fonts/"
    done
    return 0
}

# Let the prefix settle (wineserver writes the registry on exit).
wine_wait() { timeout 60 wineserver -w 2>/dev/null || true; }
