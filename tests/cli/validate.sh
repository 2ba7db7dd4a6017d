#!/usr/bin/env bash
# End-to-end checks of `ptsim validate`: the published suite, agreement with
# validate/calibrate_published.py, a real log fixture, a run CSV in the
# short-run harness's format, and malformed inputs (one line, exit 2).
set -u
. "$(dirname "$0")/common.bash" "$1"
src=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
# Exit code CODE, and exactly one line on stderr.
bad_input() { # args...
  "$ptsim" validate "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  [ "$got" -eq 2 ] || { echo "  exit $got, wanted 2 for: $*" >&2; cat "$tmp/err" >&2; return 1; }
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "  stderr is not one line:" >&2; cat "$tmp/err" >&2; return 1; }
}

check "validate --help runs" "$ptsim" validate --help
"$ptsim" validate --suite published >"$tmp/suite.txt" 2>"$tmp/suite.err"
check "suite published runs" test $? -eq 0
check "suite prints the step-time MAPE" grep -q "step-time MAPE [0-9.]*% over [0-9]* runs" "$tmp/suite.txt"
check "suite lists rows it cannot express" grep -q "V100" "$tmp/suite.txt"
check "suite prints the confusion matrix" grep -q "analytical usage > 0.70" "$tmp/suite.txt"
"$ptsim" validate --suite published --format csv >"$tmp/suite.csv"
check "csv: header + one line per published row (43 + 12)" test "$(wc -l <"$tmp/suite.csv")" -eq 56
"$ptsim" validate --suite published --format json >"$tmp/suite.json"

if command -v python3 >/dev/null 2>&1; then
  check "json parses, 43 runs (3 MoE, 3 of them lower bounds), 12 not expressible" python3 - "$tmp/suite.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["runs"]) == 43, len(d["runs"])
bounds = [r for r in d["runs"] if r.get("measured_bound") == "at_least_tflops"]
assert len(bounds) == 3 and all(r["source"] == "zhao2023_fsdp" for r in bounds)
assert d["statistics"]["step_s"]["n"] == 40  # bounds are listed, not in the statistics
assert sum(r["source"] == "moe_published" for r in d["runs"]) == 3
# the MoE rows' precision column reaches the command (DeepSeek-V3 in fp8, Mixtral in bf16)
moe = [r["command"] for r in d["runs"] if r["source"] == "moe_published"]
assert [c.count("--precision fp8") for c in moe] == [1, 1, 0], moe
assert "--precision bf16" in moe[2], moe[2]
assert len(d["not_expressible"]) == 12
for k in ("step_s", "tflops_per_gpu", "max_allocated_analytical", "max_allocated_allocator", "max_reserved"):
    assert k in d["statistics"], k
assert len(d["confusion"]["analytical"]) == 7
PY
  python3 "$src/validate/calibrate_published.py" --ptsim "$ptsim" --out "$tmp/cal.md" >"$tmp/cal.txt" 2>&1
  check "calibrate_published.py ran" grep -q "MAPE" "$tmp/cal.txt"
  # calibrate_published.py's in-sample line leaves the validation-only (MoE) rows and the
  # lower bounds (FSDP) out
  check "MAPE agrees with calibrate_published.py within 0.1 pp" python3 - "$tmp/cal.md" "$tmp/suite.json" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
runs = json.load(open(sys.argv[2]))["runs"]
bound = lambda r: "measured_bound" in r
for pattern, keep in ((r"Rows: (\d+), MAPE ([0-9.]+)%",
                       lambda r: r["source"] != "moe_published" and not bound(r)),
                      (r"moe_published: .*?: (\d+) rows, MAPE ([0-9.]+)%",
                       lambda r: r["source"] == "moe_published")):
    py = re.search(pattern, text)
    e = [abs(r["errors"]["step_s"]) for r in runs if keep(r)]
    ours = 100 * sum(e) / len(e)
    print("  calibrate_published.py: %s rows, %s%%; ptsim validate: %d rows, %.3f%%" % (py.group(1), py.group(2), len(e), ours))
    assert int(py.group(1)) == len(e)
    assert abs(float(py.group(2)) - ours) <= 0.1
PY
fi

# A real log excerpt without an arguments block: model and layout from flags.
log="$src/tests/data/megatron_logs/02_issue756_mixtral_2024.log"
"$ptsim" validate "$log" --hw h100-80g --model llama3-8b --gpus 16 --tp 2 --pp 2 --seq 4096 \
  --format csv >"$tmp/log.csv" 2>"$tmp/log.err"
