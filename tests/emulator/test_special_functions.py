"""The emulator's Bessel functions and ``erfcx`` (:mod:`minitriton.emulator.special`).

Against values to 17 digits (DLMF's functions evaluated in 30-digit
arithmetic), on both sides of each switch from series to expansion; against
identities that hold for every ``x`` (the Wronskian of J and Y, NumPy's own
``i0``, ``exp(x**2) * erfc(x)``); and at the special points C's functions
define (0, infinities, negative arguments of Y, NaN).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from minitriton.emulator import special

GOLDEN = {
    "j0": [(0.5, 0.9384698072408129), (1.0, 0.76519768655796655), (2.5, -0.048383776468197996),
           (7.0, 0.3000792705195556), (11.9, 0.025049441699589645), (12.1, 0.069666773606807312),
           (25.0, 0.096266783275958116), (100.0, 0.019985850304223122)],
    "j1": [(0.5, 0.24226845767487389), (1.0, 0.44005058574493352), (2.5, 0.49709410246427404),
           (7.0, -0.0046828234823458327), (11.9, -0.22898324966192406),
           (12.1, -0.21574897337692481), (25.0, -0.1253502495802899),
           (100.0, -0.077145352014112158)],
    "y0": [(0.5, -0.44451873350670656), (1.0, 0.088256964215676958), (2.5, 0.49807035961523189),
           (7.0, -0.025949743967209265), (11.9, -0.22983321394337506),
           (12.1, -0.21843838055092549), (25.0, -0.12724943226800614),
           (100.0, -0.077244313365083152)],
    "y1": [(0.5, -1.4714723926702431), (1.0, -0.78121282130028872), (2.5, 0.1459181379667858),
           (7.0, -0.30266723702418487), (11.9, -0.03471149833403061),
           (12.1, -0.078736931451395746), (25.0, -0.09882996478323741),
           (100.0, -0.020372312002759793)],
    "cyl_bessel_i0": [(0.5, 1.0634833707413235), (1.0, 1.2660658777520083),
                      (5.0, 27.239871823604447), (19.9, 39513376.520066824),
                      (20.1, 48017874.107136503), (50.0, 2.9325537838493363e20),
                      (300.0, 4.4758473679350521e128)],
    "cyl_bessel_i1": [(0.5, 0.25789430539089632), (1.0, 0.56515910399248503),
                      (5.0, 24.335642142450527), (19.9, 38507423.874862283),
                      (20.1, 46807739.533029883), (50.0, 2.9030785901035568e20),
                      (300.0, 4.4683813850369544e128)],
    "erfcx": [(-3.0, 16205.988853999587), (-0.5, 1.9523604891825571), (0.5, 0.61569034419292587),
              (2.0, 0.25539567631050574), (10.0, 0.056140992743822586),
              (24.9, 0.022639987776049506), (25.1, 0.022459875817581388),
              (300.0, 0.0018806214973780645)],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_values_to_fourteen_digits(name: str) -> None:
    x, want = (np.array(v) for v in zip(*GOLDEN[name]))
    np.testing.assert_allclose(getattr(special, name)(x), want, rtol=1e-14, atol=1e-15)


def test_symmetries() -> None:
    x = np.linspace(0.1, 60, 997)
    np.testing.assert_array_equal(special.j0(-x), special.j0(x))
    np.testing.assert_array_equal(special.j1(-x), -special.j1(x))
    np.testing.assert_array_equal(special.cyl_bessel_i0(-x), special.cyl_bessel_i0(x))
    np.testing.assert_array_equal(special.cyl_bessel_i1(-x), -special.cyl_bessel_i1(x))


def test_wronskian_of_j_and_y() -> None:
    """``J1(x) Y0(x) - J0(x) Y1(x) = 2 / (pi x)`` (DLMF 10.5.2), on both sides of the switch."""
    x = np.concatenate([np.linspace(0.05, 40, 4001), np.geomspace(40, 1e6, 200)])
    w = special.j1(x) * special.y0(x) - special.j0(x) * special.y1(x)
    np.testing.assert_allclose(w * (np.pi * x / 2), 1.0, rtol=1e-12)


def test_i0_agrees_with_numpy() -> None:
    x = np.linspace(-80, 80, 3001)
    np.testing.assert_allclose(special.cyl_bessel_i0(x), np.i0(x), rtol=1e-13)


def test_i1_is_the_derivative_of_i0() -> None:
    x = np.linspace(0.5, 60, 500)
    h = 1e-5
    slope = (np.i0(x + h) - np.i0(x - h)) / (2 * h)
    np.testing.assert_allclose(special.cyl_bessel_i1(x), slope, rtol=1e-8)


def test_erfcx_is_exp_square_times_erfc() -> None:
    x = np.linspace(-9, 25, 3401)
    want = np.exp(x * x) * np.vectorize(math.erfc)(x)
    np.testing.assert_allclose(special.erfcx(x), want, rtol=1e-13)


def test_special_points() -> None:
    x = np.array([0.0, np.inf, -np.inf, np.nan, -1.0])
    np.testing.assert_array_equal(special.j0(x), [1.0, 0.0, 0.0, np.nan, special.j0(1.0)])
    np.testing.assert_array_equal(special.j1(x[:4]), [0.0, 0.0, 0.0, np.nan])
    np.testing.assert_array_equal(special.y0(x), [-np.inf, 0.0, np.nan, np.nan, np.nan])
    np.testing.assert_array_equal(special.y1(x), [-np.inf, 0.0, np.nan, np.nan, np.nan])
    np.testing.assert_array_equal(special.cyl_bessel_i0(x[:4]), [1.0, np.inf, np.inf, np.nan])
    np.testing.assert_array_equal(special.cyl_bessel_i1(x[:4]), [0.0, np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(special.erfcx(x[:4]), [1.0, 0.0, np.inf, np.nan])


def test_shape_and_type_kept() -> None:
    x = np.linspace(1, 2, 12, dtype=np.float32).reshape(3, 4)
    out = special.j0(x)
    assert out.shape == (3, 4) and out.dtype == np.float64


#: ``(n, x, J_n(x))`` and ``(n, x, Y_n(x))`` (mpmath, 30 digits): each side of ``x = n``,
#: below 1 (the series), negative arguments, and Y's overflow toward 0. A negative order
#: gives NaN, as CUDA's libdevice gives it (``jn(n, x)`` is NaN for ``n < 0``).
JN_GOLDEN = [
    (2, 0.5, 0.03060402345868264),
    (2, 3.0, 0.4860912605858911),
    (3, 2.5, 0.21660039103911352),
    (5, 0.9, 0.000148658021674596),
    (5, 4.0, 0.13208665604709827),
    (5, 7.0, 0.34789632475118326),
    (10, 1.5, 1.474326907804e-08),
    (10, 9.0, 0.12469409282831673),
    (10, 30.0, -0.12987689399858876),
    (30, 12.0, 2.552259043034417e-10),
    (-3, 2.5, np.nan),
    (4, -3.0, 0.13203418392461222),
]
YN_GOLDEN = [(2, 0.5, -5.441370837174266), (2, 3.0, -0.16040039348492374),
             (3, 2.5, -0.756055496753671), (5, 0.9, -435.689770896579),
             (5, 7.0, 0.06370223524859028), (10, 9.0, -0.5454644857253355),
             (10, 30.0, 0.07505670212239711), (-3, 2.5, np.nan),
             (6, 0.01, -2444632149029339.0)]  # fmt: skip


@pytest.mark.parametrize(("name", "table"), [("jn", JN_GOLDEN), ("yn", YN_GOLDEN)])
def test_integer_orders_to_twelve_digits(name: str, table: list) -> None:
    n, x, want = (np.array(v) for v in zip(*table))
    np.testing.assert_allclose(getattr(special, name)(n, x), want, rtol=1e-12, atol=1e-300)


def test_integer_orders_agree_with_orders_zero_and_one_and_the_recurrence() -> None:
    x = np.linspace(-40, 40, 801)
    np.testing.assert_array_equal(special.jn(np.zeros_like(x, int), x), special.j0(x))
    np.testing.assert_array_equal(special.jn(np.ones_like(x, int), x), special.j1(x))
    x = x[x > 0.5]
    for n in (3, 8, 20):  # J_{n-1} + J_{n+1} = (2n / x) J_n, on both sides of x = n
        lhs = special.jn(np.full_like(x, n - 1), x) + special.jn(np.full_like(x, n + 1), x)
        np.testing.assert_allclose(lhs, 2 * n / x * special.jn(np.full_like(x, n), x), atol=1e-13)


def test_integer_orders_at_the_special_points() -> None:
    x = np.array([0.0, np.inf, -1.0, np.nan, 1e-300])
    np.testing.assert_array_equal(special.jn(np.full(5, 4), x), [0.0, 0.0, special.jn(4, 1.0),
                                                                 np.nan, 0.0])  # fmt: skip
    np.testing.assert_array_equal(special.yn(np.full(5, 4), x),
                                  [-np.inf, 0.0, np.nan, np.nan, -np.inf])  # fmt: skip
