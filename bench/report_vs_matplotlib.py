#!/usr/bin/python3
"""Benchmark of `memfit report` against the same pages drawn with Python + matplotlib.

Quality bar: `report` is at least 50x faster per scenario than the same pages
drawn with Python + matplotlib.

Input: configs/examples.csv replicated to N scenarios (unique names). memfit is timed as a whole
process (`memfit report -q --progress never -o DIR FILE.csv`: start-up, CSV, planning, layout,
fonts, PDF writing), which is conservative. The reference is this script drawing the same content
per scenario with matplotlib into one multi-page PDF (PdfPages): a summary page, then per scenario
four pages holding a configuration table, a verdict box, a terms table, a micro-batch table, the
five charts (does-it-fit stacked bars per ladder rung with the GPU and dashed reserve lines; the
step timeline as configured and with checkpointing, filled areas over 3L+2 points; peak M(k)
against k with a twin axis; one layer's activations walk, horizontal bars; parameters per layer,
bars), a rung table and the notes. Its numbers come from `memfit eval --format json` and the
model presets; where eval does not give a chart's data (the ladder's intermediate rungs, the
timelines) it is approximated from doc/model.md's formulas: the fidelity of the numbers does not
change the amount of drawing, which is what is timed. Only the drawing and saving are timed, inside
this process, after the imports (interpreter start-up and `import matplotlib` are excluded).
Both timings are medians over several runs of the whole file, divided by N; the runs of the two
alternate, so that load from other processes falls on both alike. CPU time (user + system of the
memfit process; process time of the drawing) is printed too: it is less sensitive to a busy
machine than wall time.

usage: report_vs_matplotlib.py MEMFIT [SCENARIOS] [RUNS] [MPL_RUNS]
(KEEP=DIR keeps both PDFs.)
"""
import csv
import json
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

BAR = 50.0
GB = 1e9


def load_matplotlib():
    """The Agg/PDF backend or None when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.backends.backend_pdf import PdfPages
    except ImportError:
        return None
    return plt, PdfPages


def replicate(src, dst, n):
    """The rows of src repeated until there are n, each with a unique name."""
    with open(src, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], [r for r in rows[1:] if r]
    with open(dst, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for i in range(n):
            r = list(body[i % len(body)])
            r[0] = "%s-%d" % (r[0], i // len(body))
            w.writerow(r)
    return header


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def pdf_pages(path):
    try:
        out = subprocess.run(["pdfinfo", path], capture_output=True, text=True, check=True).stdout
        return int(re.search(r"^Pages:\s+(\d+)", out, re.M).group(1))
    except (OSError, subprocess.CalledProcessError, AttributeError):
        with open(path, "rb") as f:
            return len(re.findall(rb"/Type\s*/Page\b", f.read()))


def timed(cmd):
    """Wall and CPU (user + system) seconds of one memfit process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit("memfit failed (%d): %s" % (r.returncode, r.stderr.decode(errors="replace")))
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


# ---------------------------------------------------------------- data for the reference pages

def scenario_data(ev, row, models, gpus):
    """Everything one scenario's pages draw, from eval's terms and doc/model.md's formulas."""
    m = models[row["model"]]
    L, h, a, V = int(m["layers"]), int(m["hidden"]), int(m["heads"]), int(m["vocab"])
    s, b = int(row["seq"]), int(row["micro_batch"])
    tp = int(row["tp"] or 1)
    gpu_gb = float(row["gpu_mem_gb"]) if row.get("gpu_mem_gb") else \
        float(gpus.get(row["gpu"], {}).get("mem_gb", 80))
    d = dict(ev)
    d.update(L=L, h=h, a=a, V=V, s=s, b=b, tp=tp, arch=m["arch"], ffn=int(m["ffn"]),
             gpu=gpu_gb * GB, row=row, model=row["model"])
    A = max(ev["act_layer_bytes"], 1)
    c = 2 * s * b * h // tp
    d["kcurve"] = [(k, math.ceil(L / k) * c + k * A) for k in range(1, L + 1)]
    d["c"] = c
    return d


