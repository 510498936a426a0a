"""layoutlab: the CuTe layout algebra, linear layouts over F2, swizzles, MMA/copy atoms, TMA and wgmma in plain Python.

``from layoutlab import *`` gives the names below, with the CuTe DSL's (and Triton's) spelling, grouped as the book
teaches them, and no module: the DSL's operation namespace is one explicit import away, ``from layoutlab import nvgpu``
(``nvgpu.warp.MmaF16BF16Op``, as the DSL's ``cute.nvgpu.warp.MmaF16BF16Op``).
The package is layered, each layer importing only from those before it: :mod:`~layoutlab.errors`,
:mod:`layoutlab.cute` (the DSL's ``cute.*``), :mod:`layoutlab.linear` (Triton's linear layouts, Gluon),
:mod:`layoutlab.nvgpu` (the DSL's ``cute.nvgpu`` and the hardware models), then :mod:`layoutlab.kernels` (the GEMM
ladder), :mod:`layoutlab.viz` (pictures), :mod:`layoutlab.widgets` (explorers), and at the top :mod:`layoutlab.probe`
(GPU measurements), :mod:`layoutlab.bench` (GPU timing) and :mod:`layoutlab.grading`. :mod:`layoutlab.gpu` (GPU
detection, recorded results) and :mod:`layoutlab.dsl` (asking the CuTe DSL itself) serve all of them.
"""

# Part 1: layouts (chapters 1-3): integer tuples, layouts, the algebra, tensors, atoms, tiled MMAs and copies
from .errors import LayoutError
from .cute.basis import E, is_int, ScaledBasis
from .cute.inttuple import (as_int_tuple, ceil_div, compatible, congruent, crd2crd, crd2idx, depth, elem_scale,
                            evenly_divides, flatten, format_int_tuple, format_tree, idx2crd, inner_product, is_tuple,
                            leaf_paths, leaves, none_to_zero, prefix_product, product, product_each, rank,
                            repeat_like, shape_div, signum, size, suffix_product, transform_leaf, unflatten,
                            weakly_congruent, zip_leaves, zip_profile, zip_tuples)
from .cute.layout import (append, compact_col_major, compact_row_major, cosize, dice, get, group_modes, is_layout,
                          Layout, make_identity_layout, make_layout, make_ordered_layout, parse_layout, prepend,
                          select, shape, slice_, slice_and_offset, stride, zip_layouts)
from .cute.algebra import (blocked_product, coalesce, complement, composition, downcast, filter, filter_zeros,
                           flat_divide, flat_product, is_injective, LayoutWrapper, left_inverse, logical_divide,
                           logical_product, max_common_layout, max_common_vector, nullspace, raked_product,
                           recast_layout, right_inverse, tile_to_shape, tiled_divide, tiled_product, upcast,
                           zipped_divide, zipped_product)
from .cute.tensor import (domain_distribute, get_flat_coord, local_partition, local_tile, make_identity_tensor,
                          make_layout_tv, make_tensor, Step, Tensor, X)
from .cute.atom import CopyAtom, dtype_bits, dtype_name, make_copy_atom, make_mma_atom, MmaAtom
from .cute.tiled import (make_fragment_like, make_tiled_copy, make_tiled_copy_A, make_tiled_copy_B, make_tiled_copy_C,
                         make_tiled_copy_tv, make_tiled_mma, Partition, partition_fragment_A, partition_fragment_B,
                         partition_fragment_C, ThrCopy, ThrMMA, TiledCopy, TiledMMA)
from .nvgpu.warp import (LdMatrix16x16x8bOp, LdMatrix16x8x8bOp, LdMatrix8x16x8bOp, LdMatrix8x8x16bOp, MmaF16BF16Op,
                         MmaFP8Op, MmaTF32Op, StMatrix16x8x8bOp, StMatrix8x8x16bOp)
from .nvgpu.common import CopyUniversalOp
# Part 1: linear layouts over F2 and Gluon (chapter 4)
from .linear.f2 import rref_f2, supremum
from .linear.layout import LinearLayout
from .linear.utils import (ColumnAction, divide_left, divide_right, ensure_layout_not_smaller_than,
                           factor_maximal_identity_prefix, get_basis_mask, get_input_basis_mask, get_integer_strides,
                           get_reps, IntegerStride, is_linear_layout_image_subset, rename_linear_layout_dims,
                           square_sublayout_is_identity)
