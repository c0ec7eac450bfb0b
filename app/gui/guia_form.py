"""«Nueva guía de remisión» (issue 36, point 4): a remitente's guía (type 09) typed in the window, or prefilled «desde
un comprobante» (a factura or boleta: its customer, addresses and lines copied by the engine,
engine.invoicing.guia_request_from_voucher). «Emitir guía» builds, signs and sends it to SUNAT's GRE platform on a
worker (engine.invoicing.issue, numbered with the serie's next number); the outcome is shown and the guía's detail
(its CDR, PDF and QR) opens from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QDate, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDateEdit,
    QDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.api import Emission, statuses, sunat_catalogues

from .context import Context
from .widgets import MessageBanner, fit_to_screen, scrolling

LINE_COLUMNS = ["Código", "Descripción", "Cantidad", "Unidad"]
LINE_KEYS = ["codigo", "descripcion", "cantidad", "unidad"]
IDENTITIES = {code: sunat_catalogues.IDENTITY_DOCUMENTS[code] for code in sunat_catalogues.IDENTITY_DOCUMENTS_OFFERED
              if code != sunat_catalogues.SIN_DOCUMENTO}
STATE_WORDS = {statuses.ACEPTADO: "Aceptada", statuses.OBSERVADO: "Aceptada con observaciones",
               statuses.RECHAZADO: "Rechazada"}


def combo(choices: dict[str, str], *, with_code: bool = True) -> QComboBox:
    box = QComboBox()
    for code, name in choices.items():
        box.addItem(f"{code} - {name}" if with_code else name, code)
    return box


def select(box: QComboBox, code: str | None) -> None:
    index = box.findData(code)
    if index >= 0:
        box.setCurrentIndex(index)


def cell_text(table: QTableWidget, row: int, column: int) -> str:
    cell = table.item(row, column)
    return cell.text().strip() if cell is not None else ""


def state_words(emission: Emission) -> str:
    """«Aceptada», «Rechazada» or «Pendiente de SUNAT», with SUNAT's words when it gave some."""
    outcome = emission.outcome
    if outcome is None:
        return f"No enviada: {emission.refusal}" if emission.refusal else "Pendiente de SUNAT"
    words = STATE_WORDS.get(outcome.estado, "Pendiente de SUNAT")
    detail = outcome.descripcion or outcome.motivo_pendiente
    return f"{words}: {detail.rstrip('.')}." if detail else words


