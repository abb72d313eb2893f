"""``@autotune`` and ``@heuristics``, stackable on ``@jit`` as in Triton's tutorials::

    @triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4),
                              triton.Config({"BLOCK": 256}, num_warps=8)],
                     key=["n_elements"])
    @triton.jit
    def kernel(x_ptr, n_elements, BLOCK: tl.constexpr): ...

On the GPU the autotuner times every config once per distinct value of the
``key`` arguments (and the dtypes of array arguments) and keeps the fastest:
each config is compiled and run once, warmed up for ``warmup`` milliseconds
(Triton's default 25), then run for about ``rep`` milliseconds (100; 5 to
100 runs), and its time is the median run. Progress goes to stderr
(``config 2/3: BLOCK: 256, ...: 0.123 ms``).

The winner is also stored on disk, in the kernel cache's directory
(``$MINITRITON_CACHE_DIR`` or ``~/.cache/minitriton``, entries
``autotune-<sha256>.json`` in the format of :mod:`minitriton.backend.cache`),
keyed by the kernel's name and source, the configs, the key values, the GPU's
name and arch, and the compiler's version. Another process with the same
kernel, key and GPU takes the winner from there without timing anything;
Triton re-tunes in every process unless ``cache_results=True``. An entry
that is corrupt or belongs to something else is ignored, and tuning rewrites
it. ``cache_results=False``, ``MINITRITON_AUTOTUNE_CACHE=0`` or
``MINITRITON_CACHE=0`` (which turns off the whole disk cache) keep the
winners in memory only.

A config that needs more shared memory, registers or threads than the GPU
has (:class:`~minitriton.runtime.errors.OutOfResources`, see
:mod:`minitriton.resources`) is skipped, and the progress line says why
(``config 3/4: ...: skipped (kernel 'matmul' (num_warps=8, ...): out of
resource: shared memory, ...)``); so is a config that fails to compile. When
every config is skipped, the first one's error is raised.

Timing means nothing on the emulator, so there it uses the first config
that compiles, after ``prune_configs_by`` has pruned them, and says so once,
on stderr (a config can fail a ``tl.static_assert`` for some arguments),
unless the autotuner was given its own ``do_bench``: then the configs are
timed with it, as on the GPU, and the winner is kept in memory only (a
``do_bench`` that needs a GPU, one timing with CUDA events, fails on a machine
without one: the first config that compiles runs then, and stderr says why).
``prune_configs_by`` follows Triton: ``early_config_prune(configs, nargs,
**kwargs)`` must keep at least one config (else an ``AutotunerError``),
and ``perf_model`` keeps the ``top_k`` configs it rates fastest (a float
``top_k`` is a fraction, at least one; 1.0 by default).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from minitriton.diagnostics import CompileError, UserError, trimmed
from minitriton.jit import (
    Grid,
    KernelInterface,
    MockTensor,
    base_jit_function,
    graph_break,
    resolve_backend,
)
from minitriton.runtime.errors import OutOfResources

if TYPE_CHECKING:
    from typing_extensions import Unpack

#: ``0`` keeps autotuning winners in memory only (the kernel cache stays on).
AUTOTUNE_CACHE_ENV = "MINITRITON_AUTOTUNE_CACHE"
#: The version of the disk entries' contents; another value is a foreign entry.
ENTRY_FORMAT = "minitriton-autotune 1"
#: Runs of one config: at least this many, at most that many.
MIN_RUNS, MAX_RUNS = 5, 100


class AutotunerError(UserError, Exception):
    """A mistake in an autotuner's configs or pruning (Triton's ``AutotunerError``): its
    message starts with ``Autotuner error:``."""

    def __init__(self, message: str) -> None:
        super().__init__(f"Autotuner error: {message}")


class Config:
    """One autotuning candidate: meta-parameters plus launch options (Triton's signature)."""

    def __init__(
        self,
        kwargs: dict[str, Any],
        num_warps: int = 4,
        num_stages: int = 3,
        num_ctas: int = 1,
        maxnreg: int | None = None,
        pre_hook: Callable[[dict[str, Any]], None] | None = None,
        ir_override: str | None = None,
    ) -> None:
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook
        #: Triton's file of hand-written IR for this config; MiniTriton compiles from the
        #: source only, so a launch with one is refused (see :meth:`Autotuner._launch`).
        self.ir_override = ir_override

    def all_kwargs(self) -> dict[str, Any]:
        """The meta-parameters and the launch options, as launch keywords."""
        options = {
            "num_warps": self.num_warps,
            "num_stages": self.num_stages,
            "num_ctas": self.num_ctas,
            "maxnreg": self.maxnreg,
        }
        return {**self.kwargs, **{k: v for k, v in options.items() if v is not None}}

    def __str__(self) -> str:
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts += [f"num_warps: {self.num_warps}", f"num_ctas: {self.num_ctas}"]
        parts += [f"num_stages: {self.num_stages}", f"maxnreg: {self.maxnreg}"]
        if self.ir_override is not None:
            parts.append(f"ir_override: {self.ir_override}")
        return ", ".join(parts)

    def __repr__(self) -> str:
        return f"Config({self})"


class Autotuner(KernelInterface):
    """Wraps a kernel; picks a :class:`Config` per key (see the module docstring)."""

    def __init__(
        self,
        fn: KernelInterface,
        arg_names: Sequence[str] | None,
        configs: Sequence[Config],
        key: Sequence[str],
        reset_to_zero: Sequence[str] | None = None,
        restore_value: Sequence[str] | None = None,
        pre_hook: Callable[..., Any] | None = None,
        post_hook: Callable[..., Any] | None = None,
        prune_configs_by: dict[str, Any] | None = None,
        warmup: int | None = None,
        rep: int | None = None,
        use_cuda_graph: bool = False,
        do_bench: Callable[..., Any] | None = None,
        cache_results: bool | None = None,
    ) -> None:
        # Triton's parameters in Triton's order: libraries subclass the Autotuner
        # (flash-linear-attention's CachedAutotuner) and pass them positionally.
        # pre_hook(args) and post_hook(args, exception) replace the reset and restore
        # around each timed launch; use_cuda_graph is accepted and ignored.
        self.fn = fn
        jit_fn = _jit_function_or_none(fn)  # a plain object with run() also works, as in Triton
        self.base_fn = jit_fn.fn if jit_fn is not None else getattr(fn, "fn", fn)
        self.arg_names = list(arg_names or (jit_fn.arg_names if jit_fn is not None else []))
        # Triton's hooks around every timed launch: pre_hook(args, reset_only=False) and
        # post_hook(args, exception); by default they zero reset_to_zero's arguments and
        # save, then restore, restore_value's. Subclasses call them too (FlagGems' tuner).
        self.pre_hook: Callable[..., Any] = pre_hook or self._reset_and_save
        self.post_hook: Callable[..., Any] = post_hook or self._restore_saved
        self._saved: dict[str, Any] = {}
        #: The launch's arguments by name while ``run`` works (Triton's ``nargs``).
        self.nargs: dict[str, Any] | None = None
        self.configs = list(configs) or [Config({})]
        self.keys = list(key)
        self.prune_configs_by = prune_configs_by or {}
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        self.warmup_ms = 25.0 if warmup is None else float(warmup)
        self.rep_ms = 100.0 if rep is None else float(rep)
        # Triton's attribute names for these settings (torch's wrap_triton reads them, and
        # prune_configs uses them, so a subclass may set them as in Triton).
        self.num_warmups, self.num_reps, self.use_cuda_graph = warmup, rep, use_cuda_graph
        self.early_config_prune = self.prune_configs_by.get("early_config_prune")
        self.perf_model = self.prune_configs_by.get("perf_model")
        self.configs_top_k = self.prune_configs_by.get("top_k", 1.0)
        self.do_bench = do_bench
        self.cache_results = cache_results  # None: on unless an environment variable says 0
        self.cache: dict[tuple[Any, ...], Config] = {}
        self.configs_timings: dict[Config, float] = {}
        self.best_config: Config | None = None
        self._told_emulator = False
        self._emulator_choice: dict[tuple[Any, ...], Config] = {}
        self.__name__ = getattr(jit_fn or fn, "__name__", type(fn).__name__)

    @graph_break
    def run(self, *args: Any, grid: Grid | None = None, warmup: bool = False, **kwargs: Any) -> Any:
        """Launch with the best config for this key (the first one on the emulator)."""
        named = {**dict(zip(self.arg_names, args)), **kwargs}
        self.nargs = dict(zip(self.arg_names, args))
        try:
            # On the emulator, timing means nothing: unless the user's own do_bench asks
            # for it, the first config that compiles runs.
            on_emulator = resolve_backend(kwargs.get("backend")) == "emulator"
            if on_emulator and self.do_bench is None:
                return self._run_on_emulator(named, args, grid, warmup, kwargs)
            try:
                config = self._tuned_config(named, args, grid, kwargs)
            except (UserError, OutOfResources):
                raise
            except Exception as e:
                if not on_emulator:
                    raise
                # A do_bench made for a GPU (CUDA events) cannot time the emulator.
                self._say_do_bench_failed(e)
                return self._run_on_emulator(named, args, grid, warmup, kwargs)
            self.best_config = config
            return self._launch(config, args, grid, warmup, kwargs)
        finally:
            self.nargs = None

    def prune_configs(self, kwargs: dict[str, Any]) -> list[Config]:
        """The configs left after ``prune_configs_by`` (Triton's method, for subclasses).

        As in Triton, ``early_config_prune(configs, nargs, **kwargs)`` gets the
        positional arguments by name and the launch's keywords; ``perf_model``
        gets all of them and a config's values, and the ``top_k`` configs it
        rates fastest stay (a float is a fraction of them, at least one).
        """
        nargs = self.nargs or {}
        configs = self.configs
        early = self.early_config_prune
        if early is not None:
            configs = list(early(configs, nargs, **kwargs))
            if not configs:
                raise AutotunerError(
                    "No valid autotuner configs after pruning. `early_config_prune` should "
                    "return at least one config."
                )
        model = self.perf_model
        if model is None:
            return configs
        top_k = self.configs_top_k
        if isinstance(top_k, float) and top_k <= 1.0:
            top_k = max(1, int(len(configs) * top_k))
        elif not isinstance(top_k, int):
            raise TypeError(
                "Error while pruning configs, top_k must be either 1) a float <= 1.0 or 2) an int"
            )
        if len(configs) > top_k:
            est = {c: model(**nargs, **kwargs, **c.all_kwargs()) for c in configs}
            configs = sorted(configs, key=est.__getitem__)[:top_k]
        return configs

    def _bench(self, *args: Any, config: Config, **meta: Any) -> list[float]:
        """Triton's ``_bench``: ``[median, p20, p80]`` milliseconds (one time, three times),
        or infinities for a config that does not compile or fit."""
        grid = meta.pop("grid", None)
        meta.pop("warmup", None)
        named = {**dict(zip(self.arg_names, args)), **meta}
        ms, _ = self._bench_or_fail(config, named, args, grid, meta)
        return [ms, ms, ms]

    def warmup(self, *args: Any, grid: Grid | None = None, **kwargs: Any) -> list[Any]:
        """Compile every config that pruning keeps for these arguments (Triton's); returns
        the compiled kernels. As in ``JITFunction.warmup``, a torch dtype stands for a
        tensor of that dtype."""
        args, kwargs = MockTensor.wrap_arguments(args, kwargs)
        self.nargs = dict(zip(self.arg_names, args))
        try:
            configs = self.prune_configs(self._launch_kwargs(kwargs))
            return [self._launch(c, args, grid, True, dict(kwargs)) for c in configs]
        finally:
            self.nargs = None

    def _run_on_emulator(
        self, named: dict[str, Any], args: Sequence[Any], grid: Grid | None, warmup: bool,
        kwargs: dict,
    ) -> Any:  # fmt: skip
        """Launch the first (pruned) config that compiles for this key, without timing."""
        key = self._key(named)
        chosen = self._emulator_choice.get(key)
        configs = [chosen] if chosen is not None else self._launch_configs(kwargs)
        errors: list[CompileError] = []
        for config in configs:
            try:
                result = self._launch(config, args, grid, warmup, kwargs)
            except CompileError as e:  # raised before anything ran: try the next config
                errors.append(e)
                continue
            self._emulator_choice[key] = self.cache[key] = self.best_config = config
            self._tell_emulator(config)
            return result
        raise trimmed(errors[0]) from None

    def _say_do_bench_failed(self, error: Exception) -> None:
        if not self._told_emulator:
            print(
                f"minitriton: autotune of kernel '{self.__name__}' on the emulator: its do_bench "
                f"failed ({type(error).__name__}: {_first_line(error)})",
                file=sys.stderr,
            )

    def _tell_emulator(self, config: Config) -> None:
        if not self._told_emulator:
            self._told_emulator = True
            print(
                f"minitriton: autotune of kernel '{self.__name__}' on the emulator: "
                f"using the first config that compiles ({config}) without timing",
                file=sys.stderr,
            )

    def _launch(
        self, config: Config, args: Sequence[Any], grid: Grid | None, warmup: bool, kwargs: dict
    ) -> Any:
        clash = sorted(set(kwargs) & set(config.all_kwargs()))
        if clash:
            options = [name for name in clash if name not in config.kwargs]
            hint = (
                f" {', '.join(options)}: every triton.Config sets its launch options "
                "(num_warps=4 and num_stages=3 unless it says otherwise); set them in the "
                "configs, not at the launch."
                if options else ""
            )  # fmt: skip
            raise ValueError(
                f"Conflicting meta-parameters: {', '.join(clash)}. "
                "Make sure that you don't re-define auto-tuned symbols." + hint
            )
        if config.ir_override is not None:
            raise AutotunerError(
                f"Config({config}) names ir_override={config.ir_override!r}: MiniTriton compiles "
                "kernels from their source only; drop ir_override, or change the kernel's source"
            )
        if config.pre_hook is not None and not warmup:
            config.pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **config.kwargs})
        return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs, **config.all_kwargs())

    # -- tuning on the GPU ----------------------------------------------
    def _tuned_config(
        self, named: dict[str, Any], args: Sequence[Any], grid: Grid | None, kwargs: dict
    ) -> Config:
        key = self._key(named)
        config = self.cache.get(key)
        if config is None:
            on_gpu = resolve_backend(kwargs.get("backend")) != "emulator"
            stored = self._from_disk(key, named) if on_gpu else None
            config = stored or self._tune(key, named, args, grid, kwargs, store=on_gpu)
            self.cache[key] = config
        return config

    def _launch_configs(self, kwargs: dict[str, Any]) -> list[Config]:
        """The configs a launch picks from: the pruned ones, or the only one, unpruned.

        As in Triton, an autotuner with a single config neither prunes nor
        times it; it runs as written even where ``early_config_prune`` would
        reject it for this launch (libraries ship one default config whose
        pruner keeps nothing for some shapes).
        """
        if len(self.configs) == 1:
            return list(self.configs)
        return self.prune_configs(self._launch_kwargs(kwargs))

    @staticmethod
    def _launch_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
        """The keywords a pruning function sees: the launch's, without MiniTriton's own."""
        return {k: v for k, v in kwargs.items() if k != "backend"}

    def _key(self, named: dict[str, Any]) -> tuple[Any, ...]:
        """The key values, plus the dtypes of array arguments (as Triton does)."""
        values = [named[k] for k in self.keys if k in named]
        dtypes = [str(v.dtype) for v in named.values() if hasattr(v, "dtype")]
        return tuple(values + dtypes)

    def _label(self, named: dict[str, Any]) -> str:
        """``'kernel' for M=512, N=512`` for progress messages."""
        values = ", ".join(f"{k}={named[k]}" for k in self.keys if k in named)
        return f"'{self.__name__}'" + (f" for {values}" if values else "")

    def _tune(
        self, key: tuple[Any, ...], named: dict[str, Any], args: Sequence[Any], grid: Grid | None,
        kwargs: dict, store: bool = True,
    ) -> Config:  # fmt: skip
        """Time every (pruned) config, report each on stderr, keep (and store) the fastest."""
        configs = self._launch_configs(kwargs)
        if len(configs) == 1:  # as in Triton, a single config is not timed
            return configs[0]
        _say(f"minitriton: autotuning {self._label(named)}: {len(configs)} configs")
        timings: dict[Config, float] = {}
        failures: list[Exception] = []
        for i, config in enumerate(configs, 1):
            ms, failure = self._bench_or_fail(config, named, args, grid, kwargs)
            timings[config] = ms
            failures += [failure] if failure is not None else []
            shown = f"{ms:.3f} ms" if failure is None else _failed(failure)
            _say(f"  config {i}/{len(configs)}: {config}: {shown}")
        best = min(timings, key=timings.__getitem__)
        if math.isinf(timings[best]) and failures:
            raise trimmed(failures[0]) from None  # as a launch would raise it
        self.configs_timings = timings
        _say(f"  best: {best} ({timings[best]:.3f} ms)")
        if store:
            self._to_disk(key, best, timings)
        return best

    def _bench_or_fail(
        self, config: Config, named: dict[str, Any], args: Sequence[Any], grid: Grid | None,
        kwargs: dict,
    ) -> tuple[float, Exception | None]:  # fmt: skip
        """The config's time, or infinity and the error when it cannot compile or launch.

        Only errors that leave the GPU usable skip a config (as Triton skips
        configs that run out of resources); any other error propagates.
        """
        try:
            return self._time_config(config, named, args, grid, kwargs), None
        except Exception as e:
            if not _skips_config(e):
                raise
            return math.inf, e

    def _time_config(
        self, config: Config, named: dict[str, Any], args: Sequence[Any], grid: Grid | None,
        kwargs: dict,
    ) -> float:  # fmt: skip
        """Milliseconds per launch of ``config``, the hooks around every launch."""
        on_gpu = resolve_backend(kwargs.get("backend")) != "emulator"

        def call() -> None:
            self.pre_hook(named)
            try:
                self._launch(config, args, grid, False, dict(kwargs))
                if on_gpu:
                    _synchronize()
            except Exception as e:
                self.post_hook(named, exception=e)
                raise
            self.post_hook(named, exception=None)

        return self._time(call)

    def _reset_and_save(self, named: dict[str, Any], reset_only: bool = False) -> None:
        """The default ``pre_hook``: zero ``reset_to_zero``, save ``restore_value``."""
        for n in self.reset_to_zero:
            if named.get(n) is not None:
                _zero(named[n])
        if not reset_only:
            self._saved = {
                n: _copy(named[n]) for n in self.restore_value if named.get(n) is not None
            }

    def _restore_saved(self, named: dict[str, Any], exception: BaseException | None) -> None:
        """The default ``post_hook``: put back what ``pre_hook`` saved."""
        for n, value in self._saved.items():
            _restore(named[n], value)
        self._saved = {}

    def _time(self, call: Callable[[], None]) -> float:
        """Milliseconds per call: ``do_bench`` if given, else :func:`bench`."""
        if self.do_bench is not None:  # Triton's call: the median and the 20th, 80th percentiles
            result = self.do_bench(call, quantiles=(0.5, 0.2, 0.8))
            return float(result[0] if isinstance(result, (list, tuple)) else result)
        return bench(call, self.warmup_ms, self.rep_ms)

    # -- the winners on disk ---------------------------------------------
    def _disk_cache_on(self) -> bool:
        if self.cache_results is not None:
            return self.cache_results
        return os.environ.get(AUTOTUNE_CACHE_ENV, "1") not in ("0", "false", "off")

    def _identity(self, key: tuple[Any, ...]) -> dict[str, Any]:
        """What a disk entry must match: kernel, configs, key, GPU and compiler."""
        from minitriton.backend.build import version_tag

        device, arch = _device()
        source = base_jit_function(self.fn).src
        return {
            "format": ENTRY_FORMAT,
            "kernel": self.__name__,
            "source": hashlib.sha256(source.encode()).hexdigest(),
            "configs": [str(c) for c in self.configs],
            "key": [str(v) for v in key],
            "device": device,
            "arch": arch,
            "compiler": version_tag(),
        }

    def _from_disk(self, key: tuple[Any, ...], named: dict[str, Any]) -> Config | None:
        """The stored winner for ``key`` on this GPU, or None (missing, corrupt or foreign)."""
        if not self._disk_cache_on():
            return None
        from minitriton.backend.cache import load_json

        identity = self._identity(key)
        best = _stored_winner(load_json(entry_name(identity)), identity)
        if best is None:
            return None
        config = self.configs[best]
        _say(f"minitriton: autotune {self._label(named)}: config {best + 1}/{len(self.configs)} "
             f"({config}) from the cache")  # fmt: skip
        return config

    def _to_disk(self, key: tuple[Any, ...], best: Config, timings: dict[Config, float]) -> None:
        if not self._disk_cache_on():
            return
        from minitriton.backend.cache import store_json

        identity = self._identity(key)
        ms = [timings.get(c) for c in self.configs]
        body = {
            **identity,
            "best": self.configs.index(best),
            "timings_ms": [None if t is None or math.isinf(t) else t for t in ms],
        }
        store_json(entry_name(identity), body)


