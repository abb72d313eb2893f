"""The ``tl`` surface: dtypes, ``constexpr`` and every builtin's signature.

Each builtin here is a *stub*: it carries Triton's exact signature and the
docstring that the docs render, but it cannot run in plain Python. Inside a
``@jit`` kernel the frontend resolves a call such as ``tl.load(p, mask=m)``
to the stub, binds the arguments with the stub's signature (so a misspelled
keyword is a located diagnostic) and lowers it with the implementation
registered under the same name in :mod:`minitriton.frontend.builtins`.
"""

from __future__ import annotations

import builtins as _builtins
import enum as _enum
from collections.abc import Callable
from typing import Any, TypeVar

from minitriton.ir import types as _t

F = TypeVar("F", bound=Callable[..., Any])

# ---------------------------------------------------------------- dtypes

dtype = _t.ScalarType
pointer_type = _t.PointerType
#: Triton's name for a pointer to int32.
pi32_t = _t.PointerType(_t.I32)
block_type = _t.BlockType

int1 = _t.I1
int8, int16, int32, int64 = _t.I8, _t.I16, _t.I32, _t.I64
uint8, uint16, uint32, uint64 = _t.U8, _t.U16, _t.U32, _t.U64
float16, bfloat16, float32, float64 = _t.F16, _t.BF16, _t.F32, _t.F64
bool_ = int1
float8e5, float8e4nv = _t.F8E5, _t.F8E4NV  # fp8 e5m2 and e4m3fn
# Triton's other fp8 formats, on the emulator only: e4m3 with bias 15, e4m3fnuz, e5m2fnuz.
float8e4b15, float8e4b8, float8e5b16 = _t.F8E4B15, _t.F8E4B8, _t.F8E5B16


def get_int_dtype(bitwidth: int, signed: bool) -> _t.ScalarType:
    """The integer dtype of ``bitwidth`` bits (a plain function, called at compile time)."""
    if bitwidth == 1:
        return int1
    if bitwidth not in (8, 16, 32, 64):
        raise ValueError(f"no integer dtype of {bitwidth} bits")
    return _t.ScalarType(("i" if signed else "u") + str(bitwidth))


def _unwrap_if_constexpr(o: Any) -> Any:
    """``o.value`` if ``o`` is a ``tl.constexpr``, else ``o`` (Triton's helper, for libraries)."""
    return o.value if isinstance(o, constexpr) else o


class constexpr:  # noqa: N801 - Triton's spelling
    """A compile-time constant: an annotation for kernel parameters and a wrapper.

    ``BLOCK: tl.constexpr`` makes ``BLOCK`` part of the specialization key;
    ``X = tl.constexpr(3)`` at module level is a global the kernel may read.
    """

    def __init__(self, value: Any) -> None:
        self.value: Any = value.value if isinstance(value, constexpr) else value

    def __repr__(self) -> str:
        return f"constexpr[{self.value!r}]"

    def __index__(self) -> int:
        return int(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __eq__(self, other: object) -> bool:
        other_value = other.value if isinstance(other, constexpr) else other
        return self.value == other_value

    def __hash__(self) -> int:
        return hash(self.value)


def _constexpr_operator(op: Callable[..., Any], reflected: bool = False) -> Callable[..., Any]:
    """``constexpr <op> other``: a constexpr of the values' result (Triton's arithmetic)."""

    def method(self: constexpr, *other: Any) -> constexpr:
        values = [o.value if isinstance(o, constexpr) else o for o in other]
        return constexpr(op(*values, self.value) if reflected else op(self.value, *values))

    return method


def _add_constexpr_operators() -> None:
    """Python code that runs while a kernel compiles (an aggregate's ``__init__``, a
    ``constexpr_function``) computes with ``tl.constexpr`` values as with numbers."""
    import operator as o

    binary: dict[str, Callable[..., Any]] = {
        "add": o.add, "sub": o.sub, "mul": o.mul, "truediv": o.truediv, "floordiv": o.floordiv,
        "mod": o.mod, "pow": o.pow, "and": o.and_, "or": o.or_, "xor": o.xor,
        "lshift": o.lshift, "rshift": o.rshift,
    }  # fmt: skip
    for name, fn in binary.items():
        setattr(constexpr, f"__{name}__", _constexpr_operator(fn))
        setattr(constexpr, f"__r{name}__", _constexpr_operator(fn, reflected=True))
    plain: dict[str, Callable[..., Any]] = {
        "lt": o.lt,
        "le": o.le,
        "gt": o.gt,
        "ge": o.ge,
        "neg": o.neg,
        "pos": o.pos,
        "invert": o.invert,
    }
    for name, fn in plain.items():
        setattr(constexpr, f"__{name}__", _constexpr_operator(fn))


_add_constexpr_operators()

#: Triton's zero constexpr, the default of ``descending=`` in its standard library.
CONSTEXPR_0 = constexpr(0)


class constexpr_type:  # noqa: N801 - Triton's spelling
    """The type of a compile-time value (Triton's ``tl.constexpr_type``): ``x.type`` of a
    constexpr ``x`` is ``constexpr_type(x)``; two are equal when their values are."""

    def __init__(self, value: Any) -> None:
        self.value: Any = value.value if isinstance(value, constexpr) else value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, constexpr_type) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"constexpr_type[{self.value!r}]"


class tuple_type:  # noqa: N801 - Triton's spelling
    """The type of a tuple of kernel values (Triton's ``tl.tuple_type``): the types of its
    items, and the field names of a named tuple."""

    def __init__(self, types: Any, fields: Any = None) -> None:
        self.types: list[Any] = list(types)
        self.fields: list[str] = list(fields) if fields is not None else [""] * len(self.types)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, tuple_type):
            return False
        return (self.types, self.fields) == (other.types, other.fields)

    def __hash__(self) -> int:
        return hash((_builtins.tuple(map(repr, self.types)), _builtins.tuple(self.fields)))

    def __iter__(self) -> Any:
        return iter(self.types)

    def __getitem__(self, index: int) -> Any:
        return self.types[index]

    def __len__(self) -> int:
        return len(self.types)

    def __repr__(self) -> str:
        return f"({', '.join(map(repr, self.types))})"


class const:  # noqa: N801 - Triton's spelling
    """An annotation for pointers to read-only data (``x_ptr: tl.const``), as in Triton: the
    argument's type is ``tl.pointer_type(elem, const=True)``; loads go through it, while
    ``tl.store`` and atomics through it are compile errors ("Cannot store to a constant
    pointer"), and a const pointer does not merge with a plain one."""


