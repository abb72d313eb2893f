"""Kernel signatures: argument values and AOT signature strings -> :class:`ArgSpec`.

Two ways to say what a kernel is compiled for:

* At launch, :func:`spec_for_value` looks at each actual argument, with
  Triton's rules (``triton/runtime/jit.py``, ``mangle_type``)::

      None                    -> constexpr None
      bool                    -> i1
      int                     -> i32 if -2**31 <= x < 2**31,
                                 u64 if 2**63 <= x < 2**64, else i64
      float                   -> fp32
      NumPy scalar            -> its own dtype (np.float64(1) -> fp64)
      array / tensor          -> pointer to its dtype (*fp32 for float32)
      tuple, NamedTuple       -> a tuple of its items' specs

  Like Triton, integers divisible by 16 and pointers whose address is
  divisible by 16 are marked ``divisible_by_16``, and integers equal to 1
  ``equal_to_1``; the flags are part of the specialization key.

* Ahead of time (``minitriton compile --signature``), :func:`parse_signature`
  reads Triton's AOT signature syntax, one entry per parameter::

      "*fp32:16, *fp32:16, *fp32:16, i32, 1024"

  ``*T`` is a pointer to ``T``, a bare type a scalar, and anything else a
  constexpr value (an int, a float, ``True``/``False``, ``None`` or a quoted
  string). A ``:16`` suffix marks divisibility by 16 and ``:1`` equality to 1.
  ``tensordesc<fp16[64, 64]>`` is a host-side tensor descriptor with that
  element type and block shape, as in Triton (``tensordesc<fp16[64, 64]>:16``
  marks its sizes and strides divisible by 16).
  Errors are :class:`~minitriton.diagnostics.CompileError` diagnostics that
  point at the offending entry.
"""

from __future__ import annotations

import ast as pyast
import functools
import inspect
import linecache
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from minitriton.diagnostics import Location, error
from minitriton.frontend.source import ArgSpec
from minitriton.ir import types as t
from minitriton.language.core import const, constexpr

# ---------------------------------------------------------------------------
# Parameters of a kernel
# ---------------------------------------------------------------------------

NO_DEFAULT = inspect.Parameter.empty


@dataclass(frozen=True)
class Param:
    """One kernel parameter: its name, whether it is a constexpr, its default."""

    name: str
    is_constexpr: bool
    default: Any = NO_DEFAULT
    #: Triton's ``KernelParam`` fields, which libraries read (FlagGems' ``LibEntry``): the
    #: position, and whether ``do_not_specialize`` names the parameter.
    num: int = field(default=-1, compare=False)
    do_not_specialize: bool = field(default=False, compare=False)
    do_not_specialize_on_alignment: bool = field(default=False, compare=False)
    #: A scalar type named by the annotation (``n: tl.int64``, ``x: "tl.float16"``): the
    #: argument is passed as that type, as in Triton; None for other annotations.
    annotation_type: t.ScalarType | None = field(default=None, compare=False)
    #: Annotated ``tl.const`` (or ``"const ..."``, ``"*k..."``): a pointer argument is a
    #: pointer to read-only data, as in Triton.
    is_const: bool = field(default=False, compare=False)

    @property
    def has_default(self) -> bool:
        """True if the parameter has a default value."""
        return self.default is not NO_DEFAULT


def kernel_params(fn: Any) -> list[Param]:
    """The parameters of a Python kernel function, in order."""
    return [
        Param(p.name, is_constexpr_annotation(p.annotation), p.default, num=i,
              annotation_type=annotation_scalar_type(p.annotation),
              is_const=is_const_annotation(p.annotation))
        for i, p in enumerate(inspect.signature(fn).parameters.values())
    ]  # fmt: skip


#: Triton's short type names that an annotation string may use (``"fp16"``, ``"i64"``).
_SHORT_TYPE_NAMES = {
    "i1": "i1", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "u8": "u8",
    "u16": "u16", "u32": "u32", "u64": "u64", "fp16": "f16", "bf16": "bf16",
    "fp32": "f32", "fp64": "f64",
}  # fmt: skip


