"""Realistic wrong solutions of the compiler track, as whole wrong functions.

Each :class:`CompilerMutant` is the code a student might write for one of the
functions an exercise stubs (``target``: ``module:function`` or
``module:Class.method``). ``compiler_mutant_runner.py`` puts it in place of
the real function and runs the exercise's tests; ``test_course_mutants.py``
asserts that some test fails and that a failing test's name or message
matches ``expect``: the failure points at the mistake.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CompilerMutant:
    """One wrong function for one compiler exercise."""

    exercise: str  # "c1"
    name: str  # the mistake, in a few words
    target: str  # "minitriton.passes.folding:_int_div"
    code: str  # the wrong function, defined with the module's globals
    expect: str  # a regex a failing test's "name -- message" must match


M = CompilerMutant
FOLD = "minitriton.passes.folding"
DCE = "minitriton.passes.dce"
CSE = "minitriton.passes.cse"
PROMOTE = "minitriton.frontend.promotion:integer_promote"
REDUCE = "minitriton.emulator.ops.reduce:_reduce"
LOWER = "minitriton.backend.lower.arith:_int_binary"

# ---------------------------------------------------------------- c1 constant folding

C1 = (
    M(
        "c1",
        "Python floor division",
        f"{FOLD}:_int_div",
        """
def _int_div(a, b):
    return None if b == 0 else a // b
""",
        "div",
    ),
    M(
        "c1",
        "float division",
        f"{FOLD}:_int_div",
        """
def _int_div(a, b):
    return None if b == 0 else int(a / b)
""",
        "div.*(64|2\\*\\*53)|64.*div",
    ),
    M(
        "c1",
        "remainder through doubles",
        f"{FOLD}:_int_rem",
        """
def _int_rem(a, b):
    import math
    return None if b == 0 else int(math.fmod(a, b))
""",
        "rem.*(64|2\\*\\*53)|64.*rem",
    ),
    M(
        "c1",
        "Python remainder (the sign of the divisor)",
        f"{FOLD}:_int_rem",
        """
def _int_rem(a, b):
    return None if b == 0 else a % b
""",
        "rem",
    ),
    M(
        "c1",
        "division by zero folded to 0",
        f"{FOLD}:_int_div",
        """
def _int_div(a, b):
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q
""",
        "div.*zero|zero.*div|truncate",
    ),
    M(
        "c1",
        "the sign of the quotient from the dividend only",
        f"{FOLD}:_int_div",
        """
def _int_div(a, b):
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return -q if a < 0 else q
""",
        "div",
    ),
    M(
        "c1",
        "remainder from the floor quotient",
        f"{FOLD}:_int_rem",
        """
