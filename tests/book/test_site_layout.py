"""The website as a reader sees it, on a desktop (1280 px) and on a phone (390 px) (issue 27).

Every page of the shared test site (tests/browser.py: the book as `make book` builds it, chapters not executed,
plus one executed page of real long output lines and a `show_table` table) is loaded in Chromium:

* on a phone the ☰ opens the chapter list and it closes again (pydata-sphinx-theme issue 2451 made it a no-op:
  chapters/_ext/static/layoutlab-site.js), and no page scrolls sideways as a whole: display math scrolls
  inside its own box;
* on a desktop the ☰ hides and shows the sidebar, there is no empty header bar with a second search box, and
  no output line (the `[identical]` verdicts), no table column and no line of code (a code cell's input or a
  code block in the prose) hides behind a scroll bar.
"""

import pytest

from browser import CHECK_PAGE, CHECK_PAGE_CELLS, CHROMIUM, CHROMIUM_ARGS, site  # noqa: F401  (site: the shared fixture)

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("site")]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}

# Boxes inside the article whose content is wider than the box (it then hides behind a scroll bar), with
# what they are: output blocks, code (cell inputs, code blocks in the prose) and tables.
_HIDDEN = """() => {
  const out = [];
  const wide = e => e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0;
  document.querySelectorAll('.bd-article .cell_output pre').forEach(e => {
    if (wide(e)) out.push('output: ' + e.textContent.slice(0, 80));
  });
  document.querySelectorAll('.bd-article div.highlight pre').forEach(e => {
    if (e.closest('.cell_output') || !wide(e)) return;
    const long = e.textContent.split('\\n').reduce((a, b) => b.length > a.length ? b : a, '');
    out.push('code: ' + long.slice(0, 100));
  });
  document.querySelectorAll('.bd-article table').forEach(t => {
    for (let e = t; e && !e.classList.contains('bd-article'); e = e.parentElement) {
      if (wide(e)) { out.push('table: ' + t.textContent.trim().slice(0, 80)); break; }
    }
  });
  return out;
}"""

# Display math boxes wider than the page's content column that do not scroll inside their own box.
_MATH_OVERFLOW = """() => [...document.querySelectorAll('mjx-container[display="true"]')].filter(m => {
  const box = m.getBoundingClientRect();
  const scrolls = ['auto', 'scroll'].includes(getComputedStyle(m).overflowX);
  return box.right > document.documentElement.clientWidth + 1 || (m.scrollWidth > m.clientWidth + 1 && !scrolls);
}).map(m => m.textContent.slice(0, 60))"""


def _pages(site):
    return sorted((site / "chapters").glob("*.html")) + [site / f"{CHECK_PAGE}.html"]


def _open(playwright, viewport):
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    context = browser.new_context(viewport=viewport)
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:", "blob:"))
                  else r.abort())
    return browser, context


def _goto(page, html):
    page.goto(html.as_uri(), wait_until="load")
    if "_static/mathjax/tex-chtml.js" in html.read_text():
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30000)
        page.evaluate("() => MathJax.startup.promise")


def test_code_blocks_get_one_span_per_line_with_its_indentation_and_keep_their_text():
    import html
    import re
    import sys

    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    from browser import ROOT
    sys.path.insert(0, str(ROOT / "chapters" / "_ext"))
    import layoutlab_site

    source = 'def f(x):\n    """doc\n  more"""\n    return [x,  # a\n            x < 1]\n\nf(2)\n'
    block = highlight(source, PythonLexer(), HtmlFormatter())     # what Sphinx writes for a code cell
    # as Sphinx and myst-nb write a code cell's input, and an output (left as it is)
    output = f'<div class="output stream highlight-myst-ansi notranslate">{block}</div>'
    page = (f'<p>before</p><div class="highlight-ipython3 notranslate">{block}</div>{output}<p>after</p>')
    context = {"body": page}
    layoutlab_site._fit_code(None, "page", "page.html", context, None)
    body = context["body"]
    text = lambda h: html.unescape(re.sub(r"<[^>]*>", "", h))   # noqa: E731
    assert text(body) == text(page) and text(page).count(source) == 2
    assert body.endswith(output + "<p>after</p>")
    assert [int(n) for n in re.findall(r'class="ll-line" style="--lead:(\d+)"', body)] == [0, 4, 2, 4, 12, 0, 0]
    assert body.count("<span") == body.count("</span>")


