"""How every kernel is compiled: ``@kernel`` and ``@helper``, numba's ``@njit(cache=True)`` without the
entry points the engine never uses.

Beside a function's own machine code, numba builds two entry points into it, each compiled and optimised
like any other code: a **CPython wrapper**, which unboxes Python arguments (arrays, records, tuples) so
that Python can call the function, and a **C wrapper**, which lets the function be handed to another one
as a first-class function value. The engine never does the second, and three functions in five are called
only by other kernels, which never go through the first (they call the function's own code, or LLVM
inlines it). Measured on one cold compile of every kernel (``python -m bench.compile``; the wrappers timed
by instrumenting numba): the CPython wrappers cost 29 s of 244 s of CPU, 17 s of it for functions only
kernels call, and the C wrappers 9 s more.

- ``@kernel``: a function that Python calls in a session (the world's step, the app, a lesson). No C
  wrapper. It releases the GIL while it runs (``nogil``): the threads of ``threads.run_on_threads`` then
  find the GIL free whenever the calling thread is in a kernel, and take it without waiting (Python
  hands a GIL that is held over by putting the asking thread to sleep, some 40 µs to wake it on the
  development machine). Releasing and taking it back costs a kernel call some 0.1 µs.
- ``@kernel(same_types=True)``: a kernel of the step that Python always calls with arguments of the same
  types, arrays and records the world allocates itself (``SameTypesDispatcher``): after its first call,
  Python calls its compiled entry point without numba's check of each argument's type.
- ``@helper``: a function that only other kernels call in a session. Neither wrapper. A student at the
  prompt or a test may still call it from Python: the first such call compiles a copy with the CPython
  entry point (``by_hand``; 0.3 s for the clipping, cached like a kernel) and runs that. The seed
  concepts a lesson points to (a pair test, SAT's queries, Sutherland–Hodgman, an impulse) are mostly
  helpers: in a step only the narrow phase and the sub-steps call them, and their entry points, each
  built and turned into machine code with every callee linked in, were a tenth of ``sandbox warmup``
  (56.1 → 49.3 s for the detection half, alone on the machine).

Both take what ``numba.njit`` takes: an explicit signature first, then options such as
``parallel=True``, ``inline="always"`` or ``error_model="numpy"``.

**Machine code only where it runs.** numba turns every compiled function into machine code as soon as it
is compiled, helpers included, and a kernel then links each helper's LLVM code into its own module and
turns the whole into machine code again: the helper's own machine code is never run. ``LazyCodeLibrary``
waits until something asks for a function's address (Python calling a kernel) or for its object code
(the cache), which never happens to a helper. So helpers do not cache: a kernel's cache entry holds its
helpers' code, linked in, and a launch loads kernels only (``kernel_cache.py`` says where). The exception
is a helper declared with its signature, which numba compiles as its module is imported: that one caches,
or every launch would compile it again. Measured with ``python -m bench.compile``: 147 s of CPU before,
131 s after; the kernels' machine code is the same, so the results are bit for bit the same.

**One optimisation per module.** numba runs LLVM's function passes over each function as its code is
added to a library, then the cheap and the full module pipelines over the library's whole module, which
run those passes again. The first round is skipped (``LazyCodeLibrary._optimize_functions``): 3 % of
``sandbox warmup``'s CPU, and the step's results stay bit for bit the same (the state hashes of four
mixed scenes, 150–200 steps each) at the same speed.

**Compile flags compared faster** (``_config_values``): numba compares whole sets of compile flags while
it types calls, reading each option through a property; they are now read all at once (5 s of CPU).

**Reference counts without the rest** (``_get_meminfos``): to count a reference to a value, numba walks
its type and pulls out every field on the way, keeping only the arrays' memory records; a record such as
``BodyState`` (21 arrays of seven fields each) took some 150 instructions per count, all but 21 of them
thrown away by LLVM later, and Python's time to build and print them is much of a kernel's compile. The
walk now skips the fields that hold no memory record. It finds the same records, in the same order (the
test compares it with numba's walk), so the optimised code is the same.

**Variables listed faster** (``_rec_list_vars``): numba's analyses ask each statement of its IR for the
variables it uses, some two million times in ``sandbox warmup``, and every answer walked the statement's
attributes with four ``isinstance`` tests per value; the kind of each class is now looked up once. Same
variables, same order (tested).

The two together, each half of ``sandbox warmup`` compiled alone in one process: the detection half
53.6 → 49.1 s of CPU, the response half 56.8 → 51.2 s (with ``substeps.contact_pass`` no longer inlined,
see there); ``sandbox warmup`` about 10 % less time, run alternately with the version before (six pairs:
new / old 0.85–0.97, median 0.91; ``bench.compile --warmup``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from numba import njit
from numba.core import ir, targetconfig
from numba.core.caching import FunctionCache
from numba.core.codegen import JITCodeLibrary, JITCPUCodegen
from numba.core.registry import CPUDispatcher, cpu_target
from numba.core.runtime.context import NRTContext


class HelperDispatcher(CPUDispatcher):
    """A kernel compiled without its CPython entry point: other kernels call it as any other. Python may
    still call it by hand (a student at the prompt, a test): the first such call compiles a copy of the
    function that has the entry point (``by_hand``), and Python runs that copy."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        copy = self.__dict__.get("_by_hand")
        if copy is None:
            copy = self._by_hand = by_hand(self)
        return copy(*args, **kwargs)


