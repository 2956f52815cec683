#!/usr/bin/env python3
"""Turn tilesort-bench JSON into PNG charts.

    tilesort-bench --json results.json
    python3 bench/plot.py results.json outdir/

Writes (one PNG per group that has data):
  merge_<type>_<dist>.png       GKeys/s vs n (log2 axis), one line per implementation (lat mode),
                                and the case's bound (copy bandwidth over our own pass count) dotted
  merge_latency_<type>_<dist>.png   microseconds vs n for n <= 2^16, lat and gpu modes
  bitonic_*.png, locality_*.png   the same for the bitonic and locality families
  warp.png, block.png           bar charts of the tile sorts (GKeys/s per shape)
  segmented.png, segments.png   bar charts per segment layout (tilesort vs CUB)
  whole_<type>_<task>.png       wall-clock time vs n (log-log), GPU and CPU sorts
  host_<type>_<memory>.png      host-resident arrays: GKeys/s vs n (log-log), the host sort, the link
                                bound (dotted) and the CPU sorts; the budget in the title
Only measurements with status "ok" are drawn.
"""
import json
import math
import os
import re
import sys
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TILESORT_COLOR = "#d62728"


def load(path):
    with open(path) as f:
        doc = json.load(f)
    results = doc.get("results", doc if isinstance(doc, list) else [])
    meta = doc.get("meta", {}) if isinstance(doc, dict) else {}
    ok = [r for r in results if r.get("status") == "ok" and (r.get("median_ms") or 0) > 0]
    return meta, ok


def subtitle(meta):
    parts = [meta.get("gpu", ""), meta.get("date", "")]
    if meta.get("copy_gbps"):
        parts.append("copy %.0f GB/s" % meta["copy_gbps"])
    return " | ".join(p for p in parts if p)


def safe(name):
    return re.sub(r"[^A-Za-z0-9_.+-]+", "-", name).strip("-")


# Every other implementation gets a colour of its own, never tilesort's red
# (matplotlib's default cycle hands out red too).
OTHER_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"]
_other_color = {}


def other_color(impl):
    base = impl.split(" [")[0]  # the same colour for an implementation's lat and gpu lines
    if base not in _other_color:
        _other_color[base] = OTHER_COLORS[len(_other_color) % len(OTHER_COLORS)]
    return _other_color[base]


def style(impl, role):
    if role == "tilesort":
        return dict(color=TILESORT_COLOR, linewidth=2.4, marker="o", zorder=5)
    if role == "ceiling":
        return dict(color="0.4", linestyle=":", linewidth=1.5, marker="")
    if role == "ref":
        return dict(color=other_color(impl), linestyle="--", marker="x")
    return dict(color=other_color(impl), marker=".")


def pow2_label(n):
    k = math.log2(n) if n > 0 else 0
    return "2^%d" % k if k == int(k) else str(n)


