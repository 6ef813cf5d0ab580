#!/usr/bin/env python3
"""Compares hedge-sim sweep runs (JSON lines) as Markdown tables; standard library only.

    python3 sweep_compare.py summary LABEL=FILE [LABEL=FILE ...]
        one row per run: worst ratios, denials, cells missing a target (b >= 0.01 for the estimate)
    python3 sweep_compare.py cells BUDGET BEFORE_FILE AFTER_FILE
        one row per distribution at that budget: hedged p99.9 and p99.99 over the oracle, denials
    python3 sweep_compare.py pairs LABEL=BEFORE_FILE,AFTER_FILE [...]
        one row per pair of runs on the same draws: how hedged p99.9 and p99.99 moved cell by cell
        (geometric mean of after / before; cells where the oracle improves p99.9), and the delay's
        spread (delay_log_sd) before and after

Used for docs/benchmarks.md sections 2.6 and 2.7. Lines that are not JSON objects are skipped.
"""
import json
import sys

TARGETS = ("ok_p999", "ok_p9999", "ok_extra_load", "ok_denials")


def load(path):
    cells, summary = [], None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            d = json.loads(line)
            if d.get("scenario") == "sweep":
                cells.append(d)
            elif d.get("scenario") == "sweep-summary":
                summary = d
    return cells, summary


def estimate_misses(cells):
    n = 0
    for d in cells:
        e = d.get("estimated_unhedged")
        if d["budget"] >= 0.01 and e and max(abs(e["p99_over_true"] - 1), abs(e["p999_over_true"] - 1)) > 0.10:
            n += 1
    return n


def summary(runs):
    print("| run | worst p99.9 / oracle | worst p99.99 / oracle | worst extra load / limit "
          "| worst denied / sent | cells missing a tail, load or denial target "
          "| cells (b >= 0.01) with an estimate off by > 10% | worst supported estimate error |")
    print("|---|---|---|---|---|---|---|---|")
    for label, path in runs:
        cells, s = load(path)
        missing = sum(1 for d in cells if not all(d[t] for t in TARGETS))
        print(f"| {label} | {s['worst_hedged_p999_over_oracle']:.4f} (`{s['worst_hedged_p999_cell']}`) "
              f"| {s['worst_hedged_p9999_over_oracle']:.4f} (`{s['worst_hedged_p9999_cell']}`) "
              f"| {s['worst_extra_load_over_limit']:.4f} | {100 * s['worst_denied_share_of_sent']:.2f}% "
              f"| {missing} of {len(cells)} | {estimate_misses(cells)} "
              f"| {100 * s['worst_supported_estimate_error']:.1f}% |")


def cells(budget, before, after):
    a = {d["dist"]: d for d in load(before)[0] if d["budget"] == budget}
    b = {d["dist"]: d for d in load(after)[0] if d["budget"] == budget}
    print("| SPEC | p99.9 / oracle, before | after | p99.99 / oracle, before | after | denied, before | after |")
    print("|---|---|---|---|---|---|---|")
    for dist, x in a.items():
        y = b.get(dist)
        if y is None:
            continue

        def mark(d, key, ok):
            v = f"{d[key]:.4f}"
            return v if d[ok] else f"**{v}**"

        print(f"| `{dist}` | {mark(x, 'hedged_p999_over_oracle', 'ok_p999')} "
              f"| {mark(y, 'hedged_p999_over_oracle', 'ok_p999')} "
              f"| {mark(x, 'hedged_p9999_over_oracle', 'ok_p9999')} "
              f"| {mark(y, 'hedged_p9999_over_oracle', 'ok_p9999')} "
              f"| {x['hedged']['budget_denied']} | {y['hedged']['budget_denied']} |")


def pairs(runs):
    import math
    print("| run | cells | p99.9 after / before, geometric mean | cells better / worse by > 0.5% "
          "| p99.99 after / before, geometric mean | worst p99.9 / oracle, before / after "
          "| delay spread (sd of ln(delay / d*)), median over cells, before / after |")
    print("|---|---|---|---|---|---|---|")
    for label, files in runs:
        before_file, after_file = files.split(",")
        a = {(d["dist"], d["budget"]): d for d in load(before_file)[0]}
        b = {(d["dist"], d["budget"]): d for d in load(after_file)[0]}
        keys = [k for k in a if k in b]
        r3 = [b[k]["hedged_p999_over_oracle"] / a[k]["hedged_p999_over_oracle"]
              for k in keys if a[k]["oracle_improves_p999"]]
        r4 = [b[k]["hedged_p9999_over_oracle"] / a[k]["hedged_p9999_over_oracle"] for k in keys]
        gm = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
        med = lambda xs: sorted(xs)[(len(xs) - 1) // 2]
        better = sum(1 for x in r3 if x < 0.995)
        worse = sum(1 for x in r3 if x > 1.005)
        w_a = max(a[k]["hedged_p999_over_oracle"] for k in keys if a[k]["oracle_improves_p999"])
        w_b = max(b[k]["hedged_p999_over_oracle"] for k in keys if b[k]["oracle_improves_p999"])
        sd_a = med([a[k]["hedged"]["delay_log_sd"] for k in keys])
        sd_b = med([b[k]["hedged"]["delay_log_sd"] for k in keys])
        print(f"| {label} | {len(keys)} | {gm(r3):.4f} | {better} / {worse} | {gm(r4):.4f} "
              f"| {w_a:.4f} / {w_b:.4f} | {100 * sd_a:.2f}% / {100 * sd_b:.2f}% |")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "summary":
        summary([tuple(arg.rsplit("=", 1)) for arg in sys.argv[2:]])
    elif len(sys.argv) >= 3 and sys.argv[1] == "pairs":
        pairs([tuple(arg.rsplit("=", 1)) for arg in sys.argv[2:]])
    elif len(sys.argv) == 5 and sys.argv[1] == "cells":
        cells(float(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
