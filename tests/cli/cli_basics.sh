#!/usr/bin/env bash
# End-to-end checks of the ptsim command: exit codes, error lines, JSON keys,
# and that the Megatron-LM path and the flags path describe the same job.
set -u
. "$(dirname "$0")/common.bash" "$1"
src=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
expect_exit() { # code, args...
  local want=$1; shift
  "$ptsim" "$@" >/dev/null 2>"$tmp/err"; local got=$?
  [ "$got" -eq "$want" ] || { echo "  exit $got, wanted $want for: $*" >&2; cat "$tmp/err" >&2; return 1; }
}

check "version runs" expect_exit 0 --version
check "version names the GPU path" bash -c "'$ptsim' --version | grep -q 'GPU path'"
check "help runs" expect_exit 0 --help
check "memory --help runs" expect_exit 0 memory --help
check "predict --help runs" expect_exit 0 predict --help
# the default job writes ptsim-out/ into the current folder: run it in $tmp
check "default job runs" bash -c "cd '$tmp' && '$ptsim' >'$tmp/default.out' 2>&1"
check "default job says where its figures are (or why not)" grep -Eq "figures (in|skipped)" "$tmp/default.out"
check "unknown command is bad input" expect_exit 2 frobnicate
check "unknown model is bad input" expect_exit 2 memory --model no-such-model
check "non-number tp is bad input" expect_exit 2 memory --tp x
check "zero tp is bad input" expect_exit 2 memory --tp 0
check "negative gbs is bad input" expect_exit 2 memory --gbs -4
check "tp not dividing heads" expect_exit 2 memory --tp 3
check "bad format" expect_exit 2 memory --format yaml
check "bad recompute word" expect_exit 2 memory --recompute some
check "threshold out of range" expect_exit 2 memory --memory-threshold 1.5
check "stray argument" expect_exit 2 memory extra
check "error names the flag" bash -c "'$ptsim' memory --tp 3 2>&1 >/dev/null | grep -q -- '--tp'"

"$ptsim" predict --format json --tp 2 --pp 2 --mbs 1 >"$tmp/p.json"
for key in config model hw layout memory parameters_bytes gradients_bytes optimizer_bytes \
    activations_bytes other_bytes total_bytes capacity_bytes usage_fraction fits peak_stage stages; do
  check "json has $key" grep -q "\"$key\"" "$tmp/p.json"
done
if command -v python3 >/dev/null 2>&1; then
  check "json parses" python3 -c "import json,sys; d=json.load(open('$tmp/p.json')); assert len(d['memory']['stages'])==2"
fi
check "csv has one row per stage" bash -c "[ \$('$ptsim' memory --format csv --pp 4 | wc -l) -eq 5 ]"
# --estimator fujii2024: the seed's closed form; the reference's worked example (Llama-3.1-8B,
# tp1 cp4 pp2 mbs1 seq 32768: stage 0 is 75.15 GiB); models it does not describe refused.
check "fujii2024 reproduces the worked example" bash -c "'$ptsim' memory --model llama3.1-8b \
  --gpus 8 --cp 4 --pp 2 --seq 32768 --gbs 16 --estimator fujii2024 | grep -q '^    0\*     16 .* 75.15 '"
check "fujii2024 refuses an MoE model (exit 2)" expect_exit 2 memory --model mixtral-8x7b --estimator fujii2024
check "  naming why" grep -q "mixture-of-experts layers" "$tmp/err"
check "--estimator other: exit 2" expect_exit 2 memory --estimator seed

# The Megatron-LM command line and the flags name the same job.
"$ptsim" memory --format json --model llama3-8b --tp 2 --pp 2 --mbs 2 --gbs 64 --seq 4096 \
  --recompute selective --gpus 16 >"$tmp/flags.json"
"$ptsim" memory --format json --gpus 16 --megatron-args "--num-layers 32 --hidden-size 4096 \
  --ffn-hidden-size 14336 --num-attention-heads 32 --group-query-attention --num-query-groups 8 \
  --seq-length 4096 --max-position-embeddings 8192 --micro-batch-size 2 --global-batch-size 64 \
  --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --sequence-parallel \
  --use-distributed-optimizer --recompute-activations --swiglu --untie-embeddings-and-output-weights \
  --padded-vocab-size 128256 --normalization RMSNorm --disable-bias-linear --bf16 --use-flash-attn \
  --attention-dropout 0 --hidden-dropout 0 --position-embedding-type rope" >"$tmp/megatron.json" 2>"$tmp/megatron.err"
