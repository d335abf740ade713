#!/usr/bin/python3
"""Measure what one whole training step of a GPT stack holds, operation by operation.

Usage: /usr/bin/python3 tests/validation/step.py OUT.csv [--device cpu|cuda] [--only I,J,...]
       /usr/bin/python3 tests/validation/step.py --check FIXTURE.csv
       (`make validate`: tests/validation/step.csv; README.md, "Whole training step")

One training step of the lesson's GPT stack (token embedding, tied to the output layer or not,
learned positions or none, embedding dropout, L pre-LN GPT layers, final LayerNorm, output layer,
fp32 cross-entropy), after a warm-up step: forward, loss, backward, AdamW step. A
TorchDispatchMode sees every aten operation of the step (forward, backward, recomputation,
optimizer) and keeps a weak reference to the storage of each tensor an operation returns; before
every operation it sweeps the references that died, so the live set is exact at every operation
boundary. Each live storage carries a label: parameter, gradient (a storage that is some
parameter's .grad at that moment), optimizer state, autocast copy (a low-precision cast of a
parameter), logits-shaped (s b V elements, last dimension V), saved for backward (seen by a
saved-tensors pack hook), RNG state (the CPU generator state a checkpoint keeps; host memory on a
GPU) or temporary (everything else). The peak is the largest live sum at an operation boundary;
its phase is where the step was then:

    forward          the forward pass and the loss
    backward_start   the loss's backward, the output layer and the final norm
    recompute        a checkpointed layer rebuilt and back-propagated (recompute=full)
    backward_layers  a layer's backward without recomputation (never the peak in the fixture)
    backward_end     the embedding's backward and the last gradient accumulation
    optimizer        optimizer.step()

One row per configuration: the input columns, the peak, its phase, layer and operation, the
bytes of each label at the peak, the peak of every phase, and the allocator's numbers.

Cross-check: on the CPU the same step runs under torch.profiler with profile_memory=True, which
reports every allocation and free of the CPU allocator; its running sum gives the allocator's
peak (which also sees the scratch buffers an operation allocates and frees inside itself, and the
few storages made outside the dispatcher) and its net change, which must equal the tracker's.
With --device cuda the cross-check is torch.cuda.max_memory_allocated and memory_stats instead.

Before measuring, the tracker is checked on toy programs whose answer is known to the byte
(self_test); the script stops if one differs. After measuring, check() compares every phase peak
of every row with the closed forms of predict() (the README's formulas) and fails if one differs
by a byte.

Written for Debian's python3-torch (PyTorch 1.13, CPU):
- Tensor.untyped_storage() is Tensor._storage(); a weak reference to a storage is
  torch.multiprocessing.reductions.StorageWeakRef;
- torch.optim.AdamW has foreach=True (multi-tensor) and foreach=False (single-tensor) but no
  fused implementation (fused AdamW came with PyTorch 2.0, on the CPU with 2.4): `fused` is
  FusedAdamW below, an in-place AdamW that allocates nothing per parameter (one scratch
  buffer of CHUNK floats for the whole step), standing for a fused kernel;
- dropout is torch.native_dropout (a 1-byte mask, as on a GPU; F.dropout on the CPU keeps a mask
  in the activation dtype);
- CPU autocast (bfloat16) casts the inputs of mm, bmm, addmm and matmul to bfloat16 and leaves
  LayerNorm, softmax, GeLU and embeddings in the dtype they get: the residual stream, the norms
  and the embeddings stay fp32, the attention core and the MLP run in bfloat16.

The --device cuda path (torch.cuda.max_memory_allocated, memory_stats, CUDA autocast) is written
for a GPU but has NOT been run: no GPU was available when this harness was written. Functions
and branches only the cuda path takes are marked "UNTESTED (cuda)".
"""
import csv
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._C._autograd import DeviceType
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.checkpoint import checkpoint

P_DROP = 0.1
LR, BETAS, EPS, WD = 1e-3, (0.9, 0.999), 1e-8, 0.1
CHUNK = 2048          # FusedAdamW's scratch: CHUNK fp32 values
RECORD_FUNCTION = 288  # bytes: the handle of the record_function torch.optim's step() opens

INPUT_COLUMNS = ["layers", "hidden", "heads", "vocab", "seq", "micro_batch", "tied", "positions",
                 "dropout", "precision", "recompute", "loss", "grad_buffer", "optimizer_impl"]
LABELS = ["params", "grads", "optimizer_states", "saved", "autocast_copies", "logits",
          "temporaries", "rng_states"]
PHASES = ["forward", "backward_start", "recompute", "backward_layers", "backward_end",
          "optimizer"]
COLUMNS = (["config"] + INPUT_COLUMNS + ["device", "peak_bytes", "peak_phase", "peak_layer",
           "peak_op"] + [l + "_bytes" for l in LABELS] + [p + "_peak" for p in PHASES]
           + ["start_bytes", "tracker_net_bytes", "alloc_peak_bytes", "alloc_net_bytes"])

