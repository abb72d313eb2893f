"""``@autotune`` and ``@heuristics``, stackable on ``@jit`` as in Triton's tutorials::

    @triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4),
                              triton.Config({"BLOCK": 256}, num_warps=8)],
                     key=["n_elements"])
    @triton.jit
    def kernel(x_ptr, n_elements, BLOCK: tl.constexpr): ...

On the GPU the autotuner times every config once per distinct value of the
``key`` arguments and keeps the fastest. Timing means nothing on the
emulator, so there it uses the first config and says so once, on stderr.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from minitriton.jit import Grid, KernelInterface, base_jit_function, resolve_backend


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
    ) -> None:
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

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
        return ", ".join(parts)

    def __repr__(self) -> str:
        return f"Config({self})"


class Autotuner(KernelInterface):
    """Wraps a kernel; picks a :class:`Config` per key (see the module docstring)."""

    def __init__(
        self,
        fn: KernelInterface,
        configs: Sequence[Config],
        key: Sequence[str],
        prune_configs_by: dict[str, Any] | None = None,
        reset_to_zero: Sequence[str] | None = None,
        restore_value: Sequence[str] | None = None,
        warmup: int | None = None,
        rep: int | None = None,
        do_bench: Callable[..., Any] | None = None,
    ) -> None:
        self.fn = fn
        self.arg_names = base_jit_function(fn).arg_names
        self.configs = list(configs) or [Config({})]
        self.keys = list(key)
        self.prune_configs_by = prune_configs_by or {}
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        # Triton's warmup and rep are milliseconds of benchmarking; a few timed
        # runs are enough to rank configs here, so they are kept but unused.
        self.warmup_ms, self.rep_ms = warmup, rep
        self.reps = 5
        self.do_bench = do_bench
        self.cache: dict[tuple[Any, ...], Config] = {}
        self.configs_timings: dict[Config, float] = {}
        self.best_config: Config | None = None
        self._told_emulator = False
        self.__name__ = base_jit_function(fn).__name__

    def run(self, *args: Any, grid: Grid, warmup: bool = False, **kwargs: Any) -> Any:
        """Launch with the best config for this key (the first one on the emulator)."""
        named = {**dict(zip(self.arg_names, args)), **kwargs}
        if resolve_backend(kwargs.get("backend")) == "emulator":
            config = self._first_config_on_emulator()
        else:
            config = self._tuned_config(named, args, grid, kwargs)
        self.best_config = config
        return self._launch(config, args, grid, warmup, kwargs)

    def warmup(self, *args: Any, grid: Grid | None = None, **kwargs: Any) -> list[Any]:
        """Compile every config for these arguments; returns the compiled kernels."""
        return [self._launch(c, args, grid, True, dict(kwargs)) for c in self.configs]

    def _first_config_on_emulator(self) -> Config:
        if not self._told_emulator:
            self._told_emulator = True
            print(
                f"minitriton: autotune of kernel '{self.__name__}' on the emulator: "
                f"using the first config ({self.configs[0]}) without timing",
                file=sys.stderr,
            )
        return self.configs[0]

    def _launch(
        self, config: Config, args: Sequence[Any], grid: Grid, warmup: bool, kwargs: dict
    ) -> Any:
        clash = sorted(set(kwargs) & set(config.kwargs))
        if clash:
            raise ValueError(
                f"Conflicting meta-parameters: {', '.join(clash)}. "
                "Make sure that you don't re-define auto-tuned symbols."
            )
        if config.pre_hook is not None and not warmup:
            config.pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **config.kwargs})
        return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs, **config.all_kwargs())

    # -- timing on the GPU ----------------------------------------------
    def _tuned_config(
        self, named: dict[str, Any], args: Sequence[Any], grid: Grid, kwargs: dict
    ) -> Config:
        key = self._key(named)
        if key not in self.cache:
            timings = {c: self._bench(c, named, args, grid, kwargs) for c in self._pruned(named)}
            self.configs_timings = timings
            self.cache[key] = min(timings, key=timings.__getitem__)
        return self.cache[key]

    def _key(self, named: dict[str, Any]) -> tuple[Any, ...]:
        """The key values, plus the dtypes of array arguments (as Triton does)."""
        values = [named[k] for k in self.keys if k in named]
        dtypes = [str(v.dtype) for v in named.values() if hasattr(v, "dtype")]
        return tuple(values + dtypes)

    def _pruned(self, named: dict[str, Any]) -> list[Config]:
        configs = self.configs
        early = self.prune_configs_by.get("early_config_prune")
        if early is not None:
            configs = list(early(configs, named))
        model, top_k = self.prune_configs_by.get("perf_model"), self.prune_configs_by.get("top_k")
        if model is not None and top_k is not None and len(configs) > top_k:
            est = {c: model(**named, **c.all_kwargs()) for c in configs}
            configs = sorted(configs, key=est.__getitem__)[: int(top_k)]
        return configs

    def _bench(
        self, config: Config, named: dict[str, Any], args: Sequence[Any], grid: Grid, kwargs: dict
    ) -> float:
        saved = {n: _copy(named[n]) for n in self.restore_value if n in named}

        def call() -> None:
            for n in self.reset_to_zero:
                _zero(named[n])
            self._launch(config, args, grid, False, dict(kwargs))
            _synchronize()

        try:
            return self._time(call)
        finally:
            for n, value in saved.items():
                _restore(named[n], value)

    def _time(self, call: Callable[[], None]) -> float:
        """Milliseconds per call: ``do_bench`` if given, else the median of a few runs."""
        if self.do_bench is not None:
            result = self.do_bench(call)
            return float(result[0] if isinstance(result, (list, tuple)) else result)
        call()  # compile and warm up outside the timing
        times = []
        for _ in range(self.reps):
            start = time.perf_counter()
            call()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)


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


def autotune(
    configs: Sequence[Config],
    key: Sequence[str],
    prune_configs_by: dict[str, Any] | None = None,
    reset_to_zero: Sequence[str] | None = None,
    restore_value: Sequence[str] | None = None,
    warmup: int | None = None,
    rep: int | None = None,
    do_bench: Callable[..., Any] | None = None,
) -> Callable[[KernelInterface], Autotuner]:
    """Decorator: autotune a ``@jit`` kernel over ``configs``, once per value of ``key``."""

    def decorator(fn: KernelInterface) -> Autotuner:
        return Autotuner(
            fn, configs, key, prune_configs_by, reset_to_zero, restore_value, warmup, rep,
            do_bench,
        )  # fmt: skip

    return decorator


class Heuristics(KernelInterface):
    """Computes meta-parameters from the other arguments before each launch."""

    def __init__(self, fn: KernelInterface, values: dict[str, Callable[[dict], Any]]) -> None:
        self.fn = fn
        self.arg_names = base_jit_function(fn).arg_names
        self.values = dict(values)
        self.__name__ = base_jit_function(fn).__name__

    def run(self, *args: Any, grid: Grid, warmup: bool = False, **kwargs: Any) -> Any:
        """Add each heuristic's value to the keywords, then launch."""
        for name, heuristic in self.values.items():
            kwargs[name] = heuristic({**dict(zip(self.arg_names, args)), **kwargs})
        return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)

    def warmup(self, *args: Any, grid: Grid | None = None, **kwargs: Any) -> Any:
        """Compile without running."""
        return self.run(*args, grid=grid, warmup=True, **kwargs)


def heuristics(values: dict[str, Callable[[dict], Any]]) -> Callable[[KernelInterface], Heuristics]:
    """Decorator: ``@heuristics({"BLOCK": lambda args: ...})`` above ``@jit``."""

    def decorator(fn: KernelInterface) -> Heuristics:
        return Heuristics(fn, values)

    return decorator
