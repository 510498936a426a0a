"""Every figure of the built book is legible: in Chromium at 1280 px, on every page, the smallest text of every
figure is at least 10 CSS px. Inline SVG (the library's pictures and the matplotlib plots, shown as SVG with real
text): each <text>'s computed font size times its on-screen scale. SVG images (the explorers' precomputed frames):
the font sizes written in the file times the image's scale. PNG figures made with matplotlib (a chapter's own
plot): matplotlib's default text size (10 pt, the size of its tick labels and legends) at the PNG's dpi (its pHYs
chunk) times the image's scale; a PNG that is not matplotlib's cannot be measured and is reported.

The book needs executed outputs, so this uses a built site: ``LAYOUTLAB_SITE`` (a ``_build/html`` folder), else
the repository's own ``_build/html`` (``make book``), else it builds the book here (minutes; without the lite site).
"""

import os
from pathlib import Path

import pytest

from browser import CHROMIUM, CHROMIUM_ARGS, ROOT, executed_book, require_browser

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("figures")]  # its own executed build: free to run beside the site group

MIN_PX = 10.0
MPL_DEFAULT_PT = 10.0


def _png_text_px(path, shown_width):
    """(px, None) of matplotlib's default 10-pt text in a PNG shown ``shown_width`` px wide, or (None, why)."""
    import struct
    data = Path(path).read_bytes()
    if b"matplotlib" not in data[:400]:
        return None, "not made by matplotlib"
    width = struct.unpack(">I", data[16:20])[0]
    at = data.find(b"pHYs")
    dpi = struct.unpack(">I", data[at + 4:at + 8])[0] * 0.0254 if at > 0 else 72.0
    return MPL_DEFAULT_PT * dpi / 72 * shown_width / width, None

_MEASURE = """() => {
  const out = {svg: [], img: [], png: [], figures: 0};
  const boxes = [...document.querySelectorAll('.ll-figure-box svg, svg.ll-figure')];
  const seen = new Set();
  for (const svg of boxes) {
    if (seen.has(svg)) continue;
    seen.add(svg);
    const r = svg.getBoundingClientRect();
    if (!r.width) continue;                       // a hidden frame or tab: measured where it is shown
    out.figures += 1;
    let least = null;
    for (const t of svg.querySelectorAll('text')) {
      if (!t.textContent.trim()) continue;
      const m = t.getScreenCTM();
      const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
      if (least === null || px < least.px) least = {px, text: t.textContent.trim().slice(0, 40)};
    }
    if (least) out.svg.push(least);
  }
  for (const img of document.querySelectorAll('img')) {
    const src = img.getAttribute('src') || '';
    const r = img.getBoundingClientRect();
    if (src.startsWith('data:image/svg+xml;base64,')) {
      const doc = new DOMParser().parseFromString(atob(src.slice(26)), 'image/svg+xml');
      const root = doc.documentElement;
      const natural = parseFloat(root.getAttribute('width'));
      const scale = r.width ? r.width / natural : parseFloat(img.getAttribute('width') || natural) / natural;
      let least = null;
      const walk = (node, size) => {
        const own = node.getAttribute && node.getAttribute('font-size');
        if (own) size = parseFloat(own);
        if (node.tagName === 'text' && node.textContent.trim()) {
          if (least === null || size * scale < least.px) least = {px: size * scale, text: node.textContent.slice(0, 40)};
        }
        for (const c of node.children || []) walk(c, size);
      };
      walk(root, 16);
      if (least) { out.img.push(least); out.figures += 1; }
    } else if (/_images\\/.*\\.png$/.test(src) && r.width > 0) {
      out.png.push({src: img.src, width: r.width});
    }
  }
  return out;
}"""


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    require_browser()
    given = os.environ.get("LAYOUTLAB_SITE")
    if given:
        return Path(given)
    if (ROOT / "_build" / "html" / "chapters" / "01_layouts.html").is_file():
        return ROOT / "_build" / "html"
    book, proc = executed_book(tmp_path_factory)      # shared with test_chapters_execute.py
    if not (book / "_build" / "html" / "chapters" / "01_layouts.html").is_file():
        raise AssertionError(f"jupyter-book build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return book / "_build" / "html"


def test_every_figure_text_is_at_least_10_css_px(built_site):
    from playwright.sync_api import sync_playwright

    pages = sorted((built_site / "chapters").glob("*.html"))
    assert pages, f"no pages in {built_site}"
    report, small, rasters, figures = [], [], [], 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:")
                       else route.continue_())
            for html in pages:
                page.goto(html.as_uri(), wait_until="load")
                page.wait_for_timeout(1500)          # widgets render from their saved state
                found = page.evaluate(_MEASURE)
                for png in found["png"]:
                    from urllib.parse import unquote, urlparse
                    px, why = _png_text_px(unquote(urlparse(png["src"]).path), png["width"])
                    if px is None:
                        rasters.append(f"{html.name}: {png['src']} ({why})")
                    else:
                        found["img"].append({"px": px, "text": "(matplotlib PNG, default text)"})
                        found["figures"] += 1
                least = min([x["px"] for x in found["svg"] + found["img"]], default=None)
                figures += found["figures"]
                report.append(f"{html.name}: {found['figures']} figures, smallest text "
                              f"{'-' if least is None else f'{least:.1f} px'} ({len(found['png'])} PNG)")
                small += [(html.name, x) for x in found["svg"] + found["img"] if x["px"] < MIN_PX - 0.05]
        finally:
            browser.close()
    print("\n" + "\n".join(report))
    assert figures > 0
    assert not small, f"figure text under {MIN_PX} px: {small[:20]}"
    assert not rasters, f"raster figures whose text cannot be measured (draw them as SVG): {rasters}"
