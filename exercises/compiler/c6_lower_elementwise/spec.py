"""Exercise c6 spec: lower integer division, remainder, shifts, max and min to LLVM IR."""

TITLE = "Backend: lowering integer ops to LLVM IR"
MARKER = "c6-lower"
TESTS = ("exercises/compiler/c6_lower_elementwise/test_lower_int_ops.py",)
SELECT = ""
MINUTES = 40
REQUIRES = ("c4",)
OUTCOMES = (
    "LLVM IR has no signed types: the operation carries the signedness",
    "the GPU reference semantics of / % >> max min",
)

#: The hint (1-based) each failing test points to: the first key found in its name.
TEST_HINTS = {
    "arith.max": 2,
    "arith.min": 2,
    "arith.": 1,
}
