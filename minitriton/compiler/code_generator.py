"""``triton.compiler.code_generator``: where Triton's AST-to-IR visitor lives.

MiniTriton's counterpart is :class:`~minitriton.frontend.lower.FunctionLowerer`,
which lowers one function's Lark AST to IR; it is exported here under Triton's
name so that code importing ``CodeGenerator`` imports. Its methods are
MiniTriton's own (``lower_stmts`` where Triton has ``visit_compound_statement``).
"""

from __future__ import annotations

from minitriton.frontend.lower import FunctionLowerer as CodeGenerator

__all__ = ["CodeGenerator"]