CHECK_TYPES = os.environ.get("SANDBOX_CHECK_KERNEL_TYPES") == "1"
"""Every call of a ``same_types`` kernel through numba's dispatcher, which checks the arguments' types,
and a ``TypeError`` if they are not those of its first call: the tests run so (``tests/conftest.py``)."""


class SameTypesDispatcher(CPUDispatcher):
    """A kernel that Python always calls with arguments of the same types (``@kernel(same_types=True)``).
    Its first call goes through numba's dispatcher, which compiles it or loads it from the cache; later
    calls go straight to the compiled function's CPython entry point (numba's ``entry_point``), which
    unboxes the arguments as the types of that first call.

    What it buys: on every call numba's dispatcher works out the numba type of each argument, record
    fields included (a fingerprint of each array's dtype, dimensions and layout, looked up in a table),
    some 0.2 µs an array: 13 µs of each call of ``substeps.run_substeps``, whose records hold some 70
    arrays and numbers. A step calls some twenty kernels; the S2 pyramid, one thread, stepped 0.672 ms
    against 0.694 (20th percentile, the two ways alternated every 50 steps on one world; 0.660 with
    every kernel's entry point called directly, without this class's Python call in front). Why it is
    correct: the entry point is the one the dispatcher would have called for those types, so the
    results are the same to the last bit. What it gives up: numba's unboxing of an array does not check
    its dtype, so a call with other types would read memory as the wrong type; these kernels take only
    the world's own arrays, each allocated with its dtype once, and the test suite calls them through
    the dispatcher (``CHECK_TYPES``), which raises if any call's types differ from the first's."""

    def __call__(self, *args: Any) -> Any:
        entry = self.__dict__.get("_entry")
        if entry is not None:
            return entry(*args)
        result = CPUDispatcher.__call__(self, *args)
        if len(self.overloads) > 1:
            raise TypeError(f"kernel {self.py_func.__qualname__} called with argument types other than its "
                            f"first call's: {list(self.overloads)}")
        if not CHECK_TYPES:
            self._entry = next(iter(self.overloads.values())).entry_point
        return result


def by_hand(helper: HelperDispatcher) -> Any:
    """A Python-callable copy of ``helper``: the same function and ``njit`` options, with the CPython entry
    point. It caches unless the helper does (one declared with its signature): numba keys a cache entry by
    function and signature only, so the copy would load the helper's own entry, which has no entry point."""
    caches = isinstance(helper._cache, FunctionCache)
    return njit(cache=not caches, no_cfunc_wrapper=True, **helper.njit_options)(helper.py_func)


