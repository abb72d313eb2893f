"""A small PTX evaluator: how the emulator runs ``tl.inline_asm_elementwise``.

The GPU backend pastes the PTX of ``tl.inline_asm_elementwise`` into the
kernel; the emulator instead evaluates it, one NumPy array per register
(one lane per asm call), so a kernel that calls short PTX snippets runs on
the CPU with the numbers a GPU gives. Triton's interpreter cannot run inline
PTX at all.

**Operands.** As on the GPU, ``$0`` onwards are the result registers, then
the operands' registers, in the order ``constraints`` lists them (``"=r,=r,
r,r"``: ``$0``, ``$1`` results, ``$2``, ``$3`` operands). With ``pack = n``
each call takes ``n`` consecutive elements (in row-major order of one
program's block); elements narrower than 32 bits share a register, the
first in the low bits (four int8 in one ``r``, two fp16 in one), wider ones
take ``n`` registers each. A block whose size is not a multiple of ``n``
pads the last call with zeros and drops what it computes for them.

**What it knows.** The instruction families used by real kernels:

* float: ``add sub mul fma mad div neg abs min max copysign rcp sqrt rsqrt
  ex2 lg2 sin cos tanh`` on ``.f32 .f64 .f16 .bf16 .f16x2 .bf16x2``, with the
  rounding modifiers ``.rn .rz .rm .rp``, ``.ftz`` (subnormal inputs and
  results flush to zero), ``.sat``, ``.approx``/``.full``, and ``.NaN``,
  ``.xorsign.abs`` on ``min``/``max``;
* integer: ``add sub mul mad`` (``.lo .hi .wide``, ``.sat``), ``div rem abs
  neg min max``, ``and or xor not cnot``, ``shl shr``, ``shf.{l,r}.{wrap,clamp}``,
  ``prmt`` (its default mode), ``lop3``, ``bfe bfi brev popc clz bfind``;
* ``setp`` (every comparison, ``p|q`` destinations, a combining ``.and/.or/.xor``),
  ``selp``, ``mov`` (with ``{a, b}`` to pack or unpack narrower registers),
  and ``cvt``: between integers, floats, ``.tf32`` (``.rna``, ``.rn``, ``.rz``,
  ``.satfinite``), the packed ``.f16x2``/``.bf16x2`` from two f32, and fp8
  (``.e4m3x2``/``.e5m2x2`` from two f32, and back to ``.f16x2``);
* blocks ``{ ... }`` with local ``.reg`` declarations (``.reg .b32 t<4>;``
  declares ``t0`` to ``t3``), and ``@p`` / ``@!p`` guarded instructions.

Anything else (memory operands ``[addr]``, branches, special registers,
other modes) is a :class:`PtxError` that names the instruction; the
emulator turns it into a located diagnostic.

**Differences from the GPU.** ``.approx`` instructions (``ex2 lg2 sin cos
tanh rcp rsqrt sqrt div``) compute the correctly rounded IEEE function: the
GPU's approximations differ in the last bits (a few ulps; ``sin``/``cos``
more far from zero). The rounding of ``add sub mul fma`` is exact in every
mode; ``div``, ``sqrt`` and ``rcp`` in the directed modes (``.rz .rm .rp``)
round the fp64 result, which differs only in rare cases; f64 computes with
NumPy (``fma.f64`` is not fused). A NaN a float operation makes is the
GPU's canonical NaN (``0x7fffffff`` in f32). Integer division by zero gives
all ones (undefined on the GPU).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from minitriton.emulator.tf32 import round_to_tf32
from minitriton.emulator.values import bf16_to_f32, f32_to_bf16, f32_to_fp8, fp8_to_f32
from minitriton.ir.types import ScalarType

U64 = np.uint64


class PtxError(Exception):
    """A PTX snippet the evaluator cannot run, with the statement that says why."""

    def __init__(self, message: str, help: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.help = help or (
            "the emulator runs these PTX instructions: " + ", ".join(sorted(HANDLERS))
            + "; launch with backend='gpu' for the others"
        )  # fmt: skip


# ---------------------------------------------------------------- parsing


@dataclass(frozen=True)
class Reg:
    """A register: ``$3``, or a name declared with ``.reg``."""

    name: str


@dataclass(frozen=True)
class Imm:
    """An immediate: an integer, ``0f3F800000`` / ``0d...`` bits, or a decimal float."""

    kind: str  # "int", "f32", "f64" (bits) or "float" (a value)
    value: int | float


@dataclass(frozen=True)
class Vec:
    """``{a, b}``: narrower registers packed into one, the first in the low bits."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class NotPred:
    """``!p``: a negated predicate operand."""

    name: str


@dataclass(frozen=True)
class PredPair:
    """``p|q``: the two destinations of ``setp`` (``q`` gets the negation)."""

    names: tuple[str, str]


Operand = Reg | Imm | Vec | NotPred | PredPair

TYPES = frozenset(
    [f"{k}{w}" for k in "bus" for w in (8, 16, 32, 64)]
    + ["f16", "bf16", "f32", "f64", "f16x2", "bf16x2", "tf32", "e4m3x2", "e5m2x2", "pred"]
)


@dataclass(frozen=True)
class Instr:
    """One PTX instruction: ``@p max.NaN.f32 $0, $1, $2;``."""

    text: str
    base: str  # "max"
    mods: tuple[str, ...]  # ("NaN",): the modifiers that are not types
    types: tuple[str, ...]  # ("f32",): the type suffixes, in order
    operands: tuple[Operand, ...]
    guard: tuple[str, bool] | None = None  # ("p", negated)

    def has(self, mod: str) -> bool:
        """Whether the modifier ``.mod`` is written."""
        return mod in self.mods

    @property
    def type(self) -> str:
        """The last type suffix (the one most instructions have)."""
        if not self.types:
            raise PtxError(f"'{self.text}': no type suffix (.f32, .u32, ...)")
        return self.types[-1]


@dataclass(frozen=True)
class Program:
    """A parsed snippet: its instructions and how many result and operand registers it has."""

    instrs: tuple[Instr, ...]
    outputs: int
    inputs: int


_NAME = r"[A-Za-z_%][\w$%]*"