def rungs(d):
    """Baseline, then one bar per setting the fix changed, ending at the fix's peak."""
    base = [d["weights_bytes"], d["grads_bytes"], d["optimizer_bytes"], d["act_bytes"],
            d["logits_bytes"]]
    steps = d["fix_plan"].split() if d["fix_plan"] else []
    bars = [("as given", d["b"], base)]
    total = sum(base) or 1
    for i, st in enumerate(steps, 1):
        target = d["peak_bytes"] + (d["fix_peak_bytes"] - d["peak_bytes"]) * i / len(steps)
        bars.append(("+ " + st.split("=")[0], d["fix_micro_batch"],
                     [x * target / total for x in base]))
    return bars


def timeline(d, ckpt):
    """Memory over one step: 3L+2 points (forward rising, backward falling), or the sawtooth."""
    L, A, states, logits = d["L"], d["act_layer_bytes"], d["states_bytes"], d["logits_bytes"]
    t, act, lg = [0.0], [0.0], [0.0]
    per = d["c"] if ckpt else A
    for i in range(1, L + 1):
        t.append(i)
        act.append(i * per)
        lg.append(0.0)
    t.append(L)
    act.append(L * per)
    lg.append(logits)
    if not ckpt:
        for i in range(1, 2 * L + 1):
            t.append(L + i)
            act.append(max(0.0, (L - i / 2) * A))
            lg.append(0.0)
        return t, [states] * len(t), act, lg
    for j in range(L):
        base = (L - j - 1) * per
        t += [L + 4 * j + 1, L + 4 * j + 2, L + 4 * j + 4]
        act += [base + A, base + A, base]
        lg += [0.0, 0.0, 0.0]
    return t, [states] * len(t), act, lg


WALK = [("LN1 input", 2, 0), ("QKV input", 2, 0), ("Q", 2, 0), ("K", 2, 0),
        ("softmax output", 0, 2), ("dropout mask", 0, 1), ("dropout output", 0, 2), ("V", 2, 0),
        ("projection input", 2, 0), ("projection dropout mask", 1, 0), ("LN2 input", 2, 0),
        ("fc1 input", 2, 0), ("GeLU input", 8, 0), ("fc2 input", 8, 0), ("MLP dropout mask", 1, 0)]


def gb(x):
    return "%.1f GB" % (x / GB)


# ---------------------------------------------------------------- the pages, with matplotlib

A4 = (8.27, 11.69)
COLORS = ["#4477aa", "#66ccee", "#aa66dd", "#ee8822", "#cc3388"]
PARTS = ["weights", "gradients", "optimizer states", "activations", "logits"]


def page(plt, title, pno, total):
    fig = plt.figure(figsize=A4)
    fig.text(0.06, 0.975, "memfit GPU memory capacity report", fontsize=7, weight="bold")
    fig.text(0.94, 0.975, title, fontsize=7, ha="right")
    fig.text(0.06, 0.02, "1 GB = 10\u2079 bytes; 1 GiB = 2\u00b3\u2070 bytes", fontsize=6)
    fig.text(0.94, 0.02, "page %d of %d" % (pno, total), fontsize=6, ha="right")
    return fig


def para(fig, x, y, text, width=100, size=8):
    lines = textwrap.wrap(text, width)
    for i, ln in enumerate(lines):
        fig.text(x, y - i * 0.014, ln, fontsize=size)
    return y - len(lines) * 0.014 - 0.01


def table(fig, rect, rows, header):
    ax = fig.add_axes(rect)
    ax.axis("off")
    t = ax.table(cellText=rows, colLabels=header, loc="upper left", cellLoc="left")
    t.auto_set_font_size(False)
    t.set_fontsize(6.5)
    for (r, _), cell in t.get_celld().items():
        cell.set_linewidth(0)
        if r == 0:
            cell.set_facecolor("#dde6f3")
    return t


