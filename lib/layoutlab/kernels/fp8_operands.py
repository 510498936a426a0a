"""The fp8 rung's configuration and host-side checks (:mod:`layoutlab.kernels.hopper_fp8` builds and launches the
kernel): ``HopperFp8Config`` and ``fp8_operands``, which refuses every bad input before any CUDA call (numpy
stand-ins in a ``DeviceOperand`` test it on a CPU)."""

import math
from dataclasses import dataclass

from ..errors import LayoutError
from ._common import DeviceOperand, refuse_host_array
from .hopper import SMEM_CAPACITY, _check_field_kinds, _check_tma_alignment
from .hopper_ws import CONSUMER_REGS, HopperWsConfig

__all__ = ["HopperFp8Config", "fp8_operands", "SCALE_BLOCK", "WGMMA_K_FP8"]

#: DeepSeek-V3's scale granularity: 1 x 128 for A (per row), 128 x 128 for B.
SCALE_BLOCK = 128
#: K of one fp8 wgmma (``wgmma.mma_async.sp.m64nNk32...e4m3.e4m3``): 32 one-byte elements = 32 bytes.
WGMMA_K_FP8 = 32
FP8 = "float8_e4m3fn"
_NEVER = 1 << 30          # "never promote" as a k-tile count no problem reaches


@dataclass(frozen=True)
class HopperFp8Config(HopperWsConfig):
    """The fp8 rung's tile: 128 x 128 x 128 (bytes: 128 x 128 of A and of B per stage, 32 KiB), two consumer
    warpgroups of 64 x 128, ``promotion_interval`` k-blocks of 32 between promotions (a multiple of 4, the k-blocks
    of a k-tile, or 0 for never).

    ``partials``: 2 (where it applies: promotion after every k-tile, ``tile_n`` <= 128) double-buffers the partial
    sums, so k-tile j is promoted while k-tile j + 1's wgmmas run, in runs of ``overlap_run`` k-tiles; the main
    and two partial accumulators take 3 x 64 registers of the 232 that ``setmaxnreg`` gives a consumer, which is
    why the tile is 128 wide. 1 promotes between one k-tile's wgmmas and the next (any interval, tiles up to
    192 wide; ``n_halves=2`` cuts its partials into two halves of 96 columns). ``stagger`` starts the second
    warpgroup's runs half a run later.

    >>> cfg = HopperFp8Config()
    >>> cfg.tile_m, cfg.tile_n, cfg.tile_k, cfg.promotion_interval, cfg.partials, cfg.ab_stage_bytes() // 1024
    (128, 128, 128, 4, 2, 32)
    >>> cfg.promote_every_k_tiles, HopperFp8Config(promotion_interval=0).promote_every_k_tiles > 10**6
    (1, True)
    >>> HopperFp8Config(promotion_interval=8).partials, HopperFp8Config(tile_n=192, epi_stages=3).partials
    (1, 1)
    >>> HopperFp8Config(promotion_interval=6)
    Traceback (most recent call last):
    ...
    layoutlab.errors.LayoutError: HopperFp8Config: promotion_interval=6 k-blocks; promotions happen between k-tiles of 128 (4 k-blocks of 32): use 0 (never) or a multiple of 4
    """

    tile_m: int = 128
    tile_n: int = 128
    tile_k: int = 128
    promotion_interval: int = 4
    n_halves: int = 1
    partials: int = None
    overlap_run: int = 8
    stagger: bool = False
    epi_stages: int = 4

    def __post_init__(self):
        if self.tile_m != 128:
            raise LayoutError(f"HopperFp8Config: tile_m={self.tile_m}; the two consumer warpgroups own 64 rows "
                              f"each: use 128")
        if self.tile_n not in (64, 128, 192):
            raise LayoutError(f"HopperFp8Config: tile_n={self.tile_n}; two fp32 accumulators of 64 x tile_n must "
                              f"fit a consumer's {CONSUMER_REGS} registers: use 64, 128 or 192")
        if self.tile_k != SCALE_BLOCK:
            raise LayoutError(f"HopperFp8Config: tile_k={self.tile_k}; 128 e4m3 elements = 128 bytes, the row "
                              f"of the 128B swizzle atom and the K of a scale block, is the only K tile")
        per_tile = self.tile_k // WGMMA_K_FP8
        if self.promotion_interval < 0 or self.promotion_interval % per_tile:
            raise LayoutError(f"HopperFp8Config: promotion_interval={self.promotion_interval} k-blocks; "
                              f"promotions happen between k-tiles of {self.tile_k} ({per_tile} k-blocks of "
                              f"{WGMMA_K_FP8}): use 0 (never) or a multiple of {per_tile}")
        pieces = self.tile_n // 32
        if self.epi_stages < 1 or pieces % self.epi_stages:
            raise LayoutError(f"HopperFp8Config: epi_stages={self.epi_stages}; use a divisor of {pieces}")
        if self.n_halves not in (1, 2):
            raise LayoutError(f"HopperFp8Config: n_halves={self.n_halves}; the tile's N is cut into 1 or 2 "
                              f"accumulators (2: one promoted while the other's MMAs run)")
        if self.partials is None:     # the double-buffered consumer where it applies, else the serial one
            object.__setattr__(self, "partials", 2 if (self.promotion_interval == per_tile and self.tile_n <= 128
                                                       and self.n_halves == 1) else 1)
        _check_field_kinds(self)
        if self.partials not in (1, 2):
            raise LayoutError(f"HopperFp8Config: partials={self.partials}; 1 (promote between a k-tile's MMAs) or 2 "
                              f"(double-buffered partial sums, promoted while the next k-tile's MMAs run)")
        if self.overlap_run < 2:
            raise LayoutError(f"HopperFp8Config: overlap_run={self.overlap_run}; a run of k-tiles whose promotions "
                              f"overlap the next k-tile's MMAs holds at least 2")
        if self.partials == 2 and self.promotion_interval != per_tile:
            raise LayoutError(f"HopperFp8Config: partials=2 with promotion_interval={self.promotion_interval}; the "
                              f"double-buffered partials are promoted after every k-tile: use {per_tile}")
        if self.partials == 2 and (self.tile_n > 128 or self.n_halves != 1):
            raise LayoutError(f"HopperFp8Config: partials=2 with tile_n={self.tile_n}, n_halves={self.n_halves}; the "
                              f"main and two partial accumulators of 64 x tile_n take 3 * tile_n / 2 registers per "
                              f"thread, within {CONSUMER_REGS} only for tile_n <= 128 (and n_halves=1)")
        if self.timeline:
            raise LayoutError("HopperFp8Config: timeline=True is not built for the fp8 rung")

    @property
    def promote_every_k_tiles(self):
        """k-tiles between promotions (the kernel's run-time argument); "never" is a count no K reaches."""
        return self.promotion_interval // (self.tile_k // WGMMA_K_FP8) or _NEVER

    def ab_stage_bytes(self, itemsize=1):
        return (self.tile_m + self.tile_n) * self.tile_k * itemsize

    def ab_stages(self, reserved_bytes, itemsize=1):
        return self.stages or (SMEM_CAPACITY - reserved_bytes) // self.ab_stage_bytes(1)


