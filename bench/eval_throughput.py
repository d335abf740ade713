#!/usr/bin/python3
"""Benchmark of `memfit eval`: rows per second and memory against the number of rows.

Quality bar: eval streams (memory flat in the number of rows) and does >= 1 million rows per
second. Timings are medians of several runs; the reference, measured in the same run on the
same file, is awk splitting every field of every row (a floor for any CSV tool), so
the ratio memfit / awk is comparable across machines. Instructions per row, which do not depend
on what else the machine is running, come from `perf stat -e instructions` when the CPU counters
can be read, else from valgrind's callgrind on a tenth of the rows (when valgrind is installed).

usage: eval_throughput.py MEMFIT [ROWS] [RUNS]
"""
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MODELS = ["gpt-1.3b", "llama2-7b", "llama2-13b", "llama3-8b", "mistral-7b", "gpt2-medium"]
GPUS = ["H100-80GB", "A100-80GB", "H200-141GB", "A100-40GB"]


def write_csv(path, rows, seed=7, ladder=False):
    """A realistic mix: presets, flash on most rows, data parallelism with ZeRO, and about one
    row in six that does not fit (so the planner runs its ladder); with ladder, longer sequences
    and larger micro-batches make about a third not fit."""
    rng = random.Random(seed)
    seqs, batches = ([4096, 8192, 8192], (1, 8)) if ladder else ([1024, 2048, 4096], (1, 4))
    with open(path, "w") as f:
        f.write("name,model,seq,micro_batch,attention,recompute,dp,tp,zero,gpu\n")
        for i in range(rows):
            f.write("s%d,%s,%d,%d,%s,%s,%d,%d,%d,%s\n" % (
                i, rng.choice(MODELS), rng.choice(seqs), rng.randint(*batches),
                rng.choice(["flash", "flash", "flash", "plain"]),
                rng.choice(["none", "selective", "full", "2"]), rng.choice([8, 16, 64]),
                rng.choice([1, 2, 4]), rng.choice([1, 2, 3]), rng.choice(GPUS)))


def not_fitting(memfit, path):
    """The fraction of path's rows that do not fit as they are (eval's fits column)."""
    out = subprocess.run([memfit, "eval", path], capture_output=True, text=True, check=False)
    rows = out.stdout.splitlines()[1:]
    return sum(1 for r in rows if r.split(",")[11] == "0") / max(1, len(rows))


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    return wall


def instructions_per_row(memfit, big, small, rows):
    """(instructions per row, how it was counted), or (None, why not)."""
    out = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", memfit, "eval", big],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         check=False) if shutil.which("perf") else None
    for line in (out.stderr.splitlines() if out else []):
        fields = line.split(",")
        if len(fields) > 2 and fields[2].startswith("instructions") and fields[0].isdigit():
            return int(fields[0]) / rows, f"perf stat, {rows} rows"
    if not shutil.which("valgrind"):
        return None, "no readable CPU counters and no valgrind"
    with tempfile.NamedTemporaryFile(suffix=".cg") as cg:
        res = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg.name}",
                              memfit, "eval", small], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, check=False)
    for line in res.stderr.splitlines():
        if "Collected" in line or "I   refs" in line:
            total = int(line.split()[-1].replace(",", ""))
            return total / (rows // 10), f"callgrind, {rows // 10} rows"
    return None, "callgrind gave no count"


def max_rss_kb(cmd):
    """Peak resident memory of one run, read by a fresh Python child so runs do not mix."""
    code = ("import resource,subprocess,sys;"
            "subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL);"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code] + cmd, capture_output=True, text=True)
    return int(out.stdout.strip())


def main():
    memfit = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    with tempfile.TemporaryDirectory() as d:
        big, small = os.path.join(d, "big.csv"), os.path.join(d, "small.csv")
        write_csv(big, rows)
        write_csv(small, rows // 10)
        eval_cmd = [memfit, "eval", big]
        ref_cmd = ["awk", "-F,", "{n += NF} END {print n}", big]
        m = [timed(eval_cmd) for _ in range(runs)]
        r = [timed(ref_cmd) for _ in range(runs)]
        m_med, r_med = statistics.median(m), statistics.median(r)
        print(f"eval: {rows} rows, median {m_med:.3f} s over {runs} runs = {rows / m_med / 1e6:.2f} M rows/s")
        print(f"awk reference (split every field): median {r_med:.3f} s; ratio memfit/awk = {m_med / r_med:.2f}")
        ipr, how = instructions_per_row(memfit, big, small, rows)
        if ipr is None:
            print(f"instructions per row: not measured ({how})")
        else:
            print(f"instructions per row: {ipr:,.0f} ({how})")
        rss_small = max_rss_kb([memfit, "eval", small])
        rss_big = max_rss_kb(eval_cmd)
        print(f"max RSS: {rows // 10} rows {rss_small} KB, {rows} rows {rss_big} KB "
              f"(ratio {rss_big / rss_small:.2f}; the duplicate-name check keeps 8-16 bytes of table and the name a row)")
        # The ladder's mix: a third of the rows do not fit, so the planner runs for them.
        lad = os.path.join(d, "ladder.csv")
        write_csv(lad, rows, seed=11, ladder=True)
        frac = not_fitting(memfit, lad)
        lm = statistics.median([timed([memfit, "eval", lad]) for _ in range(runs)])
        lr = statistics.median([timed(["awk", "-F,", "{n += NF} END {print n}", lad])
                                for _ in range(runs)])
        print(f"eval, a third not fitting ({frac:.0%} of the rows): median {lm:.3f} s = "
              f"{rows / lm / 1e6:.2f} M rows/s; ratio memfit/awk = {lm / lr:.2f}")


if __name__ == "__main__":
    main()