def annotation_scalar_type(annotation: Any) -> t.ScalarType | None:
    """The scalar type a parameter's annotation names (``tl.int8``, ``"tl.float16"``,
    ``"fp32"``), or None: other annotations (``torch.Tensor``, ``int``) change nothing."""
    if isinstance(annotation, t.ScalarType):
        return annotation
    if not isinstance(annotation, str):
        return None
    name = annotation.strip("'\" ")
    for prefix in ("triton.language.", "tl."):
        name = name.removeprefix(prefix)
    if name in _SHORT_TYPE_NAMES:
        return t.scalar(_SHORT_TYPE_NAMES[name])
    if not name.isidentifier() or name == "constexpr":
        return None
    import minitriton.language as tl  # here: the language imports this module

    value = getattr(tl, name, None)
    return value if isinstance(value, t.ScalarType) else None


def annotated_spec(spec: ArgSpec, type_: t.ScalarType | None) -> ArgSpec:
    """A scalar argument's spec with the type its annotation names. An integer keeps its
    divisibility hint; a 1 is not made a constant, so that it keeps the annotated type."""
    if type_ is None or spec.kind != "scalar":
        return spec
    keep = type_.is_int() and isinstance(spec.type, t.ScalarType) and spec.type.is_int()
    return ArgSpec(spec.name, "scalar", type_, divisible_by_16=keep and spec.divisible_by_16)


def is_const_annotation(annotation: Any) -> bool:
    """True for ``tl.const``, also as a string (``"tl.const"``, ``"const *fp32"``, ``"*kfp32"``),
    Triton's mark of a pointer to read-only data."""
    if annotation is const:
        return True
    if not isinstance(annotation, str) or is_constexpr_annotation(annotation):
        return False
    text = annotation.strip("'\" ")
    return text.split(".")[-1] == "const" or text.startswith(("const ", "*k"))


def const_spec(spec: ArgSpec, is_const: bool) -> ArgSpec:
    """A pointer argument's spec with a const pointer type, for a ``tl.const`` parameter."""
    if not is_const or spec.kind != "pointer" or not isinstance(spec.type, t.PointerType):
        return spec
    pointer = t.PointerType(spec.type.pointee, const=True)
    return ArgSpec(spec.name, "pointer", pointer, spec.value, spec.divisible_by_16,
                   spec.equal_to_1)  # fmt: skip


def is_constexpr_annotation(annotation: Any) -> bool:
    """True for ``tl.constexpr``, also as a string (``from __future__ import annotations``)."""
    if annotation is constexpr:
        return True
    if not isinstance(annotation, str):
        return False
    return annotation.strip("'\" ").split(".")[-1] == "constexpr"


# ---------------------------------------------------------------------------
# Specs from actual argument values (launch time)
# ---------------------------------------------------------------------------

# dtype names as NumPy, torch and CuPy spell them (``str(torch.float32)``
# ends in "float32") -> IR scalar names.
_DTYPE_NAMES = {
    "bool": "i1",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float16": "f16",
    "half": "f16",
    "bfloat16": "bf16",
    "float32": "f32",
    "float": "f32",
    "float64": "f64",
    "double": "f64",
    "float8_e5m2": "f8e5",
    "float8_e4m3fn": "f8e4nv",
    "float8_e4m3fnuz": "f8e4b8",
    "float8_e5m2fnuz": "f8e5b16",
}


def dtype_to_type(dtype: Any) -> t.ScalarType:
    """The scalar type of a NumPy, torch or CuPy dtype (``ValueError`` if none)."""
    if isinstance(dtype, t.ScalarType):
        return dtype  # a tl dtype: triton.reinterpret's wrapper
    try:
        return _type_of_dtype(dtype)
    except TypeError:  # an unhashable dtype-like object
        return _dtype_type(dtype)


