"""Sphinx extension for the Layout Lab book: small fixes to what Jupyter Book 1.x puts into every page."""


def _script_key(js):
    # The same inline script arrives once with filename None and once with '' (two registration paths).
    return (getattr(js, "filename", js) or "", getattr(js, "priority", 0),
            tuple(sorted(getattr(js, "attributes", {}).items())))


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    """Drop repeated <script> entries. sphinx-thebe and sphinx-togglebutton register their inline config
    twice per build, which makes the browser raise "Identifier 'THEBE_JS_URL' has already been declared"."""
    if "script_files" in context:
        unique = {}
        for js in context["script_files"]:
            unique.setdefault(_script_key(js), js)
        context["script_files"] = list(unique.values())


def setup(app):
    app.connect("html-page-context", _dedupe_scripts, priority=1000)  # after every other extension
    return {"parallel_read_safe": True, "parallel_write_safe": True}