def summary_pages(plt, pdf, data, total):
    per_page = 40
    pno = 0
    for start in range(0, len(data), per_page):
        pno += 1
        fig = page(plt, "summary", pno, total)
        fig.text(0.06, 0.93, "GPU memory capacity report", fontsize=14, weight="bold")
        y = para(fig, 0.06, 0.90, "Does each training run fit in the memory of its GPU, and if "
                 "not, what is the cheapest fix? %d scenarios; sizes in GB." % len(data))
        rows = [[d["name"], "fits" if d["fits"] else "OOM", gb(d["peak_bytes"]),
                 gb(d["budget_bytes"]), "-" if d["fix"] in (None, "none") else
                 "%s -> %s" % (d["fix"], gb(d["fix_peak_bytes"] or 0))]
                for d in data[start:start + per_page]]
        table(fig, [0.06, 0.25, 0.88, y - 0.26], rows,
              ["scenario", "verdict", "peak", "budget", "cheapest fix"])
        for i, note in enumerate(["Peak: the memory of the most loaded GPU at the turn.",
                                  "Budget: the GPU's memory less the reserve.",
                                  "Cheapest fix: the first rung of the ladder that fits."]):
            para(fig, 0.06, 0.2 - i * 0.03, "\u2022 " + note)
        pdf.savefig(fig)
        plt.close(fig)
    return pno


def page_terms(plt, d, pno, total):
    fig = page(plt, d["name"], pno, total)
    fig.text(0.06, 0.93, d["name"], fontsize=14, weight="bold", color="#1f4e8c")
    y = para(fig, 0.06, 0.905, "%s model, \u03a8 = %s parameters, trained with dp=%s, tp=%s, "
             "pp=%s, ZeRO %s." % (d["arch"], format(d["params"], ","), d["row"]["dp"],
                                  d["row"]["tp"], d["row"]["pp"], d["row"]["zero"]))
    r = d["row"]
    cfg = [["model", d["model"], "tokens", "s = %d, b = %d" % (d["s"], d["b"])],
           ["shape", "L = %d, h = %d, a = %d" % (d["L"], d["h"], d["a"]), "precision",
            "mixed: 2 + 2 + 12 bytes/param"],
           ["MLP", "f = %d" % d["ffn"], "activations", "attention %s, recompute %s" %
            (r["attention"], r["recompute"])],
           ["vocabulary", "V = %d" % d["V"], "parallelism", "dp=%s tp=%s pp=%s" %
            (r["dp"], r["tp"], r["pp"])],
           ["parameters", format(d["params"], ","), "GPUs", gb(d["gpu"])],
           ["", "", "reserve", "budget " + gb(d["budget_bytes"])]]
    table(fig, [0.06, 0.72, 0.88, y - 0.72], cfg, ["model", "", "training", ""])
    ok = d["fits"]
    fig.text(0.1, 0.66, ("Fits: peak %s <= budget %s" if ok else
                         "Does not fit: peak %s > budget %s") %
             (gb(d["peak_bytes"]), gb(d["budget_bytes"])), fontsize=10, weight="bold",
             bbox=dict(facecolor="#e6f4e6" if ok else "#fbe3e3", edgecolor="none", pad=12))
    if d["fix"] not in (None, "none"):  # eval's JSON: null where nothing needs fixing
        para(fig, 0.1, 0.635, "The cheapest fix is %s: peak %s at micro-batch %d." %
             (d["fix"], gb(d["fix_peak_bytes"] or 0), d["fix_micro_batch"] or 0))
    fig.text(0.06, 0.58, "Memory terms on the most loaded GPU", fontsize=11, weight="bold")
    y = para(fig, 0.06, 0.56, "Model states %s, activations %s and logits %s on each GPU. One "
             "layer keeps A = %s of activations." % (gb(d["states_bytes"]), gb(d["act_bytes"]),
                                                   gb(d["logits_bytes"]),
                                                   gb(d["act_layer_bytes"])))
    pk = d["peak_bytes"] or 1
    terms = [("weights", "2 B x params", d["weights_bytes"]),
             ("gradients", "2 B x params", d["grads_bytes"]),
             ("optimizer states", "12 B x params", d["optimizer_bytes"]),
             ("activations, one layer", "A = 34sbh + 5as\u00b2b", d["act_layer_bytes"]),
             ("activations, stored", "L x A", d["act_bytes"]),
             ("logits", "4sbV", d["logits_bytes"]),
             ("peak", "states + activations + logits", d["peak_bytes"]),
             ("budget", "GPU memory x (1 - 0.15)", d["budget_bytes"])]
    table(fig, [0.06, 0.33, 0.88, y - 0.33],
          [[n, f, format(v, ","), gb(v), "%.1f%%" % (100 * v / pk)] for n, f, v in terms],
          ["term", "formula (this GPU)", "bytes", "size", "share"])
    fig.text(0.06, 0.29, "Largest micro-batch per activation mode", fontsize=11, weight="bold")
    y = para(fig, 0.06, 0.27, "The largest b that fits the budget with every other setting kept. "
             "Selective recomputation adds a few percent of compute; full checkpointing one "
             "extra forward pass (+33%).")
    mb = d["max_micro_batch"]
    table(fig, [0.06, 0.06, 0.88, y - 0.07],
          [[m, "attention=%s recompute=%s" % st, str(mb * f), format(mb * f * d["s"], ",")]
           for m, st, f in [("plain", ("plain", "none"), 1), ("flash", ("flash", "none"), 4),
                            ("selective", ("plain", "selective"), 4),
                            ("full", ("flash", "full"), 20)]],
          ["activation mode", "settings", "largest b", "tokens / micro-batch"])
    return fig


