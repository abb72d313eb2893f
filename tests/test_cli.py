"""The ``minitriton`` command: ``compile`` and ``run``."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from minitriton import cli
from minitriton.backend.passes import GPU_PIPELINE
from minitriton.cli import main
from minitriton.ir import parse_module, print_module
from minitriton.passes import DEFAULT_PIPELINE

ROOT = Path(__file__).resolve().parents[1]
#: The GPU passes a default sm_90 compile runs (tma-stores needs MINITRITON_TMA_STORES=1).
GPU_DEFAULT = [name for name in GPU_PIPELINE if name != "tma-stores"]
VECTOR_ADD = str(ROOT / "tests" / "kernels" / "vector_add.py")
ADD_SIG = "*fp32:16, *fp32:16, *fp32:16, i32:16, 1024"
TC_MATMUL_SIG = ("*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, "
              "i32:1, i32:16, i32:1, 128, 128, 64, 8")  # fmt: skip


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``minitriton argv...`` run in this process."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def write(tmp_path: Path, name: str, source: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return str(path)


# ---------------------------------------------------------------------------
# compile
# ---------------------------------------------------------------------------


def test_emit_ast(capsys: pytest.CaptureFixture[str]):
    status, out, err = run_cli(capsys, "compile", VECTOR_ADD, "--emit", "ast")
    assert (status, err) == (0, "")
    assert out.startswith("FunctionDef name='add_kernel'")
    assert "    - Param name='BLOCK_SIZE'" in out


def test_emit_ir(capsys: pytest.CaptureFixture[str]):
    status, out, err = run_cli(capsys, "compile", VECTOR_ADD, "-s", ADD_SIG, "--emit", "ir")
    assert (status, err) == (0, "")
    assert out.startswith("tt.func @add_kernel(%x_ptr: ptr<f32> {divisibility = 16}, ")
    assert print_module(parse_module(out)) == out  # canonical IR text
    assert "1024" in out and "tt.load" in out and "tt.store" in out


def test_emit_ir_opt_is_the_default_and_differs_from_ir(capsys: pytest.CaptureFixture[str]):
    _, ir, _ = run_cli(capsys, "compile", VECTOR_ADD, "-s", ADD_SIG, "--emit", "ir")
    status, opt, err = run_cli(capsys, "compile", VECTOR_ADD, "-s", ADD_SIG)
    assert (status, err) == (0, "")
    assert opt.startswith("tt.func @add_kernel(")
    assert len(opt.splitlines()) <= len(ir.splitlines())


def test_print_after_all_dumps_each_pass(capsys: pytest.CaptureFixture[str]):
    status, out, err = run_cli(capsys, "compile", VECTOR_ADD, "-s", ADD_SIG, "--print-after-all")
    assert status == 0
    banners = [line for line in err.splitlines() if line.startswith("// -----// IR Dump")]
    passes = [*DEFAULT_PIPELINE, *GPU_DEFAULT]  # the GPU backend's passes run too
    assert banners == [f"// -----// IR Dump After {p} //----- //" for p in passes]
    last_dump = err.split(banners[len(DEFAULT_PIPELINE) - 1] + "\n")[1]
    assert last_dump.split(banners[len(DEFAULT_PIPELINE)])[0] == out  # ir-opt is the output
    assert "#blocked = #ttg.blocked<" in err.split(banners[-1])[1]  # ttgir, with its aliases


def test_print_after_all_names_every_gpu_pass_of_the_tutorial_matmul(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("MINITRITON_TMA_STORES", "1")  # tma-stores runs too
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    matmul = str(ROOT / "tests" / "kernels" / "tc_kernels.py") + ":matmul_kernel"
    status, _, err = run_cli(
        capsys, "compile", matmul, "-s", TC_MATMUL_SIG, "--print-after-all", "--arch", "sm_90a"
    )
    assert status == 0, err
    for name in GPU_PIPELINE:
        assert err.count(f"// -----// IR Dump After {name} //----- //\n") == 1
    pipelined = err.split("IR Dump After software-pipeline")[1].split("IR Dump After")[0]
    assert "ttg.async_copy_global_to_local" in pipelined and "ttng.warp_group_dot" in pipelined
    stored = err.split("IR Dump After tma-stores")[1].split("IR Dump After")[0]
    assert "ttng.async_tma_copy_local_to_global" in stored and "tt.store" not in stored


def test_print_after_a_gpu_pass_prints_that_one(capsys: pytest.CaptureFixture[str]):
    status, out, err = run_cli(
        capsys, "compile", VECTOR_ADD, "-s", ADD_SIG, "--print-after", "assign-layouts"
    )
    assert status == 0 and out.startswith("tt.func @add_kernel(")
    assert err.startswith("// -----// IR Dump After assign-layouts //----- //\n#blocked = ")
    assert err.count("IR Dump After") == 1


def test_list_passes(capsys: pytest.CaptureFixture[str]):
    status, out, err = run_cli(capsys, "compile", "--list-passes")
    assert (status, err) == (0, "")
    names = [line.split()[0] for line in out.splitlines() if line.startswith("  ") and
             not line.strip().startswith("runs on:")]  # fmt: skip
    assert names == [*DEFAULT_PIPELINE, "inline", *GPU_PIPELINE]
    assert "software-pipeline  Software pipelining of K loops" in out
    assert "runs on: sm_80 and newer, num_stages >= 2" in out


def test_passes_option_takes_no_gpu_pass(capsys: pytest.CaptureFixture[str]):
    status, _, err = run_cli(
        capsys, "compile", VECTOR_ADD, "-s", ADD_SIG, "--passes", "dce,inline-calls"
    )
    assert status == 1
    assert err.startswith("minitriton: error: unknown pass 'inline-calls'; known passes: canon")


def test_print_after_one_pass(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    out_file = tmp_path / "add.ir"
    status, out, err = run_cli(
        capsys, "compile", VECTOR_ADD, "-s", ADD_SIG, "--print-after", "cse", "-o", str(out_file)
    )
    assert (status, out) == (0, "")
    assert err.startswith("// -----// IR Dump After cse //----- //\ntt.func @add_kernel(")
    assert err.count("IR Dump After") == 1
    assert out_file.read_text().startswith("tt.func @add_kernel(")


def test_passes_option_runs_only_those(capsys: pytest.CaptureFixture[str]):
    status, _, err = run_cli(
        capsys, "compile", VECTOR_ADD, "-s", ADD_SIG, "--passes", "dce", "--print-after-all"
    )
    assert status == 0
    assert err.count("IR Dump After") == 1 + len(GPU_DEFAULT) and "IR Dump After dce" in err
    assert "IR Dump After cse" not in err


def test_unknown_pass(capsys: pytest.CaptureFixture[str]):
    status, out, err = run_cli(
        capsys, "compile", VECTOR_ADD, "-s", ADD_SIG, "--print-after", "nosuchpass"
    )
    assert (status, out) == (1, "")
    assert err.startswith("minitriton: error: unknown pass 'nosuchpass'; known passes: ")


def test_print_after_needs_passes(capsys: pytest.CaptureFixture[str]):
    status, _, err = run_cli(
        capsys, "compile", VECTOR_ADD, "-s", ADD_SIG, "--emit", "ir", "--print-after-all"
    )
    assert status == 1
    assert "--print-after needs --emit ir-opt" in err


def test_signature_is_required_and_checked(capsys: pytest.CaptureFixture[str]):
    status, _, err = run_cli(capsys, "compile", VECTOR_ADD, "--emit", "ir")
    assert status == 1
    assert err == (
        "minitriton: error: --signature is required: give the types of "
        "add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE)\n"
    )
    status, _, err = run_cli(capsys, "compile", VECTOR_ADD, "-s", "*fp32, *fp32, *float, i32, 4")
    assert status == 1
    assert err.splitlines()[:3] == [
        "<signature>:1:15: error: unknown type 'float' (expected one of i1, i8, i16, i32, i64, "
        "u8, u16, u32, u64, fp16, bf16, fp32, fp64)",
        "    *fp32, *fp32, *float, i32, 4",
        "                  ^",
    ]


LAMBDA_KERNEL = """
    import minitriton as triton
    import minitriton.language as tl


    @triton.jit
    def bad_kernel(x_ptr, n, BLOCK: tl.constexpr):
        f = lambda v: v + 1
        tl.store(x_ptr, f(n))
