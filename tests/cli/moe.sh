#!/usr/bin/env bash
# End-to-end checks of mixture-of-experts jobs: the experts line, the ep
# exposed-communication kind in text, JSON and the sweep's CSV, the
# expert-parallel rules as exit 2 with one line naming the flag, and a
# Megatron-LM MoE command line equal to ptsim's flags.
set -u
. "$(dirname "$0")/common.bash" "$1"
expect_exit() { # code, args...
  local want=$1; shift
  "$ptsim" "$@" >/dev/null 2>"$tmp/err"; local got=$?
  [ "$got" -eq "$want" ] || { echo "  exit $got, wanted $want for: $*" >&2; cat "$tmp/err" >&2; return 1; }
}
job="--model mixtral-8x7b --gpus 16 --pp 2 --ep 8 --gbs 64 --seq 4096"

"$ptsim" predict $job >"$tmp/p.txt" 2>&1
check "predict names the experts and where the ep group runs" \
  grep -q "^experts: 8 per MoE layer (32 of 32 layers), top-2, width 14336; ep 8 etp 1 edp 1 (1 local expert, the ep group inside one NVLink domain), alltoall dispatcher, grouped GEMM, dropless" "$tmp/p.txt"
check "predict text has the ep kind" grep -q "dp [0-9.]* s, ep [0-9.]* s$" "$tmp/p.txt"
"$ptsim" predict --format json $job >"$tmp/p.json"
check "json: time.exposed_comm_s.ep > 0, layout ep/etp/edp" python3 -c "
import json; d = json.load(open('$tmp/p.json'))
assert d['time']['exposed_comm_s']['ep'] > 0, d['time']['exposed_comm_s']
l = d['config']['layout']; assert (l['ep'], l['etp'], l['edp']) == (8, 1, 1), l
assert d['config']['model']['num_experts'] == 8"
check "--ep not dividing the experts" expect_exit 2 predict $job --ep 16 --gpus 32
check "the error names --ep" bash -c "'$ptsim' memory $job --ep 3 --gpus 48 2>&1 | grep -q -- '--ep 3 does not divide num_experts 8'"
check "--ep on a dense model" expect_exit 2 memory --model llama3-8b --ep 2
check "capacity factor must be > 0" expect_exit 2 memory $job --moe-expert-capacity-factor 0
check "bad dispatcher word" expect_exit 2 memory $job --moe-token-dispatcher-type ring

# a Megatron-LM MoE command line and ptsim's flags give one prediction
megatron="torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \
--ffn-hidden-size 14336 --num-attention-heads 32 --group-query-attention --num-query-groups 8 \
--seq-length 4096 --max-position-embeddings 32768 --micro-batch-size 1 --global-batch-size 64 \
--pipeline-model-parallel-size 2 --expert-model-parallel-size 8 --num-experts 8 --moe-router-topk 2 \
--moe-token-dispatcher-type alltoall --moe-grouped-gemm --swiglu --normalization RMSNorm \
--untie-embeddings-and-output-weights --disable-bias-linear --position-embedding-type rope \
--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --bf16 \
--attention-dropout 0 --hidden-dropout 0 --padded-vocab-size 32000"
"$ptsim" predict --format json --megatron-args "$megatron" >"$tmp/m.json" 2>/dev/null
check "Megatron-LM MoE line == ptsim flags (step and memory)" python3 -c "
import json; a = json.load(open('$tmp/m.json')); b = json.load(open('$tmp/p.json'))
assert a['time']['step_s'] == b['time']['step_s'], (a['time']['step_s'], b['time']['step_s'])
assert a['memory']['total_bytes'] == b['memory']['total_bytes']"

"$ptsim" sweep --model mixtral-8x7b --gpus 16 --gbs 64 --seq 4096 --mbs 1 --cp 1 --recompute none \
  --schedule 1f1b --ep 4,8 --csv "$tmp/s.csv" >"$tmp/s.txt" 2>&1
check "sweep table shows ep and etp" grep -q " ep etp tp pp" "$tmp/s.txt"
check "why the best wins names the all-to-all" grep -Eq "ep all-to-all [0-9.]+ at ep [48] \((inside an NVLink domain|across NVLink domains)\)" "$tmp/s.txt"
check "sweep CSV has ep, etp, edp, exposed_ep_s" python3 -c "
import csv; rows = list(csv.DictReader(open('$tmp/s.csv')))
assert rows and set(r['ep'] for r in rows) == {'4', '8'}, set(r['ep'] for r in rows)
assert all(float(r['exposed_ep_s']) > 0 for r in rows if r['status'] == '0')"
check "sweep --ep must be positive integers" expect_exit 2 sweep --model mixtral-8x7b --ep 0

# the settings line names every recompute module, the MoE and MLA ones too
"$ptsim" predict --model deepseek-v2-lite --gpus 8 --ep 8 --gbs 64 --seq 4096 --recompute selective \
  --recompute-modules mlp,moe_act,mla_up_proj >"$tmp/rm.txt" 2>&1
check "predict names the MoE recompute modules" grep -q "recompute modules mlp moe_act mla_up_proj" "$tmp/rm.txt"

# the expert load sampled per Monte-Carlo sample: percentiles for every layout
"$ptsim" sweep --model mixtral-8x7b --gpus 16 --gbs 64 --seq 4096 --mbs 1 --cp 1 --recompute none \
  --schedule 1f1b --ep 8 --samples 8 --csv "$tmp/mc.csv" >/dev/null 2>&1
check "Monte-Carlo sweep of an MoE model gives percentiles" python3 -c "
import csv; rows = [r for r in csv.DictReader(open('$tmp/mc.csv')) if r['status'] == '0']
assert rows and all(float(r['step_p50_s']) > 0 for r in rows)"

# the step's band is of dense runs, and predict says so
check "predict: the band's runs are dense" grep -q "a mixture-of-experts model: the band's runs are all dense" "$tmp/p.txt"

# the Perfetto trace: an EP track with the dispatch and combine, by the importer's rules
small="--model mixtral-8x7b --gpus 16 --pp 2 --ep 8 --gbs 16 --seq 4096"
"$ptsim" predict $small --trace "$tmp/t.json" --format json >"$tmp/tp.json"
check "trace: an EP track, its slices, Perfetto's rules" bash -c "
python3 '$(dirname "$0")/check_trace.py' '$tmp/t.json' '$tmp/tp.json' 1 >/dev/null &&
python3 -c \"
import json; ev = json.load(open('$tmp/t.json'))['traceEvents']
assert 'EP comm' in {e['args']['name'] for e in ev if e.get('ph') == 'M' and e['name'] == 'thread_name'}
assert {'EP exposed', 'EP dispatch + combine'} <= {e['name'] for e in ev if e.get('ph') == 'X'}\""

[ "$fails" -eq 0 ] || { echo "$fails cli checks failed"; exit 1; }