class _RuntimeValueType(type):
    """The class of ``tl.tensor`` and ``tl.tensor_descriptor``: ``isinstance`` holds for
    the compiler's run-time values, so that Python code a kernel calls while it compiles
    (a ``constexpr_function`` that reads its argument's ``dtype``) sees them as Triton's
    code does."""

    def __instancecheck__(cls, value: Any) -> bool:
        # Imported here: the frontend imports this module.
        from minitriton.frontend.semantic import Tensor
        from minitriton.frontend.tensordesc import TensorDescriptor

        kind = TensorDescriptor if cls.__name__.startswith("tensor_descriptor") else Tensor
        return isinstance(value, kind) or type.__instancecheck__(cls, value)


class tensor(metaclass=_RuntimeValueType):  # noqa: N801 - Triton's spelling
    """Type of run-time values inside a kernel: annotations, and ``isinstance`` in a kernel
    or in Python code it calls while it compiles."""


class tensor_descriptor_base(metaclass=_RuntimeValueType):  # noqa: N801 - Triton's spelling
    """Type of tensor descriptors inside a kernel (``isinstance`` and annotations)."""


class tensor_descriptor(tensor_descriptor_base):  # noqa: N801 - Triton's spelling
    """Type of tensor descriptors inside a kernel: ``isinstance(desc, tl.tensor_descriptor)``
    holds for one made by ``tl.make_tensor_descriptor`` or passed from the host."""


#: The most elements a block may hold (2^20), as Triton's constant of that name.
TRITON_MAX_TENSOR_NUMEL = 1048576

# ---------------------------------------------------------------- Triton's other type names


class _VoidType:
    """The type of no value (Triton's ``tl.void``): what a function that returns nothing
    returns, written as ``-> tl.void``. It is not an element type: a dtype argument of
    ``tl.void`` (``tl.zeros(shape, tl.void)``) is refused as any non-dtype is."""

    name = "void"
    triton_name = "void"
    primitive_bitwidth = 0

    def is_void(self) -> bool:
        """True: this is the void type (every dtype of ``tl`` answers False)."""
        return True

    def __getattr__(self, attr: str) -> Any:
        # Triton's other predicates (is_int, is_floating, is_ptr, is_block ...): never void.
        if attr.startswith("is_"):
            return lambda: False
        raise AttributeError(f"tl.void has no attribute '{attr}': it is the type of no value")

    def __repr__(self) -> str:
        return "void"

    def describe(self) -> str:
        """How ``tl.void`` reads in a diagnostic."""
        return "tl.void (the type of no value, not an element type)"

    def __reduce__(self) -> str:
        return "void"  # pickled and copied as the one object, tl.void


#: Triton's ``void`` dtype: the return type of a function that returns nothing.
void = _VoidType()


class slice_type:  # noqa: N801 - Triton's spelling
    """The type of a :class:`slice` value (Triton's ``tl.core.slice_type``)."""

    name = "slice_type"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, slice_type)

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return self.name


class _SliceClass(type):
    """The class of ``tl.slice``: a slice written in a kernel (``x[:, None]``, the key
    ``a[1:3]`` that an aggregate's ``__getitem__`` receives) is a Python slice here, and
    ``isinstance(key, tl.slice)`` holds for it, as for Triton's own slice objects."""

    def __instancecheck__(cls, value: Any) -> bool:
        return isinstance(value, _builtins.slice) or type.__instancecheck__(cls, value)


class slice(metaclass=_SliceClass):  # noqa: A001, N801 - Triton's name
    """A slice value (Triton's ``tl.slice``): ``start``, ``stop`` and ``step``, each a
    compile-time value or ``None``. Triton makes one of each ``a:b:c`` in a kernel; code
    that receives an index checks ``isinstance(idx, tl.slice)``."""

    def __init__(self, start: Any, stop: Any, step: Any) -> None:
        self.start = start
        self.stop = stop
        self.step = step
        self.type = slice_type()

    def __repr__(self) -> str:
        return f"slice({self.start!r}, {self.stop!r}, {self.step!r})"

    def describe(self) -> str:
        """How the slice reads in a diagnostic."""
        return f"tl.{self!r}"


class tensor_descriptor_base_type:  # noqa: N801 - Triton's spelling
    """The type of a tensor descriptor whose shape and strides are unknown: its
    ``block_type`` (Triton's ``tl.core.tensor_descriptor_base_type``)."""

    def __init__(self, block_type: Any) -> None:
        self.block_type = block_type

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.block_type == other.block_type

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.block_type))

    def __str__(self) -> str:
        return f"tensor_descriptor<{self.block_type}>"

    def __repr__(self) -> str:
        return str(self)

    def describe(self) -> str:
        """How the type reads in a diagnostic."""
        return f"the type {self}"


class tensor_descriptor_type(tensor_descriptor_base_type):  # noqa: N801 - Triton's spelling
    """The type of a tensor descriptor (Triton's ``tl.tensor_descriptor_type``): the
    ``block_type`` of its tiles and the ``tuple_type`` of its sizes (``int32``) and of its
    strides (``int64``). ``desc.type`` in a kernel and ``tl.str_to_ty("tensordesc<...>")``
    are one; two are equal when all three are."""

    def __init__(self, block_type: Any, shape_type: Any, strides_type: Any) -> None:
        super().__init__(block_type)
        self.shape_type = shape_type
        self.strides_type = strides_type

    def __eq__(self, other: object) -> bool:
        if not super().__eq__(other):
            return False
        assert isinstance(other, tensor_descriptor_type)
        return (self.shape_type, self.strides_type) == (other.shape_type, other.strides_type)

    def __hash__(self) -> int:
        return hash((self.block_type, self.shape_type, self.strides_type))


#: ``str_to_ty``'s names of element types (Triton's signature names).
_SIGNATURE_TYPES: dict[str, _t.ScalarType] = {
    "fp8e4nv": float8e4nv, "fp8e4b8": float8e4b8, "fp8e5": float8e5, "fp8e5b16": float8e5b16,
    "fp8e4b15": float8e4b15, "fp16": float16, "bf16": bfloat16, "fp32": float32,
    "fp64": float64, "i1": int1, "i8": int8, "i16": int16, "i32": int32, "i64": int64,
    "u1": int1, "u8": uint8, "u16": uint16, "u32": uint32, "u64": uint64, "B": int1,
}  # fmt: skip


