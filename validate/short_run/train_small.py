#!/usr/bin/env python3
"""Trains a small Llama-architecture model for a few steps on one GPU and writes what
ptsim validate can check: step time (warm-up excluded), torch.cuda.max_memory_allocated /
max_memory_reserved, a memory snapshot, a row of a run CSV (validate/README.md format)
and a model .ini beside it so ptsim loads the same shape.

Plain torch, nothing downloaded: random tokens, RMSNorm, SwiGLU, RoPE, grouped-query
attention (torch.nn.functional.scaled_dot_product_attention, causal), untied LM head,
AdamW, bf16 autocast over fp32 weights (PyTorch's usual mixed-precision recipe).

  python3 train_small.py --mbs 4 --seq 2048 --hidden 1024 --layers 8 --heads 16 \
      --kv-heads 4 --ffn 2816 --vocab 32000 --steps 8 --out-dir results/

Outputs in --out-dir (NAME defaults from the shape):
  NAME.ini            ptsim model file
  runs.csv            one row appended per run (header written when new)
  NAME.json           the measurements, and the per-step times
  NAME.snapshot.pickle  torch.cuda.memory._dump_snapshot (open in pytorch.org/memory_viz)
Step time = median of the steps after the first --warmup (default 2). TFLOP/s per GPU
= Megatron-LM's model-FLOP formula (no recompute), as ptsim reports it.
An out-of-memory error is caught and recorded (oom = 1), not raised. Exit 2: bad
arguments or no GPU.
"""
import argparse, csv, json, math, os, statistics, sys, time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:  # the script must still compile (and say why) without torch
    torch = None


def args_parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, default in (("mbs", 4), ("seq", 2048), ("hidden", 1024), ("layers", 8),
                          ("heads", 16), ("kv-heads", 4), ("ffn", 2816), ("vocab", 32000),
                          ("steps", 8), ("warmup", 2), ("seed", 1234)):
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--name", default=None, help="run/model name (default from the shape)")
    ap.add_argument("--out-dir", default=".")
    ap.add_argument("--no-snapshot", action="store_true", help="skip the memory snapshot")
    return ap


if torch is not None:
    class RMSNorm(nn.Module):
        def __init__(self, dim, eps=1e-5):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(dim))

        def forward(self, x):  # (B,T,C)
            x32 = x.float()
            return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight

    def rope_tables(seq, head_dim, device, base=10000.0):
        inv = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))
        t = torch.arange(seq, device=device).float()
        freqs = torch.outer(t, inv)  # (T, D/2)
        return freqs.cos(), freqs.sin()

    def apply_rope(x, cos, sin):  # x (B,H,T,D)
        x1, x2 = x[..., 0::2], x[..., 1::2]
        c, s = cos[None, None].to(x.dtype), sin[None, None].to(x.dtype)
        out = torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1)
        return out.flatten(-2)

    class Attention(nn.Module):
        def __init__(self, h, heads, kv_heads):
            super().__init__()
            self.heads, self.kv_heads, self.head_dim = heads, kv_heads, h // heads
            self.qkv = nn.Linear(h, (heads + 2 * kv_heads) * self.head_dim, bias=False)
            self.proj = nn.Linear(h, h, bias=False)

        def forward(self, x, cos, sin):  # (B,T,C)
            B, T, _ = x.shape
            q, k, v = self.qkv(x).split(
                [self.heads * self.head_dim, self.kv_heads * self.head_dim,
                 self.kv_heads * self.head_dim], dim=-1)
            q = q.view(B, T, self.heads, self.head_dim).transpose(1, 2)
            k = k.view(B, T, self.kv_heads, self.head_dim).transpose(1, 2)
            v = v.view(B, T, self.kv_heads, self.head_dim).transpose(1, 2)
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
            rep = self.heads // self.kv_heads
            if rep > 1:  # GQA: each KV head serves `rep` query heads
                k = k.repeat_interleave(rep, dim=1)
                v = v.repeat_interleave(rep, dim=1)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.proj(y.transpose(1, 2).reshape(B, T, -1))

    class SwiGLU(nn.Module):
        def __init__(self, h, ffn):
            super().__init__()
            self.fc1 = nn.Linear(h, 2 * ffn, bias=False)  # gate and up, one GEMM
            self.fc2 = nn.Linear(ffn, h, bias=False)

        def forward(self, x):
            gate, up = self.fc1(x).chunk(2, dim=-1)
            return self.fc2(F.silu(gate) * up)

    class Block(nn.Module):
        def __init__(self, a):
            super().__init__()
            self.norm1, self.norm2 = RMSNorm(a.hidden), RMSNorm(a.hidden)
            self.attn = Attention(a.hidden, a.heads, a.kv_heads)
            self.mlp = SwiGLU(a.hidden, a.ffn)

        def forward(self, x, cos, sin):
            x = x + self.attn(self.norm1(x), cos, sin)
            return x + self.mlp(self.norm2(x))

    class Llama(nn.Module):
        def __init__(self, a):
            super().__init__()
            self.embed = nn.Embedding(a.vocab, a.hidden)
            self.blocks = nn.ModuleList(Block(a) for _ in range(a.layers))
            self.norm = RMSNorm(a.hidden)
            self.head = nn.Linear(a.hidden, a.vocab, bias=False)

        def forward(self, tokens, cos, sin):  # (B,T) -> (B,T,V)
            x = self.embed(tokens)
            for b in self.blocks:
                x = b(x, cos, sin)
            return self.head(self.norm(x))


def megatron_flops(a):
    """Megatron-LM's num_floating_point_operations for one step of one GPU (SwiGLU)."""
    B, s, l, h = a.mbs, a.seq, a.layers, a.hidden
    return 12.0 * B * s * l * h * h * ((1 + a.kv_heads / a.heads + s / h)
                                         + a.ffn / h * 1.5 + a.vocab / (2.0 * l * h))


