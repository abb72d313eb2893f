"""Exercise c5 spec: the emulator's semantics of tt.reduce."""

TITLE = "Emulator: the semantics of a reduction"
MARKER = "c5-reduce"
TESTS = (
    "exercises/compiler/c5_reduce/test_reduce_semantics.py",
    "tests/emulator/test_emulator_kernels.py",
)
SELECT = "reduce or softmax or argmax or accumulation"
MINUTES = 40
REQUIRES = ("05", "13")
OUTCOMES = ("an interpreter rule for an op with a region", "tree order vs sequential order")

#: The hint (1-based) each failing test points to: the first key found in its name.
TEST_HINTS = {
    "tree": 1,
    "left_operands": 1,
    "argmax": 1,
}
