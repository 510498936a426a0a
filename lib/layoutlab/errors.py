"""The one exception type the library raises for invalid input."""

__all__ = ["LayoutError"]


class LayoutError(ValueError):
    """Invalid input to a layoutlab operation.

    The message names the operation, the offending argument or mode, the rule that
    was broken and what would have been valid, e.g.::

        composition: stride 3 of B's mode 0 does not divide the shape (4,6) of A ...
    """
