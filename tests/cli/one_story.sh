#!/usr/bin/env bash
# One story in every output: per-GPU units with the job's total beside them, MFU against the
# precision's peak (and the bf16 peak, named), predict's CSV with the step, a validate CSV
# (quoted cells) read by plot validation, titles never cut, a gbs column when gbs varies.
set -u
. "$(dirname "$0")/common.bash" "$1"

# Llama-2-7B on 4 H100s in fp8.  The profile's dense peaks: bf16 989 TFLOP/s, fp8 twice that
# (hw_profiles/h100-80g.ini), so MFU against the fp8 peak is half the bf16 one; tokens/s per GPU
# is the job's / 4.
args=(--model llama2-7b --gpus 4 --gbs 64 --seq 4096 --precision fp8)
"$ptsim" predict "${args[@]}" --format json >"$tmp/p.json"
"$ptsim" predict "${args[@]}" >"$tmp/p.txt"
"$ptsim" predict "${args[@]}" --format csv >"$tmp/p.csv"
if command -v python3 >/dev/null 2>&1; then
  check "json: per-GPU tokens/s and both MFUs" python3 - "$tmp/p.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t, hw = d["time"], d["config"]["hw"]
assert abs(t["tokens_per_s"] - 64 * 4096 / t["step_s"]) < 1e-6 * t["tokens_per_s"]
assert abs(t["tokens_per_s_per_gpu"] - t["tokens_per_s"] / 4) < 1e-9 * t["tokens_per_s"]
assert t["mfu_bf16_peak"] == t["mfu"] and t["precision_peak"] == "fp8"
ratio = hw["peak_bf16_flops_per_s"] / hw["peak_fp8_flops_per_s"]
assert abs(ratio - 0.5) < 1e-3, ratio
assert abs(t["mfu_precision_peak"] - t["mfu"] * ratio) < 1e-12
PY
  check "predict csv: the step on every stage row, as the JSON says" python3 - "$tmp/p.csv" "$tmp/p.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t = json.load(open(sys.argv[2]))["time"]
assert rows and all(abs(float(r["step_s"]) - t["step_s"]) < 1e-6 * t["step_s"] for r in rows)
assert all(abs(float(r["mfu_bf16_peak"]) - t["mfu"]) < 1e-6 for r in rows)
assert all(r["runs"] in ("0", "1") for r in rows)
PY
fi
check "text: tokens/s per GPU with the job's beside, MFU of the fp8 peak and of the bf16 peak" \
  grep -Eq '^step [0-9.]+ s: [0-9]+ tokens/s per GPU \([0-9]+ for the job.s 4 GPUs\), .* MFU [0-9.]+% of the fp8 peak \([0-9.]+% of the bf16 peak\)$' "$tmp/p.txt"
"$ptsim" sweep --precision fp8 --top 2 >"$tmp/s8.txt"
check "sweep, fp8: MFU and a named MFU@bf16 column" grep -q ' MFU MFU@bf16 ' "$tmp/s8.txt"

# validate --format csv quotes the cells that hold commas; plot validation reads it, marks
# every source differently, and cuts no title.
"$ptsim" validate --suite published --format csv >"$tmp/v.csv" 2>/dev/null
check "validate csv has quoted cells" grep -q '"' "$tmp/v.csv"
if command -v gnuplot >/dev/null 2>&1; then
  run 0 plot validation --from "$tmp/v.csv" --out "$tmp/v.png"
  check "plot validation reads validate's csv" test -s "$tmp/v.png"
  check "its title is not cut" bash -c "! grep -q '\.\.\.' '$tmp/v.gp'"
fi

# The figures use the runs verdict: a heatmap panel (cp) in which no layout runs is named in
# the title, not drawn; every panel drawn has a cell that runs; pareto colours by runs with
# the 80% rule as its dashed reference line.
"$ptsim" sweep --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --top 1 --csv "$tmp/h.csv" >/dev/null
if command -v gnuplot >/dev/null 2>&1; then
  run 0 plot heatmap --from "$tmp/h.csv" --out "$tmp/h.png"
  check "heatmap: every panel drawn has a layout that runs" awk -F'\t' '
    /^#/ || NF < 8 { next } { seen[$1] = 1; if ($8 == 1) runs[$1] = 1 }
    END { for (f in seen) if (!(f in runs)) exit 1; exit 0 }' "$tmp/h.tsv"
  check "heatmap: the panels left out are named" grep -q 'no layout runs (not drawn)' "$tmp/h.gp"
  run 0 plot pareto --from "$tmp/h.csv" --out "$tmp/p.png"
  check "pareto: coloured by runs, the 80% rule a reference line" \
    bash -c "grep -q \"title 'runs'\" '$tmp/p.gp' && grep -q '80%% rule' '$tmp/p.gp'"
fi

# Two gbs values: a gbs column, or two rows would differ in their step time only.
"$ptsim" sweep --gbs 128,256 --top 4 >"$tmp/g.txt"
check "sweep with two gbs: a gbs column" grep -q '   seq     gbs tp pp' "$tmp/g.txt"
"$ptsim" sweep --top 2 >"$tmp/g1.txt"
check "sweep with one gbs: none" bash -c "! grep -q '     gbs ' '$tmp/g1.txt'"

exit $((fails > 0))
