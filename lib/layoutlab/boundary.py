"""The checked public boundary: every public callable refuses bad input with a :class:`LayoutError` (issue 29).

One mechanism instead of two hundred ``isinstance`` checks: :func:`checked` wraps a public function (or, in place,
a public class's ``__init__``) so that a call which fails with a raw Python error (``TypeError``,
``AttributeError``, ``IndexError``, ``ZeroDivisionError`` ...) is explained *once, at the boundary*: the
arguments are bound to the signature (a wrong count of arguments is refused with the signature) and each is
compared with the *kind* it should have, read from the small declarative table :data:`PARAM_KINDS` (a parameter
name -> a kind, with per-operation exceptions in :data:`OVERRIDES`). The first argument of the wrong kind is
named in a ``LayoutError`` with what was given, what is valid and, for the classic mix-ups, the remedy (a CuTe
``Layout`` where a ``LinearLayout`` is expected: ``linear_layout_from_cute(layout)``). A failure that no kind
explains propagates unchanged: that is a defect of the library, and ``tests/test_public_boundary.py`` finds it.

The kinds are checked only when the call has already failed, so a correct call pays one Python frame and nothing
else; the library's internal calls (``composition`` inside ``logical_divide``) do not pass the boundary at all.

>>> from layoutlab import Layout, bank_of, cute_from_linear_layout
>>> cute_from_linear_layout(Layout((4, 8), (8, 1)))
Traceback (most recent call last):
layoutlab.errors.LayoutError: cute_from_linear_layout(): ll must be a LinearLayout, got the CuTe Layout (4,8):(8,1); \
it is a CuTe layout: convert it with linear_layout_from_cute(layout) (a swizzle: swizzle_to_linear_layout(sw, bits))
>>> bank_of(Layout(8))
Traceback (most recent call last):
layoutlab.errors.LayoutError: bank_of(): address must be an int, got the CuTe Layout 8:1; a layout maps a \
coordinate to an offset: call it, layout(i), to get an int
"""

from __future__ import annotations

import enum
import functools
import inspect
import numbers

from .cute.atom import CopyAtom, dtype_name, MmaAtom, MmaOp
from .cute.basis import ScaledBasis
from .cute.layout import Layout
from .cute.swizzle import ComposedLayout, Swizzle
from .cute.tensor import Tensor
from .cute.tiled import TiledCopy, TiledMMA
from .errors import LayoutError
from .linear.layout import LinearLayout
from .nvgpu.gmma import LayoutType
from .nvgpu.tma import TensorMap, TmaAtom

__all__ = ["checked", "check_public", "Kind", "PARAM_KINDS", "OVERRIDES", "SELF_CHECKED"]


def _describe(x) -> str:
    """What was given, in the words of the book."""
    for cls, words in ((LinearLayout, "the LinearLayout"), (ComposedLayout, "the swizzled layout"),
                       (Layout, "the CuTe Layout"), (Swizzle, "the Swizzle"), (Tensor, "the Tensor")):
        if isinstance(x, cls):
            return f"{words} {x}"
    text = repr(x)
    return f"{type(x).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


class Kind:
    """A kind of argument: a name for messages, a test, and remedies for the mix-ups it is known for.

    >>> INT.accepts(3), INT.accepts(Layout(3)), INT_TUPLE.accepts((2, (3, 4))), INT_TUPLE.accepts((2, None))
    (True, False, True, False)
    """

    def __init__(self, name, accepts, remedies=()):
        self.name, self.accepts, self.remedies = name, accepts, remedies

    def refusal(self, op, param, value):
        hint = next((text for cls, text in self.remedies if isinstance(value, cls)), None)
        return LayoutError(f"{op}(): {param} must be {self.name}, got {_describe(value)}"
                           + (f"; {hint}" if hint else ""))


def _is_int(x):
    return isinstance(x, numbers.Integral)


def _is_int_tuple(x, leaf=_is_int):
    return leaf(x) or (isinstance(x, tuple) and all(_is_int_tuple(e, leaf) for e in x))


