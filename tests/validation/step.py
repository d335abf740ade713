#!/usr/bin/python3
"""Measure what one whole training step of a GPT stack holds, operation by operation.

Usage: /usr/bin/python3 tests/validation/step.py OUT.csv [--device cpu|cuda] [--only I,J,...]
                        [--order index|spread] [--no-check]
       /usr/bin/python3 tests/validation/step.py --check FIXTURE.csv
       (`make validate`: tests/validation/step.csv; README.md, "Whole training step";
       on a GPU: tests/validation/step_device.sh)

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
bytes of each label at the peak, the peak of every phase, and the allocator's numbers. Rows are
written (and flushed) one at a time, so a run cut short keeps what it measured; a configuration
that raises is reported with its traceback and the run goes on (--only runs the given indices
in the given order; --order spread runs them interleaved over the variants, so that a run cut
short still covers precisions, gradient buffers and optimizers).

Cross-check: on the CPU the same step runs under torch.profiler with profile_memory=True, which
reports every allocation and free of the CPU allocator; its running sum gives the allocator's
peak (which also sees the scratch buffers an operation allocates and frees inside itself, and the
few storages made outside the dispatcher) and its net change, which must equal the tracker's.
With --device cuda the cross-check is the caching allocator's memory_stats() instead
(allocated_bytes: blocks rounded to 512 bytes; requested_bytes: the sizes asked for), and the
CSV has three more columns: requested_peak_bytes, tracker_rounded_peak_bytes (the tracker's
live sum with every storage rounded to the allocator's 512-byte blocks) and untracked_tensors.

Before measuring, the tracker is checked on toy programs whose answer is known to the byte
(self_test); on the CPU the script stops if one differs. After measuring, check() compares every
phase peak of every CPU row with the closed forms of predict() (the README's formulas) and fails
if one differs by a byte; device rows are reported against predict(c, exact=False,
device="cuda") (check_device: a report, failing only on a malformed row).

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

The --device cuda path is meant for PyTorch 2.x on a GPU; what differs from 1.13 is chosen by
feature, not by version: untyped_storage() where it exists, a storage weak reference of our own
where torch.multiprocessing.reductions has none, the profiler's DeviceType imported only by the
CPU path. On a GPU the toys are self_test_device() (they print what differs and go on). What
PyTorch 2.x on CUDA is expected to do differently (predict(device="cuda")): AdamW foreach keeps
one temporary per parameter (sqrt(v), then divided and eps added in place), the step counters
are host tensors (not counted), CUDA autocast runs softmax in fp32 (its "fp32 list"). Functions
and branches only the cuda path takes are marked "UNTESTED (cuda)" until a GPU run is recorded.
"""
import contextlib
import csv
import math
import signal
import sys
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F
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
DEVICE_COLUMNS = ["requested_peak_bytes", "tracker_rounded_peak_bytes", "untracked_tensors"]

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


# PyTorch 1.13 and 2.x, told apart by feature: the storage of a tensor (the same UntypedStorage
# object either way; _cdata is the address of its StorageImpl) and a weak reference to it.
if hasattr(torch.Tensor, "untyped_storage"):
    def storage_of(t):
        return t.untyped_storage()
else:
    def storage_of(t):
        return t._storage()

try:
    from torch.multiprocessing.reductions import StorageWeakRef
except ImportError:                                 # insurance: every release so far has it
    class StorageWeakRef:
        """A weak reference to a storage, as torch.multiprocessing.reductions makes it."""

        def __init__(self, storage):
            self.cdata = storage._weak_ref()
            self._free, self._expired = type(storage)._free_weak_ref, type(storage)._expired

        def expired(self):
            return self._expired(self.cdata)

        def __del__(self):
            self._free(self.cdata)


# A context around the measured step on a device: nothing, unless backward_seen() finds that the
# tracker misses the backward (run by the autograd engine on the device's own thread, which gets
# the dispatch mode through ThreadLocalState): then the backward runs on the calling thread.
device_backward = contextlib.nullcontext


def backward_seen(device):                                  # UNTESTED (cuda)
    """Whether a dispatch mode sees the operations of a backward on the device."""
    x = torch.randn(4, 4, device=device, requires_grad=True)
    tr = Tracker(device=device)
    with tr:
        y = (x * x).sum()
        before = tr.ops
        y.backward()
    return tr.ops > before


def backward_on_caller():                                   # UNTESTED (cuda)
    return torch.autograd.set_multithreading_enabled(False)


