"""How the kernels are compiled (``sandbox/engine/core/jit.py``): every kernel is a ``@kernel`` (Python
calls it) or a ``@helper`` (only kernels call it, compiled without the entry points numba would otherwise
build); a helper called from Python by hand runs a copy compiled with the entry point instead."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

from sandbox.engine.core import clipping, jit, vecmath

CORE = Path(jit.__file__).parent


def core_dispatchers():
    """Every compiled function defined in a module of ``engine/core``, with its module's name."""
    for source in sorted(CORE.glob("*.py")):
        module = importlib.import_module(f"sandbox.engine.core.{source.stem}")
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
                yield source.stem, value


def test_no_kernel_is_declared_with_plain_njit():
    for source in CORE.glob("*.py"):
        if source.name == "jit.py":
            continue
        assert not re.search(r"^\s*@njit", source.read_text(encoding="utf-8"), re.MULTILINE), source.name


def test_kernels_cache_helpers_do_not_and_neither_builds_a_c_wrapper_nor_a_helper_a_python_entry():
    found = list(core_dispatchers())
    assert len(found) > 200
    for module, disp in found:
        name = f"{module}.{disp.py_func.__name__}"
        helper = isinstance(disp, jit.HelperDispatcher)
        caches = disp._cache is not None and type(disp._cache).__name__ == "FunctionCache"
        # a helper declared with its signature compiles on import: it must cache, or each launch recompiles it
        assert caches == (not helper or not disp._can_compile), name
        assert disp.targetoptions.get("no_cfunc_wrapper") is True, name
        assert bool(disp.targetoptions.get("no_cpython_wrapper")) == helper, name
    helpers = [d for _, d in found if isinstance(d, jit.HelperDispatcher)]
    assert len(helpers) > 100


def test_a_helper_called_by_hand_runs_a_python_callable_copy_of_itself():
    # vecmath.mad is a helper; tangent_basis (a kernel) runs helpers inside
    assert isinstance(vecmath.mad, jit.HelperDispatcher)
    t1, t2 = vecmath.tangent_basis((0.0, 1.0, 0.0))
    assert abs(np.dot(t1, t2)) < 1e-12 and abs(np.dot(t1, (0.0, 1.0, 0.0))) < 1e-12
    assert vecmath.mad((1.0, 2.0, 3.0), (1.0, 1.0, 1.0), 2.0) == (3.0, 4.0, 5.0)
    copy = vecmath.mad._by_hand
    assert not isinstance(copy, jit.HelperDispatcher) and copy.py_func is vecmath.mad.py_func
    assert not copy.targetoptions.get("no_cpython_wrapper")
    assert vecmath.mad.targetoptions["no_cpython_wrapper"]  # the helper itself is unchanged
    assert vecmath.mad((0.0, 0.0, 0.0), (1.0, 2.0, 3.0), 0.5) == (0.5, 1.0, 1.5)
    assert vecmath.mad._by_hand is copy  # compiled once
    # numba keys cache entries by function and signature: the copy of a helper that caches (one declared
    # with its signature, compiled on import) must not, or it would load the helper's entry-less code
    rows = np.arange(6.0).reshape(2, 3)
    assert type(vecmath.load3._cache).__name__ == "FunctionCache"
    assert vecmath.load3(rows, 1) == (3.0, 4.0, 5.0)
    assert type(vecmath.load3._by_hand._cache).__name__ == "NullCache"
    assert len(vecmath.load3.signatures) == 1 and vecmath.load3.targetoptions["no_cpython_wrapper"]


def test_the_seed_concepts_stay_callable_from_python():
    # Sutherland–Hodgman is a seed concept a lesson points to: a student can call it at the prompt,
    # although in a step only the pair tests call it (a helper)
    assert isinstance(clipping.clip_against_plane, jit.HelperDispatcher)
    square = np.array([(-1.0, 0.0, -1.0), (1.0, 0.0, -1.0), (1.0, 0.0, 1.0), (-1.0, 0.0, 1.0)])
    out = np.zeros((5, 3))
    m = clipping.clip_against_plane(square, 4, out, (1.0, 0.0, 0.0), 0.5)  # keep x <= 0.5
    assert m == 4
    kept = out[:m]
    assert kept[:, 0].max() == 0.5
    x, z = kept[:, 0], kept[:, 2]
    area = 0.5 * abs(np.dot(x, np.roll(z, -1)) - np.dot(z, np.roll(x, -1)))  # the shoelace formula
    assert area == pytest.approx(1.5 * 2.0)
    assert type(clipping.clip_against_plane._by_hand._cache).__name__ == "FunctionCache"


def test_the_decorators_take_a_signature_and_options_as_njit_does():
    @jit.helper("float64(float64)")
    def twice(x):
        return 2.0 * x

    @jit.kernel(error_model="numpy")
    def ratio(a, b):
        return twice(a) / b

    assert ratio(3.0, 0.0) == np.inf  # numpy's error model: no ZeroDivisionError
    assert twice.signatures and isinstance(twice, jit.HelperDispatcher)
    assert twice(1.5) == 3.0  # by hand: a copy with the entry point

    @jit.helper(error_model="numpy")
    def inverse(x):
        return 1.0 / x

    assert inverse(0.0) == np.inf  # the copy keeps the helper's options