def _binds(f, *args):
    try:
        inspect.signature(f).bind(*args)
    except TypeError:
        return False
    except ValueError:  # no signature to read (a builtin): assume it fits
        return True
    return True


def _is_dtype(x):
    try:
        dtype_name(x)
    except (LayoutError, TypeError, AttributeError):
        return False
    return True


_TO_INT = ((Layout, "a layout maps a coordinate to an offset: call it, layout(i), to get an int"),
           (tuple, "give one int (size(t) is the number of elements of a shape t)"))
_LL_REMEDY = "convert it with linear_layout_from_cute(layout) (a swizzle: swizzle_to_linear_layout(sw, bits))"
INT = Kind("an int", _is_int, _TO_INT)
BOOL = Kind("a bool", lambda x: isinstance(x, (bool, numbers.Integral)))
STR = Kind("a str", lambda x: isinstance(x, str))
INT_TUPLE = Kind("an int or a (nested) tuple of ints, e.g. (4, (2, 8))",
                 lambda x: _is_int_tuple(x, lambda e: _is_int(e) or isinstance(e, ScaledBasis)),
                 ((Layout, "its shape is shape(layout), its size size(layout)"),))
TREE = Kind("an int, a (nested) tuple of ints or a Layout", lambda x: isinstance(x, (Layout, ComposedLayout, Tensor))
            or _is_int_tuple(x, lambda e: _is_int(e) or isinstance(e, ScaledBasis)))
INTS = Kind("a tuple of ints, e.g. (4, 8)", lambda x: isinstance(x, (tuple, list)) and all(map(_is_int, x)))
INT_LIST = Kind("a list of ints", lambda x: (isinstance(x, (list, tuple)) or hasattr(x, "tolist")) and
                all(_is_int(e) for e in x), ((Layout, "list a layout's offsets with [layout(i) for i in "
                                                      "range(size(layout))]"),))
MODE = Kind("a mode index or a path of them, e.g. 0 or [1, 0]",
            lambda x: _is_int(x) or (isinstance(x, (tuple, list)) and all(map(_is_int, x))))
STRS = Kind("a tuple of dimension names, e.g. ('lane', 'reg')", lambda x: isinstance(x, (tuple, list)) and
            all(isinstance(e, str) for e in x))
TMA_MODE = Kind("a TMA swizzle mode: 'none', '32B', '64B' or '128B'", lambda x: isinstance(x, str))
COORD = Kind("an int or a (nested) tuple of ints and None (None keeps a whole mode)",
             lambda x: _is_int_tuple(x, lambda e: _is_int(e) or e is None))
LAYOUT_REMEDIES = ((LinearLayout, "it is a linear layout over F2; convert it with cute_from_linear_layout(ll)"),
                   (Swizzle, "a swizzle alone is no layout; compose it: make_composed_layout(sw, 0, layout)"),
                   (Tensor, "its layout is tensor.layout"),
                   ((int, tuple), "make one from a shape (and stride): Layout(shape, stride)"))
LAYOUT = Kind("a CuTe Layout, e.g. Layout((4, 8), (8, 1))", lambda x: isinstance(x, (Layout, ComposedLayout)),
              LAYOUT_REMEDIES)
FUNCTION = Kind("a function of one argument", lambda f: callable(f) and _binds(f, 0))
PLAIN_LAYOUT = Kind("a CuTe Layout (not swizzled), e.g. Layout((4, 8), (8, 1))", lambda x: isinstance(x, Layout),
                    ((ComposedLayout, "a swizzled layout is refused here; its layout before the swizzle is "
                                      "layout.outer"),) + LAYOUT_REMEDIES)
PAIRS = Kind("a dict (or a list of (name, value) pairs)", lambda x: isinstance(x, (dict, list, tuple)))
TILER = Kind("a tiler: a Layout, a shape, or a tuple of Layouts, ints and None (one per mode)",
             lambda x: isinstance(x, Layout) or _is_int_tuple(x, lambda e: _is_int(e) or e is None
                                                               or isinstance(e, Layout)),
             ((LinearLayout, "convert it with cute_from_linear_layout(ll)"),))
