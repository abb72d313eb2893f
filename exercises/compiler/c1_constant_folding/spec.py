"""Exercise c1 spec: fold integer division and remainder exactly as the GPU computes them."""

TITLE = "Constant folding: C integer division"
MARKER = "c1-fold"
TESTS = (
    "tests/passes/test_folding.py",
    "tests/passes/test_goldens.py",
    "exercises/compiler/c1_constant_folding/test_fold_wide_division.py",
)
SELECT = "div or rem or int_fold"
MINUTES = 30
REQUIRES = ("02",)
OUTCOMES = ("what 'semantics-preserving' means for a folder", "C vs Python integer division")

#: The hint (1-based) each failing test points to: the first key found in its name.
TEST_HINTS = {
    "by_zero": 3,
    "rem": 2,
    "div": 1,
}
