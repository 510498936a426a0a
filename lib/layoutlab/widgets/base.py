"""The pieces every explorer shares: the VBox with a message area that turns a LayoutError into text, pictures as
inline SVG, parsing of typed input, precomputed explorers for the static site, and the note that sends a reader of
the static site to JupyterLite for the controls that need a kernel."""

import base64
import functools
import html
import inspect
import traceback

import ipywidgets as w
import traitlets

from .. import viz
from ..errors import LayoutError

__all__ = ["precomputed_explorer"]

def _svg_html(fig=None):
    """A picture as inline SVG (text stays text: sharp at any zoom, read by screen readers via its title)."""
    return fig._repr_html_() if fig is not None else ""


def _picture(fig=None):
    """An HTML widget showing ``fig`` as inline SVG (saved with the page's widget state)."""
    return w.HTML(value=_svg_html(fig), layout=w.Layout(max_width="100%"))


def _img_html(fig, caption=""):
    """An HTML snippet with ``fig`` as an SVG image with alt text (for precomputed frames: each frame is one
    ``<img>``, never scaled down, scrolling sideways in its box when wider than the column)."""
    data = base64.b64encode(viz.figure_to_svg(fig).encode()).decode("ascii")
    cap = f"<div class='ll-caption' style='font-family:monospace'>{html.escape(caption)}</div>" if caption else ""
    alt = html.escape(fig.alt or fig.title, quote=True)
    return (f"{cap}<div style='overflow-x:auto;max-width:100%'><img style='max-width:none' "
            f"width='{round(fig.width)}' height='{round(fig.height)}' alt='{alt}' "
            f"src='data:image/svg+xml;base64,{data}'/></div>")


# Shown on the website only (inside the book's article: a live notebook has no .bd-article), next to a control
# that needs a running Python kernel: the page's own "Open this chapter in JupyterLite" link runs it live.
_SITE_ONLY_CSS = ("<style>.ll-site-only{display:none}.bd-article .ll-site-only{display:block}</style>")


def _live_only_note(what):
    """A note for the static site: ``what`` (e.g. "Typing a layout") needs Python; a link opens the chapter in
    JupyterLite (the launch link the site puts at the top of the page), where the same explorer runs live."""
    click = ("var a=document.querySelector('a.layoutlab-lite-chapter');"
             "if(a){window.open(a.href,'_blank','noopener');return false;}")
    return w.HTML(
        f"{_SITE_ONLY_CSS}<div class='ll-site-only ll-live-note' style='font-size:0.9em;color:#444'>"
        f"{html.escape(what)} needs a running Python, which this static page does not have: "
        f"<a class='ll-lite-edit' href='#' onclick=\"{click}\">edit this layout in your browser</a> "
        f"(opens this chapter in JupyterLite, where the explorer runs live).</div>")


def _error_html(err):
    """A readable message for an invalid input: the library's own words, no traceback."""
    kind = "" if isinstance(err, LayoutError) else f"{type(err).__name__}: "
    return (f"<div style='color:#b00020;font-family:monospace;white-space:pre-wrap;overflow-wrap:anywhere;"
            f"max-width:48em'>"
            f"&#9888; {html.escape(kind + str(err))}</div>")


def _ok_html(text):
    return (f"<div style='font-family:monospace;white-space:pre-wrap;overflow-wrap:anywhere;max-width:48em'>"
            f"{html.escape(text)}</div>")


class _Explorer(w.VBox):
    """Base: a ``message`` area for errors, and ``_guard`` to route any failure there."""

    def __init__(self, children, **kwargs):
        self.message = w.HTML()
        super().__init__(list(children) + [self.message], **kwargs)

    def __init_subclass__(cls, **kwargs):
        """An explorer's starting values go into ipywidgets controls, which refuse a value they cannot show
        (a ``TraitError``, or a ``TypeError`` from inside ipywidgets): that is a bad argument, a LayoutError."""
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return

        @functools.wraps(init)
        def checked_init(self, *args, **kw):
            try:
                init(self, *args, **kw)
            except (traitlets.TraitError, TypeError) as err:
                inner = traceback.extract_tb(err.__traceback__)[-1].filename
                if isinstance(err, TypeError) and "ipywidgets" not in inner:
                    raise
                sig = str(inspect.signature(init)).replace("(self, ", "(")
                raise LayoutError(f"{cls.__name__}: a starting value its controls cannot take ({err}); the "
                                  f"signature is {cls.__name__}{sig}") from None
        cls.__init__ = checked_init

    def _guard(self, fn, *args):
        try:
            result = fn(*args)
        except Exception as err:  # every failure becomes a message; the last good picture stays
            self.message.value = _error_html(err)
            return None
        self.message.value = ""
        return result


