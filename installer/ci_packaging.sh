#!/usr/bin/env bash
# Packaging part of CI (called from .ci/run after `make test`):
# installs the Debian tools when missing, then builds and checks the Linux
# bundle and the Windows installer (built and smoke-tested under Wine).
# Downloads and the Wine prefix are cached in ${YUPANA_BUILD_CACHE:-$HOME/.cache/yupana-build}.
set -euo pipefail
cd "$(dirname "$0")/.."

bash installer/install_build_tools.sh

t0=$SECONDS
make package
t1=$SECONDS
make windows-installer windows-smoke
t2=$SECONDS
echo "[ci-packaging] make package: $((t1 - t0)) s; make windows-installer windows-smoke: $((t2 - t1)) s"
