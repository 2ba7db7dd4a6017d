#!/usr/bin/env bash
# Sharded data parallelism on the command line: --sharding and its settings in predict,
# Megatron-LM's FSDP flags, the sweep's sharding dimension (with ep, split and merged), a
# mixture-of-experts model's experts, and one-line errors (exit 2).
set -u
. "$(dirname "$0")/common.bash" "$1"

check "fsdp predicts" run 0 predict --gpus 16 --gbs 64 --sharding fsdp
check "the layout says so" grep -q '^sharding: fsdp (megatron; shard group 16 ranks x 1 replicas)' "$tmp/out"
check "the memory table has the unsharded column" grep -q 'other  unshard  total' "$tmp/out"
check "hsdp shards inside a node by default" run 0 predict --gpus 16 --gbs 64 --sharding hsdp --fsdp-impl torch
check "8 ranks x 2 replicas" grep -q '^sharding: hsdp (torch; shard group 8 ranks x 2 replicas)' "$tmp/out"
check "json names the mode" run 0 predict --gpus 16 --gbs 64 --sharding zero2 --format json
check "zero2 in json" grep -q '"sharding": "zero2"' "$tmp/out"
check "dense keeps its table" run 0 predict --gpus 16 --gbs 64
check "no unsharded column" bash -c "! grep -q unshard '$tmp/out'"
check "unknown mode is bad input" run 2 predict --sharding zero3
check "naming the allowed words" one_line "ddp|zero1|zero2|fsdp|hsdp"
check "a shard size not dividing dp" run 2 predict --gpus 16 --sharding hsdp --hsdp-shard-size 3
check "names the flag" one_line "--hsdp-shard-size 3"
check "hsdp without replicas" run 2 predict --gpus 8 --sharding hsdp --hsdp-shard-size 8
check "says it is fsdp" one_line "that is --sharding fsdp"
check "two optimizer words" run 2 predict --sharding fsdp --no-distributed-optimizer
check "give at most one" one_line "give at most one"
check "torch has no ZeRO-2" run 2 predict --sharding zero2 --fsdp-impl torch
check "zb-h1 is refused with FSDP" run 2 predict --gpus 16 --pp 2 --schedule zb-h1 --sharding fsdp
check "bad reshard word" run 2 predict --sharding fsdp --reshard-after-forward sometimes
check "Megatron-FSDP predicts" run 0 predict --gpus 8 --megatron-args \
  "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 32 --bf16 --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads"
check "as ZeRO-2" grep -q '^sharding: zero2 (megatron' "$tmp/out"
check "sweep over modes" run 0 sweep --gpus 16 --gbs 64 --sharding zero1,fsdp,hsdp --recompute none --schedule 1f1b --format csv
check "every mode has rows" bash -c "for m in zero1 fsdp hsdp; do grep -q \",\$m,[0-9]*,[^,]*,[^,]*,[^,]*,[^,]*\$\" '$tmp/out' || exit 1; done"
check "the table shows the sharding column" run 0 sweep --gpus 16 --gbs 64 --sharding zero1,hsdp --hsdp-shard-size 4 --recompute none --schedule 1f1b --top 40
check "hsdp/4 rows" grep -q ' hsdp/4 ' "$tmp/out"
check "a shard size without hsdp" run 2 sweep --sharding zero1,fsdp --hsdp-shard-size 8
check "sweep sharding with the optimizer flag" run 2 sweep --sharding fsdp --no-distributed-optimizer

# Mixture-of-experts models: Megatron-FSDP and torch's FSDP2 (torchtitan's efsdp) shard the
# routed experts over the expert data-parallel group
moe=(--model mixtral-8x7b --gpus 64 --pp 2 --ep 8 --gbs 128 --seq 4096)
check "MoE fsdp predicts" run 0 predict "${moe[@]}" --sharding fsdp
check "the experts' shard group is edp (64 / (ep 8 x pp 2) = 4)" \
  grep -q "^sharding: fsdp (megatron; shard group 32 ranks x 1 replicas; the routed experts' 4 x 1)" "$tmp/out"