def finish(fig, ax, path, title, meta, ylabel):
    """Labels, title (with the run's GPU and date), legend; writes the PNG."""
    ax.set_ylabel(ylabel)
    ax.set_title(title + "\n" + subtitle(meta), fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def line_chart(path, title, meta, series, ylabel, xlog_base=2, ylog=False):
    """series: OrderedDict label -> (role, [(x, y)])"""
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for label, (role, points) in series.items():
        points = sorted(points)
        if not points:
            continue
        xs, ys = zip(*points)
        # matplotlib leaves labels that start with "_" (e.g. __gnu_parallel::sort) out of the legend
        ax.plot(xs, ys, label="\u200b" + label if label.startswith("_") else label, **style(label, role))
    ax.set_xscale("log", base=xlog_base)
    if ylog:
        ax.set_yscale("log")
    ax.set_xlabel("n (keys)")
    ax.grid(True, which="both", alpha=0.3)
    return finish(fig, ax, path, title, meta, ylabel)


def bar_chart(path, title, meta, groups, ylabel="GKeys/s"):
    """groups: OrderedDict group label -> OrderedDict bar label -> (role, value)"""
    if not groups:
        return None
    bar_labels = []
    for bars in groups.values():
        for label in bars:
            if label not in bar_labels:
                bar_labels.append(label)
    width = 0.8 / max(1, len(bar_labels))
    fig, ax = plt.subplots(figsize=(max(8, 1.6 * len(groups) + 3), 5.5))
    cmap = plt.get_cmap("tab10")
    for j, label in enumerate(bar_labels):
        xs, ys, role = [], [], "alt"
        for i, bars in enumerate(groups.values()):
            if label in bars:
                role, value = bars[label]
                xs.append(i + (j - (len(bar_labels) - 1) / 2) * width)
                ys.append(value)
        color = TILESORT_COLOR if role == "tilesort" else ("0.6" if role == "ceiling" else cmap(j % 10))
        rects = ax.bar(xs, ys, width, label=label, color=color)
        for rect, y in zip(rects, ys):
            ax.annotate("%.3g" % y, (rect.get_x() + rect.get_width() / 2, y), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(list(groups.keys()), fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    return finish(fig, ax, path, title, meta, ylabel)


def strip_shape(impl):
    """'cub::WarpMergeSort 32x4' -> 'cub::WarpMergeSort'; '(ceiling)' dropped."""
    impl = impl.replace(" (ceiling)", "")
    impl = re.sub(r"::sort(_pairs)?\b", "", impl) if impl.startswith("tilesort::block_sort") else impl
    return re.sub(r"\s+\d+x\d+$", "", impl)


def bound_gkeys(bound):
    """'5 passes x 8 B/key: 74.9 GKeys/s' -> 74.9; None without a GKeys/s figure."""
    m = re.search(r"([0-9.]+(?:[eE][+-]?[0-9]+)?) GKeys/s", bound or "")
    return float(m.group(1)) if m else None


def device_sort_charts(results, family, meta, outdir):
    written = []
    rows = [r for r in results if r["family"] == family]
    by_group = defaultdict(list)
    for r in rows:
        by_group[(r["type"], r["dist"])].append(r)
    for (type_, dist), rs in sorted(by_group.items()):
        series = OrderedDict()
        for r in sorted(rs, key=lambda r: (r["role"] != "tilesort", r["impl"])):
            if r["mode"] != "lat":
                continue
            series.setdefault(r["impl"], (r["role"], []))[1].append((r["n"], r["gkeys_per_s"]))
        # The case's bound (e.g. "5 passes x 8 B/key: 74.9 GKeys/s": the copy
        # bandwidth over our own pass count), one point per n, drawn dotted.
        bounds = {}
        for r in rs:
            value = bound_gkeys(r.get("bound", ""))
            if value is not None and r["role"] == "tilesort":
                bounds[r["n"]] = value
        if bounds:
            series["bound: copy bandwidth / our passes"] = ("ceiling", sorted(bounds.items()))
        written.append(line_chart(os.path.join(outdir, "%s_%s_%s.png" % (family, safe(type_), safe(dist))),
                                  "%s sort, %s keys, %s input: throughput" % (family, type_, dist), meta, series,
                                  "GKeys/s (n / median time), log scale", ylog=True))
        small = OrderedDict()
        for r in sorted(rs, key=lambda r: (r["role"] != "tilesort", r["impl"], r["mode"])):
            if r["n"] > 65536:
                continue
            small.setdefault("%s [%s]" % (r["impl"], r["mode"]), (r["role"], []))[1].append(
                (r["n"], r["median_ms"] * 1e3))
        if any(len(p) > 1 for _, p in small.values()):
            written.append(line_chart(
                os.path.join(outdir, "%s_latency_%s_%s.png" % (family, safe(type_), safe(dist))),
                "%s sort, %s keys, %s input: latency (n <= 2^16)" % (family, type_, dist), meta, small,
                "microseconds per call (median)", ylog=True))
    return written


def tile_charts(results, meta, outdir):
    written = []
    for family in ("warp", "block"):
        groups = OrderedDict()
        for r in results:
            if r["family"] != family or r["mode"] != "lat":
                continue
            group = "%s\n%s %s" % (r["case"].split(" ")[-1], r["type"], r["dist"])
            groups.setdefault(group, OrderedDict())[strip_shape(r["impl"])] = (r["role"], r["gkeys_per_s"])
        written.append(bar_chart(os.path.join(outdir, "%s.png" % family),
                                 "%s-level tile sorts: load + sort + store, tiles sorted independently" % family, meta,
                                 groups))
    return written


def segmented_chart(results, meta, outdir, family="segmented", title="segmented sort, uniform segment lengths"):
    groups = OrderedDict()
    for r in results:
        if r["family"] != family or r["mode"] != "lat":
            continue
        group = "%s\n%s n=%s" % (r["dist"], r["type"], pow2_label(r["n"]))
        label = r["impl"].replace("Pairs", "*").replace("Keys", "*").replace("_pairs", "_*").replace("_keys", "_*")
        groups.setdefault(group, OrderedDict())[label] = (r["role"], r["gkeys_per_s"])
    return [bar_chart(os.path.join(outdir, "%s.png" % family), title, meta, groups)]


def series_by_type_and_case(results, family, value):
    """(type, case) -> OrderedDict impl -> (role, [(n, r[value])]), tilesort first."""
    by_group = defaultdict(list)
    for r in results:
        if r["family"] == family:
            by_group[(r["type"], r["case"])].append(r)
    charts = OrderedDict()
    for key, rs in sorted(by_group.items()):
        series = charts[key] = OrderedDict()
        for r in sorted(rs, key=lambda r: (r["role"] != "tilesort", r["impl"])):
            series.setdefault(r["impl"], (r["role"], []))[1].append((r["n"], r[value]))
    return charts


def whole_charts(results, meta, outdir):
    return [line_chart(os.path.join(outdir, "whole_%s_%s.png" % (safe(type_), safe(task.replace(">", "")))),
                       "whole program, %s keys, %s (wall clock incl. allocation and transfers)" % (type_, task),
                       meta, series, "milliseconds (median)", xlog_base=10, ylog=True)
            for (type_, task), series in series_by_type_and_case(results, "whole", "median_ms").items()]


def host_charts(results, meta, outdir):
    budget = meta.get("host_budget")
    in_budget = ", device budget %s" % pow2_bytes(budget) if budget else ""
    return [line_chart(os.path.join(outdir, "host_%s_%s.png" % (safe(type_), safe(memory))),
                       "host-resident %s, %s memory: throughput (wall clock, copies included)%s"
                       % (type_, memory, in_budget), meta, series, "GKeys/s", ylog=True)
            for (type_, memory), series in series_by_type_and_case(results, "host", "gkeys_per_s").items()]


def pow2_bytes(b):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return "%d %s" % (b >> shift, unit)
    return "%d B" % b


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    meta, results = load(argv[1])
    outdir = argv[2]
    os.makedirs(outdir, exist_ok=True)
    written = []
    written += device_sort_charts(results, "merge", meta, outdir)
    written += device_sort_charts(results, "bitonic", meta, outdir)
    written += device_sort_charts(results, "locality", meta, outdir)
    written += tile_charts(results, meta, outdir)
    written += segmented_chart(results, meta, outdir)
    written += segmented_chart(results, meta, outdir, "segments", "segmented sort, general layouts (offsets)")
    written += whole_charts(results, meta, outdir)
    written += host_charts(results, meta, outdir)
    written = [w for w in written if w]
    for w in written:
        print(w)
    print("%d charts from %d measurements" % (len(written), len(results)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