def round_block(n):
    """The bytes the CUDA caching allocator gives a request of n bytes: 512-byte blocks."""
    return 0 if n == 0 else 512 * ((n + 511) // 512)


class Tracker(TorchDispatchMode):
    """Every live storage the step makes, with weak references swept before each operation.

    live: storage key (the StorageImpl address, stable while our weak reference exists) ->
    [weak reference, bytes, creation label, shape of the tensor that made it, (phase, layer,
    operation, dtype) at its creation]. The creation label is "param", "optim", "autocast",
    "rng", "input" or "temp"; saved (pack hook) and gradient (p.grad) are decided when a
    snapshot is taken. After every operation the live sum is compared with the running maximum
    of the current phase and of the whole step. With device="cuda", storages elsewhere (the
    CPU tensors of RNG states, step counters, the profiler handle) are not counted. The sum with
    every storage rounded to 512-byte blocks (total_r, its maximum peak_r) is kept beside: the
    caching allocator's view. A tensor whose storage cannot be had is counted in untracked."""

    def __init__(self, logits_numel=None, vocab=None, device=None):
        super().__init__()
        self.device = device
        self.live = {}
        self.total = 0
        self.total_r, self.peak_r, self.untracked = 0, 0, 0
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
        try:
            st = storage_of(t)
        except (RuntimeError, NotImplementedError):         # no storage: not counted
            self.untracked += 1
            return None
        key = st._cdata
        entry = self.live.get(key)
        n = st.nbytes()
        if entry is None:
            self.live[key] = [StorageWeakRef(st), n, label, tuple(t.shape),
                              (self.phase, self.layer, self.last_op, str(t.dtype))]
            self.total += n
            self.total_r += round_block(n)
        elif entry[1] != n:                 # resized in place
            self.total += n - entry[1]
            self.total_r += round_block(n) - round_block(entry[1])
            entry[1] = n
        return key

    def track_saved(self, t):
        key = self.track(t, "temp")
        if key is not None:
            self.saved.add(key)

    def sweep(self):
        dead = [k for k, e in self.live.items() if e[0].expired()]
        for k in dead:
            n = self.live.pop(k)[1]
            self.total -= n
            self.total_r -= round_block(n)
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
        if self.total_r > self.peak_r:
            self.peak_r = self.total_r
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
    try:                                            # the profiler's enum, only the CPU path needs
        from torch._C._autograd import DeviceType
    except ImportError:
        from torch.autograd import DeviceType
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
    start, start_r = tr.total, tr.total_r
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
        st0 = torch.cuda.memory_stats()
        base = st0.get("allocated_bytes.all.current", torch.cuda.memory_allocated())
        with tr, hooks, device_backward():
            train_step(model, opt, idx, tgt, c, device, tr)
        torch.cuda.synchronize()
        tr.sweep()
        stats = torch.cuda.memory_stats()
        # The caching allocator's peak of allocated (not reserved) bytes: blocks of 512 bytes,
        # and a cached block reused whole when splitting it would leave too little. base also
        # holds what the tracker does not know (cuBLAS workspaces made by the warm-up step).
        # requested_bytes (PyTorch >= 2.1) counts the sizes asked for, unrounded: beyond the
        # tracker it sees only the scratch an operation allocates and frees inside itself.
        alloc_peak = stats["allocated_bytes.all.peak"] - base + start
        alloc_net = stats.get("allocated_bytes.all.current", base) - base
        req = "requested_bytes.all."
        extra = {"requested_peak_bytes": (stats[req + "peak"] - st0[req + "current"] + start
                                          if req + "peak" in stats else ""),
                 "tracker_rounded_peak_bytes": tr.peak_r - start_r + start,
                 "untracked_tensors": tr.untracked}
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
    if device != "cpu":
        row.update(extra)
    return row


# ---------------------------------------------------------------------------------------------
# The toys: programs whose live bytes are known to the byte


def adamw_toy(impl, shapes, device):
    """Parameters of the given shapes with gradients, and an AdamW of implementation impl
    (foreach, single or fused) that has stepped once (its states exist): the self-tests' toy 5."""
    ps = [nn.Parameter(torch.randn(sh, device=device)) for sh in shapes]
    for p in ps:
        p.grad = torch.randn_like(p)
    opt = FusedAdamW(ps) if impl == "fused" else torch.optim.AdamW(
        ps, foreach=(impl == "foreach"))
    opt.step()                                                  # states exist
    return ps, opt


def track_adamw_toy(tr, ps, opt):
    """Labels adamw_toy's parameters, gradients and states in tracker tr; returns its total."""
    for p in ps:
        tr.param_keys.add(tr.track(p, "param"))
        tr.track(p.grad, "temp")
    tr.grad_owners = ps
    for st in opt.state.values():
        for t in st.values():
            tr.track(t, "optim")
    return tr.total


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
    # torch.optim.Optimizer's step() (FusedAdamW's too) opens a record_function, whose handle
    # is a 288-byte storage for the whole step (PyTorch 1.13); the single-tensor loop keeps the
    # previous parameter's denom while it computes sqrt(v) and sqrt(v) / bias of the next:
    # 4 max(n_prev + 2 n) bytes.
    single = 4 * max(2 * n + (numel[i - 1] if i else 0) for i, n in enumerate(numel))
    for impl, extra in (("foreach", 8 * sum(numel) + RECORD_FUNCTION),
                        ("single", single + RECORD_FUNCTION),
                        ("fused", 4 * CHUNK + RECORD_FUNCTION)):
        ps, opt = adamw_toy(impl, shapes, "cpu")

        def toy5(tr):
            base = track_adamw_toy(tr, ps, opt)
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


def self_test_device(device):
    """The toys on a GPU (UNTESTED (cuda)), with what does not depend on PyTorch 1.13 on the CPU:
    live bytes, a Linear's saved input, a saved output counted once, an autocast copy, AdamW's
    temporaries (PyTorch 2.x: one per parameter with foreach, step counters on the host), the
    loss's three n x V tensors, and CUDA autocast's fp32 softmax. A toy that differs is printed
    and the run goes on (a GPU run is too precious to stop); returns how many differ."""
    results = []

    def expect(name, got, want, note=""):
        results.append(got == want)
        if got != want:
            print(f"self test ({device}): toy {name} DIFFERS: got {got}, expected {want}"
                  + (f" ({note})" if note else ""), flush=True)

    def run(fn, **kw):
        tr = Tracker(device=device, **kw)
        with tr, torch.autograd.graph.saved_tensors_hooks(pack_hook(tr), lambda t: t):
            fn(tr)
        tr.sweep()
        return tr

    # 1. allocation, views, in-place, free; the allocator rounds each 4000 bytes to 4096
    def toy1():
        def fn(tr):
            a = torch.ones(1000, device=device)
            v = a.view(10, 100).t()
            a.add_(a)
            bb = a + a
            del bb, v, a
        gpu = device == "cuda"              # (device="cpu" runs the toys as a dry run)
        if gpu:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            m0 = torch.cuda.memory_allocated()
        tr = run(fn)
        expect("1 (peak, end)", (tr.peak, tr.total), (8000, 0))
        if gpu:
            torch.cuda.synchronize()
            expect("1 allocator (peak, end)", (torch.cuda.max_memory_allocated() - m0,
                                               torch.cuda.memory_allocated() - m0), (8192, 0),
                   "512-byte blocks")
        expect("1 rounded tracker peak", tr.peak_r, 8192)

    # 2. Linear forward + backward: saved = input only (weight is a parameter), labels right
    def toy2():
        lin = nn.Linear(64, 32).to(device)
        x = torch.randn(16, 64, device=device)

        def fn(tr):
            for p in lin.parameters():
                tr.param_keys.add(tr.track(p, "param"))
            tr.grad_owners = list(lin.parameters())
            tr.track(x, "input")
            y = lin(x)
            snap = tr.snapshot()
            expect("2 Linear (saved, params, temporaries)",
                   (snap["saved"], snap["params"], snap["temporaries"]),
                   (16 * 64 * 4, (64 * 32 + 32) * 4, 16 * 32 * 4))
            y.sum().backward()
            expect("2 Linear grads", tr.snapshot()["grads"], (64 * 32 + 32) * 4)
            lin.zero_grad(set_to_none=True)
        run(fn)

    # 3. exp saves its result: one storage, counted once although it is the output too
    def toy3():
        def fn(tr):
            xx = torch.randn(100, device=device, requires_grad=True)
            tr.track(xx, "input")
            y = xx.exp()
            expect("3 exp (saved, live)", (tr.snapshot()["saved"], tr.total), (400, 800))
            y.sum().backward()
            del y
            tr.sweep()
            expect("3 exp after backward (x and its gradient)", tr.total, 800)
        run(fn)

    # 4. autocast: the bf16 weight copy is labelled, the input cast is saved
    def toy4():
        lin2 = nn.Linear(64, 32, bias=False).to(device)

        def fn(tr):
            for p in lin2.parameters():
                tr.param_keys.add(tr.track(p, "param"))
            xx = torch.randn(16, 64, device=device)
            tr.track(xx, "input")
            with torch.autocast(device, dtype=torch.bfloat16):
                y = lin2(xx)
            snap = tr.snapshot()
            expect("4 autocast (copies, saved)", (snap["autocast_copies"], snap["saved"]),
                   (64 * 32 * 2, 16 * 64 * 2))
            del y
        run(fn)

    # 5. AdamW, three implementations, PyTorch 2.x: foreach keeps sqrt(v) per parameter and
    # divides and adds eps in place (1.13: a second list, 8 bytes per element); single as in
    # 1.13; FusedAdamW its scratch. Step counters are host tensors; no record_function storage.
    def toy5():
        shapes = [(300, 40), (50,), (120, 7)]
        numel = [math.prod(sh) for sh in shapes]
        single = 4 * max(2 * n + (numel[i - 1] if i else 0) for i, n in enumerate(numel))
        for impl, extra in (("foreach", 4 * sum(numel)), ("single", single),
                            ("fused", 4 * CHUNK)):
            ps, opt = adamw_toy(impl, shapes, device)

            def fn(tr):
                base = track_adamw_toy(tr, ps, opt)
                opt.step()
                expect(f"5 {impl} (states, temporaries)", (base, tr.peak - base),
                       (16 * sum(numel), extra),
                       "PyTorch 1.13 foreach: 8 bytes per element; step counters on the device"
                       " would add 4 bytes per parameter")
            run(fn)

    # 6. the loss's backward holds three n x V fp32 tensors at once, at the log-softmax's
    # backward, with the logits z, the targets and two 0-dim fp32 tensors (loss, seed)
    def toy6():
        def fn(tr):
            z = torch.randn(8, 50, device=device, requires_grad=True)
            t = torch.randint(50, (8,), device=device)
            F.cross_entropy(z, t).backward()
        tr = run(fn, logits_numel=400, vocab=50)
        expect("6 cross-entropy (peak, op, logits)",
               (tr.peak, tr.peak_where[2], tr.peak_snapshot["logits"]),
               (4 * 1600 + 64 + 8, "_log_softmax_backward_data", 4 * 1600))

    # 7. CUDA autocast keeps softmax in fp32 (its "fp32 list"; a bf16 input is copied to fp32
    # first): the attention core of a layer, bmm(dropout(softmax(scores)), v) on bf16 scores
    # (8 x 16 x 16, 4096 bytes) and v (1024): saved the fp32 probabilities (8192), the mask
    # (2048), their bf16 cast for bmm (4096) and v; forward peak at the bmm (the fp32 dropout
    # output and its cast alive), backward peak at the fp32 dropout backward. (CPU autocast in
    # 1.13 would save 2048 + 4096 + 4096 + 1024 = 11264.)
    def toy7():
        sc = torch.randn(8, 16, 16, device=device, dtype=torch.bfloat16, requires_grad=True)
        v = torch.randn(8, 16, 4, device=device, dtype=torch.bfloat16, requires_grad=True)
        g = torch.randn(8, 16, 4, device=device, dtype=torch.bfloat16)

        def fn(tr):
            for t in (sc, v, g):
                tr.track(t, "input")
            tr.set_phase("forward")
            with torch.autocast(device, dtype=torch.bfloat16):
                o = torch.bmm(torch.native_dropout(torch.softmax(sc, -1), 0.1, True)[0], v)
            tr.sweep()
            expect("7 fp32 softmax: saved after the forward", tr.snapshot()["saved"], 15360)
            tr.set_phase("backward")
            o.backward(g)
            del o
        tr = run(fn)
        expect("7 fp32 softmax: (forward peak, backward peak)",
               (tr.phase_peak.get("forward"), tr.phase_peak.get("backward")), (29696, 34816))

    for toy in (toy1, toy2, toy3, toy4, toy5, toy6, toy7):
        try:
            toy()
        except Exception:                                   # report, and go on
            results.append(False)
            print(f"self test ({device}): {toy.__name__} RAISED:", flush=True)
            traceback.print_exc(file=sys.stdout)
    bad = results.count(False)
    print(f"self test ({device}): {len(results) - bad} of {len(results)} checks as expected"
          + (f", {bad} DIFFER (printed above; the run goes on)" if bad else ""), flush=True)
    return bad


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


def layer_activations(c, device="cpu"):
    """A: what one layer keeps for backward (bytes), with the norms' per-row statistics."""
    s, b, h, a = c["seq"], c["micro_batch"], c["hidden"], c["heads"]
    sbh, as2b = s * b * h, a * s * s * b
    if c["precision"] == "autocast":     # bf16 GEMMs, fp32 residual stream (LayerNorm inputs)
        A = 38 * sbh + 5 * as2b if c["dropout"] else 36 * sbh + 2 * as2b
        if device == "cuda":             # UNTESTED (cuda): softmax in fp32 (CUDA autocast's
            # fp32 list): it keeps its fp32 output (4 as2b, not 2), the dropout runs in fp32 and
            # bmm(probs, v) keeps a bf16 cast of its input (2 as2b; with dropout it replaces the
            # bf16 dropout output, without it is new): + 2 as2b with dropout, + 4 as2b without
            A += 2 * as2b if c["dropout"] else 4 * as2b
    else:                                # fp32: every bf16 tensor doubles, masks stay 1 byte
        A = 66 * sbh + 9 * as2b if c["dropout"] else 64 * sbh + 4 * as2b
    return A + 16 * s * b                # mean and rstd of two LayerNorms, fp32


def layer_backward(sbh, sb, as2b, h, e, ac, drop, pers, rc, exact=True, fp32_softmax=False):
    """The live bytes through one layer's backward, relative to the moment it starts (its
    activations, its autocast weight copies and the incoming gradient 4 sbh alive), at the
    operations where they can peak: [(name, bytes)]. Every step is an allocation or a free of
    the operation named in the comment (PyTorch 1.13; the same kernels on a GPU).
    fp32_softmax: CUDA autocast's attention core (derived from the PyTorch sources, not yet
    measured): the probabilities' gradient cast to fp32, dropout and softmax backward in fp32,
    the scores' gradient cast back to bf16."""
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
    if fp32_softmax:                                        # UNTESTED (cuda), e = 2
        add(e * sbh + e * as2b)                             # bmm(probs, v): grads of v, probs
        mark("pv")
        add(-e * sbh - e * as2b - e * sbh)                  # v, the bf16 probs, grad of o
        add(4 * as2b)                                       # the probs' gradient to fp32
        mark("probs_cast")
        add(-e * as2b)
        if drop:
            add(4 * as2b)                                   # dropout backward, fp32
            mark("core_dropout")
            add(-as2b - 4 * as2b)
        add(4 * as2b)                                       # softmax backward, fp32
        mark("softmax")
        add(-8 * as2b)                                      # its fp32 output, grad in
        add(e * as2b)                                       # the scores' gradient to bf16
        mark("scores_cast")
        add(-4 * as2b)
    else:
        add(e * sbh + e * as2b)                             # bmm(probs, v): grads of v, probs
        mark("pv")
        add(-e * sbh - (e * as2b if drop else 0) - e * sbh)  # v, dropout output, grad of o
        if drop:
            add(e * as2b)                                   # dropout backward on the scores
            mark("core_dropout")
            add(-as2b - e * as2b)
        add(e * as2b)                                       # softmax backward
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


def predict(c, exact=True, device="cpu"):
    """{phase: (bytes, where)}: the peak of every phase of the step, each a maximum over the
    points listed in the README. exact=False leaves out the artefacts of the CPU run (a device
    model). device="cuda" (implies exact=False; UNTESTED (cuda)) is the run of --device cuda
    under PyTorch 2.x: AdamW foreach keeps one fp32 temporary per parameter (4 Psi), FusedAdamW's
    scratch is on the device, and under autocast softmax runs in fp32 (layer_activations,
    layer_backward's fp32_softmax and the no-grad forward's attention core below: derived from
    the PyTorch sources, marked "derived" in where, not yet measured)."""
    L, h, a, V, s, b = (c[k] for k in ("layers", "hidden", "heads", "vocab", "seq", "micro_batch"))
    tied, pos, drop = c["tied"], c["positions"] == "learned", c["dropout"]
    ac, rc = c["precision"] == "autocast", c["recompute"] == "full"
    pers = c["grad_buffer"] == "persistent"
    e = 2 if ac else 4
    sb, sbh, sbV, as2b, Vh = s * b, s * b * h, s * b * V, a * s * s * b, V * h
    n = param_sizes(c)
    Psi = sum(n)
    W, G = 4 * Psi, 4 * Psi
    cuda = device == "cuda"
    X = 1 if exact and not cuda else 0
    f32sm = ac and cuda                                     # CUDA autocast: fp32 softmax
    derived = " (cuda autocast: derived)" if f32sm else ""
    M = 8 * Psi + 4 * len(n) * X                            # m, v; fp32 step counters
    Gs = G if pers else 0                                   # gradients alive at the start
    IN = 16 * sb                                            # token ids and targets, int64
    sc = SCALARS
    rng = L * RNG_STATE * X if rc else 0
    emb = 8 * s * pos + sbh * drop                          # position ids; embedding mask
    head = 4 * sbh + 8 * sb + e * sbh                       # final LN input, stats; head input
    A = layer_activations(c, device)
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
        if f32sm:   # the bf16 scores, their fp32 copy and the fp32 softmax at _softmax (10 as2b);
            # at the dropout the copy is gone: scores, softmax, fp32 output and mask (11 as2b)
            core = 11 * as2b if drop else 10 * as2b
        f.append((fl + e * sbh + core + (6 * h * h + 6 * h if ac else 0),
                  "last layer's no-grad forward: attention core" + derived))
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
    marks = layer_backward(sbh, sb, as2b, h, e, ac, drop, pers, rc, X == 1, f32sm)
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
        best += [(s0 + v, f"layer {i} {name}{derived}") for name, v in marks]
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
    # (PyTorch 2.x's foreach: one list, sqrt(v) divided and eps added in place; the emulated
    # fused step's scratch is on the device in a cuda run, an artefact of the emulation still)
    temp = {"fused": 4 * CHUNK * (1 if X or cuda else 0), "foreach": (4 if cuda else 8) * Psi,
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
    """The CPU rows by check_cpu (the test), the others by check_device (a report); 1 on a CPU
    row that differs from the closed forms or a device row that is malformed, else 0."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    cpu = [r for r in rows if r.get("device") == "cpu"]
    other = [r for r in rows if r.get("device") != "cpu"]
    status = check_cpu(path, cpu) if cpu or not other else 0
    if other:
        status = max(status, check_device(path, other))
    return status


def check_cpu(path, rows):
    """Every row's phase peaks against predict(): exact (0 on success, 1 on any difference).
    Then the device model (predict(c, exact=False)) at the peak: whether it names the measured
    phase, its worst gap to the measured peak, and to the measured peak less the RNG states."""
    bad, n_cpu, same = 0, 0, 0
    worst, worst_norng, count = (0.0, ""), (0.0, ""), {}
    for r in rows:
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


INT_COLUMNS = (["peak_bytes", "peak_layer"] + [l + "_bytes" for l in LABELS]
               + [p + "_peak" for p in PHASES]
               + ["start_bytes", "tracker_net_bytes", "alloc_peak_bytes", "alloc_net_bytes"])


def row_problems(r):
    """What makes a measured row unusable: missing or unparsable columns, inputs outside the
    grid, a peak that is not the sum of its labels or not the largest phase peak."""
    missing = [k for k in COLUMNS if not r.get(k)]
    if missing:
        return ["missing " + ", ".join(missing)]
    try:
        c = row_config(r)
        v = {k: int(r[k]) for k in INT_COLUMNS}
    except ValueError as ex:
        return [f"not a number: {ex}"]
    out = []
    if c not in list(configs()):
        out.append("inputs outside the grid of configs()")
    if r["peak_phase"] not in PHASES:
        out.append(f"peak_phase {r['peak_phase']!r}")
    if sum(v[l + "_bytes"] for l in LABELS) != v["peak_bytes"]:
        out.append("the labels do not sum to peak_bytes")
    if max(v[p + "_peak"] for p in PHASES) != v["peak_bytes"]:
        out.append("peak_bytes is not the largest phase peak")
    return out


def check_device(path, rows):                               # UNTESTED (cuda)
    """A report on device rows: every phase measured against the device model predict(c,
    exact=False, device="cuda"), with the gap in bytes and % of the prediction; the peak phase
    measured and predicted; the allocator's peak (allocated_bytes, 512-byte blocks) and the
    requested bytes against the tracker's peak. Summaries: the worst gap per precision and the
    phases that agree to the byte. Differences do not fail; 1 if a row is malformed, else 0."""
    bad, same = 0, 0
    worst = {}              # precision -> (|%|, gap, %, config, phase)
    worst_peak = {}         # precision -> the same for the step's peak
    agree = {}              # (phase, precision) -> [rows to the byte, rows]
    alloc_gaps, req_gaps = [], []
    print(f"{path}: {len(rows)} device rows against predict(c, exact=False, device='cuda') "
          "(a report: gaps are measured - predicted; they do not fail the check)")
    print(f"    {'phase':16s} {'measured':>11s} {'predicted':>11s} {'gap':>10s} {'gap %':>9s}  "
          "where (the predicted point)")
    for r in rows:
        problems = row_problems(r)
        if problems:
            bad += 1
            print(f"  MALFORMED {r.get('config') or '?'}: " + "; ".join(problems))
            continue
        c = row_config(r)
        prec = c["precision"]
        d = predict(c, exact=False, device="cuda")
        peak = int(r["peak_bytes"])
        print(f"{r['config']} ({r['device']})")
        for ph in PHASES:
            m = int(r[ph + "_peak"])
            if ph not in d:
                if m:
                    print(f"    {ph:16s} {m:>11d} {'-':>11s}  (no prediction for this phase)")
                continue
            v, where = d[ph]
            gap = m - v
            pct = 100 * gap / v if v else 0.0
            print(f"    {ph:16s} {m:>11d} {v:>11d} {gap:>+10d} {pct:>+8.3f}%  {where}")
            a = agree.setdefault((ph, prec), [0, 0])
            a[0] += gap == 0
            a[1] += 1
            if abs(pct) >= worst.get(prec, (-1,))[0]:
                worst[prec] = (abs(pct), gap, pct, r["config"], ph)
        top = max(d, key=lambda k: d[k][0])
        same += top == r["peak_phase"]
        gap = peak - d[top][0]
        pct = 100 * gap / d[top][0]
        if abs(pct) >= worst_peak.get(prec, (-1,))[0]:
            worst_peak[prec] = (abs(pct), gap, pct, r["config"], top)
        print(f"    peak: measured {r['peak_phase']} {peak} (layer {r['peak_layer']}, after "
              f"{r['peak_op']}), predicted {top} {d[top][0]} ({gap:+d}, {pct:+.3f}%): "
              + ("same phase" if top == r["peak_phase"] else "ANOTHER PHASE"))
        ap = int(r["alloc_peak_bytes"])
        alloc_gaps.append((ap - peak, 100 * (ap - peak) / peak, r["config"]))
        line = (f"    allocator: allocated peak {ap} = tracker peak {ap - peak:+d} "
                f"({100 * (ap - peak) / peak:+.3f}%)")
        rq, rounded = r.get("requested_peak_bytes"), r.get("tracker_rounded_peak_bytes")
        if rq:
            req_gaps.append((int(rq) - peak, 100 * (int(rq) - peak) / peak, r["config"]))
            line += f"; requested peak {rq} = tracker {int(rq) - peak:+d}"
        if rounded:
            line += f"; tracker in 512-byte blocks {rounded} ({int(rounded) - peak:+d})"
        if r.get("untracked_tensors") not in (None, "", "0"):
            line += f"; {r['untracked_tensors']} tensors without a storage not counted"
        print(line + f"; net {r['alloc_net_bytes']} vs tracker {r['tracker_net_bytes']}")
    n = len(rows) - bad
    print(f"{path}: summary of {n} device rows" + (f" ({bad} MALFORMED)" if bad else ""))
    if n:
        print(f"  peak phase as predicted in {same}/{n} rows")
        for prec in PRECISIONS:
            if prec in worst:
                _, g, pc, cfg, ph = worst[prec]
                _, g2, pc2, cfg2, ph2 = worst_peak[prec]
                print(f"  {prec}: worst phase gap {g:+d} bytes ({pc:+.3f}%) at {ph} of {cfg}; "
                      f"worst peak gap {g2:+d} ({pc2:+.3f}%) at {ph2} of {cfg2}")
        print("  phases that agree to the byte (rows to the byte / rows): " + "; ".join(
            f"{ph} " + ", ".join(f"{prec} {agree[(ph, prec)][0]}/{agree[(ph, prec)][1]}"
                                 for prec in PRECISIONS if (ph, prec) in agree)
            for ph in PHASES if any((ph, prec) in agree for prec in PRECISIONS)))
        for name, gaps in (("allocated peak", alloc_gaps), ("requested peak", req_gaps)):
            if gaps:
                lo, hi = min(gaps), max(gaps)
                print(f"  {name} - tracker peak: {lo[0]:+d} ({lo[1]:+.3f}%, {lo[2]}) to "
                      f"{hi[0]:+d} ({hi[1]:+.3f}%, {hi[2]})")
    if bad:
        print(f"{path}: {bad} device rows are malformed", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------------------------------------


# The order of --order spread: within each round one variant (precision, gradient buffer,
# optimizer) over every shape; the first rounds cover fp32 and autocast, both gradient buffers
# and the three optimizers, so a run cut short still spans them.
SPREAD = [(0, 0, 0), (1, 1, 1), (0, 1, 2), (1, 0, 2), (0, 1, 0), (1, 0, 1),
          (0, 0, 2), (1, 1, 2), (0, 1, 1), (1, 0, 0), (0, 0, 1), (1, 1, 0)]


def spread(indices, all_configs):
    def key(i):
        c = all_configs[i]
        v = (PRECISIONS.index(c["precision"]), GRAD_BUFFERS.index(c["grad_buffer"]),
             OPTIMIZERS.index(c["optimizer_impl"]))
        return SPREAD.index(v), i
    return sorted(indices, key=key)


def on_signal(signum, frame):
    print(f"stopped by signal {signum}: the rows measured so far are in the CSV", flush=True)
    raise SystemExit(128 + signum)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--only", default="",
                    help="comma-separated config indices, run in the order given")
    ap.add_argument("--order", default="index", choices=["index", "spread"],
                    help="spread: interleaved over precision, gradient buffer and optimizer")
    ap.add_argument("--no-check", action="store_true", help="measure only")
    ap.add_argument("--check", metavar="FIXTURE")
    args = ap.parse_args(argv[1:])
    if args.check:
        return check(args.check)
    if not args.out:
        ap.error("OUT.csv is required")
    signal.signal(signal.SIGTERM, on_signal)
    if args.device == "cpu":
        self_test()
    else:
        global device_backward
        try:
            seen = backward_seen(args.device)
        except Exception:                                   # report, and measure as planned
            traceback.print_exc(file=sys.stdout)
            seen = True
        if seen:
            print("the tracker sees the backward on the device's autograd thread", flush=True)
        else:
            print("the tracker does not see the backward on the device's autograd thread: the "
                  "measured steps run it on the calling thread", flush=True)
            if hasattr(torch.autograd, "set_multithreading_enabled"):
                device_backward = backward_on_caller
        self_test_device(args.device)
    all_configs = list(configs())
    order = list(range(len(all_configs)))
    if args.only:
        order = list(dict.fromkeys(int(i) for i in args.only.split(",") if i))
        wrong = [i for i in order if not 0 <= i < len(all_configs)]
        if wrong:
            ap.error(f"--only: no configuration {wrong} (0..{len(all_configs) - 1})")
    if args.order == "spread":
        order = spread(order, all_configs)
    fields = COLUMNS + (DEVICE_COLUMNS if args.device != "cpu" else [])
    n, failed = 0, []
    start = time.time()
    with open(args.out, "w", newline="") as out:
        w = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        out.flush()
        for i in order:
            c = all_configs[i]
            t0 = time.time()
            try:
                row = measure(c, args.device)
            except Exception:                               # report it, go on with the next
                failed.append(i)
                print(f"[{i}] {config_name(c)}: FAILED after {time.time() - t0:.1f} s:",
                      flush=True)
                traceback.print_exc(file=sys.stdout)
                sys.stdout.flush()
                continue
            w.writerow(row)
            out.flush()
            n += 1
            more = ""
            if args.device != "cpu":
                more = (f" requested {row.get('requested_peak_bytes')} tracker in blocks "
                        f"{row.get('tracker_rounded_peak_bytes')}")
            print(f"[{i}] {row['config']}: peak {row['peak_bytes']} at {row['peak_phase']}"
                  f"/{row['peak_layer']}/{row['peak_op']}; alloc {row['alloc_peak_bytes']}"
                  f"{more} net {row['alloc_net_bytes']}/{row['tracker_net_bytes']} "
                  f"({time.time() - t0:.1f} s)", flush=True)
    print(f"{n} rows in {time.time() - start:.0f} s -> {args.out}"
          + (f"; {len(failed)} configurations FAILED: {failed}" if failed else ""), flush=True)
    status = 1 if failed else 0
    if args.no_check:
        return status
    return max(status, check(args.out))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
