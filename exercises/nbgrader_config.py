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

# Per-cell time limit while autograding.  Every exercise cell finishes in well under a second; a cell that
# runs longer is interrupted (KeyboardInterrupt), recorded as an error, and grading goes on with the next
# cell and the next student.
c.Execute.timeout = 30
c.Execute.interrupt_on_timeout = True
c.Execute.execute_retries = 0

# Release versions show this where a solution was.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
