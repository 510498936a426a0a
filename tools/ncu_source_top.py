"""The SASS instructions where a profiled kernel's warps were sampled most (Nsight Compute's source page):
``python tools/ncu_source_top.py REPORT.ncu-rep [N]``. For each kernel in the report whose source page has warp
stall samples: the top N instructions with their sample counts and the stall reasons that have samples."""

import csv
import io
import subprocess
import sys


def main(report, top=25):
    out = subprocess.run(["ncu", "--import", report, "--page", "source", "--csv", "--print-source", "sass"],
                         capture_output=True, text=True, timeout=240)
    text = out.stdout
    print(f"ncu --page source: rc {out.returncode}, {len(text.splitlines())} lines; stderr: {out.stderr[-300:]}")
    header, rows, tables = None, [], []
    for row in csv.reader(io.StringIO(text)):
        if "Source" in row and "Address" in row:
            if header:
                tables.append((header, rows))
            header, rows = row, []
        elif header and len(row) == len(header):
            rows.append(row)
        elif row and not header:
            print("  ", ",".join(row)[:160])
    if header:
        tables.append((header, rows))
    for n, (header, rows) in enumerate(tables):
        sample_cols = [c for c in header if "Sampling" in c]
        if not sample_cols:
            print(f"kernel {n}: no sampling columns in {header[:8]}")
            continue
        main_col = next((c for c in sample_cols if "All" in c), sample_cols[0])
        i_main, i_src = header.index(main_col), header.index("Source")

        def num(x):
            try:
                return float(x.replace(",", ""))
            except ValueError:
                return 0.0
        total = sum(num(r[i_main]) for r in rows)
        stall_cols = [i for i, c in enumerate(header) if c.lower().startswith("stall") or "stall_" in c.lower()]
        print(f"\n== kernel {n}: {len(rows)} instructions, {total:.0f} samples ({main_col})")
        by_op = {}
        for r in rows:
            op = r[i_src].split()[0] if r[i_src].split() else "?"
            op = op if not op.startswith("@") else (r[i_src].split()[1] if len(r[i_src].split()) > 1 else op)
            by_op[op.split(".")[0]] = by_op.get(op.split(".")[0], 0) + num(r[i_main])
        print("   by opcode:", ", ".join(f"{k} {100 * v / max(total, 1):.1f}%" for k, v in
                                       sorted(by_op.items(), key=lambda kv: -kv[1])[:12]))
        for r in sorted(rows, key=lambda r: -num(r[i_main]))[:top]:
            reasons = sorted(((header[i], num(r[i])) for i in stall_cols if num(r[i]) > 0), key=lambda x: -x[1])[:4]
            print(f"  {100 * num(r[i_main]) / max(total, 1):5.1f}%  {r[i_src][:60]:60s} "
                  + " ".join(f"{name}={v:.0f}" for name, v in reasons))


if __name__ == "__main__":
    main(sys.argv[1], *(int(x) for x in sys.argv[2:3]))