@functools.lru_cache(maxsize=256)
def compile_asm(asm: str, constraints: str) -> Program:
    """Parse ``asm`` once (cached on its text) for registers laid out as ``constraints`` says."""
    kinds = [c.strip() for c in constraints.split(",") if c.strip()]
    kinds = [c for c in kinds if not c.startswith("~")]  # clobbers name no register
    for c in kinds:
        if not re.fullmatch(r"=?[rhlfdcb]", c):
            raise PtxError(f"constraint '{c}' is not one the emulator knows",
                           help="use register constraints: r (32 bits), h (16), l (64), "
                           "f (f32), d (f64), '=' before a result's")  # fmt: skip
    outputs = sum(c.startswith("=") for c in kinds)
    declared = {f"${i}" for i in range(len(kinds))}
    instrs = []
    for text in _statements(asm):
        if text.startswith("."):
            declared |= _declaration(text)
            continue
        instr = _instruction(text)
        _check(instr, declared)
        instrs.append(instr)
    return Program(tuple(instrs), outputs, len(kinds) - outputs)


def _statements(asm: str) -> list[str]:
    """The statements of ``asm``, comments removed; braces that open a block are dropped."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", asm, flags=re.S)
    out: list[str] = []
    current = ""
    depth = 0  # inside an operand's {a, b}
    for ch in text:
        if ch in "{}" and not current.strip():
            continue  # a block's scope: local names are unique enough in short snippets
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == ";" and depth == 0:
            out.append(" ".join(current.split()))
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(" ".join(current.split()))
    return out


def _declaration(text: str) -> set[str]:
    """The names a ``.reg .b32 a, b<4>;`` declares."""
    m = re.fullmatch(r"\.reg\s+\.(\w+)\s+(.+)", text)
    if not m or m.group(1) not in TYPES | {"b128"}:
        raise PtxError(f"'{text}': the emulator knows only '.reg .type names;' declarations")
    names: set[str] = set()
    for item in m.group(2).split(","):
        rm = re.fullmatch(rf"\s*({_NAME})\s*(?:<\s*(\d+)\s*>)?\s*", item)
        if not rm:
            raise PtxError(f"'{text}': cannot read the register name '{item.strip()}'")
        count = rm.group(2)
        names |= {f"{rm.group(1)}{i}" for i in range(int(count))} if count else {rm.group(1)}
    return names


def _instruction(text: str) -> Instr:
    m = re.fullmatch(r"(?:@(!?)(\S+)\s+)?([A-Za-z][\w.]*)\s*(.*)", text, flags=re.S)
    if not m or text.rstrip().endswith(":"):
        raise PtxError(f"'{text}': the emulator cannot read this statement (labels and "
                       "branches are not supported)")  # fmt: skip
    negated, guard, opcode, rest = m.groups()
    base, *parts = opcode.split(".")
    types = tuple(p for p in parts if p in TYPES)
    mods = tuple(p for p in parts if p not in TYPES)
    operands = tuple(_operand(o, text) for o in _split_operands(rest)) if rest.strip() else ()
    return Instr(text, base, mods, types, operands, (guard, bool(negated)) if guard else None)


def _split_operands(rest: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in rest:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    return [*parts, current.strip()]


def _operand(text: str, stmt: str) -> Operand:
    if text.startswith("{") and text.endswith("}"):
        return Vec(tuple(n.strip() for n in text[1:-1].split(",")))
    if text.startswith("!"):
        return NotPred(text[1:].strip())
    if "|" in text:
        p, q = (n.strip() for n in text.split("|", 1))
        return PredPair((p, q))
    if re.fullmatch(r"\$\d+|" + _NAME, text):
        return Reg(text)
    if re.fullmatch(r"0[fF][0-9a-fA-F]{8}", text):
        return Imm("f32", int(text[2:], 16))
    if re.fullmatch(r"0[dD][0-9a-fA-F]{16}", text):
        return Imm("f64", int(text[2:], 16))
    m = re.fullmatch(r"(-?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)[uU]?", text)
    if m:
        digits = m.group(2).lower()
        if digits.startswith(("0x", "0b")):
            value = int(digits[2:], 16 if digits[1] == "x" else 2)
        else:  # C's rule: a leading 0 means octal
            value = int(digits, 8 if digits.startswith("0") else 10)
        return Imm("int", -value if m.group(1) else value)
    if re.fullmatch(r"-?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?|-?\d+[eE][+-]?\d+", text):
        return Imm("float", float(text))
    if text.startswith("%") and "." in text:
        raise PtxError(f"'{stmt}': special registers such as {text} are not emulated",
                       help="compute it with tl builtins (tl.program_id, tl.arange) and pass "
                       "it in as an operand")  # fmt: skip
    if text.startswith("["):
        raise PtxError(f"'{stmt}': memory operands ({text}) cannot be emulated",
                       help="load and store with tl.load / tl.store around the asm")  # fmt: skip
    raise PtxError(f"'{stmt}': cannot read the operand '{text}'")


def _check(instr: Instr, declared: set[str]) -> None:
    """Parse-time checks: a known instruction, known modifiers, declared registers."""
    spec = HANDLERS.get(instr.base)
    name = ".".join([instr.base, *instr.mods, *instr.types])
    if spec is None:
        raise PtxError(f"'{instr.text}': the emulator does not know the PTX instruction "
                       f"'{instr.base}' ({name})")  # fmt: skip
    unknown = [m for m in instr.mods if m not in spec.mods]
    if unknown:
        raise PtxError(f"'{instr.text}': the emulator does not support '.{unknown[0]}' on "
                       f"'{instr.base}'")  # fmt: skip
    used = [n for o in instr.operands for n in _names(o)]
    used += [instr.guard[0]] if instr.guard else []
    for n in used:
        if n not in declared and n != "_":
            hint = " (no such operand: see the constraints)" if n.startswith("$") else ""
            raise PtxError(f"'{instr.text}': unknown register '{n}'{hint}",
                           help="declare local registers with '.reg .b32 name;' inside "
                           "{ ... }; special registers such as %tid are not emulated")  # fmt: skip


def _names(o: Operand) -> tuple[str, ...]:
    if isinstance(o, (Reg, NotPred)):
        return (o.name,)
    if isinstance(o, (Vec, PredPair)):
        return o.names
    return ()


# ---------------------------------------------------------------- values and bits


def width(t: str) -> int:
    """The number of bits of a value of PTX type ``t``."""
    special = {"pred": 1, "f16x2": 32, "bf16x2": 32, "tf32": 32, "e4m3x2": 16, "e5m2x2": 16}
    return special.get(t) or int(re.sub(r"\D", "", t))


def _mask(w: int) -> np.uint64:
    return U64((1 << w) - 1)


def decode(bits: np.ndarray, t: str) -> np.ndarray:
    """The float64 values of the ``t`` (f16, bf16, f32, f64) bit patterns ``bits``."""
    if t == "f64":
        return np.asarray(bits, dtype=U64).view(np.float64)
    if t == "bf16":
        return bf16_to_f32((bits & _mask(16)).astype(np.uint16)).astype(np.float64)
    if t == "f16":
        return (bits & _mask(16)).astype(np.uint16).view(np.float16).astype(np.float64)
    if t in ("f32", "tf32"):
        return (bits & _mask(32)).astype(np.uint32).view(np.float32).astype(np.float64)
    raise PtxError(f"'.{t}' is not a float type the emulator computes in")


#: The canonical NaN a float operation on the GPU makes.
_NAN_BITS = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF, "f64": 0x7FFFFFFFFFFFFFFF}


def encode(
    x: np.ndarray, t: str, mode: str = "rn", err: np.ndarray | None = None,
    ftz: bool = False, sat: bool = False, relu: bool = False,
) -> np.ndarray:  # fmt: skip
    """Round the float64 values ``x`` (exactly ``x + err``, if given) to ``t``'s bits.

    ``mode`` is PTX's rounding (rn, rz, rm, rp); ``ftz`` flushes an f32
    subnormal result to zero, ``sat`` clamps to [0, 1] (NaN to 0) and ``relu``
    clamps negatives to 0.
    """
    x = np.asarray(x, dtype=np.float64)
    if t == "f64":
        out = x.view(U64)
    else:
        if err is not None:  # round to odd: the last bit remembers an inexact sum
            inexact = (err != 0) & ((x.view(U64) & U64(1)) == 0)
            x = np.where(inexact, np.nextafter(x, np.where(err > 0, np.inf, -np.inf)), x)
        if t == "bf16":
            out = _to_bf16(x, mode)
        else:
            dt = np.float32 if t in ("f32", "tf32") else np.float16
            r = _round(x, dt, mode)
            if ftz and t == "f32":
                r = np.where(np.abs(r) < np.float32(2.0**-126), np.copysign(np.float32(0), r), r)
            out = r.view(np.uint32 if dt is np.float32 else np.uint16).astype(U64)
    back = decode(out, t)
    nan = np.isnan(back)
    out = np.where(nan, U64(_NAN_BITS[t]), out)
    if sat:
        out = np.where(nan | (back <= 0), U64(0), np.where(back >= 1, _one(t), out))
    if relu:
        out = np.where(back < 0, U64(0), out)
    return out


def _one(t: str) -> np.uint64:
    return U64({"f16": 0x3C00, "bf16": 0x3F80, "f32": 0x3F800000, "f64": 0x3FF0000000000000}[t])


def _round(x: np.ndarray, dt: type, mode: str) -> np.ndarray:
    """``x`` rounded to the float type ``dt`` in PTX's rounding ``mode``."""
    r: np.ndarray = x.astype(dt)
    if mode == "rn":
        return r
    back = r.astype(np.float64)
    fix, toward = {
        "rz": (np.abs(back) > np.abs(x), 0.0),
        "rm": (back > x, -np.inf),
        "rp": (back < x, np.inf),
    }[mode]
    return np.where(fix, np.nextafter(r, dt(toward)), r).astype(dt)


