"""The one exception type the library raises for invalid input, and the enum metaclass that raises it."""

import enum

__all__ = ["LayoutError", "CheckedEnumType"]


class LayoutError(ValueError):
    """Invalid input: the message names the operation, the offending argument, the rule broken and what is valid.

    >>> from layoutlab import Layout
    >>> Layout((4, 6))((4, 0))
    Traceback (most recent call last):
    layoutlab.errors.LayoutError: Layout(): coordinate 4 is out of range for a mode of size 4 in (4,6):(1,4); valid: 0..3 (only the last mode extends past its size)
    """


class CheckedEnumType(enum.EnumType):
    """The metaclass of the library's enums: ``Kind(value)`` and ``Kind[name]`` with an unknown value or name raise a
    :class:`LayoutError` that lists the members, not Python's ``ValueError``/``KeyError``.

    >>> class Mode(enum.Enum, metaclass=CheckedEnumType):
    ...     A = 1
    ...     B = 2
    >>> Mode(2), Mode["A"]
    (<Mode.B: 2>, <Mode.A: 1>)
    >>> Mode(3)
    Traceback (most recent call last):
    layoutlab.errors.LayoutError: Mode(3): not a Mode; valid: 1 (A), 2 (B), or by name Mode['A']
    """

    def _valid(cls):
        if all(m.value == m.name for m in cls):
            return ", ".join(repr(m.value) for m in cls)
        return (", ".join(f"{m.value!r} ({m.name})" for m in cls) + f", or by name {cls.__name__}"
                f"[{next(iter(cls)).name!r}]")

    def __call__(cls, value, *args, **kwargs):
        if not cls._member_map_:  # the functional API defines a new enum: Enum("Name", "A B")
            return super().__call__(value, *args, **kwargs)
        if args or kwargs:
            raise LayoutError(f"{cls.__name__}(): takes one value, got {1 + len(args) + len(kwargs)} arguments; "
                              f"valid: {cls._valid()}")
        try:
            return super().__call__(value)
        except (ValueError, TypeError):
            raise LayoutError(f"{cls.__name__}({value!r}): not a {cls.__name__}; valid: {cls._valid()}") from None

    def __getitem__(cls, name):
        try:
            return super().__getitem__(name)
        except (KeyError, TypeError):
            raise LayoutError(f"{cls.__name__}[{name!r}]: no member of that name; valid: "
                              f"{', '.join(cls.__members__)}") from None
