"""The repository tracks no virtual environment: every worktree links ``.venv`` to the shared one, and a tracked
``.venv`` link, once merged, replaces the main checkout's environment with a link to itself (this happened twice
on 2026-11-28). ``.gitignore`` must ignore ``.venv`` as a link too, not only as a directory (``.venv/``)."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_no_virtual_environment_is_tracked():
    tracked = subprocess.run(["git", "ls-files", "--", ".venv", "venv", ".venv/*"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    assert not tracked, f"tracked virtual environment {tracked}: run `git rm --cached {tracked[0]}` and commit"


def test_gitignore_ignores_a_venv_link():
    lines = [ln.strip() for ln in (ROOT / ".gitignore").read_text().splitlines()]
    assert ".venv" in lines, "'.venv/' ignores only a directory; worktrees link .venv, so ignore '.venv'"
