"""Tables for the chapters: HTML in Jupyter and on the website, aligned text elsewhere."""

from ..errors import LayoutError

__all__ = ["show_table"]


def show_table(header, rows):
    """Show ``rows`` under ``header`` as an HTML table in Jupyter and on the website (text elsewhere).

    Text in backticks becomes code. Outside IPython the table is printed as aligned text, so scripts and
    tests see the same content.

    >>> show_table(["op", "result"], [["size", 24], ["cosize", 54]])     # outside Jupyter: text
    op      result
    size    24
    cosize  54
    """
    import html
    import re

    if not isinstance(header, (list, tuple)) or not isinstance(rows, (list, tuple)) or not all(
            isinstance(r, (list, tuple)) for r in rows):
        raise LayoutError(f"show_table: header is a list of column titles and rows a list of rows (lists of cells), "
                          f"got {type(header).__name__} and {type(rows).__name__}")
    rows = [list(r) for r in rows]
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        get_ipython = None
    if get_ipython is None or get_ipython() is None:
        widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
        for r in [header, *rows]:
            print("  ".join(f"{str(x):{w}s}" for x, w in zip(r, widths)).rstrip())
        return

    def cell(x):
        return re.sub(r"`([^`]*)`", r"<code>\1</code>", html.escape(str(x)))

    head = "".join(f"<th>{cell(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(c)}</td>" for c in r) + "</tr>" for r in rows)
    display(HTML(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"))