LINEAR = Kind("a LinearLayout", lambda x: isinstance(x, LinearLayout),
              ((Layout, "it is a CuTe layout: " + _LL_REMEDY), (Swizzle, _LL_REMEDY)))
SWIZZLE = Kind("a Swizzle, e.g. Swizzle(3, 4, 3)", lambda x: isinstance(x, Swizzle),
               ((ComposedLayout, "its swizzle is layout.inner"), (int, "make one with Swizzle(bits, base, shift)")))
DTYPE = Kind("an element type name such as 'f16', 'bf16', 'f32', 'f8E4M3FN'", _is_dtype)
TENSOR = Kind("a Tensor", lambda x: isinstance(x, Tensor), ((Layout, "make one with make_tensor(engine, layout)"),))
MMA_ATOM = Kind("an MmaAtom or an MMA op, e.g. make_mma_atom(MmaF16BF16Op('f16', 'f32', (16, 8, 16)))",
                lambda x: isinstance(x, (MmaAtom, MmaOp)))
COPY_ATOM = Kind("a CopyAtom, e.g. make_copy_atom(LdMatrix8x8x16bOp(False, 4), 'f16')",
                 lambda x: isinstance(x, CopyAtom))
TILED_MMA = Kind("a TiledMMA, e.g. make_tiled_mma(MmaF16BF16Op('f16', 'f32', (16, 8, 16)))",
                 lambda x: isinstance(x, TiledMMA), ((MmaAtom, "tile it first: make_tiled_mma(atom)"),))
TILED_COPY = Kind("a TiledCopy, e.g. make_tiled_copy_tv(atom, thr_layout, val_layout)",
                  lambda x: isinstance(x, TiledCopy))
TMA_ATOM = Kind("a TmaAtom, from make_tiled_tma_atom(...)", lambda x: isinstance(x, TmaAtom))
TENSOR_MAP = Kind("a TensorMap, from encode_tiled(...)", lambda x: isinstance(x, TensorMap))
LAYOUT_TYPE = Kind("a LayoutType or its name/value: " + ", ".join(t.name for t in LayoutType),
                   lambda x: isinstance(x, (LayoutType, str, numbers.Integral)))
TILER_MN = Kind("a tuple of tile sizes or Layouts, one per mode, e.g. (32, 8)", lambda x: isinstance(x, tuple)
                and all(_is_int(e) or isinstance(e, Layout) for e in x))
MAJOR = Kind("'K' or 'MN'", lambda x: isinstance(x, (str, enum.Enum)))