def _int_rem(a, b):
    return None if b == 0 else a - b * (a // b)
""",
        "rem",
    ),
)

# ---------------------------------------------------------------- c2 DCE

_EFFECT_FREE = """
def is_effect_free(op):
    if op.is_terminator or op.name in {removable}:
        return True
    if not op.pure and op.name not in {control}:
        return False
    return all(is_effect_free(inner) for r in op.regions for inner in r.ops)
"""

C2 = (
    M(
        "c2",
        "a dead scf.while is deleted",
        f"{DCE}:is_effect_free",
        _EFFECT_FREE.format(removable="('tt.load',)", control='("scf.for", "scf.if", "scf.while")'),
        "while",
    ),
    M(
        "c2",
        "regions inspected one level deep",
        f"{DCE}:is_effect_free",
        """
def is_effect_free(op):
    if op.is_terminator or op.name in ("tt.load",):
        return True
    if not op.pure and op.name not in ("scf.for", "scf.if"):
        return False
    return all(
        inner.pure or inner.is_terminator or inner.name in ("tt.load",)
        or inner.name in ("scf.for", "scf.if")  # nested control flow: not looked into
        for r in op.regions for inner in r.ops
    )
""",
        "nested",
    ),
    M(
        "c2",
        "an atomic with an unused result is deleted",
        f"{DCE}:is_effect_free",
        _EFFECT_FREE.format(
            removable='("tt.load", "tt.atomic_rmw", "tt.atomic_cas")',
            control='("scf.for", "scf.if")',
        ),
        "atomic",
    ),
    M(
        "c2",
        "a call with an unused result is deleted",
        f"{DCE}:is_effect_free",
        _EFFECT_FREE.format(removable='("tt.load", "tt.call")', control='("scf.for", "scf.if")'),
        "call",
    ),
    M(
        "c2",
        "stores are deleted too",
        f"{DCE}:is_effect_free",
        _EFFECT_FREE.format(removable='("tt.load", "tt.store")', control='("scf.for", "scf.if")'),
        "dce|store",
    ),
    M(
        "c2",
        "regions are never inspected",
        f"{DCE}:is_effect_free",
        """
def is_effect_free(op):
    if op.is_terminator or op.name in ("tt.load",):
        return True
    return op.pure or op.name in ("scf.for", "scf.if")
""",
        "dce|store|nested",
    ),
    M(
        "c2",
        "terminators are swept as dead",
        f"{DCE}:_remove_dead_ops",
        """
def _remove_dead_ops(func):
    counts = use_counts(func)
    changed = False
    for op in reversed(list(func.walk())):
        if op is func or not is_attached(op, func) or not is_effect_free(op):
            continue
        if any(counts.get(id(r), 0) for r in op.results):
            continue
        for inner in op.walk():
            for v in inner.operands:
                counts[id(v)] -= 1
        erase_op(op)
        changed = True
    return changed
""",
        "dce|pipeline",
    ),
)

# ---------------------------------------------------------------- c3 CSE

_KEY = """
def _key(op):
    if {skip}:
        return None
    operands = {operands}
    types = tuple(str(r.type) for r in op.results)
    return (op.name, operands, {attrs}, {types})
"""
_SKIP = "not op.pure or op.is_terminator or op.regions or not op.results"


def _key(skip: str = _SKIP, operands: str = "tuple(id(v) for v in op.operands)",
         attrs: str = "freeze_attr(op.attrs)", types: str = "types") -> str:  # fmt: skip
    return _KEY.format(skip=skip, operands=operands, attrs=attrs, types=types)


C3 = (
    M(
        "c3",
        "operands sorted for every op",
        f"{CSE}:_key",
        _key(operands="tuple(sorted(id(v) for v in op.operands))"),
        "commutative",
    ),
    M(
        "c3",
        "ops with regions keyed too",
        f"{CSE}:_key",
        _key(skip="not op.pure or op.is_terminator or not op.results"),
        "region|reduce",
    ),
    M(
        "c3",
        "loads merged across an atomic",
        f"{CSE}:_key",
        _key(
            skip="(not op.pure and op.name != 'tt.load') or op.is_terminator or op.regions"
            " or not op.results"
        ),
        "load",
    ),
    M("c3", "result types left out of the key", f"{CSE}:_key", _key(types="()"), "type|cast"),
    M(
        "c3",
        "attributes compared with ==",
        f"{CSE}:_key",
        _key(attrs="tuple(sorted(op.attrs.items()))"),
        "zero|-0.0|attr",
    ),
    M("c3", "attributes left out of the key", f"{CSE}:_key", _key(attrs="()"), "cse|constant"),
    M(
        "c3",
        "one table for the whole function",
        f"{CSE}:_cse_block",
        """
def _cse_block(block, outer, func):
    scopes = outer or [{}]
    for op in list(block.ops):
        key = _key(op)
        known = _lookup(scopes, key) if key is not None else None
        if known is not None:
            replace_op(op, known.results, func)
            continue
        if key is not None:
            scopes[-1][key] = op
        for region in op.regions:
            _cse_block(region.block, scopes, func)
""",
        "scoped|cse",
    ),
)

# ---------------------------------------------------------------- c4 promotion

C4 = (
    M(
        "c4",
        "signed wins at equal width",
        PROMOTE,
        """
def integer_promote(a, b):
    if a.bitwidth != b.bitwidth:
        return a if a.bitwidth > b.bitwidth else b
    return a if a.kind == "int" else b
""",
        "unsigned wins at equal width|r8",
    ),
    M(
        "c4",
        "unsigned always wins",
        PROMOTE,
        """
def integer_promote(a, b):
    if (a.kind == "uint") != (b.kind == "uint"):
        return a if a.kind == "uint" else b
    return a if a.bitwidth > b.bitwidth else b
""",
        "beats|r8",
    ),
    M(
        "c4",
        "signedness ignored",
        PROMOTE,
        """
def integer_promote(a, b):
    return a if a.bitwidth >= b.bitwidth else b
""",
        "unsigned|r8",
    ),
    M(
        "c4",
        "the tie depends on the operand order",
        PROMOTE,
        """
def integer_promote(a, b):
    a_unsigned, b_unsigned = a.kind == "uint", b.kind == "uint"
    if a_unsigned == b_unsigned:
        return a if a.bitwidth > b.bitwidth else b
    if a_unsigned:
        return a if a.bitwidth >= b.bitwidth else b
    return b if b.bitwidth > a.bitwidth else a
""",
        "order|r8",
    ),
    M(
        "c4",
        "mixed signedness gives the wider unsigned type",
        PROMOTE,
        """
def integer_promote(a, b):
    from minitriton.ir.types import U8, U16, U32, U64

    if (a.kind == "uint") == (b.kind == "uint"):
        return a if a.bitwidth > b.bitwidth else b
    return {8: U8, 16: U16, 32: U32, 64: U64}[max(a.bitwidth, b.bitwidth)]
""",
        "beats|r8",
    ),
    M(
        "c4",
        "the narrower type wins",
        PROMOTE,
        """
def integer_promote(a, b):
    a_unsigned, b_unsigned = a.kind == "uint", b.kind == "uint"
    if a_unsigned == b_unsigned:
        return a if a.bitwidth < b.bitwidth else b
    if a_unsigned:
        return a if a.bitwidth >= b.bitwidth else b
    return b if b.bitwidth >= a.bitwidth else a
""",
        "wider|r8|r11|r12",
    ),
    M(
        "c4",
        "unsigned wins only at equal width",
        PROMOTE,
        """
def integer_promote(a, b):
    from minitriton.ir.types import I8, I16, I32, I64

    if (a.kind == "uint") == (b.kind == "uint"):
        return a if a.bitwidth > b.bitwidth else b
    if a.bitwidth == b.bitwidth:
        return a if a.kind == "uint" else b
    return {8: I8, 16: I16, 32: I32, 64: I64}[max(a.bitwidth, b.bitwidth)]
""",
        "r8 mixed (u16 with i8|i8 with u16)",
    ),
)

# ---------------------------------------------------------------- c5 reductions

_REDUCE = """
def _reduce(op, state, *xs):
    arrays, batched, _ = _axis_last(op, state, xs)
    region = op.regions[0]
{body}
    return [RVal(np.array(a[..., 0]), batched) for a in arrays]
"""


def _reduce(body: str) -> str:
    return _REDUCE.format(body=body)


C5 = (
    M(
        "c5",
        "a sequential left fold",
        REDUCE,
        _reduce("""
    acc = [a[..., 0:1] for a in arrays]
    for i in range(1, arrays[0].shape[-1]):
        acc = _combine(region, state, acc, [a[..., i:i + 1] for a in arrays])
    arrays = acc
"""),
        "tree",
    ),
    M(
        "c5",
        "operands swapped in the combiner",
        REDUCE,
        _reduce("""
    while arrays[0].shape[-1] > 1:
        left = [a[..., 0::2] for a in arrays]
        right = [a[..., 1::2] for a in arrays]
        arrays = _combine(region, state, right, left)
"""),
        "left operands first|ties|first",
    ),
    M(
        "c5",
        "halves instead of neighbours",
        REDUCE,
        _reduce("""
    while arrays[0].shape[-1] > 1:
        half = arrays[0].shape[-1] // 2
        left = [a[..., :half] for a in arrays]
        right = [a[..., half:2 * half] for a in arrays]
        arrays = _combine(region, state, left, right)
"""),
        "tree|first|left",
    ),
    M(
        "c5",
        "only the first operand is reduced",
        REDUCE,
        _reduce("""
    while arrays[0].shape[-1] > 1:
        left = [a[..., 0::2] for a in arrays]
        right = [a[..., 1::2] for a in arrays]
        combined = _combine(region, state, left, right)
        arrays = [combined[0]] + left[1:]
"""),
        "argmax",
    ),
    M(
        "c5",
        "stops one level early",
        REDUCE,
        _reduce("""
    while arrays[0].shape[-1] > 2:
        left = [a[..., 0::2] for a in arrays]
        right = [a[..., 1::2] for a in arrays]
        arrays = _combine(region, state, left, right)
"""),
        "sum|reduce",
    ),
    M(
        "c5",
        "a fold that starts from zero",
        REDUCE,
        _reduce("""
    acc = [np.zeros_like(a[..., 0:1]) for a in arrays]
    for i in range(arrays[0].shape[-1]):
        acc = _combine(region, state, acc, [a[..., i:i + 1] for a in arrays])
    arrays = acc
"""),
        "max|argmax",
    ),
    M(
        "c5",
        "a right fold: associative, but another order",
        REDUCE,
        _reduce("""
    acc = [a[..., -1:] for a in arrays]
    for i in range(arrays[0].shape[-1] - 2, -1, -1):
        acc = _combine(region, state, [a[..., i:i + 1] for a in arrays], acc)
    arrays = acc
"""),
        "tree_order_with_cancellation",
    ),
)

# ---------------------------------------------------------------- c6 lowering

_LOWER = """
def _int_binary(self, name, st, a, b):
    bld = self.b
    signed = {signed}
    if name == "arith.div":
        return {div}
    if name == "arith.rem":
        return {rem}
    if name == "arith.shr":
        return {shr}
    if name in ("arith.max", "arith.min"):
        op = {cmp_op}
        cmp = {cmp}
        return bld.select(cmp, a, b)
    raise NotImplementedError(name)
"""


def _lower(**changes: str) -> str:
    parts = {
        "signed": "st.is_signed()",
        "div": "bld.sdiv(a, b) if signed else bld.udiv(a, b)",
        "rem": "bld.srem(a, b) if signed else bld.urem(a, b)",
        "shr": "bld.ashr(a, b) if signed else bld.lshr(a, b)",
        "cmp_op": '">" if name == "arith.max" else "<"',
        "cmp": "bld.icmp_signed(op, a, b) if signed else bld.icmp_unsigned(op, a, b)",
    }
    return _LOWER.format(**{**parts, **changes})


C6 = (
    M("c6", "unsigned division for every type", LOWER, _lower(div="bld.udiv(a, b)"), "div-i"),
    M("c6", "signed division for every type", LOWER, _lower(div="bld.sdiv(a, b)"), "div-u"),
    M("c6", "signed remainder for every type", LOWER, _lower(rem="bld.srem(a, b)"), "rem-u"),
    M("c6", "logical shift for signed types", LOWER, _lower(shr="bld.lshr(a, b)"), "shr-i"),
    M("c6", "arithmetic shift for unsigned types", LOWER, _lower(shr="bld.ashr(a, b)"), "shr-u"),
    M(
        "c6",
        "signed compare in max and min",
        LOWER,
        _lower(cmp="bld.icmp_signed(op, a, b)"),
        "(max|min)-u",
    ),
    M(
        "c6",
        "i1's signedness from its type name",
        LOWER,
        _lower(signed='not st.name.startswith("u")'),
        "on_i1",
    ),
    M(
        "c6",
        "max and min swapped",
        LOWER,
        _lower(cmp_op='"<" if name == "arith.max" else ">"'),
        "max|min",
    ),
)

# ---------------------------------------------------------------- c7 swizzle

LINEAR = "minitriton.backend.shared_layout:SharedTile.linear"
PHYSICAL = "minitriton.backend.shared_layout:SharedTile.physical"


def _physical(swizzled: str) -> str:
    return f"""
def physical(self, row, col):
    o = self.linear(row, col)
    return {swizzled}
"""


def _linear(offset: str) -> str:
    return f"""
def linear(self, row, col):
    e = self.row_elems
    return {offset}
"""


C7 = (
    M("c7", "no swizzle", PHYSICAL, _physical("o"), "bank_conflict|xor"),
    M(
        "c7",
        "line index not masked",
        PHYSICAL,
        _physical("o ^ ((o >> 7) << 4)"),
        "lands_once|bits other than 4-6",
    ),
    M(
        "c7",
        "XOR on 8-byte units",
        PHYSICAL,
        _physical("o ^ (((o >> 7) & self.mask) << 3)"),
        "contiguous|left its 16-byte chunk",
    ),
    M(
        "c7",
        "the 128-byte mask for every width",
        PHYSICAL,
        _physical("o ^ (((o >> 7) & 7) << 4)"),
        "in_their_row\\[(64|32)B\\]",
    ),
    M(
        "c7",
        "row index instead of the line index",
        PHYSICAL,
        _physical("o ^ ((row & self.mask) << 4)"),
        "bank_conflict_free\\[(64|32)B\\]|xor_pattern\\[(64|32)B\\]",
    ),
    M(
        "c7",
        "column blocks ignored",
        LINEAR,
        _linear("row * self.swizzle + col * self.eb"),
        "wide_tile|lands_once\\[64x128",
    ),
    M(
        "c7",
        "column blocks one row apart",
        LINEAR,
        _linear("(col // e) * self.swizzle + row * self.swizzle + (col % e) * self.eb"),
        "wide_tile|lands_once",
    ),
    M(
        "c7",
        "element size ignored",
        LINEAR,
        _linear("(col // e) * self.rows * self.swizzle + row * self.swizzle + col % e"),
        "golden|lands_once",
    ),
)

# ---------------------------------------------------------------- c8 coalesce

ORDER = "minitriton.backend.coalesce:memory_order"


def _order(choose: str, rest: str = "d for d in reversed(range(len(shape))) if d != best") -> str:
    return f"""
def memory_order(contig, shape):
{choose}
    return (best, *({rest}))
"""


_CHOOSE = """
    dims = [d for d in range(len(shape)) if shape[d] > 1]
    if len(shape) < 2 or not dims:
        return None
    best = max(dims, key=lambda d: (contig[d], d))
    if contig[best] <= 1:
        return None
"""

C8 = (
    M(
        "c8",
        "always the last dim first",
        ORDER,
        """
def memory_order(contig, shape):
    if len(shape) < 2 or max(contig) <= 1:
        return None
    return tuple(reversed(range(len(shape))))
""",
        "golden_order\\[column-major\\]|most_contiguous|16_byte_vectors\\[column-major\\]",
    ),
    M(
        "c8",
        "ties go to the lower dim",
        ORDER,
        _order(_CHOOSE.replace("(contig[d], d)", "(contig[d], -d)")),
        "tie",
    ),
    M(
        "c8",
        "dims of size 1 may come first",
        ORDER,
        _order(_CHOOSE.replace("if shape[d] > 1]", "]")),
        "size_1",
    ),
    M(
        "c8",
        "the other dims in forward order",
        ORDER,
        _order(_CHOOSE, "d for d in range(len(shape)) if d != best"),
        "last_to_first|golden_order\\[3d",
    ),
    M(
        "c8",
        "the other dims sorted by contiguity",
        ORDER,
        _order(
            _CHOOSE,
            "sorted((d for d in range(len(shape)) if d != best), key=lambda d: (-contig[d], -d))",
        ),
        "last_to_first|others-not-by-contiguity",
    ),
    M(
        "c8",
        "None never returned for a gather",
        ORDER,
        _order(_CHOOSE.replace("contig[best] <= 1", "contig[best] < 1")),
        "none_only|gather",
    ),
    M(
        "c8",
        "1-D blocks get an order",
        ORDER,
        _order(_CHOOSE.replace("len(shape) < 2 or not dims", "not dims")),
        "1d",
    ),
)

MUTANTS: tuple[CompilerMutant, ...] = (*C1, *C2, *C3, *C4, *C5, *C6, *C7, *C8)