check "log with --hw --model gives a row" test $? -eq 0
check "the log row is compared" grep -q ",megatron_log,.*,compared," "$tmp/log.csv"
check "the log's measured step (5.4 s) and max allocated are read" \
  grep -q ",compared,,megatron,5\.[0-9]*,.*,5688628[0-9]*," "$tmp/log.csv"
"$ptsim" validate "$log" --hw h100-80g >"$tmp/nomodel.txt" 2>&1
check "a log without arguments block or --model is listed, not dropped" \
  grep -q "no arguments block" "$tmp/nomodel.txt"
"$ptsim" validate "$src/tests/data/megatron_logs/args_llama3_8b_handmade.log" --hw h100-80g \
  --format csv >"$tmp/args.csv"
check "an arguments block gives the job" grep -q ",megatron_log,args_llama3_8b_handmade.log.*,compared," "$tmp/args.csv"

check "memory of [Rank 1] is compared with rank 1's pipeline stage (0 at tp 2 dp 4)" \
  grep -q "02_issue756_mixtral_2024.log (llama3-8b) stage 0 (rank 1)" "$tmp/log.csv"

# A real log with its arguments block (Megatron-LM#525: GPT-2 774M, fp16, one V100-32GB,
# transformer_impl local) that ran out of memory in step 0: from the log alone, the tokenizer
# gives the vocabulary, the local layers keep the s x s scores, the arguments date the
# release (its cross entropy's second fp32 copy, its K/V copies), and the verdict is OOM;
# "runs" fails at step 0, where the run died.
oom_log="$src/tests/data/megatron_logs/06_issue525_gpt2_774m_v100_oom.log"
"$ptsim" validate "$oom_log" --hw "$src/tests/data/hw_v100_32g_test.ini" --format json \
  >"$tmp/oom.json" 2>"$tmp/oom.err"
check "the 774M log needs no model flags" test $? -eq 0
"$ptsim" validate "$oom_log" --hw "$src/tests/data/hw_v100_32g_test.ini" --megatron-date current \
  --format json >"$tmp/oom_now.json" 2>&1
if command -v python3 >/dev/null 2>&1; then
  check "774M on V100: measured OOM, predicted OOM (allocator and estimate), runs fails at step 0" \
    python3 - "$tmp/oom.json" "$tmp/oom_now.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
p = r["predicted"]
assert r["measured"]["oom"] is True, r
assert p["allocator_oom"] is True and p["allocator_runs"] is False, r
assert p["runs_fail_step"] == 0, r
assert p["usage_fraction"] > 1.0, r
assert "Megatron-LM of 2023-07-24 to 2023-10-30" in r["assumed"], r
now = json.load(open(sys.argv[2]))["runs"][0]["predicted"]
# today's Megatron-LM subtracts the max in place and copies no K/V without GQA: less in step 0
gib = 2 ** 30
assert p["allocator_first_step_device_peak_bytes"] - now["allocator_first_step_device_peak_bytes"] > 1.0 * gib, (p, now)
PY
fi
"$ptsim" validate "$oom_log" --hw "$src/tests/data/hw_v100_32g_test.ini" --megatron-date 2023-9 \
  >"$tmp/baddate.txt" 2>&1
check "a malformed --megatron-date is refused, naming the flag, the value and what is allowed" \
  grep -q "megatron-date '2023-9': allowed values are a date YYYY-MM-DD or YYYY-MM" "$tmp/baddate.txt"
# --megatron-args supplements a log's arguments, job flags override them.
"$ptsim" validate "$src/tests/data/megatron_logs/args_llama3_8b_handmade.log" --hw h100-80g \
  --format json >"$tmp/a0.json"
"$ptsim" validate "$src/tests/data/megatron_logs/args_llama3_8b_handmade.log" --hw h100-80g \
  --megatron-args "--global-batch-size 256" --format json >"$tmp/a1.json"
"$ptsim" validate "$src/tests/data/megatron_logs/args_llama3_8b_handmade.log" --hw h100-80g \
  --gbs 256 --format json >"$tmp/a2.json"
if command -v python3 >/dev/null 2>&1; then
  check "--megatron-args and --gbs both double the log's batch: twice the step" python3 - "$tmp"/a0.json "$tmp"/a1.json "$tmp"/a2.json <<'PY'