def test_phone_menu_opens_and_closes_the_chapter_list(site):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, context = _open(p, PHONE)
        try:
            page = context.new_page()
            errors = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            _goto(page, site / "chapters" / "03_tv_layouts.html")
            dialog = page.locator("#pst-primary-sidebar-modal")
            chapter_link = dialog.locator("a[href*='05_swizzles_banks']").first
            toggle = page.locator(".primary-toggle:visible")
            assert toggle.count() == 1, "one visible ☰ on a phone"
            for close in ("button", "Escape", "backdrop"):
                toggle.click()
                page.wait_for_function("() => document.getElementById('pst-primary-sidebar-modal').open",
                                       timeout=5000)
                assert chapter_link.is_visible(), "the chapter list shows in the opened menu"
                box = dialog.bounding_box()
                assert box["width"] > 200 and box["x"] >= 0, box
                if close == "button":
                    dialog.locator(".layoutlab-close").click()
                elif close == "Escape":
                    page.keyboard.press("Escape")
                else:
                    page.mouse.click(PHONE["width"] - 10, PHONE["height"] // 2)   # the backdrop, right of it
                page.wait_for_function("() => !document.getElementById('pst-primary-sidebar-modal').open",
                                       timeout=5000)
                assert not chapter_link.is_visible()
            toggle.click()
            chapter_link.click()
            page.wait_for_url("**/05_swizzles_banks.html*", timeout=10000)
            assert not errors, errors
        finally:
            browser.close()


def test_desktop_menu_hides_and_shows_the_sidebar_and_there_is_no_empty_header(site):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, context = _open(p, DESKTOP)
        try:
            page = context.new_page()
            _goto(page, site / "chapters" / "02_layout_algebra.html")
            assert not page.locator(".bd-header").is_visible(), "the header bar with a second search box is gone"
            assert page.locator(".search-button-field:visible, .bd-search:visible, .search-button:visible").count() \
                <= 1, "one search box"
            sidebar = page.locator("#pst-primary-sidebar")
            link = sidebar.locator("a[href*='01_layouts']").first
            assert link.is_visible()
            width = page.locator(".bd-article").bounding_box()["width"]
            toggle = page.locator(".primary-toggle:visible")
            assert toggle.count() == 1
            toggle.click()
            page.wait_for_timeout(400)
            assert not link.is_visible(), "the ☰ hides the sidebar"
            assert page.locator(".bd-article").bounding_box()["width"] >= width, "and the article keeps its room"
            toggle.click()
            page.wait_for_timeout(400)
            assert link.is_visible(), "and shows it again"
        finally:
            browser.close()


def test_no_page_scrolls_sideways_on_a_phone_and_display_math_stays_in_its_box(site):
    from playwright.sync_api import sync_playwright

    report, bad = [], []
    with sync_playwright() as p:
        browser, context = _open(p, PHONE)
        try:
            page = context.new_page()
            for html in _pages(site):
                _goto(page, html)
                wide = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
                math = page.evaluate(_MATH_OVERFLOW)
                displays = page.locator('mjx-container[display="true"]').count()
                report.append(f"{html.name}: page {wide[0]} px wide, {displays} display formulas")
                if wide[0] > wide[1] or math:
                    bad.append((html.name, wide, math[:3]))
        finally:
            browser.close()
    print("\n" + "\n".join(report))
    assert not bad, bad
    assert any("03_tv_layouts" in r and not r.endswith(" 0 display formulas") for r in report), report


def test_no_output_line_or_table_column_hides_behind_a_scroll_bar_on_a_desktop(site):
    from playwright.sync_api import sync_playwright

    hidden, report = {}, []
    with sync_playwright() as p:
        browser, context = _open(p, DESKTOP)
        try:
            page = context.new_page()
            for html in _pages(site):
                _goto(page, html)
                found = page.evaluate(_HIDDEN)
                tables = page.locator(".bd-article table").count()
                report.append(f"{html.name}: {tables} tables, {len(found)} hidden")
                if found:
                    hidden[html.name] = found[:4]
                if html.name == f"{CHECK_PAGE}.html":
                    # the verdict at the end of the long line is on screen, inside its output box
                    verdict = page.locator(".cell_output pre", has_text="[identical]").first
                    box = verdict.bounding_box()
                    end = page.evaluate("""(pre) => { const r = document.createRange();
                        const t = pre.textContent, at = t.lastIndexOf('[identical]');
                        const node = [...pre.querySelectorAll('*'), pre].flatMap(e => [...e.childNodes])
                          .find(n => n.nodeType === 3 && n.textContent.includes('[identical]'));
                        const i = node.textContent.lastIndexOf('[identical]');
                        r.setStart(node, i); r.setEnd(node, i + 11); return r.getBoundingClientRect().right; }""",
                                        verdict.element_handle())
                    assert end <= box["x"] + box["width"] + 1, (end, box)
                    # a code line longer than the column wraps under itself, deeper than its own indentation
                    # and marked; the code's text (what the copy button copies) is exactly the cell's source
                    cell = CHECK_PAGE_CELLS[2]
                    pre = page.locator(".cell_input pre", has_text="staged A (MN)").first
                    assert pre.text_content().rstrip("\n") == cell
                    # per line: its indentation, and where each of its rows starts, in columns from the box
                    lines = page.evaluate("""(pre) => {
                      const probe = document.createElement('span'); probe.textContent = '0'.repeat(40);
                      pre.append(probe); const ch = probe.getBoundingClientRect().width / 40; probe.remove();
                      const left = pre.querySelector('.ll-line').getBoundingClientRect().left;
                      return [...pre.querySelectorAll('.ll-line')].map(l => {
                        const starts = new Map(), r = document.createRange();
                        r.selectNodeContents(l);
                        for (const b of r.getClientRects()) if (b.width > 0) {
                          const row = Math.round(b.top);
                          starts.set(row, Math.min(starts.has(row) ? starts.get(row) : 1e9, b.left));
                        }
                        const text = l.textContent;
                        return {lead: text.length - text.trimStart().length, marked: getComputedStyle(l)
                                  .backgroundImage.includes('svg'),
                                rows: [...starts.keys()].sort((a, b) => a - b).map(k => (starts.get(k) - left) / ch)};
                      }); }""", pre.element_handle())
                    assert len(lines) == len(cell.splitlines()), lines
                    assert any(len(line["rows"]) >= 2 for line in lines), f"this cell's long lines wrap: {lines}"
                    for line in lines:
                        first, *more = line["rows"]
                        assert line["marked"] and abs(first - line["lead"]) < 0.5, line
                        assert all(abs(row - (line["lead"] + 4)) < 0.5 for row in more), line
                    # table cells have padding: neighbouring columns do not run together
                    pad = page.evaluate("() => parseFloat(getComputedStyle("
                                        "document.querySelector('.cell_output table td')).paddingLeft)")
                    assert pad >= 4, pad
        finally:
            browser.close()
    print("\n" + "\n".join(report))
    assert not hidden, hidden
    assert any(r.startswith("conformance.html") and not r.startswith("conformance.html: 0 tables")
               for r in report), report
