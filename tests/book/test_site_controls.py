"""No dead control on the static site: a control that needs a running Python kernel (the LayoutExplorer's text box,
the LinearLayoutExplorer's bit toggles) shows, on the website only, a note whose link opens the chapter live in
JupyterLite; the precomputed explorers' controls switch their pictures in the browser."""

import pytest

from browser import build_book, open_page, require_browser

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

LITE = "lite/notebooks/index.html?path=controls.ipynb"

# For every kernel-only control: is a visible site note in the same explorer (the nearest VBox holding a note)?
_KERNEL_ONLY = """() => {
  const controls = [...document.querySelectorAll('.widget-text input, .widget-toggle-button')];
  return controls.map(c => {
    let box = c.parentElement;
    while (box && !box.querySelector('.ll-live-note')) box = box.parentElement;
    const note = box ? box.querySelector('.ll-live-note') : null;
    return {kind: c.tagName, noted: !!note && note.getBoundingClientRect().height > 0,
            link: note ? note.querySelector('a.ll-lite-edit') !== null : false};
  });
}"""


def test_kernel_only_controls_link_to_the_live_notebook_and_precomputed_ones_work(tmp_path):
    require_browser()
    from playwright.sync_api import sync_playwright

    html = build_book(tmp_path, [
        f'# Controls\n\n<a class="layoutlab-lite-chapter" href="{LITE}">Open this chapter in JupyterLite</a>',
        "from layoutlab.widgets import LayoutExplorer\nLayoutExplorer('(4,8):(8,1)')",
        "from layoutlab.widgets import LinearLayoutExplorer\nLinearLayoutExplorer()",
        "from layoutlab.widgets import SwizzleExplorer\n"
        "SwizzleExplorer().static(bits=(0, 3), element_sizes=(2,), patterns=('ldmatrix',))",
    ], name="controls")
    lite = html.parent / "lite" / "notebooks" / "index.html"        # a stand-in for the JupyterLite app
    lite.parent.mkdir(parents=True, exist_ok=True)
    lite.write_text("<html><body>JupyterLite</body></html>")
    with sync_playwright() as p:
        browser, page = open_page(p, html)
        try:
            page.locator(".ll-live-note").first.wait_for(timeout=30000)
            controls = page.evaluate(_KERNEL_ONLY)
            kinds = [c["kind"] for c in controls]
            assert kinds.count("INPUT") == 1 and kinds.count("BUTTON") == 9, kinds   # 1 text box, 3 x 3 bits
            assert all(c["noted"] and c["link"] for c in controls), controls
            notes = page.locator(".ll-live-note:visible")
            assert notes.count() == 2
            assert "edit this layout in your browser" in notes.first.inner_text()
            # the note's link opens the page's own JupyterLite link (the live notebook) in a new tab
            with page.context.expect_page() as popup:
                notes.first.locator("a.ll-lite-edit").click()
            popup.value.wait_for_load_state()
            assert popup.value.url.endswith(LITE), popup.value.url
            # a precomputed explorer's control really switches its picture, with no kernel
            img = page.locator(".widget-html img:visible").first
            before = img.get_attribute("src")
            slider = page.locator(".widget-slider .noUi-handle").first
            slider.focus()
            page.keyboard.press("ArrowLeft")
            page.wait_for_timeout(300)
            assert page.locator(".widget-html img:visible").first.get_attribute("src") != before
            assert not page.errors, page.errors
        finally:
            browser.close()