def _to_bf16(x: np.ndarray, mode: str) -> np.ndarray:
    f = _round(x, np.float32, "rn")
    inexact = (f.astype(np.float64) != x) & np.isfinite(x) & ((f.view(np.uint32) & 1) == 0)
    f = np.where(inexact, np.nextafter(f, np.where(x > f, np.inf, -np.inf).astype(np.float32)), f)
    if mode == "rn":
        return f32_to_bf16(f).astype(U64)
    bits = f.view(np.uint32)
    negative = (bits >> 31) == 1
    dropped = (bits & 0xFFFF) != 0
    up = dropped & np.isfinite(f) & ((mode == "rp") & ~negative | (mode == "rm") & negative)
    out = (bits >> 16) + up
    return np.where(np.isnan(f), (bits >> 16) | 0x40, out).astype(U64)


def _signed(bits: np.ndarray, w: int) -> np.ndarray:
    """The ``w``-bit two's complement values of ``bits`` as int64."""
    if w == 64:
        return bits.view(np.int64)
    b = (bits & _mask(w)).astype(np.int64)
    return np.where(b >= 1 << (w - 1), b - (1 << w), b)


# ---------------------------------------------------------------- the machine


@dataclass
class Machine:
    """The registers of every asm call at once: one uint64 array of bits per register."""

    lanes: int
    regs: dict[str, np.ndarray] = field(default_factory=dict)
    guard: np.ndarray | None = None

    def bits(self, o: Operand, t: str) -> np.ndarray:
        """Operand ``o`` read as the bits of a ``t`` value (immediates converted to ``t``)."""
        w = width(t)
        if isinstance(o, Reg):
            return self.regs.get(o.name, np.zeros(self.lanes, U64)) & _mask(w)
        if isinstance(o, Vec):
            return self._pack(o, w)
        if isinstance(o, Imm):
            return np.full(self.lanes, _imm_bits(o, t), U64)
        raise PtxError(f"'{o}' cannot be read as a .{t} value")

    def floats(self, o: Operand, t: str) -> np.ndarray:
        """Operand ``o`` as float64 values of the float type ``t``."""
        return decode(self.bits(o, t), t)

    def signed(self, o: Operand, t: str) -> np.ndarray:
        """Operand ``o`` as int64 values of the ``t``-sized signed integer."""
        return _signed(self.bits(o, t), width(t))

    def pred(self, o: Operand) -> np.ndarray:
        """A predicate operand (``p``, ``!p`` or an immediate) as booleans."""
        if isinstance(o, NotPred):
            return self.bits(Reg(o.name), "pred") == 0
        return self.bits(o, "pred") != 0

    def write(self, o: Operand, bits: np.ndarray, t: str) -> None:
        """Store ``bits`` (of a ``t`` value) into the destination ``o``, where the guard allows."""
        bits = np.broadcast_to(np.asarray(bits, dtype=U64) & _mask(width(t)), (self.lanes,))
        if isinstance(o, Vec):
            w = width(t) // len(o.names)
            for k, name in enumerate(o.names):
                self.write(Reg(name), (bits >> U64(k * w)) & _mask(w), f"b{w}")
            return
        if not isinstance(o, Reg):
            raise PtxError(f"'{o}' is not a register to write to")
        if o.name == "_":
            return
        if self.guard is not None:
            old = self.regs.get(o.name, np.zeros(self.lanes, U64))
            bits = np.where(self.guard, bits, old)
        self.regs[o.name] = np.array(bits, dtype=U64)

    def _pack(self, o: Vec, w: int) -> np.ndarray:
        part = w // len(o.names)
        out = np.zeros(self.lanes, U64)
        for k, name in enumerate(o.names):
            out |= self.bits(Reg(name), f"b{part}") << U64(k * part)
        return out


