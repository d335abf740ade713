#!/usr/bin/python3
"""doc/model.md section 4.12 read independently of src/: what each implementation profile adds
to one layer's activations against memfit's own, checked on random rows through `memfit eval
--peak step` (the profiles apply under the step's peak only). Run by model_ref.py."""
import csv
import io
import subprocess


def profile_delta(r):
    """Section 4.12's table: what a profile adds to one layer's activations (bytes) against
    memfit's own, for a Llama layer or an MoE one (dropless), one GPU (no tp, cp or
    recomputation), full training in bf16 or under autocast, under the step's peak (which
    applies the profiles)."""
    T = r["seq"] * r["micro_batch"]
    h, a, g, f = r["hidden"], r["heads"], r["kv_heads"], r["ffn"]
    d = h // a
    moe = r.get("experts", "") not in ("", "0")
    if r["impl"] == "megatron":  # fused SwiGLU: 6 f, not 8 f
        if not moe:
            return -2 * f * T
        # the experts weight their rows in the SwiGLU: no expert or weighted outputs (4h a row);
        # the argsort permute: 10 bytes a row, not 18, and the int64 argsort, 8 E a token
        rows = int(r["top_k"]) * T
        return -2 * int(r["expert_ffn"]) * rows - 4 * h * rows - 8 * rows \
            + 8 * int(r["experts"]) * T
    # hf: two norms upcast (10 h for the fused 2 h), under autocast a bf16 copy of the norm
    # output for each of q, k, v (and gate, up in a dense layer), and the attention's kernel
    delta = 2 * 8 * h * T
    if r["precision"] == "autocast":
        delta += 4 * h * T + (0 if moe else 2 * h * T)
    if r["attention"] in ("plain", "eager"):
        delta += 4 * a * r["seq"] * r["seq"] * r["micro_batch"] + 4 * T * (a - g) * d
    elif r["attention"] == "sdpa":
        delta += 4 * T * (a - g) * d
    return delta


def check_profiles(memfit, rng, n=60):
    """Each profile's act_layer_bytes (--peak step) against memfit's own profile on the same
    row, the difference by profile_delta: section 4.12 read independently of src/."""
    rows, bad = [], 0
    for i in range(n):
        a = rng.choice([4, 8, 16, 32])
        g = rng.choice([x for x in (1, 2, 4, 8, a) if a % x == 0])
        d = rng.choice([32, 64, 128])
        r = {"name": f"p{i}", "arch": "llama", "layers": rng.randint(1, 8), "hidden": a * d,
             "heads": a, "kv_heads": g, "vocab": rng.randint(1000, 50000),
             "ffn": rng.randint(1, 64) * 64, "seq": rng.choice([128, 512, 2048]),
             "micro_batch": rng.randint(1, 4), "gpu_mem_gb": 1000}
        if rng.random() < 0.3:
            E = rng.choice([4, 8, 16])
            r.update(experts=str(E), top_k=str(rng.randint(1, min(E, 4))),
                     expert_ffn=str(rng.randint(1, 32) * 64))
        r["impl"] = rng.choice(["megatron", "hf"])
        r["precision"] = rng.choice(["mixed", "autocast"])
        r["attention"] = rng.choice(["eager", "sdpa", "flash_attention_2"]) \
            if r["impl"] == "hf" else rng.choice(["plain", "flash"])
        own = dict(r, name=f"o{i}", impl="memfit",
                   attention="plain" if r["attention"] in ("plain", "eager") else "flash")
        rows += [r, own]
    cols = ["name", "arch", "layers", "hidden", "heads", "kv_heads", "vocab", "ffn", "seq",
            "micro_batch", "gpu_mem_gb", "impl", "attention", "experts", "top_k", "expert_ffn",
            "precision"]
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([r.get(k, "") for k in cols])
    proc = subprocess.run([memfit, "eval", "--peak", "step", "-"], input=out.getvalue(),
                          capture_output=True, text=True)
    got = {x["name"]: int(x["act_layer_bytes"]) for x in csv.DictReader(io.StringIO(proc.stdout))}
    for r in rows[::2]:
        o = "o" + r["name"][1:]
        want = profile_delta(r)
        diff = got[r["name"]] - got[o] if r["name"] in got and o in got else None
        ok = diff == want
        print(("ok " if ok else "not ok ") + f"profile {r['impl']} {r['attention']} {r['name']}"
              + ("" if ok else f"\n# memfit's difference {diff}, section 4.12's {want}"))
        bad += not ok
    return bad
