"""The Qt windows. They reach the engine through its published face only (app.core.api: the Engine and its group
services, records, events and vocabulary).

app.core.api loads each name's module at its first reading, so the main window's frame is built and painted with a
few light modules while the engine itself is imported on a worker (issue 33, start-up; app.gui.app.start). Those
modules load after PySide6, whose import hook (shibokensupport.feature) reads the source of every later module: the
worker pays that, not the first paint."""
