"""A compiled specialization as text, to compile it again later: Triton's ``specialization_data``.

Triton's ``jit_cache_hook`` receives ``compile["specialization_data"]``, a JSON
string; ``kernel.preload(data)`` compiles that specialization again (from the
cache when it is there) without the launch's arguments, and returns the
compiled kernel, whose ``hash`` equals the first one's. Tools store the
strings to warm a cache up before the first launch.

The text holds the kernel's name, every argument's specialization (kind,
IR type, the divisibility and equal-to-1 flags, a constexpr's value), the
compile options and the backend. Constexpr values may be numbers, strings,
booleans, ``None``, ``tl`` dtypes and (nested) tuples of these; a
specialization with any other value (a ``@jit`` function passed as a
constexpr, a named tuple) has no text (``None``), as it could not be read
back without running code.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from minitriton.compiler import CompileOptions
from minitriton.frontend.source import ArgSpec
from minitriton.ir.types import Type, parse_type

#: The format's version, so a later format refuses to read an older one.
VERSION = 1


class Unserializable(ValueError):
    """A value the text cannot hold."""


def dumps(name: str, specs: list[ArgSpec], options: CompileOptions, backend: str) -> str | None:
    """The specialization as JSON text, or None where a value cannot be written."""
    try:
        data = {
            "version": VERSION,
            "name": name,
            "backend": backend,
            "specs": [_spec(s) for s in specs],
            "options": _options(options),
        }
    except Unserializable:
        return None
    return json.dumps(data, sort_keys=True)


def loads(text: str, name: str) -> tuple[list[ArgSpec], CompileOptions, str]:
    """The specs, options and backend of ``text``, written for kernel ``name``."""
    data = json.loads(text)
    if data.get("version") != VERSION:
        raise ValueError(f"specialization data of version {data.get('version')}, not {VERSION}")
    if data["name"] != name:
        raise ValueError(f"specialization data of kernel '{data['name']}', not of '{name}'")
    specs = [_read_spec(s) for s in data["specs"]]
    fields = {f.name: f for f in dataclasses.fields(CompileOptions)}
    opts: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in data["options"].items()
    }
    unknown = sorted(set(opts) - set(fields))
    if unknown:
        raise ValueError(f"specialization data with unknown options {unknown}")
    return specs, CompileOptions(**opts), data["backend"]


def _options(options: CompileOptions) -> dict[str, Any]:
    return {f.name: _plain(getattr(options, f.name)) for f in dataclasses.fields(options)}


def _spec(spec: ArgSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"name": spec.name, "kind": spec.kind}
    if spec.type is not None:
        out["type"] = str(spec.type)
    if spec.kind == "tuple":
        cls, items = spec.value
        if cls is not tuple:
            raise Unserializable(f"a tuple argument of class {cls.__qualname__}")
        out["items"] = [_spec(item) for item in items]
    else:
        out["value"] = _value(spec.value)
    out["flags"] = [spec.divisible_by_16, spec.equal_to_1]
    return out


def _read_spec(data: dict[str, Any]) -> ArgSpec:
    kind = data["kind"]
    type_ = parse_type(data["type"]) if "type" in data else None
    if kind == "tuple":
        value: Any = (tuple, [_read_spec(item) for item in data["items"]])
    else:
        value = _read_value(data["value"])
    div, one = data["flags"]
    return ArgSpec(data["name"], kind, type_, value, divisible_by_16=div, equal_to_1=one)


def _value(v: Any) -> Any:
    """A JSON form of a constexpr value (tagged where JSON alone would lose its type)."""
    from minitriton.language.core import constexpr

    if isinstance(v, constexpr):
        return {"constexpr": _value(v.value)}
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return {"float": repr(v)}  # nan, inf and -0.0 survive
    if isinstance(v, Type):
        return {"type": str(v)}
    if isinstance(v, (tuple, list)):
        return {"tuple" if isinstance(v, tuple) else "list": [_value(x) for x in v]}
    raise Unserializable(f"a constexpr of type {type(v).__name__}")


def _read_value(v: Any) -> Any:
    from minitriton.language.core import constexpr

    if not isinstance(v, dict):
        return v
    ((tag, inner),) = v.items()
    if tag == "constexpr":
        return constexpr(_read_value(inner))
    if tag == "float":
        return float(inner)
    if tag == "type":
        return parse_type(inner)
    items = [_read_value(x) for x in inner]
    return tuple(items) if tag == "tuple" else items


def _plain(v: Any) -> Any:
    """An option's value as JSON (tuples become lists)."""
    if isinstance(v, tuple):
        return list(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise Unserializable(f"an option of type {type(v).__name__}")
