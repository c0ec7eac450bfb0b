"""The voucher form: type, serie and número, customer with lookup, items with live totals, payment terms,
the modified voucher of a note, «Emitir»."""

from __future__ import annotations

import logging
import weakref
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QDate, QRegularExpression, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QRegularExpressionValidator, QValidator
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.api import (
    FREE_AFFECTATIONS,
    INSTALMENTS_REASON,
    STEPS,
    ErrorDetail,
    YupanaError,
    clock,
    fmt,
    invalid_many,
    prices,
    round_money,
    statuses,
    sunat_catalogues,
)

from .catalog import searchable
from .completion import CatalogCompleter, ScanField
from .context import Context
from .emission import emit, plain_outcome
from .instalments import InstalmentsBox
from .note_reference import NoteReferenceBox, issued_vouchers
from .numbers import parse_decimal
from .printing import PrintPanel
from .products import UNIT_CHOICES
from .voucher_extras import DetraccionBox, DetraccionHint, ExtrasBox
from .voucher_sale_terms import SaleTermsBox
from .voucher_types import TYPES
from .widgets import (
    Badge,
    ErrorStrip,
    FieldErrors,
    MessageBanner,
    cell,
    cell_widget,
    combo_width,
    fit_placeholder,
    fit_to_screen,
    header_width,
    python_date,
    scrolling,
)

if TYPE_CHECKING:
    from app.core.api import Customer, EmissionOutcome, Product, RucRecord, TotalsPreview, Voucher, VoucherDraft

log = logging.getLogger(__name__)
cat = sunat_catalogues
FACTURA, RUC, DNI = cat.FACTURA, cat.RUC, cat.DNI
NOTE_TYPES = cat.NOTES
DOCUMENT_TYPES = {code: cat.IDENTITY_DOCUMENTS[code] for code in cat.IDENTITY_DOCUMENTS_OFFERED}  # catalogue 06
LINE_AFFECTATIONS = cat.AFFECTATIONS  # catalogue 07: what a form line offers
# What the number box accepts for each document type (catalogue 06): its hint and the characters it takes.
DOCUMENT_INPUTS = {
    RUC: ("RUC: 11 dígitos", r"\d{0,11}"),
    DNI: ("DNI: 8 dígitos", r"\d{0,8}"),
    cat.CARNET_EXTRANJERIA: ("Carnet de extranjería: hasta 12 letras o dígitos", r"[A-Za-z0-9]{0,12}"),
    cat.PASAPORTE: ("Pasaporte: hasta 12 letras o dígitos", r"[A-Za-z0-9]{0,12}"),
    cat.SIN_DOCUMENTO: ("Sin documento: no hace falta número", r""),
}
ITEM_COLUMNS = ["Descripción", "Cantidad", "Valor unitario (sin IGV)", "Descuento (sin IGV)", "Afectación",
                "Bolsa (ICBPER)", "Valor de venta", "IGV", "Unidad"]
DISCOUNT, AFFECTATION, BAG, VALUE, IGV = 3, 4, 5, 6, 7  # columns after the description, quantity and price
UNIT = 8  # catalogue 03: the last column of the table, shown right after the quantity
UNIT_WIDTH = 150
# Catalogue 03 as the product editor offers it (UNIT_CHOICES: the shop's units with their Spanish names, then SUNAT's
# code and description for the rest): each line's «Unidad» lists these labels, in this order (the code is the
# label's position: a combo box filled with one addItems call, no per-item data).
UNIT_CODES = [code for code, _ in UNIT_CHOICES]
UNIT_LABELS = [label for _, label in UNIT_CHOICES]
UNIT_INDEX = {code: index for index, code in enumerate(UNIT_CODES)}
PRICE_HEADERS = {False: "Valor unitario (sin IGV)", True: "Precio unitario (con IGV)"}  # «Precios incluyen IGV»
ERROR_BRUSH = QBrush(QColor("#f8d7da"))
TOTAL_ROWS = [("gravadas", "Op. gravadas"), ("exoneradas", "Op. exoneradas"), ("inafectas", "Op. inafectas"),
              ("exportacion", "Op. de exportación"), ("gratuitas", "Op. gratuitas (no se cobran)"),
              ("descuentos", "Descuentos (sin IGV)"), ("igv", "IGV (18 %)"), ("icbper", "ICBPER (bolsas)"),
              ("anticipos", "Anticipos (se descuentan)"), ("total", "Importe total"),
              ("detraccion", "Detracción (en soles)"), ("percepcion", "Percepción (en soles)"),
              ("total_con_percepcion", "Total con percepción"), ("retencion", "Retención del IGV")]
OPTIONAL_TOTALS = frozenset({"exportacion", "gratuitas", "descuentos", "icbper", "detraccion", "anticipos",
                             "percepcion", "total_con_percepcion", "retencion"})
SOLES_TOTALS = frozenset({"detraccion", "percepcion", "total_con_percepcion"})  # SUNAT wants these in soles
CONTINGENCY_SERIE = "0001"  # the first serie a contingency voucher is proposed (four digits, SUNAT's 1001)
PREFERRED_SIZE = (1180, 860)  # on a screen that has room; fit_to_screen takes less on a smaller one
MIN_VISIBLE_LINES = 5  # the lines table never shows fewer
BANNER_DETAILS_HEIGHT = 70  # «Detalles» of a message, in a short screen's budget
AFFECTATION_WIDTH = 170  # the afectación column, wider when a line shows a longer name

LINE_PRODUCT = Qt.ItemDataRole.UserRole  # on a line's description cell: the product's code, unit and bag flag

# Drafts (docs/gui.md, «Borradores»): saved a moment after the last change, and when closing asks to.
AUTOSAVE_MS = 2000
SAVE_DRAFT, DISCARD, KEEP_EDITING = "Guardar borrador", "Descartar", "Seguir editando"
CONTINUE, LATER = "Continuar", "Ahora no"
_OPEN_FORMS: weakref.WeakSet[VoucherForm] = weakref.WeakSet()  # the drafts they hold are not offered to another


def has_content(content: dict[str, Any]) -> bool:
    """Whether a form's content (VoucherForm.draft_content) holds something a person typed: a customer or a line."""
    if any((content.get("receptor") or {}).get(key) for key in ("numero_documento", "razon_social", "direccion")):
        return True
    return any(line.get("descripcion") or line.get("precio") or line.get("descuento")
               for line in content.get("items") or [])


