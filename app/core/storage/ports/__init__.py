"""The storage ports: what the engine's parts may ask of a database, one Protocol per aggregate, whatever the engine.

A part (the outbox, the voids, the catalogue…) receives the repositories it uses, typed by these Protocols, and the
`Database` (its unit of work); it never sees a connection, a cursor or SQL. The implementations live in one
subpackage per database engine (app/core/storage/sqlite/…).
"""
