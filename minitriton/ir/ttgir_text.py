"""The ``ttgir`` dump as Triton prints it: each layout declared once, as an alias.

The GPU backend records each op's layout as an attribute (``layout =
"blocked<spt=[1, 8], tpw=[4, 8], wpc=[4, 1], order=[1, 0]>"``), which is
what :func:`~minitriton.ir.printer.print_module` prints. :func:`readable`
rewrites that text the way Triton's dumps read::

    #blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], ...}>
    #mma = #ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
    ...
    %offs_m = arith.add(%3, %4) : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>

A layout without a parent layout (blocked, MMA, shared) gets an alias;
slices and dot operands are written inline around their parent's alias. The
encoding goes into the result's tensor type; an op without a tensor result
keeps it as an attribute (``layout = #blocked``), and ``encoding = #shared``
names a shared-memory tile's layout. :func:`attribute_form` is the inverse,
which :func:`~minitriton.ir.parser.parse_module` applies to text that
declares aliases, so a readable dump parses back. Only the text changes: the
module and everything compiled from it are the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Our short parameter names -> Triton's (``blocked`` only).
_TRITON_KEYS = {"spt": "sizePerThread", "tpw": "threadsPerWarp", "wpc": "warpsPerCTA"}
_OUR_KEYS = {v: k for k, v in _TRITON_KEYS.items()}
#: Alias names by layout kind (others are named after their kind).
_ALIAS_BASE = {"nvidia_mma": "mma", "swizzled_shared": "shared", "nvmma_shared": "shared"}
_KINDS = r"(?:blocked|slice|nvidia_mma|dot_op|expand|swizzled_shared|nvmma_shared|linear)"
_STRING = r'"(?:[^"\\]|\\.)*"'
_LAYOUT_ATTR = re.compile(rf"layout = ({_STRING}|\[(?:{_STRING}(?:, )?)*\])")
_ENCODING_ATTR = re.compile(rf'encoding = "({_KINDS}<[^"]*>)"')
_LOC = re.compile(rf" loc\({_STRING}:\d+:\d+\)$")


@dataclass
class Layout:
    """A parsed layout: its kind and its parameters in order (values: text or Layout)."""

    kind: str
    params: list[tuple[str, str | Layout]]

    def nested(self) -> bool:
        """Whether a parameter is itself a layout (a slice's or dot operand's parent)."""
        return any(isinstance(v, Layout) for _, v in self.params)

    def ours(self) -> str:
        """The backend's attribute text: ``blocked<spt=[1, 8], ...>``."""
        inner = ", ".join(
            (f"{k}=" if k else "") + (v.ours() if isinstance(v, Layout) else v)
            for k, v in self.params
        )
        return f"{self.kind}<{inner}>"


def parse_ours(text: str) -> Layout:
    """Parse the backend's layout text (``slice<dim=0, parent=blocked<...>>``)."""
    layout, end = _parse_layout(text, 0)
    if end != len(text):
        raise ValueError(f"trailing text in layout {text!r}")
    return layout


def _parse_layout(text: str, i: int) -> tuple[Layout, int]:
    match = re.compile(r"(\w+)<").match(text, i)
    if match is None:
        raise ValueError(f"expected a layout at {text[i:]!r}")
    kind, i = match.group(1), match.end()
    params: list[tuple[str, str | Layout]] = []
    while text[i] != ">":
        key_match = re.compile(r"\s*(\w+)=").match(text, i)
        if key_match is not None:
            key, i = key_match.group(1), key_match.end()
        elif re.compile(r"\s*\w+<").match(text, i):  # positional: expand<dim=0, slice<...>>
            key, i = "", i + len(text[i:]) - len(text[i:].lstrip())
        else:
            raise ValueError(f"expected key=value at {text[i:]!r}")
        value: str | Layout
        if re.compile(r"\w+<").match(text, i):
            value, i = _parse_layout(text, i)
        else:
            start, depth = i, 0
            while depth or text[i] not in ",>":
                depth += {"[": 1, "]": -1}.get(text[i], 0)
                i += 1
            value = text[start:i].strip()
        params.append((key, value))
        if text[i] == ",":
            i += 1
    return Layout(kind, params), i + 1


