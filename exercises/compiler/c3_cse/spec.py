"""Exercise c3 spec: common-subexpression elimination."""

TITLE = "Common-subexpression elimination"
MARKER = "c3-cse"
TESTS = ("tests/passes/test_goldens.py", "exercises/compiler/c3_cse/test_cse_keys.py")
SELECT = "cse or pipeline"
MINUTES = 40
REQUIRES = ("c2",)
OUTCOMES = ("value numbering with hashable keys", "scopes follow dominance")

#: The hint (1-based) each failing test points to: the first key found in its name.
TEST_HINTS = {
    "commutative": 1,
    "regions_apart": 1,
    "across_an_atomic": 1,
    "casts": 1,
    "zero": 1,
    "scoped": 2,
}