# (layers, hidden, heads, vocab, seq, micro_batch, tied, positions, dropout, recompute). Chosen
# so that each phase is the peak somewhere, with at least 1% between the peak and the runner-up
# phase in every row (predict() ranks them), and no row peaks inside a layer's backward without
# recomputation (that needs V < 4h or s b << h; README).
SHAPES = [
    (2, 64, 2, 2000, 64, 2, 1, "learned", 1, "none"),
    (2, 128, 4, 1024, 128, 2, 1, "none", 1, "none"),
    (2, 64, 2, 1280, 48, 1, 0, "learned", 1, "none"),
    (3, 64, 4, 1280, 48, 1, 0, "none", 0, "none"),
    (2, 96, 3, 1536, 96, 3, 0, "none", 1, "none"),
    (3, 64, 4, 2000, 128, 4, 1, "none", 1, "full"),
    (2, 64, 4, 256, 96, 4, 1, "learned", 1, "full"),
    (2, 192, 6, 320, 64, 4, 1, "none", 0, "full"),
    (4, 64, 4, 320, 48, 3, 0, "none", 0, "full"),
    (3, 192, 6, 512, 32, 1, 1, "learned", 1, "full"),
    (3, 256, 4, 768, 64, 1, 1, "none", 0, "full"),
    (3, 128, 4, 384, 48, 1, 1, "none", 1, "full"),
]
PRECISIONS = ["fp32", "autocast"]
GRAD_BUFFERS = ["on_demand", "persistent"]
OPTIMIZERS = ["fused", "foreach", "single"]


def configs():
    for L, h, a, V, s, b, tied, pos, drop, rc in SHAPES:
        for prec in PRECISIONS:
            for gb in GRAD_BUFFERS:
                for opt in OPTIMIZERS:
                    yield {"layers": L, "hidden": h, "heads": a, "vocab": V, "seq": s,
                           "micro_batch": b, "tied": tied, "positions": pos, "dropout": drop,
                           "precision": prec, "recompute": rc, "loss": "eager",
                           "grad_buffer": gb, "optimizer_impl": opt}


def config_name(c):
    return (f"L{c['layers']}-h{c['hidden']}-a{c['heads']}-V{c['vocab']}-s{c['seq']}"
            f"-b{c['micro_batch']}-{'tied' if c['tied'] else 'untied'}-pos{c['positions']}"
            f"-drop{c['dropout']}-{c['precision']}-rc{c['recompute']}-{c['grad_buffer']}"
            f"-{c['optimizer_impl']}")


# ---------------------------------------------------------------------------------------------
# The tracker


def storage_of(t):
    return t._storage()


class Tracker(TorchDispatchMode):
    """Every live storage the step makes, with weak references swept before each operation.

    live: storage key (the StorageImpl address, stable while our weak reference exists) ->
    [weak reference, bytes, creation label, shape of the tensor that made it, (phase, layer,
    operation, dtype) at its creation]. The creation label is "param", "optim", "autocast",
    "rng", "input" or "temp"; saved (pack hook) and gradient (p.grad) are decided when a
    snapshot is taken. After every operation the live sum is compared with the running maximum
    of the current phase and of the whole step. With device="cuda", storages elsewhere (the
    CPU tensors of RNG states, step counters, the profiler handle) are not counted."""

    def __init__(self, logits_numel=None, vocab=None, device=None):
        super().__init__()
        self.device = device
        self.live = {}
        self.total = 0
        self.saved = set()
        self.param_keys = set()
        self.grad_owners = []            # parameters whose .grad is a gradient
        self.phase, self.layer = "setup", -1
        self.peak, self.peak_where, self.peak_snapshot = -1, None, None
        self.phase_peak = {}
        self.logits_numel, self.vocab = logits_numel, vocab
        self.ops = 0
        self.last_op = "start"
        self.details = None              # phase -> (bytes, layer, op, detail()) at its peak

    # -- registration
    def track(self, t, label="temp"):
        if not isinstance(t, torch.Tensor) or t.is_meta:
            return None
        if self.device is not None and t.device.type != self.device:
            return None                                     # UNTESTED (cuda): host storages
        st = storage_of(t)
        key = st._cdata
        entry = self.live.get(key)
        n = st.nbytes()
        if entry is None:
            self.live[key] = [StorageWeakRef(st), n, label, tuple(t.shape),
                              (self.phase, self.layer, self.last_op, str(t.dtype))]
            self.total += n
        elif entry[1] != n:                 # resized in place
            self.total += n - entry[1]
            entry[1] = n
        return key

    def track_saved(self, t):
        key = self.track(t, "temp")
        if key is not None:
            self.saved.add(key)

    def sweep(self):
        dead = [k for k, e in self.live.items() if e[0].expired()]
        for k in dead:
            self.total -= self.live.pop(k)[1]
            self.saved.discard(k)

    def set_phase(self, phase, layer=-1):
        self.sweep()
        self.phase, self.layer = phase, layer

    # -- labels at a snapshot
    def label_of(self, key, entry, grad_keys):
        if key in self.param_keys:
            return "params"
        if key in grad_keys:
            return "grads"
        lab = entry[2]
        if lab == "optim":
            return "optimizer_states"
        if lab == "autocast":
            return "autocast_copies"
        if lab == "rng":
            return "rng_states"
        shape = entry[3]
        if (self.logits_numel and len(shape) >= 1 and shape[-1] == self.vocab
                and math.prod(shape) == self.logits_numel):
            return "logits"
        if key in self.saved:
            return "saved"
        return "temporaries"

    def grad_keys(self):
        return {storage_of(p.grad)._cdata for p in self.grad_owners if p.grad is not None}

    def snapshot(self):
        gk = self.grad_keys()
        out = dict.fromkeys(LABELS, 0)
        for k, e in self.live.items():
            out[self.label_of(k, e, gk)] += e[1]
        return out

    def detail(self):
        """Every live storage: (label, bytes, shape, (phase, layer, op, dtype) at creation)."""
        gk = self.grad_keys()
        return sorted(((self.label_of(k, e, gk), e[1], e[3], e[4]) for k, e in self.live.items()),
                      key=lambda r: (r[0], -r[1]))

    def observe(self):
        t = self.total
        key = self.phase
        if t > self.phase_peak.get(key, -1):
            self.phase_peak[key] = t
            if self.details is not None:
                self.details[key] = (t, self.layer, self.last_op, self.detail())
        if t > self.peak:
            self.peak = t
            self.peak_where = (self.phase, self.layer, self.last_op)
            self.peak_snapshot = self.snapshot()

    # -- the dispatch
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.sweep()
        out = func(*args, **kwargs)
        self.last_op = str(func.overloadpacket.__name__)
        label = "temp"
        if func is torch.ops.aten._to_copy.default and isinstance(args[0], torch.Tensor):
            if storage_of(args[0])._cdata in self.param_keys:
                label = "autocast"
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self.track(t, label)
        self.ops += 1
        self.observe()
        return out


