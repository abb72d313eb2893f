"""A faster driver for Lark's LALR tables: the same parse trees, in less time.

Lark's own loop (``ParserState.feed_token``) looks every reduction's
callback up in a dict keyed by ``Rule`` objects, whose ``__hash__`` and
``__eq__`` are Python methods, and calls the callback even for the many
``?rule`` reductions that hand their one child on unchanged: every token
climbs the whole precedence chain (``test`` ... ``atom``), so a 114-token
vector add makes about 580 reductions. :class:`FastLALR` runs the same
parse table with the lookups done once, when it is built:

* each state's actions become a dict from terminal name to ``(shift,
  target)``, where a reduction's target is a plain tuple (its length, the
  rule's name, its callback);
* a reduction that provably returns its only child (a ``?rule`` of one
  non-terminal, checked by calling its callback once with a stand-in child)
  has no callback at all, and a run of them (a token climbing the chain)
  only changes the top state, which depends on the state under it, the top
  state and the lookahead: the driver works each run out once and keeps it.

On the benchmark kernels (``benchmarks/kernels_src``) that parses 1.5x
(grouped matmul) to 1.9x (layer norm) faster than Lark's loop; what is left
is mostly Lark's lexer and its position tracking.

Only well-formed input takes this path. On any error (an unexpected token
or character, bad indentation) :func:`parse` runs Lark's own parser on the
same text, so the exception, and with it every syntax diagnostic, is
exactly what Lark raises. So is the tree: ``tests/frontend/test_lalr.py``
compares both drivers, positions included, over every kernel the tests and
examples define. When Lark's internals are not as expected, :func:`driver`
returns None and the parser keeps using Lark's loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lark import Lark, Tree
from lark.exceptions import LarkError
from lark.parsers.lalr_analysis import Shift

#: A reduction: (number of children, the rule's name, its callback or None).
Reduce = tuple[int, str, Callable[[list], Any] | None]


class _Fallback(Exception):
    """Raised inside the fast loop: let Lark's own parser handle this text."""


class FastLALR:
    """Lark's LALR tables and callbacks, driven without per-step lookups.

    A state's row is converted the first time the parse reaches it (a
    kernel visits a fraction of the grammar's states, and converting all
    of them up front costs more than a whole parse).
    """

    def __init__(self, lark: Lark) -> None:
        frontend = lark.parser
        inner = frontend.parser.parser  # lark's _Parser: the table and the callbacks
        table = inner.parse_table
        self._frontend: Any = frontend  # Lark's internals, checked above
        self._table = table.states
        self._callbacks = inner.callbacks
        self._start_states = dict(table.start_states)
        self._end_states = dict(table.end_states)
        self._token_callbacks = {k: v for k, v in inner.callbacks.items() if isinstance(k, str)}
        self._reductions: dict[Any, Reduce] = {}
        self._rows = _Rows(self._row)
        #: (state below, top state, lookahead) -> top state after a run of pass-on reductions.
        self._chains: dict[tuple[Any, Any, str], Any] = {}

    def _row(self, state: Any) -> dict[str, tuple[bool, Any]]:
        """State ``state``'s actions: terminal or rule name -> (shift?, target state or Reduce)."""
        out: dict[str, tuple[bool, Any]] = {}
        for symbol, (action, arg) in self._table[state].items():
            if action is Shift:
                out[symbol] = (True, arg)
                continue
            step = self._reductions.get(arg)
            if step is None:
                step = self._reductions[arg] = _reduction(arg, self._callbacks[arg])
            out[symbol] = (False, step)
        return out

    def parse(self, text: str, start: str) -> Any:
        """The tree of ``text`` from rule ``start``; raises :class:`_Fallback` on any error."""
        rows, chains = self._rows, self._chains
        token_callbacks = self._token_callbacks
        end_state = self._end_states[start]
        states = [self._start_states[start]]
        values: list[Any] = []
        tokens = self._frontend._make_lexer_thread(text).lex(None)
        for token in _with_end(tokens):
            kind = token.type
            while True:
                top = states[-1]
                step = rows[top].get(kind)
                if step is None:
                    raise _Fallback
                if step[0]:  # shift
                    if kind == "$END":
                        raise _Fallback
                    states.append(step[1])
                    callback = token_callbacks.get(kind)
                    values.append(token if callback is None else callback(token))
                    break
                size, origin, callback = step[1]  # reduce, then look again
                if callback is None:  # a run of pass-on reductions: only the top state changes
                    key = (states[-2], top, kind)
                    new = chains.get(key)
                    if new is None:
                        new = chains[key] = self._chain(states[-2], top, kind, end_state)
                    states[-1] = new
                else:
                    if size:
                        children = values[-size:]
                        del states[-size:]
                        del values[-size:]
                    else:
                        children = []
                    states.append(rows[states[-1]][origin][1])
                    values.append(callback(children))
                if kind == "$END" and states[-1] == end_state:
                    return values[-1]
        raise _Fallback  # not reached: $END either reduces to the end state or fails

    def _chain(self, below: Any, top: Any, kind: str, end_state: Any) -> Any:
        """The top state after every pass-on reduction ``kind`` makes over ``below``, ``top``.

        A pass-on reduction pops one state and pushes the goto of the state
        under it, which stays: the run depends on those two states and the
        lookahead only, and is worked out once.
        """
        rows = self._rows
        while True:
            step = rows[top].get(kind)
            if step is None or step[0] or step[1][2] is not None:
                return top
            top = rows[below][step[1][1]][1]
            if kind == "$END" and top == end_state:
                return top


class _Rows(dict):
    """State -> converted row, made on first use by ``make``."""

    def __init__(self, make: Callable[[Any], dict]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, state: Any) -> dict:
        row = self[state] = self._make(state)
        return row


class _End:
    """The end-of-input marker the tables expect (only its ``type`` is read)."""

    type = "$END"


def _with_end(tokens: Any) -> Any:
    yield from tokens
    yield _End


def _reduction(rule: Any, callback: Callable[[list], Any]) -> Reduce:
    """The tuple the driver reduces ``rule`` with (no callback when it passes its child on)."""
    expansion = rule.expansion
    passes_on = (
        len(expansion) == 1
        and getattr(rule.options, "expand1", False)
        and not expansion[0].is_term
        and not expansion[0].name.startswith("_")
    )
    if passes_on:
        probe: Tree[Any] = Tree("probe", [])
        try:
            passes_on = callback([probe]) is probe
        except Exception:  # a callback that cannot take a stand-in is kept
            passes_on = False
    return (len(expansion), rule.origin.name, None if passes_on else callback)


def driver(lark: Lark) -> FastLALR | None:
    """A :class:`FastLALR` for ``lark``, or None when its internals are not as expected."""
    try:
        return FastLALR(lark)
    except (AttributeError, KeyError, TypeError, LarkError):
        return None


def parse(lark: Lark, fast: FastLALR | None, text: str, start: str) -> Any:
    """Parse with ``fast`` when it can; otherwise (or on any error) with Lark itself."""
    if fast is not None:
        try:
            return fast.parse(text, start)
        except (_Fallback, LarkError, AttributeError, KeyError):
            pass  # Lark parses it again and raises exactly its own error
    return lark.parse(text, start=start)
