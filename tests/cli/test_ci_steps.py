""".ci/run times each step and holds the whole run to its budget (.ci/steps.sh, sourced by it)."""

from __future__ import annotations

import subprocess

from tests.helpers.base import ROOT

STEPS = ROOT / ".ci" / "steps.sh"


def _bash(script: str, **budget: int) -> subprocess.CompletedProcess:
    env_lines = "".join(f"{name}={value}\n" for name, value in budget.items())
    return subprocess.run(["bash", "-c", f"set -uo pipefail\n{env_lines}source {STEPS}\n{script}"],
                          capture_output=True, text=True, timeout=60)


def test_ci_exports_ci_true_and_sources_the_steps():
    run = (ROOT / ".ci" / "run").read_text()
    assert "export CI=true" in run
    assert 'source "$(dirname "$0")/steps.sh"' in run
    assert 'make test MARKS="$marks"' in run and 'for marks in "not postgres" "postgres"; do' in run


def test_the_two_test_steps_together_run_every_test():
    """.ci/run's two `make test` steps: the tests without the marker, then those with it (issue 34: the PostgreSQL
    run's seconds on their own); the markers' complement covers the whole suite."""
    makefile = (ROOT / "Makefile").read_text()
    assert '$(if $(MARKS),-m "$(MARKS)")' in makefile


def test_a_step_prints_its_seconds_and_the_total_and_keeps_its_exit_code():
    done = _bash('step "first" true; step "second" bash -c "exit 3"; echo "rc=$?"; finish')
    lines = done.stdout.splitlines()
    assert lines[0] == "== first"
    assert lines[1].startswith("[ci] first: ") and lines[1].endswith(" s)") and "(total " in lines[1]
    assert lines[2] == "== second"
    assert lines[3].startswith("[ci] second: ")
    assert "rc=3" in lines
    assert lines[-1].startswith("[ci] total: ")
    assert done.returncode == 0


def test_past_the_warning_the_run_warns_and_past_the_limit_it_fails():
    # RUN_START in the past: the run "began" 50 and 90 minutes ago.
    warned = _bash("finish", RUN_START=-50 * 60)
    assert "WARNING: the run took more than 40 minutes" in warned.stdout
    assert warned.returncode == 0
    failed = _bash("finish", RUN_START=-90 * 60)
    assert "FAILED: the run took more than 80 minutes" in failed.stdout
    assert failed.returncode == 1


def test_a_step_is_stopped_when_the_budget_runs_out_and_none_starts_after():
    stopped = _bash('step "slow" sleep 30; echo "rc=$?"', FAIL_AFTER_S=1)
    assert "[ci] slow was stopped: the run went past 0 minutes" in stopped.stdout
    assert "rc=124" in stopped.stdout
    late = _bash('step "late" true; echo "never here"', RUN_START=-10, FAIL_AFTER_S=5)
    assert "not started" in late.stdout and "never here" not in late.stdout
    assert late.returncode == 1