def str_to_ty(name: Any, c: Any = None) -> Any:
    """The type that a signature string names (Triton's ``tl.str_to_ty``).

    ``"fp32"``, ``"i1"``, ``"u8"``, ``"bf16"`` ... are dtypes; ``"*fp16"`` is a pointer to
    fp16 (``"*kfp16"`` a const pointer to fp16, Triton's pointer to read-only data);
    ``"tensordesc<fp16[64, 64]>"`` is a :class:`tensor_descriptor_type`; ``"constexpr"``
    is ``tl.constexpr_type(c)``; a tuple of names is a ``tl.tuple_type``. Any other name
    is a ``KeyError``, as in Triton. A plain function: host code calls it, and so may a
    kernel, on compile-time strings.
    """
    name = _unwrap_if_constexpr(name)
    if isinstance(name, _builtins.tuple):
        fields = getattr(type(name), "_fields", None)
        return tuple_type([str_to_ty(x, c) for x in name], fields)
    if not isinstance(name, str) or not name:
        raise TypeError(f"str_to_ty expects a type name such as 'fp32' or '*fp16', got {name!r}")
    if name[0] == "*":
        pointee = name[2:] if name.startswith("*k") else name[1:]
        return pointer_type(str_to_ty(pointee, c), const=name.startswith("*k"))
    if name.startswith("tensordesc"):
        return _descriptor_type(name)
    if name.startswith("constexpr"):
        return constexpr_type(c)
    if name not in _SIGNATURE_TYPES:
        known = ", ".join(_SIGNATURE_TYPES)
        raise KeyError(f"unknown type name {name!r}: expected one of {known}, "
                               "'*' and a type, 'tensordesc<...>' or 'constexpr'")  # fmt: skip
    return _SIGNATURE_TYPES[name]


def _descriptor_type(name: str) -> tensor_descriptor_type:
    """``tensordesc<fp16[64, 64]>`` (or ``tensordesc_im2col<...,input_rank=4>``)."""
    inner = name.partition("<")[2].rstrip(">")
    element, _, rest = inner.partition("[")
    dims, _, rest = rest.partition("]")
    try:
        block_shape = _builtins.tuple(int(d) for d in dims.split(","))
    except ValueError:
        example = "'tensordesc<fp16[64, 64]>'"
        raise ValueError(f"expected a descriptor such as {example}, got {name!r}") from None
    rank = len(block_shape)
    if rest.startswith(",input_rank="):
        rank_text, _, rest = rest.removeprefix(",input_rank=").partition(",")
        rank = int(rank_text) if name.startswith("tensordesc_im2col") else rank
    if rest.strip(", "):
        raise ValueError(f"{name!r} names a Gluon shared-memory layout; MiniTriton has no Gluon")
    return tensor_descriptor_type(
        _t.BlockType(block_shape, str_to_ty(element.strip())),
        tuple_type([int32] * rank),
        tuple_type([int64] * rank),
    )


# ---------------------------------------------------------------- builtins

BUILTINS: dict[str, Callable[..., Any]] = {}


def builtin(fn: F) -> F:
    """Mark ``fn`` as a ``tl`` builtin: callable only inside ``@jit`` kernels.

    Inside a kernel the frontend lowers calls of the stub itself. A library's
    own builtin (a function marked ``@core.extern`` or ``__triton_builtin__``)
    may call it as Triton's builtins call each other, with the
    ``_semantic=`` (or, before Triton 3.3, ``_builder=``) it was given: the
    call is then lowered in that kernel.

    A library's function decorated with it (``@tl.core.builtin`` outside
    MiniTriton) is such a builtin of its own: it runs while the kernel
    compiles, as :func:`extern` functions do.
    """
    if not str(getattr(fn, "__module__", "")).startswith("minitriton."):
        return extern(fn)

    def stub(*args: Any, _semantic: Any = None, _builder: Any = None, **kwargs: Any) -> Any:
        handle = _semantic if _semantic is not None else _builder
        if hasattr(handle, "call_builtin"):
            return handle.call_builtin(fn.__name__, args, kwargs)
        raise RuntimeError(f"tl.{fn.__name__} can only be called inside a @minitriton.jit kernel")

    stub.__name__ = fn.__name__
    stub.__qualname__ = fn.__qualname__
    stub.__doc__ = fn.__doc__
    stub.__wrapped__ = fn  # type: ignore[attr-defined]  # inspect.signature follows it
    stub.__module__ = "minitriton.language"
    stub.__minitriton_builtin__ = fn.__name__  # type: ignore[attr-defined]
    BUILTINS[fn.__name__] = stub
    return stub  # type: ignore[return-value]


def extern(fn: F) -> F:
    """Triton's decorator for a library's functions built on :func:`extern_elementwise`.

    Such a function runs while the kernel compiles, with the ``_semantic``
    (or ``_builder``) the frontend passes it; its run-time arguments arrive as
    they are.
    """
    fn.__triton_builtin__ = True  # type: ignore[attr-defined]
    return fn


def extern_elementwise(
    lib_name: str,
    lib_path: str,
    args: list[Any],
    arg_type_symbol_dict: dict[Any, Any],
    is_pure: bool,
    _semantic: Any = None,
    _builder: Any = None,
) -> Any:
    """Call the library function that ``arg_type_symbol_dict`` names for the arguments' dtypes.

    The table maps a tuple of argument dtypes to ``(symbol, result dtype)``.
    MiniTriton runs NVIDIA's libdevice functions this way (``"__nv_tanhf"``
    is ``libdevice.tanh``, on both backends); a symbol of another library is
    a located error.
    """
    handle = _semantic if _semantic is not None else _builder
    if not hasattr(handle, "extern_elementwise"):
        raise RuntimeError("extern_elementwise can only be called inside a @minitriton.jit kernel")
    return handle.extern_elementwise(lib_name, lib_path, args, arg_type_symbol_dict, is_pure)