check "megatron args path runs" test -s "$tmp/megatron.json"
if command -v python3 >/dev/null 2>&1; then
  check "megatron args == flags (memory)" python3 - "$tmp/flags.json" "$tmp/megatron.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["memory"]; b = json.load(open(sys.argv[2]))["memory"]
assert abs(a["total_bytes"] - b["total_bytes"]) <= 1e-9 * a["total_bytes"], (a["total_bytes"], b["total_bytes"])
assert [s["total_bytes"] for s in a["stages"]] == [s["total_bytes"] for s in b["stages"]]
PY
fi

# Megatron-LM command lines as users have them: launch scripts, the launcher's GPU count,
# warnings for what is not modelled, refusals for what is not modelled yet.
script="$src/tests/data/megatron_scripts/train_llama3_8b_h100_fp8.sh"
"$ptsim" predict --format json --megatron-args-file "$script" >"$tmp/ex.json" 2>"$tmp/ex.err"
check "Megatron-LM's example script predicts as it is" test -s "$tmp/ex.json"
check "its unmodelled flag is a warning with its direction" \
  grep -q "warning: not modelled, so the prediction may be off: --empty-unused-memory-level (slower" "$tmp/ex.err"
if command -v python3 >/dev/null 2>&1; then
  check "the example's settings: 8 GPUs from torchrun, fp8, overlap from the script" python3 - "$tmp/ex.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["layout"]["gpus"] == 8
assert d["config"]["layout"]["precision"] == "fp8"
s = d["settings"]
assert s["overlap_source"] == "megatron-args" and s["overlap_grad_reduce"] and not s["tp_comm_overlap"], s
assert s["fp8_param_gather"] and s["cross_entropy_fusion"] and s["manual_gc"] and not s["fp32_grad_accumulation"], s
PY
  check "the default states its overlap assumption" python3 -c "
import json, subprocess
d = json.loads(subprocess.run(['$ptsim', 'predict', '--format', 'json'], capture_output=True, text=True).stdout)
s = d['settings']
assert s['overlap_source'] == 'default' and s['overlap_grad_reduce'] and s['overlap_param_gather'] and not s['tp_comm_overlap'], s"
fi
check "predict text states the overlap assumption" bash -c "'$ptsim' predict | grep -q '^overlap: grad-reduce on, param-gather on, tp-comm off (ptsim.s default'"
check "latent MoE: not modelled yet (exit 2)" expect_exit 2 predict --gpus 8 --megatron-args \
  "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 64 --num-experts 8 --moe-latent-size 16"
check "no launcher and no --gpus: exit 2, never tp x pp x cp" expect_exit 2 predict --megatron-args \
  "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 64 --max-position-embeddings 64"
check "--precision fp8 on A100 is bad input" expect_exit 2 predict --hw a100-80g --precision fp8
check "a misspelt Megatron-LM flag: exit 2" expect_exit 2 predict --gpus 8 --megatron-args \
  "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 64 --tensor-model-paralel-size 2"
check "with the flag it meant" grep -q 'did you mean --tensor-model-parallel-size?' "$tmp/err"
check "a script's arguments and environment" expect_exit 0 predict --gpus 8 \
  --megatron-args-file "$src/tests/data/shell_scripts/positional.sh" \
  --script-args "/ckpt mistralai/Mixtral-8x7B-v0.1 /data" --env SLURM_NNODES=1
check "a Hugging Face config.json as the model" expect_exit 0 memory --gpus 8 \
  --hf-config "$src/tests/data/hf_configs/qwen3-8b/config.json"
check "--model and --hf-config: exit 2" expect_exit 2 memory --model llama3-8b \
  --hf-config "$src/tests/data/hf_configs/qwen3-8b/config.json"
check "sweep takes the job settings" expect_exit 0 sweep --gpus 8 --mbs 1 --cp 1 --recompute none \
  --precision fp8 --no-fp32-grad-accumulation --cross-entropy-loss-fusion --tp-comm-overlap --top 2

# predict: the time keys, and a Perfetto trace that parses.
"$ptsim" predict --format json --tp 2 --pp 2 --trace "$tmp/trace.json" >"$tmp/t.json"
for key in time step_s tokens_per_s tflops_per_gpu mfu bubble_fraction compute_s exposed_comm_s; do
  check "predict json has $key" grep -q "\"$key\"" "$tmp/t.json"
