"""nbgrader configuration for the Layout Lab exercise course (nbgrader 0.9.x, offline).

Run every ``nbgrader`` command from this folder (``cd exercises``); the course root, the SQLite gradebook and
the folders ``source/``, ``release/``, ``submitted/``, ``autograded/``, ``feedback/`` all live next to this
file, wherever it has been copied.  No JupyterHub and no exchange are needed.
"""

import os

c = get_config()  # noqa: F821  (injected by traitlets when nbgrader loads this file)

_here = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.course_id = "layoutlab"
c.CourseDirectory.root = _here
# The gradebook is a SQLite file inside the course root: nothing to install, nothing online.
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(_here, "gradebook.db")

# Per-cell time limit while autograding.  Every exercise cell finishes in about a second or less (the first
# one imports layoutlab); a cell that runs longer is interrupted (KeyboardInterrupt), recorded as an error
# (that part scores 0), and grading goes on with the next cell and the next student.  Raise it on a very
# slow or busy grading machine.
c.Execute.timeout = 15
c.Execute.interrupt_on_timeout = True
c.Execute.execute_retries = 0

# Release versions show this where a solution was.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# `nbgrader zip_collect exNN` sorts the files (or zip archives of them) put in downloaded/exNN/archive/ into
# submitted/<student_id>/exNN/.  Default naming: <student_id>_<notebook file>, e.g. alice_ex01_layouts.ipynb
# (student ids without "_"); change the pattern to what your LMS produces.
c.FileNameCollectorPlugin.named_regexp = r".*/(?P<student_id>[^/_]+)_(?P<file_id>ex\d\d_[^/]+\.ipynb)$"

# Grading outside the student's process (llgrade.py, next to this file): the student's notebook runs in a
# sandbox (bubblewrap: no network, no course files; memory and CPU limits) with its answers exported as data;
# the tests run in a fresh kernel given only those answers. See chapters/teachers.md.
import sys  # noqa: E402

sys.path.insert(0, _here)
from llgrade import GradeOutside, RestoreCells  # noqa: E402
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearOutput, DeduplicateIds,  # noqa: E402
                                    IgnorePattern, LimitOutput, OverwriteKernelspec, SaveAutoGrades)
from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402

c.Autograde.sanitize_preprocessors = [ClearOutput, DeduplicateIds, OverwriteKernelspec, RestoreCells,
                                      CheckCellMetadata]
c.Autograde.autograde_preprocessors = [GradeOutside, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
                                       SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
c.GradeOutside.timeout = c.Execute.timeout
c.GradeOutside.interrupt_on_timeout = True
c.GradeOutside.execute_retries = 0
c.GradeOutside.sandbox = "auto"      # "bwrap" to refuse grading without bubblewrap; "none" to go without
c.GradeOutside.memory_mb = 4096      # the student's kernel: address space (MiB) ...
c.GradeOutside.cpu_seconds = 300     # ... and CPU time (s)
# Per-student variants: a file (outside this folder, never handed out) with a long random string. Each student's
# SEED then comes from it and their id; `python llgrade.py release exNN alice bob ...` writes their notebooks.
c.RestoreCells.secret_file = ""
