"""The wgmma shared-memory matrix descriptor on a CPU: encode, decode, and which layouts it can express.

(Being written for chapter 8.)
"""

__all__ = []