done
if command -v python3 >/dev/null 2>&1; then
  check "trace parses and has both stages" python3 -c "
import json; d = json.load(open('$tmp/trace.json'))
ev = [e for e in d['traceEvents'] if e['ph'] == 'X']
assert {e['pid'] for e in ev} == {0, 1} and all(e['dur'] >= 0 for e in ev)"
fi
for key in allocator allocated_peak_bytes reserved_peak_bytes fragmentation oom oom_at; do
  check "predict json has memory.allocator $key" grep -q "\"$key\"" "$tmp/t.json"
done
"$ptsim" predict --tp 2 --pp 2 --memory-timeline "$tmp/mem.tsv" >/dev/null
check "memory timeline has rows for both stages" bash -c "cut -f1 '$tmp/mem.tsv' | grep -v '^#' | sort -u | grep -c '^[01]$' | grep -q 2"
check "alloc-conf: unknown key" expect_exit 2 predict --alloc-conf expandable:True
check "alloc-conf: bad value" expect_exit 2 predict --alloc-conf max_split_size_mb:3
check "alloc-conf: expandable segments runs" expect_exit 0 predict --alloc-conf expandable_segments:True,max_split_size_mb:512
check "trace into a missing folder is bad input" expect_exit 2 predict --trace /nonexistent/dir/t.json
check "nothing half-written" test ! -e /nonexistent/dir/t.json.tmp

# sweep: runs, ranks, writes one CSV row per valid layout, refuses bad lists.
check "sweep --help runs" expect_exit 0 sweep --help
"$ptsim" sweep --gpus 8 --mbs 1,2 --recompute none --cp 1 --csv "$tmp/sweep.csv" >"$tmp/sweep.txt"
check "sweep prints a ranking" grep -q "rank model" "$tmp/sweep.txt"
valid=$(sed -n 's/.*: \([0-9]*\) valid layouts.*/\1/p' "$tmp/sweep.txt")
check "sweep csv has one row per valid layout" test "$(($(wc -l <"$tmp/sweep.csv") - 1))" -eq "$valid"
# A streamed sweep (bounded memory) ranks the same top rows and lists the same layouts.
"$ptsim" sweep --gpus 8,16 --mbs 1,2 --top 5 --csv "$tmp/mem.csv" | sed -n 1,9p >"$tmp/mem.txt"
"$ptsim" sweep --gpus 8,16 --mbs 1,2 --top 5 --in-memory-max 0 --csv "$tmp/str.csv" | sed -n 1,9p >"$tmp/str.txt"
check "streamed sweep: same ranked table" cmp -s "$tmp/mem.txt" "$tmp/str.txt"
check "streamed sweep: same layouts in the CSV" bash -c "cmp -s <(cut -d, -f2- '$tmp/mem.csv' | sort) <(cut -d, -f2- '$tmp/str.csv' | sort)"
check "streamed sweep: no temporary left" test ! -e "$tmp/str.csv.tmp"
if command -v gnuplot >/dev/null 2>&1; then
  check "a streamed CSV plots (rank 0)" "$ptsim" plot pareto --from "$tmp/str.csv" --gpus 16 --out "$tmp/str.png"
fi
"$ptsim" sweep --gpus 8 --mbs 1 --recompute none,full --allocator --csv "$tmp/alloc.csv" >/dev/null
check "sweep --allocator fills the allocator columns" bash -c "awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[\$i] = i; next } !c[\"allocator_oom\"] || !c[\"runs_from\"] || (\$c[\"allocator_oom\"] != 0 && \$c[\"allocator_oom\"] != 1) || \$c[\"runs_from\"] != \"allocator\" { bad = 1 } END { exit bad }' '$tmp/alloc.csv' && [ \$(wc -l <'$tmp/alloc.csv') -gt 1 ]"
check "sweep: bad list value" expect_exit 2 sweep --gpus 8,x
check "sweep: bad recompute word" expect_exit 2 sweep --recompute none,some
check "sweep: bad device" expect_exit 2 sweep --device tpu
check "sweep: unknown model" expect_exit 2 sweep --model nope

[ "$fails" -eq 0 ] && echo "all cli checks passed" || echo "$fails cli checks failed"
exit $((fails > 0))
