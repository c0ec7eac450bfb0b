"""The Comprobantes list as a Qt model that pages through any number of vouchers (issue 19, point 6).

The database sorts and filters (engine.invoicing.vouchers answers from indexes, newest first); the model holds only
the pages the user has scrolled to and asks for the next one, keyset-paged by the last id shown, when the view
reaches the end (canFetchMore/fetchMore). Every page is read through context.workers, never on the GUI thread: a
page costs about 1 ms at 300,000 vouchers with the file in the OS cache (bench/vouchers_scale.py), but the first
reads after starting come from disk, and a slow or busy disk (a laptop's, an antivirus scanning the folder) must not
freeze the window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from app.core.api import fmt, statuses

from .context import Context
from .voucher_types import LISTED_NAMES

if TYPE_CHECKING:
    from app.core.api import Voucher

COLUMNS = ["Tipo", "Serie-número", "Cliente", "Total", "Fecha", "Estado"]
STATUS_COLUMN = 5
PAGE = 100  # rows per read: a few screens, about 1 ms of the database's time
# The shown status' name («aceptado», «baja_por_confirmar»); DisplayRole is its label («Aceptado»).
STATUS_ROLE = Qt.ItemDataRole.UserRole + 1
RECORD_ROLE = Qt.ItemDataRole.UserRole + 2  # the Voucher as the engine gave it

Index = QModelIndex | QPersistentModelIndex


def _cells(voucher: Voucher) -> list[str]:
    customer = voucher.receptor_nombre or voucher.receptor_numero_documento or "—"
    return [LISTED_NAMES.get(voucher.tipo, voucher.tipo or ""), voucher.serie_numero, customer,
            fmt.money(voucher.total, voucher.moneda), fmt.day(voucher.fecha_emision),
            statuses.label(voucher.shown_status)]  # «Baja por confirmar» while its void's outcome is unknown


class VoucherListModel(QAbstractTableModel):
    """The vouchers matching `filters` (the keyword arguments of engine.invoicing.vouchers), page by page.

    `loaded` is emitted after the first page of a new filter (or a refresh) is in; `failed` with the error when a read
    fails. A newer request always wins over an older, slower answer (`generation`)."""

    loaded = Signal()
    failed = Signal(object)

    def __init__(self, context: Context, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.filters: dict[str, Any] = {}
        self.rows: list[Voucher] = []
        self._cells: list[list[str]] = []
        self.generation = 0
        self.fetching = False
        self.exhausted = True  # nothing more to fetch until the first page says otherwise

    # ------------------------------------------------------------ Qt's model

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self.rows):
            return None
        row, column = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cells[row][column]
        if role == Qt.ItemDataRole.TextAlignmentRole and column == 3:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == STATUS_ROLE:
            return self.rows[row].shown_status
        if role == RECORD_ROLE:
            return self.rows[row]
        return None

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008 - Qt's signature
        return not parent.isValid() and not self.exhausted and not self.fetching

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008 - Qt's signature
        if not self.canFetchMore(parent):
            return
        self.fetching = True
        generation, filters, before_id = self.generation, dict(self.filters), self.rows[-1].id

        def append(page: list[Voucher]) -> None:
            if generation != self.generation:  # the filters changed meanwhile: that read started the newer one
                return
            self.fetching = False
            self.exhausted = len(page) < PAGE
            if page:
                self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows) + len(page) - 1)
                self.rows.extend(page)
                self._cells.extend(_cells(voucher) for voucher in page)
                self.endInsertRows()

        engine = self.context.engine
        self.context.workers.run(self, lambda: engine.invoicing.vouchers(limit=PAGE, before_id=before_id, **filters),
                                 done=append, failed=lambda exc: self._failed(generation, exc))

    # ------------------------------------------------------------ reads

    def set_filters(self, **filters: Any) -> None:
        """Show the vouchers matching `filters` from the newest (None and "" filter nothing)."""
        self.filters = {key: value for key, value in filters.items() if value not in (None, "")}
        self._read(PAGE)

    def refresh(self) -> None:
        """Read again what is shown (as many rows as were scrolled to): a status changed, a voucher was added."""
        self._read(max(PAGE, len(self.rows)))

    def _read(self, limit: int) -> None:
        self.generation += 1
        generation, filters = self.generation, dict(self.filters)
        self.fetching = True  # no page is appended to rows about to be replaced

        def show(rows: list[Voucher]) -> None:
            if generation != self.generation:  # an older, slower answer must not overwrite a newer one
                return
            self.fetching = False
            self.exhausted = len(rows) < limit
            if [r.id for r in rows] == [r.id for r in self.rows]:  # the same vouchers: keep the view's place
                self.rows, self._cells = list(rows), [_cells(voucher) for voucher in rows]
                if rows:
                    self.dataChanged.emit(self.index(0, 0), self.index(len(rows) - 1, len(COLUMNS) - 1))
            else:
                self.beginResetModel()
                self.rows, self._cells = list(rows), [_cells(voucher) for voucher in rows]
                self.endResetModel()
            self.loaded.emit()

        self.context.workers.run(self, lambda: self.context.engine.invoicing.vouchers(limit=limit, **filters),
                                 done=show, failed=lambda exc: self._failed(generation, exc))

    def _failed(self, generation: int, exc: BaseException) -> None:
        if generation != self.generation:
            return
        self.fetching = False
        self.exhausted = True  # no retry loop against a failing database; «Actualizar» reads again
        self.failed.emit(exc)

    def record(self, row: int) -> Voucher:
        return self.rows[row]


class StatusDelegate(QStyledItemDelegate):
    """The status column as the coloured pill the rest of the app shows (widgets.Badge), painted, not a widget per
    row: a list of thousands of rows keeps no widget per row."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        style = option.widget.style() if option.widget else None
        if style is not None and option.state & QStyle.StateFlag.State_Selected:
            style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, option.widget)
        text = f" {index.data()} "
        metrics = option.fontMetrics
        bold = option.font
        bold.setBold(True)
        width = metrics.horizontalAdvance(text) + 16
        height = metrics.height() + 2
        rect = QRectF(option.rect.x() + 4, option.rect.center().y() - height / 2 + 1, width, height)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QBrush(QColor(statuses.colour(index.data(STATUS_ROLE)))))
        painter.drawRoundedRect(rect, 6, 6)
        painter.setPen(QColor("white"))
        painter.setFont(bold)
        painter.drawText(rect, int(Qt.AlignmentFlag.AlignCenter), text.strip())
        painter.restore()
