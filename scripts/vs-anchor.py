#!/usr/bin/env python3
"""Our kernels beside the vendor's, problem by problem: for each benchmark,
problem, precision and device of parbench CSV files, the anchor's median time
over our best variant's (above 1: ours is faster) and, where an `auto` row
exists, auto's ratio and its time over the best variant's. Ends with the
geomean and the worst problem of each benchmark and precision.

usage: scripts/vs-anchor.py RESULTS.csv... > vs-anchor.md
"""
import csv
import math
import sys


def main(paths):
    groups = {}
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if r["status"] != "OK" or not r["median_s"]:
                    continue
                key = (r["bench"], r["precision"], r["device"], r["problem"])
                groups.setdefault(key, []).append(r)
    print("| bench | precision | problem | best own | anchor | anchor/own | auto/anchor | auto over best |")
    print("| --- | --- | --- | --- | --- | ---: | ---: | ---: |")
    ratios = {}
    for key in sorted(groups):
        rows = groups[key]
        own = [r for r in rows if r["anchor"] == "0"]
        anchors = [r for r in rows if r["anchor"] == "1"]
        if not own or not anchors:
            continue
        best = min(own, key=lambda r: float(r["median_s"]))
        anchor = min(anchors, key=lambda r: float(r["median_s"]))
        ratio = float(anchor["median_s"]) / float(best["median_s"])
        autos = [r for r in own if r["variant"] == "auto"]
        auto_cells = ["", ""]
        if autos:
            t = float(autos[0]["median_s"])
            auto_cells = ["%.3f" % (float(anchor["median_s"]) / t), "%.3f" % (t / float(best["median_s"]))]
        ratios.setdefault(key[:2], []).append((ratio, key[3]))
        print("| %s | %s | %s | %s | %s | %.3f | %s |" % (key[0], key[1], key[3], best["variant"], anchor["variant"],
                                                         ratio, " | ".join(auto_cells)))
    print()
    print("| bench | precision | problems | geomean anchor/own | worst | worst problem |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for (bench, prec), rs in sorted(ratios.items()):
        geo = math.exp(sum(math.log(x) for x, _ in rs) / len(rs))
        worst = min(rs)
        print("| %s | %s | %d | %.3f | %.3f | %s |" % (bench, prec, len(rs), geo, worst[0], worst[1]))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip())
    main(sys.argv[1:])