def twice_the_sum(values):
    """A small function for the ``same_types`` tests, each compiling a fresh kernel of it."""
    return 2.0 * values.sum()


def test_a_same_types_kernel_calls_its_entry_point_directly_after_the_first_call(monkeypatch):
    monkeypatch.setattr(jit, "CHECK_TYPES", False)  # as outside the tests
    k = jit.kernel(same_types=True)(twice_the_sum)
    assert isinstance(k, jit.SameTypesDispatcher)
    assert k(np.arange(4.0)) == 12.0  # the first call: numba's dispatcher
    (only,) = k.overloads.values()
    assert k.__dict__["_entry"] is only.entry_point
    calls = []

    def counted(*args):
        calls.append(args)
        return only.entry_point(*args)

    k._entry = counted
    assert k(np.ones(3)) == 6.0 and len(calls) == 1  # the later ones: the entry point
    assert len(k.overloads) == 1


def test_the_tests_call_same_types_kernels_through_the_type_check_which_refuses_other_types():
    assert jit.CHECK_TYPES  # tests/conftest.py
    k = jit.kernel(same_types=True)(twice_the_sum)
    assert k(np.arange(4.0)) == 12.0 and k(np.ones(2)) == 4.0
    assert "_entry" not in k.__dict__  # every call checked
    with pytest.raises(TypeError, match="twice_the_sum"):
        k(np.arange(4))  # int64: another signature, which outside the tests would be read as float64


def test_a_helper_gets_no_machine_code_of_its_own_the_kernel_calling_it_carries_it():
    @jit.helper
    def thrice(x):
        return 3.0 * x

    @jit.kernel
    def plus_one(x):
        return thrice(x) + 1.0

    assert plus_one(2.0) == 7.0
    helper_code = thrice.overloads[thrice.signatures[0]].library
    kernel_code = plus_one.overloads[plus_one.signatures[0]].library
    assert isinstance(helper_code, jit.LazyCodeLibrary) and isinstance(kernel_code, jit.LazyCodeLibrary)
    assert helper_code._waiting  # optimised, linked into plus_one, never made machine code
    assert not kernel_code._waiting
    assert type(thrice._cache).__name__ == "NullCache"  # nothing to cache: plus_one's entry holds its code
    assert type(twice_known._cache).__name__ == "FunctionCache"  # compiled on import: cached


@jit.helper("float64(float64)")
def twice_known(x):
    return 2.0 * x


def test_compile_flags_read_all_at_once_give_what_numba_reads_one_by_one():
    from numba.core import targetconfig
    from numba.core.compiler import Flags

    assert targetconfig.TargetConfig.values is jit._config_values  # installed when jit.py is imported
    flags = Flags()
    flags.no_cpython_wrapper = True
    flags.error_model = "numpy"
    by_property = {name: getattr(flags, name) for name in Flags.options}
    assert flags.values() == by_property
    assert list(flags.values()) == list(Flags.options)
    same = Flags()
    same.error_model = "numpy"
    same.no_cpython_wrapper = True
    assert same == flags and hash(same) == hash(flags)
    same.boundscheck = True
    assert same != flags


def test_reference_counts_find_numbas_memory_records_without_extracting_the_other_fields():
    # jit._get_meminfos: the same (type, record) pairs as numba's own walk, which also pulled out every other
    # field on the way (an array's shape, strides, data pointer…) for LLVM to throw away
    from llvmlite import ir as llvm_ir
    from numba import typeof
    from numba.core.registry import cpu_target

    # a copy with the runtime on, as numba makes for each compile (``nrt`` is a cached property: asked of
    # numba's own context, it would stay off for every later compile in this process)
    context = cpu_target.target_context.subtarget(enable_nrt=True)
    assert type(context.nrt).get_meminfos is jit._get_meminfos  # installed when jit.py is imported

    def numbas_walk(builder, ty, val):  # numba's NRTContext.get_meminfos, as numba 0.68 writes it
        model = context.data_model_manager[ty]
        found = [(ty, model.get_nrt_meminfo(builder, val))] if model.has_nrt_meminfo() else []
        for member, get in model.traverse(builder):
            found.extend(numbas_walk(builder, member, get(val)))
        return found

    ty = typeof((np.zeros(3), 1.5, (np.zeros((2, 2), np.float32), 3, np.zeros(2, np.int64)), True))

    def walk(how):
        model = context.data_model_manager[ty]
        module = llvm_ir.Module()
        fn = llvm_ir.Function(module, llvm_ir.FunctionType(llvm_ir.VoidType(), [model.get_value_type()]), "f")
        builder = llvm_ir.IRBuilder(fn.append_basic_block())
        found = how(builder, ty, fn.args[0])
        return [t for t, _ in found], [i.opname for i in builder.block.instructions]

    types, code = walk(context.nrt.get_meminfos)
    numbas_types, numbas_code = walk(numbas_walk)
    assert types == numbas_types and len(types) == 3
    # one extraction per step on the way to each record: the first array (2), the tuple and its two
    # arrays (1 + 2 + 2); numba's walk took every field of every array too
    assert code == ["extractvalue"] * 7
    assert len(numbas_code) > 30


