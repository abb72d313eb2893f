"""Autotuning on the GPU, with a fake GPU: timing, progress, and the winners on disk.

The compiler and the launcher are fakes (nothing runs), the GPU's name and
arch are set by the test, and the timer is injected: ``do_bench`` returns a
time per config and records which configs were timed. A "second process"
is a fresh ``@autotune`` of the same kernel over the same cache directory.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.backend import cache
from minitriton.compiler import CompiledKernel
from minitriton.diagnostics import CompileError, Location, error
from minitriton.runtime.errors import OutOfResources

jit_module = importlib.import_module("minitriton.jit")
autotune_module = importlib.import_module("minitriton.autotune")


@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n) * 2, mask=offsets < n)


TIMES_MS = {32: 2.0, 64: 3.0, 128: 1.0}  # the fake GPU's time for each BLOCK


class FakeGPU:
    """Compiles and launches nothing; times each config as ``TIMES_MS`` says."""

    def __init__(self) -> None:
        self.device = ("Fake GPU 9000", "sm_90")
        self.timed: list[int] = []  # BLOCK of every config timed, in order
        self.launched: list[int] = []  # BLOCK of every launch
        self.broken: set[int] = set()  # BLOCKs whose compilation fails
        self.too_big: set[int] = set()  # BLOCKs over the fake GPU's shared memory

    def compile_kernel(self, src, specs, options, stop_after="ir-opt"):  # noqa: ANN001, ANN201
        block = next(s.value for s in specs if s.name == "BLOCK")
        if block in self.broken:
            raise error(Location("kernel.py", 3, 5), f"BLOCK={block} needs too much memory")
        if block in self.too_big:  # found when the GPU loads it, as the real one does
            raise OutOfResources(64 * block, 232448, "shared memory", src.name)
        args = [SimpleNamespace(name_hint=s.name) for s in specs if s.kind != "constexpr"]
        module = SimpleNamespace(kernel=SimpleNamespace(body=SimpleNamespace(args=args)))
        return CompiledKernel(src.name, module, list(specs), {"BLOCK": block}, options)

    def launch(self, compiled, grid, args, backend, stream=None):  # noqa: ANN001, ANN201
        self.launched.append(compiled.asm["BLOCK"])

    def do_bench(self, call: Any, quantiles: Any = None) -> float:
        assert quantiles == (0.5, 0.2, 0.8)  # Triton's call
        call()
        block = self.launched[-1]
        self.timed.append(block)
        return TIMES_MS[block]


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeGPU:
    fake = FakeGPU()
    monkeypatch.setattr(jit_module, "compile_kernel", fake.compile_kernel)
    monkeypatch.setattr(jit_module, "launch", fake.launch)
    monkeypatch.setattr(jit_module, "_selected_backend", None)
    monkeypatch.setattr(jit_module, "gpu_available", lambda: True)
    monkeypatch.setattr(jit_module, "_device_arch", lambda: fake.device[1])
    monkeypatch.setattr(autotune_module, "_synchronize", lambda: None)
    monkeypatch.setattr(autotune_module, "_device", lambda: fake.device)
    monkeypatch.setenv("MINITRITON_BACKEND", "gpu")
    monkeypatch.setenv("MINITRITON_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("MINITRITON_CACHE", raising=False)
    monkeypatch.delenv("MINITRITON_AUTOTUNE_CACHE", raising=False)
    scale_kernel.cache.clear()
    return fake


def process(gpu: FakeGPU, blocks: tuple[int, ...] = (32, 128), **options: Any) -> Any:
    """A fresh autotuner of ``scale_kernel``, as a new process would make it."""
    configs = [triton.Config({"BLOCK": b}, num_warps=4) for b in blocks]
    options.setdefault("do_bench", gpu.do_bench)
    return triton.autotune(configs=configs, key=["n"], **options)(scale_kernel)


def launch(tuned: Any, n: int = 256) -> None:
    tuned[(1,)](np.zeros(512, np.float32), n)


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("autotune-*.json"))


def test_a_second_process_takes_the_winner_from_disk(gpu: FakeGPU, tmp_path: Path, capsys):
    launch(process(gpu))
    assert gpu.timed == [32, 128]
    assert len(entries(tmp_path)) == 1
    capsys.readouterr()
    second = process(gpu)
    launch(second)
    assert gpu.timed == [32, 128]  # nothing timed again
    assert gpu.launched[-1] == 128 and second.best_config is second.configs[1]
    err = capsys.readouterr().err
    assert "autotune 'scale_kernel' for n=256: config 2/2 (BLOCK: 128, " in err
    assert err.rstrip().endswith("from the cache")


def test_progress_is_shown_on_stderr(gpu: FakeGPU, capsys):
    launch(process(gpu))
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "minitriton: autotuning 'scale_kernel' for n=256: 2 configs"
    assert err[1].startswith("  config 1/2: BLOCK: 32, num_warps: 4") and err[1].endswith(
        ": 2.000 ms"
    )
    assert err[2].startswith("  config 2/2: BLOCK: 128,") and err[2].endswith(": 1.000 ms")
    assert err[3].startswith("  best: BLOCK: 128,") and err[3].endswith("(1.000 ms)")


def test_the_entry_records_the_winner_and_every_time(gpu: FakeGPU, tmp_path: Path):
    launch(process(gpu))
    (entry,) = entries(tmp_path)
    body = cache.load_json(entry.stem)
    assert body["best"] == 1 and body["timings_ms"] == [2.0, 1.0]
    assert (body["kernel"], body["device"], body["arch"]) == (
        "scale_kernel",
        "Fake GPU 9000",
        "sm_90",
    )
    assert body["key"] == ["256", "float32"]


def test_a_corrupt_entry_is_ignored_and_rewritten(gpu: FakeGPU, tmp_path: Path):
    launch(process(gpu))
    (entry,) = entries(tmp_path)
    good = entry.read_text()
    entry.write_text(good.replace('"best": 1', '"best": 0'))  # the checksum no longer matches
    launch(process(gpu))
    assert gpu.timed == [32, 128, 32, 128]
    assert entry.read_text() == good


def test_a_foreign_entry_is_ignored_and_rewritten(gpu: FakeGPU, tmp_path: Path):
    launch(process(gpu))
    (entry,) = entries(tmp_path)
    body = cache.load_json(entry.stem)
    for field, value in [("device", "Another GPU"), ("format", "other 9"), ("best", 7)]:
        cache.store_json(entry.stem, {**body, field: value})  # valid checksum, wrong contents
        launch(process(gpu))
        assert cache.load_json(entry.stem) == body, field
    assert gpu.timed == [32, 128] * 4


def test_another_gpu_tunes_again(gpu: FakeGPU, tmp_path: Path):
    launch(process(gpu))
    gpu.device = ("Fake GPU 8000", "sm_80")
    launch(process(gpu))
    assert gpu.timed == [32, 128, 32, 128]
    assert len(entries(tmp_path)) == 2


def test_another_key_tunes_again(gpu: FakeGPU, tmp_path: Path):
    tuned = process(gpu)
    launch(tuned, 256)
    launch(tuned, 512)
    launch(process(gpu), 512)  # on disk now
    assert gpu.timed == [32, 128, 32, 128]
    assert len(entries(tmp_path)) == 2


def test_other_configs_tune_again(gpu: FakeGPU):
    launch(process(gpu, (32, 128)))
    launch(process(gpu, (32, 64, 128)))
    assert gpu.timed == [32, 128, 32, 64, 128]


@pytest.mark.parametrize("how", ["argument", "MINITRITON_AUTOTUNE_CACHE", "MINITRITON_CACHE"])
def test_the_disk_cache_can_be_turned_off(
    gpu: FakeGPU, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
):
    options = {"cache_results": False} if how == "argument" else {}
    if how != "argument":
        monkeypatch.setenv(how, "0")
    launch(process(gpu, **options))
    launch(process(gpu, **options))
    assert gpu.timed == [32, 128, 32, 128]
    assert entries(tmp_path) == []


def test_cache_results_true_wins_over_the_environment(
    gpu: FakeGPU, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("MINITRITON_AUTOTUNE_CACHE", "0")
    launch(process(gpu, cache_results=True))
    assert len(entries(tmp_path)) == 1


def test_a_config_that_fails_to_compile_is_skipped(gpu: FakeGPU, capsys):
    gpu.broken = {128}
    tuned = process(gpu)
    launch(tuned)
    assert gpu.launched[-1] == 32
    err = capsys.readouterr().err
    assert "config 2/2: BLOCK: 128, " in err and "failed (kernel.py:3:5: error: BLOCK=128" in err


def test_when_every_config_fails_the_first_error_is_raised(gpu: FakeGPU, tmp_path: Path):
    gpu.broken = {32, 128}
    with pytest.raises(CompileError, match="BLOCK=32 needs too much memory"):
        launch(process(gpu))
    assert entries(tmp_path) == []


def test_a_config_out_of_resources_is_skipped_and_named(gpu: FakeGPU, capsys):
    gpu.too_big = {32}
    tuned = process(gpu, blocks=(32, 128))
    launch(tuned)
    assert gpu.launched[-1] == 128 and tuned.best_config is tuned.configs[1]
    err = capsys.readouterr().err
    assert (
        "config 1/2: BLOCK: 32, num_warps: 4, num_ctas: 1, num_stages: 3, maxnreg: None: skipped"
        " (kernel 'scale_kernel' (num_warps=4, num_stages=3, BLOCK=32): out of resource: shared"
        " memory, Required: 2048, Hardware limit: 232448." in err
    )


def test_when_every_config_is_out_of_resources_the_first_is_raised(gpu: FakeGPU, tmp_path):
    gpu.too_big = {32, 128}
    with pytest.raises(
        OutOfResources, match=r"'scale_kernel' \(num_warps=4, num_stages=3, BLOCK=32\)"
    ):
        launch(process(gpu))
    assert entries(tmp_path) == []


def test_the_emulator_still_uses_the_first_config_without_timing(
    gpu: FakeGPU, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    monkeypatch.setenv("MINITRITON_BACKEND", "emulator")
    tuned = process(gpu, do_bench=None)
    launch(tuned)
    assert gpu.timed == [] and gpu.launched == [32] and entries(tmp_path) == []
    assert "on the emulator: using the first config" in capsys.readouterr().err
    assert list(tuned.cache.values()) == [tuned.best_config]  # Triton's cache, per key


def test_the_emulator_times_the_configs_with_the_users_do_bench(
    gpu: FakeGPU, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("MINITRITON_BACKEND", "emulator")
    tuned = process(gpu)  # do_bench=gpu.do_bench
    launch(tuned)
    assert gpu.timed == [32, 128] and tuned.best_config.kwargs == {"BLOCK": 128}
    assert entries(tmp_path) == []  # emulator timings are not stored as a GPU's winner


def test_the_emulator_prunes_first_and_skips_configs_that_do_not_compile(
    gpu: FakeGPU, monkeypatch: pytest.MonkeyPatch, capsys
):
    monkeypatch.setenv("MINITRITON_BACKEND", "emulator")
    gpu.broken = {32}
    big_first = {"early_config_prune": lambda configs, named, **kwargs: configs[::-1]}
    tuned = process(gpu, blocks=(32, 64, 128), prune_configs_by=big_first, do_bench=None)
    launch(tuned)
    launch(tuned)  # the choice is kept for the key: 32 is not tried again
    assert gpu.launched == [128, 128] and gpu.timed == []
    tuned = process(gpu, blocks=(32, 64, 128), do_bench=None)
    launch(tuned)
    assert gpu.launched[-1] == 64 and tuned.best_config.kwargs == {"BLOCK": 64}
    assert "using the first config that compiles (BLOCK: 64" in capsys.readouterr().err


def test_on_the_emulator_the_first_error_is_raised_when_no_config_compiles(
    gpu: FakeGPU, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("MINITRITON_BACKEND", "emulator")
    gpu.broken = {32, 128}
    with pytest.raises(CompileError, match="BLOCK=32 needs too much memory"):
        launch(process(gpu))


# ---------------------------------------------------------------- bench()


class FakeClock:
    """Seconds that pass only when the benchmarked call runs."""

    def __init__(self, durations_ms: list[float]) -> None:
        self.now = 0.0
        self.durations = iter(durations_ms)
        self.calls = 0

    def __call__(self) -> float:
        return self.now

    def run(self) -> None:
        self.calls += 1
        self.now += next(self.durations) / 1e3


def test_bench_warms_up_then_takes_the_median_of_the_runs():
    # The first call compiles (1 s); then 13 calls of 2 ms pass the 25 ms of warm-up,
    # so 101 ms / 2 ms = 50 runs are timed, one in seven of them a slow outlier.
    warm_up = [2.0] * 13
    runs = [50.0 if i % 7 == 0 else 2.0 for i in range(50)]
    clock = FakeClock([1000.0] + warm_up + runs)
    ms = autotune_module.bench(clock.run, warmup_ms=25, rep_ms=101, clock=clock)
    assert ms == pytest.approx(2.0)  # the mean would be 8.9 ms
    assert clock.calls == 1 + 13 + 50


@pytest.mark.parametrize(
    "call_ms, warm, runs",
    [(3.0, 9, 33), (0.3, 84, autotune_module.MAX_RUNS), (60.0, 1, autotune_module.MIN_RUNS)],
)
def test_bench_runs_fill_rep_between_the_bounds(call_ms: float, warm: int, runs: int):
    clock = FakeClock([1000.0] + [call_ms] * 1000)
    assert autotune_module.bench(clock.run, warmup_ms=25, rep_ms=100, clock=clock) == pytest.approx(
        call_ms
    )
    assert clock.calls == 1 + warm + runs


def test_warmup_and_rep_reach_the_benchmark(gpu: FakeGPU, monkeypatch: pytest.MonkeyPatch):
    seen: list[tuple[float, float]] = []
    monkeypatch.setattr(autotune_module, "bench", lambda call, w, r: seen.append((w, r)) or 1.0)
    configs = [triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})]
    launch(triton.autotune(configs=configs, key=["n"], warmup=5, rep=20)(scale_kernel))
    launch(triton.autotune(configs=configs, key=["n"], cache_results=False)(scale_kernel))
    assert seen == [(5.0, 20.0)] * 2 + [(25.0, 100.0)] * 2
    seen.clear()  # as in Triton, a single config is not timed
    launch(triton.autotune(configs=configs[:1], key=["n"], cache_results=False)(scale_kernel))
    assert seen == []


def test_entries_are_json_files_in_the_kernel_cache_format(gpu: FakeGPU, tmp_path: Path):
    launch(process(gpu))
    (entry,) = entries(tmp_path)
    header, body = entry.read_text().split("\n", 1)
    assert header.startswith(cache.HEADER + " ")
    assert json.loads(body)["format"] == autotune_module.ENTRY_FORMAT


def test_every_option_reaches_the_autotuner_and_a_misspelt_one_is_refused():
    configs = [triton.Config({"BLOCK": 32})]
    tuned = triton.autotune(configs, ["n"], reset_to_zero=["x_ptr"], warmup=7, rep=9,
                            cache_results=False)(scale_kernel)  # fmt: skip
    assert (tuned.reset_to_zero, tuned.warmup_ms, tuned.rep_ms) == (["x_ptr"], 7.0, 9.0)
    assert tuned.cache_results is False and tuned.keys == ["n"]
    with pytest.raises(TypeError, match="unexpected keyword argument 'warm_up'"):
        triton.autotune(configs, ["n"], warm_up=7)


def test_pre_and_post_hooks_surround_every_timed_launch(gpu: FakeGPU):
    seen: list[str] = []
    tuned = process(
        gpu,
        pre_hook=lambda args: seen.append(f"pre {sorted(args)[:2]}"),
        post_hook=lambda args, exception: seen.append(f"post {exception}"),
        cache_results=False,
    )
    launch(tuned)
    assert seen == ["pre ['n', 'x_ptr']", "post None"] * 2  # two configs timed


def test_a_subclass_passes_tritons_arguments_in_tritons_order(gpu: FakeGPU):
    class CachedAutotuner(triton.runtime.Autotuner):
        """What flash-linear-attention's cache decorator builds."""

    configs = [triton.Config({"BLOCK": b}, num_warps=4) for b in (32, 128)]
    tuned = CachedAutotuner(scale_kernel, scale_kernel.arg_names, configs, ["n"], None, None,
                            pre_hook=None, post_hook=None, prune_configs_by=None, warmup=None,
                            rep=None, use_cuda_graph=False, do_bench=gpu.do_bench,
                            cache_results=False)  # fmt: skip
    launch(tuned)
    assert tuned.best_config is not None and tuned.arg_names == scale_kernel.arg_names
    assert gpu.timed == [32, 128]


