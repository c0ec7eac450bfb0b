"""The registry sandbox (RUC, carnet de extranjería, plate lookups) as a fixture, and a way to run one of its own."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from app.sandbox.registry import RegistrySandbox


@contextmanager
def running_registry(**options) -> Iterator[RegistrySandbox]:
    """A registry sandbox on a free loopback port for the duration of the block."""
    box = RegistrySandbox(**options)
    box.start()
    try:
        yield box
    finally:
        box.stop()


@pytest.fixture(scope="module")
def registry_sandbox() -> Iterator[RegistrySandbox]:
    """One registry sandbox per test module; a test that needs its first state calls reset()."""
    with running_registry() as box:
        yield box
