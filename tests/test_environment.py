"""environment.yml (conda, for GPU workstations) describes the same environment as pyproject.toml."""

import re
try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

import yaml
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Where conda and pip name a package differently, or pip has a platform-specific build.
CONDA_NAME = {"cupy-cuda13x": "cupy"}


def _name(req):
    return re.split(r"[<>=!~;\[ ]", req.strip(), maxsplit=1)[0].lower()


def _spec(req):
    """The version constraint of a requirement, without name or environment marker."""
    req = req.split(";")[0].strip()
    return req[len(re.split(r"[<>=!~ ]", req, maxsplit=1)[0]):].replace(" ", "")


def _pyproject_requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    reqs = list(project["dependencies"]) + extras["gpu"] + extras["book"] + extras["dev"]
    return {_name(r): _spec(r) for r in reqs if not r.startswith("layoutlab")}


def _environment_requirements():
    deps = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    entries = [d for d in deps if isinstance(d, str)] + [p for p in pip if not p.startswith("-e")]
    return {_name(e): _spec(e) for e in entries}


def test_environment_yml_lists_every_pyproject_requirement_with_the_same_constraint():
    conda = _environment_requirements()
    for name, spec in _pyproject_requirements().items():
        conda_name = CONDA_NAME.get(name, name)
        assert conda_name in conda, f"{name} is in pyproject.toml but not in environment.yml"
        if name not in CONDA_NAME:  # renamed packages have their own version scheme on conda-forge
            assert conda[conda_name] == spec, (
                f"{name}: pyproject.toml says {spec!r}, environment.yml says {conda[conda_name]!r}")


def test_environment_yml_has_nothing_pyproject_lacks():
    known = {CONDA_NAME.get(n, n) for n in _pyproject_requirements()} | {"python", "pip"}
    extra = set(_environment_requirements()) - known
    assert not extra, f"environment.yml lists packages pyproject.toml does not: {sorted(extra)}"


def test_python_floor_agrees():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert _environment_requirements()["python"] == project["requires-python"]