# ---------------------------------------------------------------------------------------------------
# Host side: every refusal before any CUDA call (numpy stand-ins in DeviceOperand test it on a CPU)
# ---------------------------------------------------------------------------------------------------

def _describe(x, label, name):
    """A DeviceOperand for a torch CUDA tensor (fp8 arrives as torch.float8_e4m3fn: numpy and cupy have no
    fp8 dtype); a DeviceOperand passes as is. Host arrays were refused before."""
    if isinstance(x, DeviceOperand):
        return x
    if hasattr(x, "data_ptr") and hasattr(x, "element_size"):
        size = x.element_size()
        return DeviceOperand(x, tuple(x.shape), tuple(s * size for s in x.stride()), size,
                             str(x.dtype).replace("torch.", ""), x.data_ptr())
    raise LayoutError(f"{name}: {label} must be a torch CUDA tensor (fp8 operands are torch.float8_e4m3fn; "
                      f"cupy has no fp8 dtype), got {type(x).__name__}")


def _is_array(x):
    return not isinstance(x, (int, float)) and x is not None


def fp8_operands(A, B, C=None, *, scale_a=1.0, scale_b=1.0, beta=0.0, config=None, name="gemm_hopper_fp8"):
    """Check the operands and scales; return ``(m, n, k, c_major, block_scaled, ops)``.

    Refuses (``LayoutError``, nothing touches CUDA): host arrays; A or B not e4m3; C not bf16; shapes that
    disagree; **MN-major A or B** (wgmma reads 8-bit operands K-major only); strides that are not multiples
    of 16 bytes or bases not 128-byte aligned (TMA); scales that are one array and one number, arrays that
    are not contiguous fp32 of shape (M, ceil(K/128)) and (ceil(N/128), ceil(K/128)), or block scales with a
    promotion interval other than one k-tile.

    >>> import numpy as np
    >>> def e4m3(x):                  # a numpy buffer stands in for a torch.float8_e4m3fn GPU tensor
    ...     return DeviceOperand(x, x.shape, x.strides, 1, "float8_e4m3fn", x.ctypes.data)
    >>> a, b = np.zeros((64, 128), np.uint8), np.zeros((128, 96), np.uint8)     # B (K, N) row-major
    >>> try:
    ...     fp8_operands(e4m3(a), e4m3(b))
    ... except LayoutError as err:
    ...     print(str(err)[:66])
    gemm_hopper_fp8: B is not K-major (element strides (96, 1)); wgmma
    """
    config = config or HopperFp8Config()
    arrays = [("A", A), ("B", B)] + [(lbl, x) for lbl, x in (("C", C), ("scale_a", scale_a),
                                                             ("scale_b", scale_b)) if _is_array(x)]
    for label, x in arrays:
        refuse_host_array(x, label, name)
    opA, opB = _describe(A, "A", name), _describe(B, "B", name)
    opC = _describe(C, "C", name) if C is not None else None
    for label, op in (("A", opA), ("B", opB)):
        if str(op.dtype) != FP8:
            raise LayoutError(f"{name}: {label} has dtype {op.dtype}; this kernel takes {FP8} (e4m3) operands, "
                              f"e.g. {label}.to(torch.float8_e4m3fn) after scaling into e4m3's range (|x| <= 448)")
        if len(op.shape) != 2:
            raise LayoutError(f"{name}: {label} must be 2-D, got shape {op.shape}")
    (m, k), (k2, n) = opA.shape, opB.shape
    if k != k2:
        raise LayoutError(f"{name}: A is {m}x{k} and B is {k2}x{n}; A's columns must equal B's rows (K)")
    if min(m, n, k) < 1:
        raise LayoutError(f"{name}: M, N, K must all be >= 1, got M={m}, N={n}, K={k}")
    for label, op, k_mode in (("A", opA, 1), ("B", opB, 0)):
        if op.strides[k_mode] != 1 and op.shape[k_mode] > 1:
            raise LayoutError(
                f"{name}: {label} is not K-major (element strides {tuple(s // op.itemsize for s in op.strides)}); "
                f"wgmma reads 8-bit operands from shared memory K-major only (PTX ISA 9.7.15.5.2, wgmma.mma_async: "
                f"the transpose is supported for .f16/.bf16 types alone), so fp8 GEMMs are TN: pass A as (M, K) "
                f"row-major and B as the transpose of an (N, K) row-major array (b.T)")
    c_major = "N"
    if opC is not None:
        if str(opC.dtype) != "bfloat16":
            raise LayoutError(f"{name}: C has dtype {opC.dtype}; the fp8 rung writes bfloat16")
        if tuple(opC.shape) != (m, n):
            raise LayoutError(f"{name}: C has shape {tuple(opC.shape)}, expected (M, N) = {(m, n)}")
        c_major = "N" if opC.strides[1] == opC.itemsize or n == 1 else "M"
        if opC.strides[0 if c_major == "M" else 1] != opC.itemsize:
            raise LayoutError(f"{name}: C has no contiguous mode; pass a row- or column-major array")
    if beta != 0 and C is None:
        raise LayoutError(f"{name}: beta={beta} needs an input C to scale; pass C or use beta=0")
    _check_tma_alignment(name, "A", opA, "MK", "K")
    _check_tma_alignment(name, "B", opB, "KN", "K")
    if opC is not None:
        _check_tma_alignment(name, "C", opC, "MN", c_major)
    block = _is_array(scale_a) or _is_array(scale_b)
    ops = (opA, opB, opC)
    if block:
        kb = math.ceil(k / SCALE_BLOCK)
        want = {"scale_a": (m, kb), "scale_b": (math.ceil(n / SCALE_BLOCK), kb)}
        for label, x in (("scale_a", scale_a), ("scale_b", scale_b)):
            if not _is_array(x):
                raise LayoutError(f"{name}: {label} is a number but the other scale is an array; pass both as "
                                  f"block scales ({want['scale_a']} and {want['scale_b']} fp32) or both as numbers")
            op = _describe(x, label, name)
            if str(op.dtype) != "float32" or tuple(op.shape) != want[label]:
                raise LayoutError(
                    f"{name}: {label} is {op.dtype} of shape {tuple(op.shape)}; block scales are float32 of shape "
                    f"{want[label]}: one per {'row of A and 128 of K (1 x 128 blocks)' if label == 'scale_a' else '128 x 128 block of B (N blocks, K blocks)'}")
            if op.strides != (op.shape[1] * 4, 4) and op.shape[0] * op.shape[1] > 1:
                raise LayoutError(f"{name}: {label} must be row-major contiguous (element strides "
                                  f"{tuple(s // 4 for s in op.strides)}); pass {label}.contiguous()")
            ops += (op,)
        if config.promotion_interval != config.tile_k // WGMMA_K_FP8:
            raise LayoutError(f"{name}: block scales change every {SCALE_BLOCK} of K, so the partial sums must be "
                              f"promoted (and scaled) after every k-tile: promotion_interval must be "
                              f"{config.tile_k // WGMMA_K_FP8}, got {config.promotion_interval}")
    else:
        for label, x in (("scale_a", scale_a), ("scale_b", scale_b)):
            if not math.isfinite(float(x)):
                raise LayoutError(f"{name}: {label}={x}; a per-tensor scale must be a finite number")
    return m, n, k, c_major, block, ops
