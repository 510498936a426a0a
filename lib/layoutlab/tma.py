"""The Tensor Memory Accelerator (TMA) on a CPU: tensor-map parameters and where each byte lands.

(Being written for chapter 7.)
"""

__all__ = []
