"""Grading outside the student's process, for stock ``nbgrader autograde`` (enabled in ``nbgrader_config.py``).

``GradeOutside`` takes the place of nbgrader's ``Execute`` step. For each submission it

1. runs the student's notebook in a **sandboxed kernel** (bubblewrap: no network, none of the course's files --
   gradebook, ``source/``, other students -- only a copy of the submission's folder, a memory, CPU-time and
   file-size limit), with every test cell replaced by an export of the answer variables it reads, as data
   (``llanswers.export_answers``: ints, strings, tuples, lists, layouts as their CuTe string, a
   function as its table over the inputs named by a ``#| tabulate name: inputs`` line of the test cell);
2. reads, outside any kernel, how each answer was computed (``llanswers.trace_answers``, for
   ``grading.check_reasoned``);
3. runs the course's own cells and the full test cells (hidden tests included) in a **fresh kernel** that never
   ran student code, given only the exported answers;
4. writes the test cells' outputs (an error = 0 points, as nbgrader reads them) and the student's own outputs into
   the notebook, which nbgrader then scores as usual.

``RestoreCells`` is nbgrader's ``OverwriteCells`` comparing a test cell with what the student was given (hidden
tests removed), so an untouched notebook gives no "checksum has changed" warning; with a teacher secret
(``c.RestoreCells.secret_file``) it puts each student's own ``SEED`` (from the secret and the student id) into
the setup cell. ``python llgrade.py release exNN STUDENT ...`` writes those per-student releases.
"""

import ast
import builtins
import copy
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import sys
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from nbformat.v4 import new_code_cell
from traitlets import Enum, Integer, Unicode

from nbgrader import utils
from nbgrader.preprocessors import Execute, OverwriteCells

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
from llanswers import read_export, trace_answers  # noqa: E402  (next to this file)

HIDDEN = re.compile(r"^[^\n]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[^\n]*(\n|$)", re.S | re.M)
SEED_LINE = re.compile(r"^SEED = \d+", re.M)
TABULATE = re.compile(r"^#\| tabulate (\w+): (.+)$", re.M)


# ------------------------------------------------------------------------------------------- per-student SEED
def read_secret(path):
    path = os.path.expanduser(path) if path else ""
    return Path(path).read_bytes().strip() if path and Path(path).is_file() else None


def seed_for(secret: bytes, assignment: str, student: str) -> int:
    """The SEED of ``student``'s variant of ``assignment``: from the teacher's secret, unguessable without it."""
    digest = hmac.new(secret, f"{assignment}/{student}".encode(), hashlib.sha256).hexdigest()
    return int(digest[:12], 16) % 1_000_000 + 2


def with_seed(source, seed):
    return SEED_LINE.sub(f"SEED = {seed}", source, count=1)


class RestoreCells(OverwriteCells):
    """nbgrader's OverwriteCells, quiet about an untouched test cell, and the student's own SEED put back."""

    secret_file = Unicode("", help="A file with the teacher's secret: each student gets their own SEED.").tag(
        config=True)

    def preprocess(self, nb, resources):
        secret = read_secret(self.secret_file)
        self._seed = (seed_for(secret, resources["nbgrader"]["assignment"], resources["nbgrader"]["student"])
                      if secret else None)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id and utils.is_locked(cell) and cell.cell_type == "code":
            try:
                source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id).source
            except Exception:  # noqa: BLE001 - MissingEntry: OverwriteCells reports it
                source = None
            if source is not None:
                given = HIDDEN.sub("", source).rstrip()
                mine = cell.source if self._seed is None else SEED_LINE.sub(
                    SEED_LINE.search(source).group(0) if SEED_LINE.search(source) else "", cell.source, count=1)
                if mine.rstrip() in (given, source.rstrip()):
                    cell.source = source   # what the student was given: restore the hidden tests, no warning
                elif self._seed is not None and SEED_LINE.search(source):
                    cell.source = mine
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        if self._seed is not None and utils.is_locked(cell) and cell.cell_type == "code":
            cell.source = with_seed(cell.source, self._seed)
        return cell, resources


