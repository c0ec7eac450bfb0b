"""The printed voucher in the windows: its pages painted with Qt (preview and printer), «Guardar PDF», «Imprimir».

PySide6-Essentials has no PDF viewer (QtPdf), so the preview paints the same laid-out pages the PDF is
written from (app.core.api's Page, Box, Text…), with the same font. Painting on a QImage or a QPrinter is allowed
off the GUI thread (Qt's threading rules), so images and print jobs are made on the worker pool; only the
dialogs and the pixmaps live on the GUI thread. The ticket prints on an 80 mm page as long as the voucher.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QMarginsF, QPointF, QRectF, QSizeF, Qt, QTimer
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QImage,
    QPageLayout,
    QPageSize,
    QPainter,
    QPainterPath,
    QPen,
    QPixmap,
)
from PySide6.QtPrintSupport import QPrintDialog, QPrinter
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.core.api import (
    BOLD_STROKE,
    FONT_FILE,
    PT,
    Box,
    ErrorCode,
    Page,
    Picture,
    Qr,
    Rule,
    Text,
    YupanaError,
    write_bytes,
)

from .context import Context
from .dialogs import documents_folder
from .widgets import MessageBanner

if TYPE_CHECKING:
    from app.core.api import Engine

FORMAT_CHOICES = [("a4", "A4"), ("ticket", "Ticket 80 mm")]
PREVIEW_DPI = 96
MM_PER_INCH = 25.4
_families: list[str] = []


def load_fonts() -> str:
    """Register Yupana Sans with Qt once; returns its family name."""
    if not _families:
        font_id = QFontDatabase.addApplicationFont(str(FONT_FILE))
        _families.extend(QFontDatabase.applicationFontFamilies(font_id) if font_id >= 0 else [])
        if not _families:
            _families.append(QFont().family())
    return _families[0]


def paint(painter: QPainter, page: Page, dots_per_mm: float, family: str) -> None:
    """Paint one page's marks; `dots_per_mm` of the device (fonts follow the device's own resolution)."""
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
    fonts: dict[float, QFont] = {}
    black = QColor(0, 0, 0)
    for mark in page.marks:
        kind = type(mark)
        if kind is Text:
            font = fonts.get(mark.size)
            if font is None:
                font = fonts[mark.size] = QFont(family)
                font.setPointSizeF(mark.size)
                font.setKerning(False)  # the layout measured advances one by one, as the PDF places them
            origin = QPointF(mark.x * dots_per_mm, mark.y * dots_per_mm)
            painter.setFont(font)
            painter.setPen(black)
            painter.drawText(origin, mark.text)  # text stays text (a printer to PDF keeps it searchable)
            if mark.bold:  # as in the PDF: the regular glyphs, stroked as well as filled
                path = QPainterPath()
                path.addText(origin, font, mark.text)
                painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
                painter.strokePath(path, QPen(black, mark.size * PT * BOLD_STROKE * dots_per_mm))
                painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        elif kind is Rule:
            painter.setPen(QPen(black, max(1.0, mark.width * dots_per_mm)))
            painter.drawLine(QPointF(mark.x1 * dots_per_mm, mark.y1 * dots_per_mm),
                             QPointF(mark.x2 * dots_per_mm, mark.y2 * dots_per_mm))
        elif kind is Box:
            rect = QRectF(mark.x * dots_per_mm, mark.y * dots_per_mm, mark.w * dots_per_mm, mark.h * dots_per_mm)
            if mark.fill is None:
                painter.setPen(QPen(black, max(1.0, mark.line_width * dots_per_mm)))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(rect)
            else:
                painter.fillRect(rect, QColor(mark.fill, mark.fill, mark.fill))
        elif kind is Qr:
            size = mark.module * dots_per_mm
            for row, runs in enumerate(mark.rows):
                for column, length in runs:
                    painter.fillRect(QRectF((mark.x * dots_per_mm) + column * size,
                                            (mark.y * dots_per_mm) + row * size, length * size, size), black)
        elif kind is Picture:
            image = QImage.fromData(mark.data)
            painter.drawImage(QRectF(mark.x * dots_per_mm, mark.y * dots_per_mm, mark.w * dots_per_mm,
                                     mark.h * dots_per_mm), image)


def page_image(page: Page, family: str, dpi: int = PREVIEW_DPI) -> QImage:
    """One page as an image (works on a worker thread)."""
    dots_per_mm = dpi / MM_PER_INCH
    image = QImage(max(1, round(page.width * dots_per_mm)), max(1, round(page.height * dots_per_mm)),
                   QImage.Format.Format_RGB32)
    image.setDotsPerMeterX(round(dpi / 0.0254))
    image.setDotsPerMeterY(round(dpi / 0.0254))
    image.fill(QColor(255, 255, 255))
    painter = QPainter(image)
    try:
        paint(painter, page, dots_per_mm, family)
    finally:
        painter.end()
    return image


def page_layout(page: Page) -> QPageLayout:
    """A4 as A4; the ticket as an 80 mm page exactly as long as its content, without printer margins (the
    layout keeps its own 4 mm)."""
    if page.width == 210 and page.height == 297:
        size = QPageSize(QPageSize.PageSizeId.A4)
    else:
        size = QPageSize(QSizeF(page.width, page.height), QPageSize.Unit.Millimeter, "Ticket 80 mm",
                         QPageSize.SizeMatchPolicy.ExactMatch)
    return QPageLayout(size, QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0), QPageLayout.Unit.Millimeter)


def print_pages(printer: QPrinter, pages: Sequence[Page], family: str) -> int:
    """Paint the pages on `printer` (a real one or a PDF file); returns how many were printed."""
    printer.setFullPage(True)
    printer.setPageLayout(page_layout(pages[0]))
    painter = QPainter()
    if not painter.begin(printer):
        raise YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE, "No se pudo empezar a imprimir: revise la impresora.")
    try:
        dots_per_mm = printer.resolution() / MM_PER_INCH
        for index, page in enumerate(pages):
            if index:
                printer.setPageLayout(page_layout(page))
                printer.newPage()
            paint(painter, page, dots_per_mm, family)
    finally:
        painter.end()
    return len(pages)


def write_pdf(engine: Engine, voucher_id: int, target: str | Path, formato: str | None = None) -> Path:
    """Write the voucher's PDF to `target` (a file, or a folder for its usual name) through a temporary file, so a
    half-written PDF is never left under the final name; returns the file."""
    pdf = engine.invoicing.pdf(voucher_id, formato)
    path = Path(target)
    if path.is_dir():
        path = path / pdf.name
    return write_bytes(path, pdf.content)


def propose_pdf_file(dialog: QPrintDialog, file_name: str) -> None:
    """Qt's own print dialog (Linux) proposes «Imprimir en un archivo (PDF)» in the program's folder under the
    printing queue's name: propose the voucher's file name in the Documents folder instead. Windows' native dialog
    has no such field (its «Microsoft Print to PDF» asks for the name itself)."""
    field = dialog.findChild(QLineEdit, "filename")  # the «Archivo de salida» field of Qt's print widget
    if field is not None and file_name:
        field.setText(str(Path(documents_folder()) / file_name))


class PrintPanel(QWidget):
    """A voucher's printed representation: format, preview, «Guardar PDF» and «Imprimir»."""

    def __init__(self, context: Context, banner: MessageBanner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.engine = context.engine
        self.banner = banner
        self.family = load_fonts()
        self.voucher_id: int | None = None
        self.then: Callable[[], Any] | None = None
        self.pages: list[Page] = []
        self.formato: str | None = None  # None until loaded: the company's default
        self.file_name = ""
        self.images: list[QImage] = []
        self.print_dialog: QPrintDialog | None = None
        self.printer: QPrinter | None = None
        self.file_dialog: QFileDialog | None = None
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        top.addWidget(QLabel("Formato:"))
        self.format_box = QComboBox()
        for value, label in FORMAT_CHOICES:
            self.format_box.addItem(label, value)
        top.addWidget(self.format_box)
        top.addStretch(1)
        self.save_button = QPushButton("Guardar PDF")
        self.print_button = QPushButton("Imprimir")
        top.addWidget(self.save_button)
        top.addWidget(self.print_button)
        layout.addLayout(top)
        self.status = QLabel("")
        layout.addWidget(self.status)
        self.scroll_area = QScrollArea()
        self.scroll_area.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.scroll_area.setStyleSheet("QScrollArea { background: #8a8a8a; }")
        self.pages_widget = QWidget()
        self.pages_layout = QVBoxLayout(self.pages_widget)
        self.pages_layout.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.scroll_area.setWidget(self.pages_widget)
        self.scroll_area.setWidgetResizable(True)
        layout.addWidget(self.scroll_area, 1)
        self.page_labels: list[QLabel] = []
        self.set_enabled(False)
        self.format_box.currentIndexChanged.connect(self._format_chosen)
        self.save_button.clicked.connect(self.choose_file)
        self.print_button.clicked.connect(self.choose_printer)

    def set_enabled(self, enabled: bool) -> None:
        for widget in (self.format_box, self.save_button, self.print_button):
            widget.setEnabled(enabled)

    # ------------------------------------------------------------ loading and the preview

    def load(self, voucher_id: int, formato: str | None = None,
             then: Callable[[], Any] | None = None) -> None:
        """Lay the voucher out (company's default format unless one is given) and paint the preview; `then`
        runs once it is shown (e.g. open the print dialog)."""
        self.voucher_id = voucher_id
        self.then = then
        self.status.setText("Preparando la representación impresa…")
        family = self.family

        def work() -> tuple[list[Page], str, str, list[QImage], tuple[str, ...]]:
            printed = self.engine.invoicing.printed_pages(voucher_id, formato)
            images = [page_image(page, family) for page in printed.pages]
            return printed.pages, printed.formato, printed.file_name, images, printed.avisos

        self.context.workers.run(self, work, done=self._loaded, failed=self._not_printable,
                                 busy=[self.format_box, self.save_button, self.print_button])

    def _loaded(self, loaded: tuple[list[Page], str, str, list[QImage], tuple[str, ...]]) -> None:
        self.pages, self.formato, self.file_name, self.images, avisos = loaded
        if avisos:  # characters no font of the PDF has: printed as a visible mark, and said here
            self.banner.show_message("La representación impresa tiene caracteres que no se pueden imprimir.",
                                     "warning", "\n".join(avisos))
        self.format_box.blockSignals(True)
        self.format_box.setCurrentIndex(max(0, self.format_box.findData(self.formato)))
        self.format_box.blockSignals(False)
        for label in self.page_labels:
            label.deleteLater()
        self.page_labels = []
        for image in self.images:
            label = QLabel()
            label.setPixmap(QPixmap.fromImage(image))
            label.setStyleSheet("background: white; border: 1px solid #555;")
            self.pages_layout.addWidget(label, 0, Qt.AlignmentFlag.AlignHCenter)
            self.page_labels.append(label)
        count = len(self.pages)
        self.status.setText(f"{count} página{'s' if count != 1 else ''} · "
                            f"{'A4' if self.formato == 'a4' else 'ticket de 80 mm'}")
        self.set_enabled(True)
        then, self.then = self.then, None
        if then:
            then()

    def _not_printable(self, exc: BaseException) -> None:
        self.status.setText(getattr(exc, "message", str(exc)))
        self.set_enabled(False)

    def _format_chosen(self) -> None:
        if self.voucher_id is not None:
            self.load(self.voucher_id, self.format_box.currentData())

    # ------------------------------------------------------------ «Guardar PDF»

    def choose_file(self) -> QFileDialog:
        """A non-blocking «save as» chooser proposing the voucher's usual file name."""
        dialog = QFileDialog(self, "Guardar el PDF del comprobante", documents_folder())
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilter("PDF (*.pdf)")
        dialog.setDefaultSuffix("pdf")
        dialog.selectFile(self.file_name)
        dialog.fileSelected.connect(self.save_to)
        dialog.open()
        self.file_dialog = dialog
        return dialog

    def save_to(self, path: str) -> None:
        formato = self.format_box.currentData()
        self.context.workers.run(self, write_pdf, self.engine, self.voucher_id, path, formato,
                                 done=lambda written: self.banner.show_message(f"PDF guardado en {written}",
                                                                               "success"),
                                 failed=self.banner.show_error, busy=[self.save_button])

    # ------------------------------------------------------------ «Imprimir»

    def choose_printer(self) -> QPrintDialog:
        """Qt's print dialog (non-blocking); the job runs on the worker pool once a printer is chosen."""
        printer = QPrinter(QPrinter.PrinterMode.HighResolution)
        printer.setDocName(self.file_name or "comprobante.pdf")  # the printing queue's name of the job
        if self.pages:
            printer.setPageLayout(page_layout(self.pages[0]))
        dialog = QPrintDialog(printer, self)
        dialog.setWindowTitle("Imprimir el comprobante")
        propose_pdf_file(dialog, self.file_name)
        dialog.accepted.connect(lambda: self.print_to(printer))
        if sys.platform == "win32":
            # Windows' native print dialog only runs through exec(): started from the event loop, so this click
            # returns at once and the windows keep painting under the dialog's own loop.
            QTimer.singleShot(0, dialog.exec)
        else:
            QDialog.open(dialog)  # window-modal, returns at once (QPrintDialog's own open() wants a slot)
        self.print_dialog, self.printer = dialog, printer
        return dialog

    def print_to(self, printer: QPrinter, on_done: Callable[[int], None] | None = None) -> None:
        pages, family = list(self.pages), self.family

        def printed(count: int) -> None:
            self.banner.show_message(f"Enviado a imprimir ({count} página{'s' if count != 1 else ''}).", "success")
            if on_done:
                on_done(count)

        self.context.workers.run(self, print_pages, printer, pages, family, done=printed,
                                 failed=self.banner.show_error, busy=[self.print_button])

