"""The widget manager is committed gzipped (vendor/embed-amd.js.gz); every book build serves it unpacked, byte for
byte the file of @jupyter-widgets/html-manager@1.0.15 that the site served before it was packed."""

import hashlib
import os
import shutil
import subprocess
import time

from browser import ROOT, WIDGETS_JS_GZ, unpack_widgets_js

#: sha256 of html-manager 1.0.15's dist/embed-amd.js as the repository committed it unpacked (until 2026-11-28)
EMBED_AMD_SHA256 = "ca87dff57c70ffb2658794fde0eab0e27e5f5472a1f5df7ab2b08e1039fc4b72"


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_site_tests_books_unpack_the_pinned_file(tmp_path):
    unpack_widgets_js(tmp_path)
    assert _sha256(tmp_path / "chapters" / "_widgets_js" / "embed-amd.js") == EMBED_AMD_SHA256


def test_make_book_unpacks_it_before_building(tmp_path):
    """`make book` in a tree holding only the packed file: the unpacking runs, before jupyter-book."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "vendor").mkdir()
    shutil.copy(WIDGETS_JS_GZ, tmp_path / "vendor" / WIDGETS_JS_GZ.name)
    (tmp_path / "chapters" / "_widgets_js").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / ".installed-stamp").write_text("")
    later = time.time() + 10                      # the venv counts as set up: `make -n` prints no pip install
    os.utime(tmp_path / ".venv" / ".installed-stamp", (later, later))
    plan = subprocess.run(["make", "-n", "book"], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    lines = plan.splitlines()
    unpack = next(i for i, line in enumerate(lines) if line.startswith("gunzip"))
    build = next(i for i, line in enumerate(lines) if "jupyter-book build" in line)
    assert unpack < build, plan
    subprocess.run(["make", "chapters/_widgets_js/embed-amd.js"], cwd=tmp_path, check=True, capture_output=True)
    assert _sha256(tmp_path / "chapters" / "_widgets_js" / "embed-amd.js") == EMBED_AMD_SHA256


def test_the_packed_file_is_not_served_and_the_unpacked_one_not_committed():
    static = ROOT / "chapters" / "_widgets_js"
    assert WIDGETS_JS_GZ.parent != static and not list(static.glob("*.gz"))
    tracked = subprocess.run(["git", "ls-files", "chapters/_widgets_js", "vendor"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    assert "vendor/embed-amd.js.gz" in tracked and "chapters/_widgets_js/embed-amd.js" not in tracked, tracked
