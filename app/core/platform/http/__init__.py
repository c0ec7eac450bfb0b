"""The local HTTP layer: the contract's API on FastAPI + uvicorn, its token, and the server thread that
also carries the messaging webhook listener."""
