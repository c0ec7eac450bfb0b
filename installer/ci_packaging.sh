#!/usr/bin/env bash
# Packaging part of CI (called from .ci/run after `make test`):
# installs the Debian tools when missing, then builds and checks the Linux
# bundle and the Windows installer (built and smoke-tested under Wine).
# Downloads and the Wine prefix are cached in ${YUPANA_BUILD_CACHE:-$HOME/.cache/yupana-build}.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v makensis >/dev/null 2>&1 || missing+=(nsis)
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=(gcc-mingw-w64-x86-64-win32)
if ! command -v wine >/dev/null 2>&1; then
    missing+=(wine)
fi
if ! command -v wine64 >/dev/null 2>&1 && [ ! -x /usr/lib/wine/wine64 ]; then
    missing+=(wine64)
fi
command -v unzip >/dev/null 2>&1 || missing+=(unzip)
if [ "${#missing[@]}" -gt 0 ]; then
    echo "[ci-packaging] apt-get install ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}" >/dev/null
fi

t0=$SECONDS
make package
t1=$SECONDS
make windows-installer windows-smoke
t2=$SECONDS
echo "[ci-packaging] make package: $((t1 - t0)) s; make windows-installer windows-smoke: $((t2 - t1)) s"
