"""MiniTriton's first Inductor config against Inductor's own heuristics, under the alias.

Run as a script: with ``triton`` aliased to MiniTriton, torch's
``triton_heuristics`` imports, and its ``pointwise``, ``reduction`` and
``persistent_reduction`` give their config lists (``return_configs=True``)
without compiling anything. Prints one JSON object: the number of cases
compared, how many different configs Inductor chose among them, and every
case where MiniTriton's config differs from the first of Inductor's list.
"""

from __future__ import annotations

import itertools
import json

from minitriton.compat import alias_triton

alias_triton()

import triton  # noqa: E402
from torch._inductor.runtime import triton_heuristics as inductor  # noqa: E402
from torch._inductor.runtime.hints import DeviceProperties, ReductionHint  # noqa: E402

from minitriton.inductor import heuristics as ours  # noqa: E402

H200 = DeviceProperties(
    type="cuda", index=0, multi_processor_count=132, cc=90, major=9,
    regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048,
    max_threads_per_block=1024, warp_size=32,
)  # fmt: skip
HINTS = [ReductionHint.INNER, ReductionHint.OUTER, ReductionHint.OUTER_TINY, ReductionHint.DEFAULT]


def meta() -> dict:
    return {"signature": {"in_ptr0": "*fp32", "xnumel": "i32"}, "device": H200, "constants": {}}


def summary(config: object) -> list:
    return [dict(sorted(config.kwargs.items())), config.num_warps, config.num_stages]


@triton.jit
def kernel(x_ptr):
    pass


def cases() -> list[tuple[str, object, object]]:
    out = []
    for n in (1, 8, 64, 512, 1024, 4096, 65536, 1 << 20):
        hints = {"x": n}
        theirs = inductor.pointwise(dict(hints), meta(), inductor_meta={}, return_configs=True)
        out.append((f"pointwise {hints}", hints, theirs, "pointwise", {}))
    for y, x in ((128, 128), (1024, 16), (16, 4096), (2, 2)):
        hints = {"y": y, "x": x}
        theirs = inductor.pointwise(dict(hints), meta(), inductor_meta={}, return_configs=True)
        out.append((f"pointwise {hints}", hints, theirs, "pointwise", {}))
    for x, r, hint, loads in itertools.product(
        (1, 4, 128, 4096, 1 << 16), (64, 4096, 1 << 16), HINTS, (1, 12)
    ):
        hints = {"x": x, "r0_": r}
        im = {"num_load": loads, "num_reduction": 1}
        theirs = inductor.reduction(dict(hints), hint, meta(), inductor_meta=dict(im),
                                    return_configs=True)  # fmt: skip
        out.append((f"reduction {hints} {hint.name} loads={loads}", hints, theirs,
                    "reduction", {"reduction_hint": hint, **im}))  # fmt: skip
    for x, r, hint in itertools.product((1, 8, 4096, 1 << 16), (16, 64, 256, 1024), HINTS):
        hints = {"x": x, "r0_": r}
        theirs = inductor.persistent_reduction(dict(hints), hint, meta(), inductor_meta={},
                                               return_configs=True)  # fmt: skip
        out.append((f"persistent {hints} {hint.name}", hints, theirs, "persistent_reduction",
                    {"reduction_hint": hint}))  # fmt: skip
    return out


def main() -> None:
    differ, distinct = [], set()
    try:
        all_cases = cases()
    except TypeError as e:  # a torch whose heuristics cannot list their configs
        print(json.dumps({"skipped": f"Inductor's heuristics cannot list configs: {e}"}))
        return
    for name, hints, theirs, kind, im in all_cases:
        hint = im.pop("reduction_hint", None)
        if kind == "pointwise":
            mine = ours.pointwise(dict(hints), meta(), inductor_meta=im)
        else:
            mine = getattr(ours, kind)(dict(hints), hint, meta(), inductor_meta=im)
        got, want = summary(mine(kernel).config), summary(theirs[0])
        distinct.add(json.dumps(want, sort_keys=True))
        if got != want:
            differ.append({"case": name, "minitriton": got, "inductor": want})
    print(json.dumps({"compared": len(all_cases), "distinct": len(distinct), "differ": differ}))


if __name__ == "__main__":
    main()