def _imm_bits(o: Imm, t: str) -> int:
    """The bits of the immediate ``o`` used as a ``t`` value."""
    if t in ("f16", "bf16", "f32", "f64"):
        if o.kind == ("f32" if t == "f32" else "f64" if t == "f64" else None):
            return int(o.value)  # the bits as written
        if o.kind == "f32":
            value = float(np.uint32(o.value).view(np.float32))
        elif o.kind == "f64":
            value = float(np.uint64(o.value).view(np.float64))
        else:
            value = float(o.value)
        return int(encode(np.array([value]), t)[0])
    if o.kind == "float":
        raise PtxError(f"the float immediate {o.value} needs a float instruction type, not .{t}")
    return int(o.value) & ((1 << width(t)) - 1)


def run(program: Program, inputs: list[np.ndarray], lanes: int) -> list[np.ndarray]:
    """Run ``program`` on the operand registers ``inputs`` (uint64 bits, one entry a lane).

    Returns the result registers ``$0`` to ``$k`` as uint64 bits.
    """
    if len(inputs) != program.inputs:
        raise PtxError(f"the constraints list {program.inputs} operand registers, but the "
                       f"operands fill {len(inputs)}",
                       help="list one constraint per register: with pack=n, n // (32 // bits) "
                       "registers per operand narrower than 32 bits, else n")  # fmt: skip
    m = Machine(lanes)
    for i, bits in enumerate(inputs):
        m.regs[f"${program.outputs + i}"] = np.asarray(bits, dtype=U64)
    with np.errstate(all="ignore"):
        for instr in program.instrs:
            m.guard = None
            if instr.guard is not None:
                name, negated = instr.guard
                m.guard = m.pred(NotPred(name) if negated else Reg(name))
            try:
                HANDLERS[instr.base].fn(instr, m)
            except (ValueError, TypeError, KeyError, IndexError) as e:  # a form not foreseen
                raise PtxError(f"'{instr.text}': the emulator cannot run this form ({e})") from e
    return [m.regs.get(f"${i}", np.zeros(lanes, U64)) for i in range(program.outputs)]


# ---------------------------------------------------------------- handlers


@dataclass(frozen=True)
class Handler:
    """How to run one instruction, and the modifiers it accepts."""

    fn: Callable[[Instr, Machine], None]
    mods: frozenset[str]


HANDLERS: dict[str, Handler] = {}

FLOAT_MODES = ("rn", "rz", "rm", "rp")
INT_MODES = ("rni", "rzi", "rmi", "rpi")
_FLOATS = ("f16", "bf16", "f32", "f64", "f16x2", "bf16x2")


def handles(*names: str, mods: str = "") -> Callable[[Callable[[Instr, Machine], None]], None]:
    """Register ``fn`` as the meaning of the instructions ``names``."""

    def register(fn: Callable[[Instr, Machine], None]) -> None:
        for name in names:
            HANDLERS[name] = Handler(fn, frozenset(mods.split()))

    return register


def _args(ins: Instr, count: int) -> tuple[Operand, ...]:
    if len(ins.operands) != count:
        raise PtxError(f"'{ins.text}': '{ins.base}' takes {count} operands, got "
                       f"{len(ins.operands)}")  # fmt: skip
    return ins.operands


def _mode(ins: Instr) -> str:
    return next((m for m in ins.mods if m in FLOAT_MODES), "rn")