@functools.lru_cache(maxsize=64)
def _type_of_dtype(dtype: Any) -> t.ScalarType:
    """:func:`_dtype_type`, once per dtype (NumPy's ``dtype.name`` is slow to ask)."""
    return _dtype_type(dtype)


def _dtype_type(dtype: Any) -> t.ScalarType:
    name = getattr(dtype, "name", None) or str(dtype).split(".")[-1]
    if name not in _DTYPE_NAMES:
        raise ValueError(f"dtype {dtype} has no MiniTriton type")
    return t.scalar(_DTYPE_NAMES[name])


def is_pointer_arg(value: Any) -> bool:
    """True for arrays and tensors (anything passed to the kernel by pointer)."""
    import numpy as np  # here: the launcher imports this module, and NumPy only on launching

    if isinstance(value, np.ndarray):
        return True
    return hasattr(value, "data_ptr") or hasattr(value, "__cuda_array_interface__")


def address_of(value: Any) -> int:
    """The address of the first element of an array or tensor."""
    if hasattr(value, "data_ptr"):
        return int(value.data_ptr())
    if hasattr(value, "__cuda_array_interface__"):
        return int(value.__cuda_array_interface__["data"][0])
    return int(value.__array_interface__["data"][0])


def int_type(value: int) -> t.ScalarType:
    """Triton's type for a Python int: i32 if it fits, u64 above 2**63, else i64."""
    if -(2**31) <= value < 2**31:
        return t.I32
    if 2**63 <= value < 2**64:
        return t.U64
    if -(2**63) <= value < 2**63:
        return t.I64
    raise ValueError(f"integer argument {value} does not fit in 64 bits")


def spec_for_value(name: str, value: Any, is_constexpr: bool = False) -> ArgSpec:
    """The :class:`ArgSpec` of one actual argument, by Triton's rules (see module doc)."""
    import numpy as np

    if isinstance(value, constexpr):
        return ArgSpec(name, "constexpr", value=value.value)
    if is_constexpr or value is None:
        return ArgSpec(name, "constexpr", value=value)
    if isinstance(value, (bool, np.bool_)):
        return ArgSpec(name, "scalar", t.I1)
    if isinstance(value, int):
        return _int_spec(name, value, int_type(value))
    if isinstance(value, np.integer):
        return _int_spec(name, int(value), dtype_to_type(value.dtype))
    if isinstance(value, np.floating):  # before float: np.float64 subclasses float
        return ArgSpec(name, "scalar", dtype_to_type(value.dtype))
    if isinstance(value, float):
        return ArgSpec(name, "scalar", t.F32)
    if type(value).__name__ == "TensorDescriptor" and hasattr(value, "block_shape"):
        return descriptor_spec(name, value)
    if is_pointer_arg(value):
        pointee = dtype_to_type(value.dtype)
        aligned = address_of(value) % 16 == 0
        return ArgSpec(name, "pointer", t.PointerType(pointee), divisible_by_16=aligned)
    if isinstance(value, tuple):
        return tuple_spec(name, value)
    # Strings, dtypes, functions, lists: only meaningful at compile time.
    return ArgSpec(name, "constexpr", value=value)


def tuple_spec(name: str, value: tuple[Any, ...]) -> ArgSpec:
    """A tuple argument, as in Triton: each item specialized as an argument of its own.

    ``(x, (1, None))`` is a pointer, an ``i32`` and a constexpr ``None``; the
    kernel sees a tuple of them. A ``NamedTuple`` keeps its class, so the
    kernel reads its fields by name; other tuple classes (``torch.Size``)
    become plain tuples.
    """
    cls = type(value) if hasattr(type(value), "_fields") else tuple
    items = tuple(spec_for_value(f"{name}_{i}", v) for i, v in enumerate(value))
    return ArgSpec(name, "tuple", value=(cls, items))