def draft_age(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 1:
        return "hace un momento"
    if minutes < 120:
        return f"hace {minutes} min"
    hours = minutes // 60
    return f"hace {hours} h" if hours < 48 else f"hace {hours // 24} días"


def draft_offer(draft: VoucherDraft, others: int) -> str:
    """The question a saved draft is offered with."""
    cliente = draft.cliente or "sin cliente"
    more = f" (y {others} borrador{'es' if others > 1 else ''} más)" if others else ""
    return (f"Tiene un comprobante sin terminar ({cliente}, {fmt.money(draft.total, draft.moneda)}, "
            f"{draft_age(draft.age_seconds)}){more}. ¿Continuar?")


def shown_total(totals: TotalsPreview, key: str) -> Decimal:
    """The amount the panel's row `key` shows (the detracción is 0.00 when there is none)."""
    amount = getattr(totals, key)
    return Decimal("0.00") if amount is None else amount


def customer_label(customer: Customer) -> str:
    return f"{customer.numero or '—'} · {customer.nombre}"


def product_label(product: Product) -> str:
    barcode = f" · {product.codigo_barras}" if product.codigo_barras else ""
    with_igv = "con IGV" if product.precio_incluye_igv else "sin IGV"
    return f"{product.codigo}{barcode} · {product.descripcion} · {product.precio} ({with_igv})"


class VoucherForm(QDialog):
    """Non-modal; emits `emitted(outcome)` when a voucher went through the three steps."""

    emitted = Signal(object)  # the core's EmissionOutcome
    draft_saved = Signal(int)  # the id of the draft just stored

    def __init__(self, context: Context, parent: QWidget | None = None, *, offer_drafts: bool = True) -> None:
        super().__init__(parent)
        self.context = context
        self.offer_drafts = offer_drafts  # a saved draft of this desk is offered once the form has loaded
        self.draft_id: int | None = None
        self._saved_content: dict[str, Any] | None = None  # what the draft holds
        self._settled: dict[str, Any] | None = None  # the content of the voucher just issued: nothing to keep
        self._closing = False
        self.close_box: QMessageBox | None = None
        self.draft_box: QMessageBox | None = None
        self.autosave = QTimer(self)
        self.autosave.setSingleShot(True)
        self.autosave.setInterval(AUTOSAVE_MS)
        self.autosave.timeout.connect(self.save_draft_now)
        application = QApplication.instance()
        if application is not None:  # the program ending (its main window closed) keeps what is typed
            application.aboutToQuit.connect(self.save_draft_now)
        self.engine = context.engine
        self.prices_with_igv_by_ruc: dict[str, bool] = {}  # each company's default for «Precios incluyen IGV»
        self.account_by_ruc: dict[str, str | None] = {}  # each company's Banco de la Nación account (detracción)
        self.sent: dict[str, Any] | None = None  # the request of the last «Emitir»
        self.reference_total = Decimal("0.00")  # the total of the voucher a note modifies, when picked
        self.issued: list[Voucher] = []
        self.outcome: EmissionOutcome | None = None
        self.setWindowTitle("Nuevo comprobante")
        fit_to_screen(self, *PREFERRED_SIZE)
        self.errors = FieldErrors()
        self.banner = MessageBanner()
        self.banner.details.setMaximumHeight(BANNER_DETAILS_HEIGHT)  # it scrolls: the lines keep their room
        self.extras = ExtrasBox(self.errors)  # global discount, references, operation type, exchange rate
        self.detraccion_hint = DetraccionHint(self.errors)
        self.detraccion = DetraccionBox(self.errors)
        self.terms = SaleTermsBox(self.errors)  # anticipos, percepción, retención, vencimiento, lugar de entrega
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        # The boxes above the lines scroll on a short screen; the lines (at least MIN_VISIBLE_LINES rows), the totals
        # and «Emitir» stay in view whatever the screen and however many field errors show.
        upper = QWidget()
        upper_layout = QVBoxLayout(upper)
        upper_layout.setContentsMargins(0, 0, 0, 0)
        header_box = self._header_box()
        issuer = QHBoxLayout()  # the company's whole name, across the form (as long as it is)
        issuer.addWidget(QLabel("Emisor:"))
        issuer.addWidget(self.errors.wrap(self.emisor, "emisor"))
        issuer.addStretch(1)
        upper_layout.addLayout(issuer)
        top = QHBoxLayout()
        left = QVBoxLayout()
        left.addWidget(header_box)
        self.extras.add_row(self.detraccion_hint)  # the suggestion and «Agregar detracción» under the references
        left.addWidget(self.extras)
        left.addStretch(1)
        top.addLayout(left, 1)
        right = QVBoxLayout()
        right.addWidget(self._customer_box())
        self.instalments = InstalmentsBox(self.errors)
        self.instalments.hide()
        right.addWidget(self.instalments)
        right.addWidget(self.detraccion)
        right.addStretch(1)
        top.addLayout(right, 1)
        upper_layout.addLayout(top)
        upper_layout.addWidget(self.terms)
        self.note = NoteReferenceBox(self.errors)
        self.note.hide()
        self.note.reference_chosen.connect(self._reference_chosen)
        self.note.motivo.currentIndexChanged.connect(lambda: self._payment_changed())
        self.note.letter_changed.connect(self._reference_letter_changed)
        upper_layout.addWidget(self.note)
        for edit in upper.findChildren(QLineEdit):  # every hint read whole (the number's: the longest one)
            if edit.placeholderText():
                fit_placeholder(edit)
        fit_placeholder(self.doc_number, *(hint for hint, _ in DOCUMENT_INPUTS.values()))
        self.upper = scrolling(upper)
        layout.addWidget(self.upper)
        layout.addWidget(self._items_box(), 1)
        layout.addLayout(self._footer())
        self.extras.changed.connect(self.update_totals)
        self.detraccion.changed.connect(self.update_totals)
        self.terms.changed.connect(self.update_totals)
        self.detraccion_hint.button.clicked.connect(self.open_detraccion)
        self.fecha.dateChanged.connect(self.update_totals)  # the tax per bag is the emission year's
        self.add_line()
        self._watch_changes()
        _OPEN_FORMS.add(self)
        self._load()

    # ------------------------------------------------------------ layout

    def _header_box(self) -> QGroupBox:
        box = QGroupBox("Comprobante")
        form = QFormLayout(box)
        self.emisor = QComboBox()
        self.emisor.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.tipo = QComboBox()
        for code, (label, _) in TYPES.items():
            self.tipo.addItem(label, code)
        self.serie = QLineEdit("F001")
        self.serie.setMaxLength(4)
        # A contingency voucher (SUNAT's systems down, or issued on paper and reported later) takes a numeric serie
        # of four digits (0001) instead of F001/B001: docs/vouchers.md, SUNAT's 1001.
        self.contingencia = QCheckBox("Contingencia")
        self.contingencia.setToolTip("Comprobante de contingencia: serie de 4 dígitos (p. ej. 0001) en lugar de "
                                     "F001 o B001.")
        self.numero = QSpinBox()
        self.numero.setRange(1, 99_999_999)
        # The number the engine proposed, while the box still shows it: «Emitir» then takes the serie's next number
        # when it stores the voucher (another desk may issue on the serie meanwhile); a number typed is kept.
        self.proposed_numero: int | None = None
        self.fecha = QDateEdit(QDate(clock.today()))
        self.fecha.setCalendarPopup(True)
        self.fecha.setDisplayFormat("dd/MM/yyyy")
        self.moneda = QComboBox()
        self.moneda.addItem("Soles (PEN)", "PEN")
        self.moneda.addItem("Dólares (USD)", "USD")
        self.forma_pago = QComboBox()
        self.forma_pago.addItem("Contado", "Contado")
        self.forma_pago.addItem("Crédito (en cuotas)", "Credito")
        self.header_form = form
        form.addRow("Tipo:", self.errors.wrap(self.tipo, "tipo"))
        serie_row = QWidget()
        row = QHBoxLayout(serie_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.serie)
        row.addWidget(self.contingencia)
        row.addWidget(QLabel("Número:"))
        row.addWidget(self.numero, 1)
        form.addRow("Serie:", self.errors.wrap(serie_row, "serie"))
        self.errors.labels["numero"] = self.errors.labels["serie"]
        form.addRow("Fecha de emisión:", self.errors.wrap(self.fecha, "fecha_emision"))
        form.addRow("Moneda:", self.errors.wrap(self.moneda, "moneda"))
        form.addRow("Forma de pago:", self.forma_pago)  # its errors show under the cuotas
        self.tipo.currentIndexChanged.connect(self._type_changed)
        self.emisor.currentIndexChanged.connect(self._issuer_changed)
        self.serie.editingFinished.connect(self.propose_numero)
        self.contingencia.toggled.connect(self._contingency_toggled)
        self.forma_pago.currentIndexChanged.connect(self._payment_changed)
        return box

    def _customer_box(self) -> QGroupBox:
        box = QGroupBox("Cliente")
        form = QFormLayout(box)
        self.doc_type = QComboBox()
        for code, label in DOCUMENT_TYPES.items():
            self.doc_type.addItem(label, code)
        self.doc_number = QLineEdit()
        self.lookup_button = QPushButton("Buscar")
        self.customer_name = QLineEdit()
        self.customer_name.setPlaceholderText("nombre o número: se completa con sus clientes")
        # Customers complete by document number or by name as one types (the catalogue, on a worker)
        self.number_completion = CatalogCompleter(self, self.context, self.doc_number, self.engine.catalog.customers,
                                                  customer_label)
        self.name_completion = CatalogCompleter(self, self.context, self.customer_name, self.engine.catalog.customers,
                                                customer_label)
        self.number_completion.chosen.connect(self.customer_chosen)
        self.number_completion.answered.connect(self._new_ruc)
        self.name_completion.chosen.connect(self.customer_chosen)
        self.customer_address = QLineEdit()
        self.customer_address.setPlaceholderText("opcional")
        number_row = QWidget()
        row = QHBoxLayout(number_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.doc_number, 1)
        row.addWidget(self.lookup_button)
        form.addRow("Documento:", self.errors.wrap(self.doc_type, "receptor.tipo_documento"))
        form.addRow("Número:", self.errors.wrap(number_row, "receptor.numero_documento"))
        self.errors.labels["receptor.ruc"] = self.errors.labels["receptor.numero_documento"]
        self.errors.labels["receptor"] = self.errors.labels["receptor.numero_documento"]
        form.addRow("Nombre o razón social:", self.errors.wrap(self.customer_name, "receptor.razon_social"))
        form.addRow("Dirección:", self.errors.wrap(self.customer_address, "receptor.direccion"))
        self.lookup_button.clicked.connect(self.lookup_customer)
        self.doc_type.currentIndexChanged.connect(self._document_type_changed)
        self._document_type_changed()
        return box

    def _document_type_changed(self) -> None:
        """The number box takes only what the chosen document can hold, and says what that is."""
        hint, pattern = DOCUMENT_INPUTS[self.doc_type.currentData()]
        validator = QRegularExpressionValidator(QRegularExpression(pattern), self.doc_number)
        checked = validator.validate(self.doc_number.text(), 0)  # (state, text, position); the stub says object
        if isinstance(checked, tuple) and checked[0] != QValidator.State.Acceptable:
            self.doc_number.clear()
        self.doc_number.setValidator(validator)
        self.doc_number.setPlaceholderText(hint)
        self.doc_number.setEnabled(bool(pattern))
        self.lookup_button.setEnabled(self.doc_type.currentData() == RUC)

    def _items_box(self) -> QGroupBox:
        box = QGroupBox("Detalle")
        layout = QVBoxLayout(box)
        self.items = QTableWidget(0, len(ITEM_COLUMNS))
        self.items.setHorizontalHeaderLabels(ITEM_COLUMNS)
        self.items.horizontalHeader().moveSection(UNIT, 2)  # seen after «Cantidad»; its logical column is the last
        self.items.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column, width in ((1, 70), (2, 160), (DISCOUNT, 120), (AFFECTATION, AFFECTATION_WIDTH), (BAG, 100), (VALUE, 100),
                              (IGV, 80), (UNIT, UNIT_WIDTH)):  # and never narrower than the header's words (the price's two wordings)
            texts = PRICE_HEADERS.values() if column == 2 else [ITEM_COLUMNS[column]]
            self.items.setColumnWidth(column, max(width, *(header_width(self.items, text) for text in texts)))
        self.items.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.items.itemChanged.connect(self.update_totals)
        self.moneda.currentIndexChanged.connect(self._currency_changed)  # the totals show «S/» or «US$»
        self.product_field = ScanField()
        self.product_field.setPlaceholderText("Agregar producto: escanee o escriba su código o descripción")
        fit_placeholder(self.product_field)
        self.product_completion = CatalogCompleter(self, self.context, self.product_field,
                                                   self.engine.catalog.products, product_label, min_chars=1)
        self.product_completion.chosen.connect(self.add_product)
        self.product_field.popup = self.product_completion.completer.popup()
        self.product_field.scanned.connect(self.product_scanned)
        self.prices_with_igv = QCheckBox("Precios incluyen IGV")
        self.prices_with_igv.setToolTip("Escriba el precio que paga el cliente; Yupana calcula el valor sin IGV de "
                                        "modo que el total sea el precio por la cantidad.")
        self.prices_with_igv.toggled.connect(self._prices_mode_changed)
        buttons = QHBoxLayout()  # one row with the product field: the lines keep the height
        buttons.addWidget(self.product_field, 1)
        self.add_line_button = QPushButton("Agregar línea")
        self.remove_line_button = QPushButton("Quitar línea")
        self.save_product_button = QPushButton("Guardar línea en Productos…")
        self.save_product_button.setToolTip("La línea elegida pasa al catálogo: la próxima vez se completa sola.")
        buttons.addWidget(self.add_line_button)
        buttons.addWidget(self.remove_line_button)
        buttons.addWidget(self.save_product_button)
        buttons.addWidget(self.prices_with_igv)
        self.add_line_button.clicked.connect(lambda: self.add_line())
        self.remove_line_button.clicked.connect(self.remove_line)
        self.save_product_button.clicked.connect(self.save_line_as_product)
        self.product_editor: QDialog | None = None
        self.items.setMinimumHeight(self._lines_height(MIN_VISIBLE_LINES))
        layout.addLayout(buttons)
        layout.addWidget(self.items, 1)
        self.items_errors = ErrorStrip(self.errors.label_for("items"))  # one line per bad line: it scrolls
        layout.addWidget(self.items_errors)
        return box

    def _lines_height(self, rows: int) -> int:
        """The table's height showing `rows` lines under its header, with the horizontal scroll bar it may need."""
        table = self.items
        table.ensurePolished()
        return (table.horizontalHeader().sizeHint().height() + rows * table.verticalHeader().defaultSectionSize()
                + table.horizontalScrollBar().sizeHint().height() + 2 * table.frameWidth())

    def _footer(self) -> QHBoxLayout:
        footer = QHBoxLayout()
        result = QVBoxLayout()
        self.progress = QProgressBar()
        self.progress.setRange(0, len(STEPS))
        self.progress.hide()
        self.step_label = QLabel("")
        self.result_badge = Badge()
        self.result_badge.hide()
        self.result_text = QLabel("")
        self.result_text.setWordWrap(True)
        self.result_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        result.addWidget(self.progress)
        result.addWidget(self.step_label)
        result.addWidget(self.result_badge, 0, Qt.AlignmentFlag.AlignLeft)
        result.addWidget(self.result_text)
        result.addStretch(1)
        # The totals in two columns of name and amount (the operations on the left; discounts, IGV, ICBPER, the
        # total and the detracción on the right), «Emitir» beside them: the footer stays short on a 728 px screen.
        totals = QGridLayout()
        self.total_labels: dict[str, QLabel] = {}
        self.total_names: dict[str, QLabel] = {}
        per_column = (len(TOTAL_ROWS) + 1) // 2
        for index, (key, label) in enumerate(TOTAL_ROWS):
            value = QLabel("0.00")
            value.setAlignment(Qt.AlignmentFlag.AlignRight)
            if key == "total":
                value.setStyleSheet("font-weight: bold; font-size: 16px;")
            self.total_labels[key] = value
            self.total_names[key] = QLabel(label + ":")
            row, column = index % per_column, 3 * (index // per_column)
            totals.addWidget(self.total_names[key], row, column)
            totals.addWidget(value, row, column + 1)
            if key in OPTIONAL_TOTALS:  # shown only when the voucher has them
                self.total_names[key].hide()
                value.hide()
        totals.setColumnMinimumWidth(2, 18)  # between the two columns
        totals.setRowStretch(per_column, 1)
        buttons = QVBoxLayout()
        self.emit_button = QPushButton("Emitir")
        self.emit_button.setDefault(True)
        self.emit_button.setMinimumHeight(38)
        self.emit_button.setStyleSheet("font-weight: bold; font-size: 15px;")
        buttons.addWidget(self.emit_button)
        self.emit_button.clicked.connect(self.emit_voucher)
        # After «Emitir», the printed voucher is one click away (Qt's print dialog, the company's format).
        self.print_button = QPushButton("Imprimir")
        self.print_button.setMinimumHeight(32)
        self.print_button.hide()
        self.print_button.clicked.connect(self.print_voucher)
        buttons.addWidget(self.print_button)
        buttons.addStretch(1)
        self.printing: PrintPanel | None = None
        footer.addLayout(result, 3)
        footer.addLayout(totals, 3)
        footer.addLayout(buttons, 1)
        return footer

    # ------------------------------------------------------------ loading and proposals

    def _load(self) -> None:
        def load() -> tuple[list, list, dict, dict, list]:
            companies = self.engine.admin.companies()
            defaults = {c.ruc: self.engine.admin.prices_include_igv(c.ruc) for c in companies}
            accounts = {c.ruc: self.engine.admin.detraction_account(c.ruc) for c in companies}
            drafts = self.engine.invoicing.drafts() if self.offer_drafts else []
            return companies, issued_vouchers(self.engine), defaults, accounts, drafts

        self.context.workers.run(self, load, done=self._loaded, failed=self.banner.show_error)

    def _loaded(self, loaded: tuple[list, list, dict, dict, list]) -> None:
        companies, self.issued, self.prices_with_igv_by_ruc, self.account_by_ruc, drafts = loaded
        self.emisor.blockSignals(True)
        for company in companies:
            self.emisor.addItem(f"{company.razon_social} ({company.ruc})", company.ruc)
        self.emisor.blockSignals(False)
        if not companies:
            self.banner.show_message("Primero registre su empresa en Ajustes → Empresas.", "warning")
        self._issuer_changed()
        self.offer_draft(drafts)

    def is_note(self) -> bool:
        return self.tipo.currentData() in NOTE_TYPES

    def _type_changed(self) -> None:
        code = self.tipo.currentData()
        note = code in NOTE_TYPES
        self.note.setVisible(note)
        self.terms.set_type(code)
        self.header_form.setRowVisible(self.forma_pago, not note)  # a note carries no payment terms
        self._payment_changed()
        if note:
            self.note.set_note_type(code)
            self.doc_type.setCurrentIndex(self.doc_type.findData(RUC if self.note.letter() == "F" else DNI))
        else:
            self.doc_type.setCurrentIndex(self.doc_type.findData(RUC if code == FACTURA else DNI))
        self.serie.setText(self._default_serie())
        self.propose_numero()

    def _default_serie(self) -> str:
        """The serie proposed for the type: a contingency voucher's numeric one, F001/B001, a note's letter of the
        voucher it modifies."""
        code = self.tipo.currentData()
        if self.contingencia.isChecked():
            return CONTINGENCY_SERIE
        if code in NOTE_TYPES:
            return self.note.letter() + TYPES[code][1][1:]
        return str(TYPES[code][1])

    def _contingency_toggled(self) -> None:
        self.serie.setText(self._default_serie())
        self.propose_numero()

    def _payment_changed(self) -> None:
        self.instalments.setVisible(self._on_credit())
        invoice = self.tipo.currentData() in cat.SALES
        self.extras.descuento_global.setEnabled(invoice)
        self.extras.tipo_operacion.setEnabled(invoice)
        if self.tipo.currentData() != FACTURA:
            self.detraccion.hide()
        self.update_totals()

    def _currency_changed(self) -> None:
        self.extras.set_currency(self.moneda.currentData())
        self.update_totals()

    def open_detraccion(self) -> None:
        """The suggestion's button: the section opens with the suggested code and its rate."""
        self.detraccion.open_with(self.detraccion_hint.codigo)
        if not self.detraccion.cuenta.text().strip():  # the company's account, remembered from its last detracción
            self.detraccion.cuenta.setText(self.account_by_ruc.get(self.emisor.currentData()) or "")

    def _issuer_changed(self) -> None:
        """The issued vouchers a note may modify are the chosen issuer's."""
        ruc = self.emisor.currentData()
        self.note.set_issued([voucher for voucher in self.issued if voucher.emisor_ruc == ruc])
        self.prices_with_igv.setChecked(self.prices_with_igv_by_ruc.get(ruc, False))  # the company's default
        self.propose_numero()

    def _prices_mode_changed(self) -> None:
        """The price column takes prices with IGV, or values without it; the totals follow."""
        header = self.items.horizontalHeaderItem(2)
        if header is not None:  # the headers are set with the table
            header.setText(PRICE_HEADERS[self.prices_with_igv.isChecked()])
        self.update_totals()

    def _reference_letter_changed(self, letter: str) -> None:
        """A note's serie starts with the letter of the voucher it modifies (F… factura, B… boleta)."""
        serie = self.serie.text().strip().upper()
        if serie.isdigit():  # a contingency note's serie has no letter
            return
        self.serie.setText(letter + (serie[1:] if len(serie) == 4 else TYPES[self.tipo.currentData()][1][1:]))
        self.propose_numero()

    def _reference_chosen(self, voucher: Voucher) -> None:
        """The note goes to the customer (and in the currency) of the voucher it modifies."""
        kind = voucher.receptor_tipo_documento or (RUC if voucher.tipo == FACTURA else DNI)
        self.doc_type.setCurrentIndex(max(self.doc_type.findData(kind), 0))
        self.doc_number.setText(voucher.receptor_numero_documento or "")
        self.customer_name.setText(voucher.receptor_nombre or "")
        self.moneda.setCurrentIndex(max(self.moneda.findData(voucher.moneda or "PEN"), 0))
        self.reference_total = Decimal(str(voucher.total or "0.00"))
        self.update_totals()

    def propose_numero(self) -> None:
        ruc, tipo, serie = self.emisor.currentData(), self.tipo.currentData(), self.serie.text().strip().upper()
        if not ruc or not serie:
            return
        self.context.workers.run(self, self.engine.invoicing.next_number, ruc, tipo, serie,
                                 done=self._numero_proposed, failed=lambda exc: None)

    def _numero_proposed(self, numero: int) -> None:
        self.numero.setValue(numero)
        self.proposed_numero = numero

    def customer_chosen(self, customer: Customer) -> None:
        """A saved customer fills the document, the name and the address."""
        for completion in (self.number_completion, self.name_completion):
            completion.cancel()
        self.doc_type.setCurrentIndex(max(self.doc_type.findData(customer.tipo_documento), 0))
        self.doc_number.setText(customer.numero or "")
        self.customer_name.setText(customer.nombre)
        self.customer_address.setText(customer.direccion or "")
        self.errors.clear()

    def _new_ruc(self, typed: str, found: list) -> None:
        """A whole RUC typed that no saved customer has: the registry fills in the customer (and keeps it)."""
        if (not found and len(typed) == 11 and typed.isdigit() and self.doc_type.currentData() == RUC
                and not self.customer_name.text().strip()):
            self.lookup_customer()

    def lookup_customer(self) -> None:
        number = self.doc_number.text().strip()
        self.errors.clear()
        if self.doc_type.currentData() != RUC:  # the registries answer RUCs; other documents are typed in
            label = self.errors.labels["receptor.numero_documento"]
            label.setText("Solo se pueden buscar RUC; escriba el nombre del cliente.")
            label.show()
            return
        self.context.workers.run(self, lambda: self.engine.lookups.ruc(number), done=self._customer_found,
                                 failed=self._customer_not_found, busy=[self.lookup_button])

    def _customer_found(self, record: RucRecord) -> None:
        self.doc_type.setCurrentIndex(self.doc_type.findData(RUC))
        self.customer_name.setText(record.razon_social or "")
        self.customer_address.setText(record.direccion or "")

    def _customer_not_found(self, exc: BaseException) -> None:
        label = self.errors.labels["receptor.numero_documento"]
        label.setText(getattr(exc, "message", str(exc)))
        label.show()

    # ------------------------------------------------------------ items and totals

    def add_line(self, descripcion: str = "", cantidad: str = "1", valor: str = "", afectacion: str = cat.GRAVADO,
                 descuento: str = "", bolsas: bool = False, unidad: str = cat.UNIDAD) -> int:
        """A line; a free line (afectación 11-16, 21, 31-37) takes its reference value as the price; its unit is any
        code of catalogue 03 (NIU by default), typed into by any part of its name («saco», «FOT»)."""
        self.items.blockSignals(True)
        row = self.items.rowCount()
        self.items.insertRow(row)
        for column, text in enumerate([descripcion, cantidad, valor, descuento]):
            self.items.setItem(row, column, QTableWidgetItem(text))
        cell(self.items, row, DISCOUNT).setToolTip("Descuento de la línea: un monto sin IGV que reduce su valor.")
        combo = QComboBox()
        for code, label in LINE_AFFECTATIONS.items():
            combo.addItem(label, code)
        combo.setCurrentIndex(combo.findData(afectacion))
        combo.setToolTip("En una línea gratuita (transferencia gratuita) el precio escrito es el valor referencial "
                         "sin IGV: no se cobra, se informa en «Op. gratuitas».")
        combo.currentIndexChanged.connect(self.update_totals)
        combo.currentIndexChanged.connect(self._fit_affectations)
        self.items.setCellWidget(row, AFFECTATION, combo)
        self._fit_affectations()
        bag = QTableWidgetItem("")
        bag.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
        bag.setCheckState(Qt.CheckState.Checked if bolsas else Qt.CheckState.Unchecked)
        bag.setToolTip("Bolsa plástica (ICBPER): la cantidad es el número de bolsas; paga el impuesto por bolsa.")
        self.items.setItem(row, BAG, bag)
        units = QComboBox()
        units.addItems(UNIT_LABELS)
        searchable(units)
        units.setToolTip("Unidad de medida (catálogo 03 de SUNAT): escriba parte del nombre o del código, p. ej. "
                         "«saco», «rollo», «pie».")
        self.items.setCellWidget(row, UNIT, units)
        self.set_line_unit(row, unidad)
        units.currentIndexChanged.connect(self.autosave.start)
        for column in (VALUE, IGV):
            item = QTableWidgetItem("")
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.items.setItem(row, column, item)
        self.items.blockSignals(False)
        self.update_totals()
        return row

    def set_line_unit(self, row: int, unidad: str) -> None:
        """The line's unit; a code outside catalogue 03 (a product imported from a CSV) is added as it is, after
        the catalogue's, and the engine names it (2936)."""
        units = cell_widget(self.items, row, UNIT, QComboBox)
        index = UNIT_INDEX.get(unidad)
        if index is None:
            found = units.findText(unidad, Qt.MatchFlag.MatchExactly)
            if found < 0:
                units.addItem(unidad)
                found = units.count() - 1
            index = found
        units.setCurrentIndex(index)

    def line_unit(self, row: int) -> str:
        """The code of the line's unit (catalogue 03, or the code a product brought as it is)."""
        units = cell_widget(self.items, row, UNIT, QComboBox)
        index = units.currentIndex()
        if 0 <= index < len(UNIT_CODES):
            return UNIT_CODES[index]
        return units.currentText().strip() if index >= 0 else cat.UNIDAD

    def _fit_affectations(self) -> None:
        """The afectación column as wide as the longest one the lines show (a free line's names are long)."""
        combos = [cell_widget(self.items, row, AFFECTATION, QComboBox) for row in range(self.items.rowCount())
                  if isinstance(self.items.cellWidget(row, AFFECTATION), QComboBox)]
        needed = [combo_width(combo) for combo in combos]
        self.items.setColumnWidth(AFFECTATION, max([AFFECTATION_WIDTH, *needed]))

    def product_scanned(self) -> None:
        """Enter in the product field: a scanner typed a barcode (or a person a whole code): its product fills a
        line. Anything else waits for a suggestion to be chosen."""
        typed = self.product_field.text().strip()
        self.product_completion.cancel()
        if not typed:
            return
        self.context.workers.run(self, self.engine.catalog.scanned_product, typed,
                                 done=lambda product: self._scanned(typed, product), failed=self.banner.show_error)

    def _scanned(self, typed: str, product: Product | None) -> None:
        if product is not None:
            self.add_product(product)
            return
        label = self.errors.labels["items"]
        label.setText(f"No hay un producto con el código o código de barras «{typed}»: elija uno de la lista o "
                      "regístrelo en Productos.")
        label.show()
        self.product_completion.search_now()

    def add_product(self, product: Product) -> int:
        """A product fills the first empty line (or a new one): description, quantity 1, price, affectation, and
        its code, unit and bag flag for the request. Its price is converted when the form's «Precios incluyen IGV»
        says otherwise."""
        self.product_completion.cancel()
        self.errors.labels["items"].hide()
        row = next((r for r in range(self.items.rowCount()) if not self._text(r, 0) and not self._text(r, 2)), None)
        if row is None:
            row = self.add_line()
        self.items.blockSignals(True)
        description = cell(self.items, row, 0)
        description.setText(product.descripcion)
        bag = " · bolsa plástica (ICBPER)" if product.icbper else ""
        description.setToolTip(f"Código {product.codigo} · unidad {product.unidad}{bag}")
        cell(self.items, row, 1).setText("1")
        cell(self.items, row, 2).setText(str(self._price_for_form(product)))
        combo = cell_widget(self.items, row, AFFECTATION, QComboBox)
        combo.setCurrentIndex(max(combo.findData(product.tipo_afectacion_igv), 0))
        cell(self.items, row, BAG).setCheckState(Qt.CheckState.Checked if product.icbper else Qt.CheckState.Unchecked)
        self.set_line_unit(row, product.unidad or cat.UNIDAD)
        description.setData(LINE_PRODUCT, {"codigo": product.codigo, "unidad": product.unidad,
                                           "icbper": product.icbper, "codigo_detraccion": product.codigo_detraccion})
        self.items.blockSignals(False)
        self.update_totals()
        self.product_field.clear()
        self.product_field.setFocus()
        return row

    def _price_for_form(self, product: Product) -> Decimal:
        """The product's price as the price column takes it now (with IGV or without)."""
        rate = prices.rate_for(product.tipo_afectacion_igv)
        wanted = self.prices_with_igv.isChecked()
        if product.precio_incluye_igv == wanted or rate == 0:
            return product.precio
        if wanted:  # stored without IGV, typed with it: the price a customer pays for one unit
            return round_money(product.precio * (1 + rate))
        return prices.from_price_with_igv(product.precio, Decimal(1), rate).precio_unitario

    def save_line_as_product(self) -> None:
        """The selected line (or the only one) opens the product editor with what the line says: description,
        price (with IGV or not, as the price column takes it), affectation, unit; the code is for the person to
        type."""
        from .catalog import RecordEditor
        from .products import ProductsPage, save_product

        row = self.items.currentRow() if self.items.currentRow() >= 0 else (0 if self.items.rowCount() == 1 else -1)
        if row < 0 or not self._text(row, 0):
            label = self.errors.labels["items"]
            label.setText("Elija la línea que quiere guardar en Productos.")
            label.show()
            return
        product = cell(self.items, row, 0).data(LINE_PRODUCT) or {}
        values = {"descripcion": self._text(row, 0), "precio": self._text(row, 2), "codigo": product.get("codigo"),
                  "unidad": self.line_unit(row), "tipo_afectacion_igv": self._affectation(row),
                  "precio_incluye_igv": self.prices_with_igv.isChecked(), "icbper": self._bags(row)}
        self.product_editor = RecordEditor(self, self.context, ProductsPage.FIELDS, "producto",
                                           lambda data, _id: save_product(self.engine, data),
                                           lambda saved: self._line_saved(row, saved), values=values)
        self.product_editor.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.product_editor.open()

    def _line_saved(self, row: int, product: Product) -> None:
        self.product_editor = None
        if row < self.items.rowCount():
            cell(self.items, row, 0).setData(LINE_PRODUCT, {"codigo": product.codigo, "unidad": product.unidad,
                                                           "icbper": product.icbper,
                                                           "codigo_detraccion": product.codigo_detraccion})
        self.banner.show_message(f"El producto {product.codigo} ({product.descripcion}) se guardó en Productos.",
                                 "success")

    def remove_line(self) -> None:
        row = self.items.currentRow()
        if row >= 0:
            self.items.removeRow(row)
            self.update_totals()

    def _text(self, row: int, column: int) -> str:
        item = self.items.item(row, column)
        return item.text().strip() if item else ""

    def _affectation(self, row: int) -> str:
        return cell_widget(self.items, row, AFFECTATION, QComboBox).currentData()

    def _bags(self, row: int) -> bool:
        item = self.items.item(row, BAG)
        return item is not None and item.checkState() == Qt.CheckState.Checked

    def _discount(self, row: int) -> Decimal | None:
        """The line's discount typed (None: not a number), 0 when none."""
        typed = self._text(row, DISCOUNT)
        return parse_decimal(typed) if typed else Decimal("0.00")

    def _price_field(self, row: int) -> str:
        """Where the line's price goes: a price with IGV, or a value without it (a free line's price is its reference
        value, without IGV)."""
        free = self._affectation(row) in FREE_AFFECTATIONS
        return "precio_con_igv" if self.prices_with_igv.isChecked() and not free else "precio_unitario"

    def _item(self, row: int, cantidad: Any, precio: Any, descuento: Any) -> dict[str, Any]:
        """The line of `row` as a contract item with these amounts, and the product's code, unit and marks."""
        product = cell(self.items, row, 0).data(LINE_PRODUCT) or {}
        return {"descripcion": self._text(row, 0), "cantidad": cantidad, self._price_field(row): precio,
                "tipo_afectacion_igv": self._affectation(row), "unidad": self.line_unit(row),
                "codigo": product.get("codigo"), **({"descuento": descuento} if descuento else {}),
                **({"codigo_detraccion": product["codigo_detraccion"]}
                   if product.get("codigo_detraccion") and self.tipo.currentData() == FACTURA else {}),
                **({"icbper": True} if self._bags(row) else {})}

    def read_lines(self) -> tuple[list[dict[str, Any]], list[ErrorDetail]]:
        """The table as contract items, plus the problems a person can fix before sending."""
        items, problems = [], []
        for row in range(self.items.rowCount()):
            descripcion = self._text(row, 0)
            cantidad, valor = parse_decimal(self._text(row, 1)), parse_decimal(self._text(row, 2))
            if not descripcion and not self._text(row, 2):
                continue  # an empty line is ignored
            if not descripcion:
                problems.append(ErrorDetail(f"items[{row}].descripcion", f"Línea {row + 1}: falta la descripción."))
            if cantidad is None or cantidad <= 0:
                problems.append(ErrorDetail(f"items[{row}].cantidad",
                                            f"Línea {row + 1}: la cantidad debe ser un número mayor que cero."))
            price_field = self._price_field(row)
            if valor is None or valor < 0:
                what = "el precio unitario debe ser un número (con IGV)" if price_field == "precio_con_igv" else \
                    "el valor referencial debe ser un número (sin IGV)" if self._affectation(row) in FREE_AFFECTATIONS \
                    else "el valor unitario debe ser un número (sin IGV)"
                problems.append(ErrorDetail(f"items[{row}].{price_field}", f"Línea {row + 1}: {what}."))
            descuento = self._discount(row)
            if descuento is None or descuento < 0:
                problems.append(ErrorDetail(f"items[{row}].descuento", f"Línea {row + 1}: el descuento "
                                            f"«{self._text(row, DISCOUNT)}» debe ser un monto sin IGV, p. ej. 5.00."))
            items.append(self._item(row, cantidad or Decimal(0), valor or Decimal(0), descuento))
        return items, problems

    def _typed(self, row: int, column: int) -> Decimal | str | None:
        """A number cell as typed: its number, None when empty, the text itself when it is not a number (the
        preview then says the line cannot be computed)."""
        typed = self._text(row, column)
        value = parse_decimal(typed)
        return value if value is not None else typed or None

    def preview_request(self) -> dict[str, Any]:
        """The request as typed so far, every line included (row n is item n), for the engine's preview of its
        amounts: what does not read yet leaves its line without amounts, it does not stop the preview."""
        tipo, moneda = self.tipo.currentData(), self.moneda.currentData()
        extras, _ = self.extras.fields(moneda, tipo in cat.SALES)
        spot, _ = self.detraccion.fields() if tipo == FACTURA else ({}, [])
        return {"tipo": tipo, "moneda": moneda, "fecha_emision": python_date(self.fecha.date()),
                "items": [self._item(row, self._typed(row, 1), self._typed(row, 2), self._typed(row, DISCOUNT))
                          for row in range(self.items.rowCount())],
                **extras, **spot, **self.terms.amounts(tipo), **(self.note.fields() if self.is_note() else {})}

    def update_totals(self) -> None:
        """Each line's value and IGV and the totals panel, as the engine computes them for the request as typed
        (`engine.invoicing.preview_totals`: the builder's own functions; nothing stored is read)."""
        totals = self.engine.invoicing.preview_totals(self.preview_request())
        self.items.blockSignals(True)
        for row, line in enumerate(totals.lines):
            cell(self.items, row, VALUE).setText("" if line is None else fmt.number(line.valor_venta))
            cell(self.items, row, IGV).setText("" if line is None else fmt.number(line.igv))
        self.items.blockSignals(False)
        moneda = self.moneda.currentData()
        for key, label in self.total_labels.items():
            amount = shown_total(totals, key)
            label.setText(fmt.money(amount, "PEN" if key in SOLES_TOTALS else moneda))
            if key in OPTIONAL_TOTALS:
                label.setVisible(bool(amount))
                self.total_names[key].setVisible(bool(amount))
        if self.detraccion.active():
            self.detraccion.show_amount(shown_total(totals, "detraccion"))
        self.totals = totals
        if self.is_note() and self._on_credit():
            self.instalments.set_total(self.reference_total)  # NC 13: the factura's instalments, corrected
        else:
            self.instalments.set_total(totals.total)
        codes = [(self._text(row, 0), product["codigo_detraccion"]) for row in range(self.items.rowCount())
                 if (product := cell(self.items, row, 0).data(LINE_PRODUCT) or {}).get("codigo_detraccion")]
        export = bool(totals.exportacion) or (self.extras.tipo_operacion.currentData() or "").startswith("02")
        tipo_cambio = Decimal(1) if moneda == "PEN" else self.extras.exchange_rate()
        self.detraccion_hint.suggest(self.tipo.currentData() == FACTURA,
                                     totals.total * tipo_cambio if tipo_cambio and not export else None, codes,
                                     self.detraccion.active())

    def _mark_cells(self, details: list[ErrorDetail]) -> None:
        for row in range(self.items.rowCount()):
            for column in (0, 1, 2, DISCOUNT, BAG):
                item = self.items.item(row, column)
                if item:
                    item.setBackground(QBrush())
                    item.setToolTip("")
        columns = {"descripcion": 0, "cantidad": 1, "precio_unitario": 2, "precio_con_igv": 2, "descuento": DISCOUNT,
                   "icbper": BAG}
        for detail in details:
            field = detail.field or ""
            if not field.startswith("items["):
                continue
            row = int(field[6:field.index("]")])
            column = columns.get(field.rpartition(".")[2], 0)
            item = self.items.item(row, column)
            if item:
                item.setBackground(ERROR_BRUSH)
                item.setToolTip(detail.message)

    # ------------------------------------------------------------ the request and «Emitir»

    def request(self) -> dict[str, Any]:
        items, problems = self.read_lines()
        cuotas, cuota_problems = self.instalments.read() if self._on_credit() else ([], [])
        problems += cuota_problems
        extras, extra_problems = self.extras.fields(self.moneda.currentData(), self.tipo.currentData() in cat.SALES)
        spot, spot_problems = self.detraccion.fields() if self.tipo.currentData() == FACTURA else ({}, [])
        terms, term_problems = self.terms.fields(self.tipo.currentData())
        problems += extra_problems + spot_problems + term_problems
        if problems:
            raise invalid_many(problems)
        doc_type, number = self.doc_type.currentData(), self.doc_number.text().strip()
        receptor: dict[str, Any] = {"tipo_documento": doc_type, "numero_documento": number or None,
                                    "razon_social": self.customer_name.text().strip() or None,
                                    "direccion": self.customer_address.text().strip() or None}
        if doc_type == RUC:
            receptor["ruc"] = number
        request: dict[str, Any] = {
            "tipo": self.tipo.currentData(), "serie": self.serie.text().strip().upper(),
            "numero": self.numero.value(), "emisor": {"ruc": self.emisor.currentData() or ""},
            "receptor": {k: v for k, v in receptor.items() if v is not None}, "items": items,
            "fecha_emision": self.fecha.date().toPython(), "moneda": self.moneda.currentData(), **extras, **spot,
            **terms,
        }
        if self.is_note():
            request.update(self.note.fields())
            if self._on_credit():
                request["forma_pago"] = {"tipo": "Credito", "cuotas": cuotas}
        elif self._on_credit():
            request["forma_pago"] = {"tipo": "Credito", "cuotas": cuotas}
        else:
            request["forma_pago"] = {"tipo": "Contado"}
        return request

    def _on_credit(self) -> bool:
        """A sale on credit, or a credit note of reason 13 (it carries the corrected instalments)."""
        if self.is_note():
            return self.tipo.currentData() == cat.NOTA_CREDITO and self.note.motivo.currentData() == INSTALMENTS_REASON
        return self.forma_pago.currentData() == "Credito"

    def emit_voucher(self) -> None:
        self.banner.clear()
        self.errors.clear()
        self._mark_cells([])
        self.instalments.mark([])
        self.result_badge.hide()
        self.result_text.clear()
        try:
            request = self.request()
        except Exception as exc:  # noqa: BLE001 - local problems are shown like the engine's
            self.show_failure(exc)
            return
        self.progress.setValue(0)
        self.progress.show()
        self.sent = request

        next_number = self.proposed_numero is not None and request.get("numero") == self.proposed_numero

        def work(job: Any) -> EmissionOutcome:  # the environment at the moment of sending, not when the form opened
            return emit(self.engine, request, job.report, next_number=next_number)

        self.context.workers.run(self, work, pass_job=True,
                                 progress=self._step, done=self.show_outcome, failed=self.show_failure,
                                 busy=[self.emit_button])

    def _step(self, step: tuple[int, str]) -> None:
        self.progress.setValue(step[0])
        self.step_label.setText(step[1])

    def show_outcome(self, outcome: EmissionOutcome) -> None:
        self.outcome = outcome
        self._show_number_issued(outcome)
        self.progress.setValue(len(STEPS))
        self.step_label.setText("")
        headline, text = plain_outcome(outcome)
        self.result_badge.set(headline, statuses.colour(outcome.estado))
        self.result_badge.show()
        self.result_text.setText(text)
        self.emitted.emit(outcome)
        if outcome.nombre_archivo and outcome.digest_value:
            self.print_button.show()  # signed: it can be printed, whatever SUNAT answered
            self._remember_account()
            self._issued_from_draft()  # the voucher is stored: its draft goes
        if outcome.estado in statuses.ISSUED:
            self.emit_button.setText("Emitir otro")
            self.emit_button.clicked.disconnect()
            self.emit_button.clicked.connect(self.start_next)

    def _show_number_issued(self, outcome: EmissionOutcome) -> None:
        """The number the voucher got (the serie's next when stored: another desk may have taken the one shown)."""
        if not outcome.nombre_archivo:
            return
        numero = outcome.nombre_archivo.removesuffix(".xml").rsplit("-", 1)[-1]
        if numero.isdigit() and int(numero) != self.numero.value():
            self.numero.setValue(int(numero))
            self.proposed_numero = int(numero)

    def _remember_account(self) -> None:
        """A signed factura with detracción: its Banco de la Nación account becomes the company's (filled in next
        time)."""
        spot = (self.sent or {}).get("detraccion")
        ruc = (self.sent or {}).get("emisor", {}).get("ruc")
        if not spot or not ruc or self.account_by_ruc.get(ruc) == spot["cuenta"]:
            return
        self.account_by_ruc[ruc] = spot["cuenta"]
        self.context.workers.run(self, self.engine.admin.set_detraction_account, ruc, spot["cuenta"],
                                 failed=self.banner.show_error)

    def print_voucher(self) -> None:
        """Lay out the voucher just issued, then open the print dialog."""
        if self.outcome is None:  # nothing issued: the button is hidden
            return
        ruc, tipo, serie, numero = self.outcome.nombre_archivo.removesuffix(".xml").split("-")
        if self.printing is None:
            self.printing = PrintPanel(self.context, self.banner, self)
            self.printing.hide()
        panel = self.printing

        def found(voucher_id: int) -> None:
            panel.load(voucher_id, then=panel.choose_printer)

        self.context.workers.run(self, self.engine.invoicing.find_voucher, f"{serie}-{numero}", ruc, tipo,
                                 done=found, failed=self.banner.show_error, busy=[self.print_button])

    def start_next(self) -> None:
        """Keep issuer, type and serie; clear the rest for the next sale."""
        self.print_button.hide()
        self.emit_button.setText("Emitir")
        self.emit_button.clicked.disconnect()
        self.emit_button.clicked.connect(self.emit_voucher)
        self.items.setRowCount(0)
        self.add_line()
        for widget in (self.doc_number, self.customer_name, self.customer_address):
            widget.clear()
        self.result_badge.hide()
        self.result_text.clear()
        self.progress.hide()
        self.outcome = None
        self.instalments.reset()
        self.note.clear()
        self.extras.clear()
        self.terms.clear()
        self.detraccion.hide()
        self.reference_total = Decimal("0.00")
        self.context.workers.run(self, issued_vouchers, self.engine, done=self._reloaded)
        self.propose_numero()

    def _reloaded(self, issued: list[Voucher]) -> None:
        """What the last voucher added: a voucher a note may modify (its customer is in the catalogue)."""
        self.issued = issued
        self._issuer_changed()

    def show_failure(self, exc: BaseException) -> None:
        self.progress.hide()
        self.step_label.setText("")
        details = list(getattr(exc, "details", []))
        self._mark_cells(details)
        self.instalments.mark(details)
        unplaced = self.errors.show(exc)
        if unplaced or not details:
            self.banner.show_error(exc)
        else:
            self.banner.show_message("Revise los campos marcados en rojo.", "error",
                                     "\n".join(f"• {d.message}" for d in details))

    # ------------------------------------------------------------ drafts (docs/gui.md, «Borradores»)

    def _watch_changes(self) -> None:
        """Any change schedules the autosave (AUTOSAVE_MS after the last one)."""
        schedule = self.autosave.start
        self.items.itemChanged.connect(schedule)
        self.items.model().rowsInserted.connect(schedule)
        self.items.model().rowsRemoved.connect(schedule)
        for combo in (self.emisor, self.tipo, self.moneda, self.forma_pago, self.doc_type):
            combo.currentIndexChanged.connect(schedule)
        for edit in (self.doc_number, self.customer_name, self.customer_address, self.serie):
            edit.textChanged.connect(schedule)
        self.fecha.dateChanged.connect(schedule)
        self.prices_with_igv.toggled.connect(schedule)
        self.terms.watch(schedule)

    def draft_content(self) -> dict[str, Any]:
        """What the form holds as typed (numbers as their text), for a draft: `load_draft` fills the form back."""
        lines = [{"descripcion": self._text(row, 0), "cantidad": self._text(row, 1), "precio": self._text(row, 2),
                  "descuento": self._text(row, DISCOUNT), "tipo_afectacion_igv": self._affectation(row),
                  "icbper": self._bags(row), "unidad": self.line_unit(row),
                  "producto": cell(self.items, row, 0).data(LINE_PRODUCT) or None}
                 for row in range(self.items.rowCount())]
        return {"emisor": self.emisor.currentData(), "tipo": self.tipo.currentData(),
                "serie": self.serie.text().strip().upper(), "fecha_emision": python_date(self.fecha.date()).isoformat(),
                "moneda": self.moneda.currentData(), "forma_pago": self.forma_pago.currentData(),
                "precios_incluyen_igv": self.prices_with_igv.isChecked(),
                "receptor": {"tipo_documento": self.doc_type.currentData(),
                             "numero_documento": self.doc_number.text().strip(),
                             "razon_social": self.customer_name.text().strip(),
                             "direccion": self.customer_address.text().strip()},
                "items": lines, "terminos": self.terms.draft()}

    def load_draft(self, content: dict[str, Any], draft_id: int | None = None) -> None:
        """Fill the form with a draft's content (`draft_content`); it goes on being saved as draft `draft_id`."""
        def choose(combo: QComboBox, value: Any) -> None:
            index = combo.findData(value)
            if index >= 0:
                combo.setCurrentIndex(index)

        choose(self.emisor, content.get("emisor"))
        choose(self.tipo, content.get("tipo"))  # proposes its serie and document type: the draft's follow
        if content.get("serie"):
            self.contingencia.blockSignals(True)
            self.contingencia.setChecked(str(content["serie"]).isdigit())
            self.contingencia.blockSignals(False)
            self.serie.setText(str(content["serie"]))
        date = QDate.fromString(str(content.get("fecha_emision") or ""), Qt.DateFormat.ISODate)
        if date.isValid():
            self.fecha.setDate(date)
        choose(self.moneda, content.get("moneda"))
        choose(self.forma_pago, content.get("forma_pago"))
        self.prices_with_igv.setChecked(bool(content.get("precios_incluyen_igv")))
        receptor = content.get("receptor") or {}
        choose(self.doc_type, receptor.get("tipo_documento"))
        self.doc_number.setText(receptor.get("numero_documento") or "")
        self.customer_name.setText(receptor.get("razon_social") or "")
        self.customer_address.setText(receptor.get("direccion") or "")
        self.items.setRowCount(0)
        for line in content.get("items") or []:
            row = self.add_line(line.get("descripcion") or "", line.get("cantidad") or "", line.get("precio") or "",
                                line.get("tipo_afectacion_igv") or cat.GRAVADO, line.get("descuento") or "",
                                bool(line.get("icbper")),
                                line.get("unidad") or (line.get("producto") or {}).get("unidad") or cat.UNIDAD)
            if line.get("producto"):
                cell(self.items, row, 0).setData(LINE_PRODUCT, line["producto"])
        if not self.items.rowCount():
            self.add_line()
        self.terms.load(content.get("terminos") or {})
        self.update_totals()
        self.propose_numero()
        self.draft_id = draft_id
        self._saved_content = self.draft_content() if draft_id is not None else None
        self.autosave.stop()

    def needs_asking(self) -> bool:
        """Whether closing would lose something typed: content that is not the voucher just issued."""
        content = self.draft_content()
        return has_content(content) and content != self._settled

    def save_draft_now(self) -> bool:
        """Store what the form holds as its draft (the autosave, «Guardar borrador»); whether it is stored."""
        self.autosave.stop()
        if self._closing:  # closed (saved, discarded or emptied): the program ending keeps nothing of it
            return False
        content = self.draft_content()
        if not has_content(content) or content == self._settled:
            return False
        if content == self._saved_content and self.draft_id is not None:
            return True
        totals = getattr(self, "totals", None)
        try:
            draft = self.engine.invoicing.save_draft(
                content, cliente=self.customer_name.text().strip() or self.doc_number.text().strip(),
                total=totals.total if totals is not None else Decimal("0.00"), moneda=self.moneda.currentData(),
                draft_id=self.draft_id)
        except YupanaError as exc:
            self.banner.show_error(exc)
            return False
        except Exception:  # noqa: BLE001 - the engine closed under a form still open (the program ending)
            log.exception("the draft could not be saved")
            return False
        self.draft_id, self._saved_content = draft.id, content
        self.draft_saved.emit(draft.id)
        return True

    def discard_draft(self) -> None:
        self.autosave.stop()
        if self.draft_id is not None:
            try:
                self.engine.invoicing.discard_draft(self.draft_id)
            except YupanaError as exc:
                self.banner.show_error(exc)
                return
        self.draft_id, self._saved_content = None, None

    def _issued_from_draft(self) -> None:
        self.discard_draft()
        self._settled = self.draft_content()

    def reject(self) -> None:
        """Escape and the window's close button: with something typed, ask first (the box's Escape keeps
        editing), so nothing typed is ever thrown away silently."""
        if not self._closing and self.needs_asking():
            self.ask_close()
            return
        if not self._closing and not has_content(self.draft_content()):
            self.discard_draft()  # emptied by hand: nothing to keep
        self._finish_close()

    def ask_close(self) -> QMessageBox:
        """«Guardar borrador» / «Descartar» / «Seguir editando», without blocking: the answer arrives in
        `_close_answered`."""
        if self.close_box is not None and self.close_box.isVisible():
            return self.close_box  # already asking (a second Escape)
        box = self.close_box = QMessageBox(QMessageBox.Icon.Question, "Comprobante sin emitir",
                                           "Este comprobante no se ha emitido. ¿Guarda lo escrito como borrador para "
                                           "terminarlo después?", QMessageBox.StandardButton.NoButton, self)
        box.addButton(SAVE_DRAFT, QMessageBox.ButtonRole.AcceptRole)
        box.addButton(DISCARD, QMessageBox.ButtonRole.DestructiveRole)
        keep = box.addButton(KEEP_EDITING, QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        box.buttonClicked.connect(lambda button: self._close_answered(button.text()))
        box.open()
        return box

    def _close_answered(self, answer: str) -> None:
        if answer == SAVE_DRAFT:
            if not self.save_draft_now():
                return  # not stored (the banner says why): the form stays open
        elif answer == DISCARD:
            self.discard_draft()
        else:
            return
        self._finish_close()

    def discard_and_close(self) -> None:
        """For scripts (the screenshots): drop the draft and close without asking. A person's Escape or close
        button always asks."""
        self.discard_draft()
        self._finish_close()

    def _finish_close(self) -> None:
        self._closing = True
        self.autosave.stop()
        super().reject()

    def offer_draft(self, drafts: list[VoucherDraft]) -> None:
        """A saved draft of this desk that no open form holds is offered while the form is still blank."""
        held = {form.draft_id for form in _OPEN_FORMS
                if form is not self and form.engine is self.engine and not form._closing}
        free = [draft for draft in drafts if draft.id not in held]
        if not free or self.needs_asking() or self.draft_id is not None:
            return
        draft = free[0]
        box = self.draft_box = QMessageBox(QMessageBox.Icon.Question, "Borrador guardado",
                                           draft_offer(draft, len(free) - 1), QMessageBox.StandardButton.NoButton,
                                           self)
        box.addButton(CONTINUE, QMessageBox.ButtonRole.AcceptRole)
        box.addButton(DISCARD, QMessageBox.ButtonRole.DestructiveRole)
        later = box.addButton(LATER, QMessageBox.ButtonRole.RejectRole)
        box.setEscapeButton(later)
        box.buttonClicked.connect(lambda button: self._offer_answered(button.text(), draft))
        box.open()

    def _offer_answered(self, answer: str, draft: VoucherDraft) -> None:
        if answer == CONTINUE:
            self.load_draft(draft.content, draft.id)
            self.banner.show_message("Se recuperó el borrador: revise los datos y emita cuando esté listo.", "info")
        elif answer == DISCARD:
            try:
                self.engine.invoicing.discard_draft(draft.id)
            except YupanaError as exc:
                self.banner.show_error(exc)

    # kept for tests and the screenshot script
    def fill_example(self, number: str, name: str, lines: list[tuple[str, str, str, str]]) -> None:
        self.doc_number.setText(number)
        self.customer_name.setText(name)
        self.items.setRowCount(0)
        for line in lines:
            self.add_line(*line)


def open_form(context: Context, parent: QWidget | None = None) -> VoucherForm:
    form = VoucherForm(context, parent)
    form.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    form.show()
    return form