def aggregate_field_values(cls: type, args: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The fields an aggregate without ``__init__`` gets, as Triton's generated one sets them:
    positional arguments in field order, then keywords, then the class's defaults."""
    fields: _builtins.tuple[str, ...] = cls.__minitriton_fields__  # type: ignore[attr-defined]
    if len(args) > len(fields):
        given = f"{len(args)} were given"
        raise TypeError(f"{cls.__name__}() takes {len(fields)} arguments but {given}")
    values = dict(zip(fields, args))
    for name, value in kwargs.items():
        if name not in fields:
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument '{name}'")
        if name in values:
            raise TypeError(f"{cls.__name__}() got multiple values for argument '{name}'")
        values[name] = value
    defaults: dict[str, Any] = getattr(cls, "__minitriton_defaults__", {})
    for name in fields:
        if name not in values and name in defaults:
            values[name] = _unwrap_if_constexpr(defaults[name])
    missing = [name for name in fields if name not in values]
    if missing:
        raise TypeError(f"{cls.__name__}() missing required argument: '{missing[0]}'")
    return values


def _host_field(value: Any) -> Any:
    """A field set outside a kernel: compile-time values wrapped in ``constexpr`` (Triton's)."""
    if isinstance(value, _builtins.tuple):
        items = [_host_field(v) for v in value]
        if hasattr(type(value), "_fields"):
            return tuple(type(value)(*items))  # a tl.tuple that keeps the field names
        return tuple(items)
    if isinstance(value, constexpr) or hasattr(type(value), "__minitriton_fields__"):
        return value
    if type(value).__module__.startswith("minitriton.frontend"):
        return value  # a run-time value, passed by a Python function that a kernel called
    return constexpr(value)


def aggregate_auto_init(self: Any, *args: Any, **kwargs: Any) -> None:
    """The ``__init__`` of an aggregate class that defines none (Triton's generated one).

    Outside a kernel, the fields are set from the arguments (compile-time values in
    ``tl.constexpr``) and the instance is then immutable; inside one, the frontend binds
    the arguments itself with :func:`aggregate_field_values`.
    """
    for name, value in aggregate_field_values(type(self), args, kwargs).items():
        object.__setattr__(self, name, _host_field(value))
    object.__setattr__(self, "_aggregate_init_complete", True)


aggregate_auto_init.__minitriton_auto_init__ = True  # type: ignore[attr-defined]


def aggregate_setattr(self: Any, name: str, value: Any) -> None:
    """An aggregate's fields are set by its constructor only (Triton's immutable aggregates)."""
    if self.__dict__.get("_aggregate_init_complete", False):
        raise AttributeError(
            f"cannot assign to field '{name}' on immutable aggregate {type(self).__name__}; "
            "use aggregate_replace() to construct a modified copy"
        )
    object.__setattr__(self, name, value)


def aggregate_replace(instance: Any, _semantic: Any = None, **changes: Any) -> Any:
    """A copy of the aggregate ``instance`` with the fields ``changes`` names replaced.

    Like Triton's (and ``dataclasses.replace``), it calls the class with every
    field as a keyword argument, so a class's own ``__init__`` sees them all.
    """
    fields = getattr(type(instance), "__minitriton_fields__", None)
    if fields is None:
        raise TypeError(f"aggregate_replace() expects an aggregate instance, got {type(instance)}")
    for name in changes:
        if name not in fields:
            raise TypeError(f"{type(instance).__name__} has no field '{name}'")
    values = {name: _unwrap_if_constexpr(getattr(instance, name)) for name in fields}
    values.update({name: _unwrap_if_constexpr(v) for name, v in changes.items()})
    if not hasattr(_semantic, "make_aggregate"):  # outside a kernel: call the class
        return type(instance)(**values)
    return _semantic.make_aggregate(type(instance), values)


aggregate_replace.__triton_builtin__ = True  # type: ignore[attr-defined]


def builtin_name(obj: object) -> str | None:
    """The builtin's name if ``obj`` is a ``tl`` builtin stub, else ``None``."""
    return getattr(obj, "__minitriton_builtin__", None)


def is_builtin(fn: Any) -> bool:
    """True for a ``tl`` builtin and a library's function marked as one (Triton's
    ``tl.core.is_builtin``, which tools that wrap Triton's language ask)."""
    return builtin_name(fn) is not None or bool(getattr(fn, "__triton_builtin__", False))


# -- indexing and creation ------------------------------------------------


@builtin
def program_id(axis):
    """The id of the current program along ``axis`` (0, 1 or 2), an ``int32`` scalar."""


@builtin
def num_programs(axis):
    """The number of programs launched along ``axis``, an ``int32`` scalar."""


@builtin
def arange(start, end):
    """The block ``[start, start+1, ..., end-1]`` of ``int32``.

    ``start`` and ``end`` are constexprs and ``end - start`` is a power of two.
    """


@builtin
def to_tensor(x):
    """``x`` as a run-time value: a Python number becomes a scalar of its default type."""


@builtin
def zeros(shape, dtype):
    """A block of ``shape`` filled with zeros of ``dtype``."""


@builtin
def zeros_like(input):
    """A block of zeros with the shape and dtype of ``input``."""


@builtin
def full(shape, value, dtype):
    """A block of ``shape`` filled with ``value`` cast to ``dtype``."""


@builtin
def full_like(input, value, dtype=None):
    """A block shaped like ``input`` filled with ``value``."""


@builtin
def cast(input, dtype, fp_downcast_rounding=None, bitcast=False):
    """Convert ``input`` to ``dtype`` (also ``x.to(dtype)``); ``bitcast`` keeps the bits.

    A narrowing float conversion rounds to nearest, ties to even (``"rtne"``,
    the default); ``fp_downcast_rounding="rtz"`` rounds toward zero instead,
    to ``float32``, ``float16``, ``bfloat16``, ``float8e5`` or ``float8e4nv``:
    a finite value beyond the largest finite one gives that one, an infinity
    stays infinite (``float8e4nv``, which has none, gives ±448), NaN stays NaN.
    ``fp_downcast_rounding`` on any other conversion is an error, as in
    Triton; with ``bitcast=True`` it is ignored.
    """


@builtin
def trans(input, *dims):
    """Swap the last two dimensions (a possibly batched 2-D transpose), or permute by ``dims``."""


@builtin
def permute(input, *dims):
    """Permute the dimensions of ``input`` by ``dims``."""


@builtin
def reshape(input, *shape, can_reorder=False):
    """Reshape ``input`` to ``shape`` (row-major order is kept)."""


@builtin
def view(input, *shape):
    """Reshape ``input`` to ``shape`` (Triton's older name for :func:`reshape`)."""


@builtin
def expand_dims(input, axis):
    """Insert a dimension of size 1 at ``axis`` (an int or a tuple of ints)."""


@builtin
def broadcast_to(input, *shape):
    """Broadcast ``input`` to ``shape`` following NumPy's rules."""


@builtin
def broadcast(input, other):
    """Broadcast two blocks to their common shape; returns both."""


@builtin
def join(a, b):
    """Join two blocks of one shape along a new last dimension of size 2."""


@builtin
def split(a):
    """Split a block whose last dimension has size 2 into its two halves (``join``'s inverse)."""


@builtin
def interleave(a, b):
    """Interleave two blocks along their last dimension: ``a0, b0, a1, b1, ...``."""


@builtin
def tuple(iterable=()):  # noqa: A001 - Triton's name
    """A tuple of the items of ``iterable`` (a tuple, or a list such as
    ``[v + 1 for v in values]``); its items may be blocks."""


class tuple(_builtins.tuple):  # type: ignore[no-redef]  # noqa: A001, N801, F811 - Triton's name
    """``tl.tuple``: in a kernel, the builtin above (a tuple of the items of ``iterable``,
    blocks included); in Python, the class of the tuples an aggregate made outside a
    kernel holds, so that ``isinstance(agg.shape, tl.tuple)`` holds as in Triton. A tuple
    made from a ``NamedTuple`` keeps its field names: ``t.x`` reads the field ``x``."""

    __minitriton_builtin__ = "tuple"

    def __new__(cls, iterable: Any = (), type: Any = None) -> Any:  # noqa: A002 - Triton's
        made = super().__new__(cls, iterable)
        made.__dict__["_fields"] = _builtins.tuple(getattr(iterable, "_fields", ()))
        return made

    def __getattr__(self, name: str) -> Any:
        fields = self.__dict__.get("_fields", ())
        if name in fields:
            return self[fields.index(name)]
        raise AttributeError(f"tl.tuple has no field {name!r}")


@builtin
def cat(input, other, can_reorder=False, dim=0):
    """Concatenate two blocks of the same shape along ``dim`` (``input`` first).

    Triton 3.6 requires ``can_reorder=True`` and may then put the elements in
    any order (use the result only where order does not matter, such as a
    reduction); MiniTriton always keeps them in order, with or without it,
    as Triton's later ``dim=`` form does.
    """


@builtin
def ravel(x, can_reorder=False):
    """``x`` flattened to one dimension, in row-major order."""


@builtin
def item(input):
    """The one element of a single-element block, as a scalar (Triton 3.7's ``x.item()``)."""


@builtin
def squeeze(x, dim):
    """``x`` without its dimension ``dim``, which must have size 1 (Triton 3.7)."""


@builtin
def unsqueeze(x, dim):
    """``x`` with a new dimension of size 1 at ``dim`` (``expand_dims``; Triton 3.7)."""


@builtin
def flip(x, dim=None):
    """``x`` reversed along ``dim`` (the last dimension by default), a power-of-two size."""


@builtin
def gather(src, index, axis):
    """``out[..., i, ...] = src[..., index[..., i, ...], ...]``, indexing along ``axis``.

    ``index`` has ``src``'s rank and integer elements; its size along
    ``axis`` is the result's, and along every other dimension it matches
    ``src`` (or is 1 on one side, and broadcasts). An index outside
    ``[0, src.shape[axis])`` gives 0 (Triton leaves it undefined).
    """


@builtin
def swizzle2d(i, j, size_i, size_j, size_g):
    """Map the row-major index ``(i, j)`` of a ``size_i x size_j`` grid to a grouped order.

    Within each group of ``size_g`` rows the indices run column-major (the
    last group may have fewer rows), as tutorial 03 orders its programs for
    L2 reuse. Returns ``(new_i, new_j)``; works on scalars and blocks.
    """


# -- memory -----------------------------------------------------------------


@builtin
def load(
    pointer,
    mask=None,
    other=None,
    boundary_check=(),
    padding_option="",
    cache_modifier="",
    eviction_policy="",
    volatile=False,
):
    """Load a block from the pointers ``pointer``.

    Lanes where ``mask`` is false are not read; they take ``other``
    (broadcast to the pointer's shape and cast to the pointee type), or 0
    when ``other`` is omitted. ``other`` without ``mask`` is an error.

    If ``pointer`` is a block pointer (:func:`make_block_ptr`), ``mask`` and
    ``other`` are not allowed: the dimensions listed in ``boundary_check``
    are checked against the parent tensor's shape, and out-of-bounds lanes
    take ``padding_option`` (``"zero"``, ``"nan"``, or ``""``: undefined).

    The hints change no value: ``cache_modifier`` (``".ca"``, ``".cg"``,
    ``".cs"``, ``".cv"``), ``eviction_policy`` (``"evict_first"``,
    ``"evict_last"``) and ``volatile=True`` become the GPU's PTX access
    (``ld.global.cg``, ``ld.global.L1::evict_last``, ``ld.volatile.global``:
    a volatile load is never cached nor moved, as a spin loop needs); any
    other hint is an error, as in Triton. The emulator reads as without them.
    """


@builtin
def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy=""):
    """Store ``value`` (broadcast and cast to the pointee type) where ``mask`` is true.

    If ``pointer`` is a block pointer (:func:`make_block_ptr`), ``mask`` is
    not allowed and only the lanes inside the parent tensor along the
    dimensions in ``boundary_check`` are written.

    ``cache_modifier`` (``".wb"``, ``".cg"``, ``".cs"``, ``".wt"``) and
    ``eviction_policy`` (``"evict_first"``, ``"evict_last"``) are hints, as
    for :func:`load`: the GPU writes them into the PTX store.
    """


@builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order):
    """Returns a pointer to a block in a parent tensor.

    :param base: The base pointer to the parent tensor
    :param shape: The shape of the parent tensor
    :param strides: The strides of the parent tensor
    :param offsets: The offsets to the block
    :param block_shape: The shape of the block
    :param order: The order of the original data format

    MiniTriton lowers loads and stores through it to a block of pointers and
    a bounds mask (no TMA); ``order`` is accepted and ignored.
    """


@builtin
def advance(base, offsets):
    """Advance a block pointer.

    :param base: the block pointer to advance
    :param offsets: the offsets to advance, a tuple by dimension
    """


# As in Triton, a dropped result is an error: tl.advance returns the moved pointer.
advance._must_use_result = (  # type: ignore[attr-defined]
    "Note that tl.advance does not have any side effects. To move the block pointer, you "
    "need to assign the result of tl.advance to a variable."
)


@builtin
def where(condition, x, y):
    """Elementwise ``x if condition else y``, broadcasting all three."""


@builtin
def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero"):
    """A tensor descriptor over ``base`` (Triton 3.x's successor of block pointers).

    ``desc.load(offsets)`` reads the ``block_shape`` tile at ``offsets``
    (out-of-bounds elements read as zero); ``desc.store(offsets, value)``
    writes one (out-of-bounds elements are skipped). The last stride must be 1.
    """


