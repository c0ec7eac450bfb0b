#!/usr/bin/env bash
# Install the Debian tools that the Windows installer build and its smoke test need, when missing:
# NSIS (makensis), the MinGW compiler for the two Wine stub DLLs, Wine, unzip, and for the smoke test xmlsec1 and
# PostgreSQL. Called by
# `make windows-installer`, `make windows-smoke` and installer/ci_packaging.sh, so each works on a
# fresh Debian/Ubuntu as the README gives it. Does nothing when everything is there.
set -euo pipefail

missing=()
command -v makensis >/dev/null 2>&1 || missing+=(nsis)
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=(gcc-mingw-w64-x86-64-win32)
command -v wine >/dev/null 2>&1 || missing+=(wine)
if ! command -v wine64 >/dev/null 2>&1 && [ ! -x /usr/lib/wine/wine64 ]; then
    missing+=(wine64)
fi
command -v unzip >/dev/null 2>&1 || missing+=(unzip)
command -v timeout >/dev/null 2>&1 || missing+=(coreutils)
# The smoke test's services beside the installed app (scripts/wine_smoke.py): xmlsec1 checks the batch's signatures,
# a throwaway PostgreSQL (Debian's binaries under /usr/lib/postgresql) for `yupana db estado`.
command -v xmlsec1 >/dev/null 2>&1 || missing+=(xmlsec1)
compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null || missing+=(postgresql)
[ "${#missing[@]}" -eq 0 ] && exit 0

echo "[build-tools] apt-get install ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}" >/dev/null
