"""Exercise c2 spec: dead-code elimination."""

TITLE = "Dead-code elimination"
MARKER = "c2-dce"
TESTS = ("tests/passes/test_goldens.py", "exercises/compiler/c2_dce/test_dce_effects.py")
SELECT = "dce or pipeline"
MINUTES = 40
REQUIRES = ("c1",)
OUTCOMES = ("side effects vs pure ops", "use counts", "why sweeping backward removes chains")

#: The hint (1-based) each failing test points to: the first key found in its name.
TEST_HINTS = {
    "while": 1,
    "nested": 1,
    "atomic": 1,
    "call": 1,
    "dce/regions": 1,
    "dce/basic": 2,
}