def test_statements_list_the_variables_numba_lists_in_the_same_order(monkeypatch):
    # jit._rec_list_vars against numba's own (as numba 0.68 writes it), on every statement of two large
    # kernels' IR: run_substeps and the narrow phase's dispatch
    from numba.core import ir
    from numba.core.compiler import run_frontend

    from sandbox.engine.core import narrowphase, substeps

    assert ir.Inst._rec_list_vars is jit._rec_list_vars  # installed when jit.py is imported

    def numbas(self, val):
        if isinstance(val, ir.Var):
            return [val]
        elif isinstance(val, ir.Inst):
            return val.list_vars()
        elif isinstance(val, (list, tuple)):
            return [v for item in val for v in numbas(self, item)]
        elif isinstance(val, dict):
            return [v for item in val.values() for v in numbas(self, item)]
        return []

    statements = [stmt for fn in (substeps.run_substeps, narrowphase.collide_shares)
                  for block in run_frontend(fn.py_func).blocks.values() for stmt in block.body]
    ours = [[v.name for v in stmt.list_vars()] for stmt in statements]
    monkeypatch.setattr(ir.Inst, "_rec_list_vars", numbas)
    theirs = [[v.name for v in stmt.list_vars()] for stmt in statements]
    assert len(statements) > 500 and sum(map(len, theirs)) > 1000
    assert ours == theirs


def test_importing_the_engine_again_compiles_nothing():
    # helpers declared with their signature compile as their module is imported; they must come from the
    # cache the next time (this process's import has cached them), or every launch compiles them again
    import subprocess
    import sys

    script = ("from numba.core import event\n"
              "names = []\n"
              "class Count(event.Listener):\n"
              "    def on_start(self, ev): names.append(ev.data['dispatcher'].py_func.__qualname__)\n"
              "    def on_end(self, ev): pass\n"
              "event.register('numba:compile', Count())\n"
              "import sandbox.engine\n"
              "print(names)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         cwd=CORE.parent.parent.parent)
    assert out.stdout.strip() == "[]"


def test_borrowed_and_stack_arrays_are_ordinary_arrays_without_an_owner():
    # refcount.py: a borrowed view reads and writes the memory of the array it was made from, and a stack
    # matrix holds what is written to it, within the function that made it
    from numba import njit

    from sandbox.engine.core.refcount import borrow, stack_matrix

    @njit
    def fill(a, pair):
        view = borrow(a)
        work = stack_matrix(3, 2)
        for i in range(3):
            for j in range(2):
                work[i, j] = 10.0 * i + j
        total = 0.0
        for i in range(3):
            view[i] = work[i, 0] + work[i, 1]
            total += view[i]
        # a tuple of arrays and a plain value: each array borrowed, the value kept
        (b, c), k = borrow(pair)
        b[0] = total
        c[1, 1] = k
        return total, work.shape[0], work.shape[1]

    a, b, c = np.zeros(3), np.zeros(2), np.zeros((2, 2))
    assert fill(a, ((b, c), 7.0)) == (63.0, 3, 2)
    np.testing.assert_array_equal(a, [1.0, 21.0, 41.0])
    np.testing.assert_array_equal(b, [63.0, 0.0])
    np.testing.assert_array_equal(c, [[0.0, 0.0], [0.0, 7.0]])


def test_keep_alive_keeps_a_borrowed_scratch_array_from_being_freed_and_reused():
    # refcount.keep_alive: numba frees a local array right after the last statement naming it, so that a
    # borrowed view of a scratch array pointed at freed memory, which the next allocation of the same size
    # took over (the narrow phase's heap corruption, eighteenth session). Named again after the views'
    # last use, the scratch stays allocated and new arrays get memory of their own. The same shape as
    # narrowphase.collide_shares: a tuple of scratch arrays borrowed, then arrays allocated; without the
    # keep_alive line the fresh points array took the borrowed one's address and its 9.0 showed through
    from numba import njit

    from sandbox.engine.core.refcount import borrow, keep_alive

    @njit
    def scratch_then_new():
        normal, points = np.zeros(3), np.zeros((4, 3))
        scratch = borrow((normal, points))
        fresh_normal = np.zeros(3)
        fresh_points = np.zeros((4, 3))
        fresh_normal[0] = 5.0  # would land in the borrowed views, were they the same memory
        fresh_points[0, 0] = 9.0
        out = ((scratch[0].ctypes.data, scratch[1].ctypes.data),
               (fresh_normal.ctypes.data, fresh_points.ctypes.data), (scratch[0][0], scratch[1][0, 0]))
        keep_alive((normal, points))
        return out

    borrowed, fresh, seen = scratch_then_new()
    assert set(borrowed).isdisjoint(fresh)
    assert seen == (0.0, 0.0)