#: a parameter name -> the kind of its argument, for every public callable (the exceptions are in OVERRIDES)
PARAM_KINDS = {
    **dict.fromkeys(["layout", "block", "lhs", "smem_layout", "src_layout", "thr_layout", "val_layout",
                     "layout_tv", "tv_layout", "gmem_layout", "outer", "thread_to_element"], LAYOUT),
    **dict.fromkeys(["tiler", "rhs", "cta_tiler", "tiler_mn"], TILER),
    **dict.fromkeys(["shape", "src_shape", "dst_shape", "trg_shape", "stride", "profile", "target_profile",
                     "shape_mnk", "atom_layout_mnk", "global_dim", "box_dim", "tile_shape", "order"], INT_TUPLE),
    **dict.fromkeys(["crd", "coord", "tile_coord", "box_start", "box_crd"], COORD),
    **dict.fromkeys(["a", "b", "init"], INT_TUPLE),
    **dict.fromkeys(["x", "t"], TREE),
    **dict.fromkeys(["warps_per_cta", "threads_per_warp", "size_per_thread", "instr_shape"], INTS),
    **dict.fromkeys(["rows", "addresses", "row_addresses"], INT_LIST),
    "mode": MODE, "f": FUNCTION,
    "accesses": Kind("a non-empty list of LinearLayouts", lambda x: isinstance(x, (list, tuple)) and len(x) > 0
                     and all(isinstance(e, LinearLayout) for e in x)),
    **dict.fromkeys(["ll", "A", "B", "subset", "superset", "cvt", "tile", "linear_layout"], LINEAR),
    **dict.fromkeys(["n", "idx", "index", "thr_idx", "address", "smem_base", "num_bits", "num_base", "num_shift",
                     "element_bits", "element_bytes", "num_threads", "num_ctas", "box_bytes", "tile_bytes", "threads",
                     "cp_size", "committed", "completed_phases", "parity", "count", "desc", "matrix", "row", "col",
                     "row0", "col0", "num_matrices", "major_mode_size", "max_size", "in_size_log2", "new_type_bits",
                     "num_cols", "old_type_bits", "num_multicast", "bytes_per_access", "threads_per_phase",
                     "up_to_rank", "begin", "end", "offset", "k_width", "operand_index", "vec", "per_phase",
                     "max_phase", "rank", "num_bits_per_copy", "mn", "k", "max_bits", "max_vector_bytes", "vector",
                     "src_size", "swizzle_byte_width", "element_bitwidth"], INT),
    **dict.fromkeys(["transpose", "unpack_bits", "row_major", "transposed", "fp4_padded", "validate",
                     "require_surjective"], BOOL),
    **dict.fromkeys(["in_dim", "out_dim", "out_dim_name", "text", "what"], STR),
    **dict.fromkeys(["dtype", "element_type", "value_type", "data_type", "ab_dtype", "acc_dtype", "a_dtype",
                     "b_dtype"], DTYPE),
    "swizzle": SWIZZLE, "sw": SWIZZLE, "inner": SWIZZLE, "tensor": TENSOR, "mma": TILED_MMA,
    "tiled_mma": TILED_MMA, "tiled_copy": TILED_COPY, "tmap": TENSOR_MAP, "tensor_map": TENSOR_MAP,
    "layout_type": LAYOUT_TYPE, "major": MAJOR, "action": INT_LIST, "bases": PAIRS, "out_dims": PAIRS,
    **dict.fromkeys(["in_renames", "out_renames"], Kind(
        "a list of (old name, new name) pairs, e.g. [('lane', 'thread')]", lambda x: isinstance(x, (list, tuple))
        and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in x))),
    "version": Kind("a version list such as [3, 0] (3: Hopper wgmma, 2: mma.sync)", lambda x: isinstance(
        x, (list, tuple)) and len(x) > 0 and all(map(_is_int, x))),
    **dict.fromkeys(["global_strides", "element_strides"], INTS),
    **dict.fromkeys(["in_dim_names", "in_dims", "dim_names"], STRS),
    "ts": Kind("a tuple", lambda x: isinstance(x, tuple)),
    "tile_mn": Kind("a pair (M, N) of ints", lambda x: isinstance(x, tuple) and len(x) == 2 and all(map(_is_int, x))),
}
#: (operation, parameter) -> kind, where a name means something else than in PARAM_KINDS (None: no check)
OVERRIDES = {
    **{(op, "atom"): COPY_ATOM for op in ("make_tiled_copy", "make_tiled_copy_A", "make_tiled_copy_B",
                                          "make_tiled_copy_C", "make_tiled_copy_tv", "TiledCopy")},
    ("TiledMMA", "atom"): MMA_ATOM, ("make_tiled_mma", "op_or_atom"): MMA_ATOM,
    **{(op, "atom"): TMA_ATOM for op in ("tile_placement", "tma_dsl_summary", "tma_partition")},
    **{(op, "x"): LAYOUT for op in ("cosize", "make_fragment_like", "partition_fragment_A", "partition_fragment_B",
                                    "partition_fragment_C")},
    **{(op, "a"): LAYOUT for op in ("max_common_layout", "max_common_vector")},
    **{(op, "b"): LAYOUT for op in ("max_common_layout", "max_common_vector", "zip_layouts")},
    **{(op, p): None for op in ("congruent", "weakly_congruent") for p in ("a", "b")},  # any leaves: trees
    ("format_int_tuple", "a"): None, ("zip_leaves", "ts"): None, ("transform_leaf", "t"): None,
    ("flatten", "a"): Kind("an int tuple or a Layout", lambda x: isinstance(x, Layout) or _is_int_tuple(x)),
    ("zip_layouts", "a"): LAYOUT, ("crd2idx", "crd"): INT_TUPLE, ("crd2crd", "crd"): INT_TUPLE,
    ("BlockedLayout", "order"): INTS, ("SwizzledSharedLayout", "order"): INTS, ("TiledCopy", "tiler_mn"): TILER_MN,
    ("make_tiled_copy", "tiler_mn"): TILER_MN, ("is_injective", "layout"): PLAIN_LAYOUT,
    ("get_flat_coord", "layout"): PLAIN_LAYOUT, ("tv_layout_to_linear_layout", "tv_layout"): PLAIN_LAYOUT,
    ("signum", "a"): INT, ("supremum", "x"): INT_LIST, ("supremum", "y"): INT_LIST,
    **{(op, "a"): TREE for op in ("size", "rank", "depth")}, ("smem_alignment", "mode"): TMA_MODE,
    ("tma_swizzle", "mode"): TMA_MODE, ("E", "mode"): INT, ("ScaledBasis", "value"): INT,
    ("tv_layout_to_linear_layout", "threads_per_warp"): INT, ("make_swizzle", "b"): INT,
    ("local_partition", "tiler"): LAYOUT, ("complement", "cotarget"): INT_TUPLE, ("is_int", "x"): None,
    ("is_tuple", "x"): None, ("is_layout", "x"): None, ("repeat_like", "x"): None,
    ("as_int_tuple", "x"): None, ("format_tree", "t"): None, ("leaf_paths", "t"): None, ("leaves", "t"): None,
    ("zip_profile", "t"): None, ("local_tile", "coord"): COORD,
    ("ldmatrix_row_addresses", "smem_layout"): LAYOUT, ("SwizzleChoice", "swizzle"): None,
    ("encode_tiled", "swizzle"): None, ("TensorMap", "swizzle"): None, ("swizzle_to_linear_layout", "swizzle"): SWIZZLE,
    ("ensure_layout_not_smaller_than", "shape"): Kind("a dict {out dim name: size}", lambda x: isinstance(x, dict)),
    ("ensure_layout_not_smaller_than", "layout"): LINEAR, ("get_basis_mask", "layout"): LINEAR,
    ("get_input_basis_mask", "layout"): LINEAR, ("get_integer_strides", "layout"): LINEAR,
    ("factor_maximal_identity_prefix", "layout"): LINEAR, ("square_sublayout_is_identity", "layout"): LINEAR,
    ("rename_linear_layout_dims", "layout"): LINEAR, ("IntegerStride", "stride"): INT,
    ("layout_conversion", "src"): LINEAR, ("layout_conversion", "dst"): LINEAR,
}


