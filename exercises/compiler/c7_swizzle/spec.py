"""Exercise c7 spec: where a swizzled shared-memory tile stores each element."""

TITLE = "Backend: the shared-memory swizzle"
MARKER = "c7-swizzle"
TESTS = ("exercises/compiler/c7_swizzle/test_swizzle.py",)
SELECT = ""
MINUTES = 30
REQUIRES = ("18",)
OUTCOMES = (
    "the 128/64/32-byte swizzles the tensor cores read",
    "why an XOR of chunk indices makes column reads bank-conflict free",
)

#: The hint (1-based) each failing test points to: the first key found in its name.
TEST_HINTS = {
    "wide_tile": 1,
    "transposed": 1,
    "lands_once": 1,
    "bank_conflict": 2,
    "xor": 2,
    "row": 2,
    "golden": 1,
    "contiguous": 3,
}