@builtin
def load_tensor_descriptor(desc, offsets):
    """``desc.load(offsets)``: the tile of a tensor descriptor at ``offsets``."""


@builtin
def store_tensor_descriptor(desc, offsets, value):
    """``desc.store(offsets, value)``: write a tile through a tensor descriptor."""


def _descriptor_atomic(kind: str) -> Callable[..., Any]:
    """The builtin ``desc.atomic_<kind>(offsets, value)`` (Triton 3.5's descriptor reductions)."""

    def stub(desc, offsets, value):
        pass

    stub.__name__ = stub.__qualname__ = f"atomic_{kind}_tensor_descriptor"
    stub.__doc__ = (
        f"``desc.atomic_{kind}(offsets, value)``: combine a tile into memory with atomic "
        f"{kind}s (out-of-bounds elements are skipped); returns nothing."
    )
    return builtin(stub)


atomic_add_tensor_descriptor = _descriptor_atomic("add")
atomic_min_tensor_descriptor = _descriptor_atomic("min")
atomic_max_tensor_descriptor = _descriptor_atomic("max")
atomic_and_tensor_descriptor = _descriptor_atomic("and")
atomic_or_tensor_descriptor = _descriptor_atomic("or")
atomic_xor_tensor_descriptor = _descriptor_atomic("xor")


@builtin
def gather_tensor_descriptor(desc, x_offsets, y_offset):
    """``desc.gather(x_offsets, y_offset)``: the rows ``x_offsets`` of a 2-D descriptor whose
    block is one row, from column ``y_offset`` (out-of-bounds elements read as the padding)."""


@builtin
def scatter_tensor_descriptor(desc, value, x_offsets, y_offset):
    """``desc.scatter(value, x_offsets, y_offset)``: row ``i`` of ``value`` written to row
    ``x_offsets[i]`` from column ``y_offset`` (out-of-bounds elements are skipped)."""


# -- matrix -------------------------------------------------------------------


@builtin
def dot(
    input,
    other,
    acc=None,
    input_precision=None,
    allow_tf32=None,
    max_num_imprecise_acc=None,
    out_dtype=None,
):
    """Matrix product of two 2-D blocks, plus ``acc`` if given.

    Blocks of 3 or more dims are batches of products: the leading dims are
    batch dims, the same in both (Triton folds them into one batch).

    The result is ``out_dtype``: by default the accumulator's dtype when
    ``acc`` is given (an fp16 ``acc`` accumulates in fp16, as in Triton 3.8),
    else fp32 (int32 for integer inputs). Every dimension must be at
    least 16. With fp32 inputs, ``input_precision="tf32"`` (the default, or
    ``allow_tf32=True``) rounds them to TF32 before multiplying, on the GPU and
    on the emulator; ``"tf32x3"`` uses three TF32 products for about fp32's
    accuracy; ``"bf16x3"`` and ``"bf16x6"`` split each input into bf16 parts
    and sum 3 or 6 bf16 products of them (about 16 and 24 bits); ``"ieee"``
    is exact.
    """


# -- reductions and scans -----------------------------------------------------


@builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack):
    """PTX ``asm`` applied to each element of the blocks ``args``.

    ``constraints`` lists the results, then the operands, as LLVM's inline
    assembly does (``"=r,r"``); ``$0`` is the first result. ``dtype`` is the
    result's dtype, or a tuple of dtypes for several results. With ``pack =
    n`` (a power of two) each call takes ``n`` consecutive elements, those
    narrower than 32 bits packed into 32-bit registers (four int8 in one
    ``r``, the first in the low bits). The emulator runs the PTX with a small
    evaluator (:mod:`minitriton.emulator.ptx` lists the instructions it
    knows; ``.approx`` ones give the correctly rounded function, the GPU's
    differ in the last ulps); an instruction it does not know is a located
    error that names it. Triton's interpreter cannot run inline PTX.
    """


@builtin
def dot_scaled(
    lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None, fast_math=False,
    lhs_k_pack=True, rhs_k_pack=True, out_dtype=float32,
):  # fmt: skip
    """Matrix product of two blocks in microscaling formats, with fp32 accumulation.

    ``lhs_format`` and ``rhs_format`` are ``"e2m1"`` (fp4, two per ``uint8``,
    the first in the low bits), ``"e4m3"``, ``"e5m2"``, ``"bf16"`` or
    ``"fp16"``. A scale is a ``uint8`` block of ``e8m0`` exponents, one per 32
    elements along K: ``[M, K // 32]`` for ``lhs``, ``[N, K // 32]`` for
    ``rhs``; or None. As Triton does on GPUs without MX tensor cores, the
    operands are decoded to bf16 (fp16 if a format is ``"fp16"``), scaled and
    multiplied with :func:`dot` (see ``minitriton.frontend.scaled_dot``).
    """


@builtin
def sum(input, axis=None, keep_dims=False, dtype=None):
    """Sum along ``axis`` (all axes if ``None``); int8/int16 accumulate in int32."""


@builtin
def max(
    input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False
):
    """Maximum along ``axis``; with ``return_indices`` also its index."""


@builtin
def min(
    input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False
):
    """Minimum along ``axis``; with ``return_indices`` also its index."""


@builtin
def argmax(input, axis, tie_break_left=True, keep_dims=False):
    """Index of the maximum along ``axis``; the first index on ties.

    NaN is skipped, as by :func:`max`: the index of the largest number (NaN
    only where every element is NaN), on both backends whatever order they
    combine in.
    """


@builtin
def argmin(input, axis, tie_break_left=True, keep_dims=False):
    """Index of the minimum along ``axis``; the first index on ties. NaN is skipped,
    as by :func:`min` (see :func:`argmax`)."""


@builtin
def reduce(input, axis, combine_fn, keep_dims=False):
    """Reduce ``input`` (a block or tuple of blocks) along ``axis`` with ``combine_fn``."""


@builtin
def xor_sum(input, axis=None, keep_dims=False):
    """Bitwise xor of the elements along ``axis``."""