#: classes whose constructor checks every argument itself and runs inside the algebra on every step: a wrapped
#: ``__init__`` would cost each internal construction a frame (Layout: about 0.5 us of 9 us); the property test
#: holds them to the same rule
SELF_CHECKED = {"Layout"}


def _kind(op, param):
    return OVERRIDES.get((op, param), PARAM_KINDS.get(param))


def _mismatch(op, sig, args, kwargs):
    """The first argument of the wrong kind as ``(kind, name, value)``, or None; a wrong count is refused here."""
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise LayoutError(f"{op}(): {e}; the signature is {op}{sig}") from None
    for name, value in bound.arguments.items():
        kind = _kind(op, name)
        if kind is None:
            continue
        star = sig.parameters[name].kind
        values = value if star is inspect.Parameter.VAR_POSITIONAL else \
            value.values() if star is inspect.Parameter.VAR_KEYWORD else (value,)
        for v in values:
            try:
                ok = kind.accepts(v)
            except Exception:  # noqa: BLE001 - a value too odd to test (a recursive tuple ...) is not of the kind
                ok = False
            if not ok:
                return kind, name, v
    return None


def _explained(op, sig, args, kwargs, e, skip=0):
    """The LayoutError to raise for the failure ``e`` of a call, or None to let ``e`` go (``skip``: leading
    arguments not to check, e.g. ``self``)."""
    found = _mismatch(op, sig, args, kwargs)
    if found is not None and found[1] in list(sig.parameters)[:skip]:
        found = None
    if type(e) is LayoutError:
        # the library refused it already: name the operation called (idx2crd refuses inside crd2idx) and add the
        # remedy of a mix-up the kinds see (coalesce of a LinearLayout: cute_from_linear_layout)
        msg = str(e)
        hint = found and next((t for cls, t in found[0].remedies if isinstance(found[2], cls)), None)
        new = (msg if op in msg else f"{op}(): {msg}") + (f"; {hint}" if hint and hint not in msg else "")
        return None if new == msg else LayoutError(new).with_traceback(e.__traceback__)
    if isinstance(e, LayoutError) or found is None:
        return None  # no argument of the wrong kind explains it: a defect, for the property test to find
    return found[0].refusal(op, found[1], found[2])