from .linear.cute import (cute_from_linear_layout, linear_layout_from_cute, swizzle_to_linear_layout,
                          tv_layout_to_linear_layout)
from .linear.conversion import layout_conversion, LayoutConversion
from .linear.gluon import (BlockedLayout, DotOperandLayout, NVMMADistributedLayout, NVMMASharedLayout, SliceLayout,
                           SwizzledSharedLayout)
# Part 1: swizzles and banks (chapter 5)
from .cute.swizzle import ComposedLayout, make_composed_layout, make_swizzle, Swizzle
from .nvgpu.banks import (BANK_BYTES, bank_conflicts, bank_of, BankConflicts, classic_patterns, find_swizzle,
                          layout_bank_conflicts, ldmatrix_bank_conflicts, ldmatrix_row_addresses, NUM_BANKS,
                          SwizzleChoice)
# Part 2: ldmatrix (chapter 6)
from .nvgpu.ldmatrix import ldmatrix_address_lane, ldmatrix_owner, LdmatrixSelection, operand_majorness, select_ldmatrix
# Part 2: cp.async and TMA (chapter 7)
from .nvgpu.cpasync import (CopyG2SOp, cp_async_copy, cp_async_plan, CP_ASYNC_SIZES, cp_async_wait_group, MBarrier,
                            mbarrier_try_wait)
from .nvgpu.tma import (box_placement, encode_tiled, make_tiled_tma_atom, multicast_slices, smem_alignment,
                        smem_byte_of, swizzle_mode_of, SWIZZLE_SPAN, TensorMap, tile_placement, TMA_DATA_TYPES,
                        TMA_DSL_SETUP, tma_dsl_summary, tma_partition, TMA_SWIZZLE, tma_swizzle, TmaAtom, TmaCopy)
# Part 2: warpgroup MMA (chapter 8)
from .nvgpu.warpgroup import (get_smem_layout_atom, make_smem_layout_atom, SmemLayoutAtomKind, WarpgroupMmaF16BF16Op,
                              WarpgroupMmaF8Op, WGMMA_N_VALUES)
from .nvgpu.gmma import (check_operand_major, decode_gmma_desc, gmma_canonical_layout, gmma_k_block_descs,
                         gmma_read_addresses, GmmaDescriptor, LayoutType, make_gmma_desc, pattern_bytes, wgmma_k)
# The CuTe DSL's cute.nvgpu: nvgpu.warp.MmaF16BF16Op, nvgpu.warpgroup.MmaF16BF16Op, nvgpu.cpasync.CopyG2SOp, ...
from . import nvgpu