"""


def test_syntax_error_is_a_located_diagnostic(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    path = write(tmp_path, "bad.py", LAMBDA_KERNEL)
    status, out, err = run_cli(capsys, "compile", path, "--emit", "ast")
    assert (status, out) == (1, "")
    assert err == (
        f"{path}:7:9: error: unsupported construct: lambda\n"
        "        f = lambda v: v + 1\n"
        "            ^\n"
        "help: define a @triton.jit helper function at module level and call it\n"
    )


TYPE_ERROR_KERNEL = """
    import minitriton as triton
    import minitriton.language as tl


    @triton.jit
    def bad_kernel(x_ptr, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offsets, other=0.0)
        tl.store(x_ptr + offsets, x)
"""


def test_semantic_error_is_a_located_diagnostic(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    path = write(tmp_path, "bad2.py", TYPE_ERROR_KERNEL)
    status, out, err = run_cli(capsys, "compile", path, "-s", "*fp32, 16", "--emit", "ir")
    assert (status, out) == (1, "")
    lines = err.splitlines()
    assert lines[0].startswith(f"{path}:8:")
    assert ": error: " in lines[0] and "other" in lines[0]
    assert lines[1] == "        x = tl.load(x_ptr + offsets, other=0.0)"
    assert lines[2].strip() == "^ at 3:8: in bad_kernel"  # and where, as Triton says it
    assert "Traceback" not in err


SEVERAL_KERNELS = """
    import minitriton as triton
    import minitriton.language as tl


    @triton.jit
    def helper(x):
        return x * 2


    @triton.jit
    def first(x_ptr, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        tl.store(x_ptr + offsets, helper(tl.load(x_ptr + offsets)))


    @triton.jit
    def second(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)


    if __name__ == "__main__":
        print("MAIN BLOCK RAN")
"""


def test_choosing_among_kernels(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    path = write(tmp_path, "several.py", SEVERAL_KERNELS)
    status, out, err = run_cli(capsys, "compile", path, "--emit", "ast")
    assert (status, out) == (1, "")
    assert err == (
        f"minitriton: error: {path} defines several kernels (first, second): "
        f"choose one as {path}:KERNEL\n"
    )
    status, out, err = run_cli(capsys, "compile", f"{path}:second", "-s", "*fp16, 32")
    assert (status, err) == (0, "")
    assert out.startswith("tt.func @second(%x_ptr: ptr<f16>)")
    assert "MAIN BLOCK RAN" not in out
    status, _, err = run_cli(capsys, "compile", f"{path}:third", "--emit", "ast")
    assert status == 1
    assert err.endswith("has no @jit kernel named 'third' (kernels: first, second)\n")


def test_import_errors_show_the_users_traceback(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    path = write(tmp_path, "broken.py", "import minitriton\nraise ValueError('oops')\n")
    status, _, err = run_cli(capsys, "compile", path, "--emit", "ast")
    assert status == 1
    assert err.startswith(f"minitriton: error: importing {path} failed:\nTraceback")
    assert f'File "{path}", line 2' in err
    assert "importlib" not in err  # the traceback starts in the user's file
    assert err.endswith("ValueError: oops\n")


def test_missing_file(capsys: pytest.CaptureFixture[str]):
    status, _, err = run_cli(capsys, "compile", "no/such/file.py", "--emit", "ast")
    assert (status, err) == (1, "minitriton: error: no/such/file.py: no such file\n")


def test_autotuned_kernels_take_constexprs_from_the_first_config(
    capsys: pytest.CaptureFixture[str],
):
    matmul = str(ROOT / "tests" / "kernels" / "matmul.py")
    sig = "*fp16, *fp16, *fp16, i32, i32, i32, i32, i32, i32, i32, i32, i32"
    status, out, err = run_cli(capsys, "compile", f"{matmul}:matmul_kernel", "-s", sig)
    assert (status, err) == (0, "")
    assert out.startswith("tt.func @matmul_kernel(")


@pytest.mark.parametrize(("emit", "marker"), [("llvm", "define"), ("ptx", ".entry add_kernel")])
def test_emit_llvm_and_ptx(capsys: pytest.CaptureFixture[str], emit: str, marker: str):
    status, out, err = run_cli(capsys, "compile", VECTOR_ADD, "-s", ADD_SIG, "--emit", emit)
    assert (status, err) == (0, "")
    assert marker in out


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas from the CUDA toolkit")
def test_emit_cubin(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    cubin = tmp_path / "add.cubin"
    status, _, err = run_cli(
        capsys, "compile", VECTOR_ADD, "-s", ADD_SIG, "--emit", "cubin", "-o", str(cubin)
    )
    assert (status, err) == (0, "")
    assert cubin.read_bytes()[:4] == b"\x7fELF"


MATMUL_SIG = "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, 1, i32:16, 1, i32:16, 1"


@pytest.mark.parametrize(
    ("args", "present", "absent"),
    [
        (("--emit", "ttgir", "--num-stages", "4"), "stages = 4", "tt.dot"),
        (
            ("--emit", "ptx", "--arch", "sm_90a"),
            "wgmma.mma_async.sync.aligned.m64n256k16",
            "fma.rn.f32",
        ),
        (("--emit", "ptx", "--arch", "sm_80"), ".target sm_80", "wgmma"),
    ],
)
def test_emit_ttgir_and_tensor_core_targets(capsys, args, present, absent):
    matmul = str(ROOT / "tests" / "kernels" / "matmul.py")
    status, out, err = run_cli(capsys, "compile", matmul, "-s", MATMUL_SIG, *args)
    assert (status, err) == (0, "")
    assert present in out and absent not in out


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas from the CUDA toolkit")
def test_emit_cubin_of_a_wgmma_kernel_targets_sm_90a(capsys, tmp_path: Path):
    matmul = str(ROOT / "tests" / "kernels" / "matmul.py")
    cubin = tmp_path / "mm.cubin"
    args = ("compile", matmul, "-s", MATMUL_SIG, "--emit", "cubin", "-o", str(cubin))
    status, _, err = run_cli(capsys, *args)  # --arch sm_90: the PTX says sm_90a
    assert (status, err) == (0, "")
    assert cubin.read_bytes()[:4] == b"\x7fELF"


# ---------------------------------------------------------------------------
# run (in a fresh process, as a user would)
# ---------------------------------------------------------------------------


def run_command(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    env.pop("MINITRITON_BACKEND", None)
    cmd = [sys.executable, "-m", "minitriton", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


def test_run_the_readme_demo_on_the_emulator():
    result = run_command("run", "examples/vector_add.py", "--backend", "emulator")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "backend: emulator\nmax abs error vs NumPy: 0.0\n"


SCRIPT = """
    import sys
    import numpy as np
    import minitriton as triton
    import minitriton.language as tl


    @triton.jit
    def fill(x_ptr, value, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), value)


    x = np.zeros(8, np.float32)
    fill[(1,)](x, float(sys.argv[1]), BLOCK=8)
    print(__name__, triton.get_backend(), sys.argv[1:], x.sum())
