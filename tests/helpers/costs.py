"""The two costs every test process lowers, and why: a new data folder's key derived from TEST_PASSPHRASE (scrypt at
the shipped cost: ~0.1 s of CPU, ~870 times a run) and a new RSA-2048 key per test certificate (~0.085 s, ~740
times). Together about a quarter of the suite's CPU, on work no test is about.

- scrypt: app.core.platform.secrets.SCRYPT_N, the cost of the salts made from now on, is lowered to the smallest
  cost a salt record may carry. The folders the tests make record it beside their salt, so a `yupana` process at the
  shipped cost opens them too (tests/core/platform/test_scrypt_cost.py holds both costs).
- RSA: `rsa.generate_private_key` hands out real 2048-bit keys from a pool made at first use, in turn. Each
  certificate still differs (its own serial number, subject and dates), and two keys asked for one after the other
  always differ; only the POOL-th key after one repeats it.

Imported by tests/conftest.py (every test process) and preloaded by the forkserver the tests fork `yupana` from
(tests/helpers/forkserver.py). A `yupana` started with subprocess runs at the shipped costs.
"""

from __future__ import annotations

from typing import Any

from cryptography.hazmat.primitives.asymmetric import rsa

from app.core.platform import secrets

POOL = 16

secrets.SCRYPT_N = secrets.SCRYPT_N_RANGE[0]

_pool: list[rsa.RSAPrivateKey] = []
_turn = 0
_generate = rsa.generate_private_key


def _pooled(public_exponent: int, key_size: int, backend: Any = None) -> rsa.RSAPrivateKey:
    global _turn
    if (public_exponent, key_size) != (65537, 2048):
        return _generate(public_exponent, key_size)
    if len(_pool) < POOL:
        _pool.append(_generate(public_exponent, key_size))
        return _pool[-1]
    _turn = (_turn + 1) % POOL
    return _pool[_turn]


if rsa.generate_private_key is _generate:
    rsa.generate_private_key = _pooled
