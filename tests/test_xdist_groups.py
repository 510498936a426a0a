"""The suite's xdist groups hold: tests marked ``xdist_group`` run on one worker, so a group's module fixtures (a
built site, an autograded course) are made once. pytest 9.2 with pytest-xdist 3.8 silently ignored the groups
(xdist renames ``item._nodeid``, which pytest 9 no longer reads): every heavy fixture was built once per worker and
per module, and ``make test`` took 27 minutes. pyproject pins pytest below 9 until xdist follows."""

import os

import pytest

pytestmark = pytest.mark.xdist_group("xdist-check")


@pytest.mark.skipif(os.environ.get("PYTEST_XDIST_WORKER") is None, reason="runs only under pytest-xdist")
def test_a_grouped_test_carries_its_group_in_its_node_id(request):
    if not getattr(request.config.option, "loadgroup", False):      # what xdist sets on a worker for loadgroup
        pytest.skip("the suite runs with --dist loadgroup; this run does not")
    assert request.node.nodeid.endswith("@xdist-check"), (
        f"{request.node.nodeid}: pytest-xdist did not tag the test with its group, so --dist loadgroup spreads a "
        f"group over workers (pytest {pytest.__version__}; pin pytest<9 in pyproject.toml)")
