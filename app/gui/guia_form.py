"""«Nueva guía de remisión» (issue 36, point 4): a remitente's guía (type 09) or a transportista's (31) typed in the
window — private transport with a principal vehicle and up to two secondary ones (with their TUC on a transportista's
guía), the M1/L indicator, public transport's carrier (RUC, name, MTC), the DAM or DS of an import or export — or a
remitente's prefilled «desde un comprobante» (a factura or boleta: its customer, addresses and lines copied by the engine,
engine.invoicing.guia_request_from_voucher). «Emitir guía» builds, signs and sends it to SUNAT's GRE platform on a
worker (engine.invoicing.issue, numbered with the serie's next number); the outcome is shown and the guía's detail
(its CDR, PDF and QR) opens from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QDate, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.api import Emission, statuses, sunat_catalogues

from .completion import CatalogCompleter
from .context import Context
from .field_labels import guia_label_of
from .widgets import ErrorStrip, FieldErrors, MessageBanner, fit_placeholder, fit_to_screen, scrolling

LINE_COLUMNS = ["Código", "Descripción", "Cantidad", "Unidad"]
LINE_KEYS = ["codigo", "descripcion", "cantidad", "unidad"]
IDENTITIES = {code: sunat_catalogues.IDENTITY_DOCUMENTS[code] for code in sunat_catalogues.IDENTITY_DOCUMENTS_OFFERED
              if code != sunat_catalogues.SIN_DOCUMENTO}
GUIA_TYPES = {code: sunat_catalogues.DOCUMENT_TYPES[code]
              for code in (sunat_catalogues.GUIA_REMITENTE, sunat_catalogues.GUIA_TRANSPORTISTA)}
FIRST_SERIES = {sunat_catalogues.GUIA_REMITENTE: "T001", sunat_catalogues.GUIA_TRANSPORTISTA: "V001"}
FREIGHT_PAYERS = {"remitente": "El remitente", "subcontratador": "El subcontratador", "tercero": "Un tercero"}
CUSTOMS_DOCUMENTS = {code: sunat_catalogues.TRANSPORT_DOCUMENTS[code]
                     for code in (sunat_catalogues.DAM, sunat_catalogues.DECLARACION_SIMPLIFICADA)}
PORT_KINDS = {"puerto": "Puerto", "aeropuerto": "Aeropuerto"}
# The catalogue's kinds of remembered transport (engine.catalog.transport): what earlier guías used.
VEHICULO, CONDUCTOR, TRANSPORTISTA, PUNTO = "vehiculo", "conductor", "transportista", "punto"
PLACES = ("partida", "llegada")
SECONDARY_VEHICLES = 2  # SUNAT's sheets: a principal vehicle and at most two secondary ones
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


class VehicleRow(QWidget):
    """A vehicle: its plate and, on a transportista's guía, its TUC (tarjeta única de circulación)."""

    def __init__(self) -> None:
        super().__init__()
        self.placa, self.tuc = QLineEdit(), QLineEdit()
        self.placa.setPlaceholderText("placa: ABC123")
        self.tuc.setPlaceholderText("TUC")
        self.placa.setToolTip("La placa sin guion, p. ej. ABC123")
        self.tuc.setToolTip("Tarjeta única de circulación o certificado de habilitación (10 a 15 letras o dígitos)")
        fit_placeholder(self.placa)
        fit_placeholder(self.tuc)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.placa, 1)
        row.addWidget(self.tuc, 1)

    def value(self, with_tuc: bool) -> dict[str, str]:
        vehicle = {"placa": self.placa.text().strip().upper().replace("-", "").replace(" ", "")}
        if with_tuc:
            vehicle["tuc"] = self.tuc.text().strip().upper()
        return vehicle


