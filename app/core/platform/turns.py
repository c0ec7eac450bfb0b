"""A job one desk at a time runs over a shared database (issue 34): the webhook forwarder, the summary ticket poller.

Each round of the job asks `mine()` first: the turn is taken or renewed for `seconds` on the database's clock (the
one every desk shares), or found held by another desk, whose round it then is. A holder that died is replaced at once
when its process is of this host and gone (`processes.owner_alive`), else once its turn runs out; a desk closing gives
its turn up, so the next desk to look takes it at once. What a round does stays safe without it (each delivery and
each summary has its own claim): the turn keeps two desks from doing the same rounds twice over.
"""

from __future__ import annotations

import uuid

from app.core.platform.processes import owner_alive, owner_of_this_process
from app.core.storage.ports.platform import DeskTurnRepository

# How long a turn lasts without a round renewing it, and how often a desk without the turn looks again.
TURN_S = 60.0
LOOK_AGAIN_S = 5.0


class DeskTurn:
    def __init__(self, repository: DeskTurnRepository, name: str, seconds: float = TURN_S,
                 owner: str | None = None) -> None:
        self.repository = repository
        self.name = name
        self.seconds = seconds
        self.owner = owner or owner_of_this_process(uuid.uuid4().hex[:8])

    def mine(self) -> bool:
        """Whether this desk runs the job's round now (the turn taken or renewed)."""
        if self.repository.hold(self.name, self.owner, self.seconds):
            return True
        current = self.repository.current(self.name)
        if current is None:  # given up meanwhile
            return self.repository.hold(self.name, self.owner, self.seconds)
        holder, running = current
        if running and owner_alive(holder):
            return False
        return self.repository.hold(self.name, self.owner, self.seconds, replacing=holder)

    def give_up(self) -> None:
        self.repository.release(self.name, self.owner)
