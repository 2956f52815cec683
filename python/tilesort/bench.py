"""python -m tilesort.bench: tilesort from Python against torch.sort / torch.argsort / cupy.sort / cupy.argsort.

Same process, same GPU, dispatch overhead included: each measurement is
CUDA events around one Python call (the stream synchronised between calls),
median of --reps after --warmups. Families:
  rows    batched rows of --lengths keys, 2^24 keys in all (--types)
  dims    columns: sort along dim 0 of (L, 2^24 / L) keys, L = 32, 300, 1024 and 4096, also with the
          dim moved last first (the path before rows sorted where they lie)
  ragged  ragged segments over 2^24 keys (uniform lengths in [1, 2000], power
          law, random starts with mean length 300) against the padded torch.sort
          users write today (pad with the largest key, sort rows, unpad) and a
          two-pass torch workaround (stable sort by key, then by segment id)
  1d      one array of --sizes keys, --dists random (default), sorted, nearly
          (sorted, then neighbours swapped every 5 keys)
  small   per-call time of small calls (one row of 1024, 1000 rows of 32, 1-D
          arrays of 2^10 and 2^16; --types): event-timed ("lat") and host wall
          clock over back-to-back calls ("wall")
  host    numpy arrays and CPU tensors of --host-sizes keys (--types) sorted on the GPU
          through the host sort (--host-budget bytes of device memory), beside
          numpy.sort(kind="stable") and torch.sort(stable=True) on the CPU: host wall clock
          of one call, the copies included, median of --reps (at most 3 above 2^26 keys)
Progress goes to stderr, the table to stdout; --json writes every measurement
in tilesort-bench's format (bench/plot.py draws it).

    python -m tilesort.bench --family rows,ragged --types int32 --json py.json
    python -m tilesort.bench --family rows,small --types float32 --float-order comparator   # the A/B of FLOAT_RANKS
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time

import tilesort
from tilesort import _core

LENGTHS = [32, 300, 1024, 4096, 10000]
SIZES = [1 << p for p in range(10, 29, 2)]


def parse_sizes(text):
    """"2^20,1000" -> [1048576, 1000]."""
    sizes = []
    for item in text.split(","):
        base, _, exponent = item.partition("^")
        sizes.append(int(base) ** int(exponent) if exponent else int(base))
    return sizes


class Timer:
    """CUDA-event timing of one call on torch's current stream, median of reps."""

    def __init__(self, torch, reps, warmups):
        self.torch, self.reps, self.warmups = torch, reps, warmups

    def warm(self, call):
        for _ in range(self.warmups):
            call()
        self.torch.cuda.synchronize()

    def lat(self, call):
        torch = self.torch
        self.warm(call)
        times = []
        for _ in range(self.reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return times

    def wall(self, call, calls=200):
        torch = self.torch
        self.warm(call)
        times = []
        for _ in range(self.reps):
            t0 = time.perf_counter()
            for _ in range(calls):
                call()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3 / calls)
        return times


def moved_last(call):
    """call() with rows along another dim moved last first (two transposed copies), as before they sorted
    where they lie."""
    from . import _core

    _core.STRIDED_ROWS = False
    try:
        return call()
    finally:
        _core.STRIDED_ROWS = True


def random_keys(torch, shape, dtype):
    dt = getattr(torch, dtype)
    if dt.is_floating_point:
        return torch.randn(shape, device="cuda", dtype=dt)
    info = torch.iinfo(dt)
    return torch.randint(info.min, info.max, shape, device="cuda", dtype=dt)


def one_d_keys(torch, n, dtype, dist):
    """n random keys; "sorted": sorted; "nearly": sorted, then neighbours swapped every 5 keys."""
    x = random_keys(torch, (n,), dtype)
    if dist == "random":
        return x
    x = torch.sort(x).values
    if dist == "nearly" and n > 1:
        swap = torch.arange(0, n - 1, 5, device="cuda")
        x[swap], x[swap + 1] = x[swap + 1].clone(), x[swap].clone()
    return x


