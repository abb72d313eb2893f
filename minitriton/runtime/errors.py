"""``triton.runtime.errors``: the errors a launch raises before it reaches the driver."""

from __future__ import annotations

from minitriton.diagnostics import UserError


class OutOfResources(UserError, Exception):
    """A compiled kernel needs more of a resource than the device has.

    Triton's signature and attributes: ``OutOfResources(required, limit,
    name)``, with ``name`` the resource ("shared memory", "registers",
    "threads"). MiniTriton adds the kernel's name and its configuration to
    the message, so that a user knows which launch and what to shrink.
    """

    def __init__(
        self, required: int, limit: int, name: str, kernel: str = "", config: str = ""
    ) -> None:
        super().__init__(required, limit, name)
        self.required = required
        self.limit = limit
        self.name = name
        self.kernel = kernel
        self.config = config

    def __str__(self) -> str:
        who = f"kernel '{self.kernel}'" + (f" ({self.config})" if self.config else "")
        return (
            f"{who}: out of resource: {self.name}, Required: {self.required}, "
            f"Hardware limit: {self.limit}. Reducing block sizes or `num_stages` may help."
        )

    def __reduce__(self) -> tuple[type, tuple[int, int, str, str, str]]:
        return (type(self), (self.required, self.limit, self.name, self.kernel, self.config))


class InterpreterError(UserError, Exception):
    """Triton's error for a kernel that fails while its interpreter runs it.

    The emulator's located errors (:class:`minitriton.emulator.errors.EmulatorError`:
    an out-of-bounds access, a failed ``tl.device_assert`` ...) derive from it,
    so ``pytest.raises(InterpreterError)`` written for Triton's interpreter
    catches them.
    """


#: Compile-error class -> the same class made an InterpreterError too (see below).
_INTERPRETED: dict[type, type] = {}


def as_interpreter_error(err: BaseException) -> BaseException:
    """``err``, a compile error of an emulator launch, as an :class:`InterpreterError` too.

    Triton's interpreter runs a kernel's Python, so a mistake that fails its
    compilation elsewhere (a descriptor block under 16 bytes, a type error)
    raises an ``InterpreterError`` there; tests written for it expect one in
    interpreter mode and a ``CompilationError`` otherwise. The emulator is
    MiniTriton's interpreter: its launch raises an error of both classes,
    with the same name, diagnostics and message.
    """
    base = type(err)
    cls = _INTERPRETED.get(base)
    if cls is None:
        cls = type(base.__name__, (base, InterpreterError), {"__module__": base.__module__})
        cls.__qualname__ = base.__qualname__
        cls.__doc__ = base.__doc__
        _INTERPRETED[base] = cls
    both = cls.__new__(cls, *err.args)
    both.__dict__.update(err.__dict__)
    both.args = err.args
    return both