# ------------------------------------------------------------------------------------------------ the sandbox
def _sandbox_prefix(work, memory_mb, cpu_seconds):
    """bubblewrap arguments: the Python installation and the layoutlab package read-only, the work folder
    writable, nothing else of the file system, no network, a fresh /tmp; then resource limits."""
    import layoutlab

    lib = str(Path(layoutlab.__file__).resolve().parent.parent)
    ro = {sys.prefix, sys.base_prefix, lib, str(Path(sys.executable).resolve().parent)}
    try:   # the python3 kernel spec may name the environment by another path (a moved or linked venv)
        from jupyter_client.kernelspec import get_kernel_spec

        kernel_python = Path(get_kernel_spec("python3").argv[0])
        ro |= {str(kernel_python.parent.parent), str(kernel_python.resolve().parent)}
    except Exception:  # noqa: BLE001 - no such spec: nbclient falls back to this Python
        pass
    ro = {d for d in ro if os.path.isabs(d) and os.path.exists(d)} | {os.path.realpath(d) for d in ro if os.path.exists(d)}
    args = ["bwrap", "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for d in ["/usr", "/bin", "/lib", "/lib64", "/sbin", "/etc"]:
        args += ["--ro-bind-try", d, d]
    for d in sorted(ro):
        args += ["--ro-bind", d, d]
    lib_copy = os.path.join(work, ".ll")      # the exporter: read-only, although the work folder is writable
    args += ["--bind", work, work, "--ro-bind", lib_copy, lib_copy, "--chdir", work, "--clearenv",
             "--setenv", "HOME", work, "--setenv", "PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin",
             "--setenv", "PYTHONPATH", lib,
             "--setenv", "MPLBACKEND", "Agg", "--setenv", "MPLCONFIGDIR", "/tmp", "--setenv", "LANG", "C.UTF-8",
             "--setenv", "PYDEVD_DISABLE_FILE_VALIDATION", "1"]
    return args + _limits(memory_mb, cpu_seconds)


def _limits(memory_mb, cpu_seconds):
    code = ("import os, resource, sys; M = int(sys.argv[1]) << 20; C = int(sys.argv[2]);"
            "resource.setrlimit(resource.RLIMIT_AS, (M, M)); resource.setrlimit(resource.RLIMIT_CPU, (C, C));"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20));"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256)); os.execv(sys.argv[3], sys.argv[3:])")
    return [sys.executable, "-c", code, str(memory_mb), str(cpu_seconds)]


def sandbox_available():
    return shutil.which("bwrap") is not None and os.system(
        "bwrap --ro-bind / / --unshare-all --die-with-parent true >/dev/null 2>&1") == 0


def kernel_manager_class(work, prefix):
    """A kernel manager class whose kernels talk over Unix sockets in ``work`` and start under ``prefix``
    (nbclient creates it, and so shuts the kernel down after the notebook)."""
    conn = os.path.join(work, ".k")
    os.makedirs(conn, exist_ok=True)

    class Sandboxed(AsyncKernelManager):
        def __init__(self, **kwargs):
            super().__init__(transport="ipc", ip=os.path.join(conn, "k"), **kwargs)
            self.connection_file = os.path.join(conn, "kernel.json")
            # A signal would reach bubblewrap, not the kernel: interrupt (per-cell time limit) by message.
            self.kernel_spec.interrupt_mode = "message"

        def format_kernel_cmd(self, extra_arguments=None):
            return prefix + super().format_kernel_cmd(extra_arguments)

    return Sandboxed


# --------------------------------------------------------------------------------------------- the notebooks
def _role(cell):
    """test, locked (the course's code), student, or text. After RestoreCells only a cell with a grade_id from the
    gradebook keeps one, and its source is the course's: a cell the student marked "locked" is still theirs."""
    meta = cell.metadata.get("nbgrader", {})
    if cell.cell_type != "code":
        return "text"
    if not meta.get("grade_id"):
        return "student"
    if meta.get("grade") and not meta.get("solution"):
        return "test"
    return "locked" if meta.get("locked") else "student"


def free_names(source):
    """The names a test cell reads but does not set: the answers (and the course's own variables)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    stored |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
               for a in n.posonlyargs + n.args + n.kwonlyargs + [x for x in (n.vararg, n.kwarg) if x]}
    stored |= {(a.asname or a.name).split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
               for a in n.names}
    loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return sorted(loads - stored - set(dir(builtins)) - {"grading"})


def _with_answers_module(folder):
    """``folder``/.ll holding a copy of llanswers.py (the kernels import it from there)."""
    lib = os.path.join(folder, ".ll")
    os.makedirs(lib, exist_ok=True)
    shutil.copy(HERE / "llanswers.py", lib)
    return lib


def export_cell(source, lib, nonce):
    names = free_names(source)
    domains = ", ".join(f"{n!r}: (lambda: {expr})" for n, expr in TABULATE.findall(source))
    return (f"__import__('sys').path.insert(0, {lib!r})\nfrom llanswers import export_answers as _ll_export\n"
            f"_ll_export({names!r}, globals(), {{{domains}}}, {nonce!r})")


def _text(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream"
                   and o.get("name") == "stdout")


def grader_notebook(nb, exports, traces, lib):
    """The course's cells and full tests, with the exported answers defined before each test."""
    out = copy.deepcopy(nb)
    cells = [new_code_cell(f"__import__('sys').path.insert(0, {lib!r})\n"
                           "from llanswers import inject_answers as _ll_inject\n_ll_locked = set(globals())")]
    index = []
    for i, cell in enumerate(nb.cells):
        role = _role(cell)
        if role == "locked":
            cells += [new_code_cell(cell.source), new_code_cell("_ll_locked |= set(globals())")]
        elif role == "test":
            cells.append(new_code_cell(f"_ll_inject(globals(), {json.dumps(exports.get(i, {}))!r}, "
                                       f"{json.dumps(traces.get(i, {}))!r}, _ll_locked)"))
            cells.append(new_code_cell(cell.source))
            index.append((i, len(cells) - 1))
    out.cells = cells
    return out, index


