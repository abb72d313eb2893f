"""Kernels that wait with ``tl.atomic_poll`` (Triton 3.8): on a flag that is set, on one that
another program sets, with a timeout, and the mistakes the frontend refuses.
"""

from __future__ import annotations

import minitriton as triton
import minitriton.language as tl


@triton.jit
def poll_then_store(flag, out, expected_value, SEM: tl.constexpr, SCOPE: tl.constexpr):
    tl.atomic_poll(flag, expected_value, sem=SEM, scope=SCOPE)
    tl.store(out, 1)


@triton.jit
def poll_with_timeout(flag, out, timeout_ns):
    matched = tl.atomic_poll(flag, 1, timeout_ns=timeout_ns)
    tl.store(out, matched)


@triton.jit
def wait_for_a_later_program(flag, payload, out):
    if tl.program_id(0) == 0:
        tl.atomic_poll(flag, 1, sem="acquire", scope="gpu")
        tl.store(out, tl.load(payload))
    else:
        tl.store(payload, 42)
        tl.atomic_xchg(flag, 1, sem="release", scope="gpu")


@triton.jit
def relay(flags, out, n):
    """Program i waits for program i + 1's flag (a member-function poll), then sets its own."""
    pid = tl.program_id(0)
    value = 1
    if pid < n - 1:
        (flags + pid + 1).atomic_poll(1)
        value = tl.load(out + pid + 1) + 1
    tl.store(out + pid, value)
    tl.atomic_xchg(flags + pid, 1)


@triton.jit
def wait_or_give_up(flag, out, timeout_ns):
    """Program 0 waits for program 1 with a generous timeout; program 1 sets the flag."""
    if tl.program_id(0) == 0:
        tl.store(out, tl.atomic_poll(flag, 7, timeout_ns=timeout_ns))
    else:
        tl.atomic_xchg(flag, 7)


@triton.jit
def poll_a_block(flags):
    tl.atomic_poll(flags + tl.arange(0, 4), 1)


@triton.jit
def poll_floats(flag):
    tl.atomic_poll(flag, 1.0)


@triton.jit
def poll_with_release(flag):
    tl.atomic_poll(flag, 1, sem="release")


@triton.jit
def poll_with_negative_timeout(flag):
    tl.atomic_poll(flag, 1, timeout_ns=-1)


@triton.jit
def poll_for_a_block(flag):
    tl.atomic_poll(flag, tl.full([4], 1, tl.int32))
