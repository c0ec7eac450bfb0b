"""The customers and products catalogue (issue 19): two stores, prices with IGV and CSV files.

- `customers` and `products`: the stores, each with its own migrations (registered when the module is imported,
  as the engine does, so opening a Storage afterwards creates the tables);
- `prices`: the value without IGV derived from a price with IGV, so the payable total is what was typed;
- `csvfiles`: preview, all-or-nothing import and export of both as CSV, as Excel in Peru writes them;
- `text` and `codes`: accent folding for search, and the catalogue codes the stores accept.

No Qt, no engine: the stores only store, the pure modules know nothing of storage (the voucher builder imports
`prices`, so this package imports no store). See docs/catalog.md.
"""
