# Sourced by .ci/run (and by tests/cli/test_ci_steps.py): each step timed and the whole run held to a budget.
# step NAME COMMAND...  runs COMMAND with what is left of the budget, prints its seconds and the total so far.
# finish                prints the total; warns past WARN_AFTER_S, fails (exit 1) past FAIL_AFTER_S.

WARN_AFTER_S=${WARN_AFTER_S:-$((40 * 60))}
FAIL_AFTER_S=${FAIL_AFTER_S:-$((80 * 60))}
RUN_START=${RUN_START:-$SECONDS}

step() {
  local name=$1
  shift
  local left=$((FAIL_AFTER_S - (SECONDS - RUN_START)))
  if [ "$left" -le 0 ]; then
    echo "== $name: not started, the run is past its $((FAIL_AFTER_S / 60)) minutes"
    exit 1
  fi
  echo "== $name"
  local started=$SECONDS rc=0
  timeout --kill-after=30 "$left" "$@" || rc=$?
  echo "[ci] $name: $((SECONDS - started)) s (total $((SECONDS - RUN_START)) s)"
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "[ci] $name was stopped: the run went past $((FAIL_AFTER_S / 60)) minutes"
  fi
  return $rc
}

finish() {
  local total=$((SECONDS - RUN_START))
  echo "[ci] total: ${total} s ($((total / 60)) min $((total % 60)) s)"
  if [ "$total" -gt "$FAIL_AFTER_S" ]; then
    echo "[ci] FAILED: the run took more than $((FAIL_AFTER_S / 60)) minutes"
    exit 1
  elif [ "$total" -gt "$WARN_AFTER_S" ]; then
    echo "[ci] WARNING: the run took more than $((WARN_AFTER_S / 60)) minutes (it fails past $((FAIL_AFTER_S / 60)))"
  fi
}