def entry_name(identity: dict[str, Any]) -> str:
    """The cache entry's name: ``autotune-`` and the sha256 of its identity."""
    text = json.dumps(identity, sort_keys=True)
    return f"autotune-{hashlib.sha256(text.encode()).hexdigest()}"


def _stored_winner(body: Any, identity: dict[str, Any]) -> int | None:
    """The winner's index in an entry made for ``identity``; None for anything else."""
    if not isinstance(body, dict) or any(body.get(k) != v for k, v in identity.items()):
        return None
    best = body.get("best")
    if type(best) is not int or not 0 <= best < len(identity["configs"]):
        return None
    return best


def bench(
    call: Callable[[], None],
    warmup_ms: float = 25.0,
    rep_ms: float = 100.0,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """The median milliseconds of ``call`` (which waits for the GPU).

    One call compiles and loads; warm-up calls follow for ``warmup_ms`` (at
    least one); their mean sets how many timed runs fill ``rep_ms``, between
    :data:`MIN_RUNS` and :data:`MAX_RUNS`. ``clock`` returns seconds.
    """
    call()
    start, warm = clock(), 0
    while warm == 0 or (clock() - start) * 1e3 < warmup_ms:
        call()
        warm += 1
    estimate = max((clock() - start) * 1e3 / warm, 1e-6)
    runs = int(min(MAX_RUNS, max(MIN_RUNS, rep_ms / estimate)))
    times = []
    for _ in range(runs):
        t0 = clock()
        call()
        times.append((clock() - t0) * 1e3)
    import statistics  # only an autotuned launch measures: `import minitriton` does not pay for it

    return statistics.median(times)


def _device() -> tuple[str, str]:
    """The GPU's name and arch (``"NVIDIA H200"``, ``"sm_90"``)."""
    from minitriton.backend.driver import device_arch, device_name

    return device_name(), device_arch()


def _say(line: str) -> None:
    print(line, file=sys.stderr)


def _first_line(e: Exception) -> str:
    return (str(e).splitlines() or [type(e).__name__])[0]


def _skips_config(e: Exception) -> bool:
    """A config's error that skips it: it does not fit or compile, or the GPU survived it."""
    if isinstance(e, (CompileError, OutOfResources)):
        return True
    return getattr(e, "context_usable", False) is True


def _failed(e: Exception) -> str:
    """How a progress line shows a config that could not be timed."""
    if isinstance(e, OutOfResources):
        return f"skipped ({_first_line(e)})"
    return f"failed ({_first_line(e)})"


def _jit_function_or_none(fn: Any) -> Any:
    """The ``@jit`` function under ``fn``'s wrappers, or None for another kernel object."""
    try:
        return base_jit_function(fn)
    except TypeError:
        return None


def _synchronize() -> None:
    """Wait for the GPU, if the backend offers a way to."""
    try:
        from minitriton.backend import synchronize
    except ImportError:
        return  # launches are synchronous
    synchronize()


def _zero(value: Any) -> None:
    if hasattr(value, "zero_"):
        value.zero_()
    else:
        value[...] = 0


def _copy(value: Any) -> Any:
    return value.clone() if hasattr(value, "clone") else value.copy()


def _restore(value: Any, saved: Any) -> None:
    if hasattr(value, "copy_"):
        value.copy_(saved)
    else:
        value[...] = saved


class AutotuneOptions(TypedDict, total=False):
    """The options of :func:`autotune` after ``configs`` and ``key`` (Triton's names).

    Each is the :class:`Autotuner` parameter of the same name; all may be left out.
    """

    prune_configs_by: dict[str, Any] | None
    reset_to_zero: Sequence[str] | None
    restore_value: Sequence[str] | None
    pre_hook: Callable[..., Any] | None
    post_hook: Callable[..., Any] | None
    use_cuda_graph: bool
    warmup: int | None
    rep: int | None
    do_bench: Callable[..., Any] | None
    cache_results: bool | None


def autotune(
    configs: Sequence[Config], key: Sequence[str], **options: Unpack[AutotuneOptions]
) -> Callable[[KernelInterface], Autotuner]:
    """Decorator: autotune a ``@jit`` kernel over ``configs``, once per value of ``key``.

    ``options`` are :class:`Autotuner`'s (:class:`AutotuneOptions`).
    ``cache_results`` (Triton's name): ``None`` (the default) stores winners on
    disk unless ``MINITRITON_AUTOTUNE_CACHE=0``; ``True`` or ``False`` decide.
    """
    unknown = sorted(set(options) - set(AutotuneOptions.__annotations__))
    if unknown:
        raise TypeError(f"autotune() got an unexpected keyword argument {unknown[0]!r}")

    def decorator(fn: KernelInterface) -> Autotuner:
        return Autotuner(fn, None, configs, key, **options)

    return decorator


class Heuristics(KernelInterface):
    """Computes meta-parameters from the other arguments before each launch."""

    def __init__(self, fn: KernelInterface, values: dict[str, Callable[[dict], Any]]) -> None:
        self.fn = fn
        self.arg_names = base_jit_function(fn).arg_names
        self.values = dict(values)
        self.__name__ = base_jit_function(fn).__name__

    @graph_break
    def run(self, *args: Any, grid: Grid | None, warmup: bool = False, **kwargs: Any) -> Any:
        """Add each heuristic's value to the keywords, then launch."""
        for name, heuristic in self.values.items():
            kwargs[name] = heuristic({**dict(zip(self.arg_names, args)), **kwargs})
        return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)

    def warmup(self, *args: Any, grid: Grid | None = None, **kwargs: Any) -> Any:
        """Compile without running (a torch dtype stands for a tensor of that dtype)."""
        args, kwargs = MockTensor.wrap_arguments(args, kwargs)
        return self.run(*args, grid=grid, warmup=True, **kwargs)


def heuristics(values: dict[str, Callable[[dict], Any]]) -> Callable[[KernelInterface], Heuristics]:
    """Decorator: ``@heuristics({"BLOCK": lambda args: ...})`` above ``@jit``."""

    def decorator(fn: KernelInterface) -> Heuristics:
        return Heuristics(fn, values)

    return decorator
