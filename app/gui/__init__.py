"""The Qt windows. They call only the engine's public facade (app.core.engine.Engine)."""