"""


def test_run_passes_arguments_and_runs_as_main(tmp_path: Path):
    path = write(tmp_path, "script.py", SCRIPT)
    result = run_command("run", "--backend", "emulator", path, "2.5", "--flag")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "__main__ emulator ['2.5', '--flag'] 20.0\n"


OUT_OF_BOUNDS = """
    import numpy as np
    import minitriton as triton
    import minitriton.language as tl


    @triton.jit
    def overrun(x_ptr, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        tl.store(x_ptr + offsets, 1.0)


    overrun[(1,)](np.zeros(8, np.float32), BLOCK=16)
"""


def test_run_reports_emulator_errors_without_traceback(tmp_path: Path):
    path = write(tmp_path, "oob.py", OUT_OF_BOUNDS)
    result = run_command("run", path, "--backend", "emulator")
    assert result.returncode == 1
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{path}:9:5: error: ") and "out-of-bounds" in first
    assert result.stderr.splitlines()[1] == "        tl.store(x_ptr + offsets, 1.0)"
    assert "Traceback" not in result.stderr


def test_run_reports_compile_errors_without_traceback(tmp_path: Path):
    source = LAMBDA_KERNEL + "\n    import numpy as np\n    bad_kernel[(1,)](np.zeros(4), 4, 4)\n"
    path = write(tmp_path, "bad_script.py", source)
    result = run_command("run", path)
    assert result.returncode == 1
    assert result.stderr.startswith(f"{path}:7:9: error: unsupported construct: lambda\n")
    assert "Traceback" not in result.stderr


def test_run_shows_user_tracebacks_from_the_script_on(tmp_path: Path):
    path = write(tmp_path, "fails.py", "def f():\n    return 1 / 0\n\nf()\n")
    result = run_command("run", path)
    assert result.returncode == 1
    assert result.stderr.startswith(f'Traceback (most recent call last):\n  File "{path}", line 4')
    assert "runpy" not in result.stderr and "minitriton" not in result.stderr
    assert result.stderr.endswith("ZeroDivisionError: division by zero\n")


def test_run_exit_status_and_missing_script(tmp_path: Path):
    path = write(tmp_path, "exit3.py", "raise SystemExit(3)\n")
    assert run_command("run", path).returncode == 3
    result = run_command("run", str(tmp_path / "nope.py"))
    assert (result.returncode, result.stderr) == (
        1,
        f"minitriton: error: {tmp_path / 'nope.py'}: no such file\n",
    )


def test_no_command_prints_help():
    result = run_command()
    assert result.returncode == 2
    assert "compile" in result.stderr and "run" in result.stderr


def test_a_command_takes_its_help_from_its_function_docstring():
    def run_greet(args) -> int:
        """say hello

        Print a greeting for NAME, once per
        launch.
        """
        return 0

    parser = argparse.ArgumentParser(prog="minitriton")
    sub = parser.add_subparsers()
    p = cli.add_command(sub, "greet", run_greet)
    assert p.description == "Print a greeting for NAME, once per\nlaunch."
    assert "greet" in parser.format_help() and "say hello" in parser.format_help()
    assert parser.parse_args(["greet"]).func is run_greet


def test_a_command_without_a_description_is_refused():
    def run_terse(args) -> int:
        """say hello"""
        return 0

    sub = argparse.ArgumentParser().add_subparsers()
    with pytest.raises(TypeError, match="run_terse: a command's docstring needs a help line"):
        cli.add_command(sub, "terse", run_terse)
