"""Fixtures shared by the test files (the GPU gating hooks live in layoutlab_pytest.py)."""
