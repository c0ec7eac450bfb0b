"""`make soak`: a shop's day compressed (issue 31, item 6), run as `python -m scripts.soak --minutes N`.

- harness.py: the temp data folder, the SUNAT, registry and gateway sandboxes (in this process, so their counters and
  fault queues are at hand), `yupana serve` as a real process killed and restarted, the two webhook subscribers;
- shop.py: the day's work in threads (API issuing, `yupana lote`, `yupana anular`, `yupana resumen`, messages, RUC
  look-ups), the killer and the fault injector;
- checks.py: what must hold at the end, as pure functions over what was observed (tests/cli/test_soak.py feeds them
  crafted violating data, so each check is shown to fail);
- __main__.py: the phases (chaos with kills, quiet without, settle), the table and the exit code.

docs/testing.md («make soak») says what MINUTES controls and what each check means.
"""
