"""Host-side helpers for the OCP microscaling (MX) formats, as ``triton.tools.mxfp`` has them.

* :class:`MXFP4Tensor`: 4-bit E2M1 values, one per ``uint8`` (``0bSEEM``), or
  two per byte once packed (the first in the low nibble);
* :class:`MXScaleTensor`: 8-bit E8M0 scales (a power of two, bias 127; 255
  is NaN).

Both hold a torch tensor of codes in ``.data`` and convert from and to
float32 torch tensors, on the tensor's device. Kernels use them with
``tl.dot_scaled``: the host packs the fp4 operand and its scales, the kernel
multiplies. The same names and methods as Triton's module, so tests written
for Triton import them unchanged (``from triton.tools.mxfp import
MXFP4Tensor``).
"""

from __future__ import annotations

from typing import Any

#: E2M1's magnitudes by code (``0bEEM``): subnormal 0 and 0.5, then 1 .. 6.
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
#: The midpoints between neighbouring magnitudes: a tie goes to the even code.
_E2M1_MIDPOINTS = (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0)
E8M0_BIAS = 127
E8M0_NAN = 255


def _torch() -> Any:
    import torch  # only when used: the helpers are torch's, MiniTriton does not need it

    return torch


def _size(size: int | tuple[int, ...]) -> tuple[int, ...]:
    return size if isinstance(size, tuple) else (size,)


class _Codes:
    """Codes in a ``uint8`` torch tensor: made from float32 ``data``, or empty of ``size``."""

    def __init__(self, data: Any = None, size: Any = None, device: Any = None) -> None:
        self.device = device
        if data is not None:
            torch = _torch()
            assert isinstance(data, torch.Tensor), "Parameter data must be a torch tensor"
            self.device = data.device
            self.data = self._from_float(data)
        elif size is not None:
            self.size = _size(size)
        else:
            raise ValueError("Either parameter data or size must be provided")

    def _from_float(self, values: Any) -> Any:
        raise NotImplementedError


class MXFP4Tensor(_Codes):
    """E2M1 codes in a ``uint8`` torch tensor (``.data``), one per element.

    ``MXFP4Tensor(data=t)`` converts float32 ``t`` (round to nearest even;
    magnitudes past 6, infinities and NaN become ±6); ``MXFP4Tensor(size=s)``
    makes an empty one for :meth:`random`.
    """

    def random(self) -> MXFP4Tensor:
        """Random codes, every one of the 16 equally likely."""
        torch = _torch()
        self.data = torch.randint(0, 16, self.size, dtype=torch.uint8, device=self.device)
        return self

    def to(self, dtype: Any) -> Any:
        """The values as float32 (the only type supported, as in Triton); ``-0`` for ``0b1000``."""
        torch = _torch()
        assert dtype == torch.float32, "only float32 is supported for fp4e2m1 to float conversion"
        table = torch.tensor(E2M1_VALUES, dtype=torch.float32, device=self.data.device)
        magnitude = table[(self.data & 0x7).long()]
        negative = ((self.data >> 3) & 1).bool()
        return torch.where(negative, -magnitude, magnitude)

    def _from_float(self, values: Any) -> Any:
        torch = _torch()
        values = values.float()
        sign = torch.signbit(values).to(torch.uint8)
        magnitude = torch.abs(values)
        magnitude = torch.where(torch.isfinite(magnitude), magnitude, E2M1_VALUES[-1])
        bounds = torch.tensor(_E2M1_MIDPOINTS, dtype=torch.float32, device=values.device)
        code = torch.searchsorted(bounds, magnitude.contiguous(), side="left")
        on_midpoint = magnitude == bounds[code.clamp(max=len(_E2M1_MIDPOINTS) - 1)]
        code = torch.where(on_midpoint & (code % 2 == 1), code + 1, code)  # ties to even
        return (sign << 3) | code.to(torch.uint8)

    def to_packed_tensor(self, dim: int) -> Any:
        """Two codes per byte along ``dim`` (element ``2i`` low, ``2i + 1`` high; odd sizes
        padded with a zero code)."""
        torch = _torch()
        data = self.data
        assert 0 <= dim < data.ndim, "the dimension to pack along is not one of the tensor's"
        if data.size(dim) % 2:
            pad = torch.zeros_like(data.narrow(dim, 0, 1))
            data = torch.cat([data, pad], dim=dim)
        pairs = data.unflatten(dim, (data.size(dim) // 2, 2))
        return pairs.select(dim + 1, 0) | (pairs.select(dim + 1, 1) << 4)

    def unpack_packed_tensor(self, packed_tensor: Any, dim: int, original_shape: Any) -> Any:
        """The codes of ``packed_tensor`` (packed along ``dim``), one per byte again, in
        ``original_shape``."""
        torch = _torch()
        pairs = torch.stack((packed_tensor & 0xF, (packed_tensor >> 4) & 0xF), dim=dim + 1)
        data = pairs.flatten(dim, dim + 1)
        return data.narrow(dim, 0, original_shape[dim]).to(torch.uint8)


class MXScaleTensor(_Codes):
    """E8M0 scale codes in a ``uint8`` torch tensor (``.data``): ``2 ** (code - 127)``.

    ``MXScaleTensor(data=t)`` converts float32 ``t`` (the floor of its base-2
    logarithm; values ``<= 0``, infinities and NaN become the NaN code 255);
    ``MXScaleTensor(size=s)`` makes an empty one for :meth:`random`.
    """

    def random(self, low: float | None = None, high: float | None = None) -> MXScaleTensor:
        """Random codes for scales between ``low`` and ``high`` (powers of two), never NaN."""
        import math

        torch = _torch()
        lo = 0 if low is None else max(0, int(math.log2(low)) + E8M0_BIAS)
        hi = E8M0_NAN - 1
        if high is not None:
            hi = min(E8M0_NAN - 1, max(0, int(math.log2(high)) + E8M0_BIAS))
        assert lo <= hi, "Low must be less than or equal to high"
        self.data = torch.randint(lo, hi + 1, self.size, dtype=torch.uint8, device=self.device)
        return self

    def to(self, dtype: Any) -> Any:
        """The scales as float32 (the only type supported, as in Triton); NaN for code 255."""
        torch = _torch()
        assert dtype == torch.float32, "only float32 is supported for f8e8m0 to float conversion"
        codes = self.data.to(torch.float32)
        values = torch.pow(2.0, codes - E8M0_BIAS)
        return torch.where(self.data == E8M0_NAN, torch.nan, values)

    def _from_float(self, values: Any) -> Any:
        torch = _torch()
        values = values.float()
        valid = torch.isfinite(values) & (values > 0)
        exponent = torch.floor(torch.log2(torch.where(valid, values, 1.0)))
        code = (exponent + E8M0_BIAS).clamp(0, E8M0_NAN - 1).to(torch.uint8)
        return torch.where(valid, code, torch.full_like(code, E8M0_NAN))
