#!/usr/bin/env bash
# End-to-end checks of what predict and sweep say about trust: the step-time
# band (validate/error_bands.ini), the first-step / steady-state memory, the
# `runs` verdict beside `fits`, and the sweep's ranking by it.
set -u
. "$(dirname "$0")/common.bash" "$1"

"$ptsim" predict --format json --model llama2-7b --hw h100-80g --gpus 4 --gbs 64 --seq 4096 \
  --precision fp8 >"$tmp/p.json"
"$ptsim" predict --model llama2-7b --hw h100-80g --gpus 4 --gbs 64 --seq 4096 \
  --precision fp8 >"$tmp/p.txt"
check "predict text gives the step with its band" grep -Eq '^[0-9.]+ s \+/- [0-9.]+% \(' "$tmp/p.txt"
check "predict text says which step holds the peak" grep -q "step 1 (steady state)" "$tmp/p.txt"
check "predict text gives the runs verdict" grep -Eq '^runs: (yes|no) ' "$tmp/p.txt"
if command -v python3 >/dev/null 2>&1; then
  check "json band: the fp8 band of h100, its file" python3 - "$tmp/p.json" <<'PY'
import configparser, json, os, sys
d = json.load(open(sys.argv[1]))
band = d["time"]["band"]
ini = configparser.ConfigParser()
ini.read(os.path.join(os.environ["PTSIM_DATA_DIR"], band["file"]))
assert band["found"] and band["group"] == "h100 fp8", band
assert abs(band["fraction"] - float(ini["h100 fp8"]["mean_abs_error"])) < 1e-12
step = d["time"]["step_s"]
assert abs(band["low_s"] - step * (1 - band["fraction"])) < 1e-9 * step
PY
  check "json allocator: both phases, where the peak is, runs" python3 - "$tmp/p.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["memory"]["allocator"]
for k in ("first_step", "steady_state"):
    assert a[k]["device_peak_bytes"] > 0, k
assert a["device_peak_bytes"] == max(a["first_step"]["device_peak_bytes"],
                                     a["steady_state"]["device_peak_bytes"])
assert a["peak_at"]["phase"] in ("first step", "steady state")
assert isinstance(a["runs"], bool) and a["runs_reserved_error_fraction"] == 0.05
assert a["runs_outside_error_bytes"] == 0.72 * 2 ** 30
assert a["runs_margin_bytes"] == a["runs_outside_error_bytes"] + 0.05 * a["reserved_peak_bytes"]
assert a["runs_fail_step"] in (-1, 0, 1) and (a["runs_fail_step"] == -1) == a["runs"], a
PY
  "$ptsim" predict --format json --no-allocator --model llama2-7b --hw h100-80g --gpus 4 --gbs 64 \
    --seq 4096 --precision fp8 >"$tmp/n.json"
  check "predict --no-allocator: the same step, no allocator" python3 - "$tmp/p.json" "$tmp/n.json" <<'PY'
import json, sys
p, n = (json.load(open(f)) for f in sys.argv[1:])
assert n["time"]["step_s"] == p["time"]["step_s"]
assert "allocator" not in n["memory"] and "allocator" in p["memory"]
PY
fi
"$ptsim" predict --no-allocator --memory-timeline "$tmp/m.tsv" >"$tmp/na.txt" 2>&1
check "--no-allocator with --memory-timeline is refused (exit 2), naming both" \
  bash -c "test $? -eq 2 && grep -q -- '--no-allocator: --memory-timeline needs the allocator emulation' '$tmp/na.txt'"

# The sweep: both verdicts on every row, the CSV keeps its columns and adds runs (and, after
# them, the expert-parallel columns).
"$ptsim" sweep --gpus 8 --mbs 1,2 --cp 1 --vp 2 --top 5 --csv "$tmp/s.csv" >"$tmp/s.txt"
check "sweep header counts the verdicts" grep -q "predicted to run" "$tmp/s.txt"
check "sweep table has both verdict columns" grep -q "80% rule  alloc GiB runs" "$tmp/s.txt"
check "sweep says tie or winner" grep -Eq "^a (tie, not a winner|winner)" "$tmp/s.txt"
check "sweep csv keeps its columns and adds runs" bash -c \
  "head -1 '$tmp/s.csv' | grep -q 'allocator_device_peak_bytes,allocator_oom,overlap_grad_reduce,overlap_param_gather,tp_comm_overlap,held_floor_bytes,runs,runs_from,ep,etp,edp,exposed_ep_s,sharding,shard_group,tokens_per_s_per_gpu,mfu_precision_peak,mfu_bf16_peak,pipeline_layout$'"
if command -v python3 >/dev/null 2>&1; then
  check "sweep csv: ranked by runs first, the top emulated" python3 - "$tmp/s.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cls = [0 if r["runs"] == "1" else 1 if r["runs"] == "-1" else 2 for r in rows if r["status"] == "0"]
assert cls == sorted(cls), "runs first"
for r in rows[:5]:
    assert r["runs_from"] == "allocator", r
PY
fi

# Llama-3-70B FP8 at tp 4 pp 8 vp 5, gbs 128 on 64 H100: Megatron-Bridge's H100 FP8 recipe
# layout, which runs.  With its flags (tensorwise fp8, fp8 parameter gather, bf16 gradient
# reduction, TP-communication overlap) and the fused SwiGLU's saved set it is predicted to run.
check "Llama-3-70B fp8 tp4 pp8 vp5 (NVIDIA's recipe) runs" bash -c "'$ptsim' predict \
  --model llama3-70b --hw h100-80g --gpus 64 --tp 4 --pp 8 --vp 5 --gbs 128 --seq 8192 \
  --precision fp8 --fp8-recipe tensorwise --fp8-param-gather --tp-comm-overlap \
  --no-fp32-grad-accumulation | grep -q '^runs: yes'"
exit $((fails > 0))
