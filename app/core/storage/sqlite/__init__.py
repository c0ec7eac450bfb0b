"""The SQLite engine: the database of a data folder (WAL, one writer, durable commits), its schema's history and the
repositories over it. Nothing outside app/core/storage imports sqlite3 or sqlite-utils."""
