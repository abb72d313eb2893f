"""MiniTriton's stand-in for ``torch._inductor.runtime.triton_heuristics``.

The kernel files that torch.compile writes decorate each ``@triton.jit``
kernel with one of Inductor's heuristics (``@triton_heuristics.pointwise(...)``,
``reduction``, ``persistent_reduction``, ``cooperative_reduction``,
``split_scan``, ``template``, ``foreach``, ``fixed_config``,
``user_autotune``) and launch it with ``kernel.run(*args, stream=...)``.
Inductor's own module compiles every candidate config with Triton and
benchmarks them; this one needs neither. Each decorator turns the
``size_hints``, ``triton_meta`` and ``inductor_meta`` Inductor wrote into the
*first* config that Inductor's heuristics would try (the same block sizes and
``num_warps``, for an NVIDIA GPU of compute capability 9), and
:class:`InductorKernel` launches the kernel with it: the grid comes from
``inductor_meta["grid_type"]`` (``Grid1D``, ``Grid2D``, ``SplitScanGrid``, ...)
or, in files of older torch versions, from the ``grid=`` argument.

Nothing here imports torch: the hints Inductor passes (``ReductionHint``,
``DeviceProperties``) are read by name.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

from minitriton.autotune import Config
from minitriton.jit import KernelInterface, base_jit_function

#: Inductor's largest block per dimension (``hints.TRITON_MAX_BLOCK``, NVIDIA).
MAX_BLOCK = {"X": 4096, "Y": 1024, "Z": 1024, "R0_": 4096 * 16, "R1_": 2048 * 16}
#: The largest y and z grid of a CUDA launch.
MAX_GRID_YZ = 65535

Decorator = Callable[[Any], "InductorKernel"]


# -- helpers ----------------------------------------------------------------------


def _next_power_of_2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def _product(*values: int | None) -> int:
    """Inductor's ``conditional_product``: the product of the values that are set."""
    return math.prod(v for v in values if v)


def _hint(value: Any) -> str:
    """A ``ReductionHint`` (or its name) as its name; ``""`` when there is none."""
    return str(getattr(value, "name", value or ""))


def _reduction_prefixes(size_hints: dict[str, int]) -> list[str]:
    return [p for p in size_hints if p.startswith("r")]


def _rnumel(size_hints: dict[str, int]) -> int:
    return math.prod(size_hints[p] for p in _reduction_prefixes(size_hints))


def _num_warps(
    num_warps: int, max_num_warps: int = 8, min_num_warps: int = 2, register_intensive: bool = False
) -> int:
    if register_intensive:
        max_num_warps //= 2
    return _next_power_of_2(min(max(num_warps, min_num_warps), max_num_warps))


# -- the configs Inductor tries first -------------------------------------------------