class LazyCodeLibrary(JITCodeLibrary):
    """numba's library of compiled code (one per compiled function, its callees' code linked in), made
    into machine code only when an address or the object code is asked of it (see the module)."""

    _waiting = False  # optimised and ready to link into others, no machine code yet

    def _optimize_functions(self, ll_module: Any) -> None:
        # no per-function passes before linking: the library's module passes run the full pipeline anyway
        # (see the module); only the data layout they would have set is kept
        ll_module.data_layout = self._codegen._data_layout

    def finalize(self) -> None:
        self._waiting = True
        super().finalize()

    def _finalize_final_module(self) -> None:
        # finalize() ends here: linking into other libraries needs only the optimised module
        if self._waiting:
            self._finalized = True
        else:  # a library loaded from the cache, whose machine code is there already
            super()._finalize_final_module()

    def _emit(self) -> None:
        if self._waiting:
            self._waiting = False
            super()._finalize_final_module()

    def get_pointer_to_function(self, name: str) -> int:
        self._ensure_finalized()
        if self._waiting:
            if not any(f.name == name and not f.is_declaration for f in self._final_module.functions):
                return 0  # as numba answers for a name it lacks (a helper's Python entry point)
            self._emit()
        return super().get_pointer_to_function(name)

    def _get_compiled_object(self) -> bytes:
        self._emit()
        return super()._get_compiled_object()


class LazyCodegen(JITCPUCodegen):
    """numba's code generator, making ``LazyCodeLibrary`` libraries."""

    _library_class = LazyCodeLibrary

    def set_env(self, env_name: str, env: Any) -> None:
        # a function's environment is a global variable of its machine code: none yet, nothing to set
        # (the engine's kernels use it only for Python objects, which they never touch)
        if self._engine.get_global_value_address(env_name):
            super().set_env(env_name, env)


# numba's one code generator for the CPU, built with its target context: only its class changes
cpu_target.target_context.codegen().__class__ = LazyCodegen


_option_defaults: dict[type, dict[str, Any]] = {}


def _config_values(self: targetconfig.TargetConfig) -> dict[str, Any]:
    """Every option of a set of compile flags, the ones set and the defaults: what numba's
    ``TargetConfig.values`` returns, without reading the options one by one through their properties.
    numba compares the flags of the compile under way with those of each cached overload every time it
    types a call to one (``np.empty``, ``min``, a tuple's ``len``: some 90 000 times in one cold compile),
    and that read had cost 5 s of a 134 s compile (``bench.compile``, measured side by side)."""
    cls = type(self)
    defaults = _option_defaults.get(cls)
    if defaults is None:
        defaults = _option_defaults[cls] = {name: option.default for name, option in cls.options.items()}
    return {**defaults, **self._values}


targetconfig.TargetConfig.values = _config_values


def _decorate(fn_or_signature: Any, options: dict[str, Any], python_entry: bool,
              same_types: bool = False) -> Any:
    """``njit`` with ``options``, used bare (``@kernel``) or called (``@kernel(parallel=True)``,
    ``@kernel("void(float64[:])")``)."""
    if callable(fn_or_signature):  # used bare: @kernel
        return _decorate(None, options, python_entry, same_types)(fn_or_signature)
    signature = () if fn_or_signature is None else (fn_or_signature,)
    # a helper given its signature is compiled when its module is imported, on every launch, unless cached
    flags = {"cache": python_entry or bool(signature), "no_cfunc_wrapper": True, **options}
    if not python_entry:
        flags["no_cpython_wrapper"] = True

    def wrap(fn: Callable) -> Any:
        jitted = njit(*signature, **flags)(fn)
        if not python_entry and isinstance(jitted, CPUDispatcher):  # not so under NUMBA_DISABLE_JIT
            # numba builds the dispatcher itself; only its class changes, to one that sends Python's
            # calls to a copy
            jitted.__class__ = HelperDispatcher
            jitted.njit_options = options  # for its Python-callable copy (by_hand)
        elif same_types and isinstance(jitted, CPUDispatcher):
            jitted.__class__ = SameTypesDispatcher
        return jitted

    return wrap


