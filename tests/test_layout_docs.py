"""Every ``>>>`` example in the algebra's docstrings runs and prints what it says (examples were taken from
the CuTe DSL's own output, see tests/test_algebra_dsl_diff.py for the systematic comparison)."""

from __future__ import annotations

import doctest
import importlib

import pytest

import layoutlab


@pytest.mark.parametrize("module", ["inttuple", "layout", "algebra", "tensor", "dsl", "tma", "gmma", "grading"])
def test_docstring_examples(module):
    mod = importlib.import_module(f"layoutlab.{module}")
    result = doctest.testmod(mod, extraglobs=vars(layoutlab), optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0


@pytest.mark.parametrize("module", ["inttuple", "layout", "algebra", "tensor", "dsl", "tma", "gmma", "grading"])
def test_public_api_is_documented(module):
    mod = importlib.import_module(f"layoutlab.{module}")
    missing = [n for n in mod.__all__ if callable(getattr(mod, n)) and not (getattr(mod, n).__doc__ or "").strip()]
    assert not missing
