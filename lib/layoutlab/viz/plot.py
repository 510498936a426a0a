"""The matplotlib side of the pictures: a Figure that shows itself as SVG with real text (so it stays sharp and
its text can be read and measured), for the true plots (bar charts, roofline, timelines). Needs matplotlib."""

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = []

# sizes of the plots' text, in points (x 4/3 = CSS px at a figure's natural size, which is what the site shows)
TEXT_PT = 8.5
TITLE_PT = 10


class _BookFigure(Figure):
    """A Figure with an Agg canvas (``fig.canvas.draw()`` renders without pyplot) that notebooks and the website
    show as inline SVG at its natural size (text as text, never scaled down: a wide plot scrolls in its box)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        FigureCanvasAgg(self)

    def _repr_png_(self):
        buf = io.BytesIO()
        self.savefig(buf, format="png", dpi=96)
        return buf.getvalue()

    def _repr_html_(self):
        import matplotlib
        buf = io.StringIO()
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "layoutlab"}):
            self.savefig(buf, format="svg")
        svg = buf.getvalue()
        svg = svg[svg.index("<svg"):]
        return f'<div class="ll-figure-box" style="overflow-x:auto;max-width:100%">{svg}</div>'