def page_fit_k(plt, d, pno, total):
    fig = page(plt, d["name"], pno, total)
    fig.text(0.06, 0.93, "Does it fit, and what is the cheapest fix?", fontsize=12,
             weight="bold", color="#1f4e8c")
    ax = fig.add_axes([0.14, 0.66, 0.8, 0.22])
    bars = rungs(d)
    x = list(range(len(bars)))
    bottom = [0.0] * len(bars)
    for i, part in enumerate(PARTS):
        vals = [br[2][i] / GB for br in bars]
        ax.bar(x, vals, 0.3, bottom=bottom, color=COLORS[i], label=part)
        bottom = [p + v for p, v in zip(bottom, vals)]
    for xi, top in zip(x, bottom):
        ax.text(xi, top, "%.1f" % top, ha="center", va="bottom", fontsize=6)
    ax.axhline(d["gpu"] / GB, color="black", label="GPU memory")
    ax.axhline(d["budget_bytes"] / GB, color="black", ls="--", label="15% kept free")
    ax.set_xticks(x, ["%s\nb = %d" % (br[0], br[1]) for br in bars], fontsize=6)
    ax.set_ylabel("memory of one GPU (GB)", fontsize=7)
    ax.tick_params(labelsize=6)
    ax.grid(axis="y", lw=0.3)
    ax.set_title("Peak memory of the most loaded GPU: as given, then rung by rung", fontsize=8)
    ax.legend(fontsize=5, ncol=6, loc="lower center", bbox_to_anchor=(0.5, 1.06), frameon=False)
    y = para(fig, 0.06, 0.61, "Each bar is the configuration as given or one rung of the fix "
             "ladder, applied on top of the previous ones; the solid line is the GPU's memory and "
             "the dashed line the budget after the 15% reserve.")
    table(fig, [0.06, y - 0.02 - 0.018 * (len(bars) + 1), 0.88, 0.018 * (len(bars) + 1)],
          [[br[0], d["fix_plan"] if i else "", str(br[1]), gb(sum(br[2])),
            "yes" if sum(br[2]) <= d["budget_bytes"] else "no", "-"]
           for i, br in enumerate(bars)],
          ["rung", "adds to the rungs above", "b", "peak", "fits", "added time / step"])
    fig.text(0.06, 0.44, "Checkpointing every k layers", fontsize=12, weight="bold",
             color="#1f4e8c")
    kb = min(d["kcurve"], key=lambda kv: kv[1])
    para(fig, 0.06, 0.42, "M(k) = \u2308L/k\u2309\u00b7c + k\u00b7A, smallest near k* = "
         "\u221a(L\u00b7c/A). The best integer k is %d, which keeps %s of activations. Whatever "
         "k, checkpointing recomputes one forward pass: +33%%." % (kb[0], gb(kb[1])))
    ax = fig.add_axes([0.14, 0.08, 0.74, 0.24])
    base = d["states_bytes"] + d["logits_bytes"]
    ks = [k for k, _ in d["kcurve"]]
    ms = [(base + m) / GB for _, m in d["kcurve"]]
    ax.plot(ks, ms, color="#ee8822", marker="o", ms=2, label="peak with checkpointing every k")
    ax.plot([kb[0]], [(base + kb[1]) / GB], "D", color="#cc3388",
            label="best k = %d" % kb[0])
    ax.axhline(d["peak_bytes"] / GB, ls="--", color="gray", label="no checkpointing")
    kstar = math.sqrt(d["L"] * d["c"] / max(d["act_layer_bytes"], 1))
    ax.axvline(kstar, ls="--", color="#4477aa", label="k* = %.2f" % kstar)
    ax.set_xlabel("k (layers per checkpointed segment)", fontsize=7)
    ax.set_ylabel("peak memory (GB)", fontsize=7)
    ax.tick_params(labelsize=6)
    ax.grid(lw=0.3)
    ax2 = ax.twinx()
    ax2.plot(ks, [4 / 3] * len(ks), color="#4477aa", label="step time (right axis)")
    ax2.set_ylim(0, 1.5)
    ax2.set_ylabel("step time (x no checkpointing)", fontsize=7)
    ax2.tick_params(labelsize=6)
    ax.set_title("Checkpointing every k layers: peak memory against k", fontsize=8)
    ax.legend(fontsize=5, ncol=3, loc="lower center", bbox_to_anchor=(0.5, 1.06), frameon=False)
    return fig


