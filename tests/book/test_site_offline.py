"""The website works without internet: every page of the book, loaded in Chromium with the network blocked,
renders its formulas with the MathJax the site serves itself, and asks nothing of any other machine.

The book is the site tests' shared build (tests/browser.py): the repository's own chapters and configuration,
with notebook execution switched off (what is tested here is the page shell, the formulas in the text and the
static files, not the outputs, which the notebook tests check).
"""


import pytest

from browser import CHROMIUM, CHROMIUM_ARGS, site  # noqa: F401  (site: the shared fixture)

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("site")]

# Text that would be left on the page if MathJax did not typeset it (code blocks are not looked at).
RAW_MATH = ("\\[", "\\(", "$$")

_UNTYPESET_TEXT = """() => {
  const body = document.body.cloneNode(true);
  body.querySelectorAll('pre, code, script, style, mjx-container, .MathJax').forEach(e => e.remove());
  return body.textContent;
}"""


def test_mathjax_is_served_by_the_site(site):
    served = site / "_static" / "mathjax"
    assert (served / "tex-chtml.js").is_file()
    assert list((served / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff")), "MathJax's fonts"
    page = (site / "chapters" / "02_layout_algebra.html").read_text()
    assert "_static/mathjax/tex-chtml.js" in page and "cdn.jsdelivr.net/npm/mathjax" not in page


def test_every_page_renders_its_formulas_with_the_network_blocked(site):
    from playwright.sync_api import sync_playwright

    pages = sorted((site / "chapters").glob("*.html"))       # every page of the book (index.html redirects)
    assert len(pages) >= 14, [p.name for p in pages]
    outside, formulas, report = [], {}, []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()

            def block(route):
                url = route.request.url
                if url.startswith(("file://", "data:", "blob:", "about:")):
                    route.continue_()
                else:
                    outside.append(url)
                    route.abort()

            context.route("**/*", block)
            for html in pages:
                page = context.new_page()
                errors = []
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                page.goto(html.as_uri(), wait_until="load")
                if "_static/mathjax/tex-chtml.js" in html.read_text():   # Sphinx loads it where there is math
                    page.wait_for_function("() => window.MathJax && window.MathJax.startup "
                                           "&& window.MathJax.startup.promise", timeout=30000)
                    page.evaluate("() => window.MathJax.startup.promise")
                    assert page.evaluate("() => window.MathJax.version").startswith("3.2"), html.name
                formulas[html.name] = page.locator("mjx-container").count()
                text = page.evaluate(_UNTYPESET_TEXT)
                raw = [m for m in RAW_MATH if m in text]
                assert not raw, f"{html.name}: raw TeX left on the page: {raw}"
                assert not errors, f"{html.name}: script errors {errors}"
                report.append(f"{html.name}: {formulas[html.name]} formulas")
                page.close()
        finally:
            browser.close()
    print("\n" + "\n".join(report))
    assert not outside, f"pages asked for {len(outside)} outside resources, e.g. {sorted(set(outside))[:5]}"
    assert sum(formulas.values()) > 0 and formulas["02_layout_algebra.html"] > 0, formulas
