"""Host side of TMA: the tensor maps a kernel's bulk tensor copies read.

A kernel compiled with TMA copies (:mod:`~minitriton.backend.tma`) takes one
128-byte tensor map per copied operand after its ordinary arguments. The
compiled kernel carries a *recipe* per map: which argument is the base
pointer, which arguments (or constants) are the sizes and the strides (the
tile's two dimensions, then any batch ones), and the box and swizzle, which
equal the swizzled shared tile that ``wgmma`` reads. :class:`TensorMaps`
builds the maps at each launch from the launch's argument values with
``cuTensorMapEncodeTiled`` (cuda-python), and keeps them by the values that
define them: a warm launch with the same tensors compares one key per map and
encodes nothing.

Out-of-bounds elements of a box read as zeros (``OOB_FILL_NONE``), the value
a descriptor load or a block-pointer load with ``boundary_check`` returns.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

from minitriton.backend.driver import CUDAError, _cu, _error

#: Bytes of one tensor map (``CUtensorMap``) and its alignment.
MAP_BYTES = 128
MAP_ALIGN = 64
#: Bytes per element of each map element type (loads: fp16/bf16; TMA stores also fp32).
_BYTES = {"f16": 2, "bf16": 2, "f32": 4}
#: Encoded maps of this process, by recipe and values (a map is 128 bytes).
_ENCODED: dict[tuple, bytes] = {}
_ENCODED_LIMIT = 4096


class _Slot:
    """A 64-byte aligned 128-byte buffer that one kernel parameter is read from."""

    def __init__(self) -> None:
        self.raw = (ctypes.c_uint8 * (MAP_BYTES + MAP_ALIGN))()
        base = ctypes.addressof(self.raw)
        self.address = base + (-base % MAP_ALIGN)
        self.key: tuple | None = None

    def write(self, data: bytes) -> None:
        ctypes.memmove(self.address, data, MAP_BYTES)


class TensorMaps:
    """The tensor-map parameters of one loaded kernel (see the module docstring)."""

    def __init__(self, recipes: Sequence[dict], name: str) -> None:
        self.recipes = [dict(r) for r in recipes]
        self.name = name
        self.slots = [_Slot() for _ in self.recipes]

    @property
    def addresses(self) -> list[int]:
        """Where the launch reads each map parameter from."""
        return [s.address for s in self.slots]

    def fill(self, values: Sequence[Any]) -> None:
        """Encode (or reuse) every map for the arguments' ``values`` (slot values)."""
        for recipe, slot in zip(self.recipes, self.slots):
            base = int(values[recipe["base"]].value)
            dims = tuple(_value(d, values) for d in recipe["dims"])
            strides = tuple(_value(s, values) for s in recipe["strides"])
            key = (base, dims, strides)
            if key == slot.key:
                continue
            slot.write(encoded(recipe, base, dims, strides, self.name))
            slot.key = key


def _value(entry: list, values: Sequence[Any]) -> int:
    kind, v = entry
    return int(values[v].value) if kind == "arg" else int(v)


def encoded(recipe: dict, base: int, dims: tuple, strides: tuple, name: str | None = None) -> bytes:
    """The 128 bytes of the map of ``recipe`` for these values (cached per process)."""
    key = (recipe["dtype"], tuple(recipe["box"]), recipe["swizzle"], base, dims, strides)
    data = _ENCODED.get(key)
    if data is None:
        if len(_ENCODED) >= _ENCODED_LIMIT:
            _ENCODED.clear()
        data = _ENCODED[key] = encode_tiled(recipe, base, dims, strides, name)
    return data


def encode_tiled(recipe: dict, base: int, dims: tuple, strides: tuple, name: str | None) -> bytes:
    """``cuTensorMapEncodeTiled`` (``dims`` innermost first; ``strides``, in elements, of the rest).

    An empty dimension is encoded as 1: the kernel's loop over it never runs.
    """
    cu = _cu()
    eb = _BYTES[recipe["dtype"]]
    dtypes = {
        "f16": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        "bf16": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        "f32": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
    }
    swizzles = {
        128: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        64: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B,
        32: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_32B,
    }
    sizes = [max(1, int(d)) for d in dims]
    err, tmap = cu.cuTensorMapEncodeTiled(
        dtypes[recipe["dtype"]],
        len(sizes),
        base,
        [cu.cuuint64_t(d) for d in sizes],
        [cu.cuuint64_t(int(s) * eb) for s in strides],
        [cu.cuuint32_t(int(b)) for b in recipe["box"]],
        [cu.cuuint32_t(1)] * len(sizes),
        cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        swizzles[recipe["swizzle"]],
        cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    )
    if int(err) != 0:
        raise _with_values(_error(err, "cuTensorMapEncodeTiled", name), base, sizes, strides)
    return ctypes.string_at(int(tmap.getPtr()), MAP_BYTES)


def _with_values(e: CUDAError, base: int, sizes: list[int], strides: tuple) -> CUDAError:
    e.args = (f"{e.args[0]} (tensor map of base 0x{base:x}, sizes {sizes}, strides "
              f"{list(strides)} elements: TMA needs a 16-byte aligned base and "
              "strides)",)  # fmt: skip
    return e


__all__ = ["MAP_BYTES", "TensorMaps", "encode_tiled", "encoded"]
