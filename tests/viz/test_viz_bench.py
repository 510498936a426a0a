"""The redraw target of issue 6: a 128x256 TV picture redraws in < 150 ms (median)."""

import statistics
import time

import pytest

from tools_loader import load_tool

redraw = load_tool("redraw")


def test_redraw_128x256_under_150ms_cpu():
    # CPU time of this process, not wall time: the test machine is shared by many workers
    times = redraw.redraw_times(repeats=5, clock=time.process_time)
    assert statistics.median(times) < 0.150, [round(1000 * t) for t in times]


# ---------------------------------------------------------------------------------------------------
# python -m layoutlab.bench.gemm: timing settings are checked before any GPU work (runs on the CPU)
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rounds,seconds,word", [(0, 1.0, "rounds=0"), (2.5, 1.0, "rounds=2.5"),
                                                 (5, 0.0, "seconds=0.0"), (5, -1.0, "seconds=-1.0")])
def test_gemm_bench_timing_refuses_settings_that_measure_nothing(rounds, seconds, word):
    from layoutlab.bench.gemm import time_alternating
    with pytest.raises(ValueError, match=word.replace(".", r"\.")) as info:
        time_alternating([lambda: None], [lambda: None], rounds=rounds, seconds=seconds)
    assert "default" in str(info.value)          # the message says what a valid value looks like


@pytest.mark.parametrize("argv,word", [(["--rounds", "0"], "rounds=0"), (["--seconds", "-2"], "seconds=-2.0")])
def test_gemm_bench_command_line_refuses_bad_timing_before_touching_the_gpu(argv, word, capsys):
    from layoutlab.bench.gemm import main
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert word in capsys.readouterr().err