__all__ = [
    # Part 1: layouts (chapters 1-3): integer tuples, layouts, the algebra, tensors, atoms, tiled MMAs and copies
    "LayoutError", "E", "is_int", "ScaledBasis", "as_int_tuple", "ceil_div", "compatible", "congruent", "crd2crd",
    "crd2idx", "depth", "elem_scale", "evenly_divides", "flatten", "format_int_tuple", "format_tree", "idx2crd",
    "inner_product", "is_tuple", "leaf_paths", "leaves", "none_to_zero", "prefix_product", "product",
    "product_each", "rank", "repeat_like", "shape_div", "signum", "size", "suffix_product", "transform_leaf",
    "unflatten", "weakly_congruent", "zip_leaves", "zip_profile", "zip_tuples", "append", "compact_col_major",
    "compact_row_major", "cosize", "dice", "get", "group_modes", "is_layout", "Layout", "make_identity_layout",
    "make_layout", "make_ordered_layout", "parse_layout", "prepend", "select", "shape", "slice_",
    "slice_and_offset", "stride", "zip_layouts", "blocked_product", "coalesce", "complement", "composition",
    "downcast", "filter", "filter_zeros", "flat_divide", "flat_product", "is_injective", "LayoutWrapper",
    "left_inverse", "logical_divide", "logical_product", "max_common_layout", "max_common_vector", "nullspace",
    "raked_product", "recast_layout", "right_inverse", "tile_to_shape", "tiled_divide", "tiled_product", "upcast",
    "zipped_divide", "zipped_product", "domain_distribute", "get_flat_coord", "local_partition", "local_tile",
    "make_identity_tensor", "make_layout_tv", "make_tensor", "Step", "Tensor", "X", "CopyAtom", "dtype_bits",
    "dtype_name", "make_copy_atom", "make_mma_atom", "MmaAtom", "make_fragment_like", "make_tiled_copy",
    "make_tiled_copy_A", "make_tiled_copy_B", "make_tiled_copy_C", "make_tiled_copy_tv", "make_tiled_mma",
    "Partition", "partition_fragment_A", "partition_fragment_B", "partition_fragment_C", "ThrCopy", "ThrMMA",
    "TiledCopy", "TiledMMA", "LdMatrix16x16x8bOp", "LdMatrix16x8x8bOp", "LdMatrix8x16x8bOp", "LdMatrix8x8x16bOp",
    "MmaF16BF16Op", "MmaFP8Op", "MmaTF32Op", "StMatrix16x8x8bOp", "StMatrix8x8x16bOp", "CopyUniversalOp",
    # Part 1: linear layouts over F2 and Gluon (chapter 4)
    "rref_f2", "supremum", "LinearLayout", "ColumnAction", "divide_left", "divide_right",
    "ensure_layout_not_smaller_than", "factor_maximal_identity_prefix", "get_basis_mask", "get_input_basis_mask",
    "get_integer_strides", "get_reps", "IntegerStride", "is_linear_layout_image_subset",
    "rename_linear_layout_dims", "square_sublayout_is_identity", "cute_from_linear_layout",
    "linear_layout_from_cute", "swizzle_to_linear_layout", "tv_layout_to_linear_layout", "layout_conversion",
    "LayoutConversion", "BlockedLayout", "DotOperandLayout", "NVMMADistributedLayout", "NVMMASharedLayout",
    "SliceLayout", "SwizzledSharedLayout",
    # Part 1: swizzles and banks (chapter 5)
    "ComposedLayout", "make_composed_layout", "make_swizzle", "Swizzle", "BANK_BYTES", "bank_conflicts", "bank_of",
    "BankConflicts", "classic_patterns", "find_swizzle", "layout_bank_conflicts", "ldmatrix_bank_conflicts",
    "ldmatrix_row_addresses", "NUM_BANKS", "SwizzleChoice",
    # Part 2: ldmatrix (chapter 6)
    "ldmatrix_address_lane", "ldmatrix_owner", "LdmatrixSelection", "operand_majorness", "select_ldmatrix",
    # Part 2: cp.async and TMA (chapter 7)
    "CopyG2SOp", "cp_async_copy", "cp_async_plan", "CP_ASYNC_SIZES", "cp_async_wait_group", "MBarrier",
    "mbarrier_try_wait", "box_placement", "encode_tiled", "make_tiled_tma_atom", "multicast_slices",
    "smem_alignment", "smem_byte_of", "swizzle_mode_of", "SWIZZLE_SPAN", "TensorMap", "tile_placement",
    "TMA_DATA_TYPES", "TMA_DSL_SETUP", "tma_dsl_summary", "tma_partition", "TMA_SWIZZLE", "tma_swizzle", "TmaAtom",
    "TmaCopy",
    # Part 2: warpgroup MMA (chapter 8)
    "get_smem_layout_atom", "make_smem_layout_atom", "SmemLayoutAtomKind", "WarpgroupMmaF16BF16Op",
    "WarpgroupMmaF8Op", "WGMMA_N_VALUES", "check_operand_major", "decode_gmma_desc", "gmma_canonical_layout",
    "gmma_k_block_descs", "gmma_read_addresses", "GmmaDescriptor", "LayoutType", "make_gmma_desc", "pattern_bytes",
    "wgmma_k",
]

__version__ = "0.1.0"

# The checked boundary (issue 29): a call that fails with a raw Python error is explained as a LayoutError naming the
# argument of the wrong kind; the functions above are wrapped here, the classes get a wrapped __init__ in place.
from .boundary import check_public as _check_public
_check_public(globals(), __all__)
