"""NumPy arguments of a GPU launch: one device copy per array, however often it is passed.

``f[grid](x, out, out)`` passes one array twice. Two device copies would
each be copied back after the kernel, and the second would undo what the
kernel stored through the first. These tests replace the device copy with
a fake, so they need no GPU; ``tests/frontend/test_const_pointers.py``
launches such a kernel on the GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from minitriton.backend import driver


class FakeDeviceArray:
    """A device copy that records what was copied, at a made-up address."""

    made: list[FakeDeviceArray] = []

    def __init__(self, arr: np.ndarray) -> None:
        self.data = np.ascontiguousarray(arr).copy()
        self.ptr = 0x1000 * (len(FakeDeviceArray.made) + 1)
        self.copied_back = 0
        FakeDeviceArray.made.append(self)

    @classmethod
    def from_numpy(cls, arr: np.ndarray, stream: Any = None) -> FakeDeviceArray:
        return cls(arr)

    def copy_to(self, arr: np.ndarray) -> None:
        self.copied_back += 1
        arr[...] = self.data

    def to_numpy(self) -> np.ndarray:
        self.copied_back += 1
        return self.data


@pytest.fixture
def launcher(monkeypatch: pytest.MonkeyPatch) -> driver.Launcher:
    FakeDeviceArray.made = []
    monkeypatch.setattr(driver, "DeviceArray", FakeDeviceArray)
    monkeypatch.setattr(driver, "synchronize", lambda name=None: None)
    fake = driver.Launcher.__new__(driver.Launcher)
    fake.name = "k"
    return fake


def host_pointers(launcher: driver.Launcher, args: list[np.ndarray]) -> tuple[list[int], list]:
    pointers, copies = [], None
    for i, arg in enumerate(args):
        ptr, copies = launcher._host_arg(i, arg, copies)
        pointers.append(ptr)
    return pointers, copies or []


def test_an_array_passed_twice_has_one_device_copy(launcher: driver.Launcher) -> None:
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    pointers, copies = host_pointers(launcher, [x, out, out, out[...]])
    assert pointers[1] == pointers[2] == pointers[3] != pointers[0]
    assert len(FakeDeviceArray.made) == 2
    FakeDeviceArray.made[1].data[:] = 2 * x  # the kernel's stores through either pointer
    launcher._copy_back(copies)
    np.testing.assert_array_equal(out, 2 * x)
    assert [d.copied_back for d in FakeDeviceArray.made] == [1, 1]


@pytest.mark.parametrize("other", ["prefix", "reversed", "reshaped", "copy"])
def test_different_views_keep_their_own_copies(launcher: driver.Launcher, other: str) -> None:
    x = np.arange(8, dtype=np.float32)
    view = {"prefix": x[:4], "reversed": x[::-1], "reshaped": x.reshape(2, 4), "copy": x.copy()}
    pointers, _ = host_pointers(launcher, [x, view[other]])
    assert pointers[0] != pointers[1] and len(FakeDeviceArray.made) == 2
