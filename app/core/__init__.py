"""The engine: contract, operations, storage, adapters and listeners. It never imports Qt."""