class GuiaForm(QDialog):
    """The guía's request as fields; `emission` holds the outcome once «Emitir guía» has run."""

    emitted = Signal(object)  # the Emission

    def __init__(self, context: Context, open_voucher: Callable[[int], QDialog],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context, self.open_voucher = context, open_voucher  # the detail's opener (app.gui.voucher_detail)
        self.companies: dict[str, Any] = {}  # the issuers, by RUC, once read
        self.related: list[dict[str, Any]] = []
        self.emission: Emission | None = None
        self.setWindowTitle("Nueva guía de remisión")
        fit_to_screen(self, 900, 680)
        self.banner = MessageBanner()
        self.emisor = QComboBox()  # a company's name may be long: the whole width, above the two columns
        self.emisor.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        issuer = QFormLayout()
        issuer.addRow("Emisor:", self.emisor)
        body = QWidget()
        columns = QHBoxLayout(body)
        left, right = QVBoxLayout(), QVBoxLayout()
        columns.addLayout(left, 1)
        columns.addLayout(right, 1)
        left.addWidget(self._transfer_box())
        left.addWidget(self._customer_box())
        left.addWidget(self._places_box())
        right.addWidget(self._transport_box())
        self.related_label = QLabel("Documento relacionado: ninguno")
        self.related_label.setWordWrap(True)
        right.addWidget(self.related_label)
        right.addStretch(1)
        self.lines = QTableWidget(0, len(LINE_COLUMNS))
        self.lines.setHorizontalHeaderLabels(LINE_COLUMNS)
        self.lines.horizontalHeader().setStretchLastSection(False)
        self.lines.setColumnWidth(1, 380)
        self.lines.setMinimumHeight(140)
        add_line, remove_line = QPushButton("Agregar línea"), QPushButton("Quitar línea")
        add_line.clicked.connect(lambda: self.add_line({"unidad": "NIU"}))
        remove_line.clicked.connect(lambda: self.lines.removeRow(max(self.lines.currentRow(), 0)))
        line_buttons = QHBoxLayout()
        line_buttons.addWidget(QLabel("Bienes que se trasladan:"), 1)
        line_buttons.addWidget(add_line)
        line_buttons.addWidget(remove_line)
        self.state = QLabel("")
        self.state.setWordWrap(True)
        self.emit_button = QPushButton("Emitir guía")
        self.emit_button.setStyleSheet("font-weight: bold;")
        self.detail_button = QPushButton("Ver la guía")
        self.detail_button.setEnabled(False)
        close = QPushButton("Cerrar")
        buttons = QHBoxLayout()
        buttons.addWidget(self.state, 1)
        buttons.addWidget(self.detail_button)
        buttons.addWidget(self.emit_button)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addLayout(issuer)
        layout.addWidget(scrolling(body), 1)
        layout.addLayout(line_buttons)
        layout.addWidget(self.lines)
        layout.addLayout(buttons)
        self.emit_button.clicked.connect(self.issue)
        self.detail_button.clicked.connect(self.open_detail)
        close.clicked.connect(self.close)
        self.modalidad.currentIndexChanged.connect(self._transport_fields)
        self._transport_fields()
        self.context.workers.run(self, self.context.engine.admin.companies, done=self._companies,
                                 failed=self.banner.show_error)

    def _companies(self, companies: list[Any]) -> None:
        chosen = self.emisor.currentData()
        self.companies = {company.ruc: company for company in companies}
        self.emisor.clear()
        for company in companies:
            self.emisor.addItem(f"{company.razon_social} ({company.ruc})", company.ruc)
        select(self.emisor, chosen)
        if chosen is None and companies and not self.partida_direccion.text():
            self.partida_ubigeo.setText(companies[0].ubigeo)  # goods usually leave from the issuer's address
            self.partida_direccion.setText(companies[0].direccion)

    # ------------------------------------------------------------ the fields

    def _transfer_box(self) -> QGroupBox:
        box = QGroupBox("Traslado")
        form = QFormLayout(box)
        self.serie = QLineEdit("T001")
        self.motivo = combo(sunat_catalogues.TRANSFER_MOTIVES)
        self.inicio = QDateEdit(QDate.currentDate())
        self.inicio.setCalendarPopup(True)
        self.inicio.setDisplayFormat("dd/MM/yyyy")
        self.peso = QLineEdit()
        self.peso.setPlaceholderText("p. ej. 1250.5")
        self.unidad_peso = combo(sunat_catalogues.WEIGHT_UNITS, with_code=False)
        weight = QHBoxLayout()
        weight.addWidget(self.peso, 1)
        weight.addWidget(self.unidad_peso)
        form.addRow("Serie:", self.serie)
        form.addRow("Motivo del traslado:", self.motivo)
        form.addRow("Inicio del traslado:", self.inicio)
        form.addRow("Peso bruto total:", weight)
        return box

    def _customer_box(self) -> QGroupBox:
        box = QGroupBox("Destinatario")
        form = QFormLayout(box)
        self.tipo_documento = combo(IDENTITIES, with_code=False)
        self.numero_documento = QLineEdit()
        self.razon_social = QLineEdit()
        form.addRow("Documento:", self.tipo_documento)
        form.addRow("Número:", self.numero_documento)
        form.addRow("Nombre o razón social:", self.razon_social)
        return box

    def _places_box(self) -> QGroupBox:
        box = QGroupBox("Puntos de partida y llegada")
        form = QFormLayout(box)
        self.partida_ubigeo, self.partida_direccion = QLineEdit(), QLineEdit()
        self.llegada_ubigeo, self.llegada_direccion = QLineEdit(), QLineEdit()
        for edit in (self.partida_ubigeo, self.llegada_ubigeo):
            edit.setPlaceholderText("ubigeo, p. ej. 150101")
            edit.setMaxLength(6)
        form.addRow("Partida (ubigeo):", self.partida_ubigeo)
        form.addRow("Partida (dirección):", self.partida_direccion)
        form.addRow("Llegada (ubigeo):", self.llegada_ubigeo)
        form.addRow("Llegada (dirección):", self.llegada_direccion)
        return box

    def _transport_box(self) -> QGroupBox:
        box = QGroupBox("Transporte")
        form = QFormLayout(box)
        self.modalidad = combo(sunat_catalogues.TRANSPORT_MODES)
        select(self.modalidad, sunat_catalogues.TRANSPORTE_PRIVADO)
        self.placa = QLineEdit()
        self.placa.setPlaceholderText("sin guion, p. ej. ABC123")
        self.conductor_dni, self.conductor_nombres = QLineEdit(), QLineEdit()
        self.conductor_apellidos, self.conductor_licencia = QLineEdit(), QLineEdit()
        self.transportista_ruc, self.transportista_nombre, self.transportista_mtc = QLineEdit(), QLineEdit(), QLineEdit()
        form.addRow("Modalidad:", self.modalidad)
        self.private_rows = [("Placa del vehículo:", self.placa), ("DNI del conductor:", self.conductor_dni),
                             ("Nombres del conductor:", self.conductor_nombres),
                             ("Apellidos del conductor:", self.conductor_apellidos),
                             ("Licencia de conducir:", self.conductor_licencia)]
        self.public_rows = [("RUC del transportista:", self.transportista_ruc),
                            ("Razón social del transportista:", self.transportista_nombre),
                            ("Registro MTC:", self.transportista_mtc)]
        for label, edit in self.private_rows + self.public_rows:
            form.addRow(label, edit)
        self.transport_form = form
        return box

    def _transport_fields(self) -> None:
        private = self.modalidad.currentData() == sunat_catalogues.TRANSPORTE_PRIVADO
        for _, edit in self.private_rows:
            self.transport_form.setRowVisible(edit, private)
        for _, edit in self.public_rows:
            self.transport_form.setRowVisible(edit, not private)

    def add_line(self, line: dict[str, Any]) -> None:
        row = self.lines.rowCount()
        self.lines.insertRow(row)
        for column, key in enumerate(LINE_KEYS):
            self.lines.setItem(row, column, QTableWidgetItem(str(line.get(key) or "")))

    # ------------------------------------------------------------ prefilled, and read back

    def fill(self, request: dict[str, Any]) -> None:
        """Shows a guía request (the engine's, prefilled from a voucher) in the fields."""
        self.serie.setText(request.get("serie") or "T001")
        ruc = str((request.get("emisor") or {}).get("ruc") or "")
        if ruc and self.emisor.findData(ruc) < 0:
            self.emisor.addItem(ruc, ruc)  # shown before the issuers are read
        select(self.emisor, ruc)
        select(self.motivo, request.get("motivo_traslado"))
        destinatario = request.get("destinatario") or {}
        select(self.tipo_documento, destinatario.get("tipo_documento"))
        self.numero_documento.setText(destinatario.get("numero_documento") or "")
        self.razon_social.setText(destinatario.get("razon_social") or "")
        for place, ubigeo, direccion in (("partida", self.partida_ubigeo, self.partida_direccion),
                                         ("llegada", self.llegada_ubigeo, self.llegada_direccion)):
            ubigeo.setText((request.get(place) or {}).get("ubigeo") or "")
            direccion.setText((request.get(place) or {}).get("direccion") or "")
        self.related = list(request.get("documentos_relacionados") or [])
        names = ", ".join(f"{sunat_catalogues.TRANSPORT_DOCUMENTS.get(d['tipo'], d['tipo'])} {d['numero']}"
                          for d in self.related)
        self.related_label.setText(f"Documento relacionado: {names or 'ninguno'}")
        self.lines.setRowCount(0)
        for line in request.get("items") or []:
            self.add_line(line)

    def request(self) -> dict[str, Any]:
        """The guía's request as operation 1 takes it (the engine checks it and names what is wrong)."""
        request: dict[str, Any] = {
            "tipo": sunat_catalogues.GUIA_REMITENTE, "serie": self.serie.text().strip().upper(), "numero": 1,
            "emisor": {"ruc": self.emisor.currentData() or ""},
            "destinatario": {"tipo_documento": self.tipo_documento.currentData(),
                             "numero_documento": self.numero_documento.text().strip(),
                             "razon_social": self.razon_social.text().strip()},
            "motivo_traslado": self.motivo.currentData(), "modalidad_transporte": self.modalidad.currentData(),
            "fecha_inicio_traslado": self.inicio.date().toString("yyyy-MM-dd"), "peso_bruto": self.peso.text().strip(),
            "unidad_peso": self.unidad_peso.currentData(),
            "partida": {"ubigeo": self.partida_ubigeo.text().strip(), "direccion": self.partida_direccion.text().strip()},
            "llegada": {"ubigeo": self.llegada_ubigeo.text().strip(), "direccion": self.llegada_direccion.text().strip()},
            "items": self._lines(),
        }
        if self.related:
            request["documentos_relacionados"] = self.related
        request.update(self._transport())
        return request

    def _transport(self) -> dict[str, Any]:
        if self.modalidad.currentData() == sunat_catalogues.TRANSPORTE_PUBLICO:
            return {"vehiculos": [], "conductores": [], "transportista": {
                "ruc": self.transportista_ruc.text().strip(), "razon_social": self.transportista_nombre.text().strip(),
                "registro_mtc": self.transportista_mtc.text().strip()}}
        return {"vehiculos": [{"placa": self.placa.text().strip().upper().replace("-", "")}],
                "conductores": [{"numero_documento": self.conductor_dni.text().strip(),
                                 "nombres": self.conductor_nombres.text().strip(),
                                 "apellidos": self.conductor_apellidos.text().strip(),
                                 "licencia": self.conductor_licencia.text().strip()}]}

    def _lines(self) -> list[dict[str, str]]:
        lines = []
        for row in range(self.lines.rowCount()):
            line = {key: cell_text(self.lines, row, column) for column, key in enumerate(LINE_KEYS)}
            if any(line.values()):
                lines.append({key: value for key, value in line.items() if value or key != "codigo"})
        return lines

    # ------------------------------------------------------------ «Emitir guía»

    def issue(self) -> None:
        self.banner.clear()
        self.state.setText("Enviando la guía a SUNAT…")
        self.context.workers.run(self, self.context.engine.invoicing.issue, self.request(), next_number=True,
                                 done=self._issued, failed=self._failed, busy=[self.emit_button])

    def _issued(self, emission: Emission) -> None:
        self.emission = emission
        number = emission.nombre_archivo.removesuffix(".xml").split("-", 2)[-1]  # RUC-09-T001-1 → T001-1
        self.state.setText(f"Guía {number}: {state_words(emission)}")
        self.detail_button.setEnabled(True)
        self.emit_button.setEnabled(False)  # issued: a second click would issue a second guía
        self.emitted.emit(emission)

    def _failed(self, exc: BaseException) -> None:
        self.state.setText("")
        self.banner.show_error(exc)

    def open_detail(self) -> QDialog | None:
        if self.emission is None:
            return None
        detail = self.detail = self.open_voucher(self.emission.voucher_id)
        return detail


def open_guia_form(context: Context, open_voucher: Callable[[int], QDialog], parent: QWidget | None = None,
                   voucher_id: int | None = None) -> GuiaForm:
    """Opens the window; «desde un comprobante» (voucher_id) it is filled on a worker with the engine's request.
    `open_voucher` shows a stored voucher's detail (the guía's, once issued)."""
    form = GuiaForm(context, open_voucher, parent)
    if voucher_id is not None:
        context.workers.run(form, context.engine.invoicing.guia_request_from_voucher, voucher_id,
                            done=lambda prefill: form.fill(prefill.request), failed=form.banner.show_error)
    form.show()
    return form
