#!/usr/bin/env bash
# `--torchtitan CONFIG.toml`: DDP, FSDP and HSDP configs are predicted (with their warnings on
# stderr), what ptsim cannot model is refused with the reason at FILE:LINE, malformed TOML
# names FILE:LINE.
set -u
. "$(dirname "$0")/common.bash" "$1"
data=${SRCDIR:-$(dirname "$0")/../..}/tests/data/torchtitan

check "DDP config predicts" run 0 predict --torchtitan "$data/llama3_8b_ddp.toml" --format json
check "its layout is the config's" grep -q '"dp": 8' "$tmp/out"
check "compile is warned at its line" grep -q 'llama3_8b_ddp.toml:43: \[compile\] enable' "$tmp/err"
check "  fused by torch.compile" grep -q '"layers": "torch-compile"' "$tmp/out"
check "flags still override the config" run 0 memory --torchtitan "$data/llama3_8b_ddp.toml" --gbs 64 --format json
check "gbs overridden" grep -q '"gbs": 64' "$tmp/out"
check "FSDP predicts" run 0 predict --torchtitan "$data/llama3_8b_fsdp.toml" --gpus 8 --format json
check "as FSDP2 over 8 ranks" grep -q '"sharding": "fsdp"' "$tmp/out"
check "as PyTorch's eager layers with per-op checkpointing" grep -q '"layers": "torch"' "$tmp/out"
check "  recompute selective-op" grep -q '"recompute": "selective-op"' "$tmp/out"
check "  FSDP's per-unit collectives, from the config" python3 - "$tmp/out" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["settings"]
assert s["dp_overlap"] == "per-unit" and s["overlap_source"] == "torchtitan", s
PY
check "its text says so" run 0 predict --torchtitan "$data/llama3_8b_fsdp.toml" --gpus 8
check "  layers" grep -q '^settings: flash attention, PyTorch layers (torchtitan.s modules, eager kernels)' "$tmp/out"
check "  overlap" grep -q "^overlap: FSDP's per-unit all-gathers (the next unit's prefetched) and reduce-scatters on their own stream.*(from the torchtitan config)" "$tmp/out"
check "  nothing claimed of Megatron's scripts" bash -c "! grep -q 'Megatron-LM.s example launch scripts' '$tmp/out'"
check "native selective-op needs PyTorch layers" run 2 memory --recompute selective-op
check "  and says which" grep -q 'needs --transformer-impl torch or torch-compile' "$tmp/err"
check "native selective-op with them" run 0 memory --recompute selective-op --transformer-impl torch
check "HSDP predicts" run 0 predict --torchtitan "$data/llama3_8b_hsdp_cp.toml"
check "its shard group and replicas" grep -q 'sharding: hsdp (torch; shard group 8 ranks x 2 replicas)' "$tmp/out"
printf '[model]\nflavor = "8B"\n[parallelism]\ndata_parallel_shard_degree = 1\ntensor_parallel_degree = 2\n' >"$tmp/tp.toml"
check "TP without FSDP is refused" run 2 predict --torchtitan "$tmp/tp.toml"
check "float32 training refused at its line" grep -q 'trains in float32' "$tmp/err"
check "the 405B Interleaved1F1B split (7, 8 x 14, 7) is predicted" run 0 predict --torchtitan "$data/llama3_405b_pp.toml" --gpus 512
check "shard -1 needs the world size" run 2 predict --torchtitan "$data/llama3_8b_fsdp.toml"
check "malformed TOML names file:line" run 2 memory --torchtitan "$data/bad_syntax.toml"
check "line 7" grep -q 'bad_syntax.toml:7: an unterminated string' "$tmp/err"
check "not with --megatron-args" run 2 memory --torchtitan "$data/llama3_8b_ddp.toml" --megatron-args "--tensor-model-parallel-size 2"
check "missing file" run 2 memory --torchtitan "$tmp/none.toml"
check "a Python-form launch predicts" run 0 predict --torchtitan "$data/run_llama3_8b.sh" --format json
check "  its override and torchrun's world size" grep -q '"tp": 2' "$tmp/out"
check "  its attention's document mask warned" grep -q 'run_llama3_8b.sh:5: \[model\] attention: .*block-causal' "$tmp/err"
printf 'torchrun --nproc_per_node 8 -m torchtitan.train --module llama3 --config llama3_8b --parallelism.tensor_paralel_degree 2\n' >"$tmp/typo.sh"
check "a misspelt override exits 2" run 2 predict --torchtitan "$tmp/typo.sh"
check "  with the closest option" grep -q 'typo.sh:1: --parallelism.tensor_paralel_degree: .*did you mean --parallelism.tensor_parallel_degree?' "$tmp/err"
check "a mixture of experts on one GPU predicts" run 0 predict --torchtitan "$data/qwen3_30b_a3b.toml" --gpus 1
check "FSDP2 with expert parallelism predicts" run 0 predict --torchtitan "$data/gpt_oss_20b.toml" --gpus 8
check "  uncalibrated, and says so" grep -q 'no published run measures PyTorch FSDP2 with experts' "$tmp/out" "$tmp/err"
[ "$fails" -eq 0 ]
