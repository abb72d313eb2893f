"""Exercise c3 spec: common-subexpression elimination."""

TITLE = "Common-subexpression elimination"
MARKER = "c3-cse"
TESTS = ("tests/passes/test_goldens.py", "exercises/compiler/c3_cse/test_cse_keys.py")
SELECT = "cse or pipeline"
MINUTES = 40
REQUIRES = ("c2",)
OUTCOMES = ("value numbering with hashable keys", "scopes follow dominance")
