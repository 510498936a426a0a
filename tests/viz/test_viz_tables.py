"""viz.show_table, the one table helper of the chapters: HTML in Jupyter and on the website, text elsewhere."""

from __future__ import annotations

from layoutlab import viz


def test_show_table_prints_aligned_text_outside_ipython(capsys):
    viz.show_table(["op", "result"], [["`size`", 24], ["cosize", "`54`"]])
    assert capsys.readouterr().out.splitlines() == ["op      result", "`size`  24", "cosize  `54`"]


def test_show_table_displays_html_with_code_in_ipython(monkeypatch):
    import IPython
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    monkeypatch.setattr(IPython.display, "display", shown.append)
    viz.show_table(["a<b", "x"], [["`(4,6):(6,1)`", 3]])
    (html,) = shown
    assert html.data == ("<table><thead><tr><th>a&lt;b</th><th>x</th></tr></thead><tbody>"
                         "<tr><td><code>(4,6):(6,1)</code></td><td>3</td></tr></tbody></table>")
