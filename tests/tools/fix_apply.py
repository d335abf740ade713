#!/usr/bin/python3
"""The verdict's fix, checked from outside (doc/model.md 11.6; run by tests/cli/fix.sh).

usage: fix_apply.py MEMFIT ROWS.csv EVAL.csv TMPDIR

For every row of ROWS whose fix in EVAL (memfit eval's CSV of ROWS) is a layout with a step
time: the fix_plan applied to the row, evaluated again, fits with the same global batch and GPU
count and the peak eval gave; `memfit search` with every layout column pinned prices it at
eval's fix_step_time_s; `memfit search` with none pinned finds no layout more than 2% faster;
and among the search's 64 fastest within 2% of the best, in the space of the fix's search
(flash attention; recomputation none, full or the row's every k; the row's loss and the fused
one, doc/model.md 10.2), none changes fewer settings.
Prints "ok NAME" / "not ok NAME" lines like the shell tests.
"""
import csv
import io
import subprocess
import sys

LAYOUT = ["dp", "tp", "pp", "vpp", "cp", "sp", "ep", "etp", "zero", "zero_group", "attention",
          "loss", "recompute", "offload", "micro_batch"]
DEGREES = {"pp", "vpp", "cp", "ep"}  # empty or 0 means 1


def check(name, ok, why=""):
    print(("ok " if ok else "not ok ") + name + ("" if ok else ": " + why))


def memfit_csv(memfit, args, path):
    out = subprocess.run([memfit] + args + [path], capture_output=True, text=True, check=False)
    return list(csv.DictReader(io.StringIO(out.stdout)))


def write(path, rows, columns):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, columns, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def norm(col, v, row):
    """A setting's value as the fix compares it."""
    v = (v or "").strip()
    if col in DEGREES:
        return v if v not in ("", "0") else "1"
    if col == "etp":
        return v if v not in ("", "0") else norm("tp", row.get("tp"), row)
    if col in ("tp", "dp"):
        return v or "1"
    if col == "zero":
        return v or "0"
    if col == "zero_group":
        return v or "0"
    if col == "sp":
        return "yes" if v in ("yes", "1", "true") else "no"
    if col == "offload":
        return v or "none"
    if col == "recompute":
        return "full" if v in ("full", "1") else (v or "none")
    if col == "loss":  # the default follows precision (doc/model.md 10.2)
        return v or ("fused" if (row.get("precision") or "").strip() == "megatron" else "eager")
    return v


def changes(row, cand, moe):
    n = 0
    for col in LAYOUT:
        if col == "etp" and not moe:
            continue
        if col == "sp" and norm("tp", row.get("tp"), row) != norm("tp", cand.get("tp"), cand):
            continue
        n += norm(col, row.get(col), row) != norm(col, cand.get(col), cand)
    return n


def main():
    memfit, rows_path, eval_path, tmp = sys.argv[1:5]
    rows = {r["name"]: r for r in csv.DictReader(open(rows_path))}
    checked = 0
    for ev in csv.DictReader(open(eval_path)):
        if not ev["fix_step_time_s"]:
            continue
        name, row = ev["name"], dict(rows[ev["name"]])
        b, dp, pp = (int(row.get(c) or 1) for c in ("micro_batch", "dp", "tp"))
        pp = int(row.get("pp") or 1)
        gb = int(row.get("global_batch") or 0) or b * dp * pp
        gpus = dp * int(row.get("tp") or 1) * pp * int(row.get("cp") or 1)
        row["global_batch"] = str(gb)
        applied = dict(row)
        for kv in ev["fix_plan"].split():
            k, v = kv.split("=", 1)
            if k != "gpus":
                applied[k] = v
        columns = list(row.keys()) + [c for c in LAYOUT if c not in row]
        write(f"{tmp}/applied.csv", [applied], columns)
        again = memfit_csv(memfit, ["eval"], f"{tmp}/applied.csv")
        check(f"{name}: the fix applied fits", len(again) == 1 and again[0]["fits"] == "1",
              str(again))
        check(f"{name}: ... at eval's fix peak", again and again[0]["peak_bytes"] == ev["fix_peak_bytes"])
        fix_s = float(ev["fix_step_time_s"])
        # Priced by search with every layout column pinned, on the same GPUs.
        pinned = dict(applied, gpus=str(gpus))
        write(f"{tmp}/pinned.csv", [pinned], columns + ["gpus"])
        got = memfit_csv(memfit, ["search", "--top", "1"], f"{tmp}/pinned.csv")
        check(f"{name}: search prices the fix at eval's step time",
              len(got) == 1 and abs(float(got[0]["step_time_s"]) - fix_s) <= 1e-5 * fix_s, str(got))
        # The whole search on the same GPUs, nothing pinned.
        # The search keeps a row's loss: searched with the row's and with the fused one.
        job = {k: v for k, v in row.items() if k not in LAYOUT or k == "loss"}
        job["gpus"] = str(gpus)
        top = []
        for loss in sorted({norm("loss", row.get("loss"), row), "fused"}):
            job["loss"] = loss
            write(f"{tmp}/job.csv", [job], list(job.keys()))
            top += memfit_csv(memfit, ["search", "--top", "64"], f"{tmp}/job.csv")
        top.sort(key=lambda c: float(c["step_time_s"]))
        best = float(top[0]["step_time_s"])
        check(f"{name}: within 2% of search's best ({fix_s:.4g} s, best {best:.4g} s)",
              fix_s <= best * 1.02)
        moe = int(top[0].get("experts") or 0) > 0
        mine = changes(row, applied, moe)
        k = row.get("recompute") or "none"
        space = {"none", "full", "1", k}
        fewer = [c for c in top if float(c["step_time_s"]) <= best * 1.02 and
                 c["attention"] == "flash" and c["recompute"] in space and
                 changes(row, c, moe) < mine]
        check(f"{name}: no layout within 2% changes fewer than its {mine}", not fewer,
              str([(c["tp"], c["dp"], c["zero"], c["offload"], c["micro_batch"]) for c in fewer]))
        checked += 1
    check("rows checked", checked >= 3, str(checked))


main()
