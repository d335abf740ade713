#!/usr/bin/python3
"""An independent implementation of doc/model.md sections 2-8 and the eval columns (section 8.5).

Written from that text, not from src/model.c: exact rational arithmetic (fractions) with no
rounding at all, tensor by tensor. memfit rounds every division by a parallel degree up to the
byte, so its numbers must equal these where no degree divides, and otherwise lie above them by
no more than the rounding of a byte per division.

usage: model_ref.py MEMFIT [N] [SEED]   generates N random scenarios, runs `MEMFIT eval`, compares.
Prints one "ok"/"not ok" line per checked scenario and exits 1 on any mismatch.
"""
import csv
import io
import math
import random
import subprocess
import sys
from fractions import Fraction as F

BPP = {"mixed": (2, 2, 12), "autocast": (4, 4, 8), "megatron": (2, 4, 12), "frozen": (2, 0, 0)}


def layer_params(c):
    h, f, hkv = c["hidden"], c["ffn"], c["hidden"] * c["kv_heads"] // c["heads"]
    if c["arch"] == "gpt":
        attn = 2 * h * h + 2 * h * hkv + 2 * h + 2 * hkv
        return attn + 2 * h * f + f + h + 4 * h
    return 2 * h * h + 2 * h * hkv + 3 * h * f + 2 * h


def total_params(c):
    h, v = c["hidden"], c["vocab"]
    emb = v * h if c["tied"] else 2 * v * h
    final = 2 * h if c["arch"] == "gpt" else h
    return c["layers"] * layer_params(c) + emb + final + c["positions"] * h


def layer_tensors(c):
    """(bytes, stays whole under tp) for every tensor one layer keeps, doc/model.md section 4."""
    s, b, h, a, f = c["seq"], c["micro_batch"], c["hidden"], c["heads"], c["ffn"]
    hkv = h * c["kv_heads"] // a
    sbh, sbf, skv = s * b * h, s * b * f, s * b * hkv
    t = []
    if c["arch"] == "gpt":
        t += [(2 * sbh, True), (2 * sbh, True)]          # LN1 input, QKV input
        t += [(2 * sbh, False), (2 * skv, False), (2 * skv, False)]  # Q, K, V
        t += [(2 * sbh, False)]                          # projection input
        t += [(2 * sbh, True), (2 * sbh, True)]          # LN2 input, fc1 input
        t += [(2 * sbf, False), (2 * sbf, False)]        # GeLU input, fc2 input
        if c["dropout"]:
            t += [(sbh, True), (sbh, True)]              # masks after projection and MLP
    else:
        t += [(2 * sbh, True)] * 4                       # two norm inputs, two norm outputs
        t += [(2 * sbh, False), (2 * skv, False), (2 * skv, False), (2 * sbh, False)]
        t += [(2 * sbf, False)] * 4                      # gate, up, silu(gate), product
    if c["attention"] == "flash":
        t += [(4 * a * s * b, False)]                    # fp32 log-sum-exp
    elif c["recompute"] != "selective":
        if c["arch"] == "gpt" and c["dropout"]:
            t += [(2 * a * s * s * b, False), (a * s * s * b, False), (2 * a * s * s * b, False)]
        else:
            t += [(2 * a * s * s * b, False)]
    return t


def layer_act(c):
    tp = c["tp"]
    if c["sp"] and tp > 1:
        return F(sum(n for n, _ in layer_tensors(c)), tp)
    return sum(F(n) if whole else F(n, tp) for n, whole in layer_tensors(c))


def ckpt(c):
    c2 = F(2 * c["seq"] * c["micro_batch"] * c["hidden"])
    return c2 / c["tp"] if c["sp"] and c["tp"] > 1 else c2


def recompute_k(c):
    r = c["recompute"]
    return 1 if r == "full" else (int(r) if r.isdigit() else 0)


def stage_act(c, m, k, A=None, C=None):
    A = layer_act(c) if A is None else A
    C = ckpt(c) if C is None else C
    ls = c["layers"] // c["pp"]
    if k == 0:
        return m * ls * A
    kk = min(k, ls)
    return m * math.ceil(F(ls, kk)) * C + kk * A