def pack_hook(tracker):
    def pack(t):
        tracker.track_saved(t)
        return t
    return pack


class Mark(torch.autograd.Function):
    """Identity; its backward tells the tracker that the backward pass reached this tensor."""

    @staticmethod
    def forward(ctx, x, tracker, phase, layer):
        ctx.info = (tracker, phase, layer)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        tracker, phase, layer = ctx.info
        if tracker is not None:
            tracker.set_phase(phase, layer)
        return g, None, None, None


# ---------------------------------------------------------------------------------------------
# The model: the lesson's GPT stack, (s, b, h) layout


def dropout(x, p):
    return torch.native_dropout(x, p, True)[0] if p > 0 else x


class Block(nn.Module):
    """Pre-LN GPT layer (Korthikanti et al. 2022): LayerNorm, fused QKV linear, plain causal
    attention with dropout on the probabilities, output projection, dropout, residual; LayerNorm,
    GeLU MLP of width 4h, dropout, residual. q, k and v are (s, b a, d) copies of the slices of
    the QKV output (sbh elements each), which the two batched matmuls keep."""

    def __init__(self, h, a, p):
        super().__init__()
        self.h, self.a, self.p = h, a, p
        self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h)
        self.proj = nn.Linear(h, h)
        self.fc1 = nn.Linear(h, 4 * h)
        self.fc2 = nn.Linear(4 * h, h)

    def forward(self, x):                                   # x (s, b, h)
        # Written so that no Python name keeps an intermediate alive longer than the operations
        # that read it (del as soon as a tensor is consumed), as a fused implementation would.
        s, b, h = x.shape
        a, d = self.a, h // self.a
        # q, k, v: contiguous copies of the slices of the QKV output, sbh each, viewed as
        # (s, b a, d); the QKV output itself dies here (a reshape would copy for b > 1 only).
        q, k, v = (t.contiguous().view(s, b * a, d)
                   for t in self.qkv(self.ln1(x)).split(h, dim=-1))
        # mul.Scalar keeps its factor as a Scalar: no 0-dim tensor is saved (a saved wrapped
        # number would also reach the dispatch mode as a Python float in 1.13, and fail).
        att = torch.ops.aten.mul.Scalar(torch.bmm(q.transpose(0, 1), k.permute(1, 2, 0)),
                                        1.0 / math.sqrt(d))
        del q, k
        # An additive causal bias in the scores' dtype: an addition keeps nothing.
        att = att + torch.full((s, s), float("-inf"), dtype=att.dtype, device=x.device).triu(1)
        att = dropout(torch.softmax(att, dim=-1), self.p)
        o = torch.bmm(att, v.transpose(0, 1))               # (b a, s, d)
        del att, v
        o = o.transpose(0, 1).reshape(s, b, h)              # a copy: the projection's input
        x = x + dropout(self.proj(o), self.p)
        del o
        return x + dropout(self.fc2(F.gelu(self.fc1(self.ln2(x)))), self.p)


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        L, h, a, V, s = c["layers"], c["hidden"], c["heads"], c["vocab"], c["seq"]
        self.V, self.p = V, P_DROP if c["dropout"] else 0.0
        self.recompute = c["recompute"] == "full"
        self.wte = nn.Embedding(V, h)
        self.wpe = nn.Embedding(s, h) if c["positions"] == "learned" else None
        self.blocks = nn.ModuleList(Block(h, a, self.p) for _ in range(L))
        self.ln_f = nn.LayerNorm(h)
        self.head = None if c["tied"] else nn.Linear(h, V, bias=False)
        self.tracker = None

    def forward(self, idx, targets):                        # idx, targets (s, b) int64
        tr = self.tracker
        x = self.wte(idx)
        if self.wpe is not None:
            pos = torch.arange(idx.shape[0], device=idx.device)
            x = x + self.wpe(pos).unsqueeze(1)
        x = Mark.apply(dropout(x, self.p), tr, "backward_end", -1)
        for i, blk in enumerate(self.blocks):
            if self.recompute:
                # use_reentrant=True: the non-reentrant form of 1.13 hides its saved input from
                # the pack hook. CheckpointFunction keeps the CPU RNG state (5056 bytes, host
                # memory on a GPU) on its ctx, made outside the dispatcher: tracked here by
                # hand, from the moment the checkpoint returns. The graph (referenced by the
                # loss) keeps these ctx attributes until the step ends.
                y = checkpoint(blk, x, use_reentrant=True)
                if tr is not None and hasattr(y.grad_fn, "fwd_cpu_state"):
                    tr.track(y.grad_fn.fwd_cpu_state, "rng")
            else:
                y = blk(x)
            x = Mark.apply(y, tr, "recompute" if self.recompute else "backward_layers", i)
        w = self.wte.weight if self.head is None else self.head.weight
        # The logits (s, b, V), cast to fp32 (under autocast: a copy, and the bf16 logits die
        # at once), then the fp32 cross-entropy. No name holds the logits: nothing keeps them
        # beyond the operations that read them.
        return F.cross_entropy(F.linear(self.ln_f(x), w).float().view(-1, self.V),
                               targets.view(-1))