def pointwise_config(
    size_hints: dict[str, int],
    x: int,
    y: int | None = None,
    z: int | None = None,
    num_elements_per_warp: int = 256,
    min_elem_per_thread: int = 0,
) -> Config:
    """Inductor's ``triton_config``: grow the blocks to the work, then pick ``num_warps``."""
    target = _product(x, y, z)
    if _product(*size_hints.values()) < target:
        target //= 8
    x = min(x, size_hints["x"])
    y = min(y, size_hints["y"]) if y else y
    z = min(z, size_hints["z"]) if z else z
    while x < min(size_hints["x"], MAX_BLOCK["X"]) and _product(x, y, z) < target:
        x *= 2
    while y and y < min(size_hints["y"], MAX_BLOCK["Y"]) and _product(x, y, z) < target:
        y *= 2
    while z and z < min(size_hints["z"], MAX_BLOCK["Z"]) and _product(x, y, z) < target:
        z *= 2
    num_warps = _num_warps(_product(x, y, z) // num_elements_per_warp, min_num_warps=1)
    if _product(x, y, z) >= 128:
        num_warps = max(num_warps, 4)
    block = max(_product(x, y, z), min_elem_per_thread * 32 * num_warps)
    x = min(x * math.ceil(block / _product(x, y, z)), size_hints["x"])
    cfg = {"XBLOCK": x}
    if y:
        cfg["YBLOCK"] = y
    if z:
        cfg["ZBLOCK"] = z
    return Config(cfg, num_warps=num_warps, num_stages=1)


def _split_reduction(r: int, size_hints: dict[str, int]) -> dict[str, int]:
    """A reduction block of ``r`` elements over the r-dimensions, innermost first."""
    remaining = min(r, _rnumel(size_hints))
    blocks: dict[str, int] = {}
    for prefix in reversed(_reduction_prefixes(size_hints)):
        dim = min(size_hints[prefix], MAX_BLOCK[prefix.upper()], remaining)
        blocks[prefix] = dim
        remaining //= dim
    return blocks


def reduction_config(
    size_hints: dict[str, int],
    x: int,
    r: int,
    num_warps: int | None = None,
    register_intensive: bool = False,
    reduction_hint: Any = None,
    min_num_warps: int = 2,
) -> Config:
    """Inductor's ``triton_config_reduction`` for blocks of ``x`` rows and ``r`` elements."""
    rblocks = _split_reduction(r, size_hints)
    x = min(x, size_hints["x"])

    def total() -> int:
        return _product(x, *rblocks.values())

    target = total()
    if _product(*size_hints.values()) < target:
        target //= 8
    while x < size_hints["x"] and total() < target:
        x *= 2
    for prefix in sorted(rblocks):
        while rblocks[prefix] < size_hints[prefix] and total() < target:
            rblocks[prefix] *= 2
    if num_warps is None:
        num_warps = r // 128 if _hint(reduction_hint) == "INNER" else total() // 128
    num_warps = _num_warps(num_warps, 16 if r <= 8192 else 32, min_num_warps, register_intensive)
    for prefix in sorted(rblocks):
        while total() > target and rblocks[prefix] > 1:
            rblocks[prefix] //= 2
    cfg = {"XBLOCK": x, **{p.upper() + "BLOCK": b for p, b in rblocks.items()}}
    return Config(cfg, num_warps=num_warps, num_stages=1)


def _no_tiled_reductions(size_hints: dict[str, int], kind: str) -> None:
    if "y" in size_hints:
        raise NotImplementedError(
            f"MiniTriton's Inductor runtime does not pick configs for tiled {kind}s yet "
            f"(size_hints {size_hints} have a 'y' dimension)"
        )


def _outer_config(
    size_hints: dict[str, int], rnumel: int, inductor_meta: dict[str, Any], num_dynamic: int,
    register_intensive: bool,
) -> Config:  # fmt: skip
    """Inductor's config for reductions over the outer dimension (``ReductionHint.OUTER``)."""
    x, x_block, num_warps = size_hints["x"], 64, None
    load_factor = inductor_meta.get("num_load", 0)
    if x <= 1024:
        x_block, r_block = max(min(x // 128, 8), 2), min(rnumel, 64)
    elif x // 4096 <= 8:
        x_block, r_block = 16, 512 // 16
    elif num_dynamic > 1:
        r_block = max(min(rnumel // 64, 64), 8)
    elif num_dynamic == 1:
        r_block = 1 if load_factor >= 3 else min(_next_power_of_2(max(rnumel, 128) // 128), 8)
    else:
        x_block = max(min(256, _next_power_of_2(x // 4096)), x_block)
        if load_factor < 4 or rnumel <= 128:
            r_block = 512 // x_block
        else:
            r_block, x_block, num_warps = (64 if rnumel >= 2048 else 32), min(x_block, 32), 4
    return reduction_config(size_hints, x_block, r_block, num_warps, register_intensive)


def first_reduction_config(
    size_hints: dict[str, int], triton_meta: dict[str, Any], inductor_meta: dict[str, Any]
) -> Config:
    """The first config of Inductor's looped reduction heuristic."""
    _no_tiled_reductions(size_hints, "reduction")
    hint = inductor_meta.get("reduction_hint")
    rnumel = _rnumel(size_hints)
    loads_and_reductions = inductor_meta.get("num_load", 0) + inductor_meta.get("num_reduction", 0)
    major = getattr(triton_meta.get("device"), "major", None)
    max_r_block = 1024 if major is not None and major >= 10 else 2048
    register_intensive = False
    if size_hints["x"] >= 1024 and loads_and_reductions >= 10:
        max_r_block, register_intensive = 1024, True

    def make(x: int, r: int) -> Config:
        return reduction_config(size_hints, x, r, None, register_intensive, hint)

    if inductor_meta.get("add_persistent_rblock") and loads_and_reductions <= 8:
        return make(max(4096 // rnumel, 1), min(rnumel, 32768))
    if _hint(hint) == "OUTER":
        num_dynamic = sum("ks" in name for name in triton_meta.get("signature", {}))
        return _outer_config(size_hints, rnumel, inductor_meta, num_dynamic, register_intensive)
    if _hint(hint) == "OUTER_TINY":
        return make(2 * (256 // rnumel) if rnumel <= 256 else 1, min(rnumel, max_r_block))
    return make(2 if rnumel <= 2048 else 1, min(rnumel, max_r_block))


def first_persistent_config(size_hints: dict[str, int], inductor_meta: dict[str, Any]) -> Config:
    """The first config of Inductor's persistent reduction heuristic (no R*_BLOCK: it is fixed)."""
    _no_tiled_reductions(size_hints, "persistent reduction")
    hint = inductor_meta.get("reduction_hint")
    xnumel, rnumel = size_hints["x"], _rnumel(size_hints)
    fits = [xb for xb in (1, 8, 32, 128) if xb == 1 or (rnumel * xb <= 4096 and xb <= xnumel)]
    if _hint(hint) == "INNER" and rnumel >= 256 and rnumel <= 1024 and xnumel // 8 >= 128:
        config = reduction_config(size_hints, min(1024 // rnumel, 8), rnumel, 1, True, hint, 1)
    elif _hint(hint) == "OUTER":
        config = reduction_config(size_hints, fits[-1], rnumel, None, True, hint)
    elif _hint(hint) == "OUTER_TINY":
        config = reduction_config(size_hints, 2 * (256 // rnumel) if rnumel <= 256 else 1, rnumel)
    else:
        config = reduction_config(size_hints, fits[0], rnumel, None, True, hint)
    for prefix in _reduction_prefixes(size_hints):
        config.kwargs.pop(prefix.upper() + "BLOCK", None)
    return config


# -- grids ---------------------------------------------------------------------------


def _cdiv(n: int, block: int | None) -> int:
    return n if not block or block == 1 else -(n // -block)


def launch_grid(
    grid_type: str, named: dict[str, Any], inductor_meta: dict[str, Any]
) -> tuple[int, ...]:
    """The grid of one launch, as Inductor's ``GridExpr`` subclass ``grid_type`` computes it.

    ``named`` holds the kernel's arguments and the config's values by name.
    """

    def g(name: str) -> int:
        return int(named.get(name) or 0)

    if grid_type == "Grid1D":
        return (_cdiv(g("xnumel"), g("XBLOCK")), 1, 1)
    if grid_type == "Grid2D":
        return (_cdiv(g("xnumel"), g("XBLOCK")), _cdiv(g("ynumel"), g("YBLOCK")), 1)
    if grid_type == "Grid3D":
        z = _cdiv(g("znumel"), g("ZBLOCK"))
        return (_cdiv(g("xnumel"), g("XBLOCK")), _cdiv(g("ynumel"), g("YBLOCK")), z)
    if grid_type == "BatchMatmulGrid3D":
        z = _cdiv(g("xnumel"), g("XBLOCK"))
        return (_cdiv(g("znumel"), g("ZBLOCK")), _cdiv(g("ynumel"), g("YBLOCK")), z)
    if grid_type == "Grid2DWithYZOverflow":
        y_raw = _cdiv(g("ynumel"), g("YBLOCK"))
        y_div = _cdiv(y_raw, MAX_GRID_YZ)
        return (_cdiv(g("xnumel"), g("XBLOCK")), 0 if y_div == 0 else _cdiv(y_raw, y_div), y_div)
    if grid_type == "CooperativeReductionGrid":
        return (g("RSPLIT"), _cdiv(g("xnumel"), g("XBLOCK")), 1)
    if grid_type == "SplitScanGrid":
        return (_cdiv(g("r0_numel"), g("R0_BLOCK")), g("xnumel"), 1)
    if grid_type == "MixOrderReductionGrid":
        return (_cdiv(g("xnumel"), g("RSPLIT_SIZE")), 1, 1)
    if grid_type in _COMBO_GRIDS:
        return _combo_grid(grid_type, named, inductor_meta["combo_grid_meta"])
    if grid_type == "FixedGrid":
        return tuple(_evaluate(e, named) for e in inductor_meta["fixed_grid"])
    if grid_type == "PrecomputedGrid":
        for candidate in inductor_meta["precomputed_grids"]:
            if all(named.get(k) == v for k, v in candidate["config"].items()):
                return tuple(_evaluate(e, named) for e in candidate["python"])
        raise ValueError(f"no precomputed grid matches {named}")
    raise NotImplementedError(f"MiniTriton's Inductor runtime has no grid of type {grid_type!r}")


_COMBO_GRIDS = ("SequentialComboKernelGrid", "SequentialFlattenComboKernelGrid",
                "RoundRobinComboKernelGrid")  # fmt: skip


def _combo_grid(grid_type: str, named: dict[str, Any], combo: dict[str, Any]) -> tuple[int, ...]:
    """The grid of a combo (foreach) kernel: its sub-kernels' blocks side by side along x."""
    meta = {**(combo.get("default_config") or {}), **named}
    count = combo["num_kernels"]

    def numel(axis: str, i: int) -> int:
        return int(combo.get(f"{axis}numel_{i}") or meta[f"{axis}numel_{i}"])

    def x_blocks(i: int, block: Any) -> int:
        return numel("x", i) if combo[f"no_x_dim_{i}"] else _cdiv(numel("x", i), block)

    has_y = any(f"ynumel_{i}" in combo for i in range(count))
    if grid_type == "SequentialFlattenComboKernelGrid":
        total = 0
        for i in range(count):
            y = _cdiv(numel("y", i), meta.get(f"YBLOCK_{i}")) if f"ynumel_{i}" in combo else 1
            total += x_blocks(i, meta.get(f"XBLOCK_{i}")) * y
        return (max(total, combo.get("min_blocks") or 0), 1, 1)
    if grid_type == "SequentialComboKernelGrid":
        x = sum(x_blocks(i, meta.get("XBLOCK")) for i in range(count))
    else:
        flat = [numel("x", i) for i in range(count) if combo[f"no_x_dim_{i}"]]
        tiled = [numel("x", i) for i in range(count) if not combo[f"no_x_dim_{i}"]]
        x = max(flat + ([_cdiv(max(tiled), meta.get("XBLOCK"))] if tiled else [])) * count
    x = max(x, combo.get("min_blocks") or 0)
    if not has_y:
        return (x, 1, 1)
    ynumel = max(numel("y", i) for i in range(count) if f"ynumel_{i}" in combo)
    y_raw = _cdiv(ynumel, meta.get("YBLOCK"))
    y_div = _cdiv(y_raw, MAX_GRID_YZ)
    return (x, 0 if y_div == 0 else _cdiv(y_raw, y_div), y_div)


def _evaluate(expr: Any, named: dict[str, Any]) -> int:
    """A grid entry: a number, or a Python expression over argument and config names."""
    if isinstance(expr, int):
        return expr
    return int(eval(str(expr), {"math": math, "__builtins__": {"max": max, "min": min}}, named))


def grid(*numels: int) -> Callable[[dict[str, int]], tuple[int, ...]]:
    """The ``grid(xnumel[, ynumel[, znumel]])`` of older Inductor files: one program per block."""
    blocks = ("XBLOCK", "YBLOCK", "ZBLOCK")

    def grid_fn(meta: dict[str, int]) -> tuple[int, ...]:
        sizes = [_cdiv(n, meta.get(b, 1)) for n, b in zip(numels, blocks)]
        return (*sizes, *[1] * (3 - len(sizes)))

    return grid_fn


def split_scan_grid(xnumel: int, rnumel: int) -> Callable[[dict[str, int]], tuple[int, ...]]:
    """The grid of a split scan in older Inductor files: (r blocks, rows)."""
    return lambda meta: (_cdiv(rnumel, meta.get("R0_BLOCK", meta.get("RBLOCK", 1))), xnumel, 1)


# -- the launcher ----------------------------------------------------------------------


class InductorKernel(KernelInterface):
    """An Inductor kernel with its config: ``kernel.run(*args, stream=...)`` launches it.

    ``args`` are the kernel's arguments in order, without the config's block
    sizes (Inductor's calling convention); ``stream`` is accepted and ignored
    (launches on MiniTriton are ordered on one stream). :attr:`backend` is
    the MiniTriton backend of its launches (None: the default one).
    """

    backend: str | None = None

    def __init__(
        self, fn: Any, configs: Sequence[Config], triton_meta: dict[str, Any] | None,
        inductor_meta: dict[str, Any] | None, heuristic: str, size_hints: Any = None,
    ) -> None:  # fmt: skip
        self.fn = fn
        self.size_hints = size_hints
        self.configs = list(configs)
        self.triton_meta = dict(triton_meta or {})
        self.inductor_meta = dict(inductor_meta or {})
        self.heuristic = heuristic
        self.__name__ = base_jit_function(fn).__name__

    @property
    def device_props(self) -> Any:
        """The device the file was written for (``triton_meta["device"]``), as Inductor reads it."""
        device = self.triton_meta.get("device")
        return device if hasattr(device, "type") else SimpleNamespace(type=str(device or "cuda"))

    @property
    def config(self) -> Config:
        """The config every launch uses: the first one Inductor would try."""
        return self.configs[0]

    def bind(self, args: Sequence[Any]) -> dict[str, Any]:
        """Name the launch's arguments: the kernel's, then ``extra_launcher_args``."""
        names = [n for n in base_jit_function(self.fn).arg_names if n not in self.config.kwargs]
        constants = dict(self.triton_meta.get("constants") or {})
        extra = list(self.inductor_meta.get("extra_launcher_args") or [])
        if len(args) < len(names) + len(extra):
            names = [n for n in names if n not in constants]  # an older file: constants left out
        if len(args) != len(names) + len(extra):
            raise TypeError(
                f"{self.__name__}.run() takes {len(names) + len(extra)} arguments "
                f"({', '.join(names + extra)}), not {len(args)}"
            )
        return {**constants, **dict(zip(names + extra, args))}

    def run(
        self, *args: Any, grid: Any = None, stream: Any = None, warmup: bool = False,
        benchmark_run: bool = False, **kwargs: Any,
    ) -> Any:  # fmt: skip
        """Launch with :attr:`config` on the grid that Inductor's grid type gives."""
        named = {**self.bind(args), **kwargs}
        meta = {**named, **self.config.kwargs}
        launch_grid_ = self._grid(grid, meta)
        jit_fn = base_jit_function(self.fn)
        call = {n: meta[n] for n in jit_fn.arg_names if n in meta}
        options: dict[str, Any] = {"num_warps": self.config.num_warps,
                                   "num_stages": self.config.num_stages}  # fmt: skip
        if self.backend is not None:
            options["backend"] = self.backend
        return jit_fn.run(grid=launch_grid_, warmup=warmup, **call, **options)

    def _grid(self, grid: Any, meta: dict[str, Any]) -> tuple[int, ...]:
        if grid is None:
            grid_type = self.inductor_meta.get("grid_type")
            if grid_type is None:
                raise TypeError(f"{self.__name__}.run() needs grid=: the file names no grid_type")
            return launch_grid(grid_type, meta, self.inductor_meta)
        return tuple(grid(meta)) if callable(grid) else tuple(grid)

    def clone_args(self, *args: Any, **kwargs: Any) -> tuple[list[Any], dict[str, Any]]:
        """Copies of the tensor arguments, for a trial launch that must not touch the real ones.

        Inductor's multi-kernels (``triton.multi_kernel``) time each candidate
        kernel on such copies before they launch the fastest on the real ones.
        """
        return [_copy(a) for a in args], {k: _copy(v) for k, v in kwargs.items()}

    def benchmark_all_configs(self, *args: Any, **kwargs: Any) -> dict[Config, float]:
        """Time one launch of each config, in milliseconds (there is one config)."""
        start = time.perf_counter()
        self.run(*args, **kwargs)
        return {self.config: (time.perf_counter() - start) * 1e3}

    def precompile(self, *args: Any, **kwargs: Any) -> None:
        """Inductor compiles ahead of the first launch; MiniTriton compiles at the launch."""


def _copy(value: Any) -> Any:
    """A copy of a tensor (or array) argument; other values as they are."""
    clone = getattr(value, "clone", None) or getattr(value, "copy", None)
    return clone() if callable(clone) and hasattr(value, "shape") else value


def _decorator(
    configs: Callable[[], Sequence[Config]], triton_meta: dict[str, Any] | None,
    inductor_meta: dict[str, Any] | None, heuristic: str, size_hints: Any = None,
) -> Decorator:  # fmt: skip
    def decorate(fn: Any) -> InductorKernel:
        return InductorKernel(fn, configs(), triton_meta, inductor_meta, heuristic, size_hints)

    return decorate


def _meta(inductor_meta: dict[str, Any] | None, reduction_hint: Any = None) -> dict[str, Any]:
    meta = dict(inductor_meta or {})
    if reduction_hint is not None:
        meta["reduction_hint"] = reduction_hint
    return meta


def _x_hints(size_hints: Any, inductor_meta: dict[str, Any]) -> dict[str, int]:
    """``size_hints`` as a dict (older files pass a list), with x = 1 when there is no x dim."""
    if not isinstance(size_hints, dict):
        prefixes = ["x", "y", "z"][: len(size_hints) - 1] + ["r0_"]
        size_hints = dict(zip(prefixes, size_hints))
    hints = dict(size_hints)
    if inductor_meta.get("no_x_dim"):
        hints["x"] = 1
    return hints


# -- the decorators ----------------------------------------------------------------------


def pointwise(
    size_hints: Any, triton_meta: dict[str, Any], tile_hint: Any = None,
    filename: str | None = None, min_elem_per_thread: int = 0,
    inductor_meta: dict[str, Any] | None = None, **_: Any,
) -> Decorator:  # fmt: skip
    """``@triton_heuristics.pointwise``: 1-D blocks of 256-1024, 2-D 32x32, 3-D 16x16x16."""
    if not isinstance(size_hints, dict):
        size_hints = dict(zip("xyz", size_hints))
    numel = math.prod(size_hints.values())
    bs = max(256, min(numel // 128, 1024))
    first: dict[int, tuple[int, int | None, int | None]] = {
        1: (bs, None, None),
        2: (32, 32, None),
        3: (16, 16, 16),
    }
    if len(size_hints) not in first:
        raise NotImplementedError(f"pointwise size_hints: {size_hints}")

    def configs() -> list[Config]:
        x, y, z = first[len(size_hints)]
        return [pointwise_config(size_hints, x, y, z, min_elem_per_thread=min_elem_per_thread)]

    return _decorator(configs, triton_meta, inductor_meta, "pointwise", size_hints)


def reduction(
    size_hints: Any, reduction_hint: Any = False, triton_meta: dict[str, Any] | None = None,
    filename: str | None = None, inductor_meta: dict[str, Any] | None = None, **_: Any,
) -> Decorator:  # fmt: skip
    """``@triton_heuristics.reduction``: a loop over the reduction in blocks of R0_BLOCK."""
    meta = _meta(inductor_meta, reduction_hint)
    hints = _x_hints(size_hints, meta)
    tmeta = triton_meta or {}
    configs = lambda: [first_reduction_config(hints, tmeta, meta)]  # noqa: E731
    return _decorator(configs, tmeta, meta, "reduction", size_hints)


def persistent_reduction(
    size_hints: Any, reduction_hint: Any = False, triton_meta: dict[str, Any] | None = None,
    filename: str | None = None, inductor_meta: dict[str, Any] | None = None, **_: Any,
) -> Decorator:  # fmt: skip
    """``@triton_heuristics.persistent_reduction``: the whole reduction in one block."""
    meta = _meta(inductor_meta, reduction_hint)
    hints = _x_hints(size_hints, meta)
    configs = lambda: [first_persistent_config(hints, meta)]  # noqa: E731
    return _decorator(configs, triton_meta, meta, "persistent_reduction", size_hints)


def cooperative_reduction(
    size_hints: Any, reduction_hint: Any, triton_meta: dict[str, Any], filename: str | None = None,
    inductor_meta: dict[str, Any] | None = None, **_: Any,
) -> Decorator:  # fmt: skip
    """``@triton_heuristics.cooperative_reduction``: RSPLIT programs share each row."""
    meta = _meta(inductor_meta, reduction_hint)
    hints = _x_hints(size_hints, meta)
    xnumel, rnumel = hints["x"], hints["r0_"]
    sms = getattr(triton_meta.get("device"), "multi_processor_count", None) or 132
    split = max(1, min(rnumel, (1 << (sms.bit_length() - 1)) // xnumel, 64))

    def configs() -> list[Config]:
        part = {"x": xnumel, "r0_": rnumel // split}
        if meta.get("persistent_reduction"):
            config = first_persistent_config(part, meta)
        else:
            config = first_reduction_config(part, triton_meta, meta)
        config.kwargs["RSPLIT"] = split
        return [config]

    return _decorator(configs, triton_meta, meta, "cooperative_reduction", size_hints)


def split_scan(
    size_hints: Any, reduction_hint: Any = False, triton_meta: dict[str, Any] | None = None,
    filename: str | None = None, inductor_meta: dict[str, Any] | None = None, **_: Any,
) -> Decorator:  # fmt: skip
    """``@triton_heuristics.split_scan``: a reduction's config, with blocks of at least 256."""
    meta = _meta(inductor_meta, reduction_hint)
    hints = _x_hints(size_hints, meta)
    tmeta = triton_meta or {}

    def configs() -> list[Config]:
        config = first_reduction_config(hints, tmeta, meta)
        least = meta.get("min_split_scan_rblock", 256)
        for name, value in list(config.kwargs.items()):
            if name.startswith("R") and value < least:
                config.kwargs[name] = least
        return [config]

    return _decorator(configs, tmeta, meta, "split_scan", size_hints)


def template(
    num_stages: int, num_warps: int, triton_meta: dict[str, Any], filename: str | None = None,
    inductor_meta: dict[str, Any] | None = None, **_: Any,
) -> Decorator:  # fmt: skip
    """``@triton_heuristics.template``: the template's blocks are constants in its body."""
    configs = lambda: [Config({}, num_warps=num_warps, num_stages=num_stages)]  # noqa: E731
    return _decorator(configs, triton_meta, inductor_meta, "template")


def foreach(
    triton_meta: dict[str, Any], filename: str | None = None,
    inductor_meta: dict[str, Any] | None = None, num_warps: int = 8, **_: Any,
) -> Decorator:  # fmt: skip
    """``@triton_heuristics.foreach``: 8 warps (older files pass ``num_warps``)."""
    configs = lambda: [Config({}, num_warps=num_warps, num_stages=1)]  # noqa: E731
    return _decorator(configs, triton_meta, inductor_meta, "foreach")


def fixed_config(
    config: dict[str, Any], filename: str | None = None, triton_meta: dict[str, Any] | None = None,
    inductor_meta: dict[str, Any] | None = None, **_: Any,
) -> Decorator:  # fmt: skip
    """``@triton_heuristics.fixed_config``: the config the file names."""
    kwargs = dict(config)
    options = {k: kwargs.pop(k) for k in ("num_warps", "num_stages") if k in kwargs}
    configs = lambda: [Config(kwargs, **options)]  # noqa: E731
    return _decorator(configs, triton_meta, inductor_meta, "fixed_config")


def user_autotune(
    configs: Sequence[Any], triton_meta: dict[str, Any], filename: str | None = None,
    inductor_meta: dict[str, Any] | None = None, custom_kernel: bool = False, **_: Any,
) -> Decorator:  # fmt: skip
    """``@triton_heuristics.user_autotune``: a user's @autotune kernel; its first config."""
    as_configs = [c if isinstance(c, Config) else _config_from_dict(c) for c in configs]
    chosen = lambda: as_configs[:1] or [Config({})]  # noqa: E731
    return _decorator(chosen, triton_meta, inductor_meta, "user_autotune")


def _config_from_dict(d: dict[str, Any]) -> Config:
    kwargs = dict(d.get("kwargs", d))
    options = {k: d[k] for k in ("num_warps", "num_stages") if k in d}
    for k in ("num_warps", "num_stages"):
        kwargs.pop(k, None)
    return Config(kwargs, **options)


def start_graph() -> None:
    """Inductor's bandwidth profiler hook (a no-op here)."""


def end_graph(output_file: str | None = None) -> None:
    """Inductor's bandwidth profiler hook (a no-op here)."""