class _Aliases:
    """The alias of each parent-less layout, in order of first use."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # our text -> alias
        self.defs: list[str] = []

    def write(self, layout: Layout) -> str:
        """The Triton text of ``layout``: an alias, or inline around its parent's alias."""
        if not layout.nested():
            key = layout.ours()
            if key not in self.names:
                base = _ALIAS_BASE.get(layout.kind, layout.kind)
                count = sum(1 for n in self.names.values() if re.fullmatch(rf"#{base}\d*", n))
                alias = f"#{base}{count or ''}"
                self.names[key] = alias
                self.defs.append(f"{alias} = {self._inline(layout)}")
            return self.names[key]
        return self._inline(layout)

    def _inline(self, layout: Layout) -> str:
        keys = _TRITON_KEYS if layout.kind == "blocked" else {}
        params = ", ".join(
            (f"{keys.get(k, k)} = " if k else "") + (self.write(v) if isinstance(v, Layout) else v)
            for k, v in layout.params
        )
        return f"#ttg.{layout.kind}<{{{params}}}>"


def readable(text: str) -> str:
    """``text`` (a printed module with layout attributes) as Triton's dumps show it."""
    aliases = _Aliases()
    lines = [_readable_line(line, aliases) for line in text.splitlines()]
    if not aliases.defs:
        return text
    return "\n".join([*aliases.defs, *lines]) + ("\n" if text.endswith("\n") else "")


def _readable_line(line: str, aliases: _Aliases) -> str:
    line = _ENCODING_ATTR.sub(lambda m: f"encoding = {aliases.write(parse_ours(m.group(1)))}", line)
    found = _LAYOUT_ATTR.search(line)
    if found is None:
        return line
    value = found.group(1)
    items = re.findall(_STRING, value) if value.startswith("[") else [value]
    layouts = [item[1:-1] for item in items]
    texts = [None if t == "-" else aliases.write(parse_ours(t)) for t in layouts]
    placed = _put_in_types(line, texts) if re.match(r"\s*%", line) else None
    if placed is None:  # no tensor result to carry it: an attribute, with the alias
        shown = texts[0] if len(texts) == 1 else "[" + ", ".join(t or '"-"' for t in texts) + "]"
        return line[: found.start()] + f"layout = {shown}" + line[found.end() :]
    return _drop_attr(placed, _LAYOUT_ATTR)


def _split_tail(line: str) -> tuple[str, str, str]:
    """``line`` -> (op text up to its types, the types, what follows: `` {`` and a loc)."""
    loc = _LOC.search(line)
    tail = loc.group(0) if loc else ""
    body = line[: loc.start()] if loc else line
    if body.endswith(" {"):
        body, tail = body[:-2], " {" + tail
    head, sep, types = body.rpartition(" : ")
    return (head + sep, types, tail) if sep else (body, "", tail)


def _put_in_types(line: str, encodings: list[str | None]) -> str | None:
    """``line`` with each encoding inside its result's tensor type (None: nowhere to put one)."""
    head, types, tail = _split_tail(line)
    parts = _split_top(types)
    if len(parts) != len(encodings):
        return None
    placed = False
    for i, (part, enc) in enumerate(zip(parts, encodings)):
        if enc is None:
            continue
        if not part.startswith("tensor<"):
            return None
        parts[i] = f"{part[:-1]}, {enc}>"
        placed = True
    return head + ", ".join(parts) + tail if placed else None