class FusedAdamW(torch.optim.Optimizer):
    """AdamW (the update of torch.optim.AdamW) done in place, standing for a fused kernel: per
    parameter only in-place operations on the parameter and its states, and the one tensor
    expression that needs room, sqrt(v) / bias + eps, is evaluated CHUNK elements at a time into
    a scratch buffer made at the start of step() and dropped at its end (4 CHUNK bytes)."""

    def __init__(self, params, lr=LR, betas=BETAS, eps=EPS, weight_decay=WD):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self):
        scratch = None
        for group in self.param_groups:
            lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["step"] = torch.tensor(0.0)
                    st["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    st["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                if scratch is None:
                    scratch = torch.empty(CHUNK, dtype=p.dtype, device=p.device)
                g, m, v = p.grad, st["exp_avg"], st["exp_avg_sq"]
                st["step"] += 1
                step = st["step"].item()
                p.mul_(1 - lr * wd)
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                bc2_sqrt = math.sqrt(1 - b2 ** step)
                step_size = lr / (1 - b1 ** step)
                pf, mf, vf = p.view(-1), m.view(-1), v.view(-1)
                for lo in range(0, pf.numel(), CHUNK):
                    n = min(CHUNK, pf.numel() - lo)
                    buf = scratch[:n]
                    torch.sqrt(vf[lo:lo + n], out=buf)
                    buf.div_(bc2_sqrt).add_(eps)
                    pf[lo:lo + n].addcdiv_(mf[lo:lo + n], buf, value=-step_size)


def make_optimizer(model, impl):
    params = list(model.parameters())
    if impl == "fused":
        return FusedAdamW(params)
    return torch.optim.AdamW(params, lr=LR, betas=BETAS, eps=EPS, weight_decay=WD,
                             foreach=(impl == "foreach"))


def autocast_ctx(c, device):
    if c["precision"] == "autocast":
        return torch.autocast(device, dtype=torch.bfloat16)
    return torch.autocast(device, enabled=False)


def train_step(model, opt, idx, tgt, c, device, tracker=None):
    with autocast_ctx(c, device):
        loss = model(idx, tgt)
    if tracker is not None:
        tracker.set_phase("backward_start")
    loss.backward()
    if tracker is not None:
        tracker.set_phase("optimizer")
    opt.step()
    return loss


# ---------------------------------------------------------------------------------------------
# One measurement


def alloc_from_profile(prof):
    """Running sum of the CPU allocator's events: (peak of the sum, net change)."""
    run = peak = 0
    for e in prof.profiler.kineto_results.events():
        if e.name() == "[memory]" and e.device_type() == DeviceType.CPU:
            run += e.nbytes()
            peak = max(peak, run)
    return peak, run


def measure(c, device="cpu", details=None):
    """One configuration: build the model and its optimizer, run the warm-up step, then the
    measured step under the tracker (and, on the CPU, the profiler); return the CSV row.
    details: a dict to fill with every phase's live storages at its peak (for debugging)."""
    torch.manual_seed(0)
    model = GPT(c).to(device)
    opt = make_optimizer(model, c["optimizer_impl"])
    s, b, V = c["seq"], c["micro_batch"], c["vocab"]
    idx = torch.randint(V, (s, b), device=device)
    tgt = torch.randint(V, (s, b), device=device)
    params = list(model.parameters())

    train_step(model, opt, idx, tgt, c, device)                     # warm-up: states exist
    opt.zero_grad(set_to_none=(c["grad_buffer"] == "on_demand"))

    tr = Tracker(logits_numel=s * b * V, vocab=V, device=device)
    tr.details = details
    for p in params:
        tr.param_keys.add(tr.track(p, "param"))
        if p.grad is not None:
            tr.track(p.grad, "temp")                                # labelled grads when .grad
    tr.grad_owners = params
    for st in opt.state.values():
        for t in st.values():
            if isinstance(t, torch.Tensor):
                tr.track(t, "optim")
    tr.track(idx, "input")
    tr.track(tgt, "input")
    model.tracker = tr
    start = tr.total
    tr.set_phase("forward")

    hooks = torch.autograd.graph.saved_tensors_hooks(pack_hook(tr), lambda t: t)
    if device == "cpu":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            with tr, hooks:
                train_step(model, opt, idx, tgt, c, device, tr)
        tr.sweep()
        alloc_peak, alloc_net = alloc_from_profile(prof)
        alloc_peak += start
    else:                                                           # UNTESTED (cuda)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        with tr, hooks:
            train_step(model, opt, idx, tgt, c, device, tr)
        torch.cuda.synchronize()
        tr.sweep()
        stats = torch.cuda.memory_stats()
        # the caching allocator's peak of allocated (not reserved) bytes, rounded to its blocks;
        # base includes storages the tracker does not know (the CUDA context allocates none)
        alloc_peak = stats["allocated_bytes.all.peak"] - base + start
        alloc_net = torch.cuda.memory_allocated() - base
    model.tracker = None

    phase, layer, op = tr.peak_where
    row = {"config": config_name(c), **c, "device": device, "peak_bytes": tr.peak,
           "peak_phase": phase, "peak_layer": layer, "peak_op": op}
    for lab in LABELS:
        row[lab + "_bytes"] = tr.peak_snapshot[lab]
    for ph in PHASES:
        row[ph + "_peak"] = tr.phase_peak.get(ph, 0)
    row.update({"start_bytes": start, "tracker_net_bytes": tr.total - start,
                "alloc_peak_bytes": alloc_peak, "alloc_net_bytes": alloc_net})
    return row


# ---------------------------------------------------------------------------------------------
# The toys: programs whose live bytes are known to the byte


def self_test():
    """Check the tracker where the answer is known; raise AssertionError if it is wrong."""
    from torch.profiler import ProfilerActivity, profile

    def run(fn, **kw):
        tr = Tracker(**kw)
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            with tr, torch.autograd.graph.saved_tensors_hooks(pack_hook(tr), lambda t: t):
                fn(tr)
        tr.sweep()
        return tr, alloc_from_profile(prof)

    # 1. allocation, views, in-place, free: 4000 + 4000 alive at once, views add nothing
    def toy1(tr):
        a = torch.ones(1000)
        v = a.view(10, 100).t()
        a.add_(a)
        bb = a + a
        del bb, v, a
    tr, (ap, an) = run(toy1)
    assert tr.peak == 8000 and tr.total == 0, (tr.peak, tr.total)
    assert ap == 8000 and an == 0, (ap, an)

    # 2. Linear forward + backward: saved = input only (weight is a parameter), labels right
    lin = nn.Linear(64, 32)
    x = torch.randn(16, 64)

    def toy2(tr):
        for p in lin.parameters():
            tr.param_keys.add(tr.track(p, "param"))
        tr.grad_owners = list(lin.parameters())
        tr.track(x, "input")
        y = lin(x)                        # addmm: keeps x (a saved input) and w.t() (param)
        snap = tr.snapshot()
        assert snap["saved"] == 16 * 64 * 4, snap
        assert snap["params"] == (64 * 32 + 32) * 4, snap
        assert snap["temporaries"] == 16 * 32 * 4, snap
        y.sum().backward()
        snap = tr.snapshot()
        assert snap["grads"] == (64 * 32 + 32) * 4, snap
        lin.zero_grad(set_to_none=True)
    tr, _ = run(toy2)

    # 3. exp saves its result: one storage, counted once although it is the output too
    def toy3(tr):
        xx = torch.randn(100, requires_grad=True)
        tr.track(xx, "input")
        y = xx.exp()
        snap = tr.snapshot()
        assert snap["saved"] == 400 and tr.total == 800, (snap, tr.total)
        y.sum().backward()
        del y
        tr.sweep()
        assert tr.total == 800, tr.total  # xx and its gradient
    run(toy3)

    # 4. autocast: the bf16 weight copy is labelled, the input cast is saved
    lin2 = nn.Linear(64, 32, bias=False)

    def toy4(tr):
        for p in lin2.parameters():
            tr.param_keys.add(tr.track(p, "param"))
        xx = torch.randn(16, 64)
        tr.track(xx, "input")
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = lin2(xx)
        snap = tr.snapshot()
        assert snap["autocast_copies"] == 64 * 32 * 2, snap
        assert snap["saved"] == 16 * 64 * 2, snap            # the bf16 input copy
        del y
    run(toy4)

    # 5. AdamW, three implementations: the optimizer-step peak above the states, known exactly
    shapes = [(300, 40), (50,), (120, 7)]
    numel = [math.prod(sh) for sh in shapes]
    # torch.optim.Optimizer's step() (FusedAdamW's too) opens a record_function, whose handle is a 288-byte storage for the
    # whole step (PyTorch 1.13); the single-tensor loop keeps the previous parameter's denom
    # while it computes sqrt(v) and sqrt(v) / bias of the next: 4 max(n_prev + 2 n) bytes.
    single = 4 * max(2 * n + (numel[i - 1] if i else 0) for i, n in enumerate(numel))
    for impl, extra in (("foreach", 8 * sum(numel) + RECORD_FUNCTION),
                        ("single", single + RECORD_FUNCTION), ("fused", 4 * CHUNK + RECORD_FUNCTION)):
        ps = [nn.Parameter(torch.randn(sh)) for sh in shapes]
        for p in ps:
            p.grad = torch.randn_like(p)
        opt = FusedAdamW(ps) if impl == "fused" else torch.optim.AdamW(
            ps, foreach=(impl == "foreach"))
        opt.step()                                              # states exist

        def toy5(tr):
            for p in ps:
                tr.param_keys.add(tr.track(p, "param"))
                tr.track(p.grad, "temp")
            tr.grad_owners = ps
            for st in opt.state.values():
                for t in st.values():
                    tr.track(t, "optim")
            base = tr.total
            opt.step()
            assert base == 16 * sum(numel) + 4 * len(ps), base
            assert tr.peak - base == extra, (impl, tr.peak - base, extra)
        tr, (ap, an) = run(toy5)
        # every temporary lives between operations, so the allocator agrees but for the
        # Python scalars it wraps into 0-dim tensors inside an operation (8 + 4 bytes each);
        # the record_function handle is not made by the CPU allocator
        slack = ap - (tr.peak - 16 * sum(numel) - 4 * len(ps) - RECORD_FUNCTION)
        assert an == 0 and 0 <= slack <= 64, (impl, ap, an, slack)

    # 6. the loss's backward holds three n x V fp32 tensors at once, at the log-softmax's
    # backward (log-probabilities, the NLL's gradient, the result), with the logits z, the
    # targets and two 0-dim fp32 tensors (the loss, the seed; the NLL's total weight is gone)
    def toy6(tr):
        z = torch.randn(8, 50, requires_grad=True)
        t = torch.randint(50, (8,))
        loss = F.cross_entropy(z, t)
        loss.backward()
    tr, _ = run(toy6, logits_numel=400, vocab=50)
    assert tr.peak == 4 * 1600 + 64 + 8, tr.peak
    assert tr.peak_where[2] == "_log_softmax_backward_data", tr.peak_where
    assert tr.peak_snapshot["logits"] == 4 * 1600, tr.peak_snapshot  # z is logits-shaped too
    print("self test: the tracker is exact on the toys", flush=True)


# ---------------------------------------------------------------------------------------------
# The closed forms: every phase's peak predicted from the input columns (README, "Whole step")
#
# Notation: T = the number of parameter tensors, n_i their sizes in the order of
# model.parameters() (Psi = sum n_i); e = the bytes of a GEMM output (4 fp32, 2 autocast);
# sbh = s b h, as2b = a s^2 b. What the CPU run holds that a GPU run keeps in host memory (or
# that only the emulated fused AdamW has) is an "artefact": the checkpoints' CPU RNG states,
# AdamW's step counters (CPU tensors in 1.13 unless capturable), the record_function handle of
# Optimizer.step, the 0-dim double of the attention scale's backward, FusedAdamW's scratch.
# predict(c, exact=False) leaves the artefacts out: a device model.

RNG_STATE = 5056      # bytes of torch.get_rng_state() on the CPU (artefact)
SCALARS = 8           # the loss and the backward's seed gradient, fp32 0-dim


def param_sizes(c):
    L, h, V, s = c["layers"], c["hidden"], c["vocab"], c["seq"]
    n = [V * h] + ([s * h] if c["positions"] == "learned" else [])
    for _ in range(L):   # ln1 w b, ln2 w b, qkv w b, proj w b, fc1 w b, fc2 w b
        n += [h, h, h, h, 3 * h * h, 3 * h, h * h, h, 4 * h * h, 4 * h, 4 * h * h, h]
    return n + [h, h] + ([] if c["tied"] else [V * h])


def layer_activations(c):
    """A: what one layer keeps for backward (bytes), with the norms' per-row statistics."""
    s, b, h, a = c["seq"], c["micro_batch"], c["hidden"], c["heads"]
    sbh, as2b = s * b * h, a * s * s * b
    if c["precision"] == "autocast":     # bf16 GEMMs, fp32 residual stream (LayerNorm inputs)
        A = 38 * sbh + 5 * as2b if c["dropout"] else 36 * sbh + 2 * as2b
    else:                                # fp32: every bf16 tensor doubles, masks stay 1 byte
        A = 66 * sbh + 9 * as2b if c["dropout"] else 64 * sbh + 4 * as2b
    return A + 16 * s * b                # mean and rstd of two LayerNorms, fp32


def layer_backward(sbh, sb, as2b, h, e, ac, drop, pers, rc, exact=True):
    """The live bytes through one layer's backward, relative to the moment it starts (its
    activations, its autocast weight copies and the incoming gradient 4 sbh alive), at the
    operations where they can peak: [(name, bytes)]. Every step is an allocation or a free of
    the operation named in the comment (PyTorch 1.13; the same kernels on a GPU)."""
    run, marks = 0, []

    def add(x):
        nonlocal run
        run += x

    def mark(name):
        marks.append((name, run))

    def branch_in():     # the gradient entering a bf16 branch of a residual add, and its dropout
        if ac:
            add(2 * sbh)                                    # cast to bf16
        if drop:
            add(e * sbh - sbh)                              # dropout backward; its mask freed
            if ac:
                add(-2 * sbh)
            return e * sbh
        return 2 * sbh if ac else 0

    def weight_grad_done(w, bias, ce):                      # w, bias: element counts
        if ac:                                              # bf16 grads cast to fp32
            add(4 * w)
            mark(ce)
            add(-2 * w + 4 * bias - 2 * bias)
        if pers:                                            # added into .grad, then freed
            add(-4 * w - 4 * bias)

    # MLP: fc2, GeLU, fc1, LayerNorm 2
    g = branch_in()
    add(4 * e * sbh + 4 * e * h * h + e * h)                # fc2: grad input, weight, bias
    mark("fc2")
    add(-4 * e * sbh - (8 * h * h if ac else 0) - g)        # GeLU output, fc2 copy, grad in
    weight_grad_done(4 * h * h, h, "fc2_cast")
    add(4 * e * sbh)                                        # GeLU backward
    mark("gelu")
    add(-8 * e * sbh)                                       # fc1 output, fc2 grad input
    add(e * sbh + 4 * e * h * h + 4 * e * h)                # fc1: grad input, weight, bias
    mark("fc1")
    add(-e * sbh - (8 * h * h if ac else 0) - 4 * e * sbh)  # LN2 output, fc1 copy, GeLU grad
    if ac:
        add(4 * sbh - 2 * sbh)                              # grad of the LN2 output to fp32
    weight_grad_done(4 * h * h, 4 * h, "fc1_cast")
    add(4 * sbh + 8 * h)                                    # LN2 backward
    mark("ln2")
    add(-4 * sbh - 8 * sb - 4 * sbh)                        # LN2 input, stats, grad of output
    if pers:
        add(-8 * h)
    add(4 * sbh)                                            # residual: gradient of x_mid
    mark("res2")
    add(-4 * sbh * (1 if rc else 2))                        # LN2 grad; incoming grad (not rc)
    # attention: projection, core, q k v, LayerNorm 1
    g = branch_in()
    add(e * sbh + e * h * h + e * h)                        # proj: grad input, weight, bias
    mark("proj")
    add(-e * sbh - (2 * h * h if ac else 0) - g)            # proj input, its copy, grad in
    weight_grad_done(h * h, h, "proj_cast")
    add(e * sbh + e * as2b)                                 # bmm(probs, v): grads of v, probs
    mark("pv")
    add(-e * sbh - (e * as2b if drop else 0) - e * sbh)     # v, dropout output, grad of o
    if drop:
        add(e * as2b)                                       # dropout backward on the scores
        mark("core_dropout")
        add(-as2b - e * as2b)
    add(e * as2b)                                           # softmax backward
    mark("softmax")
    add(-2 * e * as2b)
    sc = 8 if exact else 0                                  # the scale as a 0-dim double
    add(sc + e * as2b)                                      # backward of the 1/sqrt(d) scale
    mark("scale")
    add(-e * as2b - sc)
    add(2 * e * sbh)                                        # bmm(q, k): grads of q, k
    mark("qk")
    add(-2 * e * sbh - e * as2b)                            # q, k, grad of the scores
    add(3 * e * sbh)                                        # cat: grad of the QKV output
    mark("cat")
    add(-3 * e * sbh)                                       # the three grads (copies)
    add(e * sbh + 3 * e * h * h + 3 * e * h)                # qkv: grad input, weight, bias
    mark("qkv")
    add(-e * sbh - (6 * h * h if ac else 0) - 3 * e * sbh)  # LN1 output, qkv copy, grad in
    if ac:
        add(2 * sbh)
    weight_grad_done(3 * h * h, 3 * h, "qkv_cast")
    add(4 * sbh + 8 * h)                                    # LN1 backward
    mark("ln1")
    return marks


def predict(c, exact=True):
    """{phase: (bytes, where)}: the peak of every phase of the step, each a maximum over the
    points listed in the README. exact=False leaves out the artefacts of the CPU run (a device
    model)."""
    L, h, a, V, s, b = (c[k] for k in ("layers", "hidden", "heads", "vocab", "seq", "micro_batch"))
    tied, pos, drop = c["tied"], c["positions"] == "learned", c["dropout"]
    ac, rc = c["precision"] == "autocast", c["recompute"] == "full"
    pers = c["grad_buffer"] == "persistent"
    e = 2 if ac else 4
    sb, sbh, sbV, as2b, Vh = s * b, s * b * h, s * b * V, a * s * s * b, V * h
    n = param_sizes(c)
    Psi = sum(n)
    W, G = 4 * Psi, 4 * Psi
    X = 1 if exact else 0
    M = 8 * Psi + 4 * len(n) * X                            # m, v; fp32 step counters
    Gs = G if pers else 0                                   # gradients alive at the start
    IN = 16 * sb                                            # token ids and targets, int64
    sc = SCALARS
    rng = L * RNG_STATE * X if rc else 0
    emb = 8 * s * pos + sbh * drop                          # position ids; embedding mask
    head = 4 * sbh + 8 * sb + e * sbh                       # final LN input, stats; head input
    A = layer_activations(c)
    ck = 4 * sbh                                            # a checkpoint: the fp32 residual
    Cp, Cb, Ch = (24 * h * h, 18 * h, 2 * Vh) if ac else (0, 0, 0)   # bf16 copies (bytes)
    acts = L * ck if rc else L * A
    out = {}

    # forward: its end, at the loss (fp32 logits and log-probabilities; under autocast the cache
    # still holds every bf16 weight and bias copy); with recomputation also inside the last
    # layer's no-grad forward (its RNG state not yet returned): at the attention dropout (old
    # scores, softmax, dropout output and mask; v) or at the GeLU (fc1 output, GeLU output;
    # the residual x_mid)
    f = [(W + M + Gs + IN + emb + head + acts + rng + L * (Cp + Cb) + Ch + 8 * sbV + sc,
          "loss forward: 8 sbV")]
    if rc:
        fl = W + M + Gs + IN + emb + L * ck + (L - 1) * RNG_STATE * X + (L - 1) * (Cp + Cb)
        core = (3 * e + 1) * as2b if drop else 2 * e * as2b
        f.append((fl + e * sbh + core + (6 * h * h + 6 * h if ac else 0),
                  "last layer's no-grad forward: attention core"))
        f.append((fl + 4 * sbh + 8 * e * sbh + (16 * h * h + 16 * h if ac else 0),
                  "last layer's no-grad forward: GeLU"))
    out["forward"] = max(f)

    # backward start: the loss's backward (log-probabilities, grad of the NLL, grad of the
    # log-softmax: 3 x 4 sbV), or the output layer's weight gradient
    base = W + M + Gs + IN + emb + head + acts + rng + (0 if rc else L * Cp) + Ch + sc
    b2 = 4 * sbV + 4 * sbh + 4 * Vh if not ac else 2 * sbh + 4 * Vh
    out["backward_start"] = max((base + 12 * sbV, "log_softmax backward: 12 sbV"),
                                (base + b2, "output layer weight gradient"))

    # the layers: layer i (done = L-1-i layers before it), at the best point of its backward
    marks = layer_backward(sbh, sb, as2b, h, e, ac, drop, pers, rc, exact)
    Gl = 4 * (12 * h * h + 13 * h)
    # gradients alive when the layers start: all (persistent; a tied embedding also holds the
    # output layer's partial gradient), or the final norm's and the output layer's (on demand;
    # tied: the partial gradient, the same 4 Vh)
    gh = (G + 4 * Vh * tied) if pers else (8 * h + 4 * Vh)
    best = []
    for i in range(L):
        done = L - 1 - i
        g = gh + (0 if pers else done * Gl)
        if rc:   # checkpoints 0..i (x_i is the rebuilt layer's LN1 input), the rebuilt output
            s0 = W + M + IN + emb + rng + (i + 1) * ck + 2 * ck + sc + g + A - ck + Cp
        else:
            s0 = W + M + IN + emb + (i + 1) * (A + Cp) + ck + sc + g
        best += [(s0 + v, f"layer {i} {name}") for name, v in marks]
    out["recompute" if rc else "backward_layers"] = max(best)

    # backward end: the embedding's backward
    if tied:   # output layer's partial + embedding's gradient + their sum (+ .grad persistent)
        end = [(W + M + G + IN + (12 if pers else 8) * Vh + sc + rng, "tied: 2 partials + sum")]
    else:
        end = [(W + M + G + IN + 4 * sbh + 4 * Vh * pers + sc + rng, "embedding gradient")]
    if drop:   # the embedding dropout's backward: gradient in and out, 4 sbh each
        gE = G if pers else G - 4 * Vh - 4 * s * h * pos
        end.append((W + M + gE + IN + emb + 4 * Vh * tied + 8 * sbh + sc + rng,
                    "embedding dropout backward"))
    out["backward_end"] = max(end)

    # optimizer: all states + the implementation's temporaries (+ torch.optim's step handle)
    impl = c["optimizer_impl"]
    temp = {"fused": 4 * CHUNK * X, "foreach": 8 * Psi,
            "single": 4 * max(2 * x + (n[i - 1] if i else 0) for i, x in enumerate(n))}[impl]
    out["optimizer"] = (W + M + G + IN + temp + RECORD_FUNCTION * X + 4 + rng,
                        f"{impl} temporaries")
    return out


def row_config(r):
    c = {k: r[k] for k in INPUT_COLUMNS}
    for k in ("layers", "hidden", "heads", "vocab", "seq", "micro_batch", "tied", "dropout"):
        c[k] = int(c[k])
    return c


def check(path):
    """Every row's phase peaks against predict(): exact (0 on success, 1 on any difference).
    Then the device model (predict(c, exact=False)) at the peak: whether it names the measured
    phase, its worst gap to the measured peak, and to the measured peak less the RNG states."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    bad, n_cpu, same = 0, 0, 0
    worst, worst_norng, count = (0.0, ""), (0.0, ""), {}
    for r in rows:
        if r["device"] != "cpu":                            # UNTESTED (cuda): not predicted
            continue
        n_cpu += 1
        c = row_config(r)
        p, d = predict(c), predict(c, exact=False)
        for ph, (v, where) in p.items():
            m = int(r[ph + "_peak"])
            if m != v:
                bad += 1
                print(f"  MISMATCH {r['config']} {ph}: measured {m}, predicted {v} "
                      f"({m - v:+d}, {where})")
        top = max(p, key=lambda k: p[k][0])
        if top != r["peak_phase"] or p[top][0] != int(r["peak_bytes"]):
            bad += 1
            print(f"  MISMATCH {r['config']}: peak {r['peak_phase']} {r['peak_bytes']}, "
                  f"predicted {top} {p[top][0]}")
        count[r["peak_phase"]] = count.get(r["peak_phase"], 0) + 1
        dtop = max(d, key=lambda k: d[k][0])
        same += dtop == r["peak_phase"]
        peak = int(r["peak_bytes"])
        for w, m in ((0, peak), (1, peak - int(r["rng_states_bytes"]))):
            gap = (m - d[dtop][0]) / m
            if abs(gap) >= abs((worst, worst_norng)[w][0]):
                if w:
                    worst_norng = (gap, r["config"])
                else:
                    worst = (gap, r["config"])
    print(f"{path}: {n_cpu} rows; peaks at " +
          ", ".join(f"{k} {v}" for k, v in sorted(count.items())))
    if bad:
        print(f"{path}: {bad} phase peaks differ from the closed forms (README)", file=sys.stderr)
        return 1
    print("every phase peak = the closed forms of the README, to the byte")
    print(f"device model (no CPU artefacts): same phase in {same}/{n_cpu} rows; worst gap "
          f"{100 * worst[0]:+.3f}% of the peak ({worst[1]}), "
          f"{100 * worst_norng[0]:+.3f}% of the peak less its RNG states ({worst_norng[1]})")
    return 0


# ---------------------------------------------------------------------------------------------


def write_csv(path, rows):
    with open(path, "w", newline="") as out:
        w = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--only", default="", help="comma-separated config indices")
    ap.add_argument("--check", metavar="FIXTURE")
    args = ap.parse_args(argv[1:])
    if args.check:
        return check(args.check)
    if not args.out:
        ap.error("OUT.csv is required")
    self_test()
    want = {int(i) for i in args.only.split(",") if i}
    rows = []
    start = time.time()
    for i, c in enumerate(configs()):
        if want and i not in want:
            continue
        t0 = time.time()
        row = measure(c, args.device)
        rows.append(row)
        print(f"[{i}] {row['config']}: peak {row['peak_bytes']} at {row['peak_phase']}"
              f"/{row['peak_layer']}/{row['peak_op']}; alloc {row['alloc_peak_bytes']} "
              f"net {row['alloc_net_bytes']}/{row['tracker_net_bytes']} "
              f"({time.time() - t0:.1f} s)", flush=True)
    write_csv(args.out, rows)
    print(f"{len(rows)} rows in {time.time() - start:.0f} s -> {args.out}")
    return check(args.out)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
