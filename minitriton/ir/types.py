"""IR types: scalars, pointers and blocks.

Types are frozen, hashable dataclasses, so they can be compared with ``==``,
used as dict keys and shared freely. Their text form is the one the IR
printer writes and the IR parser reads::

    i1 i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64   scalars
    ptr<f32>                                             pointer to f32
    tensor<128x64xf16>                                   a block of f16
    tensor<128xptr<f32>>                                 a block of pointers

The user-facing dtypes (``tl.float32``, ``tl.int8`` ...) are these same
:class:`ScalarType` objects.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import reduce
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    import numpy as np


def _bitwidth(name: str) -> int:
    """The digits after a scalar name's letters: ``f8e5`` -> 8, ``bf16`` -> 16.

    Plain string work, not a regular expression: the first launch of a
    process asks for a bit width, and compiling a pattern then costs more
    than the rest of binding the arguments.
    """
    digits = name.lstrip("abcdefghijklmnopqrstuvwxyz")
    end = next((i for i, c in enumerate(digits) if not c.isdigit()), len(digits))
    assert end > 0, name  # every scalar name ends its prefix with digits
    return int(digits[:end])


#: The one ScalarType object of each type name (see ScalarType.__new__).
_INTERNED: dict[str, ScalarType] = {}


@dataclass(frozen=True, init=False)
class ScalarType:
    """An integer, unsigned integer, boolean (``i1``) or floating-point type."""

    name: str

    # Triton's lists of type names (``tl.dtype.SINT_TYPES`` ...), for tests written for it.
    SINT_TYPES: ClassVar[list[str]] = ["int8", "int16", "int32", "int64"]
    UINT_TYPES: ClassVar[list[str]] = ["int1", "uint8", "uint16", "uint32", "uint64"]
    FP_TYPES: ClassVar[list[str]] = ["fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16",
                                     "fp16", "bf16", "fp32", "fp64"]  # fmt: skip
    STANDARD_FP_TYPES: ClassVar[list[str]] = ["fp16", "bf16", "fp32", "fp64"]

    def __new__(cls, name: str) -> ScalarType:
        # One object per type, as Triton's dtypes are: kernels written for it compare
        # them with `is` (`if dtype is tl.float32`). Triton's spelling, tl.dtype("fp32")
        # or tl.dtype("int8"), names the same object.
        name = _FROM_TRITON_NAMES.get(name, name)
        interned = _INTERNED.get(name)
        if interned is None:
            interned = super().__new__(cls)
            object.__setattr__(interned, "name", name)
            interned = _INTERNED.setdefault(name, interned)  # one object, even across threads
        return interned

    def __init__(self, name: str) -> None:
        """Nothing to do: :meth:`__new__` gave the one object of the type, its name set."""

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return ScalarType, (self.name,)  # unpickled and copied as the one object

    @property
    def kind(self) -> str:
        """One of ``"bool"``, ``"int"``, ``"uint"``, ``"float"``."""
        if self.name == "i1":
            return "bool"
        return {"i": "int", "u": "uint", "f": "float", "b": "float"}[self.name[0]]

    @property
    def bitwidth(self) -> int:
        """Number of bits of one value (1 for ``i1``)."""
        return _bitwidth(self.name)

    def is_int(self) -> bool:
        """True for signed and unsigned integers and ``i1``."""
        return self.kind in ("bool", "int", "uint")

    def is_float(self) -> bool:
        """True for f16, bf16, f32, f64 and the fp8 types."""
        return self.kind == "float"

    def is_fp8(self) -> bool:
        """True for the fp8 types (``f8e5``, ``f8e4nv``)."""
        return self.name.startswith("f8")

    def is_bool(self) -> bool:
        """True for ``i1``."""
        return self.kind == "bool"

    def is_signed(self) -> bool:
        """True for signed integers (``i1`` counts as unsigned)."""
        return self.kind == "int"

    def is_unsigned(self) -> bool:
        """True for unsigned integers and ``i1``."""
        return self.kind in ("uint", "bool")

    def is_ptr(self) -> bool:
        """Scalars are not pointers."""
        return False

    def is_const(self) -> bool:
        """Scalars are not const pointers (Triton's ``dtype.is_const()``)."""
        return False

    @property
    def scalar(self) -> ScalarType:
        """The element type (itself)."""
        return self

    @property
    def numpy(self) -> np.dtype:
        """The NumPy dtype that stores this type (bf16 is stored as uint16)."""
        import numpy as np  # here, not at the top: the launcher imports this module early

        return np.dtype(_NUMPY_NAMES[self.name])

    @property
    def triton_name(self) -> str:
        """The name Triton prints: ``fp32``, ``int32``, ``uint8``, ``bf16``."""
        return _TRITON_NAMES[self.name]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return self.triton_name

    # -- Triton's dtype API, for host code and kernels alike -----------------------
    @property
    def primitive_bitwidth(self) -> int:
        """Triton's name for :attr:`bitwidth`."""
        return self.bitwidth

    @property
    def int_bitwidth(self) -> int:
        """The bits of an integer type (Triton's ``int_bitwidth``)."""
        if not self.is_int():
            raise AttributeError(f"{self.triton_name} is not an integer type")
        return self.bitwidth

    @property
    def fp_mantissa_width(self) -> int:
        """The explicit mantissa bits of a floating-point type (23 for ``fp32``)."""
        return _FLOAT_FORMATS[self.name][0]

    @property
    def exponent_bias(self) -> int:
        """The exponent bias of a floating-point type (127 for ``fp32``)."""
        return _FLOAT_FORMATS[self.name][1]

    def is_floating(self) -> bool:
        """Triton's name for :meth:`is_float`."""
        return self.is_float()

    def is_standard_floating(self) -> bool:
        """True for fp16, bf16, fp32 and fp64 (not fp8)."""
        return self.is_float() and not self.is_fp8()

    def is_int_signed(self) -> bool:
        """Triton's name for :meth:`is_signed`."""
        return self.is_signed()

    def is_int_unsigned(self) -> bool:
        """True for unsigned integers (not ``int1``)."""
        return self.kind == "uint"

    def is_block(self) -> bool:
        """Scalars are not blocks."""
        return False

    def is_void(self) -> bool:
        """No scalar type is ``void``."""
        return False

    def get_int_max_value(self) -> int:
        """The largest value of an integer type."""
        bits = self.int_bitwidth
        return 2**bits - 1 if self.kind != "int" else 2 ** (bits - 1) - 1

    def get_int_min_value(self) -> int:
        """The smallest value of an integer type."""
        return -(2 ** (self.int_bitwidth - 1)) if self.kind == "int" else 0


@dataclass(frozen=True)
class PointerType:
    """A pointer to global memory holding ``pointee`` values.

    ``const`` marks a pointer to read-only data (a parameter annotated ``tl.const``,
    Triton's ``pointer_type(..., const=True)``): loads go through it, stores and atomics
    do not. It is part of the type, so a const and a plain pointer are different types.
    """

    pointee: ScalarType
    const: bool = field(default=False, kw_only=True)

    def is_ptr(self) -> bool:
        """Pointers are pointers."""
        return True

    def is_int(self) -> bool:
        """Pointers are not integers."""
        return False

    def is_float(self) -> bool:
        """Pointers are not floats."""
        return False

    @property
    def scalar(self) -> PointerType:
        """The element type (itself)."""
        return self

    @property
    def element_ty(self) -> ScalarType:
        """The pointee (Triton's ``pointer_type.element_ty``, which Python code run at
        compile time reads from a pointer's ``dtype``)."""
        return self.pointee

    def is_const(self) -> bool:
        """True for a pointer to read-only data (Triton's ``pointer_type.is_const()``)."""
        return self.const

    def __str__(self) -> str:
        return f"ptr<{self.pointee}, const>" if self.const else f"ptr<{self.pointee}>"

    def __repr__(self) -> str:
        return f"const_pointer<{self.pointee!r}>" if self.const else f"pointer<{self.pointee!r}>"


ElementType = ScalarType | PointerType


@dataclass(frozen=True)
class BlockType:
    """A block (tensor) of ``shape`` holding ``element`` values."""

    shape: tuple[int, ...]
    element: ElementType

    @property
    def scalar(self) -> ElementType:
        """The element type."""
        return self.element

    @property
    def numel(self) -> int:
        """Number of elements."""
        return reduce(lambda a, b: a * b, self.shape, 1)

    def is_ptr(self) -> bool:
        """True for blocks of pointers."""
        return self.element.is_ptr()

    def __str__(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.element}>"


Type = ScalarType | PointerType | BlockType

SCALAR_NAMES: tuple[str, ...] = ("i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
SCALAR_NAMES += ("f16", "bf16", "f32", "f64")
SCALAR_NAMES += ("f8e5", "f8e4nv")  # fp8 e5m2 and e4m3fn, stored as their raw bits
# Triton's other fp8 formats (the emulator only): e4m3 with bias 15, and AMD's
# e4m3fnuz and e5m2fnuz.
SCALAR_NAMES += ("f8e4b15", "f8e4b8", "f8e5b16")

#: IR name -> (the NumPy dtype that stores it, Triton's name).
_NAMES = {
    "i1": ("bool", "int1"),
    "i8": ("int8", "int8"),
    "i16": ("int16", "int16"),
    "i32": ("int32", "int32"),
    "i64": ("int64", "int64"),
    "u8": ("uint8", "uint8"),
    "u16": ("uint16", "uint16"),
    "u32": ("uint32", "uint32"),
    "u64": ("uint64", "uint64"),
    "f16": ("float16", "fp16"),
    "bf16": ("uint16", "bf16"),
    "f32": ("float32", "fp32"),
    "f64": ("float64", "fp64"),
    "f8e5": ("uint8", "fp8e5"),
    "f8e4nv": ("uint8", "fp8e4nv"),
    "f8e4b15": ("uint8", "fp8e4b15"),
    "f8e4b8": ("uint8", "fp8e4b8"),
    "f8e5b16": ("uint8", "fp8e5b16"),
}
_NUMPY_NAMES = {name: numpy for name, (numpy, _) in _NAMES.items()}
_TRITON_NAMES = {name: triton for name, (_, triton) in _NAMES.items()}
_FROM_TRITON_NAMES = {triton: name for name, triton in _TRITON_NAMES.items() if triton != name}

#: Floating-point formats: (explicit mantissa bits, exponent bias).
_FLOAT_FORMATS = {
    "f8e5": (2, 15),
    "f8e4nv": (3, 7),
    "f8e4b15": (3, 15),
    "f8e4b8": (3, 8),
    "f8e5b16": (2, 16),
    "f16": (10, 15),
    "bf16": (7, 127),
    "f32": (23, 127),
    "f64": (52, 1023),
}
#: ``is_<triton name>`` -> the IR name it asks for (``is_fp16`` -> ``f16``).
_PREDICATE_TYPES = {f"is_{triton}": name for name, (_, triton) in _NAMES.items()}


def _is_type(name: str) -> Callable[[ScalarType], bool]:
    def predicate(self: ScalarType) -> bool:
        return self.name == name

    predicate.__name__ = f"is_{_TRITON_NAMES[name]}"
    predicate.__doc__ = f"True for ``{_TRITON_NAMES[name]}``."
    return predicate


# Triton's one-type predicates, ``tl.float16.is_fp16()`` ... (for users' code; ours
# compares types).
for _attr, _name in _PREDICATE_TYPES.items():
    setattr(ScalarType, _attr, _is_type(_name))

I1, I8, I16, I32, I64 = (ScalarType(n) for n in ("i1", "i8", "i16", "i32", "i64"))
U8, U16, U32, U64 = (ScalarType(n) for n in ("u8", "u16", "u32", "u64"))
F16, BF16, F32, F64 = (ScalarType(n) for n in ("f16", "bf16", "f32", "f64"))
F8E5, F8E4NV = ScalarType("f8e5"), ScalarType("f8e4nv")
F8E4B15, F8E4B8, F8E5B16 = (ScalarType(n) for n in ("f8e4b15", "f8e4b8", "f8e5b16"))


def scalar(name: str) -> ScalarType:
    """Look up a scalar type by IR name (``f32``) or Triton name (``fp32``)."""
    if name in SCALAR_NAMES:
        return ScalarType(name)
    for ir_name, tname in _TRITON_NAMES.items():
        if tname == name:
            return ScalarType(ir_name)
    raise ValueError(f"unknown scalar type {name!r}")


def from_numpy(dtype: np.dtype) -> ScalarType:
    """The scalar type that matches a NumPy dtype (``uint16`` maps to u16)."""
    import numpy as np

    for ir_name, np_name in _NUMPY_NAMES.items():
        if ir_name not in ("bf16", "f8e5", "f8e4nv") and np.dtype(np_name) == dtype:
            return ScalarType(ir_name)
    raise ValueError(f"no MiniTriton type for NumPy dtype {dtype}")


def wrap_int(value: int, t: ScalarType) -> int:
    """``value`` wrapped around to the range of integer type ``t`` (two's complement).

    ``i1`` counts as unsigned: it keeps the low bit, 0 or 1.
    """
    bits = t.bitwidth
    value = int(value) & ((1 << bits) - 1)
    if t.is_signed() and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def element_type(t: Type) -> ElementType:
    """The element type of a block, or the type itself for scalars."""
    return t.element if isinstance(t, BlockType) else t


def shape_of(t: Type) -> tuple[int, ...]:
    """The shape of a block, or ``()`` for scalars."""
    return t.shape if isinstance(t, BlockType) else ()


def with_element(t: Type, element: ElementType) -> Type:
    """The same shape as ``t`` with another element type."""
    return BlockType(t.shape, element) if isinstance(t, BlockType) else element


def with_shape(element: ElementType, shape: tuple[int, ...]) -> Type:
    """A block of ``shape``, or the scalar itself when ``shape`` is ``()``."""
    return BlockType(tuple(shape), element) if shape else element


#: Compiled (and cached) by `re` on first use: the IR parser's, not the launcher's.
_TYPE_RE = r"tensor<((?:\d+x)+)(.+)>|ptr<(\w+)(, const)?>|(\w+)"


def parse_type(text: str) -> Type:
    """Parse the text form of a type; raises ``ValueError`` on bad input."""
    m = re.fullmatch(_TYPE_RE, text.strip())
    if not m:
        raise ValueError(f"bad type {text!r}")
    if m.group(1):
        dims = tuple(int(d) for d in m.group(1).split("x")[:-1])
        elem = parse_type(m.group(2))
        if isinstance(elem, BlockType):
            raise ValueError(f"nested block type {text!r}")
        return BlockType(dims, elem)
    if m.group(3):
        return PointerType(scalar(m.group(3)), const=m.group(4) is not None)
    return scalar(m.group(5))
