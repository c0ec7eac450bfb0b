"""Storage behind ports: every SQL statement and every database driver of the engine lives under this package.

- `ports/`: one repository Protocol per aggregate (vouchers and their texts, submissions, summaries and voids,
  customers and products, messaging, the registry cache, companies, settings and secrets, API tokens) and the
  unit of work that opens transactions (`database.py`); the engine's parts depend on these only.
- `sqlite/`: the SQLite engine (the embedded default, one file in the data folder): the database, its schema's
  history (`migrations/`) and one repository module per aggregate.
- `sql.py`: the common dialect's helpers.

`app.core.storage.engines.open_database(path)` is the one way in for the engine.
"""
