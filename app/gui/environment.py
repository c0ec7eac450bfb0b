"""Changing the environment in the windows: what changes, said before it happens, and the banner of beta and
production. The names, labels and destinations come from app.core.api's environments; only colours live here."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QLabel, QWidget

from app.core.api import BETA, ENVIRONMENTS, PRODUCCION, SANDBOX

from .dialogs import confirm

if TYPE_CHECKING:
    from .context import Context

COLOURS = {SANDBOX: "#00796b", BETA: "#e65100", PRODUCCION: "#c62828"}


def badge(name: str) -> tuple[str, str]:
    """(text, colour) of the status bar's badge."""
    known = ENVIRONMENTS.get(name)
    return (known.badge, COLOURS[name]) if known else (name.upper(), "#555")


def confirm_switch(owner: QWidget, context: Context, target: str, on_yes: Callable[[], None]) -> None:
    """Read what changes on a worker, then ask (without blocking); `on_yes` runs only on «Sí». The box is kept
    on `owner.environment_box` (tests answer it)."""

    def ask(text: str) -> None:
        box = confirm(owner, "Cambiar de entorno", text + "\n\n¿Cambiar de entorno?", on_yes)
        setattr(owner, "environment_box", box)  # noqa: B010 - any widget may ask, so it is not a declared attribute

    context.workers.run(owner, context.engine.admin.switch_summary, target, done=ask)


class EnvironmentBanner(QLabel):
    """A band across the main window in beta and production, so nobody issues there by mistake."""

    TEXTS = {
        BETA: "SUNAT BETA · Los comprobantes van al servidor de pruebas de SUNAT: no tienen valor tributario.",
        PRODUCCION: "PRODUCCIÓN · Los comprobantes que emita son reales y se envían a SUNAT.",
    }

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("environmentBanner")
        self.setWordWrap(True)
        self.environment = ""
        self.hide()

    def show_environment(self, name: str) -> None:
        self.environment = name
        text = self.TEXTS.get(name)
        if text is None:
            self.hide()
            return
        self.setText(text)
        self.setToolTip("Entorno de trabajo: se cambia en Ajustes → Entorno.")
        self.setStyleSheet(f"QLabel#environmentBanner {{ background: {COLOURS[name]}; color: white; "
                           "font-weight: bold; padding: 6px 12px; }")
        self.show()
