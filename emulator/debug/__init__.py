"""Tools beside the machine: they watch the emulator run, and never change what it computes.

The emulator's core (``minitriton.emulator``: the interpreter, the op
semantics, the scheduler, memory) runs IR and knows nothing of these; each
tool here attaches to a launch as a listener (:mod:`.tools`) and reads what
the core does:

* :mod:`.debugger`: the ``minitriton debug`` stepper, with breakpoints and
  expressions evaluated by :mod:`.debug_expr` (the one part that parses
  Python source, through the frontend);
* :mod:`.checks`: race, uninitialized-read and index-overflow checks
  (``minitriton check``);
* :mod:`.tracer` and :mod:`.trace_plot`: every load and store, with pictures
  and a coalescing table (``minitriton trace``);
* :mod:`.passcheck`: runs a kernel after every pass and names the first pass
  that changes its results (``minitriton check-passes``).

The names users import (``minitriton.emulator.Debugger``,
``minitriton.emulator.empty``, ``minitriton.emulator.trace``...) stay on the
emulator package and load these modules on first use.
"""
