"""Basis strides, coordinate mode by coordinate mode: how the CuTe DSL's complement and inverses treat a layout
whose strides are coordinates (``v@i``, nested ``v@p@i``). Split out of :mod:`.algebra`, which passes in the answer
for one coordinate mode (``leaf``).
"""

from __future__ import annotations

from ..errors import LayoutError
from .basis import ScaledBasis
from .inttuple import is_tuple, transform_leaf
from .layout import Layout, make_identity_layout, make_layout

_mk = Layout._new  # built unchecked, as in algebra: our own output is well-formed

__all__ = []  # private to the algebra


def basis_paths(strides, layout, op):
    """``(k, path)`` for each flat mode ``k`` with a basis stride ``v@path`` (the other strides must be 0)."""
    ints = [d for d in strides if not isinstance(d, ScaledBasis) and d != 0]
    if ints:
        raise LayoutError(
            f"{op}: {layout} mixes integer strides ({', '.join(map(str, ints))}) with basis strides; give all "
            f"non-zero strides as offsets or all as coordinates (1@i), the CuTe DSL cannot mix them either"
        )
    for d in strides:
        if isinstance(d, ScaledBasis) and d.value < 0:
            raise LayoutError(f"{op}: {layout} has a negative basis stride {d}; {op} needs positive strides")
    return [(k, d.mode) for k, d in enumerate(strides) if isinstance(d, ScaledBasis)]


def _prefix(v, i):
    """A stride of coordinate mode ``i``'s part as a stride of the whole: ``v@i`` (``v@p`` becomes ``v@p@i``)."""
    return ScaledBasis(v.value, (i, *v.mode)) if isinstance(v, ScaledBasis) else ScaledBasis(v, i)


def by_basis_path(items, leaf, layout, op, target=None, basis=False):
    """The DSL's treatment of basis strides: coordinate mode by coordinate mode (as far as the strides ``v@i`` or the
    cotarget reach), nested as the paths nest (``7@1@2`` is mode 1 of mode 2); ``leaf(ks, target_i)`` answers for
    the flat modes ``ks`` whose path ends at mode ``i``.  ``basis``: the answer's strides are coordinates too."""
    targets = () if target is None else target if is_tuple(target) else (target,)
    groups = {}
    for k, path in items:
        groups.setdefault(path[0], []).append((k, path[1:]))
    out = []
    for i in range(max(len(targets), max(groups, default=-1) + 1)):
        group = groups.get(i, [])
        t = targets[i] if i < len(targets) else (None if target is None else 1)
        if basis and i > max(groups, default=-1):  # past every stride: the cotarget mode's own coordinates
            part = make_identity_layout(t)
            out.append(_mk(part.shape, transform_leaf(part.stride, lambda v, i=i: _prefix(v, i))))
            continue
        deeper = [(k, path) for k, path in group if path]
        if deeper and len(deeper) < len(group):
            raise LayoutError(
                f"{op}: in {layout} some strides end at coordinate mode {i} and others reach inside it "
                f"({', '.join(str(ScaledBasis(1, p)) for _, p in deeper)}); give every stride of one mode the same "
                f"depth (the CuTe DSL aborts on such a layout)"
            )
        part = (by_basis_path(deeper, leaf, layout, op, t, basis) if deeper else leaf([k for k, _ in group], t))
        out.append(_mk(part.shape, transform_leaf(part.stride, lambda v, i=i: _prefix(v, i))) if basis else part)
    return make_layout(out)
