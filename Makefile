# Two commands set everything up on a fresh machine: `make book` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export MPLBACKEND := Agg
# The DSL compiles for the GPU it finds; without one it must be told the target.
export CUTE_DSL_ARCH ?= sm_90a
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# What the lite site downloads at build time (Pyodide core from npm, wheels from PyPI), shared by the book
# and the site tests' own builds.
export LAYOUTLAB_LITE_CACHE ?= $(CURDIR)/_build/_lite_cache

.PHONY: setup book serve test gpu-test lab clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# The widget manager is committed gzipped (3.6 MB of JavaScript, 0.9 MB packed: the tree the GPU tool carries has
# a size limit); the book serves it unpacked, from chapters/_widgets_js/ (see its README.md).
WIDGETS_JS := chapters/_widgets_js/embed-amd.js

$(WIDGETS_JS): vendor/embed-amd.js.gz
	gunzip -c $< > $@.tmp && mv $@.tmp $@

# Also builds the JupyterLite site (_build/html/lite/, "Run in your browser"; needs npm for the Pyodide core).
book: $(STAMP) $(WIDGETS_JS)
	$(VENV)/bin/jupyter-book build . -W -n --keep-going
	@echo "Open the book: file://$(CURDIR)/_build/html/index.html"
	@echo "Run the chapters in your browser: make serve, then open http://127.0.0.1:8000/"

# JupyterLite needs the site served over HTTP (browsers do not run it from file://).
serve:
	$(PY) -m http.server --bind 127.0.0.1 --directory _build/html 8000

# The chapters execute once, in the executed build read by tests/book/test_chapters_execute.py and the figure test.
test: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadgroup --nbmake -m "not gpu" tests exercises/source

gpu-test: $(STAMP)
	env -u CUTE_DSL_ARCH $(PY) -m pytest -n 2 --nbmake -m "gpu or gpu_cells" tests chapters

# As root (containers, GPU clouds) Jupyter refuses to start without --allow-root.
lab: $(STAMP)
	$(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root)

clean:
	rm -rf _build .pytest_cache
