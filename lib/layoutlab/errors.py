"""The one exception type the library raises for invalid input."""

__all__ = ["LayoutError"]


class LayoutError(ValueError):
    """Invalid input: the message names the operation, the offending argument, the rule broken and what is valid.

    >>> from layoutlab import Layout
    >>> Layout((4, 6))((4, 0))
    Traceback (most recent call last):
    layoutlab.errors.LayoutError: Layout(): coordinate 4 is out of range for a mode of size 4 in (4,6):(1,4); valid: 0..3 (only the last mode extends past its size)
    """