def ragged_layout(torch, name, n, generator):
    """int64 CSR offsets over n keys for one of the ragged layouts."""
    if name == "uniform[1,2000]":
        lengths = torch.randint(1, 2001, (n // 1000 + 1,), generator=generator)
    elif name == "power-law":  # Pareto lengths (alpha 1.2, at least 1), capped at 2^16
        u = torch.rand(n // 16, generator=generator).clamp_min(1e-12)
        lengths = torch.clamp(u ** (-1 / 1.2), max=1 << 16).long()
    else:  # random starts, mean length 300
        starts = torch.sort(torch.randint(0, n, (n // 300,), generator=generator)).values
        lengths = torch.diff(starts, prepend=torch.zeros(1, dtype=torch.int64))
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(lengths, 0)])
    offsets = offsets[offsets <= n]
    return offsets.cuda()


class Bench:
    def __init__(self, args):
        import torch

        self.torch = torch
        self.args = args
        self.timer = Timer(torch, args.reps, args.warmups)
        try:
            import cupy

            self.cupy = cupy if "cupy" in args.against else None
        except ImportError:
            self.cupy = None
        self.results = []

    def record(self, family, case, type_, n, dist, impl, role, mode, times, note=""):
        median = statistics.median(times)
        row = {"family": family, "case": case, "type": type_, "n": n, "dist": dist, "impl": impl, "role": role,
               "mode": mode, "median_ms": median, "min_ms": min(times), "max_ms": max(times), "reps": len(times),
               "gkeys_per_s": n / (median * 1e-3) / 1e9 if median > 0 else 0.0, "status": "ok", "bound": "",
               "note": note}
        self.results.append(row)
        print(f"  {family} {case} {type_} n={n} {dist}: {impl} {median * 1e3:.1f} us", file=sys.stderr)
        return row

    def pair(self, family, case, type_, n, dist, ours, theirs, mode="lat"):
        """Times our call and each alternative; the alternatives' rows get the ratio ours / theirs."""
        timing = self.timer.wall if mode == "wall" else self.timer.lat
        mine = self.record(family, case, type_, n, dist, ours[0], "tilesort", mode, timing(ours[1]))
        for impl, call in theirs:
            try:
                row = self.record(family, case, type_, n, dist, impl, "alt", mode, timing(call))
            except Exception as error:  # an alternative that cannot run this case (dtype, memory)
                print(f"  {impl}: {type(error).__name__}: {error}", file=sys.stderr)
                continue
            row["tilesort_impl"] = mine["impl"]
            row["tilesort_gkeys_per_s"] = mine["gkeys_per_s"]
            row["speedup"] = row["median_ms"] / mine["median_ms"]

    def rows(self):
        torch, cp = self.torch, self.cupy
        for dtype in self.args.types:
            for length in self.args.lengths:
                rows = (1 << 24) // length
                x = random_keys(torch, (rows, length), dtype)
                n = x.numel()
                print(f"rows: {dtype} {rows} x {length}", file=sys.stderr)
                self.pair("python-rows", "sort (values, indices)", dtype, n, f"L={length}",
                          ("tilesort.sort", lambda: tilesort.sort(x)), [("torch.sort", lambda: torch.sort(x))])
                alts = [("torch.argsort", lambda: torch.argsort(x))]
                if cp is not None:
                    cx = cp.asarray(x)
                    alts += [("cupy.argsort", lambda: cp.argsort(cx, axis=-1)),
                             ("cupy.sort (values only)", lambda: cp.sort(cx, axis=-1))]
                self.pair("python-rows", "argsort", dtype, n, f"L={length}",
                          ("tilesort.argsort", lambda: tilesort.argsort(x)), alts)

    def dims(self):
        torch = self.torch
        for dtype in self.args.types:
            for length in (32, 300, 1024, 4096):
                x = random_keys(torch, (length, (1 << 24) // length), dtype)
                self.pair("python-dims", "sort dim=0 (values, indices)", dtype, x.numel(), f"L={length} columns",
                          ("tilesort.sort", lambda: tilesort.sort(x, dim=0)),
                          [("torch.sort", lambda: torch.sort(x, dim=0)),
                           ("tilesort.sort, dim moved last", lambda: moved_last(lambda: tilesort.sort(x, dim=0)))])

    def ragged(self):
        torch = self.torch
        n = 1 << 24
        g = torch.Generator().manual_seed(1)
        for dtype in self.args.types:
            keys = random_keys(torch, (n,), dtype)
            sentinel = torch.finfo(keys.dtype).max if keys.dtype.is_floating_point else torch.iinfo(keys.dtype).max
            for layout in ("uniform[1,2000]", "power-law", "random starts, mean 300"):
                offsets = ragged_layout(torch, layout, n, g)
                lengths = offsets[1:] - offsets[:-1]
                segments, longest = lengths.numel(), int(lengths.max())
                covered = int(offsets[-1])
                # Padded workaround: the (row, column) of every key, computed once, like user code would.
                seg_id = torch.repeat_interleave(torch.arange(segments, device="cuda"), lengths)
                col = torch.arange(covered, device="cuda") - offsets[:-1][seg_id]
                blowup = segments * longest / covered
                print(f"ragged: {dtype} {layout}: {segments} segments, longest {longest}, padding would hold "
                      f"{blowup:.1f}x the keys", file=sys.stderr)
                padded = (torch.empty(segments, longest, dtype=keys.dtype, device="cuda")
                          if segments * longest <= self.args.max_padded else None)

                def padded_sort():
                    padded.fill_(sentinel)
                    padded[seg_id, col] = keys[:covered]
                    return torch.sort(padded, dim=-1).values[seg_id, col]

                def two_pass():
                    order = torch.sort(keys[:covered], stable=True).indices
                    by_segment = torch.sort(seg_id[order], stable=True).indices
                    return keys[order[by_segment]]

                theirs = [("torch two-pass (key, segment id)", two_pass)]
                if padded is not None:
                    theirs.insert(0, ("padded torch.sort", padded_sort))
                else:
                    print(f"  padded torch.sort: skipped, {segments} x {longest} keys exceed --max-padded",
                          file=sys.stderr)
                self.pair("python-ragged", "segmented_sort", dtype, covered, layout,
                          ("tilesort.segmented_sort", lambda: tilesort.segmented_sort(keys, offsets, check=False)),
                          theirs)
                del padded

    def one_d(self):
        torch, cp = self.torch, self.cupy
        for dtype in self.args.types:
            for n in self.args.sizes:
                for dist in self.args.dists:
                    x = one_d_keys(torch, n, dtype, dist)
                    print(f"1d: {dtype} n={n} {dist}", file=sys.stderr)
                    self.pair("python-1d", "sort (values, indices)", dtype, n, dist,
                              ("tilesort.sort", lambda: tilesort.sort(x)), [("torch.sort", lambda: torch.sort(x))])
                    alts = [("torch.argsort", lambda: torch.argsort(x))]
                    if cp is not None:
                        cx = cp.asarray(x)
                        alts += [("cupy.argsort", lambda: cp.argsort(cx)),
                                 ("cupy.sort (values only)", lambda: cp.sort(cx))]
                    self.pair("python-1d", "argsort", dtype, n, dist,
                              ("tilesort.argsort", lambda: tilesort.argsort(x)), alts)
                    del x

    def small(self):
        torch = self.torch
        shapes = {"1 row of 1024": (1, 1024), "1000 rows of 32": (1000, 32), "1-D 2^10": (1 << 10,),
                  "1-D 2^16": (1 << 16,)}
        for dtype in self.args.types:
            for dist, shape in shapes.items():
                x = random_keys(torch, shape, dtype)
                for mode in ("lat", "wall"):
                    self.pair("python-small", "sort (values, indices)", dtype, x.numel(), dist,
                              ("tilesort.sort", lambda: tilesort.sort(x)), [("torch.sort", lambda: torch.sort(x))],
                              mode)

    def host(self):
        import numpy as np

        torch = self.torch
        budget = self.args.host_budget

        def wall(call, n, warm=True):  # the CPU sorts' untimed first call only with --warmups > 0
            reps = self.args.reps if n <= 1 << 26 else min(self.args.reps, 3)
            if warm:
                call()
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                call()
                times.append((time.perf_counter() - t0) * 1e3)
            return times

        for dtype in self.args.types:
            for n in self.args.host_sizes:
                x = random_keys(torch, (n,), dtype).cpu()
                a = x.numpy() if dtype != "bfloat16" else None
                print(f"host: {dtype} n={n}", file=sys.stderr)
                mine = self.record("python-host", "sort (values, indices)", dtype, n, "random", "tilesort.sort",
                                   "tilesort", "wall", wall(lambda: tilesort.sort(x, device_memory_budget=budget), n),
                                   note=f"CPU tensor, device_memory_budget={budget}")
                theirs = [("torch.sort (CPU, stable)", lambda: torch.sort(x, stable=True))]
                if a is not None:
                    theirs.append(("numpy.sort(kind=stable)", lambda: np.sort(a, kind="stable")))
                    mine_np = self.record("python-host", "numpy sort", dtype, n, "random", "tilesort.sort (numpy)",
                                          "tilesort", "wall",
                                          wall(lambda: tilesort.sort(a, device_memory_budget=budget), n))
                for impl, call in theirs:
                    row = self.record("python-host", "sort (values, indices)", dtype, n, "random", impl, "alt",
                                      "wall", wall(call, n, warm=self.args.warmups > 0))
                    ours = mine_np if impl.startswith("numpy") else mine
                    row["tilesort_impl"] = ours["impl"]
                    row["tilesort_gkeys_per_s"] = ours["gkeys_per_s"]
                    row["speedup"] = row["median_ms"] / ours["median_ms"]
                del x, a

    def meta(self):
        torch = self.torch
        props = torch.cuda.get_device_properties(0)
        return {"gpu": props.name, "sm_count": props.multi_processor_count,
                "compute_capability": f"{props.major}.{props.minor}", "torch": torch.__version__,
                "cupy": getattr(self.cupy, "__version__", None), "tilesort": tilesort.__version__,
                "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
                "reps": self.args.reps, "warmups": self.args.warmups, "float_order": self.args.float_order,
                "timing": "CUDA events around one Python call (dispatch included), median; wall: host clock over "
                          "back-to-back calls"}


def table(results):
    lines = [f"{'family':<14} {'case':<24} {'type':<8} {'n':>10} {'layout':<24} {'impl':<34} {'mode':<4} "
             f"{'median us':>10} {'GKeys/s':>8} {'tilesort x':>10}"]
    for r in results:
        speedup = f"{r['speedup']:.2f}" if "speedup" in r else ""
        lines.append(f"{r['family']:<14} {r['case']:<24} {r['type']:<8} {r['n']:>10} {r['dist']:<24} "
                     f"{r['impl']:<34} {r['mode']:<4} {r['median_ms'] * 1e3:>10.1f} {r['gkeys_per_s']:>8.2f} "
                     f"{speedup:>10}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tilesort.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--family", default="rows,ragged,1d,small",
                        help="comma list of rows, dims, ragged, 1d, small, host")
    parser.add_argument("--types", default="int32,float32,int64", help="key dtypes (comma list)")
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)), help="row lengths (rows family)")
    parser.add_argument("--sizes", default="2^10,2^12,2^14,2^16,2^18,2^20,2^22,2^24,2^26,2^28",
                        help="array sizes (1d family), e.g. 2^20,1000")
    parser.add_argument("--dists", default="random", help="1d family: comma list of random, sorted, nearly")
    parser.add_argument("--host-sizes", default="2^20,2^24,2^26,2^28", help="array sizes (host family)")
    parser.add_argument("--host-budget", type=int, default=4 << 30,
                        help="host family: device_memory_budget in bytes (0: the free device memory)")
    parser.add_argument("--against", default="torch,cupy", help="alternatives besides torch: cupy")
    parser.add_argument("--max-padded", type=int, default=1 << 28,
                        help="largest padded matrix (keys) the padded torch workaround may allocate")
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--warmups", type=int, default=2)
    parser.add_argument("--float-order", choices=["ranks", "comparator"], default="ranks",
                        help="floating keys: ranked first (the default) or ordered in the comparator")
    parser.add_argument("--json", help="write every measurement to this file")
    args = parser.parse_args(argv)
    args.types = args.types.split(",")
    args.lengths = [int(v) for v in args.lengths.split(",")]
    args.sizes = parse_sizes(args.sizes)
    args.host_sizes = parse_sizes(args.host_sizes)
    args.dists = args.dists.split(",")
    if any(d not in ("random", "sorted", "nearly") for d in args.dists):
        parser.error("--dists: random, sorted, nearly")
    _core.FLOAT_RANKS = args.float_order == "ranks"
    try:
        import torch
    except ImportError:
        print("tilesort.bench needs torch (the timing and the reference sorts)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("tilesort.bench: no CUDA device", file=sys.stderr)
        return 2
    bench = Bench(args)
    families = {"rows": bench.rows, "dims": bench.dims, "ragged": bench.ragged, "1d": bench.one_d,
                "small": bench.small, "host": bench.host}
    for family in args.family.split(","):
        families[family]()
    print(table(bench.results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": bench.meta(), "results": bench.results}, f, indent=1)
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