def kernel(fn_or_signature: Any = None, *, same_types: bool = False, **options: Any) -> Any:
    """``@njit(cache=True, nogil=True)`` for a function Python calls, without the C wrapper (see the
    module); with ``same_types``, Python's calls after the first skip numba's type check
    (``SameTypesDispatcher``)."""
    return _decorate(fn_or_signature, {"nogil": True, **options}, python_entry=True, same_types=same_types)


def helper(fn_or_signature: Any = None, **options: Any) -> Any:
    """``@njit`` for a function only other kernels call: no entry point for Python and no C wrapper, no
    cache entry of its own unless given its signature (see the module); a call from Python runs a copy
    compiled with the entry point (``by_hand``)."""
    return _decorate(fn_or_signature, options, python_entry=False)


_holds_meminfo: dict[Any, bool] = {}


def _get_meminfos(self: Any, builder: Any, ty: Any, val: Any) -> list[tuple[Any, Any]]:
    """The memory records (NRT meminfos) inside value ``val`` of numba type ``ty``, as ``(type, pointer)``
    pairs: what numba's ``NRTContext.get_meminfos`` returns, in the same order, with LLVM code to extract
    only the fields on the way to one (see the module). A field's type holds a record if its data model
    or one nested in it has one (numba's ``contains_nrt_meminfo``), asked once per type."""
    dmm = self._context.data_model_manager
    model = dmm[ty]
    found = []
    if model.has_nrt_meminfo():
        found.append((ty, model.get_nrt_meminfo(builder, val)))
    for member, get in model.traverse(builder):
        holds = _holds_meminfo.get(member)
        if holds is None:
            holds = _holds_meminfo[member] = dmm[member].contains_nrt_meminfo()
        if holds:
            found.extend(self.get_meminfos(builder, member, get(val)))
    return found


NRTContext.get_meminfos = _get_meminfos

# the kind of value ``_collect_vars`` meets, by class; nonzero so that ``dict.get(...) or`` tells a miss
_LEAF, _VAR, _INST, _SEQUENCE, _MAPPING = range(1, 6)
_kinds: dict[type, int] = {}


def _kind(cls: type) -> int:
    """What ``Inst._rec_list_vars`` would do with an instance of ``cls``, in its order of tests: a variable
    is listed, an instruction asked for its own, a list or tuple and a dict's values walked, the rest
    skipped."""
    if issubclass(cls, ir.Var):
        kind = _VAR
    elif issubclass(cls, ir.Inst):
        kind = _INST
    elif issubclass(cls, (list, tuple)):
        kind = _SEQUENCE
    elif issubclass(cls, dict):
        kind = _MAPPING
    else:
        kind = _LEAF
    _kinds[cls] = kind
    return kind


def _collect_vars(items: Any, out: list[ir.Var]) -> None:
    """Append to ``out`` the variables in ``items``, depth first (see ``_rec_list_vars``)."""
    for value in items:
        kind = _kinds.get(value.__class__) or _kind(value.__class__)
        if kind == _LEAF:
            continue
        if kind == _VAR:
            out.append(value)
        elif kind == _INST:
            out.extend(value.list_vars())
        elif kind == _SEQUENCE:
            _collect_vars(value, out)
        else:
            _collect_vars(value.values(), out)


def _rec_list_vars(self: ir.Inst, val: Any) -> list[ir.Var]:
    """The variables in ``val`` (a statement's attributes, an expression's arguments), in the order numba's
    ``Inst._rec_list_vars`` lists them, each value's class looked up once rather than tested four times
    (see the module)."""
    out: list[ir.Var] = []
    _collect_vars((val,), out)
    return out


ir.Inst._rec_list_vars = _rec_list_vars

