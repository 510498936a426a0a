"""Size of ``layoutlab``'s core, the measure of issue 18 ("the line count of the core drops measurably").

    python tools/core_size.py [REV ...] [--issue-core] [-v]      # no REV: the working tree

Core is ``lib/layoutlab`` without ``kernels/``, ``viz/``, ``widgets/`` (the issue's exclusions) and, unless
``--issue-core``, also without the GPU run scripts ``bench/`` and ``probe/``. Four counts per revision:
physical lines (``wc -l``); code lines (no blank, comment or docstring line); code tokens (independent of
formatting, so that wrapping or joining lines cannot move it); docstring lines.
"""
import argparse
import ast
import io
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = {"kernels", "viz", "widgets", "_results", "results"}    # a package (or, before the split, a module), data
SCRIPTS = {"bench", "probe"}


def sources(rev):
    """(path relative to lib/layoutlab, text) of every Python file at ``rev`` (None: the working tree)."""
    if rev is None:
        pkg = ROOT / "lib" / "layoutlab"
        return [(str(p.relative_to(pkg)), p.read_text()) for p in sorted(pkg.rglob("*.py"))]
    git = ["git", "-C", str(ROOT)]
    listing = subprocess.run(git + ["ls-tree", "-r", "--name-only", rev, "lib/layoutlab"], capture_output=True,
                             text=True)
    if listing.returncode:
        raise SystemExit(f"core_size: {rev!r} is not a revision of {ROOT} (git says: {listing.stderr.strip()}); "
                         "give a commit, tag or branch, or nothing for the working tree")
    names = listing.stdout.split()
    return [(n[len("lib/layoutlab/"):], subprocess.run(git + ["show", f"{rev}:{n}"], capture_output=True, text=True,
                                                         check=True).stdout) for n in names if n.endswith(".py")]


def measure(src):
    """{'phys', 'code', 'tokens', 'doc'} of one module's text."""
    doc = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
                doc.update(range(first.lineno, first.end_lineno + 1))
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    code, tokens = set(), 0
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type not in skip and tok.start[0] not in doc:
            tokens += 1
            code.update(range(tok.start[0], tok.end[0] + 1))
    return {"phys": src.count("\n"), "code": len(code), "tokens": tokens, "doc": len(doc)}


def core_size(rev=None, issue_core=False, everything=False):
    """Per-module counts of the core at ``rev`` (None: the working tree); ``everything``: of every module."""
    skip = {"_results", "results"} if everything else SKIP if issue_core else SKIP | SCRIPTS
    return {name: measure(src) for name, src in sources(rev) if name.split("/")[0].removesuffix(".py") not in skip}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("revs", nargs="*", help="git revisions (default: the working tree)")
    ap.add_argument("--issue-core", action="store_true", help="count bench/ and probe/ too")
    ap.add_argument("-v", action="store_true", help="per module")
    args = ap.parse_args()
    for rev in args.revs or [None]:
        per = core_size(rev, args.issue_core)
        total = {k: sum(m[k] for m in per.values()) for k in ("phys", "code", "tokens", "doc")}
        print(f"{rev or 'working tree'}: {len(per)} modules, {total}")
        for name, m in sorted(per.items(), key=lambda kv: -kv[1]["code"]) if args.v else ():
            print(f"  {name:28s} {m}")


if __name__ == "__main__":
    main()