class GradeOutside(Execute):
    """nbgrader's Execute step, split: the student's code in a sandbox, the tests in a kernel of their own."""

    sandbox = Enum(["auto", "bwrap", "none"], "auto", help="bwrap: require bubblewrap; auto: use it if it works; "
                   "none: only a separate folder and resource limits.").tag(config=True)
    memory_mb = Integer(4096, help="Address-space limit of the student's kernel (MiB).").tag(config=True)
    cpu_seconds = Integer(300, help="CPU-time limit of the student's kernel (s).").tag(config=True)

    def _run(self, nb, resources, km_class):
        default, self.kernel_manager_class = self.kernel_manager_class, km_class
        try:
            return super().preprocess(nb, resources)[0]
        finally:
            self.kernel_manager_class = default

    def preprocess(self, nb, resources):
        roles = [_role(c) for c in nb.cells]
        work = tempfile.mkdtemp(prefix="llgrade-")
        os.chmod(work, 0o700)
        lib = _with_answers_module(work)
        student = copy.deepcopy(nb)
        nonces = {}
        for i, (cell, role) in enumerate(zip(student.cells, roles)):
            if role == "test":
                nonces[i] = secrets.token_hex(16)
                cell.source = export_cell(cell.source, lib, nonces[i])
        use_bwrap = self.sandbox == "bwrap" or (self.sandbox == "auto" and sandbox_available())
        if self.sandbox == "bwrap" and not sandbox_available():
            raise RuntimeError("bubblewrap (bwrap) does not work here: install it (apt-get install bubblewrap) "
                               "or set c.GradeOutside.sandbox = 'none' in nbgrader_config.py")
        if not use_bwrap:
            self.log.warning("grading without a sandbox (no working bubblewrap): the student's code can read the "
                             "files of this machine that you can")
        try:
            here = resources.get("metadata", {}).get("path") or "."
            sub = os.path.join(work, "submission")
            shutil.copytree(here, sub, ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints"))
            prefix = _sandbox_prefix(work, self.memory_mb, self.cpu_seconds) if use_bwrap else \
                _limits(self.memory_mb, self.cpu_seconds)
            run_res = copy.deepcopy(resources)
            run_res.setdefault("metadata", {})["path"] = sub
            student = self._run(student, run_res, kernel_manager_class(work, prefix))

            kinds = [(r if r != "text" else "locked", c.source if r != "text" else "") for r, c in
                     zip(roles, nb.cells)]
            exports, traces = {}, {}
            for i, role in enumerate(roles):
                if role == "test":
                    exports[i] = read_export(_text(student.cells[i]), nonces[i])
                    traces[i] = trace_answers(kinds, list(exports[i]), test_index=i)
            gwork = os.path.join(work, "grader")
            os.makedirs(gwork)
            graded, index = grader_notebook(nb, exports, traces, _with_answers_module(gwork))
            run_res["metadata"]["path"] = gwork
            graded = self._run(graded, run_res, kernel_manager_class(gwork, []))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        for cell, ran, role in zip(nb.cells, student.cells, roles):
            if role != "text":
                cell.outputs, cell.execution_count = ran.outputs, ran.execution_count
        for i, j in index:
            nb.cells[i].outputs = graded.cells[j].outputs
        return nb, resources


# ------------------------------------------------------------------------------------- per-student releases
def release_per_student(course, assignment, students, secret_file):
    """``release/<assignment>/*.ipynb`` copied to ``release-students/<student>/<assignment>/`` with the student's
    SEED: what each student gets when the teacher uses a secret."""
    import nbformat

    secret = read_secret(secret_file)
    if secret is None:
        sys.exit(f"no secret in {secret_file!r}: write a long random string there first")
    written = []
    for student in students:
        for path in sorted((Path(course) / "release" / assignment).glob("*.ipynb")):
            nb = nbformat.read(path, 4)
            for cell in nb.cells:
                if cell.cell_type == "code" and SEED_LINE.search(cell.source):
                    cell.source = with_seed(cell.source, seed_for(secret, assignment, student))
                    break
            out = Path(course) / "release-students" / student / assignment / path.name
            out.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, out)
            written.append(str(out))
    return written


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[1] != "release":
        sys.exit("usage: python llgrade.py release exNN STUDENT [STUDENT ...]   (run in the course root)")
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader("nbgrader_config.py", path=".").load_config()
    for line in release_per_student(".", sys.argv[2], sys.argv[3:], cfg.RestoreCells.get("secret_file", "")):
        print(line)