@builtin
def reduce_or(input, axis, keep_dims=False):
    """Bitwise or of the (integer) elements along ``axis``."""


@builtin
def histogram(input, num_bins, mask=None):
    """Counts (``int32``) of the values ``0 .. num_bins - 1`` in the 1-D block ``input``.

    Bins are one wide and start at 0; values outside ``[0, num_bins)``, and
    lanes where ``mask`` is false, are not counted.
    """


@builtin
def bitonic_merge(x, dim=None, descending=0):
    """Merge each bitonic sequence along the last dimension into sorted order.

    Triton's network: ``log2(n)`` rounds of compare-and-swap at distances
    ``n/2, n/4, ..., 1``; the smaller value goes left (right with
    ``descending``). On a bitonic input the result is sorted; on any other it
    is what the network gives, as in Triton.
    """


@builtin
def topk(x, k, dim=None, descending=True):
    """The ``k`` largest (or, with ``descending=False``, smallest) elements along the last dim.

    ``k`` is a power of two; the result is sorted, largest first by default.
    """


@builtin
def cumsum(input, axis=0, reverse=False):
    """Inclusive prefix sum along ``axis``."""


@builtin
def cumprod(input, axis=0, reverse=False):
    """Inclusive prefix product along ``axis``."""


@builtin
def associative_scan(input, axis, combine_fn, reverse=False):
    """Inclusive scan along ``axis`` with a ``@jit`` ``combine_fn``."""


@builtin
def map_elementwise(scalar_fn, *args, pack=1):
    """Call the ``@jit`` function ``scalar_fn`` on each element of the blocks ``args``.

    The arguments are broadcast to one shape; ``scalar_fn`` gets one scalar of
    each and returns one scalar (or a tuple of them), so it may branch per
    element where ``tl.where`` would compute both sides. The result is a
    block (or a tuple of blocks) of the arguments' shape. With ``pack=n``,
    one call takes ``n`` consecutive elements of the last dimension of each
    argument (``a0, a1, b0, b1`` for ``n = 2``) and returns ``n`` of each
    result, in the same order; ``n`` is a power of two that divides the last
    dimension. Triton 3.5's; Triton's interpreter does not run it.
    """


@builtin
def sort(x, dim=None, descending=False):
    """Sort ``x`` along ``dim`` (the last dimension by default)."""


@builtin
def condition(arg1, disable_licm=False):
    """``while tl.condition(c, disable_licm=True):``: the loop's condition ``c``, with a hint
    (not to hoist loop-invariant code) that MiniTriton accepts and ignores."""


# -- atomics ------------------------------------------------------------------


def _atomic_rmw(kind: str, what: str) -> Callable[..., Any]:
    """The builtin ``tl.atomic_<kind>``: every read-modify-write atomic has one signature."""

    def stub(pointer, val, mask=None, sem=None, scope=None):
        pass

    stub.__name__ = stub.__qualname__ = f"atomic_{kind}"
    stub.__doc__ = f"{what}; returns the old values."
    return builtin(stub)


atomic_add = _atomic_rmw("add", "Atomically add ``val`` at ``pointer``")
atomic_max = _atomic_rmw("max", "Atomic maximum")
atomic_min = _atomic_rmw("min", "Atomic minimum")
atomic_and = _atomic_rmw("and", "Atomic bitwise and")
atomic_or = _atomic_rmw("or", "Atomic bitwise or")
atomic_xor = _atomic_rmw("xor", "Atomic bitwise xor")
atomic_xchg = _atomic_rmw("xchg", "Atomic exchange")


@builtin
def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    """Atomic compare-and-swap: store ``val`` where the old value is ``cmp``; returns it."""


@builtin
def atomic_poll(pointer, expected_value, sem=None, scope=None, timeout_ns=None):
    """Wait until the scalar at ``pointer`` equals ``expected_value``; returns True then.

    ``pointer`` points to one 16-, 32- or 64-bit integer. ``sem`` is
    ``"acquire"`` (the default: reads after the poll see what the writer wrote
    before it released the flag) or ``"relaxed"``; ``scope`` is ``"gpu"`` (the
    default), ``"cta"`` or ``"sys"``. With ``timeout_ns`` (nanoseconds of the
    GPU's global timer) the wait may end first, and the result is False; a
    timeout of 0 still reads once. New in Triton 3.8.

    On the GPU one thread of the program polls and the others wait at a
    barrier. The emulator reads the flag, and while it differs lets the other
    programs of the grid run (as for spin loops, see :doc:`differences`); when
    no other program can still change it, a poll without a timeout is an error
    that says so, and one with a timeout returns False at once.
    """


# -- math -----------------------------------------------------------------------


@builtin
def exp(x):
    """Elementwise ``e**x`` (a fast approximation on the GPU)."""


@builtin
def exp2(x):
    """Elementwise ``2**x`` (a fast approximation on the GPU, as ``exp``)."""


@builtin
def log(x):
    """Elementwise natural logarithm."""


@builtin
def log2(x):
    """Elementwise base-2 logarithm."""


@builtin
def sqrt(x):
    """Elementwise square root."""


@builtin
def sqrt_rn(x):
    """Elementwise square root, rounded to nearest (IEEE)."""


@builtin
def rsqrt(x):
    """Elementwise ``1 / sqrt(x)``."""


@builtin
def abs(x):
    """Elementwise absolute value."""


@builtin
def sin(x):
    """Elementwise sine of ``x`` in radians."""


@builtin
def cos(x):
    """Elementwise cosine of ``x`` in radians."""


@builtin
def floor(x):
    """Elementwise floor: round toward minus infinity, keeping the float type."""


@builtin
def ceil(x):
    """Elementwise ceiling: round toward plus infinity, keeping the float type."""


@builtin
def erf(x):
    """Elementwise error function."""


@builtin
def add(x, y, sanitize_overflow=True):
    """``x + y`` (Triton 3.7's function form; ``sanitize_overflow`` is accepted)."""


@builtin
def sub(x, y, sanitize_overflow=True):
    """``x - y`` (Triton 3.7's function form; ``sanitize_overflow`` is accepted)."""


@builtin
def mul(x, y, sanitize_overflow=True):
    """``x * y`` (Triton 3.7's function form; ``sanitize_overflow`` is accepted)."""


@builtin
def fma(x, y, z):
    """Elementwise fused ``x * y + z``."""


