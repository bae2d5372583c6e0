"""The partition protocol: a racer cut off from its PostgreSQL store in the middle of a consume.

Built on ``probes.kit.protocols`` (its runs and probes) and ``probes.core.netns`` (the network
namespaces, veth pairs and the bridge to the store); registered there as ``partition``.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from probes.core.checker import Property, Verdict
from probes.core.errors import HarnessError
from probes.core.history import Kind
from probes.kit.adapter import Capability
from probes.kit.protocols import Probe, _needs

PARTITION_POINTS = ("s2.begin", "s2.consumed")  # the answering process's link is cut there: before / after it consumed


def partition(p: Probe, args: dict[str, Any]) -> list[Verdict]:
    """A network partition in the middle of a consume (Jepsen's partition nemesis): two processes
    in network namespaces of their own answer the run's current pause (no handle: as workers that
    pick up the same request do) on PostgreSQL. Racer A is
    stopped at ``point`` inside the answered step, its link to the store is cut, and it is let go
    on (its writes wait in TCP retransmission); racer B, whose link is whole, answers the same
    pause; the link comes back once B has ended (or, B blocked on A, after ``seconds``), and both
    are waited for. Restoring it only after B ended keeps the order of the two fixed: A's late
    writes land after B has done what it does, however fast B's process starts.

    A partitioned owner looks dead to everyone else, but it is alive and its writes arrive once
    the network heals. The effect inside A's step is local and fires when A goes on; what must not
    happen is B consuming the answer A consumed (CO), any effect twice (EO), or the run left
    without a completion (LV). What B did while A was cut off (refused, waited for A, completed),
    and what A did when its link came back, are kept in observations.
    """
    from probes.core import netns  # iproute2 only when the protocol runs

    point, seconds = args["point"], args["seconds"]
    path = f"partition:{point}"
    props = (Property.EO, Property.CO, Property.LV)
    if why := _needs(p, Capability.PAUSE):
        return [p.judge.not_applicable(prop, path, why) for prop in props]
    if p.target.backend != "postgres":
        return [p.judge.not_applicable(prop, path, f"the partition cuts a process's TCP link to its PostgreSQL "
                                                   f"store; the {p.target.backend} backend has no link to cut")
                for prop in props]
    if why := netns.unavailable():
        return [p.judge.not_applicable(prop, path, f"skipped on this machine: {why}") for prop in props]
    answer = p.target.cls.answers[0]
    run = p.run("run")
    run.start()
    seen: dict[str, Any] = {"point": point, "seconds": seconds}
    with netns.Partition(run.store or "", 2, p.target.python or sys.executable) as net:
        a, b = (run.across(net.pythons[i], net.tcp[i]) for i in (0, 1))
        b_out: dict[str, Any] = {}

        def answer_b() -> None:
            try:
                b_out["status"] = b.op("racer-b", "resume", handle=None, answer=answer)
            except BaseException as exc:  # re-raised below, in the protocol's thread
                b_out["error"] = exc

        def while_cut() -> None:
            racer = threading.Thread(target=answer_b, name="kit-partition-b", daemon=True)
            run.note(Kind.ANSWER, value=answer, detail={"addressed": False, "partitioned": "racer-a"})
            racer.start()
            racer.join(seconds)
            seen["b_during_cut"] = "ended" if not racer.is_alive() else "still running"
            net.restore(0)
            racer.join(run.target.timeout)
            if racer.is_alive():
                raise HarnessError(f"racer B did not end within {run.target.timeout:g} s of the link coming back")

        run.note(Kind.ANSWER, value=answer, detail={"addressed": False, "racer": "a"})
        with a.stopped("racer-a", "resume", point, handle=None, answer=answer) as go_on:
            net.cut(0)
            late = go_on(while_cut)
        if "error" in b_out:
            raise b_out["error"]
    a_status, b_status = (s.get("status") if s.get("status") != "raised" else f"raised {s.get('error')}"
                          for s in (late, b_out["status"]))
    seen.update(a=a_status, b=b_status)
    p.observations["partition"] = seen
    h = p.read()
    # (whether B ended before the link came back depends on how fast B's process starts: kept in
    # observations, out of the verdicts, which repeat byte for byte)
    what = (f"racer A cut from the store at {point} while racer B answered: B {b_status}, "
            f"A {a_status} once its link came back")
    return [p.judge.effects_once(path, h, what), p.judge.gated_once(path, h, what),
            p.judge.live(path, h, what, p.target.cls.result(answer))]