def descriptor_spec(name: str, desc: Any) -> ArgSpec:
    """A host-side tensor descriptor: specialized on its element type, block shape, padding."""
    from minitriton.tools import tensor_descriptor as TD

    problem = TD.check_layout(desc) or TD.check_block_shape(desc)
    if problem:
        raise TypeError(f"argument '{name}': {problem}")
    pointer = t.PointerType(dtype_to_type(desc.base.dtype))
    # Like int arguments, sizes and strides divisible by 16 are marked (vectorized copies).
    flags = tuple(int(v) % 16 == 0 for v in (*desc.shape, *desc.strides[:-1]))
    static = (tuple(int(s) for s in desc.block_shape), desc.padding, flags)
    return ArgSpec(name, "descriptor", pointer, value=static, divisible_by_16=True)


def _int_spec(name: str, value: int, type_: t.ScalarType) -> ArgSpec:
    return ArgSpec(name, "scalar", type_, divisible_by_16=value % 16 == 0, equal_to_1=value == 1)


# ---------------------------------------------------------------------------
# AOT signature strings
# ---------------------------------------------------------------------------

SIGNATURE_FILE = "<signature>"

_HINTS = {"16": "divisible_by_16", "1": "equal_to_1"}
# Patterns as text, compiled (and cached) by `re` on first use: only an AOT
# signature needs them, and compiling them at import would cost every launcher.
_TYPE_NAME = r"\*?k?[A-Za-z][A-Za-z0-9]*"


@dataclass(frozen=True)
class _Entry:
    """One comma-separated entry of a signature and its column (1-based)."""

    text: str
    col: int


def parse_signature(
    signature: str, params: Sequence[Param], fill: dict[str, Any] | None = None
) -> list[ArgSpec]:
    """Parse an AOT signature into one :class:`ArgSpec` per parameter.

    Parameters the signature leaves out at the end take their value from
    ``fill`` (e.g. the first autotune config) or their default.
    """
    _remember(signature)
    entries = _split(signature)
    if len(entries) > len(params):
        extra = entries[len(params)]
        raise _err(extra, f"too many entries: the kernel has {len(params)} parameters")
    specs = [_parse_entry(e, p) for e, p in zip(entries, params)]
    for param in params[len(entries) :]:
        specs.append(_missing(param, fill or {}, signature))
    return specs


def _remember(signature: str) -> None:
    """Let diagnostics show the signature as their source line."""
    linecache.cache[SIGNATURE_FILE] = (len(signature), None, [signature + "\n"], SIGNATURE_FILE)


def _err(entry: _Entry, message: str) -> Exception:
    return error(Location(SIGNATURE_FILE, 1, entry.col), message)


def _split(signature: str) -> list[_Entry]:
    """Split on commas outside quotes, keeping each entry's column."""
    entries: list[_Entry] = []
    start, quote, depth = 0, "", 0
    for i, ch in enumerate(signature + ","):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "<[":
            depth += 1
        elif ch in ">]":
            depth -= 1
        elif ch == "," and depth <= 0:
            entries.append(_entry(signature, start, i))
            start = i + 1
    if len(entries) == 1 and not entries[0].text:
        return []
    for e in entries:
        if not e.text:
            raise _err(e, "empty signature entry")
    return entries


def _entry(signature: str, start: int, end: int) -> _Entry:
    raw = signature[start:end]
    stripped = raw.lstrip()
    return _Entry(stripped.rstrip(), start + len(raw) - len(stripped) + 1)


_DESCRIPTOR = r"tensordesc<\s*(\w+)\s*\[(\s*\d+\s*(?:,\s*\d+\s*)*)\]\s*>(:16)?"


