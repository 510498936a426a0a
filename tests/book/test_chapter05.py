"""Chapter 5 (swizzles and banks), and the chapters of this engineer's part of the 2026-11-28 review: each ends
with a "Next" line pointing to the chapter that follows it in the table of contents."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _toc_chapters():
    return re.findall(r"file: chapters/(\d\d_\w+)", (ROOT / "_toc.yml").read_text())


@pytest.mark.parametrize("name", ["01_layouts", "05_swizzles_banks", "08_wgmma"])
def test_chapter_ends_with_a_next_line_to_the_following_chapter(name):
    order = _toc_chapters()
    following = order[order.index(name) + 1]
    nb = lambda n: json.loads((ROOT / "chapters" / f"{n}.ipynb").read_text())["cells"]
    label = re.match(r"\((ch-[\w-]+)\)=", "".join(nb(following)[0]["source"])).group(1)
    last = "".join(nb(name)[-1]["source"]).rstrip()
    next_line = last[last.rindex("\n\n") + 2:]
    assert next_line.startswith(f"**Next:** {{ref}}`{label}` — "), next_line
