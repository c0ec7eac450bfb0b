"""The PostgreSQL engine (issue 34): one shared database for the desks of a business, behind the same ports as the
SQLite engine. Each repository here is the SQLite one (its SQL written once, in the common dialect, translated by
`dialect.py`) with the few methods PostgreSQL says otherwise: search (trigram indexes instead of FTS5), a failed
statement inside a transaction (a savepoint: PostgreSQL aborts the whole transaction there) and its errors."""
