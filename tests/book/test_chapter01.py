"""Chapter 1 (layouts): answers that name an operand or a value, re-derived from the chapter's own table and the
library."""

import json
import re
from pathlib import Path

from layoutlab import Layout, local_partition, make_tensor

CHAPTER = Path(__file__).resolve().parents[2] / "chapters" / "01_layouts.ipynb"


def _cells():
    return {c["id"]: "".join(c["source"]) for c in json.loads(CHAPTER.read_text())["cells"]}


def _blas_table():
    """Run the chapter's BLAS table cell (c01-026) and return its rows {code: (A column, B column)}."""
    import layoutlab

    shown = []
    ns = {**{n: getattr(layoutlab, n) for n in dir(layoutlab) if not n.startswith("_")},
          "show_table": lambda head, rows: shown.extend(rows)}
    exec(_cells()["c01-026"], ns)
    return {code: (a, b) for code, _, _, a, b in shown}


def test_q7_names_the_operand_the_table_shows_mn_major_for_nn():
    M, K, N, ld = 64, 16, 32, 1000
    # BLAS stores every matrix column-major: NN multiplies A (M x K) and B (K x N) as stored.
    a = Layout((M, K), (1, ld))                 # stride 1 along M
    b_kn = Layout((K, N), (1, ld))              # stride 1 along K; CuTe views B as (N,K)
    b = Layout((N, K), (b_kn.stride[1], b_kn.stride[0]))
    mn_major = [name for name, x in (("A", a), ("B", b)) if x.stride[0] == 1]
    assert mn_major == ["A"]
    a_col, b_col = _blas_table()["NN"]
    assert a_col == f"`{a}` M-major" and b_col == f"`{b}` K-major"
    answer = _cells()["c01-038"].split(":::{dropdown} Answers")[1].split("\n7. ")[1]
    named = re.search(r"So for NN, ([AB]) is transposed to K-major", answer)
    assert named and [named.group(1)] == mn_major, answer


def test_local_partition_check_compares_the_library_on_the_dsl_inputs():
    src = _cells()["c01-030-fix1"]
    assert "cutlass.Int32(0)" in src and "tCsC0)" in src          # the DSL gets a DSL integer, not a literal 0
    assert str(local_partition(make_tensor(0, Layout((128, 128))), Layout((16, 16)), 0)) == \
        f"tensor<0 o (8,8):({16},{16 * 128})>"   # rows 16 apart; columns 16 apart, 128 elements each
