#!/usr/bin/env python3
"""CUDA and OpenCL twins side by side: pairs rows of parbench CSV files that
share benchmark, variant, problem and precision across the two backends and
prints a Markdown table with the OpenCL/CUDA ratio of the rate (GFLOP/s where
the benchmark counts FLOPs, else GB/s).

usage: scripts/twins.py RESULTS.csv... > twins.md
"""
import csv
import sys


def rate(row):
    for key in ("gflops", "gbps"):
        if row.get(key):
            return float(row[key]), "GFLOP/s" if key == "gflops" else "GB/s"
    return None, ""


def main(paths):
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            rows.extend(csv.DictReader(f))
    by_key = {}
    for r in rows:
        if r["status"] != "OK" or r["backend"] not in ("cuda", "opencl"):
            continue
        key = (r["bench"], r["variant"], r["problem"], r["precision"])
        by_key.setdefault(key, {})[r["backend"]] = r
    print("| bench | variant | problem | precision | CUDA | OpenCL | unit | OpenCL/CUDA |")
    print("| --- | --- | --- | --- | ---: | ---: | --- | ---: |")
    for key in sorted(by_key, key=lambda k: (k[0], k[1], k[3], k[2])):
        pair = by_key[key]
        if "cuda" not in pair or "opencl" not in pair:
            continue
        cu, unit = rate(pair["cuda"])
        cl, _ = rate(pair["opencl"])
        if not cu or cl is None:
            continue
        bench, variant, problem, prec = key
        print(f"| {bench} | {variant} | {problem} | {prec or '-'} | {cu:.4g} | {cl:.4g} | {unit} | {cl / cu:.2f} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