def step_panel(fig, rect, d, ckpt, title):
    ax = fig.add_axes(rect)
    t, st, act, lg = timeline(d, ckpt)
    ax.stackplot(t, [v / GB for v in st], [v / GB for v in act], [v / GB for v in lg],
                 colors=["#bbbbbb", "#ee8822", "#cc3388"],
                 labels=["model states", "activations", "logits"])
    ax.axhline(d["gpu"] / GB, color="black", label="GPU memory")
    ax.axhline(d["budget_bytes"] / GB, color="black", ls="--", label="15% kept free")
    ax.axvline(d["L"], color="black", ls=":", lw=0.8)
    ax.text(d["L"], d["gpu"] / GB * 1.05, "forward \u2192 | \u2190 backward", fontsize=5,
            ha="center")
    if ckpt:
        xs = [d["L"] + 4 * j + 1 for j in range(d["L"])]
        ax.hlines([d["states_bytes"] / GB] * len(xs), xs, [x + 1 for x in xs],
                  color="#cc3388", lw=2, zorder=3, label="recomputed forward")
    ax.set_xlabel("time (forward passes of one layer)", fontsize=6)
    ax.set_ylabel("memory (GB)", fontsize=6)
    ax.tick_params(labelsize=6)
    ax.grid(lw=0.3)
    ax.set_xlim(0, t[-1])
    ax.set_title(title, fontsize=8)
    ax.legend(fontsize=5, ncol=6, loc="lower center", bbox_to_anchor=(0.5, 1.08), frameon=False)


def page_step(plt, d, pno, total):
    fig = page(plt, d["name"], pno, total)
    fig.text(0.06, 0.93, "Memory over one training step", fontsize=12, weight="bold",
             color="#1f4e8c")
    para(fig, 0.06, 0.91, "Activations rise through the forward pass, peak at the turn and fall "
         "through the backward pass; the model states stay. With checkpointing only each "
         "segment's input is kept and the segment is recomputed just before its backward.")
    step_panel(fig, [0.1, 0.66, 0.84, 0.16], d, False,
               "Memory over one training step, as configured")
    step_panel(fig, [0.1, 0.40, 0.84, 0.16], d, True,
               "The same step, checkpointing every layer (recomputation shaded)")
    return fig


