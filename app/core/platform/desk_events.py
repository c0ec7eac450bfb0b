"""Live across desks (issue 34 item 6): what one desk of a shared database tells on its bus, the others hear on theirs.

The relay listens to this desk's bus and sends the events other desks' windows care about through the storage's change
feed (PostgreSQL's LISTEN/NOTIFY: ports.database.ChangeFeed) as a short JSON note; a note from another desk becomes the
same event on this desk's bus, so a window refreshes as if the change were local — without polling. Events are told
after their commit (the engine emits them then), so a desk that hears one reads the change already there.

Only what is the business's travels: vouchers, CDRs, summaries, companies, certificates, the catalogue's... not what
belongs to one desk (its settings, its listener, its API token, its padrón, secrets unlocked on it). A desk whose feed
was cut off hears `DESK_RECONNECTED` once it is back: a window reads its lists again (what happened meanwhile was not
heard).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import uuid
from typing import Any

from app.core.platform import events
from app.core.storage.ports.database import ChangeFeed

log = logging.getLogger(__name__)

# The events that travel, by class: their fields are plain JSON values (ids as a list for VoucherChanged).
SHARED_EVENTS: tuple[type[events.Event], ...] = (
    events.VoucherChanged, events.SunatCdrStored, events.SummaryChanged, events.CertificateSaved,
    events.CertificateDeleted, events.CompanySaved, events.ContractEvent, events.MessageSent,
    events.SubscriptionChanged, events.InstanceSaved)
_BY_NAME = {cls.__name__: cls for cls in SHARED_EVENTS}
VOUCHER_IDS_PER_NOTE = 500  # a batch block's ids in several notes: each note stays under the feed's size


class DeskRelay:
    """Relays the shared events between this desk's bus and the change feed (see the module's doc)."""

    def __init__(self, bus: events.EventBus, feed: ChangeFeed) -> None:
        self.desk = uuid.uuid4().hex[:12]  # this engine's notes are not heard back as another desk's
        self._bus = bus
        self._feed = feed
        self._hearing = threading.local()  # set while a note heard is emitted: it is not sent out again
        self._unsubscribe = bus.subscribe(self._on_local)
        feed.listen(self._on_note, self._on_back)

    def close(self) -> None:
        self._unsubscribe()
        self._feed.close()

    # ------------------------------------------------------------ out

    def _on_local(self, _name: str, payload: events.Event) -> None:
        if getattr(self._hearing, "on", False) or not isinstance(payload, SHARED_EVENTS):
            return
        for part in _split(payload):
            self._feed.publish(json.dumps({"desk": self.desk, "event": type(part).__name__,
                                           "fields": _fields(part)}, ensure_ascii=False, default=str))

    # ------------------------------------------------------------ in

    def _on_note(self, note: str) -> None:
        try:
            parsed = json.loads(note)
            if parsed.get("desk") == self.desk:
                return
            payload = _event(parsed["event"], parsed["fields"])
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("desk note not understood (%s): %.200s", exc, note)
            return
        self._emit_heard(payload)

    def _on_back(self) -> None:
        self._emit_heard(events.DeskReconnected())

    def _emit_heard(self, payload: events.Event) -> None:
        self._hearing.on = True
        try:
            self._bus.emit(payload)
        finally:
            self._hearing.on = False


def _split(payload: events.Event) -> list[events.Event]:
    """A batch block's VoucherChanged in parts of VOUCHER_IDS_PER_NOTE ids; a contract event too large for one note
    travels without its data (a window reads the message from the database)."""
    if isinstance(payload, events.VoucherChanged) and len(payload.ids) > VOUCHER_IDS_PER_NOTE:
        ids = payload.ids
        return [dataclasses.replace(payload, ids=ids[at:at + VOUCHER_IDS_PER_NOTE])
                for at in range(0, len(ids), VOUCHER_IDS_PER_NOTE)]
    if isinstance(payload, events.ContractEvent) and len(json.dumps(payload.data, default=str)) > 4000:
        return [dataclasses.replace(payload, data={"id": payload.data.get("id")})]
    return [payload]


def _fields(payload: events.Event) -> dict[str, Any]:
    assert dataclasses.is_dataclass(payload)  # every event is a frozen dataclass (app.core.platform.events)
    return {field.name: getattr(payload, field.name) for field in dataclasses.fields(payload)}


def _event(name: str, fields: dict[str, Any]) -> events.Event:
    cls = _BY_NAME[name]
    if cls is events.VoucherChanged:
        fields = {**fields, "ids": tuple(int(i) for i in fields["ids"])}
    return cls(**fields)