def _parse(text):
    from ..cute.layout import parse_layout
    return parse_layout(text)


def _css_rgb(rgb):
    r, g, b = (int(round(255 * x)) for x in rgb[:3])
    return f"rgb({r},{g},{b})"


def _parse_set(text, limit, what):
    """``"all"``, ``""`` -> None (everything); ``"0-3, 8"`` -> {0, 1, 2, 3, 8}, each in [0, limit)."""
    text = text.strip().lower()
    if text in ("", "all", "*"):
        return None
    out = set()
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                items = range(lo, hi + 1)
            else:
                items = [int(part)]
        except ValueError:
            raise LayoutError(f"{what}: {part!r} is not a number or a range; write e.g. '0-3, 8' or 'all'") from None
        for i in items:
            if not 0 <= i < limit:
                raise LayoutError(f"{what}: {i} is out of range; valid values are 0..{limit - 1}")
            out.add(i)
    return out


def precomputed_explorer(controls, *renders):
    """Controls whose every combination was rendered in advance; the browser switches between them.

    ``controls`` is a list of ``(name, widget)`` where each widget has an ``index`` trait (``Dropdown``,
    ``SelectionSlider``, ``ToggleButtons``...). Each of ``renders`` is ``render(**{name: value})`` returning
    a widget (e.g. an ``HTML`` with an inline image) for one combination, or ``(names, render)`` when that
    picture depends only on some of the controls (so it is rendered once per combination of those). Each
    picture's frames are nested ``Stack`` widgets, one level per control it depends on, and each level's
    ``selected_index`` is ``jslink``-ed to its control's ``index``: the links run in the browser, so the page
    needs no kernel. Frames: the product of the option counts (keep it to a few dozen).

    >>> import ipywidgets as w
    >>> box = precomputed_explorer([("B", w.SelectionSlider(options=[0, 1, 2, 3]))], lambda B: w.HTML(f"B = {B}"))
    >>> [frame.value for frame in box.frames.children], len(box.links)
    (['B = 0', 'B = 1', 'B = 2', 'B = 3'], 1)
    """
    if not controls or not renders:
        raise LayoutError("precomputed_explorer: give at least one (name, control) and one render function")
    if not isinstance(controls, (list, tuple)) or not all(
            isinstance(c, (list, tuple)) and len(c) == 2 and isinstance(c[0], str) for c in controls):
        raise LayoutError(f"precomputed_explorer: controls must be a list of (name, control) pairs, got "
                          f"{str(controls)[:60]}")
    for item in renders:
        render = item[1] if isinstance(item, tuple) and len(item) == 2 else item
        if not callable(render) or isinstance(item, tuple) and not (
                len(item) == 2 and isinstance(item[0], (list, tuple)) and all(isinstance(n, str) for n in item[0])):
            raise LayoutError(f"precomputed_explorer: each render is a function or a (names, function) pair, got "
                              f"{str(item)[:60]}")
    by_name = dict(controls)
    for name, control in controls:
        if not hasattr(control, "index") or not getattr(control, "options", None):
            raise LayoutError(f"precomputed_explorer: control {name!r} ({type(control).__name__}) has no "
                              f"options/index; use Dropdown, SelectionSlider or ToggleButtons")
    links = []

    def build(names, render, level, chosen):
        if level == len(names):
            return render(**dict(zip(names, chosen)))
        control = by_name[names[level]]
        values = [opt[1] if isinstance(opt, tuple) else opt for opt in control.options]
        stack = w.Stack([build(names, render, level + 1, chosen + [v]) for v in values],
                        selected_index=control.index)
        links.append(w.jslink((control, "index"), (stack, "selected_index")))
        return stack

    pictures = []
    for item in renders:
        names, render = (item if isinstance(item, tuple) else ([name for name, _ in controls], item))
        missing = [n for n in names if n not in by_name]
        if missing:
            raise LayoutError(f"precomputed_explorer: a render depends on {missing}, which are not controls "
                              f"(the controls are {list(by_name)})")
        pictures.append(build(list(names), render, 0, []))
    box = w.VBox([w.HBox([control for _, control in controls])] + pictures)
    box.links = links  # keep the Link models alive (their state is embedded with the page)
    box.frames = pictures[0]
    box.pictures = pictures
    return box