import json, sys
s = [json.load(open(f))["runs"][0]["predicted"]["step_s"] for f in sys.argv[1:]]
assert s[1] == s[2], s
assert 1.9 < s[1] / s[0] < 2.1, s
PY
fi
printf -- '------------------------ arguments ------------------------\n  bf16 ........ True\n  hidden_size ........ 64\n  num_attention_heads ........ 4\n  num_layers ........ 2\n  tokenizer_type ........ NullTokenizer\n  world_size ........ 1\n-------------------- end of arguments ---------------------\n iteration 5/ 10 | elapsed time per iteration (ms): 10.0 |\n' >"$tmp/novocab.log"
"$ptsim" validate "$tmp/novocab.log" --hw h100-80g >"$tmp/novocab.txt" 2>&1
check "an unknown vocabulary says which options exist to give it" \
  grep -q "add --vocab-size N or --padded-vocab-size N to the Megatron-LM flags (validate: --megatron-args adds Megatron-LM flags to the log's)" "$tmp/novocab.txt"
"$ptsim" validate "$tmp/novocab.log" --hw h100-80g --megatron-args "--padded-vocab-size 1024 --seq-length 64" \
  --format csv >"$tmp/novocab.csv" 2>&1
check "--megatron-args gives the missing vocabulary" grep -q ",megatron_log,.*,compared," "$tmp/novocab.csv"

# A run CSV as validate/short_run/train_small.py writes it, model .ini beside it.
cat >"$tmp/small.ini" <<'INI'
[model]
name = small
num_layers = 4
hidden_size = 1024
ffn_hidden_size = 2816
num_attention_heads = 16
num_query_groups = 4
vocab_size = 32000
activation = swiglu
norm = rmsnorm
tied_embeddings = false
bias = false
INI
cat >"$tmp/runs.csv" <<'CSV'
model,hw,num_gpus,tp,pp,dp,cp,mbs,gbs,seq_len,recompute,precision,step_time_s,tflops_per_gpu,max_allocated_mb,max_reserved_mb,oom
small.ini,NVIDIA H100 80GB HBM3,1,1,1,1,1,4,4,2048,none,bf16,0.05,,3000,3500,0
small.ini,NVIDIA H100 80GB HBM3,1,1,1,1,1,64,64,8192,none,bf16,,,,,1
CSV
"$ptsim" validate "$tmp/runs.csv" --format json >"$tmp/runs.json"
check "run CSV with a model .ini beside it" test $? -eq 0
if command -v python3 >/dev/null 2>&1; then
  check "run CSV rows compared with OOM outcomes" python3 - "$tmp/runs.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["runs"]) == 2, d
assert d["confusion"]["outcomes"] == 2
r = d["runs"][0]
assert abs(r["measured"]["max_allocated_bytes"] - 3000 * 2**20) < 1
assert r["measured"]["oom"] is False and d["runs"][1]["measured"]["oom"] is True
PY
fi
"$ptsim" validate --emit-gemm-shapes "$tmp/gemm.txt" --model llama3-8b --tp 2 --seq 4096 --gbs 16
check "gemm shapes emitted" grep -q "^qkv_fwd 4096 3072 4096 " "$tmp/gemm.txt"

# Malformed inputs: one clear line, exit 2, never a crash.
check "missing file" bad_input "$tmp/no-such.log" --hw h100-80g
check "missing csv" bad_input "$tmp/no-such.csv"
printf 'model,num_gpus,tp,pp\nGPT,8,1,1\nGPT,8,1' >"$tmp/trunc.csv"
check "truncated csv" bad_input "$tmp/trunc.csv"
head -c 1024 /dev/zero >"$tmp/zeros.csv"
check "binary csv" bad_input "$tmp/zeros.csv"
awk 'BEGIN { srand(7); for (i = 0; i < 4096; i++) printf "%c", int(rand() * 256) }' >"$tmp/garbage.log"
check "binary garbage log" bad_input "$tmp/garbage.log" --hw h100-80g
: >"$tmp/empty.log"
check "empty log" bad_input "$tmp/empty.log" --hw h100-80g
check "log without --hw" bad_input "$log"
check "no inputs" bad_input
check "unknown suite" bad_input --suite nope
check "bad format" bad_input --suite published --format yaml

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all validate checks passed"