def _descriptor_entry(entry: _Entry, param: Param) -> ArgSpec:
    """``tensordesc<fp16[64, 64]>``: a host-side descriptor (``:16``: sizes and strides
    divisible by 16)."""
    m = re.fullmatch(_DESCRIPTOR, entry.text)
    if m is None:
        raise _err(entry, f"expected a descriptor such as 'tensordesc<fp16[64, 64]>', got "
                          f"'{entry.text}'")  # fmt: skip
    block = tuple(int(x) for x in m.group(2).split(",") if x.strip())
    flags = (m.group(3) is not None,) * (2 * len(block) - 1)
    pointer = t.PointerType(_scalar(entry, m.group(1)))
    return ArgSpec(param.name, "descriptor", pointer, value=(block, "zero", flags),
                   divisible_by_16=True)  # fmt: skip


def _parse_entry(entry: _Entry, param: Param) -> ArgSpec:
    if entry.text.startswith("tensordesc"):
        return _descriptor_entry(entry, param)
    text, hint = _split_hint(entry)
    value, is_value = _literal(text)
    if is_value:
        return _constexpr_entry(entry, param, value, hint)
    if param.is_constexpr:
        raise _err(entry, f"parameter '{param.name}' is a tl.constexpr: give its value, not a type")
    return const_spec(_typed_entry(entry, param.name, text, hint), param.is_const)


def _split_hint(entry: _Entry) -> tuple[str, str | None]:
    """``*fp32:16`` -> (``*fp32``, ``"16"``); quoted strings keep their colons."""
    text = entry.text
    if text[:1] in "'\"" or ":" not in text:
        return text, None
    base, _, hint = text.rpartition(":")
    if hint not in _HINTS:
        raise _err(entry, f"unknown hint ':{hint}' in '{text}' (expected ':16' or ':1')")
    return base.strip(), hint


def _literal(text: str) -> tuple[Any, bool]:
    """(value, True) if ``text`` is a Python literal, else (None, False)."""
    if re.fullmatch(_TYPE_NAME, text) and text not in ("True", "False", "None"):
        return None, False
    try:
        return pyast.literal_eval(text), True
    except (ValueError, SyntaxError):
        return None, False


def _constexpr_entry(entry: _Entry, param: Param, value: Any, hint: str | None) -> ArgSpec:
    if hint is not None:
        raise _err(entry, f"hint ':{hint}' applies to types, not to the value {value!r}")
    return ArgSpec(param.name, "constexpr", value=value)


def _typed_entry(entry: _Entry, name: str, text: str, hint: str | None) -> ArgSpec:
    is_pointer = text.startswith("*")
    type_name = text.lstrip("*")
    is_const = is_pointer and type_name.startswith("k")
    if is_const:
        type_name = type_name[1:]  # Triton's "*k" marks a const pointer
    scalar = _scalar(entry, type_name)
    flags = {_HINTS[hint]: True} if hint else {}
    if is_pointer:
        if hint == "1":
            raise _err(entry, f"hint ':1' applies to integers, not to the pointer '{text}'")
        return ArgSpec(name, "pointer", t.PointerType(scalar, const=is_const), **flags)
    if hint and not scalar.is_int():
        raise _err(entry, f"hint ':{hint}' applies to integers, not to '{text}'")
    return ArgSpec(name, "scalar", scalar, **flags)


def _scalar(entry: _Entry, name: str) -> t.ScalarType:
    try:
        return t.scalar(name)
    except ValueError:
        known = "i1, i8, i16, i32, i64, u8, u16, u32, u64, fp16, bf16, fp32, fp64"
        raise _err(entry, f"unknown type '{name}' (expected one of {known})") from None


def _missing(param: Param, fill: dict[str, Any], signature: str) -> ArgSpec:
    if param.name in fill:
        return const_spec(spec_for_value(param.name, fill[param.name], param.is_constexpr),
                          param.is_const)  # fmt: skip
    if param.has_default:
        return spec_for_value(param.name, param.default, param.is_constexpr)
    end = _Entry("", len(signature) + 1)
    raise _err(end, f"missing entry for parameter '{param.name}'")
