"""A Triton script whose own check fails by printing, as tutorial 03 reports its checks."""

import triton

print("❌ Triton and Torch differ" if triton.cdiv(7, 2) == 4 else "✅ match")