def _float_lanes(
    ins: Instr,
    m: Machine,
    srcs: tuple[Operand, ...],
    fn: Callable[..., np.ndarray | tuple[np.ndarray, np.ndarray]],
) -> np.ndarray:
    """Apply ``fn`` to float64 operands, each half of an ``x2`` type apart; the rounded bits.

    ``fn`` returns the result, or ``(result, err)`` where ``result + err`` is exact.
    """
    t = ins.type
    lane_t, shifts = (t[:-2], (0, 16)) if t.endswith("x2") else (t, (0,))
    out = np.zeros(m.lanes, U64)
    for shift in shifts:
        vals = [decode(m.bits(s, t) >> U64(shift), lane_t) for s in srcs]
        if ins.has("ftz") and lane_t == "f32":
            vals = [np.where(np.abs(v) < 2.0**-126, np.copysign(0.0, v), v) for v in vals]
        res = fn(*vals)
        x, err = res if isinstance(res, tuple) else (res, None)
        bits = encode(x, lane_t, _mode(ins), err, ins.has("ftz"), ins.has("sat"), ins.has("relu"))
        out |= bits << U64(shift)
    return out


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s, e`` with ``s = fl(a + b)`` and ``s + e == a + b`` exactly."""
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(s), err, 0.0)


def _is_float(ins: Instr) -> bool:
    return bool(ins.types) and ins.type in _FLOATS


_ARITH_MODS = "rn rz rm rp ftz sat approx full lo hi wide relu"


@handles("add", "sub", "mul", "fma", "mad", "div", mods=_ARITH_MODS)
def _arith(ins: Instr, m: Machine) -> None:
    if _is_float(ins):
        _float_arith(ins, m)
    else:
        _int_arith(ins, m)


def _float_arith(ins: Instr, m: Machine) -> None:
    three = ins.base in ("fma", "mad")
    d, *srcs = _args(ins, 4 if three else 3)
    exact = ins.type != "f64"  # products of f32 and narrower are exact in float64
    fns: dict[str, Callable[..., np.ndarray | tuple[np.ndarray, np.ndarray]]] = {
        "add": lambda a, b: _two_sum(a, b) if exact else a + b,
        "sub": lambda a, b: _two_sum(a, -b) if exact else a - b,
        "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b,
        "fma": lambda a, b, c: _two_sum(a * b, c) if exact else a * b + c,
    }
    fns["mad"] = fns["fma"]
    m.write(d, _float_lanes(ins, m, tuple(srcs), fns[ins.base]), ins.type)


def _int_arith(ins: Instr, m: Machine) -> None:
    t = ins.type
    w = width(t)
    three = ins.base == "mad"
    d, *srcs = _args(ins, 4 if three else 3)
    if ins.base in ("div",):
        _int_div(ins, m, d, srcs[0], srcs[1], t, w)
        return
    if ins.base in ("add", "sub") and not (ins.has("sat")):
        a, b = m.bits(srcs[0], t), m.bits(srcs[1], t)
        m.write(d, a + b if ins.base == "add" else a - b, t)
        return
    if ins.base in ("add", "sub"):  # .sat: s32 clamps
        a, b = m.signed(srcs[0], t), m.signed(srcs[1], t)
        r = a + b if ins.base == "add" else a - b
        m.write(d, np.clip(r, -(1 << (w - 1)), (1 << (w - 1)) - 1).astype(np.int64).view(U64), t)
        return
    product, out_t = _multiply(ins, m, srcs[0], srcs[1], t)
    if three:
        product = product + m.bits(srcs[2], out_t)
    m.write(d, product, out_t)


def _multiply(ins: Instr, m: Machine, a_op: Operand, b_op: Operand,
              t: str) -> tuple[np.ndarray, str]:  # fmt: skip
    """The ``.lo``, ``.hi`` or ``.wide`` product's bits, and the result's type."""
    w, signed = width(t), t[0] == "s"
    a = m.signed(a_op, t).view(U64) if signed else m.bits(a_op, t)
    b = m.signed(b_op, t).view(U64) if signed else m.bits(b_op, t)
    if ins.has("wide"):
        if w > 32:
            raise PtxError(f"'{ins.text}': .wide takes 16- or 32-bit operands")
        return a * b, f"{t[0]}{2 * w}"
    if not ins.has("hi"):
        return a * b, t
    if w < 64:
        full = (m.signed(a_op, t) * m.signed(b_op, t)).view(U64) if signed else a * b
        return (full.view(np.int64) >> w).view(U64) if signed else full >> U64(w), t
    return _mul_hi64(a, b, signed), t


def _mul_hi64(a: np.ndarray, b: np.ndarray, signed: bool) -> np.ndarray:
    """The high 64 bits of the 128-bit product of ``a`` and ``b``, from 32-bit halves."""
    lo32 = U64(0xFFFFFFFF)
    a0, a1, b0, b1 = a & lo32, a >> U64(32), b & lo32, b >> U64(32)
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    middle = (p00 >> U64(32)) + (p01 & lo32) + (p10 & lo32)
    hi = p11 + (p01 >> U64(32)) + (p10 >> U64(32)) + (middle >> U64(32))
    if signed:  # a signed operand is its unsigned bits minus 2**64 when negative
        hi = hi - np.where(a >> U64(63) == 1, b, U64(0)) - np.where(b >> U64(63) == 1, a, U64(0))
    return hi


def _int_div(ins: Instr, m: Machine, d: Operand, a_op: Operand, b_op: Operand, t: str,
             w: int, remainder: bool = False) -> None:  # fmt: skip
    if t[0] == "s":
        a, b = m.signed(a_op, t), m.signed(b_op, t)
        safe = np.where(b == 0, 1, b)
        q = np.abs(a) // np.abs(safe) * np.sign(a) * np.sign(safe)  # C: toward zero
        r = (a - q * safe).view(U64)
        q = q.view(U64)
    else:
        a, b = m.bits(a_op, t), m.bits(b_op, t)
        safe = np.where(b == 0, U64(1), b)
        q, r = a // safe, a % safe
    out = r if remainder else q
    m.write(d, np.where(b == 0, _mask(w), out), t)


@handles("rem")
def _rem(ins: Instr, m: Machine) -> None:
    d, a, b = _args(ins, 3)
    _int_div(ins, m, d, a, b, ins.type, width(ins.type), remainder=True)


@handles("neg", "abs", mods="ftz")
def _neg_abs(ins: Instr, m: Machine) -> None:
    d, a = _args(ins, 2)
    t = ins.type
    if _is_float(ins):  # a sign-bit operation on the GPU: NaN payloads are kept
        bits = m.bits(a, t)
        signs = U64(0x80008000) if t.endswith("x2") else U64(1 << (width(t) - 1))
        out = bits ^ signs if ins.base == "neg" else bits & ~signs
        if ins.has("ftz") and t == "f32":
            out = np.where((out & U64(0x7F800000)) == 0, out & U64(0x80000000), out)
        m.write(d, out, t)
        return
    v = m.signed(a, t)
    m.write(d, (-v if ins.base == "neg" else np.abs(v)).view(U64), t)


@handles("min", "max", mods="ftz NaN xorsign abs relu")
def _min_max(ins: Instr, m: Machine) -> None:
    d, a_op, b_op = _args(ins, 3)
    if not _is_float(ins):
        t = ins.type
        signed = t[0] == "s"
        a = m.signed(a_op, t) if signed else m.bits(a_op, t)
        b = m.signed(b_op, t) if signed else m.bits(b_op, t)
        r = np.maximum(a, b) if ins.base == "max" else np.minimum(a, b)
        if ins.has("relu"):
            r = np.maximum(r, 0)
        m.write(d, r.view(U64) if signed else r, t)
        return
    m.write(d, _float_lanes(ins, m, (a_op, b_op), functools.partial(_float_min_max, ins)), ins.type)


def _float_min_max(ins: Instr, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    sign = np.signbit(a) ^ np.signbit(b)
    if ins.has("xorsign"):
        a, b = np.abs(a), np.abs(b)
    if ins.base == "max":  # +0 counts as greater than -0
        take_a = (a > b) | ((a == b) & ~np.signbit(a))
    else:
        take_a = (a < b) | ((a == b) & np.signbit(a))
    r = np.where(np.isnan(b), a, np.where(np.isnan(a), b, np.where(take_a, a, b)))
    if ins.has("NaN"):
        r = np.where(np.isnan(a) | np.isnan(b), np.nan, r)
    if ins.has("xorsign"):
        r = np.where(sign, -np.abs(r), np.abs(r))
    return r


@handles("copysign")
def _copysign(ins: Instr, m: Machine) -> None:
    d, a, b = _args(ins, 3)  # the sign of a, the rest of b
    w = width(ins.type)
    sign = U64(1 << (w - 1))
    m.write(d, (m.bits(b, ins.type) & ~sign) | (m.bits(a, ins.type) & sign), ins.type)


_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "rcp": lambda x: 1.0 / x,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "ex2": np.exp2,
    "lg2": np.log2,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
}


@handles(*_UNARY, mods="rn rz rm rp approx ftz full")
def _unary(ins: Instr, m: Machine) -> None:
    d, a = _args(ins, 2)
    if not _is_float(ins):
        raise PtxError(f"'{ins.text}': '{ins.base}' takes a float type")
    m.write(d, _float_lanes(ins, m, (a,), _UNARY[ins.base]), ins.type)


# ---------------------------------------------------------------- bits


@handles("and", "or", "xor")
def _logic(ins: Instr, m: Machine) -> None:
    d, a, b = _args(ins, 3)
    t = ins.type
    x, y = m.bits(a, t), m.bits(b, t)
    m.write(d, {"and": x & y, "or": x | y, "xor": x ^ y}[ins.base], t)


@handles("not", "cnot")
def _not(ins: Instr, m: Machine) -> None:
    d, a = _args(ins, 2)
    t = ins.type
    x = m.bits(a, t)
    m.write(d, ~x if ins.base == "not" else (x == 0).astype(U64), t)


@handles("shl", "shr")
def _shift(ins: Instr, m: Machine) -> None:
    d, a, b = _args(ins, 3)
    t, w = ins.type, width(ins.type)
    n = m.bits(b, "u32")
    if ins.base == "shl":
        out = np.where(n >= w, U64(0), m.bits(a, t) << np.minimum(n, U64(63)))
    elif t[0] == "s":  # arithmetic: a shift by the width or more leaves the sign
        out = (m.signed(a, t) >> np.minimum(n, U64(w - 1)).astype(np.int64)).view(U64)
    else:
        out = np.where(n >= w, U64(0), m.bits(a, t) >> np.minimum(n, U64(63)))
    m.write(d, out, t)


@handles("shf", mods="l r wrap clamp")
def _funnel(ins: Instr, m: Machine) -> None:
    d, a, b, c = _args(ins, 4)  # {b:a} shifted, b the high word
    n = m.bits(c, "u32")
    n = n & U64(31) if ins.has("wrap") else np.minimum(n, U64(32))
    both = (m.bits(b, "b32") << U64(32)) | m.bits(a, "b32")
    out = (both << n) >> U64(32) if ins.has("l") else both >> n
    m.write(d, out, "b32")


@handles("prmt")
def _prmt(ins: Instr, m: Machine) -> None:
    d, a, b, c = _args(ins, 4)
    if ins.mods:
        raise PtxError(f"'{ins.text}': the emulator knows prmt's default mode only")
    source = (m.bits(b, "b32") << U64(32)) | m.bits(a, "b32")  # bytes 0-3 from a, 4-7 from b
    selector = m.bits(c, "b32")
    out = np.zeros(m.lanes, U64)
    for k in range(4):
        sel = (selector >> U64(4 * k)) & U64(0xF)
        byte = (source >> ((sel & U64(7)) * U64(8))) & U64(0xFF)
        replicate = (sel & U64(8)) != 0  # msb of the selector: the byte's sign, eight times
        byte = np.where(replicate, np.where(byte >> U64(7) == 1, U64(0xFF), U64(0)), byte)
        out |= byte << U64(8 * k)
    m.write(d, out, "b32")


@handles("lop3")
def _lop3(ins: Instr, m: Machine) -> None:
    d, a, b, c, lut = _args(ins, 5)
    x, y, z = (m.bits(o, "b32") for o in (a, b, c))
    table = int(m.bits(lut, "b32")[0]) & 0xFF
    out = np.zeros(m.lanes, U64)
    for i in range(8):  # minterm i: bit 2 of i picks a, bit 1 b, bit 0 c
        if table >> i & 1:
            term = (x if i & 4 else ~x) & (y if i & 2 else ~y) & (z if i & 1 else ~z)
            out |= term
    m.write(d, out, "b32")


@handles("bfe")
def _bfe(ins: Instr, m: Machine) -> None:
    d, a, b, c = _args(ins, 4)
    t, w = ins.type, width(ins.type)
    x = m.bits(a, t)
    pos, length = m.bits(b, "u32") & U64(0xFF), m.bits(c, "u32") & U64(0xFF)
    out = np.zeros(m.lanes, U64)
    top = np.minimum(pos + length, U64(w)).astype(np.int64) - 1
    sbit = (x >> np.maximum(top, 0).astype(U64)) & U64(1)
    sbit = np.where((length == 0) | (t[0] == "u"), U64(0), sbit)
    for i in range(w):
        inside = (U64(i) < length) & (pos + U64(i) < U64(w))
        bit = np.where(inside, (x >> np.minimum(pos + U64(i), U64(w - 1))) & U64(1), sbit)
        out |= bit << U64(i)
    m.write(d, out, t)


@handles("bfi")
def _bfi(ins: Instr, m: Machine) -> None:
    d, a, b, c, e = _args(ins, 5)
    t, w = ins.type, width(ins.type)
    pos, length = m.bits(c, "u32") & U64(0xFF), m.bits(e, "u32") & U64(0xFF)
    length = np.minimum(length, np.where(pos >= w, U64(0), U64(w) - np.minimum(pos, U64(w))))
    field_mask = np.where(length >= 64, ~U64(0), (U64(1) << np.minimum(length, U64(63))) - U64(1))
    shift = np.minimum(pos, U64(63))
    out = (m.bits(b, t) & ~(field_mask << shift)) | ((m.bits(a, t) & field_mask) << shift)
    m.write(d, out, t)


@handles("brev", "popc", "clz", "bfind", mods="shiftamt")
def _bit_count(ins: Instr, m: Machine) -> None:
    d, a = _args(ins, 2)
    t, w = ins.type, width(ins.type)
    x = m.bits(a, t)
    if ins.base == "brev":
        out = np.zeros(m.lanes, U64)
        for i in range(w):
            out |= ((x >> U64(i)) & U64(1)) << U64(w - 1 - i)
        m.write(d, out, t)
        return
    if ins.base == "popc":
        m.write(d, np.bitwise_count(x).astype(U64), "u32")
        return
    if ins.base == "bfind" and t[0] == "s":  # the highest bit that differs from the sign
        x = np.where(_signed(x, w) < 0, ~x & _mask(w), x)
    length = np.zeros(m.lanes, np.int64)  # the bit length of x
    for i in range(w):
        length = np.where((x >> U64(i)) != 0, i + 1, length)
    if ins.base == "clz":
        m.write(d, (w - length).astype(U64), "u32")
        return
    found = length - 1 if not ins.has("shiftamt") else w - length
    m.write(d, np.where(length == 0, -1, found).astype(np.int64).view(U64), "u32")


# ---------------------------------------------------------------- moves, compares, conversions


@handles("mov")
def _mov(ins: Instr, m: Machine) -> None:
    d, a = _args(ins, 2)
    m.write(d, m.bits(a, ins.type), ins.type)


_COMPARE = "eq ne lt le gt ge lo ls hi hs equ neu ltu leu gtu geu num nan"


@handles("setp", mods=_COMPARE + " ftz and or xor")
def _setp(ins: Instr, m: Machine) -> None:
    ops = ins.operands
    if len(ops) not in (3, 4):
        raise PtxError(f"'{ins.text}': setp takes a destination, two operands and an "
                       "optional predicate")  # fmt: skip
    cmp = next((x for x in ins.mods if x in _COMPARE.split()), None)
    if cmp is None:
        raise PtxError(f"'{ins.text}': setp needs a comparison (.lt, .eq, ...)")
    result = _compare(ins, m, cmp, ops[1], ops[2])
    combine = next((x for x in ins.mods if x in ("and", "or", "xor")), None)
    if len(ops) == 4:
        c = m.pred(ops[3])
        result = {"and": result & c, "or": result | c, "xor": result ^ c}[combine or "and"]
    dests = ops[0].names if isinstance(ops[0], PredPair) else (ops[0],)
    for k, dest in enumerate(dests):
        m.write(Reg(dest) if isinstance(dest, str) else dest,
                (result if k == 0 else ~result).astype(U64), "pred")  # fmt: skip


def _compare(ins: Instr, m: Machine, cmp: str, a_op: Operand, b_op: Operand) -> np.ndarray:
    t = ins.type
    if t in _FLOATS:
        a, b = m.floats(a_op, t), m.floats(b_op, t)
        unordered = np.isnan(a) | np.isnan(b)
        if cmp in ("num", "nan"):
            return ~unordered if cmp == "num" else unordered
        if ins.has("ftz") and t == "f32":
            a, b = (np.where(np.abs(v) < 2.0**-126, 0.0, v) for v in (a, b))
        base = cmp[:-1] if cmp.endswith("u") else cmp
        ordered = _relation(base, a, b)
        return ordered | unordered if cmp.endswith("u") else ordered & ~unordered
    signed = t[0] == "s"
    a = m.signed(a_op, t) if signed else m.bits(a_op, t)
    b = m.signed(b_op, t) if signed else m.bits(b_op, t)
    base = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(cmp, cmp)
    return _relation(base, a, b)


def _relation(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if name not in ("eq", "ne", "lt", "le", "gt", "ge"):
        raise PtxError(f"the comparison '.{name}' does not apply to this type")
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b,
            "ge": a >= b}[name]  # fmt: skip


@handles("selp")
def _selp(ins: Instr, m: Machine) -> None:
    d, a, b, c = _args(ins, 4)
    m.write(d, np.where(m.pred(c), m.bits(a, ins.type), m.bits(b, ins.type)), ins.type)


_FP8 = {"e4m3x2": "f8e4nv", "e5m2x2": "f8e5"}


@handles("cvt", mods="rn rz rm rp rna rni rzi rmi rpi ftz sat satfinite relu")
def _cvt(ins: Instr, m: Machine) -> None:
    if len(ins.types) != 2:
        raise PtxError(f"'{ins.text}': cvt takes a destination and a source type")
    dst, src = ins.types
    if dst in ("f16x2", "bf16x2", *_FP8) and src == "f32":
        _cvt_pair(ins, m, dst)
    elif dst == "f16x2" and src in _FP8:
        d, a = _args(ins, 2)
        bits = m.bits(a, "b16")
        f16 = [encode(fp8_to_f32((bits >> U64(8 * k)) & U64(0xFF), _FP8[src]), "f16")
               for k in (0, 1)]  # fmt: skip
        m.write(d, f16[0] | (f16[1] << U64(16)), "b32")
    elif dst == "tf32":
        d, a = _args(ins, 2)
        m.write(d, _tf32(m.floats(a, "f32").astype(np.float32), ins), "b32")
    elif dst in ("f16", "bf16", "f32", "f64"):
        d, a = _args(ins, 2)
        _cvt_to_float(ins, m, d, a, dst, src)
    elif dst in TYPES and dst[0] in "bus":
        d, a = _args(ins, 2)
        _cvt_to_int(ins, m, d, a, dst, src)
    else:
        raise PtxError(f"'{ins.text}': the emulator cannot convert .{src} to .{dst}")


def _cvt_pair(ins: Instr, m: Machine, dst: str) -> None:
    """``cvt.rn.f16x2.f32 d, a, b``: ``a`` goes to the high half, ``b`` to the low."""
    d, hi, lo = _args(ins, 3)
    halves = []
    for o in (lo, hi):
        x = m.floats(o, "f32")
        if dst in _FP8:
            if ins.has("relu"):
                x = np.where(x < 0, 0.0, x)
            halves.append(f32_to_fp8(x.astype(np.float32), _FP8[dst]).astype(U64))
        elif ins.has("satfinite"):
            halves.append(_satfinite(x, dst[:-2], ins))
        else:
            halves.append(encode(x, dst[:-2], _mode(ins), relu=ins.has("relu")))
    w = 8 if dst in _FP8 else 16
    m.write(d, halves[0] | (halves[1] << U64(w)), f"b{2 * w}")


def _satfinite(x: np.ndarray, lane: str, ins: Instr) -> np.ndarray:
    big = {"f16": 65504.0, "bf16": float(np.float32(3.3895314e38))}[lane]
    bits = encode(np.clip(x, -big, big), lane, _mode(ins), relu=ins.has("relu"))
    return np.where(np.isnan(x), U64(_NAN_BITS[lane]), bits)


def _tf32(x: np.ndarray, ins: Instr) -> np.ndarray:
    """``cvt.{rna,rn,rz}{.satfinite}.tf32.f32``: fp32 bits with the low 13 cleared, rounded."""
    if ins.has("rna"):
        bits = round_to_tf32(x).view(np.uint32).astype(U64)
    else:
        raw = x.view(np.uint32).astype(U64)
        keep = U64(0xFFFFE000)
        finite = (raw & U64(0x7F800000)) != U64(0x7F800000)
        half = U64(0xFFF) + ((raw >> U64(13)) & U64(1)) if _mode(ins) == "rn" else U64(0)
        bits = np.where(finite, (raw + half) & keep, raw)
    if ins.has("satfinite"):
        overflow = np.isinf(bits.astype(np.uint32).view(np.float32)) & np.isfinite(x)
        bits = np.where(overflow, (bits & U64(0x80000000)) | U64(0x7F7FE000), bits)
    return np.where(np.isnan(x), U64(0x7FFFFFFF), bits)


def _cvt_to_float(ins: Instr, m: Machine, d: Operand, a: Operand, dst: str, src: str) -> None:
    if src in ("f16", "bf16", "f32", "f64"):
        x = m.floats(a, src)
        if ins.has("ftz") and src == "f32":
            x = np.where(np.abs(x) < 2.0**-126, np.copysign(0.0, x), x)
    elif src[0] in "su":
        x = (m.signed(a, src) if src[0] == "s" else m.bits(a, src)).astype(np.float64)
    else:
        raise PtxError(f"'{ins.text}': the emulator cannot convert .{src} to .{dst}")
    int_mode = next((x for x in ins.mods if x in INT_MODES), None)
    if int_mode is not None:  # round to an integer, in the same float type
        x = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[int_mode](x)
    bits = encode(x, dst, _mode(ins), ftz=ins.has("ftz"), sat=ins.has("sat"),
                  relu=ins.has("relu"))  # fmt: skip
    if ins.has("satfinite") and dst in ("f16", "bf16"):
        bits = _satfinite(x, dst, ins)
    m.write(d, bits, dst)


def _cvt_to_int(ins: Instr, m: Machine, d: Operand, a: Operand, dst: str, src: str) -> None:
    w = width(dst)
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dst[0] == "s" else (0, (1 << w) - 1)
    if src in ("f16", "bf16", "f32", "f64"):  # float to int always saturates; NaN gives 0
        x = m.floats(a, src)
        mode = next((x for x in ins.mods if x in INT_MODES), "rzi")
        x = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[mode](x)
        x = np.where(np.isnan(x), 0.0, x)
        if w < 64:
            out = np.clip(x, lo, hi).astype(np.int64).view(U64)
        elif dst[0] == "s":
            big = x >= 2.0**63  # no float64 below 2**63 rounds to it: saturate apart
            out = np.where(
                big, U64(2**63 - 1), np.maximum(x, -(2.0**63)).astype(np.int64).view(U64)
            )
        else:
            out = np.where(x >= 2.0**64, ~U64(0), np.maximum(x, 0.0).astype(U64))
        m.write(d, out, dst)
        return
    if src not in TYPES or src[0] not in "bus":
        raise PtxError(f"'{ins.text}': the emulator cannot convert .{src} to .{dst}")
    if src[0] == "s":
        v = m.signed(a, src)
        out = np.clip(v, lo, min(hi, 2**63 - 1)) if ins.has("sat") else v
        m.write(d, out.view(U64), dst)
    else:
        u = m.bits(a, src)
        m.write(d, np.minimum(u, U64(hi)) if ins.has("sat") else u, dst)


# ---------------------------------------------------------------- elementwise over blocks


def run_elementwise(
    asm: str, constraints: str, pack: int,
    args: list[tuple[np.ndarray, ScalarType]], results: list[ScalarType], rows: int = 1,
) -> list[np.ndarray]:  # fmt: skip
    """``tl.inline_asm_elementwise`` on NumPy blocks of one shape: the result blocks.

    The blocks hold ``rows`` programs' blocks one after the other (a leading
    program axis); each program's elements, in row-major order, make one asm
    call per ``pack`` of them, those narrower than 32 bits sharing a register
    as on the GPU.
    """
    program = compile_asm(asm, constraints)
    shape = args[0][0].shape if args else ()
    per_row = int(np.prod(shape, dtype=np.int64)) // rows
    calls = rows * -(-per_row // pack)
    registers = [r for data, t in args for r in _to_registers(data, t, pack, rows, calls)]
    out_count = sum(pack // _per_register(t, pack) for t in results)
    if program.outputs != out_count:
        raise PtxError(f"the constraints list {program.outputs} result registers, but the "
                       f"results need {out_count}")  # fmt: skip
    outs = run(program, registers, calls)
    blocks, at = [], 0
    for t in results:
        n = pack // _per_register(t, pack)
        bits = _from_registers(outs[at : at + n], t, pack).reshape(rows, -1)[:, :per_row]
        blocks.append(bits.reshape(shape))
        at += n
    return blocks


def _per_register(t: ScalarType, pack: int) -> int:
    """How many elements of type ``t`` share one asm register (Triton's rule)."""
    return min(max(32 // t.bitwidth, 1), pack)


def _to_registers(
    data: np.ndarray, t: ScalarType, pack: int, rows: int, calls: int
) -> list[np.ndarray]:
    """The asm registers (uint64 bits, one entry a call) that ``data`` travels in."""
    flat = np.ascontiguousarray(data).reshape(rows, -1)
    bits = flat.astype(U64) if t.bitwidth == 1 else flat.view(f"u{t.bitwidth // 8}").astype(U64)
    grouped = np.zeros((rows, calls // rows * pack), U64)  # each program's last call padded
    grouped[:, : bits.shape[1]] = bits
    grouped = grouped.reshape(calls, pack)
    per = _per_register(t, pack)
    regs = []
    for start in range(0, pack, per):
        reg = np.zeros(calls, U64)
        for k in range(per):
            reg |= grouped[:, start + k] << U64(k * t.bitwidth)
        regs.append(reg)
    return regs


def _from_registers(regs: list[np.ndarray], t: ScalarType, pack: int) -> np.ndarray:
    """The elements of type ``t`` (in call order) that the result registers ``regs`` hold."""
    per = _per_register(t, pack)
    mask = _mask(t.bitwidth)
    columns = [(reg >> U64(k * t.bitwidth)) & mask for reg in regs for k in range(per)]
    bits = np.stack(columns, axis=1).reshape(-1)
    if t.bitwidth == 1:
        return bits != 0
    return bits.astype(f"u{t.bitwidth // 8}").view(t.numpy)
