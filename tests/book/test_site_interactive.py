"""The static site keeps the swizzle and TV explorers interactive without a kernel: precomputed frames in
nested Stack widgets, switched in the browser by jslink-ed controls (layoutlab.widgets.precomputed_explorer)."""

import shutil

import pytest

from browser import build_book, open_page, require_browser

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

import os

SHOTS = os.environ.get("LAYOUTLAB_SHOTS")  # a directory to keep the screenshots in, for a look


def _visible_frame(page):
    """(image src, caption text) of the frame the page shows now."""
    img = page.locator(".widget-html img:visible").first
    caption = page.locator(".ll-caption:visible").first.inner_text()
    return img.get_attribute("src"), caption


def test_static_swizzle_and_tv_sliders_switch_pictures(tmp_path):
    require_browser()
    from playwright.sync_api import sync_playwright

    html = build_book(tmp_path, [
        "# Swizzle explorer (static)",
        "from layoutlab.widgets import SwizzleExplorer\n"
        "SwizzleExplorer().static(bits=(0, 1, 3), element_sizes=(2,), patterns=('ldmatrix',))",
        "# TV explorer (static)",
        "from layoutlab.widgets import TVExplorer\n"
        "TVExplorer(preset='SM80_16x8x8_F32F16F16F32_TN C').static(threads=[0, 1, 2])",
        "# Layout explorer (hover a cell)",
        "from layoutlab.widgets import LayoutExplorer\nLayoutExplorer('(4,8):(8,1)')",
    ])
    text = html.read_text()
    assert "application/vnd.jupyter.widget-state+json" in text
    assert "LinkModel" in text and "StackModel" in text, "the jslinks and stacks must be in the saved state"
    assert html.stat().st_size < 3_000_000, "keep the page light"
    with sync_playwright() as p:
        browser, page = open_page(p, html)
        try:
            sliders = page.locator(".widget-slider .noUi-handle")
            sliders.first.wait_for(timeout=30000)
            assert sliders.count() == 2
            page.locator(".widget-html img:visible").first.wait_for(timeout=30000)
            src0, caption0 = _visible_frame(page)
            assert "S<3,3,3>" in caption0 and "conflict-free" in caption0
            page.screenshot(path=str(tmp_path / "before.png"), full_page=True)

            sliders.first.focus()
            page.keyboard.press("ArrowLeft")              # B = 3 -> 1
            page.wait_for_timeout(300)
            src1, caption1 = _visible_frame(page)
            assert src1 != src0 and "S<1,3,3>" in caption1 and "4-way conflict" in caption1
            page.keyboard.press("ArrowLeft")              # B = 1 -> 0: no swizzle, 8-way
            page.wait_for_timeout(300)
            src2, caption2 = _visible_frame(page)
            assert src2 not in (src0, src1) and "8-way conflict" in caption2
            readout = page.locator(".widget-readout").first.inner_text().strip()
            assert readout == "0"

            tv_before = page.locator(".ll-caption:visible").nth(1).inner_text()
            assert "(T,V)=(0,0)" in tv_before and "= (0,0)" in tv_before
            sliders.nth(1).focus()
            page.keyboard.press("ArrowRight")             # thread 0 -> 1
            page.wait_for_timeout(300)
            tv_after = page.locator(".ll-caption:visible").nth(1).inner_text()
            assert "(T,V)=(1,0)" in tv_after and "offset 32" in tv_after and "= (0,2)" in tv_after
            # the layout explorer's cells carry their coordinates as tooltips, also without a kernel
            cell = page.locator("button[title='(1,2) idx 9 -> offset 10']")
            assert cell.count() == 1 and cell.inner_text().strip() == "10"
            assert page.locator("button[title*='-> offset']").count() == 32
            page.screenshot(path=str(tmp_path / "after.png"), full_page=True)
            if SHOTS:
                for name in ("before.png", "after.png"):
                    shutil.copy(tmp_path / name, f"{SHOTS}/{name}")
            assert not page.errors, page.errors  # no script error at all (chapters/_ext/layoutlab_site.py)
        finally:
            browser.close()
