"""``--emit ttgir`` as Triton prints it: layouts as aliases, source locations on request."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import minitriton.backend.ops  # noqa: F401 - registers the ttg/ttng ops the dumps use
from minitriton.cli import main
from minitriton.ir import parse_module, print_module, verify_module
from minitriton.ir.ttgir_text import attribute_form, readable

GOLDENS = Path(__file__).with_name("goldens")
ROOT = Path(__file__).resolve().parents[2]
VECTOR_ADD = str(ROOT / "tests" / "kernels" / "vector_add.py")
MATMUL = str(ROOT / "tests" / "kernels" / "matmul.py")
MODULES = [
    "dot_fp16_64x64x32_sm80.ttgir",
    "dot_fp16_64x64x32_sm80_pipelined.ttgir",
    "chained_dot_64_sm80.ttgir",
    "fused_attention_64_sm80_pipelined.ttgir",
]


@pytest.mark.parametrize("name", MODULES)
def test_a_readable_dump_parses_back_and_verifies(name: str) -> None:
    text = (GOLDENS / name).read_text()
    assert text.startswith("#blocked = #ttg.blocked<{sizePerThread = [")
    assert 'layout = "' not in text  # every layout is an alias or inline in a tensor type
    module = parse_module(text, name)
    verify_module(module)
    assert readable(print_module(module)) == text


def test_aliases_are_declared_once_and_used_in_tensor_types() -> None:
    text = (GOLDENS / "dot_fp16_64x64x32_sm80.ttgir").read_text()
    aliases = re.findall(r"^(#\w+) = ", text, re.M)
    assert aliases == sorted(set(aliases), key=aliases.index)  # each declared once
    assert aliases == ["#blocked", "#blocked1", "#mma", "#blocked2"]  # the fp32 store: 4 a thread
    assert "tensor<64x64xf32, #mma>" in text
    assert "#ttg.slice<{dim = 0, parent = #blocked}>" in text
    assert "#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>" in text
    lines = [line for line in text.splitlines() if not line.startswith("tt.func")]
    assert sum(map(len, lines)) / len(lines) < 80  # was 116 with every layout spelled out


def test_the_attribute_form_comes_back_line_for_line() -> None:
    text = (GOLDENS / "chained_dot_64_sm80.ttgir").read_text()
    back = attribute_form(text)
    assert len(back.splitlines()) == len(text.splitlines())  # parse errors keep their lines
    assert back.splitlines()[0] == ""  # an alias line
    assert 'layout = "slice<dim=1, parent=blocked<spt=[1, 8], tpw=[4, 8]' in back
    shown = readable(back).splitlines()
    assert [line for line in shown if line] == text.splitlines()


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_emit_ttgir_with_source_locations(capsys: pytest.CaptureFixture[str]) -> None:
    sig = ["--signature", "*fp32:16, *fp32:16, *fp32:16, i32:16, 1024"]
    status, plain, err = run_cli(capsys, "compile", VECTOR_ADD, *sig, "--emit", "ttgir")
    assert (status, err) == (0, "")
    assert plain.startswith("#blocked = #ttg.blocked<{sizePerThread = [4], ")
    assert "%offsets = arith.add(%2, %1) : tensor<1024xi32, #blocked>\n" in plain
    status, located, _ = run_cli(capsys, "compile", VECTOR_ADD, *sig, "--emit", "ttgir", "--loc")
    assert status == 0
    line = next(x for x in located.splitlines() if "%offsets = " in x)
    assert line.endswith(f'tensor<1024xi32, #blocked> loc("{VECTOR_ADD}":20:15)')
    # Without its locations it is the plain dump, and it parses back with them.
    assert re.sub(r' loc\("[^"]*":\d+:\d+\)', "", located) == plain
    module = parse_module(located, "k.ttgir")
    assert readable(print_module(module, with_locs=True)) == located


def test_loc_needs_a_stage_with_ops(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_cli(capsys, "compile", VECTOR_ADD, "-s", "*fp32, *fp32, *fp32, i32, 8",
                             "--emit", "ptx", "--loc")  # fmt: skip
    assert status == 1 and "--loc needs --emit ir-opt or ttgir" in err


def test_help_explains_specializations(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["compile", "--help"])
    out = capsys.readouterr().out
    assert "*fp16:16   a pointer whose address is divisible by 16 bytes" in out
    assert "i32:1      an integer equal to 1" in out
    assert "1          in place of an integer argument: its value" in out
    assert "minitriton compile matmul.py:matmul_kernel --emit ttgir" in out


def test_a_signature_without_specializations_gets_a_note(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bare = "*fp16, *fp16, *fp16, i32, i32, i32, i32, i32, i32, i32, i32, i32"
    status, out, err = run_cli(capsys, "compile", f"{MATMUL}:matmul_kernel", "-s", bare,
                               "--emit", "ttgir", "--arch", "sm_80")  # fmt: skip
    assert status == 0 and "ttg.async_copy_global_to_local" not in out  # not pipelined
    assert err.startswith("note: Triton's launcher would specialize this kernel's pointers")
    marked = "*fp16:16, *fp16:16, *fp16:16" + ", i32:16" * 9
    assert f'--signature "{marked}"' in err
    # As suggested (with :1 for the unit strides), the loop is pipelined.
    sig = "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:1, "
    sig += "i32:16, i32:1"
    status, out, err = run_cli(capsys, "compile", f"{MATMUL}:matmul_kernel", "-s", sig,
                               "--emit", "ttgir", "--arch", "sm_80")  # fmt: skip
    assert (status, err) == (0, "")
    assert "ttg.async_copy_global_to_local" in out
