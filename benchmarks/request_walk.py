"""The walk of one global-plan request through the agent package, as a newcomer follows it: how many
files it enters and how often it comes back to one.

From ``GlobalPlanAgent._steps``, every call of a function of ``hugginggpt/agent/`` made at most
``--depth`` calls below it (a coroutine counts once, however often it is resumed) takes the walk
from the caller's file to the callee's. A *stay* is a maximal run of one file in that sequence, a
*room* a file, a *return* a stay in a room already visited (stays - rooms). An *entry* is a call from
one room into another (coming back to the caller is not one): how often each file is entered. An instant
scripted LLM and instant tools (``_stubs.py``), a plan of two chained tasks. Fewer returns and entries:
each stage's bookkeeping is done in fewer places. Figures: docs/ARCHITECTURE.md "The walk of a request".

    python benchmarks/request_walk.py [--depth 1 2] [--show] [--quick]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections import Counter
from typing import Any

from _stubs import StubLLM, quick_parser, text_plan, timed_tools, write_result

PACKAGE = "hugginggpt/agent/"


def _room(frame: Any) -> str | None:
    path = frame.f_code.co_filename.replace("\\", "/")
    at = path.find(PACKAGE)
    return path[at + len(PACKAGE):] if at >= 0 else None


async def walk(depth: int) -> tuple[list[str], list[str]]:
    """The files one request passes through, in order (consecutive repeats merged), and the files entered
    by a call from another one, in order."""
    from hugginggpt.agent import GlobalPlanAgent

    with tempfile.TemporaryDirectory() as root:
        agent = GlobalPlanAgent(StubLLM(plan=text_plan([[], [0]])), tools=timed_tools(0.0), workspace_root=root)
        await agent.ainvoke("warm-up request")
        steps, seen, rooms, entries = GlobalPlanAgent._steps.__code__, {}, [], []

        def callers(frame: Any) -> list[str] | None:
            """The agent files between ``frame`` and ``_steps`` (None: not below ``_steps``)."""
            found = []
            while frame is not None:
                if frame.f_code is steps:
                    return found
                if (room := _room(frame)) is not None:
                    found.append(room)
                frame = frame.f_back
            return None

        def profile(frame: Any, event: str, arg: Any) -> None:
            if event != "call" or id(frame) in seen or (room := _room(frame)) is None:
                return
            seen[id(frame)] = frame  # kept alive: a resumed coroutine is the same frame, entered once
            chain = callers(frame.f_back)
            if chain is None or len(chain) >= depth:
                return
            caller = chain[0] if chain else "global_plan.py"
            if caller != room:
                entries.append(room)
            for entered in (caller, room):
                if not rooms or rooms[-1] != entered:
                    rooms.append(entered)

        sys.setprofile(profile)
        try:
            await agent.ainvoke("Summarize these texts.")
        finally:
            sys.setprofile(None)
    return rooms, entries


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = quick_parser(__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, nargs="+", default=[1, 2], help="calls below _steps followed (default 1 2)")
    parser.add_argument("--show", action="store_true", help="print each walk")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {}
    for depth in args.depth:
        rooms, entries = asyncio.run(walk(depth))
        counts, entered = Counter(rooms), Counter(entries)
        report[f"depth {depth}"] = {"stays": len(rooms), "rooms": len(counts), "returns": len(rooms) - len(counts),
                                    "stays_by_room": dict(counts.most_common()), "walk": rooms,
                                    "entries": len(entries), "entries_by_room": dict(entered.most_common()),
                                    "entered": entries}
        print(f"depth {depth}: {len(rooms)} stays in {len(counts)} rooms, {len(rooms) - len(counts)} returns; "
              + ", ".join(f"{room} {n}" for room, n in counts.most_common()))
        print(f"  {len(entries)} entries; " + ", ".join(f"{room} {n}" for room, n in entered.most_common()))
        if args.show:
            print("  walk: " + " > ".join(rooms))
            print("  entered: " + " > ".join(entries))
    print(f"written {write_result('request_walk', report, quick=args.quick)}")
    return report


if __name__ == "__main__":
    main()
