"""Golden tests: the tutorial kernels in tests/kernels lowered to IR.

Each case lowers one kernel for one specialization, verifies the module,
checks that the printed IR parses back to the same text, and compares it
with ``goldens/<name>.ir`` (``pytest --update-goldens`` rewrites them).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from minitriton.frontend.lower import lower_kernel
from minitriton.frontend.source import ArgSpec, KernelSource
from minitriton.ir import Module, parse_module, print_module, verify_module
from minitriton.ir.types import parse_type

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
GOLDENS = Path(__file__).resolve().parent / "goldens"


def load_kernel_module(name: str) -> ModuleType:
    """Import tests/kernels/<name>.py as a module of its own."""
    spec = importlib.util.spec_from_file_location(f"lower_kernels_{name}", KERNELS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernel_source(module: ModuleType, fn_name: str) -> KernelSource:
    """The KernelSource of a @jit function (unwrapping autotune/heuristics)."""
    fn = getattr(module, fn_name)
    while not hasattr(fn, "source"):
        fn = fn.fn
    return fn.source


def specs(src: KernelSource, args: list[Any]) -> list[ArgSpec]:
    """ArgSpecs from a compact list: type strings for run-time args, else constexprs."""
    out = []
    for name, arg in zip(src.param_names, args):
        if _is_type(arg):
            kind = "pointer" if arg.startswith("ptr") else "scalar"
            out.append(ArgSpec(name, kind, parse_type(arg), divisible_by_16=kind == "pointer"))
        else:
            out.append(ArgSpec(name, "constexpr", value=arg))
    return out


def _is_type(arg: Any) -> bool:
    try:
        return isinstance(arg, str) and parse_type(arg) is not None
    except ValueError:
        return False


def lower(file: str, fn_name: str, args: list[Any]) -> Module:
    """Lower ``fn_name`` from tests/kernels/<file>.py for ``args``."""
    src = kernel_source(load_kernel_module(file), fn_name)
    return lower_kernel(src, specs(src, args))


F32P, F16P, I32 = "ptr<f32>", "ptr<f16>", "i32"

CASES = {
    "vector_add": ("vector_add", "add_kernel", [F32P, F32P, F32P, I32, 1024]),
    "fused_softmax": ("fused_softmax", "softmax_kernel", [F32P, F32P, I32, I32, I32, I32, 1024, 4]),
    "matmul_leaky_relu": (
        "matmul",
        "matmul_kernel",
        [F16P, F16P, F16P] + [I32] * 9 + [64, 64, 32, 8, "leaky_relu"],
    ),
    "matmul_no_activation": (
        "matmul",
        "matmul_kernel",
        [F16P, F16P, F16P] + [I32] * 9 + [32, 32, 16, 4, ""],
    ),
    "layer_norm_fwd": ("layer_norm", "_layer_norm_fwd_fused", [F32P] * 6 + [I32, I32, "f32", 1024]),
    "layer_norm_bwd_dx": (
        "layer_norm",
        "_layer_norm_bwd_dx_fused",
        [F32P] * 8 + ["ptr<i32>", I32, I32, 8, 1024],
    ),
    "layer_norm_bwd_dwdb": ("layer_norm", "_layer_norm_bwd_dwdb", [F32P] * 4 + [I32, I32, 32, 128]),
    "attention_causal": (
        "attention_masked",
        "attn_fwd_masked",
        [F16P, F16P, F16P, "f32", F32P, F16P] + [I32] * 19 + [64, 64, 32, 3],
    ),
    "attention_noncausal": (
        "attention_masked",
        "attn_fwd_masked",
        [F16P, F16P, F16P, "f32", F32P, F16P] + [I32] * 19 + [64, 64, 32, 1],
    ),
    "dropout": ("dropout", "_seeded_dropout", [F32P, F32P, I32, "f32", I32, 1024]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_golden(name: str, golden: Any) -> None:
    file, fn_name, args = CASES[name]
    module = lower(file, fn_name, args)
    verify_module(module)
    text = print_module(module)
    assert print_module(parse_module(text)) == text
    golden(text, f"{name}.ir")


def test_every_golden_round_trips() -> None:
    files = sorted(GOLDENS.glob("*.ir"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        module = parse_module(text)
        verify_module(module)
        assert print_module(module) == text, path.name


def test_kernel_signature_and_helpers() -> None:
    module = lower(*CASES["matmul_leaky_relu"])
    kernel = module.kernel
    assert kernel.sym_name == "matmul_kernel"
    assert [a.name_hint for a in kernel.body.args][:4] == ["a_ptr", "b_ptr", "c_ptr", "M"]
    assert len(kernel.body.args) == 12  # the constexprs are folded away
    assert kernel.attrs["arg_attrs"][0] == {"divisibility": 16}
    assert [f.sym_name for f in module.funcs[1:]] == ["leaky_relu__fp32S64_64S"]
    assert module.funcs[1].attrs["private"] is True


def test_constexpr_branch_not_taken_has_no_call() -> None:
    module = lower(*CASES["matmul_no_activation"])
    assert len(module.funcs) == 1
    assert not any(op.name == "tt.call" for op in module.walk())


def test_ops_carry_source_locations() -> None:
    module = lower(*CASES["vector_add"])
    locs = {(op.name, op.loc.line) for op in module.walk()}
    path = str(KERNELS / "vector_add.py")
    assert all(op.loc.file == path for op in module.walk())
    text = (KERNELS / "vector_add.py").read_text().splitlines()
    line = next(i for i, t in enumerate(text, 1) if "tl.program_id(axis=0)" in t)
    assert ("tt.get_program_id", line) in locs


def test_attention_helper_specialized_per_stage() -> None:
    module = lower(*CASES["attention_causal"])
    names = [f.sym_name for f in module.funcs[1:]]
    assert len(names) == 2 and names[0] != names[1]
    assert all(n.startswith("_attn_fwd_inner_masked__") for n in names)


def test_equal_to_1_argument_is_folded() -> None:
    src = kernel_source(load_kernel_module("vector_add"), "add_kernel")
    args = specs(src, [F32P, F32P, F32P, I32, 1024])
    args[3] = ArgSpec("n_elements", "scalar", parse_type("i32"), equal_to_1=True)
    module = lower_kernel(src, args)
    verify_module(module)
    n_arg = module.kernel.body.args[3]
    assert n_arg.name_hint == "n_elements"
    assert not any(n_arg in op.operands for op in module.walk())


FEATURES = {
    "features_control_flow": ("control_flow", [F32P, I32, 128, None]),
    "features_control_flow_bias": ("control_flow", [F32P, I32, 128, 1.5]),
    "features_reductions": ("reductions", [F32P, F32P, 16, 32]),
    "features_shapes_and_math": ("shapes_and_math", [F32P, F32P, 64]),
    "features_random": ("random_numbers", [F32P, I32, 256]),
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_feature_golden(name: str, golden: Any) -> None:
    fn_name, args = FEATURES[name]
    module = lower("lowering_features", fn_name, args)
    verify_module(module)
    text = print_module(module)
    assert print_module(parse_module(text)) == text
    golden(text, f"{name}.ir")
