"""The Qt windows. They reach the engine through its published face only (app.core.api: the Engine and its group
services, records, events and vocabulary)."""

# The engine's published module is loaded before Qt (issue 33, start-up): once PySide6 is imported, its import hook
# (shibokensupport.feature) reads the source of every module imported after it (inspect.getsource, to look for
# "PySide6"), which made loading the engine's few hundred modules a fifth to a third slower when the windows came first.
import app.core.api  # noqa: E402,F401 - imported for its side effect of being loaded before PySide6