def test_a_subclass_that_runs_tritons_tuning_loop_itself(gpu: FakeGPU):
    """FlagGems' tuner: Triton's run() written again over prune_configs, _bench and the hooks."""

    class LibTuner(triton.runtime.Autotuner):
        def run(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            self.nargs = dict(zip(self.arg_names, args))
            configs = self.prune_configs(kwargs)
            timings = {c: self._bench(*args, config=c, **kwargs) for c in configs}
            best = min(timings, key=lambda c: timings[c][0])
            self.pre_hook({**self.nargs, **kwargs, **best.all_kwargs()}, reset_only=True)
            self.best_config = best
            return self.fn.run(*args, **kwargs, **best.all_kwargs())

    configs = [triton.Config({"BLOCK": b}, num_warps=4) for b in (32, 128, 512)]
    drop_512 = {"early_config_prune": lambda configs, named, **kw: configs[:2]}
    tuner = LibTuner(scale_kernel, scale_kernel.arg_names, configs, ["n"], ["x_ptr"], None,
                     prune_configs_by=drop_512, do_bench=gpu.do_bench)  # fmt: skip
    x = np.ones(512, np.float32)
    tuner[(1,)](x, 256)
    assert gpu.timed == [32, 128] and tuner.best_config.kwargs == {"BLOCK": 128}
    assert gpu.launched[-1] == 128 and not x.any()  # reset_to_zero by the hook
    assert tuner._bench(x, 256, config=configs[0], grid=(1,))[0] == TIMES_MS[32]


def test_pruning_follows_tritons_contract(gpu: FakeGPU):
    seen: dict[str, Any] = {}

    def early(configs: list, nargs: dict, **kwargs: Any) -> list:
        seen["nargs"], seen["kwargs"] = sorted(nargs), sorted(kwargs)
        return configs[1:]

    def model(**values: Any) -> float:
        return -values["BLOCK"]  # the largest block is rated fastest

    tuned = process(gpu, blocks=(32, 64, 128, 256),
                    prune_configs_by={"early_config_prune": early, "perf_model": model,
                                      "top_k": 0.5})  # fmt: skip
    tuned[(1,)](np.zeros(512, np.float32), n=256)
    assert seen == {"nargs": ["x_ptr"], "kwargs": ["n"]}  # positional by name; keywords
    # 3 left, half of them rounds down to 1, the largest: launched without timing
    assert gpu.timed == [] and gpu.launched == [256]
    tuned = process(gpu, blocks=(32, 64), prune_configs_by={"perf_model": model, "top_k": 0.3})
    launch(tuned)  # int(2 * 0.3) == 0: one config is kept
    assert tuned.best_config.kwargs == {"BLOCK": 64}


def test_a_pruning_that_keeps_nothing_is_an_autotuner_error(gpu: FakeGPU):
    tuned = process(gpu, prune_configs_by={"early_config_prune": lambda c, n, **k: []})
    with pytest.raises(triton.TritonError) as info:
        launch(tuned)
    assert str(info.value) == (
        "Autotuner error: No valid autotuner configs after pruning. `early_config_prune` "
        "should return at least one config."
    )
    with pytest.raises(TypeError, match="top_k must be"):
        launch(process(gpu, prune_configs_by={"perf_model": lambda **k: 0, "top_k": "2"}))


def test_ir_override_is_named_and_refused(gpu: FakeGPU):
    first = triton.Config({"BLOCK": 32}, ir_override="first.ttir")
    assert str(first) != str(triton.Config({"BLOCK": 32}, ir_override="second.ttir"))
    tuned = triton.autotune(configs=[first], key=["n"])(scale_kernel)
    with pytest.raises(triton.TritonError, match="compiles kernels from their source only"):
        launch(tuned)


def test_any_object_with_run_can_be_tuned():
    launched: list[int] = []

    class Kernel:
        fn = None

        def run(self, **kwargs: Any) -> None:
            launched.append(kwargs["BLOCK"])

    def do_bench(call: Any, quantiles: Any) -> list[float]:
        call()
        return [float(launched[-1])] * 3

    configs = [triton.Config({"BLOCK": b}) for b in (3, 1, 2)]
    tuner = triton.runtime.Autotuner(Kernel(), [], configs, [], None, None, do_bench=do_bench)
    tuner.run()
    assert tuner.best_config.kwargs == {"BLOCK": 1} and launched == [3, 1, 2, 1]


def test_the_autotuner_has_tritons_attribute_names():
    # torch's wrap_triton reads them from the autotuner it makes around a launch
    def model(**kw: Any) -> float:
        return 0.0

    pruning = {"perf_model": model, "top_k": 2}
    configs = [triton.Config({"BLOCK": 32})]
    tuned = triton.autotune(configs, key=["n"], warmup=3, rep=7, prune_configs_by=pruning)(
        scale_kernel
    )
    assert (tuned.num_warmups, tuned.num_reps, tuned.use_cuda_graph) == (3, 7, False)
    assert (tuned.perf_model, tuned.configs_top_k, tuned.early_config_prune) == (model, 2, None)


def test_a_gpu_only_do_bench_falls_back_to_the_first_config_on_the_emulator(
    gpu: FakeGPU, monkeypatch: pytest.MonkeyPatch, capsys
):
    # unsloth's do_bench times with torch.cuda.Event, which a machine without a GPU lacks
    def cuda_events_only(call: Any, quantiles: Any) -> list[float]:
        raise RuntimeError("Found no NVIDIA driver on your system")

    monkeypatch.setenv("MINITRITON_BACKEND", "emulator")
    tuned = process(gpu, do_bench=cuda_events_only)
    launch(tuned)
    assert gpu.launched == [32] and tuned.best_config.kwargs == {"BLOCK": 32}
    err = capsys.readouterr().err
    assert "its do_bench failed (RuntimeError: Found no NVIDIA driver" in err
    assert "using the first config that compiles" in err
    monkeypatch.setenv("MINITRITON_BACKEND", "gpu")  # on a GPU the error is the user's
    with pytest.raises(RuntimeError, match="no NVIDIA driver"):
        launch(process(gpu, do_bench=cuda_events_only))
