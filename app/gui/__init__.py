"""The Qt windows. They reach the engine through its published face only (app.core.api: the Engine and its group
services, records, events and vocabulary)."""
