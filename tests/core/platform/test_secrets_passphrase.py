"""Keys without a system keyring: a passphrase typed by a person, never stored, checked against a probe."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

import pytest

from app.core.engine import Engine
from app.core.errors import ErrorCode, YupanaError
from app.core.platform.secrets import LOCKED, NEW_PASSPHRASE, UNLOCKED
from tests.helpers.base import ISSUER_RUC, ROOT

PASSPHRASE = "frase larga de la bodega"
CHOOSE, REPEAT, ASK = "caracteres): ", "confirmar: ", "al escribir): "


@pytest.fixture
def no_keyring(monkeypatch):
    monkeypatch.delenv("YUPANA_PASSPHRASE", raising=False)
    monkeypatch.setenv("YUPANA_KEYRING", "0")


def test_states_from_new_to_unlocked_and_locked_again(no_keyring, home):
    with Engine(home) as engine:
        assert engine.admin.secret_state() == NEW_PASSPHRASE
        with pytest.raises(YupanaError) as short:
            engine.admin.unlock_secrets("corta")
        assert short.value.code == ErrorCode.INVALID_INPUT and "8 caracteres" in short.value.message
        engine.admin.unlock_secrets(PASSPHRASE)
        assert engine.admin.secret_state() == UNLOCKED
        engine.invoicing.create_test_certificate(ISSUER_RUC)
    db = (home / "yupana.db").read_bytes() if (home / "yupana.db").exists() else b""
    assert PASSPHRASE.encode() not in db  # never stored
    with Engine(home) as engine:
        assert engine.admin.secret_state() == LOCKED
        with pytest.raises(YupanaError) as wrong:
            engine.admin.unlock_secrets("otra frase de ocho")
        assert wrong.value.code == ErrorCode.UNAUTHORIZED and "no es correcta" in wrong.value.message
        with pytest.raises(YupanaError) as locked:
            engine.invoicing.create_test_certificate(ISSUER_RUC)
        assert locked.value.code == ErrorCode.NOT_CONFIGURED and "frase secreta" in locked.value.message
        engine.admin.unlock_secrets(PASSPHRASE)
        assert engine.invoicing.certificates()[0].ruc == ISSUER_RUC


def test_the_environment_variable_still_opens_the_keys_for_automation(no_keyring, home, monkeypatch):
    with Engine(home) as engine:
        engine.admin.unlock_secrets(PASSPHRASE)
        engine.invoicing.create_test_certificate(ISSUER_RUC)
    monkeypatch.setenv("YUPANA_PASSPHRASE", PASSPHRASE)
    with Engine(home) as engine:
        assert engine.admin.secret_state() == UNLOCKED


def _run_in_terminal(args: list[str], answers: list[tuple[str, str]], env: dict[str, str],
                     timeout: float = 60) -> str:
    """Run `yupana ARGS` on a pseudo-terminal; for each (prompt, answer), type the answer once the prompt shows.

    Typing before the prompt is printed would be lost: getpass flushes pending input when it hides the echo."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "app", *args], stdin=follower, stdout=follower, stderr=follower,
                            cwd=ROOT, env=env, close_fds=True)
    os.close(follower)
    output, pending, answered_at = b"", list(answers), 0
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1)
            if ready:
                try:
                    chunk = os.read(leader, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                output += chunk
                if pending and output.find(pending[0][0].encode(), answered_at) >= 0:
                    answered_at = len(output)
                    os.write(leader, (pending.pop(0)[1] + "\n").encode())
            elif proc.poll() is not None:
                break
        assert proc.wait(timeout=10) == 0, output.decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    return output.decode(errors="replace")


def test_the_command_asks_with_a_hidden_prompt_when_a_person_is_at_the_terminal(no_keyring, home):
    env = {k: v for k, v in os.environ.items() if k != "YUPANA_PASSPHRASE"}
    env["YUPANA_HOME"] = str(home)
    created = _run_in_terminal(["cert", "new-test", "--ruc", ISSUER_RUC], [(CHOOSE, "corta"), (CHOOSE, PASSPHRASE), (REPEAT, PASSPHRASE)], env)
    assert "Elija una frase secreta" in created and "muy corta" in created
    assert PASSPHRASE not in created  # the prompt hides what is typed
    again = _run_in_terminal(["cert", "new-test", "--ruc", ISSUER_RUC], [(ASK, PASSPHRASE)], env)
    assert "Frase secreta de Yupana" in again and "Elija" not in again
    assert PASSPHRASE not in again


def test_without_a_terminal_or_variable_the_command_says_what_to_do(no_keyring, home):
    env = {k: v for k, v in os.environ.items() if k != "YUPANA_PASSPHRASE"}
    env["YUPANA_HOME"] = str(home)
    done = subprocess.run([sys.executable, "-m", "app", "cert", "new-test", "--ruc", ISSUER_RUC], capture_output=True,
                          cwd=ROOT, env=env, stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 1
    assert "YUPANA_PASSPHRASE" in done.stderr.decode()


def test_asking_for_the_state_never_prompts(no_keyring, home):
    asked = []
    with Engine(home) as engine:
        engine.admin.set_passphrase_prompt(lambda new: asked.append(new) or PASSPHRASE)
        assert engine.admin.secret_state() == NEW_PASSPHRASE and asked == []
        engine.invoicing.create_test_certificate(ISSUER_RUC)  # a key is needed: now it asks, once
        assert asked == [True] and engine.admin.secret_state() == UNLOCKED
