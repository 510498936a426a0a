"""Swizzle pictures place a GMMA atom's elements where the hardware does: the swizzle acts on byte addresses."""

import numpy as np
import pytest

from layoutlab import SmemLayoutAtomKind, make_smem_layout_atom
from layoutlab import viz


@pytest.mark.parametrize("kind", list(SmemLayoutAtomKind))
@pytest.mark.parametrize("bits", [8, 16, 32])
def test_bank_pictures_use_the_physical_byte_address(kind, bits):
    atom = make_smem_layout_atom(kind, bits)
    element_bytes = bits // 8
    rows, cols, phys = viz.smem._swizzle_tile(atom, None, "test", element_bytes)
    expected = np.array([[atom.byte_address((m, n), element_bytes) // element_bytes for n in range(cols)]
                         for m in range(rows)])
    assert np.array_equal(phys, expected)


def test_k_sw128_fp16_row_1_col_8_lands_on_element_64():
    # Byte 144 = row 1 (128 B) + chunk 1: the 128B swizzle XORs the chunk with the row -> chunk 0 of row 1.
    atom = make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, 16)
    _, _, phys = viz.smem._swizzle_tile(atom, None, "test", 2)
    assert phys[1][8] == 64 and atom((1, 8)) == 72  # the element-offset function differs from the placement