def _split_top(text: str) -> list[str]:
    """Split at commas outside ``<...>`` and ``[...]``."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += {"<": 1, "[": 1, ">": -1, "]": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text.strip():
        parts.append(text[start:].strip())
    return parts


def _drop_attr(line: str, pattern: re.Pattern[str]) -> str:
    """Remove one ``key = value`` from an attribute dict (and the dict if it empties)."""
    found = pattern.search(line)
    assert found is not None
    start, end = found.start(), found.end()
    if line[end : end + 2] == ", ":
        end += 2
    elif line[start - 2 : start] == ", ":
        start -= 2
    line = line[:start] + line[end:]
    return line.replace(" {}", "", 1)


# ---------------------------------------------------------------- back to attributes

_ALIAS_DEF = re.compile(r"^(#\w+) = (#ttg\..*)$")
_TRITON_ENC = re.compile(r"#ttg\.(\w+)<\{")


def has_aliases(text: str) -> bool:
    """Whether ``text`` is a readable dump (it declares layout aliases)."""
    return any(_ALIAS_DEF.match(line) for line in text.splitlines())


def attribute_form(text: str) -> str:
    """The inverse of :func:`readable`, line for line (alias lines become blank lines)."""
    table: dict[str, str] = {}
    out = []
    for line in text.splitlines():
        match = _ALIAS_DEF.match(line)
        if match:
            table[match.group(1)] = _ours(match.group(2), table)
            out.append("")
            continue
        out.append(_attribute_line(line, table))
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _ours(triton: str, table: dict[str, str]) -> str:
    """``#ttg.slice<{dim = 0, parent = #blocked}>`` -> ``slice<dim=0, parent=blocked<...>>``."""
    if triton in table:
        return table[triton]
    match = _TRITON_ENC.match(triton)
    if match is None or not triton.endswith("}>"):
        raise ValueError(f"not a layout: {triton!r}")
    kind, body = match.group(1), triton[match.end() : -2]
    keys = _OUR_KEYS if kind == "blocked" else {}
    params = []
    for item in _split_top_any(body):
        if item.startswith("#"):  # a positional layout
            params.append(_ours(item, table))
            continue
        key, _, value = item.partition(" = ")
        value = _ours(value, table) if value.startswith("#") else value
        params.append(f"{keys.get(key, key)}={value}")
    return f"{kind}<{', '.join(params)}>"


def _split_top_any(text: str) -> list[str]:
    """Split at commas outside any brackets (``<{[``)."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += {"<": 1, "[": 1, "{": 1, ">": -1, "]": -1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text.strip():
        parts.append(text[start:].strip())
    return parts


def _attribute_line(line: str, table: dict[str, str]) -> str:
    line = re.sub(r"encoding = (#[\w.]+(?:<\{.*?\}>)?)",
                  lambda m: f'encoding = "{_ours(m.group(1), table)}"', line)  # fmt: skip
    attr = re.search(r"layout = (?=[#\[])", line)
    if attr is not None:  # kept as an attribute (no tensor result carried it)
        end = _value_end(line, attr.end())
        value = line[attr.end() : end]
        items = _split_top_any(value[1:-1]) if value.startswith("[") else [value]
        ours = [f'"{_ours(v, table)}"' if v.startswith("#") else v for v in items]
        shown = ours[0] if len(ours) == 1 else "[" + ", ".join(ours) + "]"
        return line[: attr.start()] + f"layout = {shown}" + line[end:]
    if not re.match(r"\s*%", line):
        return line
    head, types, tail = _split_tail(line)
    parts = _split_top(types)
    encodings: list[str] = []
    for i, part in enumerate(parts):
        inner = _split_top(part[7:-1]) if part.startswith("tensor<") else []
        if len(inner) == 2:
            parts[i] = f"tensor<{inner[0]}>"
            encodings.append(_ours(inner[1], table))
        else:
            encodings.append("-")
    if all(e == "-" for e in encodings):
        return line
    value = f'"{encodings[0]}"' if len(encodings) == 1 else "[" + ", ".join(
        f'"{e}"' for e in encodings) + "]"  # fmt: skip
    return _add_attr(head, f"layout = {value}") + ", ".join(parts) + tail


def _value_end(line: str, i: int) -> int:
    """Where the attribute value starting at ``i`` ends (a ``,`` or ``}`` outside brackets)."""
    depth = 0
    while i < len(line):
        c = line[i]
        if depth == 0 and c in ",}":
            return i
        depth += {"<": 1, "[": 1, "{": 1, ">": -1, "]": -1, "}": -1}.get(c, 0)
        i += 1
    return i


def _add_attr(head: str, attr: str) -> str:
    """``head`` (``%x = op(...) {a = 1} : ``) with ``attr`` in its attribute dict."""
    body = head[: -len(" : ")]
    if body.endswith("}"):
        return body[:-1] + ", " + attr + "} : "
    return body + " {" + attr + "} : "
