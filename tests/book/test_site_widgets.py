"""The static site shows widgets from state saved at execution, with no kernel and no CDN."""

import re

import pytest

from browser import build_book, open_page, require_browser

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def test_slider_renders_from_saved_state(tmp_path):
    require_browser()
    from playwright.sync_api import sync_playwright

    html = build_book(tmp_path, [
        "# A slider\n\nA page with math, $2^{10}$, so MathJax 3 is loaded next to the widgets.",
        "import ipywidgets as w\nw.IntSlider(value=7, min=0, max=10, description='tile')",
    ])
    text = html.read_text()
    assert "application/vnd.jupyter.widget-state+json" in text, "widget state was not saved into the page"
    remote = re.findall(r'src="(https?://[^"]*(?:html-manager|embed-amd|require)[^"]*)"', text)
    assert not remote, f"the page must not load widget JavaScript from a CDN: {remote}"
    assert 'src="_static/embed-amd.js' in text and 'src="_static/require.js' in text
    with sync_playwright() as p:
        browser, page = open_page(p, html)
        try:
            slider = page.wait_for_selector(".widget-slider", timeout=30000)
            readout = page.wait_for_selector(".widget-readout", timeout=5000)
            assert slider.is_visible()
            assert readout.inner_text().strip() == "7"
            assert "tile" in page.inner_text(".widget-label")
            page.screenshot(path=str(tmp_path / "slider.png"))
            # no script error at all: the thebe duplicate is removed by chapters/_ext/layoutlab_site.py and the
            # widget manager's MathJax 2 call is served by chapters/_widgets_js/mathjax-v2-shim.js
            assert not page.errors, page.errors
        finally:
            browser.close()
