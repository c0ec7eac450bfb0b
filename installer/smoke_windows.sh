#!/usr/bin/env bash
# Smoke test of the Windows installer under Wine: silent install, the installed
# yupana.exe runs its self-test offscreen and saves a screenshot of the main
# window, then `lote` on its signing workers, `serve` with Evolution's event stream
# and `db estado` on PostgreSQL beside services on this machine, silent uninstall, nothing left. The screenshot goes to dist/windows-wine.png (untracked);
# WINE_SHOT names another file (`make windows-smoke WINE_SHOT=docs/screenshots/windows-wine.png`
# updates the README's picture).
set -euo pipefail
source "$(dirname "$0")/wine_env.sh"

SETUP="$ROOT/dist/Yupana-Setup-$VERSION.exe"
SHOT="${WINE_SHOT:-dist/windows-wine.png}"
[[ "$SHOT" = /* ]] || SHOT="$ROOT/$SHOT"
[ -f "$SETUP" ] || { echo "no $SETUP: run 'make windows-installer' first" >&2; exit 1; }
[ -f "$WINEPREFIX/.yupana-prefix" ] || { echo "no Wine prefix in $WINEPREFIX: run 'make windows-installer' first" >&2; exit 1; }

lock_cache
isolate_prefix

fail() { echo "SMOKE FAILED: $*" >&2; exit 1; }

# Where a per-user install lands (Wine has no FOLDERID_UserProgramFiles, NSIS falls back to this).
WIN_USER="$(ls "$WIN_C/users" | grep -vx -e Public -e 'All Users' -e Default | head -n1)"
LOCALAPPDATA="$WIN_C/users/$WIN_USER/AppData/Local"

installed_dir() {
    local out
    out="$(wine_run 60 reg query 'HKCU\Software\Yupana' /v InstallDir || true)"
    local win
    win="$(printf '%s\n' "$out" | tr -d '\r' | sed -n 's/.*InstallDir[[:space:]]\+REG_SZ[[:space:]]\+//p' | head -n1)"
    [ -n "$win" ] || return 1
    # C:\users\... -> $WIN_C/users/...
    printf '%s' "$WIN_C/$(printf '%s' "${win#?:\\}" | tr '\\' /)"
}

# Start clean: a previous failed run may have left an install behind. Its uninstaller must have ended (wine_wait)
# before the new install writes its keys, or it deletes them after (seen once: «no InstallDir»); its keys go too.
for old in "$LOCALAPPDATA/Programs/Yupana"; do
    if [ -f "$old/Desinstalar.exe" ]; then
        wine_run 120 "$old/Desinstalar.exe" /S /CurrentUser "_?=$(winpath "$old")" || true
        wine_wait
    fi
    rm -rf "$old"
done
wine_run 60 reg delete 'HKCU\Software\Yupana' /f >/dev/null 2>&1 || true
wine_run 60 reg delete 'HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\Yupana' /f >/dev/null 2>&1 || true
wine_wait

t0=$SECONDS
log "installing $(basename "$SETUP") silently (per-user)"
wine_run 600 "$SETUP" /S /CurrentUser || fail "the installer exited with an error"
wine_wait
INSTDIR="$(installed_dir)" || fail "the installer wrote no InstallDir in HKCU\\Software\\Yupana"
log "installed in $INSTDIR ($(du -sh "$INSTDIR" | cut -f1)) in $((SECONDS - t0)) s"
[ -f "$INSTDIR/yupana.exe" ] || fail "no yupana.exe in $INSTDIR"
[ -f "$INSTDIR/Desinstalar.exe" ] || fail "no uninstaller in $INSTDIR"
START_MENU="$(find "$WIN_C/users/$WIN_USER" -path '*Start Menu/Programs/Yupana' -type d | head -n1)"
[ -n "$START_MENU" ] && [ -f "$START_MENU/Yupana.lnk" ] || fail "no Start-menu shortcut"
DESKTOP_LNK="$(find "$WIN_C/users/$WIN_USER" -maxdepth 3 -name Yupana.lnk -path '*Desktop*' | head -n1)"
[ -n "$DESKTOP_LNK" ] || fail "no desktop shortcut"
log "shortcuts: $START_MENU/Yupana.lnk, $DESKTOP_LNK"

log "running the installed yupana.exe --self-test (offscreen)"
HOME_DIR="$(mktemp -d)"
mkdir -p "$(dirname "$SHOT")"
rm -f "$SHOT"
t1=$SECONDS
rc=0
QT_QPA_PLATFORM=offscreen YUPANA_HOME="$(winpath "$HOME_DIR")" \
    wine_run 300 "$INSTDIR/yupana.exe" --self-test --screenshot "$(winpath "$SHOT")" >"$HOME_DIR/console.txt" || rc=$?
wine_wait
LOG_FILE="$HOME_DIR/logs/self-test.log"
if [ ! -f "$LOG_FILE" ]; then
    echo "----- console output (no self-test.log was written) -----"
    cat "$HOME_DIR/console.txt"
else
    echo "----- self-test.log (installed app under Wine) -----"
    tr -d '\r' <"$LOG_FILE"
    echo "----------------------------------------------------"
fi
[ "$rc" -eq 0 ] || fail "self-test exited with $rc"
grep -q "^autoprueba correcta" "$LOG_FILE" 2>/dev/null || fail "self-test log does not report success"
[ -s "$SHOT" ] || fail "no screenshot at $SHOT"
log "self-test passed in $((SECONDS - t1)) s; screenshot $SHOT"
rm -rf "$HOME_DIR"

# Beside the installed app, on this machine: the gateway sandbox, a throwaway PostgreSQL, xmlsec1 (scripts/wine_smoke.py,
# run by the project's venv). `yupana lote` signs on two worker processes and nothing opens a second app (issue 33);
# `yupana serve` opens Evolution's event stream and stores a message once (issue 30); `yupana db estado` reaches
# PostgreSQL through psycopg's binary part (issue 34). Everything it writes goes under build/wine-smoke.
HOST_PY="${YUPANA_HOST_PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$HOST_PY" ] || fail "no $HOST_PY for the checks beside the app (make windows-smoke creates it)"
SMOKE_WORK="$ROOT/build/wine-smoke"
rm -rf "$SMOKE_WORK"
mkdir -p "$SMOKE_WORK"
log "installed app beside services on this machine: lote on the workers, the event stream, PostgreSQL"
t2=$SECONDS
rc=0
(cd "$ROOT" && "$HOST_PY" -m scripts.wine_smoke --wine "$WINE" --exe "$INSTDIR/yupana.exe" --work "$SMOKE_WORK") || rc=$?
wine_wait
[ "$rc" -eq 0 ] || fail "$rc check(s) of the installed app beside its services failed (above; files in $SMOKE_WORK)"
log "checks beside services passed in $((SECONDS - t2)) s"
rm -rf "$SMOKE_WORK"

log "uninstalling silently"
# The NSIS uninstaller copies itself to %TEMP% and returns at once; wait for it.
wine_run 120 "$INSTDIR/Desinstalar.exe" /S /CurrentUser || fail "the uninstaller exited with an error"
for _ in $(seq 1 60); do
    [ -e "$INSTDIR" ] || break
    sleep 1
done
wine_wait
left=""
[ -e "$INSTDIR" ] && left="$left $INSTDIR"
[ -e "$START_MENU" ] && left="$left $START_MENU"
[ -e "$DESKTOP_LNK" ] && left="$left $DESKTOP_LNK"
if wine_run 60 reg query 'HKCU\Software\Yupana' >/dev/null; then left="$left HKCU\\Software\\Yupana"; fi
if wine_run 60 reg query 'HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\Yupana' >/dev/null; then
    left="$left HKCU\\...\\Uninstall\\Yupana"
fi
[ -z "$left" ] || fail "left behind after uninstall:$left"
log "uninstall left nothing behind; smoke test passed in $((SECONDS - t0)) s"
