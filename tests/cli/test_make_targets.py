"""Every `make` target the README names runs (those CI does not run itself): bench, run, screenshots."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from tests.helpers.base import ROOT
from tests.helpers.screenshots import assert_identical, pictures_in, render

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")]


def make(*args: str, env: dict[str, str] | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def test_the_readme_names_only_targets_the_makefile_has():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`make ([a-z-]+)", readme)) | set(re.findall(r"make ([a-z-]+) [a-z-]+`", readme))
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z-]+):", makefile, flags=re.M))
    assert named and named <= targets, named - targets


BENCHES = sorted(p.name for p in (ROOT / "bench").glob("[!_]*.py"))


def test_make_bench_runs_every_benchmark():
    """`make bench` names every benchmark in its loop (a dry run: each runs alone below, so the parallel suite
    spreads them over the cores)."""
    done = make("-n", "bench")
    assert done.returncode == 0, done.stderr[-2000:]
    named = re.findall(r"bench/([^\s;]+\.py)", done.stdout)
    assert named == BENCHES


@pytest.mark.parametrize("bench", BENCHES)
def test_make_bench_runs_the_benchmark_and_it_ends_with_its_json_line(bench):
    done = make("bench", f"BENCHES=bench/{bench}", env={"YUPANA_BENCH_QUICK": "1"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    sections = re.split(r"^== (bench/\S+\.py)$", done.stdout, flags=re.M)[1:]
    assert sections[0::2] == [f"bench/{bench}"]
    last = [line for line in sections[1].splitlines() if line.strip()][-1]
    assert json.loads(last)["benchmark"] == bench.removesuffix(".py")


def test_make_run_starts_the_application(home):
    done = make("run", "ARGS=--self-test", env={"YUPANA_HOME": str(home)}, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_make_screenshots_writes_the_pictures_and_a_second_run_gives_the_same_bytes(tmp_path):
    """`make screenshots` writes every picture, and is deterministic (issue 16): a second run gives byte-identical
    PNGs, so regenerating the committed pictures leaves `git status` clean (tests/gui/test_screenshots_deterministic.py
    holds the pieces: one frozen clock, a seeded sandbox, fixed ports painted, a named font)."""
    done = make("screenshots", f"SHOTS={tmp_path / 'a'}", timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "aviso:" not in done.stderr, done.stderr[-2000:]  # every sample (vouchers, messages, PDF) was made
    assert_identical(pictures_in(tmp_path / "a"), render(tmp_path / "b"))
