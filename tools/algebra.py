"""Speed of the layout algebra: median microseconds per operation, and the offset table of 2^20 elements.

``python tools/bench_cpu.py`` calls :func:`main`. "Cold" clears the memo caches before every call, "warm" repeats it.
"""

import statistics
import time

__all__ = ["main", "CASES", "op_times", "table_time"]

# Fixed depth-3 inputs (layout, argument) for each operation; all admissible.
CASES = {
    "composition": [
        ("((4,(2,2)),(8,(2,4))):((1,(4,8)),(16,(128,256)))", "((4,8),(2,4)):((1,16),(4,128))"),
        ("(((2,4),4),((2,2),8)):(((1,2),8),((32,64),128))", "(8,(4,16)):(1,(8,32))"),
        ("((4,8,4),(2,2,8)):((128,1,16),(64,8,512))", "((4,8),(2,2)):((1,4),(32,64))"),
    ],
    "complement": [
        ("((4,(2,2)),(8,(2,4))):((1,(4,8)),(16,(256,512)))", 8192),
        ("(((2,4),4),((2,2),2)):(((1,2),16),((64,128),512))", 4096),
        ("((4,8,4),(2,2,2)):((128,1,16),(64,8,512))", 8192),
    ],
    "logical_divide": [
        ("((4,(2,2)),(8,(2,4))):((1,(4,8)),(16,(128,256)))", "(4,8):(1,16)"),
        ("(((2,4),4),((2,2),8)):(((1,2),8),((32,64),128))", "((2,4),2):((1,2),32)"),
        ("((4,8,4),(2,2,8)):((128,1,16),(64,8,512))", "(8,4):(1,64)"),
    ],
    "blocked_product": [
        ("((2,(2,2)),(4,(2,1))):((1,(2,4)),(8,(32,0)))", "((2,3),(2,2)):((1,2),(6,12))"),
        ("(((2,2),2),((2,2),2)):(((1,2),4),((8,16),32))", "(4,(2,2)):(1,(4,8))"),
        ("((4,2,2),(2,2,2)):((1,4,8),(16,32,64))", "(2,3):(3,1)"),
    ],
    "coalesce": [
        ("((4,(2,2)),(8,(2,4))):((1,(4,8)),(32,(256,512)))", None),
        ("(((2,4),4),((2,2),8)):(((1,2),8),((32,64),128))", None),
        ("((4,8,4),(2,2,8)):((128,1,16),(64,8,512))", None),
    ],
}


def _clear_caches():
    from layoutlab.cute import algebra
    from layoutlab.cute import layout

    for f in (algebra._coalesce, algebra._compose_layouts, algebra._complement, layout._table):
        f.cache_clear()


def _call(name, a, b):
    import layoutlab as ll

    return ll.coalesce(a) if name == "coalesce" else getattr(ll, name)(a, b)


def op_times(repeats: int = 200):
    """{op: (cold median us, warm median us)} over the fixed case set.

    >>> sorted(op_times(repeats=3))           # each value: (cold us, warm us), measured now
    ['blocked_product', 'coalesce', 'complement', 'composition', 'logical_divide']
    """
    from layoutlab import parse_layout

    out = {}
    for name, cases in CASES.items():
        parsed = [(parse_layout(a), parse_layout(b) if isinstance(b, str) else b) for a, b in cases]
        cold, warm = [], []
        for _ in range(repeats):
            for a, b in parsed:
                _clear_caches()
                t = time.perf_counter_ns()
                _call(name, a, b)
                cold.append(time.perf_counter_ns() - t)
                t = time.perf_counter_ns()
                _call(name, a, b)
                warm.append(time.perf_counter_ns() - t)
        out[name] = (statistics.median(cold) / 1e3, statistics.median(warm) / 1e3)
    return out


def table_time(repeats: int = 7):
    """Median milliseconds to build every offset of a 2^20-element depth-2 layout (memo cache cleared).

    >>> table_time(repeats=1) > 0
    True
    """
    from layoutlab import Layout

    big = Layout(((32, 32), (32, 32)), ((1, 32 * 1024), (32, 1024)))
    times = []
    for _ in range(repeats):
        _clear_caches()
        t = time.perf_counter()
        tab = big.table()
        times.append(time.perf_counter() - t)
    if tab.size != 1 << 20:
        raise RuntimeError(f"table: expected 2^20 offsets, got {tab.size}")
    return statistics.median(times) * 1e3


def main():
    """Print the table: median cold/warm microseconds of each operation, then the 2^20 offset table's time.

    >>> main()                                  # doctest: +ELLIPSIS
    operation           cold us/op  warm us/op   (median over 3 depth-3 cases)
    composition ...
    complement ...
    logical_divide ...
    blocked_product ...
    coalesce ...
    table 2^20 ... ms   (goal < 50 ms) ...
    """
    ops = op_times()
    print(f"{'operation':18s} {'cold us/op':>11s} {'warm us/op':>11s}   (median over {sum(len(c) for c in CASES.values()) // len(CASES)} depth-3 cases)")
    for name, (cold, warm) in ops.items():
        print(f"{name:18s} {cold:11.1f} {warm:11.2f}")
    ms = table_time()
    print(f"{'table 2^20':18s} {ms:11.2f} ms   (goal < 50 ms) {'OK' if ms < 50 else 'SLOW'}")


if __name__ == "__main__":
    main()
