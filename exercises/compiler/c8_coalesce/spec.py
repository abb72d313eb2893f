"""Exercise c8 spec: the blocked order that makes a load or a store of a tile coalesced."""

TITLE = "Backend: coalescing"
MARKER = "c8-coalesce"
TESTS = ("exercises/compiler/c8_coalesce/test_coalesce_order.py",)
SELECT = ""
MINUTES = 25
REQUIRES = ("07",)
OUTCOMES = (
    "a blocked layout's order: which dim a thread's elements and a warp's lanes run along",
    "why column-major tiles need their own order: 16-byte vectors and coalesced lanes",
)

#: The hint (1-based) each failing test points to: the first key found in its name.
TEST_HINTS = {
    "size_1": 1,
    "tie": 1,
    "most_contiguous": 1,
    "none": 2,
    "gather": 2,
    "1d": 2,
    "last_to_first": 3,
    "permutation": 3,
    "3d": 3,
    "vectors": 1,
    "golden": 1,
}