class PropagateNan(_enum.Enum):
    """``propagate_nan=`` of ``maximum``/``minimum``/``clamp``: ``ALL`` makes a NaN win."""

    NONE = 0x0000
    ALL = 0xFFFF


@builtin
def maximum(x, y, propagate_nan=None):
    """Elementwise maximum of ``x`` and ``y``, promoted to a common type.

    With the default ``propagate_nan``, whether a NaN or the other operand
    comes out is unspecified, as in Triton; with ``tl.PropagateNan.ALL`` a
    NaN operand gives NaN.
    """


@builtin
def minimum(x, y, propagate_nan=None):
    """Elementwise minimum of ``x`` and ``y``, promoted to a common type.

    With the default ``propagate_nan``, whether a NaN or the other operand
    comes out is unspecified, as in Triton; with ``tl.PropagateNan.ALL`` a
    NaN operand gives NaN.
    """


@builtin
def clamp(x, min, max, propagate_nan=None):
    """Elementwise ``minimum(maximum(x, min), max)``."""


@builtin
def umulhi(x, y):
    """The high half of the double-width product of ``x``'s and ``y``'s unsigned bit patterns.

    Unsigned for signed types too, as in Triton (``-1`` reads as ``2**32 - 1``);
    the result has the operands' type.
    """


@builtin
def div_rn(x, y):
    """IEEE division rounded to nearest (``/`` is approximate on the GPU)."""


@builtin
def fdiv(x, y, ieee_rounding=False):
    """Floating-point division ``x / y``; ``ieee_rounding=True`` rounds as :func:`div_rn`."""


@builtin
def cdiv(x, div):
    """Ceiling division ``(x + div - 1) // div``."""


@builtin
def sigmoid(x):
    """Elementwise ``1 / (1 + exp(-x))``."""


@builtin
def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    """Softmax along the last dimension (``dim``), computed stably."""


# -- random numbers ---------------------------------------------------------


@builtin
def rand(seed, offset, n_rounds=10):
    """Uniform floats in [0, 1) from Philox-4x32, keyed by ``seed``, counted by ``offset``.

    The Philox counter is ``(offset_lo, offset_hi, 0, 0)``: the low 32 bits
    of ``offset`` and, for 64-bit offsets, its high 32 bits (0 otherwise);
    the key is the low and high words of ``seed``, as in Triton.
    """


@builtin
def randn(seed, offset, n_rounds=10):
    """Standard normal floats from Philox-4x32 (Box-Muller); counter as in :func:`rand`."""


@builtin
def randint(seed, offset, n_rounds=10):
    """Random uint32 values from Philox-4x32 (the first of its four outputs).

    ``offset`` may be any integer type; see :func:`rand` for the counter.
    """


@builtin
def philox(seed, c0, c1, c2, c3, n_rounds=10):
    """Philox-4x32 (or 4x64, for 64-bit counters) of the counter ``(c0, c1, c2, c3)``
    keyed by ``seed``: four blocks of random words."""


@builtin
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds=10):
    """``n_rounds`` Philox rounds on the ``uint32`` or ``uint64`` state ``(c0, c1, c2, c3)``
    with the key ``(k0, k1)``."""


@builtin
def randint4x(seed, offset, n_rounds=10):
    """All four Philox-4x32 outputs for ``offset``; see :func:`rand` for the counter."""


@builtin
def rand4x(seed, offsets, n_rounds=10):
    """Four blocks of uniform floats in [0, 1): ``uint_to_uniform_float`` of ``randint4x``."""


@builtin
def randn4x(seed, offset, n_rounds=10):
    """Four blocks of standard normal floats: :func:`pair_uniform_to_normal` of :func:`rand4x`."""


@builtin
def uint_to_uniform_float(x):
    """A uniform float in [0, 1) from random 32- or 64-bit integers ``x`` (Triton's scaling)."""


@builtin
def pair_uniform_to_normal(u1, u2):
    """Two standard normal values from two uniform ones (Box-Muller), as Triton's."""


# -- hints and debugging ----------------------------------------------------


@builtin
def multiple_of(input, values):
    """Promise that ``input`` (each element) is a multiple of ``values``."""


@builtin
def max_contiguous(input, values):
    """Promise that the first ``values`` elements of ``input`` are contiguous."""


@builtin
def max_constancy(input, values):
    """Promise that groups of ``values`` elements of ``input`` are equal."""


@builtin
def static_assert(cond, msg=""):
    """Check ``cond`` at compile time; a false condition is a diagnostic."""


@builtin
def static_print(*values, sep=" ", end="\n", file=None, flush=False):
    """Print compile-time values while the kernel compiles."""


@builtin
def device_print(prefix, *args, hex=False):
    """Print values at run time, once per program (see the docs on differences)."""


@builtin
def device_assert(cond, msg="", mask=None):
    """Check ``cond`` at run time in debug mode; report failing values.

    With ``mask`` (Triton 3.8), only the lanes where it is true are checked.
    """


@builtin
def assume(cond):
    """A hint: the compiler may assume ``cond`` holds (``tl.assume(pid >= 0)``).

    Checked like :func:`device_assert` in debug mode; otherwise it costs
    nothing, and the GPU backend passes a scalar condition on to LLVM
    (``llvm.assume``), which may use it to simplify index arithmetic.
    """


@builtin
def expect_zero(x, mask):
    """``x``, expected to be 0 wherever ``mask`` is true: checked in debug mode (Triton 3.7)."""


@builtin
def debug_barrier():
    """Synchronize the threads of one program."""


# -- loops ------------------------------------------------------------------------


@builtin
def static_range(arg1, arg2=None, step=None):
    """A range unrolled at compile time; bounds are constexprs."""


@builtin
def range(
    arg1,
    arg2=None,
    step=None,
    num_stages=None,
    loop_unroll_factor=None,
    disallow_acc_multi_buffer=False,
    flatten=False,
    warp_specialize=False,
    disable_licm=False,
):
    """A loop range, like Python's ``range``, with Triton's scheduling hints.

    The hints change how the GPU backend schedules the loop, never what it
    computes, so the emulator ignores them: ``num_stages`` (software-pipelining
    depth of this loop), ``loop_unroll_factor``, ``disallow_acc_multi_buffer``,
    ``flatten`` (fuse this loop with the loop nested in it, as persistent
    kernels' tile loops ask), ``warp_specialize`` (split the loop between
    producer and consumer warps) and ``disable_licm``. The docs' differences
    page says which of them the GPU backend acts on.
    """