check "HSDP replicas not dividing edp" run 2 predict "${moe[@]}" --sharding hsdp --hsdp-shard-size 4
check "names the replicas and edp" one_line "(the HSDP replicas: dp x cp / --hsdp-shard-size) must divide the expert data-parallel size 4"
check "MoE with torch's FSDP2 predicts" run 0 predict "${moe[@]}" --sharding fsdp --fsdp-impl torch
check "torch's experts over edp too" \
  grep -q "^sharding: fsdp (torch; shard group 32 ranks x 1 replicas; the routed experts' 4 x 1)" "$tmp/out"
check "torch's FSDP2 with an etp torchtitan has no layout for" run 2 predict "${moe[@]}" --ep 1 \
  --tp 2 --etp 1 --sharding fsdp --fsdp-impl torch
check "names the etp" one_line "--etp 1 has no PyTorch FSDP2 layout"
check "torch's FSDP2 with experts swept" run 0 sweep --model mixtral-8x7b --gpus 32 --gbs 64 \
  --seq 4096 --ep 8 --sharding fsdp --fsdp-impl torch --recompute full --schedule 1f1b --mbs 1 \
  --csv "$tmp/torch.csv"
check "its fsdp rows with ep 8" grep -q ',8,[0-9],[0-9],[0-9.e-]*,fsdp,' "$tmp/torch.csv"
check "torch's FSDP2 swept at tp 2" run 0 sweep --model mixtral-8x7b --gpus 32 --gbs 64 \
  --seq 4096 --tp 2 --ep 2,4 --sharding fsdp --fsdp-impl torch --recompute full --schedule 1f1b \
  --mbs 1 --csv "$tmp/torch_tp2.csv"
check "its experts not tensor-parallel (etp 1: EP borrows from TP)" \
  grep -q ',4,1,[0-9]*,[0-9.e-]*,fsdp,' "$tmp/torch_tp2.csv"
check "no etp 2 with ep > 1" bash -c "! grep -q ',[24],2,[0-9]*,[0-9.e-]*,fsdp,' '$tmp/torch_tp2.csv'"
check "--use-torch-fsdp2 with expert parallelism" run 2 predict --gpus 8 --megatron-args \
  "--num-layers 4 --hidden-size 1024 --num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 32 --bf16 --num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 2 --use-torch-fsdp2 --untie-embeddings-and-output-weights --no-gradient-accumulation-fusion"
check "as Megatron-LM asserts" one_line "not supported with expert parallelism"
# both dimensions swept, the CSV's MoE then sharding columns, two shards merged == one run
sweep=(sweep --model mixtral-8x7b --gpus 32 --gbs 64 --seq 4096 --ep 4,8 --sharding zero1,fsdp
       --recompute full --schedule 1f1b --mbs 1)
check "sweep over ep and sharding" run 0 "${sweep[@]}" --csv "$tmp/one.csv"
check "csv ends ep,etp,edp,exposed_ep_s,sharding,shard_group,tokens_per_s_per_gpu,mfu_precision_peak,mfu_bf16_peak,pipeline_layout" \
  bash -c "head -1 '$tmp/one.csv' | grep -q ',runs_from,ep,etp,edp,exposed_ep_s,sharding,shard_group,tokens_per_s_per_gpu,mfu_precision_peak,mfu_bf16_peak,pipeline_layout\$'"
check "fsdp rows with ep 8" grep -q ',8,[0-9],[0-9],[0-9.e-]*,fsdp,[0-9]*,[^,]*,[^,]*,[^,]*,[^,]*$' "$tmp/one.csv"
for k in 1 2; do "$ptsim" "${sweep[@]}" --shard "$k/2" --csv "$tmp/part-$k.csv" >/dev/null; done
check "the shards merged" run 0 "${sweep[@]}" --merge "$tmp/part-2.csv" "$tmp/part-1.csv" \
  --csv "$tmp/merged.csv"
check "== one run (CSV bytes)" cmp -s "$tmp/one.csv" "$tmp/merged.csv"
[ "$fails" -eq 0 ]
