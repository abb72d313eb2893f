"""The parser's shortcut for inlined ``?rules`` leaves trees and positions as Lark makes them."""

from __future__ import annotations

from lark import Lark, Tree

from minitriton.frontend import parser as P
from minitriton.jit import base_jit_function
from tests.kernels.fused_attention import _attn_fwd, _attn_fwd_inner
from tests.kernels.matmul import matmul_kernel
from tests.kernels.puzzles import conv2d_kernel


def plain_lark() -> Lark:
    """The same parser without the shortcut."""
    return Lark(
        P.load_grammar(), parser="lalr", lexer="basic", postlex=P.KernelIndenter(),
        start=["function_input", "expression_input"], propagate_positions=True,
        maybe_placeholders=True, cache=True,
    )  # fmt: skip


def positions(tree: Tree) -> list[tuple]:
    fields = ("line", "column", "start_pos", "end_line", "end_column", "end_pos")
    return [(t.data, *(getattr(t.meta, f, None) for f in fields)) for t in tree.iter_subtrees()]


def test_the_shortcut_is_installed():
    callbacks = P.lark_parser().parser.parser.parser.callbacks
    assert any(isinstance(cb, P._SkipInlinedPositions) for cb in callbacks.values())


def test_trees_and_positions_match_lark_without_the_shortcut():
    plain = plain_lark()
    for kernel in (_attn_fwd, _attn_fwd_inner, matmul_kernel, conv2d_kernel):
        src = base_jit_function(kernel).source
        text = P._Source.dedent(src.source, src.filename, src.first_line, 0).text
        ours = P.lark_parser().parse(text, start="function_input")
        theirs = plain.parse(text, start="function_input")
        assert ours == theirs
        assert positions(ours) == positions(theirs)
    expr = "(x[:, None] + 1) * -y.to(tl.float16)"
    ours = P.lark_parser().parse(expr + "\n", start="expression_input")
    assert positions(ours) == positions(plain.parse(expr + "\n", start="expression_input"))
