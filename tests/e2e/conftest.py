"""End-to-end tests: real Triton kernels against NumPy references, on every backend.

The ``backend`` fixture (``tests/conftest.py``) runs each test once on the
emulator and once on the GPU (marked ``gpu``, so it skips without a device).
Tests launch with the per-launch override ``kernel[grid](..., backend=backend)``.

``MINITRITON_DEBUG=1`` in the environment runs every launch in debug mode:
on the GPU, every access is then bounds-checked on the device
(``scripts/device_debug_check.sh e2e`` runs the suite that way).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

# The kernels live in tests/kernels/ and are imported as ``tests.kernels.<name>``.
REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded random generator, so failures reproduce."""
    return np.random.default_rng(20240601)