def gpu(c, first):
    tp, pp, h, v = c["tp"], c["pp"], c["hidden"], c["vocab"]
    layers = F(c["layers"] // pp * layer_params(c), tp)
    emb = F(v * h, tp)
    final = 2 * h if c["arch"] == "gpt" else h
    if pp == 1:
        p = layers + emb + final + c["positions"] * h + (0 if c["tied"] else emb)
    elif first:
        p = layers + emb + c["positions"] * h
    else:
        p = layers + emb + final
    w, g, o = (n * p for n in BPP[c["precision"]])
    z, dp = c["zero"], c["dp"]
    if z >= 1:
        o /= dp
    if z >= 2:
        g /= dp
    if z >= 3:
        w /= dp
    if c["offload"] == "optimizer":
        o = F(0)
    act = stage_act(c, pp if first else 1, recompute_k(c))
    logits = F(4 * c["seq"] * c["micro_batch"] * v, tp) if (pp == 1 or not first) else F(0)
    return {"weights": w, "grads": g, "optimizer": o, "states": w + g + o, "act": act,
            "logits": logits, "peak": w + g + o + act + logits}


def evaluate(c):
    first, last = gpu(c, True), gpu(c, False)
    top = last if last["peak"] > first["peak"] else first
    budget = round(c["gpu_mem_gb"] * 10**9 * (1 - c["reserve"]))
    return top, budget


def k_curve(c):
    A, C = layer_act(c), ckpt(c)
    ls = c["layers"] // c["pp"]
    return {k: stage_act(c, c["pp"], k, A, C) for k in range(1, ls + 1)}


def random_scenario(rng, i):
    arch = rng.choice(["gpt", "llama"])
    heads = rng.choice([4, 8, 12, 16, 32, 40, 64, 96])
    head_dim = rng.choice([32, 64, 128])
    kv = heads if arch == "gpt" and rng.random() < 0.6 else rng.choice([d for d in range(1, heads + 1) if heads % d == 0])
    layers = rng.choice([2, 4, 6, 12, 24, 32, 40, 48, 80, 96])
    h = heads * head_dim
    tp = rng.choice([d for d in (1, 1, 2, 4, 8) if heads % d == 0 and kv % d == 0])
    pp = rng.choice([d for d in (1, 1, 2, 3, 4, 8) if layers % d == 0])
    rec = rng.choice(["none", "selective", "full", str(rng.randint(1, layers))])
    return {
        "name": f"r{i}", "arch": arch, "layers": layers, "hidden": h, "heads": heads, "kv_heads": kv,
        "vocab": rng.randint(1000, 260000),
        "ffn": rng.choice([4 * h, 256 * ((8 * h // 3 + 255) // 256), rng.randint(1, 8) * 128 * 3]),
        "tied": rng.random() < 0.5, "positions": rng.choice([0, 0, 1024, 2048]) if arch == "gpt" else 0,
        "dropout": arch == "gpt" and rng.random() < 0.6,
        "seq": rng.choice([128, 512, 1000, 2048, 4096, 8192, 32768]), "micro_batch": rng.randint(1, 16),
        "precision": rng.choice(list(BPP)), "attention": rng.choice(["plain", "flash"]), "recompute": rec,
        "dp": rng.choice([1, 2, 3, 8, 64]), "tp": tp, "pp": pp, "sp": tp > 1 and rng.random() < 0.5,
        "zero": rng.randint(0, 3), "offload": rng.choice(["none", "none", "optimizer"]),
        "gpu_mem_gb": rng.choice([16, 24, 40, 80, 141, 192, 1000]), "reserve": rng.choice([0, 0.1, 0.15, 0.3]),
    }


COLUMNS = ["name", "arch", "layers", "hidden", "heads", "kv_heads", "vocab", "ffn", "tied", "positions",
           "dropout", "seq", "micro_batch", "precision", "attention", "recompute", "dp", "tp", "pp", "sp",
           "zero", "offload", "gpu_mem_gb", "reserve"]


def to_csv(rows):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([("yes" if r[k] else "no") if isinstance(r[k], bool) else r[k] for k in COLUMNS])
    return out.getvalue()


def check(c, got, failures):
    top, budget = evaluate(c)
    degrees = c["tp"] > 1 or (c["zero"] > 0 and c["dp"] > 1)
    tol = 4 * c["layers"] + 64 if degrees else 0

    def near(name, want):
        g = int(got[name])
        if not (math.ceil(want) <= g <= math.ceil(want) + tol):
            failures.append(f"{c['name']}: {name} = {g}, reference {float(want):.1f} (tolerance {tol})")

    near("params", F(total_params(c)))
    for col, key in (("weights_bytes", "weights"), ("grads_bytes", "grads"), ("optimizer_bytes", "optimizer"),
                     ("states_bytes", "states"), ("act_bytes", "act"), ("logits_bytes", "logits"),
                     ("peak_bytes", "peak")):
        near(col, top[key])
    near("act_layer_bytes", layer_act(c))
    if int(got["budget_bytes"]) != budget:
        failures.append(f"{c['name']}: budget {got['budget_bytes']} != {budget}")
    fits = int(got["peak_bytes"]) <= budget
    if int(got["fits"]) != int(fits):
        failures.append(f"{c['name']}: fits {got['fits']}")
    curve = k_curve(c)
    best = min(curve.values())
    k = int(got["k_best"])
    if k < 1 or k > c["layers"] or curve[min(k, len(curve))] > best + tol:
        failures.append(f"{c['name']}: k_best {k}, reference {min(curve, key=curve.get)}")
    b = int(got["max_micro_batch"])
    def peak_at(bb):
        return evaluate(dict(c, micro_batch=bb))[0]["peak"]
    if b > 0 and peak_at(b) > budget:
        failures.append(f"{c['name']}: max_micro_batch {b} does not fit in the reference")
    if peak_at(b + 1) + tol * (b + 1) < budget:
        failures.append(f"{c['name']}: max_micro_batch {b}, but {b + 1} fits in the reference")


def main():
    memfit = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 2026)
    rows = [random_scenario(rng, i) for i in range(n)]
    proc = subprocess.run([memfit, "eval", "-"], input=to_csv(rows), capture_output=True, text=True)
    got = {r["name"]: r for r in csv.DictReader(io.StringIO(proc.stdout))}
    bad = 0
    for c in rows:
        failures = []
        if c["name"] not in got:
            # Only a scenario whose byte counts overflow 64 bits may be rejected.
            if evaluate(c)[0]["peak"] < 2**64:
                failures.append(f"{c['name']}: rejected: {proc.stderr.strip()[:200]}")
        else:
            check(c, got[c["name"]], failures)
        print(("not ok " if failures else "ok ") + c["name"] + ("".join("\n# " + f for f in failures)))
        bad += bool(failures)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
