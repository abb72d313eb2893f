"""``asm["cubin"]`` and ``asm["sass"]``: made from the PTX on first read, never listed."""

from __future__ import annotations

import subprocess

import pytest

from minitriton.backend import sass
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.jit import base_jit_function
from minitriton.signature import kernel_params, parse_signature
from tests.kernels import dot_kernels

SIGNATURE = (
    '*fp16:16, *fp16:16, *fp32:16, i32, i32, i32, i32:16, i32:1, i32:16, i32:1, i32:16, i32:1, '
    '64, 64, 32, "tf32"'
)  # fmt: skip


def compiled():  # noqa: ANN201
    jit = base_jit_function(dot_kernels.dot_kernel)
    specs = parse_signature(SIGNATURE, kernel_params(jit.fn))
    return compile_kernel(jit.source, specs, CompileOptions(arch="sm_90a"), stop_after="ptx")


def test_sass_and_cubin_are_not_listed_stages() -> None:
    asm = compiled().asm
    for stage in ("sass", "cubin"):
        assert stage not in asm and stage not in list(asm)
    assert "ptx" in asm


@pytest.mark.skipif(sass.find_tool("ptxas") is None, reason="needs NVIDIA's ptxas")
def test_cubin_is_the_assembled_kernel_with_line_info(tmp_path) -> None:
    asm = compiled().asm
    cubin = asm["cubin"]
    assert isinstance(cubin, bytes) and cubin[:4] == b"\x7fELF"
    assert asm["cubin"] is cubin  # made once
    nvdisasm = sass.find_tool("nvdisasm")
    if nvdisasm is None:
        return
    path = tmp_path / "kernel.cubin"
    path.write_bytes(cubin)
    listing = subprocess.run([nvdisasm, "-g", str(path)], capture_output=True, text=True).stdout
    # the PTX's .loc lines reach the cubin: instructions name their line of the kernel's
    # file, which Triton's own line-info tests read with `nvdisasm -g`
    assert "dot_kernels.py" in listing


@pytest.mark.skipif(
    sass.find_tool("ptxas") is None or sass.find_tool("nvdisasm") is None,
    reason="needs NVIDIA's ptxas and nvdisasm",
)
def test_triton_disable_line_info_leaves_the_cubin_without_lines(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    asm = compiled().asm
    with_lines = asm["cubin"]
    monkeypatch.setenv("TRITON_DISABLE_LINE_INFO", "1")
    path = tmp_path / "kernel.cubin"
    path.write_bytes(asm["cubin"])  # the same kernel read again: made again, without lines
    nvdisasm = str(sass.find_tool("nvdisasm"))
    listing = subprocess.run([nvdisasm, "-g", str(path)], capture_output=True, text=True).stdout
    assert "HGMMA" in listing and "## File" not in listing
    monkeypatch.delenv("TRITON_DISABLE_LINE_INFO")
    assert asm["cubin"] is with_lines


@pytest.mark.skipif(
    not sass.available(),
    reason="needs NVIDIA's ptxas and nvdisasm (or cuobjdump)",
)
def test_sass_lists_the_kernels_instructions() -> None:
    asm = compiled().asm
    text = asm["sass"]
    assert "HGMMA" in text  # the wgmma of the dot, as the tensor cores run it
    assert "EXIT" in text and "dot_kernel" in text
    assert asm["sass"] is text  # made once


def test_missing_tools_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    for names in sass.VARIABLES.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(sass, "_candidates", lambda binary: [])
    assert sass.find_tool("ptxas") is None
    with pytest.raises(sass.MissingToolError, match="needs NVIDIA's ptxas and nvdisasm"):
        compiled().asm["sass"]
    with pytest.raises(sass.MissingToolError, match=r'asm\["cubin"\] needs NVIDIA\'s ptxas,'):
        compiled().asm["cubin"]


def test_a_variable_names_the_tool(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    tool = tmp_path / "my-nvdisasm"
    monkeypatch.setenv("TRITON_NVDISASM_PATH", str(tool))
    assert sass.find_tool("nvdisasm") == str(tool)