def page_layer(plt, d, pno, total):
    fig = page(plt, d["name"], pno, total)
    fig.text(0.06, 0.93, "Inside one layer", fontsize=12, weight="bold", color="#1f4e8c")
    ax = fig.add_axes([0.3, 0.68, 0.62, 0.2])
    run, names = 0.0, []
    ratio = 5 * d["a"] * d["s"] / (34 * d["h"])
    for i, (n, sbh, as2b) in enumerate(WALK):
        w = sbh + as2b * ratio / 5
        ax.barh(i, w, left=run, color="#ee8822" if sbh else "#cc3388", height=0.6)
        ax.text(run + w + 0.2, i, "+%d%s" % (sbh or as2b, "" if sbh else " as\u00b2b"),
                fontsize=5, va="center")
        run += w
        names.append(n)
    ax.barh(len(WALK), run, color="#ee8822", height=0.6)
    ax.text(run + 0.2, len(WALK), "34 sbh + 5 as\u00b2b", fontsize=5, va="center")
    names.append("total")
    ax.set_yticks(range(len(names)), names, fontsize=5)
    ax.invert_yaxis()
    ax.set_xlabel("bytes in units of sbh (orange) or as\u00b2b (magenta)", fontsize=6)
    ax.tick_params(labelsize=6)
    ax.grid(axis="x", lw=0.3)
    ax.set_title("Activations one layer keeps, operation by operation", fontsize=8)
    ax = fig.add_axes([0.12, 0.44, 0.8, 0.16])
    f = d["ffn"] / d["h"]
    if d["arch"] == "gpt":
        mats = [("W_Q", 1), ("W_K", 1), ("W_V", 1), ("W_O", 1), ("MLP in", f), ("MLP out", f),
                ("biases, norms", 13 / d["h"])]
    else:
        mats = [("W_Q", 1), ("W_K", 1), ("W_V", 1), ("W_O", 1), ("gate", f), ("up", f),
                ("down", f), ("norms", 2 / d["h"])]
    xs = range(len(mats))
    colors = ["#4477aa"] * 4 + ["#44aa88"] * (len(mats) - 5) + ["#bbbbbb"]
    ax.bar(xs, [v for _, v in mats], color=colors)
    for x, (_, v) in zip(xs, mats):
        ax.text(x, v, "%.2f" % v, ha="center", va="bottom", fontsize=5)
    ax.set_xticks(list(xs), [n for n, _ in mats], fontsize=6)
    ax.set_ylabel("parameters (units of h\u00b2)", fontsize=6)
    ax.tick_params(labelsize=6)
    ax.grid(axis="y", lw=0.3)
    ax.set_title("Parameters of one layer, matrix by matrix", fontsize=8)
    fig.text(0.06, 0.38, "Notes and assumptions", fontsize=12, weight="bold", color="#1f4e8c")
    y = 0.36
    for note in NOTES:
        y = para(fig, 0.06, y, "\u2022 " + note, width=110, size=7)
    return fig


NOTES = [
    "Budget = GPU memory x (1 - reserve): 15% of the GPU is kept free for the CUDA context, the "
    "allocator's fragmentation and temporary buffers.",
    "1 GB = 10^9 bytes (not GiB = 2^30 bytes). GPU makers quote memory in GB; nvidia-smi and "
    "PyTorch print GiB.",
    "The formulas count model states, the activations autograd keeps for backward (bf16), the "
    "fp32 logits of the loss, and nothing else. Left out: temporary buffers of the forward and "
    "backward passes, communication buffers, the allocator's fragmentation, the CUDA context.",
    "LayerNorm keeps its input (2 sbh per norm); its mean and variance (two fp32 numbers per "
    "row) are left out.",
    "The attention core (5as\u00b2b) outgrows the rest of the layer above s = 34h/(5a).",
    "Cost model of the fixes: 6\u03a8 FLOPs per token (8\u03a8 with checkpointing) at 40% of the "
    "GPU's BF16 peak; ring all-reduce of the gradients, ZeRO-3 moving 1.5x the data-parallel "
    "traffic; Megatron tensor parallelism with four all-reduces per layer.",
    "Validated against PyTorch: over 100 GPT and Llama layer shapes, the per-layer activation "
    "formulas match the bytes autograd saves for backward within 0.2%.",
]


