"""Print debug mode's error for an unmasked store past the end, then a correct launch.

Run on a machine with an NVIDIA GPU: ``python scripts/debug_demo.py``. The
kernel is written to a temporary ``kernel.py`` so that the message shows a
short file name. With ``MINITRITON_DEBUG=async`` it launches device arrays
instead, whose report is deferred: ``synchronize()`` raises it.
"""

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

SOURCE = """import minitriton as triton
import minitriton.language as tl


@triton.jit
def fill(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs.to(tl.float32))
"""


def main() -> int:
    """Launch the buggy kernel in debug mode, print the error, then launch correctly."""
    folder = Path(tempfile.mkdtemp())
    path = folder / "kernel.py"
    path.write_text(SOURCE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("kernel", path)
    kernel = importlib.util.module_from_spec(spec)
    sys.modules["kernel"] = kernel
    spec.loader.exec_module(kernel)
    if os.environ.get("MINITRITON_DEBUG") == "async":
        return deferred(kernel, folder)
    out = np.zeros(8, np.float32)
    try:
        kernel.fill[(1,)](out, BLOCK=16, backend="gpu", debug=True)
    except Exception as e:  # the located error, printed as a user would see it
        print(f"{type(e).__name__}: {e}".replace(str(folder) + "/", ""))
    out = np.zeros(16, np.float32)
    kernel.fill[(1,)](out, BLOCK=16, backend="gpu", debug=True)
    print("next launch:", out.tolist())
    return 0


def deferred(kernel, folder: Path) -> int:
    """The same bug on a device array: the launch returns; ``synchronize()`` raises."""
    from minitriton.backend import DeviceArray, synchronize

    out = DeviceArray.from_numpy(np.zeros(8, np.float32))
    kernel.fill[(1,)](out, BLOCK=16, backend="gpu", debug=True)
    print("the launch returned")
    try:
        synchronize()
    except Exception as e:
        print(f"{type(e).__name__}: {e}".replace(str(folder) + "/", ""))
    out = DeviceArray.from_numpy(np.zeros(16, np.float32))
    kernel.fill[(1,)](out, BLOCK=16, backend="gpu", debug=True)
    synchronize()
    print("next launch:", out.to_numpy().tolist())
    return 0


if __name__ == "__main__":
    sys.exit(main())
