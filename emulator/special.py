"""Special functions that NumPy lacks, for libdevice's ``j0``, ``j1``, ``y0``, ``y1``,
``jn``, ``yn``, ``cyl_bessel_i0``, ``cyl_bessel_i1``, ``erfcx``, ``sinpi``, ``cospi`` and
``remainder`` on the emulator.

Each takes an array of any float type and returns a float64 array of its
shape; :mod:`minitriton.emulator.ops.math` rounds that once to the op's
result type. The methods are the textbook ones, chosen to be short and
readable rather than fast:

* J and Y: the power series below 1; Miller's backward recurrence for J with
  Neumann's series for Y up to 25; Hankel's asymptotic expansion beyond;
* J and Y of order n: the forward recurrence from orders 0 and 1 where it is
  stable (Y everywhere, J above ``x = n``); for J below, the power series
  under 1 and Miller's recurrence from high above ``n``;
* I: the power series up to 20 (all its terms are positive), then the
  asymptotic expansion;
* ``erfcx(x) = exp(x**2) * erfc(x)`` directly until ``erfc`` underflows
  (``x > 25``), then its asymptotic series;
* ``sinpi`` and ``cospi`` reduce ``x`` exactly to a quarter period, so that
  they vanish exactly where they should; ``remainder`` is Python's exact
  ``math.remainder``.

Against 25-digit values they are within a few units of fp64's last place
(absolute for J and Y, whose zeros leave no relative bound), far below fp32's
rounding. References: DLMF 10.8, 10.12, 10.17, 10.23, 10.40 and 7.12.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import wraps

import numpy as np

Fn = Callable[[np.ndarray], np.ndarray]

_EULER_GAMMA = 0.5772156649015329
_SERIES_TERMS = 60
_SERIES_LIMIT = 1.0  # J and Y: the power series below, Miller's method above
_HANKEL_FROM = 25.0  # J and Y: Hankel's expansion above
_MILLER_START = 80
_I_SERIES_LIMIT = 20.0
_ERFCX_DIRECT_LIMIT = 25.0


def _in_float64(fn: Fn) -> Fn:
    """``fn`` on a flat float64 copy of its argument, reshaped back."""

    @wraps(fn)
    def run(x: np.ndarray) -> np.ndarray:
        flat = np.asarray(x, dtype=np.float64).reshape(-1)
        return fn(flat).reshape(np.shape(x))

    return run


def _series(x: np.ndarray, order: int, sign: float) -> np.ndarray:
    """``sum_k sign**k (x/2)**(2k+order) / (k! (k+order)!)``: J (sign -1) or I (sign +1)."""
    q = sign * x * x / 4
    term = (x / 2) ** order / math.factorial(order)
    total = term.copy()
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * (k + order))
        total += term
    return total


def _hankel_coefficients(order: int, count: int) -> list[float]:
    """``a_k(order)`` of DLMF 10.17.1 for k < count."""
    mu = 4.0 * order * order
    coefficients = [1.0]
    for k in range(1, count):
        coefficients.append(coefficients[-1] * (mu - (2 * k - 1) ** 2) / (k * 8))
    return coefficients


def _hankel_pq(x: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Hankel's P and Q (DLMF 10.17.3-4) for large ``x``."""
    a = _hankel_coefficients(order, 20)
    p = np.zeros_like(x)
    q = np.zeros_like(x)
    power = np.ones_like(x)
    for k, ak in enumerate(a):
        sign = (-1) ** (k // 2)
        if k % 2 == 0:
            p += sign * ak * power
        else:
            q += sign * ak * power
        power = power / x
    return p, q


def _phase(x: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    """``cos`` and ``sin`` of ``x - (order/2 + 1/4) pi``, from ``sin x`` and ``cos x``.

    Written as sums of ``sin x`` and ``cos x`` so that a huge ``x`` keeps the
    exact argument reduction of NumPy's ``sin`` and ``cos``.
    """
    c, s = np.cos(x), np.sin(x)
    r = math.sqrt(0.5)
    if order == 0:
        return r * (c + s), r * (s - c)
    return r * (s - c), -r * (s + c)


def _j_large(x: np.ndarray, order: int) -> np.ndarray:
    p, q = _hankel_pq(x, order)
    cos_chi, sin_chi = _phase(x, order)
    return np.sqrt(2 / (np.pi * x)) * (p * cos_chi - q * sin_chi)


def _y_large(x: np.ndarray, order: int) -> np.ndarray:
    p, q = _hankel_pq(x, order)
    cos_chi, sin_chi = _phase(x, order)
    return np.sqrt(2 / (np.pi * x)) * (p * sin_chi + q * cos_chi)


def _miller(x: np.ndarray) -> tuple[np.ndarray, ...]:
    """``J0, J1, Y0, Y1`` for ``1 <= x <= 25`` by Miller's backward recurrence.

    ``J_{n-1} = (2n/x) J_n - J_{n+1}``, run down from ``n = 80`` where ``J_n``
    is negligible, is stable; the unscaled values are normalized with
    ``J0 + 2 (J2 + J4 + ...) = 1`` (DLMF 10.12.4). Neumann's series (DLMF
    10.23) give Y from the same values:

    * ``Y0 = (2/pi) (ln(x/2) + gamma) J0 - (4/pi) sum_k (-1)**k J_{2k} / k``;
    * ``Y1 = -Y0'``, that is ``(2/pi) ((ln(x/2) + gamma) J1 - J0 / x
      + sum_k (-1)**k (J_{2k-1} - J_{2k+1}) / k)``.

    Everything is linear in the unscaled values, so a rescale when they grow
    large applies to all the running sums alike.
    """
    upper, current = np.zeros_like(x), np.full_like(x, 1e-30)  # J_{n+1}, J_n at n = 80
    norm, y0_sum, y1_sum = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    j1 = np.zeros_like(x)
    for n in range(_MILLER_START, 0, -1):
        lower = (2 * n / x) * current - upper  # J_{n-1}
        if n % 2 == 1 and n > 1:  # lower is J_{2k}, k = (n-1)/2
            k = (n - 1) // 2
            norm += 2 * lower
            y0_sum += (-1) ** k * lower / k
        if n % 2 == 0:  # current is J_{2k}, k = n/2: (J_{2k-1} - J_{2k+1}) / k
            k = n // 2
            y1_sum += (-1) ** k * (lower - upper) / k
        if n == 1:
            j1 = current
        upper, current = current, lower
        big = np.abs(current) > 1e250
        if big.any():
            scale = np.where(big, 1e-250, 1.0)
            upper, current = upper * scale, current * scale
            norm, y0_sum, y1_sum = norm * scale, y0_sum * scale, y1_sum * scale
    norm += current  # J0
    j0, j1 = current / norm, j1 / norm
    log_term = np.log(x / 2) + _EULER_GAMMA
    y0 = (2 / np.pi) * log_term * j0 - (4 / np.pi) * y0_sum / norm
    y1 = (2 / np.pi) * (log_term * j1 - j0 / x + y1_sum / norm)
    return j0, j1, y0, y1


def _jy(x: np.ndarray, which: int) -> np.ndarray:
    """``(J0, J1, Y0, Y1)[which]`` of ``x >= 0``: the series, Miller's method or Hankel's."""
    order = which % 2
    small = [lambda v: _series(v, 0, -1.0), lambda v: _series(v, 1, -1.0), _y0_small,
             _y1_small][which]  # fmt: skip
    large = _j_large if which < 2 else _y_large
    out = np.full_like(x, np.nan)
    near = x < _SERIES_LIMIT
    middle = (x >= _SERIES_LIMIT) & (x <= _HANKEL_FROM)
    far = x > _HANKEL_FROM
    out[near] = small(x[near])
    out[middle] = _miller(x[middle])[which]
    out[far] = large(x[far], order)
    return out


@_in_float64
def j0(x: np.ndarray) -> np.ndarray:
    """Bessel function of the first kind of order 0 (even)."""
    with np.errstate(all="ignore"):
        return np.where(np.isinf(x), 0.0, _jy(np.abs(x), 0))


@_in_float64
def j1(x: np.ndarray) -> np.ndarray:
    """Bessel function of the first kind of order 1 (odd)."""
    with np.errstate(all="ignore"):
        return np.where(np.isinf(x), 0.0, np.sign(x) * _jy(np.abs(x), 1))


def _harmonic_series(x: np.ndarray, order: int) -> np.ndarray:
    """``sum_k (-1)**k (psi(k+1) + psi(k+order+1)) (x/2)**(2k+order) / (k! (k+order)!)``."""
    q = -x * x / 4
    term = (x / 2) ** order / math.factorial(order)
    psi_k = -_EULER_GAMMA  # psi(1)
    psi_kn = psi_k + sum(1.0 / j for j in range(1, order + 1))  # psi(order + 1)
    total = (psi_k + psi_kn) * term
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * (k + order))
        psi_k += 1.0 / k
        psi_kn += 1.0 / (k + order)
        total += (psi_k + psi_kn) * term
    return total


def _y0_small(x: np.ndarray) -> np.ndarray:
    # DLMF 10.8.1 with n = 0.
    return (2 / np.pi) * np.log(x / 2) * _series(x, 0, -1.0) - _harmonic_series(x, 0) / np.pi


def _y1_small(x: np.ndarray) -> np.ndarray:
    # DLMF 10.8.1 with n = 1.
    log_term = (2 / np.pi) * np.log(x / 2) * _series(x, 1, -1.0)
    return -2 / (np.pi * x) + log_term - _harmonic_series(x, 1) / np.pi


def _y(x: np.ndarray, which: int) -> np.ndarray:
    """Y0 or Y1: -inf at 0, NaN below 0, 0 at inf (as C's ``y0``, ``y1``)."""
    with np.errstate(all="ignore"):
        out = _jy(np.where(x > 0, x, np.nan), which)
        out[x == 0] = -np.inf
        out[x == np.inf] = 0.0
    return out


@_in_float64
def y0(x: np.ndarray) -> np.ndarray:
    """Bessel function of the second kind of order 0."""
    return _y(x, 2)


@_in_float64
def y1(x: np.ndarray) -> np.ndarray:
    """Bessel function of the second kind of order 1."""
    return _y(x, 3)


def _by_order(
    n: np.ndarray, x: np.ndarray, one: Callable[[int, np.ndarray], np.ndarray]
) -> np.ndarray:
    """``one(order, x)`` for each distinct order in ``n``, on float64 copies, broadcast.

    A negative order gives NaN, as CUDA's libdevice (``__nv_jn``, ``__nv_yn``),
    which Triton's GPU code calls, gives it (measured on an H100).
    """
    orders, xs = np.broadcast_arrays(np.asarray(n, dtype=np.int64), np.asarray(x, np.float64))
    out = np.full(xs.shape, np.nan, dtype=np.float64)
    with np.errstate(all="ignore"):
        for order in np.unique(orders[orders >= 0]):
            sel = orders == order
            out[sel] = one(int(order), xs[sel])
    return out


def _forward(order: int, x: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``C_{k+1} = (2k/x) C_k - C_{k-1}`` from ``C_0 = first``, ``C_1 = second`` up to ``order``."""
    lower, current = first, second
    for k in range(1, order):
        lower, current = current, (2 * k / x) * current - lower
    return current


def _jn_small(order: int, x: np.ndarray) -> np.ndarray:
    """The power series of ``J_order`` for ``|x| < 1``, its first term taken through logs."""
    q = -x * x / 4
    half = np.abs(x) / 2
    term = np.where(x == 0, 0.0, np.exp(order * np.log(half) - math.lgamma(order + 1)))
    term = np.where(x < 0, (-1) ** order * term, term)
    total = term.copy()
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * (k + order))
        total += term
    return total


def _jn_miller(order: int, x: np.ndarray) -> np.ndarray:
    """``J_order`` for ``1 <= x <= order`` by the backward recurrence, normalized as in _miller."""
    start = 2 * ((order + int(math.sqrt(160 * order)) + 40) // 2)
    upper, current = np.zeros_like(x), np.full_like(x, 1e-30)
    norm, wanted = np.zeros_like(x), np.zeros_like(x)
    for k in range(start, 0, -1):
        lower = (2 * k / x) * current - upper
        upper, current = current, lower  # current is J_{k-1}
        if k - 1 == order:
            wanted = current
        if (k - 1) % 2 == 0 and k > 1:
            norm += 2 * current
        big = np.abs(current) > 1e250
        if big.any():
            scale = np.where(big, 1e-250, 1.0)
            upper, current = upper * scale, current * scale
            norm, wanted = norm * scale, wanted * scale
    return wanted / (norm + current)


def _jn_one(order: int, x: np.ndarray) -> np.ndarray:
    if order < 2:
        return j0(x) if order == 0 else j1(x)
    ax = np.abs(x)
    out = np.zeros_like(x)  # J_n(0) = 0 and J_n(+-inf) = 0 for n >= 1
    out[np.isnan(x)] = np.nan
    small = ax < 1
    out[small] = _jn_small(order, x[small])
    middle = (ax >= 1) & (ax <= order)
    out[middle] = _jn_miller(order, ax[middle])
    far = (ax > order) & np.isfinite(ax)
    out[far] = _forward(order, ax[far], j0(ax[far]), j1(ax[far]))
    odd = (order % 2 == 1) & (x < 0) & ~small  # J_n(-x) = (-1)**n J_n(x); the series has signs
    out[odd] = -out[odd]
    return out


def jn(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Bessel function of the first kind of integer order ``n`` (float64, broadcast)."""
    return _by_order(n, x, _jn_one)


def _yn_one(order: int, x: np.ndarray) -> np.ndarray:
    if order < 2:
        return y0(x) if order == 0 else y1(x)
    out = _forward(order, x, y0(x), y1(x))
    out[np.isnan(out) & (x > 0)] = -np.inf  # overflowed near 0: -inf - (-inf) in the recurrence
    out[x == 0] = -np.inf
    out[x == np.inf] = 0.0
    return out


def yn(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Bessel function of the second kind of integer order ``n`` (NaN below 0, as C's ``yn``)."""
    return _by_order(n, x, _yn_one)


def _i_large(x: np.ndarray, order: int) -> np.ndarray:
    """DLMF 10.40.1 for ``x > 0``."""
    a = _hankel_coefficients(order, 30)
    total = np.zeros_like(x)
    power = np.ones_like(x)
    for k, ak in enumerate(a):
        total += (-1) ** k * ak * power
        power = power / x
    return np.exp(x) / np.sqrt(2 * np.pi * x) * total


def _i(x: np.ndarray, order: int) -> np.ndarray:
    """I of ``order`` at ``x >= 0``: the series, then the expansion; inf at inf."""
    out = np.full_like(x, np.nan)
    near = x <= _I_SERIES_LIMIT
    far = (x > _I_SERIES_LIMIT) & np.isfinite(x)
    out[near] = _series(x[near], order, 1.0)
    out[far] = _i_large(x[far], order)
    out[x == np.inf] = np.inf
    return out


@_in_float64
def cyl_bessel_i0(x: np.ndarray) -> np.ndarray:
    """Modified Bessel function of the first kind of order 0 (even)."""
    with np.errstate(all="ignore"):
        return _i(np.abs(x), 0)


@_in_float64
def cyl_bessel_i1(x: np.ndarray) -> np.ndarray:
    """Modified Bessel function of the first kind of order 1 (odd)."""
    with np.errstate(all="ignore"):
        return np.sign(x) * _i(np.abs(x), 1)


def _erfcx_large(x: np.ndarray) -> np.ndarray:
    """DLMF 7.12.1: ``1/(x sqrt(pi)) sum_k (-1)**k (2k-1)!! / (2x**2)**k``."""
    total = np.ones_like(x)
    term = np.ones_like(x)
    for k in range(1, 12):
        term = -term * (2 * k - 1) / (2 * x * x)
        total += term
    return total / (x * math.sqrt(math.pi))


@_in_float64
def erfcx(x: np.ndarray) -> np.ndarray:
    """Scaled complementary error function ``exp(x**2) * erfc(x)``."""
    erfc = np.vectorize(math.erfc, otypes=[np.float64])
    with np.errstate(all="ignore"):
        out = np.empty_like(x)
        large = x > _ERFCX_DIRECT_LIMIT
        out[large] = _erfcx_large(x[large])
        rest = ~large
        out[rest] = np.exp(x[rest] * x[rest]) * erfc(x[rest]) if rest.any() else 0.0
    return out


def _quadrant(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x = n/2 + f`` with an integer ``n`` (mod 4) and ``|f| <= 1/4``, both exact."""
    n = np.rint(2 * x)
    return np.mod(n, 4), x - n / 2


@_in_float64
def sinpi(x: np.ndarray) -> np.ndarray:
    """``sin(pi x)``, exactly 0 at the integers (libdevice's ``sinpi``)."""
    with np.errstate(all="ignore"):
        n, f = _quadrant(x)
        s, c = np.sin(np.pi * f), np.cos(np.pi * f)
        out = np.select([n == 0, n == 1, n == 2], [s, c, -s], -c)
        out = np.where((f == 0) & (n % 2 == 0), np.copysign(0.0, x), out)  # +-0 at integers
        return np.where(np.isinf(x), np.nan, out)


@_in_float64
def cospi(x: np.ndarray) -> np.ndarray:
    """``cos(pi x)``, exactly 0 at the half-integers (libdevice's ``cospi``)."""
    with np.errstate(all="ignore"):
        n, f = _quadrant(x)
        s, c = np.sin(np.pi * f), np.cos(np.pi * f)
        out = np.select([n == 0, n == 1, n == 2], [c, -s, -c], s)
        out = np.where(out == 0, 0.0, out)  # +0, as C's cospi
        return np.where(np.isinf(x), np.nan, out)


def remainder(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """IEEE 754's remainder ``x - n y``, ``n`` the integer nearest ``x / y`` (ties to even).

    Exact (Python's ``math.remainder``); NaN where C's ``remainder`` gives
    NaN (``y = 0``, ``x`` infinite), in the operands' type.
    """

    def one(a: float, b: float) -> float:
        try:
            return math.remainder(a, b)
        except ValueError:
            return math.nan

    return np.vectorize(one, otypes=[np.result_type(x, y)])(x, y)