def write_model_ini(path, name, a):
    with open(path, "w") as f:
        f.write("# %s: written by validate/short_run/train_small.py (the shape it trained)\n"
                "[model]\nname = %s\nnum_layers = %d\nhidden_size = %d\nffn_hidden_size = %d\n"
                "num_attention_heads = %d\nnum_query_groups = %d\nvocab_size = %d\n"
                "activation = swiglu\nnorm = rmsnorm\ntied_embeddings = false\nbias = false\n"
                % (name, name, a.layers, a.hidden, a.ffn, a.heads, a.kv_heads, a.vocab))


CSV_COLUMNS = ["model", "hw", "num_gpus", "tp", "pp", "dp", "cp", "mbs", "gbs", "seq_len",
               "recompute", "precision", "step_time_s", "tflops_per_gpu", "max_allocated_mb",
               "max_reserved_mb", "oom", "source"]


def append_csv(path, row):
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        if new:
            w.writeheader()
        w.writerow(row)


def main():
    a = args_parser().parse_args()
    for k in ("mbs", "seq", "hidden", "layers", "heads", "kv_heads", "ffn", "vocab", "steps"):
        if getattr(a, k) < 1:
            print("train_small.py: --%s must be >= 1" % k.replace("_", "-"), file=sys.stderr)
            return 2
    if a.hidden % a.heads or a.heads % a.kv_heads or (a.hidden // a.heads) % 2:
        print("train_small.py: need hidden %% heads == 0, heads %% kv-heads == 0, even head dim",
              file=sys.stderr)
        return 2
    if a.warmup >= a.steps:
        print("train_small.py: --steps must exceed --warmup (%d)" % a.warmup, file=sys.stderr)
        return 2
    if torch is None:
        print("train_small.py: PyTorch is not installed", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("train_small.py: no CUDA device available; run this on a GPU machine", file=sys.stderr)
        return 2
    name = a.name or "small-l%d-h%d-s%d-b%d" % (a.layers, a.hidden, a.seq, a.mbs)
    os.makedirs(a.out_dir, exist_ok=True)
    ini = os.path.join(a.out_dir, name + ".ini")
    write_model_ini(ini, name, a)

    torch.manual_seed(a.seed)
    dev = torch.device("cuda")
    snapshot = not a.no_snapshot and hasattr(torch.cuda.memory, "_record_memory_history")
    if snapshot:
        torch.cuda.memory._record_memory_history(max_entries=200000)
    torch.cuda.reset_peak_memory_stats()
    times, oom, err = [], 0, ""
    try:
        model = Llama(a).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=a.lr, fused=True)
        cos, sin = rope_tables(a.seq, a.hidden // a.heads, dev)
        for step in range(a.steps):
            tokens = torch.randint(0, a.vocab, (a.mbs, a.seq + 1), device=dev)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(tokens[:, :-1], cos, sin)
            loss = F.cross_entropy(logits.float().view(-1, a.vocab), tokens[:, 1:].reshape(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
            print("step %d: %.4f s, loss %.3f" % (step, times[-1], loss.item()), flush=True)
    except torch.cuda.OutOfMemoryError as e:
        oom, err = 1, str(e).split("\n")[0]
        print("train_small.py: out of memory: %s" % err, file=sys.stderr)
    alloc_mb = torch.cuda.max_memory_allocated() / 2**20
    reserved_mb = torch.cuda.max_memory_reserved() / 2**20
    snap_path = os.path.join(a.out_dir, name + ".snapshot.pickle")
    if snapshot:
        try:
            torch.cuda.memory._dump_snapshot(snap_path)
        except Exception as e:  # best effort: the numbers above are the measurement
            print("train_small.py: no snapshot: %s" % e, file=sys.stderr)
        torch.cuda.memory._record_memory_history(enabled=None)
    kept = times[a.warmup:]
    step_s = statistics.median(kept) if kept and not oom else float("nan")
    tflops = megatron_flops(a) / step_s / 1e12 if step_s == step_s else float("nan")
    gpu = torch.cuda.get_device_name(0)
    fmt = lambda v: "" if v != v else "%.6g" % v
    append_csv(os.path.join(a.out_dir, "runs.csv"), {
        "model": name + ".ini", "hw": gpu, "num_gpus": 1, "tp": 1, "pp": 1, "dp": 1, "cp": 1,
        "mbs": a.mbs, "gbs": a.mbs, "seq_len": a.seq, "recompute": "none", "precision": "bf16",
        "step_time_s": fmt(step_s), "tflops_per_gpu": fmt(tflops),
        "max_allocated_mb": "%.2f" % alloc_mb, "max_reserved_mb": "%.2f" % reserved_mb,
        "oom": oom, "source": "train_small.py torch %s" % torch.__version__})
    with open(os.path.join(a.out_dir, name + ".json"), "w") as f:
        json.dump({"name": name, "gpu": gpu, "torch": torch.__version__, "args": vars(a),
                   "step_times_s": times, "warmup_steps": a.warmup, "step_s": step_s,
                   "tflops_per_gpu": tflops, "max_allocated_mb": alloc_mb,
                   "max_reserved_mb": reserved_mb, "oom": bool(oom), "oom_message": err,
                   "snapshot": snap_path if snapshot else None}, f, indent=1, allow_nan=True)
    print("%s: step %.4f s, %.1f TFLOP/s, max allocated %.0f MB, max reserved %.0f MB%s"
          % (name, step_s, tflops, alloc_mb, reserved_mb, ", OOM" if oom else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
