"""Classifying a conversion between two distributed linear layouts (Triton's rule): registers, warp shuffles or
shared memory."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import LayoutError
from .layout import LinearLayout

__all__ = ["LayoutConversion", "layout_conversion"]


@dataclass(frozen=True)
class LayoutConversion:
    """How data moves from distributed layout ``src`` to ``dst``: ``map`` (``dst.invert_and_compose(src)``) sends a
    destination location to the source holding its element; ``kind`` is the cheapest mechanism (see below).

    >>> L = LinearLayout.identity_1d(4, "lane", "dim0")
    >>> layout_conversion(L, L)
    LayoutConversion(kind='none', map=LinearLayout.from_bases([('lane', [[1], [2]])], ['lane'], [4], require_surjective=True))
    """
    kind: str
    map: LinearLayout


def _trivial_over(L: LinearLayout, dims) -> bool:
    """L acts as the identity on those of ``dims`` it has, and they neither feed nor receive the others."""
    return L._is_trivial_over([d for d in dims if d in L.get_in_dim_names() or d in L.get_out_dim_names()])


def layout_conversion(src: LinearLayout, dst: LinearLayout) -> LayoutConversion:
    """Classify converting a distributed tensor from layout ``src`` to ``dst`` (Triton's rule).

    Math: C = dst.invert_and_compose(src); ``"none"`` if src == dst; C trivial over (block, warp, lane):
    ``"register"``; over (block, warp): ``"warp_shuffle"``; else ``"shared_memory"``.

    >>> a = LinearLayout.from_bases([("register", [[1], [2]]), ("lane", [[4]])], ["dim0"])
    >>> layout_conversion(a, LinearLayout.from_bases([("register", [[2], [1]]), ("lane", [[4]])], ["dim0"])).kind
    'register'
    >>> layout_conversion(a, LinearLayout.from_bases([("register", [[1], [4]]), ("lane", [[2]])], ["dim0"])).kind
    'warp_shuffle'
    """
    if src.get_in_dim_names() and set(src.get_in_dim_names()) != set(dst.get_in_dim_names()):
        raise LayoutError(f"layout_conversion: src input dims {src.get_in_dim_names()} and dst "
                          f"{dst.get_in_dim_names()} differ; both must be distributed layouts")
    cvt = dst.invert_and_compose(src)
    if src == dst:
        kind = "none"
    elif _trivial_over(cvt, ["block", "warp", "lane"]):
        kind = "register"
    elif _trivial_over(cvt, ["block", "warp"]):
        kind = "warp_shuffle"
    else:
        kind = "shared_memory"
    return LayoutConversion(kind, cvt)