class PlaceFields:
    """A departure or arrival point: its ubigeo, address and establishment code, and whose establishment that code
    is when a remembered point named another RUC (shown beside the code; typing the code or address forgets it)."""

    def __init__(self) -> None:
        self.ubigeo, self.direccion, self.codigo = QLineEdit(), QLineEdit(), QLineEdit()
        self.ubigeo.setPlaceholderText("ubigeo, p. ej. 150101")
        self.ubigeo.setMaxLength(6)
        self.codigo.setPlaceholderText("0000 el domicilio fiscal")
        self.codigo.setToolTip("Código del establecimiento en SUNAT (4 dígitos); el traslado entre establecimientos"
                               " lo pide en la partida y en la llegada")
        self.codigo.setMaxLength(4)
        fit_placeholder(self.codigo)
        self.owner = QLabel("")
        self.ruc = ""
        self.establishment = QHBoxLayout()
        self.establishment.addWidget(self.codigo)
        self.establishment.addWidget(self.owner, 1)
        for edit in (self.direccion, self.codigo):
            edit.textEdited.connect(lambda _text: self.set_owner(""))

    def set_owner(self, ruc: str, issuer: str = "") -> None:
        """`ruc`: whose establishment the code is (sent with it); named beside it unless it is the issuer's."""
        self.ruc = ruc
        self.owner.setText(f"local del RUC {ruc}" if ruc and ruc != issuer else "")

    def fill(self, place: dict[str, Any], issuer: str = "") -> None:
        self.ubigeo.setText(place.get("ubigeo") or "")
        self.direccion.setText(place.get("direccion") or "")
        self.codigo.setText(place.get("codigo_establecimiento") or "")
        self.set_owner((place.get("ruc") or "") if self.codigo.text() else "", issuer)

    def value(self) -> dict[str, str]:
        place = {"ubigeo": self.ubigeo.text().strip(), "direccion": self.direccion.text().strip()}
        codigo = self.codigo.text().strip()
        if codigo:
            place["codigo_establecimiento"] = codigo
            if self.ruc:
                place["ruc"] = self.ruc
        return place


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
        self._rows: dict[QWidget, tuple[QFormLayout, QWidget]] = {}  # a field → (its form, what the row holds)
        self.errors = FieldErrors(guia_label_of)  # the engine's problems under their fields, in the window's words
        self.setWindowTitle("Nueva guía de remisión")
        fit_to_screen(self, 1000, 700)
        self.banner = MessageBanner()
        self.emisor = QComboBox()  # a company's name may be long: the whole width, above the two columns
        self.emisor.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        issuer = QFormLayout()
        issuer.addRow("Emisor:", self.errors.wrap(self.emisor, "emisor.ruc"))
        body = QWidget()
        columns = QHBoxLayout(body)
        left, right = QVBoxLayout(), QVBoxLayout()
        columns.addLayout(left, 1)
        columns.addLayout(right, 1)
        left.addWidget(self._transfer_box())
        self.sender_box = self._sender_box()
        left.addWidget(self.sender_box)
        left.addWidget(self._customer_box())
        left.addWidget(self._places_box())
        left.addStretch(1)
        right.addWidget(self._transport_box())
        self.customs_box = self._customs_box()
        right.addWidget(self.customs_box)
        self.related_label = QLabel("Documento relacionado: ninguno")
        self.related_label.setWordWrap(True)
        right.addWidget(self.related_label)
        right.addWidget(self.errors.label_for("documentos_relacionados"))
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
        layout.addWidget(ErrorStrip(self.errors.label_for("items")))
        layout.addLayout(buttons)
        self.emit_button.clicked.connect(self.issue)
        self.detail_button.clicked.connect(self.open_detail)
        close.clicked.connect(self.close)
        self.tipo.currentIndexChanged.connect(self._kind_changed)
        for changed in (self.modalidad.currentIndexChanged, self.motivo.currentIndexChanged,
                        self.pagador_flete.currentIndexChanged, self.m1l.toggled):
            changed.connect(self._show_fields)
        self._show_fields()
        self._offer_remembered()
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

    def _offer_remembered(self) -> None:
        """The vehicles, drivers, carriers and points of earlier guías offered as one types their plate, document,
        RUC or address; choosing one fills the rest (its TUC; the driver's names and licence; the carrier's name and
        MTC; the point's ubigeo and establishment code)."""
        def search(kind: str) -> Callable[[str, int], list]:
            return lambda typed, limit: self.context.engine.catalog.transport(kind, typed, limit)

        self.completions: dict[str, list[CatalogCompleter]] = {VEHICULO: [], CONDUCTOR: [], TRANSPORTISTA: []}
        for vehicle in self.vehicles:
            completion = CatalogCompleter(self, self.context, vehicle.placa, search(VEHICULO),
                                          lambda entry: f"{entry.clave}  TUC {entry.tuc}" if entry.tuc else entry.clave,
                                          min_chars=1)
            completion.chosen.connect(lambda entry, row=vehicle: self.vehicle_chosen(row, entry))
            self.completions[VEHICULO].append(completion)
        driver = CatalogCompleter(self, self.context, self.conductor_dni, search(CONDUCTOR),
                                  lambda entry: f"{entry.clave}  {entry.nombres} {entry.apellidos}", min_chars=1)
        driver.chosen.connect(self.driver_chosen)
        carrier = CatalogCompleter(self, self.context, self.transportista_ruc, search(TRANSPORTISTA),
                                   lambda entry: f"{entry.clave}  {entry.nombres}", min_chars=1)
        carrier.chosen.connect(self.carrier_chosen)
        self.completions[CONDUCTOR].append(driver)
        self.completions[TRANSPORTISTA].append(carrier)
        self.completions[PUNTO] = []
        for place in PLACES:  # the departure and arrival points of earlier guías, as one types the address
            fields = self.places[place]
            completion = CatalogCompleter(self, self.context, fields.direccion, search(PUNTO), point_label)
            completion.chosen.connect(lambda entry, chosen=fields: self.point_chosen(chosen, entry))
            self.completions[PUNTO].append(completion)

    def vehicle_chosen(self, row: VehicleRow, entry: Any) -> None:
        row.placa.setText(entry.clave)
        row.tuc.setText(entry.tuc)

    def driver_chosen(self, entry: Any) -> None:
        self.conductor_dni.setText(entry.clave)
        self.conductor_nombres.setText(entry.nombres)
        self.conductor_apellidos.setText(entry.apellidos)
        self.conductor_licencia.setText(entry.licencia)

    def point_chosen(self, place: PlaceFields, entry: Any) -> None:
        place.fill({"ubigeo": entry.ubigeo, "direccion": entry.direccion,
                    "codigo_establecimiento": entry.codigo_establecimiento, "ruc": entry.ruc},
                   self.emisor.currentData() or "")

    def carrier_chosen(self, entry: Any) -> None:
        self.transportista_ruc.setText(entry.clave)
        self.transportista_nombre.setText(entry.nombres)
        self.transportista_mtc.setText(entry.registro_mtc)

    # ------------------------------------------------------------ the fields

    def _row(self, form: QFormLayout, label: str | QLabel, field: QWidget | QHBoxLayout, *keys: str) -> QWidget:
        """A row of `form`, with the engine's problems of the request's fields `keys` under it; returns the widget
        given (a layout is put in one), by which the row is shown or hidden."""
        if not isinstance(field, QWidget):
            holder = QWidget()
            field.setContentsMargins(0, 0, 0, 0)
            holder.setLayout(field)
            field = holder
        held = self.errors.wrap(field, keys[0]) if keys else field
        for alias in keys[1:]:  # other fields of the same row share its error label
            self.errors.labels[alias] = self.errors.labels[keys[0]]
        form.addRow(label, held)
        self._rows[field] = (form, held)
        return field

    def _show_row(self, field: QWidget, visible: bool) -> None:
        form, held = self._rows[field]
        form.setRowVisible(held, visible)

    def _transfer_box(self) -> QGroupBox:
        box = QGroupBox("Traslado")
        form = QFormLayout(box)
        self.tipo = combo(GUIA_TYPES, with_code=False)
        self.serie = QLineEdit(FIRST_SERIES[sunat_catalogues.GUIA_REMITENTE])
        self.motivo = combo(sunat_catalogues.TRANSFER_MOTIVES)
        self.descripcion_motivo = QLineEdit()
        self.inicio = QDateEdit(QDate.currentDate())
        self.inicio.setCalendarPopup(True)
        self.inicio.setDisplayFormat("dd/MM/yyyy")
        self.peso = QLineEdit()
        self.peso.setPlaceholderText("p. ej. 1250.5")
        self.unidad_peso = combo(sunat_catalogues.WEIGHT_UNITS, with_code=False)
        weight = QHBoxLayout()
        weight.addWidget(self.peso, 1)
        weight.addWidget(self.unidad_peso)
        self._row(form, "Guía de:", self.tipo, "tipo")
        self._row(form, "Serie:", self.serie, "serie", "numero")
        self._row(form, "Motivo del traslado:", self.motivo, "motivo_traslado")
        self._row(form, "Descripción del motivo:", self.descripcion_motivo, "descripcion_motivo")
        self._row(form, "Inicio del traslado:", self.inicio, "fecha_inicio_traslado")
        self.weight_row = self._row(form, "Peso bruto total:", weight, "peso_bruto", "unidad_peso")
        return box

    def _sender_box(self) -> QGroupBox:
        """A transportista's guía: whose goods it carries, and who pays the freight."""
        box = QGroupBox("Remitente y flete")
        form = QFormLayout(box)
        self.remitente_tipo = combo(IDENTITIES, with_code=False)
        self.remitente_numero, self.remitente_nombre = QLineEdit(), QLineEdit()
        self.pagador_flete = combo(FREIGHT_PAYERS, with_code=False)
        self.pagador_ruc, self.pagador_nombre = QLineEdit(), QLineEdit()
        self._row(form, "Documento del remitente:", self.remitente_tipo, "remitente.tipo_documento")
        self._row(form, "Número del remitente:", self.remitente_numero, "remitente.numero_documento", "remitente")
        self._row(form, "Nombre o razón social del remitente:", self.remitente_nombre, "remitente.razon_social")
        self._row(form, "Paga el flete:", self.pagador_flete, "pagador_flete")
        self._row(form, "RUC de quien paga el flete:", self.pagador_ruc, "pagador.numero_documento", "pagador",
                  "pagador.tipo_documento")
        self._row(form, "Razón social de quien paga el flete:", self.pagador_nombre, "pagador.razon_social")
        return box

    def _customer_box(self) -> QGroupBox:
        box = QGroupBox("Destinatario")
        form = QFormLayout(box)
        self.tipo_documento = combo(IDENTITIES, with_code=False)
        self.numero_documento = QLineEdit()
        self.razon_social = QLineEdit()
        self._row(form, "Documento:", self.tipo_documento, "destinatario.tipo_documento")
        self._row(form, "Número:", self.numero_documento, "destinatario.numero_documento", "destinatario")
        self._row(form, "Nombre o razón social:", self.razon_social, "destinatario.razon_social")
        return box

    def _places_box(self) -> QGroupBox:
        box = QGroupBox("Puntos de partida y llegada")
        form = QFormLayout(box)
        self.places = {place: PlaceFields() for place in PLACES}
        self.partida_ubigeo, self.partida_direccion = self.places["partida"].ubigeo, self.places["partida"].direccion
        self.llegada_ubigeo, self.llegada_direccion = self.places["llegada"].ubigeo, self.places["llegada"].direccion
        for place, fields in self.places.items():
            name = place.capitalize()
            self._row(form, f"{name} (ubigeo):", fields.ubigeo, f"{place}.ubigeo")
            self._row(form, f"{name} (dirección):", fields.direccion, f"{place}.direccion", place)
            self._row(form, f"{name} (establecimiento):", fields.establishment, f"{place}.codigo_establecimiento",
                      f"{place}.ruc")
        return box

    def _transport_box(self) -> QGroupBox:
        box = QGroupBox("Transporte")
        form = QFormLayout(box)
        self.modalidad = combo(sunat_catalogues.TRANSPORT_MODES)
        select(self.modalidad, sunat_catalogues.TRANSPORTE_PRIVADO)
        self.m1l = QCheckBox("En vehículos de categoría M1 o L (autos, motos)")
        self.vehicles = [VehicleRow() for _ in range(1 + SECONDARY_VEHICLES)]
        self.placa, self.tuc = self.vehicles[0].placa, self.vehicles[0].tuc
        self.conductor_dni, self.conductor_nombres = QLineEdit(), QLineEdit()
        self.conductor_apellidos, self.conductor_licencia = QLineEdit(), QLineEdit()
        self.transportista_ruc, self.transportista_nombre, self.transportista_mtc = QLineEdit(), QLineEdit(), QLineEdit()
        self._row(form, "Modalidad:", self.modalidad, "modalidad_transporte")
        self._row(form, "", self.m1l, "vehiculo_m1_l")
        self.vehicle_rows = [
            self._row(form, "Vehículo principal:", self.vehicles[0], "vehiculos[0].placa", "vehiculos[0].tuc",
                      "vehiculos"),
            *(self._row(form, f"Vehículo secundario {n}:", vehicle, f"vehiculos[{n}].placa", f"vehiculos[{n}].tuc")
              for n, vehicle in enumerate(self.vehicles[1:], 1))]
        self.driver_rows = [
            self._row(form, "DNI del conductor:", self.conductor_dni, "conductores[0].numero_documento",
                      "conductores", "conductores[0].tipo_documento"),
            self._row(form, "Nombres del conductor:", self.conductor_nombres, "conductores[0].nombres"),
            self._row(form, "Apellidos del conductor:", self.conductor_apellidos, "conductores[0].apellidos"),
            self._row(form, "Licencia de conducir:", self.conductor_licencia, "conductores[0].licencia")]
        self.carrier_rows = [
            self._row(form, "RUC del transportista:", self.transportista_ruc, "transportista.ruc", "transportista"),
            self._row(form, "Razón social del transportista:", self.transportista_nombre,
                      "transportista.razon_social")]
        self.mtc_label = QLabel("Registro MTC:")  # a transportista's guía says «Su registro MTC:»
        self._row(form, self.mtc_label, self.transportista_mtc, "transportista.registro_mtc")
        return box

    def _customs_box(self) -> QGroupBox:
        """Importación and exportación: the DAM or DS, the packages and the port."""
        box = QGroupBox("Importación o exportación")
        form = QFormLayout(box)
        self.dam_tipo = combo(CUSTOMS_DOCUMENTS, with_code=False)
        self.dam_numero = QLineEdit()
        self.dam_numero.setPlaceholderText("aduana-año-régimen-número, p. ej. 118-2026-10-012345")
        self.bultos = QSpinBox()
        self.bultos.setRange(0, 999_999)
        self.puerto_tipo = combo(PORT_KINDS, with_code=False)
        self.puerto_codigo, self.puerto_nombre = QLineEdit(), QLineEdit()
        self.puerto_codigo.setPlaceholderText("p. ej. CLL")
        self.puerto_codigo.setMaxLength(3)
        port = QHBoxLayout()
        port.addWidget(self.puerto_tipo)
        port.addWidget(self.puerto_codigo)
        port.addWidget(self.puerto_nombre, 1)
        self._row(form, "Documento aduanero:", self.dam_tipo)
        self._row(form, "Número de la DAM o DS:", self.dam_numero)
        self._row(form, "Número de bultos:", self.bultos, "numero_bultos", "contenedores")
        self.port_row = self._row(form, "Puerto o aeropuerto:", port, "puerto", "puerto.tipo", "puerto.codigo",
                                  "puerto.nombre")
        return box

    @property
    def carrier_guia(self) -> bool:
        """Whether this is a transportista's guía (31)."""
        return self.tipo.currentData() == sunat_catalogues.GUIA_TRANSPORTISTA

    def _kind_changed(self) -> None:
        if self.serie.text().strip().upper() in FIRST_SERIES.values():  # a serie typed by hand stays
            self.serie.setText(FIRST_SERIES[self.tipo.currentData()])
        self._show_fields()

    def _show_fields(self) -> None:
        """The rows the guía's type, motive and transport ask for; the others hidden."""
        carrier = self.carrier_guia
        motive = self.motivo.currentData()
        public = self.modalidad.currentData() == sunat_catalogues.TRANSPORTE_PUBLICO
        m1l = not carrier and self.m1l.isChecked()
        for field, visible in ((self.motivo, not carrier), (self.modalidad, not carrier), (self.m1l, not carrier),
                               (self.descripcion_motivo, not carrier and motive == sunat_catalogues.MOTIVO_OTROS)):
            self._show_row(field, visible)
        self.sender_box.setVisible(carrier)
        third = self.pagador_flete.currentData() == "tercero"
        self._show_row(self.pagador_ruc, third)
        self._show_row(self.pagador_nombre, third)
        self.customs_box.setVisible(not carrier and motive in sunat_catalogues.MOTIVES_OF_CUSTOMS)
        vehicles = carrier or (not public and not m1l)
        for row in self.vehicle_rows + self.driver_rows:
            self._show_row(row, vehicles)
        for vehicle in self.vehicles:
            vehicle.tuc.setVisible(carrier)
        for row in self.carrier_rows:
            self._show_row(row, not carrier and public and not m1l)
        self._show_row(self.transportista_mtc, carrier or (public and not m1l))
        self.mtc_label.setText("Su registro MTC:" if carrier else "Registro MTC:")

    def add_line(self, line: dict[str, Any]) -> None:
        row = self.lines.rowCount()
        self.lines.insertRow(row)
        for column, key in enumerate(LINE_KEYS):
            self.lines.setItem(row, column, QTableWidgetItem(str(line.get(key) or "")))

    # ------------------------------------------------------------ prefilled, and read back

    def fill(self, request: dict[str, Any]) -> None:
        """Shows a guía request (the engine's, prefilled from a voucher) in the fields."""
        select(self.tipo, request.get("tipo") or sunat_catalogues.GUIA_REMITENTE)
        self.serie.setText(request.get("serie") or FIRST_SERIES[self.tipo.currentData()])
        ruc = str((request.get("emisor") or {}).get("ruc") or "")
        if ruc and self.emisor.findData(ruc) < 0:
            self.emisor.addItem(ruc, ruc)  # shown before the issuers are read
        select(self.emisor, ruc)
        select(self.motivo, request.get("motivo_traslado"))
        destinatario = request.get("destinatario") or {}
        select(self.tipo_documento, destinatario.get("tipo_documento"))
        self.numero_documento.setText(destinatario.get("numero_documento") or "")
        self.razon_social.setText(destinatario.get("razon_social") or "")
        for place, fields in self.places.items():
            fields.fill(request.get(place) or {}, ruc)
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
            "tipo": self.tipo.currentData(), "serie": self.serie.text().strip().upper(), "numero": 1,
            "emisor": {"ruc": self.emisor.currentData() or ""},
            "destinatario": {"tipo_documento": self.tipo_documento.currentData(),
                             "numero_documento": self.numero_documento.text().strip(),
                             "razon_social": self.razon_social.text().strip()},
            "fecha_inicio_traslado": self.inicio.date().toString("yyyy-MM-dd"), "peso_bruto": self.peso.text().strip(),
            "unidad_peso": self.unidad_peso.currentData(),
            "partida": self.places["partida"].value(), "llegada": self.places["llegada"].value(),
            "items": self._lines(),
        }
        related = list(self.related)
        if self.carrier_guia:
            request.update(self._sender())
        else:
            request.update({"motivo_traslado": self.motivo.currentData(),
                            "modalidad_transporte": self.modalidad.currentData(), "vehiculo_m1_l": self.m1l.isChecked()})
            if request["motivo_traslado"] == sunat_catalogues.MOTIVO_OTROS:
                request["descripcion_motivo"] = self.descripcion_motivo.text().strip()
            if request["motivo_traslado"] in sunat_catalogues.MOTIVES_OF_CUSTOMS:
                customs, document = self._customs()
                request.update(customs)
                related += [document] if document else []
        if related:
            request["documentos_relacionados"] = related
        request.update(self._transport())
        return request

    def _sender(self) -> dict[str, Any]:
        """A transportista's guía: the remitente and who pays the freight."""
        sender: dict[str, Any] = {
            "remitente": {"tipo_documento": self.remitente_tipo.currentData(),
                          "numero_documento": self.remitente_numero.text().strip(),
                          "razon_social": self.remitente_nombre.text().strip()},
            "pagador_flete": self.pagador_flete.currentData()}
        if sender["pagador_flete"] == "tercero":
            sender["pagador"] = {"numero_documento": self.pagador_ruc.text().strip(),
                                 "razon_social": self.pagador_nombre.text().strip()}
        return sender

    def _customs(self) -> tuple[dict[str, Any], dict[str, str] | None]:
        """Importación / exportación: (the packages and the port, the DAM or DS when a number was typed)."""
        customs: dict[str, Any] = {}
        if self.bultos.value():
            customs["numero_bultos"] = self.bultos.value()
        if self.puerto_codigo.text().strip():
            customs["puerto"] = {"tipo": self.puerto_tipo.currentData(),
                                 "codigo": self.puerto_codigo.text().strip().upper(),
                                 "nombre": self.puerto_nombre.text().strip()}
        numero = self.dam_numero.text().strip()
        return customs, {"tipo": self.dam_tipo.currentData(), "numero": numero} if numero else None

    def _transport(self) -> dict[str, Any]:
        carrier = self.carrier_guia
        if not carrier and self.m1l.isChecked():
            return {"vehiculos": [], "conductores": []}
        if not carrier and self.modalidad.currentData() == sunat_catalogues.TRANSPORTE_PUBLICO:
            return {"vehiculos": [], "conductores": [], "transportista": {
                "ruc": self.transportista_ruc.text().strip(), "razon_social": self.transportista_nombre.text().strip(),
                "registro_mtc": self.transportista_mtc.text().strip()}}
        principal, *secondary = self.vehicles
        vehicles = [principal.value(carrier)] + [vehicle.value(carrier) for vehicle in secondary
                                                 if vehicle.placa.text().strip()]
        transport: dict[str, Any] = {
            "vehiculos": vehicles,
            "conductores": [{"numero_documento": self.conductor_dni.text().strip(),
                             "nombres": self.conductor_nombres.text().strip(),
                             "apellidos": self.conductor_apellidos.text().strip(),
                             "licencia": self.conductor_licencia.text().strip().upper()}]}
        if carrier:
            transport["transportista"] = {"registro_mtc": self.transportista_mtc.text().strip()}
        return transport

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
        self.errors.clear()
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
        """The engine's refusal: in the banner and under each field it names, with the window's labels."""
        self.state.setText("")
        self.banner.show_error(exc, guia_label_of)
        self.errors.show(exc)

    def open_detail(self) -> QDialog | None:
        if self.emission is None:
            return None
        detail = self.detail = self.open_voucher(self.emission.voucher_id)
        return detail


def point_label(entry: Any) -> str:
    """A remembered point in the suggestions: its address, ubigeo and establishment code."""
    code = f" · establecimiento {entry.codigo_establecimiento}" if entry.codigo_establecimiento else ""
    return f"{entry.direccion} ({entry.ubigeo}){code}"


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