def checked(fn, op=None):
    """``fn`` with the boundary: a function is wrapped (``functools.wraps`` keeps its signature, docstring and
    doctests); a class gets its ``__init__`` wrapped in place (an abstract class a refusing ``__new__``), so
    ``isinstance`` and subclassing are untouched.

    >>> from layoutlab.cute.tiled import ThrMMA
    >>> checked(ThrMMA)(3, 8)
    Traceback (most recent call last):
    layoutlab.errors.LayoutError: ThrMMA(): tiled_mma must be a TiledMMA, e.g. make_tiled_mma(MmaF16BF16Op('f16', \
'f32', (16, 8, 16))), got int 3
    """
    if isinstance(fn, type) and inspect.isabstract(fn):
        kinds = ", ".join(dict.fromkeys(c.__name__ for c in fn.__subclasses__()))

        def __new__(cls, *args, **kwargs):
            if inspect.isabstract(cls):
                raise LayoutError(f"{cls.__name__}(): {cls.__name__} is an abstract base class, it has no instances; "
                                  f"make one of its kinds ({kinds})")
            return object.__new__(cls)
        fn.__new__ = __new__
        return fn
    if isinstance(fn, type):
        init = fn.__dict__.get("__init__")
        if init is not None and not getattr(init, "__boundary__", False):
            fn.__init__ = _guarded(init, None, skip=1)  # the operation is the class of ``self``
        return fn
    return fn if getattr(fn, "__boundary__", False) else _guarded(fn, op or fn.__name__)


def _guarded(fn, op, skip=0):
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def boundary(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            better = _explained(op or type(args[0]).__name__, sig, args, kwargs, e, skip)
            if better is None:
                raise
            raise better from None
    boundary.__boundary__ = True
    return boundary


def check_public(namespace, names):
    """Put the boundary on every public callable ``names`` of ``namespace`` (the package's ``__init__`` does).

    >>> def head(layout):
    ...     return layout.shape[0]
    >>> ns = {"head": head}
    >>> check_public(ns, ["head"])
    >>> ns["head"](Layout((4, 8))), ns["head"].__wrapped__ is head
    (4, True)
    >>> ns["head"]((4, 8))
    Traceback (most recent call last):
    layoutlab.errors.LayoutError: head(): layout must be a CuTe Layout, e.g. Layout((4, 8), (8, 1)), got tuple (4, 8); \
make one from a shape (and stride): Layout(shape, stride)
    """
    for name in names:
        obj = namespace[name]
        if isinstance(obj, type) and issubclass(obj, (BaseException, enum.Enum)) or name in SELF_CHECKED:
            continue  # exceptions; an enum refuses through its metaclass, errors.CheckedEnumType
        if inspect.isfunction(obj) or isinstance(obj, type):
            namespace[name] = checked(obj, name)
