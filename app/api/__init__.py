"""The local HTTP API: the contract's operations on /api/v1/... for a point of sale on this PC (FastAPI on uvicorn).

It sits above the engine, beside the windows and the commands, and reaches it through app/core/api.py only; its
callers (`yupana serve`, the windows) build and start it.
"""
