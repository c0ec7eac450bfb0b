#!/usr/bin/env bash
# Build the native Linux bundle with PyInstaller and run its self-test.
#   installer/build_linux.sh [python]   (default: .venv/bin/python, which must have pyinstaller)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="${1:-$ROOT/.venv/bin/python}"
BUNDLE="$ROOT/dist/linux/yupana"

cd "$ROOT"
t0=$SECONDS
rm -rf "$BUNDLE"
"$PY" -m PyInstaller --noconfirm --log-level WARN \
    --distpath "$ROOT/dist/linux" --workpath "$ROOT/build/pyinstaller-linux" installer/yupana.spec
[ -x "$BUNDLE/yupana" ] || { echo "PyInstaller produced no $BUNDLE/yupana" >&2; exit 1; }
echo "[package] Linux bundle $BUNDLE: $(du -sh "$BUNDLE" | cut -f1), built in $((SECONDS - t0)) s"

home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
echo "[package] $BUNDLE/yupana --self-test (offscreen, YUPANA_HOME=$home)"
QT_QPA_PLATFORM=offscreen YUPANA_HOME="$home" timeout 300 "$BUNDLE/yupana" --self-test \
    --screenshot "$home/linux.png" </dev/null
echo "[package] self-test of the Linux bundle passed"
