"""How the Ray executor schedules batches: how many go in one call (:class:`CallSize`) and
which actor of a pool runs which batch (:class:`Affinity`). Plain Python, no Ray: the policy
is tested on its own."""

from __future__ import annotations

from collections import deque

#: A call (a Ray task, or an actor call) carries as many batches as take about this many seconds
#: (measured as the job runs), so Ray's cost per call (scheduling, serialisation, a round trip,
#: the driver's loop) stays small next to millisecond work...
TARGET_CALL_SECONDS = 0.25
#: ... and at most this many batches.
MAX_CALL_BATCHES = 32


class CallSize:
    """How many batches the next call carries: about :data:`TARGET_CALL_SECONDS` of work at the
    seconds per batch measured so far (one batch per call until a call has come back), at most
    :data:`MAX_CALL_BATCHES`, and at most a fair share of what is left (``left`` batches over
    ``workers`` workers, when the total is known), so the workers finish together."""

    def __init__(self, workers: int, total: int | None):
        self.workers, self.left = max(1, workers), total
        self.per_batch: float | None = None

    def observe(self, seconds: float, batches: int) -> None:
        if batches > 0 and seconds >= 0:
            rate = seconds / batches
            self.per_batch = rate if self.per_batch is None else 0.7 * self.per_batch + 0.3 * rate

    def sent(self, batches: int) -> None:
        if self.left is not None:
            self.left = max(0, self.left - batches)

    def size(self) -> int:
        if self.per_batch is None:
            return 1
        size = min(MAX_CALL_BATCHES, max(1, int(TARGET_CALL_SECONDS / max(self.per_batch, 1e-6) + 1e-9)))
        if self.left is not None:
            size = min(size, max(1, self.left // (2 * self.workers)))
        return size


class Affinity:
    """Which batch an idle actor runs next: one it ran in an earlier job of this executor (a
    worker keeps its process's caches, e.g. the LM statistics the metric detectors share), else
    one nobody in the pool ran. An actor never takes another's batch: that batch is likely a
    cache hit where it is and a full recomputation elsewhere. Each queue runs its largest
    batches first, so a long batch does not start last and run alone."""

    def __init__(self, batches: list, owner: dict, actors: list):
        self.queues = {actor: [] for actor in actors}
        free: list = []
        for batch in batches:
            self.queues.get(owner.get(batch[0][0]), free).append(batch)
        self.queues = {a: deque(sorted(q, key=_weight, reverse=True)) for a, q in self.queues.items()}
        self.free = deque(sorted(free, key=_weight, reverse=True))

    def take(self, actor):
        mine = self.queues.get(actor)
        if mine:
            return mine.popleft(), 1
        return (self.free.popleft(), 1) if self.free else None

    def orphan(self, actor) -> None:
        """``actor`` died: the batches it owned are anyone's."""
        left = list(self.queues.pop(actor, ())) + list(self.free)
        self.free = deque(sorted(left, key=_weight, reverse=True))


def _weight(batch: list) -> int:
    """A batch's size in characters of its payloads (texts, or tuples of texts): its cost."""
    def size(payload) -> int:
        if isinstance(payload, str):
            return len(payload)
        if isinstance(payload, (tuple, list)):
            return sum(size(p) for p in payload)
        return 1

    return sum(size(payload) for _, payload in batch)


