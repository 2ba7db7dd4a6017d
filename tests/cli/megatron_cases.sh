#!/usr/bin/env bash
# End-to-end checks of `ptsim validate --megatron-cases`: the hand-made Megatron-LM tree
# (tests/data/megatron_fixture, its README has the numbers) in text, JSON and CSV, its
# held-out files never opened, ptsim's record of a case, the real cases of
# tests/data/megatron_cases, and bad inputs (one line on stderr, exit 2).
set -u
. "$(dirname "$0")/common.bash" "$1"
src=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
fixture=$src/tests/data/megatron_fixture
tree=$fixture/tests/functional_tests/test_cases

check "tree: text, exit 0" run 0 validate --megatron-cases "$tree"
check "tree: counts line" grep -q "5 cases (recipes: .*megatron_fixture/tests/test_utils/recipes): 3 rows compared, 0 refused, 2 cases out of scope, 1 unmeasured" "$tmp/out"
check "tree: out-of-scope reasons" grep -q "encoder model (BERT)" "$tmp/out"
check "tree: the median table" grep -q "^dgx_h100 gpt" "$tmp/out"
check "tree: the environment not modelled" grep -q "NCCL_ALGO=Tree" "$tmp/out"
check "tree: the held-out case is not listed" bash -c "! grep -q gb200 '$tmp/out'"
check "tree: json, exit 0" run 0 validate --megatron-cases "$tree" --format json
if command -v python3 >/dev/null 2>&1; then
  check "json: rows, statuses, numbers" python3 - "$tmp/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cases"] == 5 and d["counts"] == {"compared": 3, "refused": 0, "out_of_scope": 2,
                                           "unmeasured": 1, "predicted_not_to_run": 0}, d["counts"]
rows = {(r["case"], r["platform"]): r for r in d["rows"]}
h = rows[("tiny_tp2_pp2", "dgx_h100")]
assert h["measured"] == {"peak_allocated_bytes": 41000000, "steady_allocated_bytes": 20000000,
                         "iteration_time_s": 0.0115, "iteration_time_steps": 4}, h["measured"]
assert h["gpus"] == 4 and h["hw"] == "h100-80g" and h["stage"] == 1 and h["runs"] is True
assert ["--use-mcore-models", "true"] in h["model_args"] and ["--bf16", None] in h["model_args"]
assert "--empty-one" not in [f for f, _ in h["model_args"]]
assert rows[("tiny_tp2_pp2", "dgx_a100")]["environment"] == "lts"
n = rows[("tiny_no_recipe", "dgx_a100")]
assert n["gpus"] == 8 and "no recipe names the case" in n["assumed"], n
assert n["command"].endswith("--attention-backend unfused"), n["command"]
for q in ("peak_emulation", "peak_estimate", "steady_emulation", "steady_estimate", "iteration_time"):
    s = d["statistics"]["by_platform"]["dgx_h100"][q]
    e = h["errors"][q]
    assert s["n"] == 1 and abs(s["median_abs_error"] - abs(e)) < 1e-12, (q, s, e)
assert {r["reason"] for r in d["out_of_scope_reasons"]} == {"encoder model (BERT): not modelled", "inference"}
PY
fi
check "tree: csv, header + 6 rows" run 0 validate --megatron-cases "$tree" --format csv
check "csv: 7 lines" test "$(wc -l <"$tmp/out")" -eq 7
check "one case folder" run 0 validate --megatron-cases "$tree/gpt/tiny_tp2_pp2"
check "one case: its recipe found above it" grep -q "1 cases (recipes: .*recipes): 2 rows compared" "$tmp/out"
check "one case folder, trailing slash" run 0 validate --megatron-cases "$tree/gpt/tiny_tp2_pp2/" --format csv
check "trailing slash: the family is the parent" test "$(grep -c '^gpt,tiny_tp2_pp2,' "$tmp/out")" -eq 2
check "--recipes given" run 0 validate --megatron-cases "$tree/gpt/tiny_tp2_pp2" --recipes "$fixture/tests/test_utils/recipes"
check "a record" run 0 validate --megatron-cases "$fixture/records/gpt/tiny_tp2_pp2.ini"
check "record: the same numbers as the folder" bash -c "diff <('$ptsim' validate --megatron-cases '$tree/gpt/tiny_tp2_pp2' --format csv | cut -d, -f1-26) <('$ptsim' validate --megatron-cases '$fixture/records/gpt/tiny_tp2_pp2.ini' --format csv | cut -d, -f1-26)"
check "--hw overrides the platform's profile" run 0 validate --megatron-cases "$tree/gpt/tiny_tp2_pp2" --hw a100-40g --format csv
check "--hw: a100-40g in every row" test "$(grep -c ',a100-40g,' "$tmp/out")" -eq 2
check "--megatron-args adds flags" run 0 validate --megatron-cases "$tree/gpt/tiny_tp2_pp2" --megatron-args "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1" --format json
check "--megatron-args: in the command" grep -q "transformer_engine --recompute-granularity full" "$tmp/out"
check "the real cases: exit 0" run 0 validate --megatron-cases "$src/tests/data/megatron_cases/cases"
check "the real cases: 131 cases" grep -q "^ptsim validate --megatron-cases: 131 cases" "$tmp/out"

# bad inputs: one line, exit 2
check "missing path" run 2 validate --megatron-cases "$tmp/none"
check "missing path: one line" one_line "no such file"
check "held-out path refused" run 2 validate --megatron-cases "$tree/gpt/tiny_gb200_case"
check "held-out: one line" one_line "held out"
check "--recipes without --megatron-cases" run 2 validate --recipes "$tmp"
check "--recipes alone: one line" one_line "needs --megatron-cases"
check "with other inputs" run 2 validate --megatron-cases "$tree" "$src/tests/data/megatron_logs/args_llama3_8b_handmade.log"
check "other inputs: one line" one_line "give no other inputs"
mkdir -p "$tmp/t/gpt/broken"
printf 'MODEL_ARGS:\n  --num-layers: [1, 2\n' >"$tmp/t/gpt/broken/model_config.yaml"
check "malformed YAML" run 2 validate --megatron-cases "$tmp/t"
check "malformed YAML: FILE:LINE:COLUMN" one_line "model_config.yaml:[0-9]*:[0-9]*:"
rm -r "$tmp/t/gpt/broken"
mkdir -p "$tmp/t/bert/b"
printf 'MODEL_ARGS:\n  --num-layers: 2\n' >"$tmp/t/bert/b/model_config.yaml"
check "nothing comparable: exit 2" run 2 validate --megatron-cases "$tmp/t"
check "nothing comparable: one line" one_line "no case could be compared"
exit $((fails > 0))
