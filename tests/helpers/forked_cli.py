"""`yupana ARGS` as a real process of its own, forked from a server process that has already imported the command's
modules (multiprocessing's forkserver, one per test process), instead of a new interpreter importing them again.

The suite starts the command about a hundred times; each new interpreter spent about a second of CPU importing the
engine, which was a large part of `make test` on two cores. The forked process is as separate as before: its own
pid, environment, working folder, standard streams (files, read back as bytes), exit status and atexit handlers; it
runs `python -m app`'s own `__main__`. Tests that are about a new interpreter (its start-up imports, its flags) start
one themselves with subprocess.
"""

from __future__ import annotations

import atexit
import io
import os
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.helpers import forkserver


def _redirect(fd: int, path: str, flags: int) -> None:
    opened = os.open(path, flags)
    os.dup2(opened, fd)
    os.close(opened)


def _text_stream(fd: int, mode: str, like: io.TextIOWrapper) -> io.TextIOWrapper:
    """A text stream over `fd` as Python makes one for a pipe (the encoding and error handler of the original)."""
    binary = open(fd, mode + "b", closefd=False)  # noqa: SIM115 - lives as long as the process
    return io.TextIOWrapper(binary, encoding=like.encoding, errors=like.errors, write_through=False)


def _main_in_child(argv: list[str], environment: dict[str, str], cwd: str, streams: tuple[str, str, str]) -> None:
    os.environ.clear()
    os.environ.update(environment)
    os.chdir(cwd)
    stdin, stdout, stderr = streams
    _redirect(0, stdin, os.O_RDONLY)
    _redirect(1, stdout, os.O_WRONLY)
    _redirect(2, stderr, os.O_WRONLY)
    sys.stdin = _text_stream(0, "r", sys.__stdin__ or sys.__stdout__)  # type: ignore[arg-type]
    sys.stdout = _text_stream(1, "w", sys.__stdout__)  # type: ignore[arg-type]
    sys.stderr = _text_stream(2, "w", sys.__stderr__)  # type: ignore[arg-type]
    sys.argv = argv
    try:
        runpy.run_module("app", run_name="__main__", alter_sys=True)
    finally:
        atexit._run_exitfuncs()  # as the interpreter does at its end (multiprocessing's child leaves them out)
        sys.stdout.flush()
        sys.stderr.flush()


def run(args: tuple[str, ...], stdin: bytes | None, env: dict[str, str], cwd: Path,
        timeout: float) -> subprocess.CompletedProcess:
    """Like subprocess.run([python, -m, app, *args], input=stdin, capture_output=True, cwd=cwd, env=env)."""
    with tempfile.TemporaryDirectory(prefix="yupana-cli-") as folder:
        paths = tuple(str(Path(folder) / name) for name in ("stdin", "stdout", "stderr"))
        Path(paths[0]).write_bytes(stdin or b"")
        for path in paths[1:]:
            Path(path).touch()
        argv = [str(cwd / "app" / "__main__.py"), *args]
        process = forkserver.context().Process(target=_main_in_child, args=(argv, env, str(cwd), paths))
        process.start()
        process.join(timeout)
        if process.exitcode is None:
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired([sys.executable, "-m", "app", *args], timeout)
        out, err = (Path(path).read_bytes() for path in paths[1:])
    return subprocess.CompletedProcess([sys.executable, "-m", "app", *args], process.exitcode, out, err)