def draw_report(plt, PdfPages, data, path):
    total = 1 + (len(data) - 1) // 40 + 4 * len(data)
    with PdfPages(path) as pdf:
        pno = summary_pages(plt, pdf, data, total)
        for d in data:
            for draw in (page_terms, page_fit_k, page_step, page_layer):
                pno += 1
                fig = draw(plt, d, pno, total)
                pdf.savefig(fig)
                plt.close(fig)
    return total


# ---------------------------------------------------------------- main

def main():
    memfit = sys.argv[1] if len(sys.argv) > 1 else "build/memfit"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 48
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    mpl_runs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    mpl = load_matplotlib()
    if mpl is None:
        print("report vs matplotlib: skipped (matplotlib is not installed for %s; "
              "apt-get install python3-matplotlib)" % sys.executable)
        return 0
    plt, PdfPages = mpl
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "scenarios.csv")
        replicate("configs/examples.csv", src, n)
        out = os.path.join(tmp, "memfit")
        cmd = [memfit, "report", "-q", "--progress", "never", "-o", out, src]
        ev = json.loads(subprocess.run([memfit, "eval", "--format", "json", src],
                                       capture_output=True, text=True, check=True).stdout)
        models = {r["name"]: r for r in read_rows("configs/models.csv")}
        gpus = {r["name"]: r for r in read_rows("configs/gpus.csv")}
        data = [scenario_data(e, r, models, gpus) for e, r in zip(ev, read_rows(src))]
        ref = os.path.join(tmp, "matplotlib.pdf")
        timed(cmd)  # warm-up: page cache, fonts
        m, r = [], []
        # Interleaved, so that load from other processes falls on both sides alike.
        for i in range(max(runs, mpl_runs)):
            if i < runs:
                shutil.rmtree(out, ignore_errors=True)
                m.append(timed(cmd))
            if i < mpl_runs:
                t0, c0 = time.perf_counter(), time.process_time()
                draw_report(plt, PdfPages, data, ref)
                r.append((time.perf_counter() - t0, time.process_time() - c0))
        m_pages = pdf_pages(os.path.join(out, "report.pdf"))
        r_pages = pdf_pages(ref)
        keep = os.environ.get("KEEP")
        if keep:  # KEEP=DIR keeps both PDFs to compare them by eye
            os.makedirs(keep, exist_ok=True)
            shutil.copy(os.path.join(out, "report.pdf"), os.path.join(keep, "memfit.pdf"))
            shutil.copy(ref, os.path.join(keep, "matplotlib.pdf"))
    m_med, r_med = (statistics.median(w for w, _ in m) / n,
                    statistics.median(w for w, _ in r) / n)
    m_cpu, r_cpu = (statistics.median(c for _, c in m) / n,
                    statistics.median(c for _, c in r) / n)
    ratio = r_med / m_med
    print("report: %d scenarios, memfit %d pages, matplotlib reference %d pages" %
          (n, m_pages, r_pages))
    print("memfit report (whole process): median %.2f ms per scenario over %d runs "
          "(CPU %.2f ms); %.0f pages/s" % (m_med * 1e3, runs, m_cpu * 1e3,
                                          m_pages / (m_med * n)))
    print("matplotlib (drawing + saving only): median %.1f ms per scenario over %d runs "
          "(CPU %.1f ms)" % (r_med * 1e3, mpl_runs, r_cpu * 1e3))
    print("ratio matplotlib / memfit = %.1fx wall (%.1fx CPU): the %gx bar %s" %
          (ratio, r_cpu / m_cpu, BAR, "holds" if ratio >= BAR else "DOES NOT hold"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
