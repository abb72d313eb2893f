"""Exercise c4 spec: type promotion rule 8 (integers)."""

TITLE = "Type promotion: integer rule 8"
MARKER = "c4-promotion"
TESTS = (
    "tests/frontend/test_lower_promotion.py",
    "exercises/compiler/c4_promotion/test_promotion_widths.py",
)
SELECT = "r8 or r11 or r12"
MINUTES = 20
REQUIRES = ("10",)
OUTCOMES = ("C's usual arithmetic conversions", "why x_u32 + x_i32 is unsigned")

#: The hint (1-based) each failing test points to: the first key found in its name.
TEST_HINTS = {
    "equal width": 2,
    "beats": 2,
    "wider signed wins": 1,
    "mixed": 2,
    "same signedness": 1,
}
