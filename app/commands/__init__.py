"""One module per feature command of `yupana` (cert, sandbox, serve, padron, demo).

Each module defines `register(subparsers, summary)` adding its parser with `set_defaults(func=...)`;
the handler takes the parsed arguments and returns the exit code.
"""
