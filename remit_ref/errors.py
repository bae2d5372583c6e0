"""The named errors REMIT raises. Each says what happened and what to do next."""

from __future__ import annotations


class RemitError(RuntimeError):
    """Base class of every error REMIT raises on purpose."""


class ConsumeConflict(RemitError):
    """Another resume already claimed this interrupt (consume-once).

    Raised by ``get_tuple`` on the resume path, before any node runs, in the process
    that lost the atomic claim. The winner's answer stands; read the thread's state to
    see it. If the winner's answer is recorded but its run stopped (its process died),
    ``invoke(None)`` finishes the run with that answer: a new resume would consume the
    interrupt twice, so it is refused. Only an owner that died before its answer was
    recorded leaves the interrupt to be consumed again: the automatic takeover of a dead
    same-host owner, or ``release_stale_claims()``, frees it.
    """

    def __init__(self, thread_id: str, checkpoint_id: str, interrupt_id: str, owner: str) -> None:
        self.thread_id = thread_id
        self.checkpoint_id = checkpoint_id
        self.interrupt_id = interrupt_id
        self.owner = owner
        super().__init__(
            f"interrupt {interrupt_id} of thread {thread_id!r} (checkpoint {checkpoint_id}) was already "
            f"consumed by {owner}; read the thread state instead of resuming again (if its run stopped "
            f"after the answer was recorded, invoke(None) finishes it), or call release_stale_claims() if "
            f"that owner died before its answer was recorded"
        )


class InvalidCheckpoint(RemitError, ValueError):
    """A state that violates the declared schema was about to become durable; nothing was written."""

    def __init__(self, where: str, channel: str, detail: str) -> None:
        self.where = where
        self.channel = channel
        self.detail = detail
        super().__init__(
            f"refused to persist invalid state ({where}, channel {channel!r}): {detail}; "
            f"fix the node that produced it (nothing was written)"
        )


class EffectInDoubt(RemitError):
    """An effect was started but its completion was never recorded (the process died in between).

    REMIT cannot know whether the external effect happened, so it refuses to fire it
    again. Check the external system, then call ``ledger.resolve(...)`` with what you
    found.
    """

    def __init__(self, thread_id: str, task: str, effect_id: str) -> None:
        self.thread_id = thread_id
        self.task = task
        self.effect_id = effect_id
        super().__init__(
            f"effect {effect_id!r} of task {task!r} on thread {thread_id!r} was started but never recorded "
            f"as done (crash in between); check the external system, then call "
            f"ledger.resolve({thread_id!r}, {task!r}, {effect_id!r}, fired=True|False)"
        )


class StoreClosed(RemitError):
    """The wrapped saver's database connection is closed: nothing was read or written."""

    def __init__(self, saver: str, detail: str) -> None:
        self.saver = saver
        self.detail = detail
        super().__init__(
            f"the connection of the wrapped {saver} is closed ({detail}); open a new connection and "
            f"wrap a new saver on it (remit_ref.wrap({saver}(conn)))"
        )


class WriteSuperseded(RemitError):
    """Another process took this thread's run over: this run's write was refused and nothing was written.

    Raised by ``put`` / ``put_writes`` of a wrapper made with ``write_ownership=True``
    once a later run on the same thread (another process, or another wrapper) has taken
    ownership of it. The run that took over carries on; this one stays refused for every
    further write. Read the thread's state to see where it stands; do not retry this run.
    """

    def __init__(self, thread_id: str, epoch: int, current_epoch: int | None, current_owner: str | None) -> None:
        self.thread_id = thread_id
        self.epoch = epoch
        self.current_epoch = current_epoch
        self.current_owner = current_owner
        now = ("no owner on record" if current_epoch is None
               else f"now owned by {current_owner} (epoch {current_epoch})")
        super().__init__(
            f"this run no longer owns thread {thread_id!r}: it took ownership at epoch {epoch}, the thread is "
            f"{now}; its write was refused and nothing was written -- read the thread state instead of "
            f"retrying this run"
        )
