#!/usr/bin/env bash
# Issue 12's findings, one check each: crashes and overflows refused by name,
# sweeps and validations that did nothing exit 2, the output policy (no
# device or input replaced, links written through, write errors exit 1, a
# failed gnuplot leaves no figure), capped inputs, non-ASCII values, and the
# same bytes for any thread count.
set -u
. "$(dirname "$0")/common.bash" "$1"
src=$(cd "${SRCDIR:-$(dirname "$0")/../..}" && pwd)
# expect CODE NEEDLE args...: exit CODE and NEEDLE (fixed string) in stderr
expect() {
  local want=$1 needle=$2; shift 2
  "$ptsim" "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  [ "$got" -eq "$want" ] || { echo "  exit $got, wanted $want for: $*" >&2; cat "$tmp/err" >&2; return 1; }
  [ -z "$needle" ] || grep -qF -- "$needle" "$tmp/err" || { echo "  no '$needle' in:" >&2; cat "$tmp/err" >&2; return 1; }
}
cd "$tmp" || exit 1
small=(--mbs 1 --cp 1 --recompute none)

# ---- numbers: strict, with the flag, the value and the range ----
check "sweep --threads 2^31 is refused, not a segfault" \
  expect 2 "--threads '2147483648' is not allowed: expected an integer from 0 to 1024" sweep --threads 2147483648
for flag in --jitter --straggler-slowdown --memory-threshold --stragglers; do
  for v in nan inf; do
    check "sweep $flag $v refused" expect 2 "$flag '$v' is not allowed" sweep $flag $v
  done
done
# no sentinel values: -1 and nan were "not given" once, and ran with defaults
for flag in --gpus --nodes --tp --pp --cp --dp --vp --mbs --gbs --seq --recompute-num-layers \
    --num-distributed-optimizer-instances --decoder-first-pipeline-num-layers \
    --decoder-last-pipeline-num-layers --kv-channels --ep --etp --hsdp-shard-size; do
  check "memory $flag -1 refused with its range" \
    expect 2 "$flag '-1' is not allowed: expected an integer from 1 to" memory $flag -1
done
for flag in --memory-threshold --attention-dropout --hidden-dropout --moe-expert-capacity-factor; do
  check "predict $flag nan refused with its range" \
    expect 2 "$flag 'nan' is not allowed: expected a number in" predict $flag nan
done
check "--mtp-num-layers 65 is out of its range" \
  expect 2 "--mtp-num-layers '65' is not allowed: expected an integer from 0 to 64" \
  memory --mtp-num-layers 65
check "--megatron-date takes exactly YYYY-MM(-DD) digits" \
  expect 2 "--megatron-date '2024-+1-01': allowed values are a date YYYY-MM-DD" \
  memory --megatron-date 2024-+1-01
check "sweep --sharding lists refuse duplicates" \
  expect 2 "--sharding 'fsdp,zero2,fsdp': fsdp is given twice" sweep --sharding fsdp,zero2,fsdp
check "sweep --hsdp-shard-size lists are strict" \
  expect 2 "--hsdp-shard-size '4,0x8'" sweep --sharding hsdp --hsdp-shard-size 4,0x8
check "--sharding hsdp with tp x pp x cp past int64 is refused, not an overflow" \
  expect 2 "" memory --tp 1073741824 --pp 1073741824 --cp 1073741824 --sharding hsdp
check "--attention-dropout 1 is out of [0, 1)" \
  expect 2 "--attention-dropout '1' is not allowed: expected a number in [0, 1)" memory --attention-dropout 1
check "--trace-steps 1e3 is no integer" \
  expect 2 "--trace-steps '1e3' is not allowed: expected an integer from 1 to 1000" \
  predict --trace t.json --trace-steps 1e3
check "an empty --pipeline-model-parallel-layout is refused (it segfaulted)" \
  expect 2 "--pipeline-model-parallel-layout ',': an empty layout" memory --pipeline-model-parallel-layout ,
check "plot --window nan:1 refused" expect 2 "--window 'nan:1'" plot timeline --out w.png --window nan:1
check "Megatron --context-parallel-size 2^62 refused by name" \
  expect 2 "--context-parallel-size '4611686018427387904' is not allowed" \
  memory --megatron-args "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 --context-parallel-size 4611686018427387904"
check "Megatron --hidden-size 2^62 refused by name, not 'too small'" \
  expect 2 "--hidden-size '4611686018427387904' is not allowed" \
  memory --megatron-args "--num-layers 2 --hidden-size 4611686018427387904 --num-attention-heads 4 --vocab-size 100 --swiglu"
check "--nodes 2^62 is refused, not a wrapped dp 1" \
  expect 2 "--nodes '4611686018427387904' is not allowed: expected an integer from 1 to 4194304" \
  memory --nodes 4611686018427387904
check "--nodes x GPUs per node past the GPU bound names --nodes and its value" \
  expect 2 "--nodes 1000000: 1000000 x 8 GPUs per node" memory --nodes 1000000
sed 's/^peak_bf16_tflops.*/peak_bf16_tflops = 1e-300/' "$src/hw_profiles/h100-80g.ini" >tiny_peak.ini
check "peak_bf16_tflops = 1e-300 is out of the physical range" \
  expect 2 "peak_bf16_tflops = '1e-300' is not allowed: expected a number in [0.01, 1000000]" memory --hw tiny_peak.ini

# ---- work bounded before allocating ----
deep=(--pp 128 --gpus 128 --megatron-args "--num-layers 1073741824 --hidden-size 64 --num-attention-heads 1 --vocab-size 100 --seq-length 128 --micro-batch-size 1 --global-batch-size 128 --bf16")
# predict simulates the step first: its clock refuses the step (31 years)
check "2^30 layers over pp 128: predict is an error naming the cause, not an abort" \
  expect 2 "the step would last more than 1e9 s" predict "${deep[@]}"
check "2^30 layers over pp 128: the allocator emulation's scratch limit names the layers" \
  expect 2 "8388608 layers on the stage" plot memory --out deep.png "${deep[@]}"
printf '[model]\nnum_layers = 1048576\nhidden_size = 1048576\nffn_hidden_size = 1048576\nnum_attention_heads = 1048576\nnum_query_groups = 1048576\nvocab_size = 1048576\nactivation = swiglu\nnorm = rmsnorm\ntied_embeddings = false\nbias = false\n' >huge.ini
check "a model with every size 2^20: a scratch limit, not 166 TB" \
  expect 2 "more than ptsim's limit of 16 GiB" plot memory --out huge.png --model huge.ini
check "  (predict: an error too)" expect 2 "" predict --model huge.ini

# ---- sweeps that did nothing ----
check "sweep --gpus 8,8 is refused" expect 2 "--gpus '8,8': 8 is given twice" sweep --gpus 8,8
check "sweep --recompute full,full is refused" expect 2 "full is given twice" sweep --recompute full,full
# 3 GPUs without tp or pp: dp 3 does not divide gbs 128 (pp 3 would, with an
# uneven split)
check "sweep with no valid layout exits 2 with the reasons" \
  expect 2 "no valid layout among" sweep --gpus 3 --tp-max 1 --pp-max 1 "${small[@]}"
check "and lists them" grep -q "is not a multiple of mbs\*dp" "$tmp/err"

# ---- sweeps split over machines: shard files are inputs like any other ----
"$ptsim" sweep "${small[@]}" --shard 1/2 --csv p1.csv >/dev/null 2>&1
"$ptsim" sweep "${small[@]}" --shard 2/2 --csv p2.csv >/dev/null 2>&1
check "sweep --merge p1.csv p2.csv --csv p1.csv does not overwrite a shard" \
  expect 2 "p1.csv is an input of this command" sweep "${small[@]}" --merge p1.csv p2.csv --csv p1.csv
check "  (the shard is whole)" grep -q "^layout_index,result," p1.csv
# a shard records what made it: a shard of other flags, of an edited
# profile or missing from the merge is refused naming the file
check "shards merge in any flag order (the same sweep)" \
  expect 0 "" sweep --recompute none --cp 1 --mbs=1 --merge p2.csv p1.csv
check "  (the header names the version, the settings and the inputs)" \
  grep -q "^# setting --recompute none" p1.csv
check "  (input digests)" grep -q "^# input h100-80g.ini sha256:[0-9a-f]\{64\}$" p1.csv
check "a merge with --memory-threshold 0.9 refuses shards made without it" \
  expect 2 "p1.csv: not a shard of this sweep: this sweep has 'setting --memory-threshold 0.9'" \
  sweep "${small[@]}" --memory-threshold 0.9 --merge p1.csv p2.csv
"$ptsim" sweep "${small[@]}" --samples 8 --jitter 0.05 --shard 2/2 --csv p2mc.csv >/dev/null 2>&1
check "a shard made with --samples 8 --jitter 0.05 does not merge into a plain sweep" \
  expect 2 "p2mc.csv:" sweep "${small[@]}" --merge p1.csv p2mc.csv
check "  (it names the first differing setting)" grep -q "it has 'setting --jitter 0.05'" "$tmp/err"
for flag in --allocator --cross-entropy-loss-fusion; do
  "$ptsim" sweep "${small[@]}" $flag --shard 2/2 --csv pflag.csv >/dev/null 2>&1
  check "a shard made with $flag is refused" expect 2 "it has 'setting $flag'" \
    sweep "${small[@]}" --merge p1.csv pflag.csv
done
mkdir -p edited
cp "$src/hw_profiles/h100-80g.ini" edited/h100-80g.ini
"$ptsim" sweep "${small[@]}" --hw edited/h100-80g.ini --shard 1/2 --csv q1.csv >/dev/null 2>&1
sed -i 's/^peak_bf16_tflops.*/peak_bf16_tflops = 900/' edited/h100-80g.ini
"$ptsim" sweep "${small[@]}" --hw edited/h100-80g.ini --shard 2/2 --csv q2.csv >/dev/null 2>&1
check "a shard of the profile before an edit is refused by its digest" \
  expect 2 "q1.csv:" sweep "${small[@]}" --hw edited/h100-80g.ini --merge q1.csv q2.csv
check "  (naming the profile)" grep -q "it has 'input h100-80g.ini sha256:" "$tmp/err"
sed -n '2!p' p1.csv >pnov.csv
check "a shard without a version line is refused" expect 2 "pnov.csv: not a shard of this sweep: this sweep has 'ptsim " \
  sweep "${small[@]}" --merge pnov.csv p2.csv
sed -n '/^layout_index/,$p' p1.csv >pold.csv
check "a shard of an older ptsim (no header) is refused naming its line" \
  expect 2 "pold.csv:1: not a shard file of this ptsim" sweep "${small[@]}" --merge pold.csv p2.csv
check "a missing shard names the shards around the gap" \
  expect 2 "no shard holds layout 0 of this sweep: p2.csv:" sweep "${small[@]}" --merge p2.csv
# step_s (bytes 32-39 of the result: status, fits, peak_stage, total_bytes,
# usage_fraction before it) of the first row set to inf
python3 -c "
import base64, struct, sys
out = []
for line in open('p1.csv'):
    if line[0].isdigit() and not out[-1][0].isdigit():
        i, b, rest = line.split(',', 2)
        raw = bytearray(base64.b64decode(b)); raw[32:40] = struct.pack('<d', float('inf'))
        line = ','.join([i, base64.b64encode(bytes(raw)).decode(), rest])
    out.append(line)
open('pinf.csv', 'w').write(''.join(out))"
first_row=$(($(grep -n '^layout_index' pinf.csv | cut -d: -f1) + 1))
check "a shard result of inf is refused with its file:line" \
  expect 2 "pinf.csv:$first_row: layout 0: a result that is not a finite number" sweep "${small[@]}" --merge pinf.csv p2.csv
check "sweep --merge /dev/zero is refused at once (a device)" expect 2 "--merge /dev/zero: is a character device" \
  sweep "${small[@]}" --merge /dev/zero
check "sweep --merge DIR says it is a directory" expect 2 "is a directory" sweep "${small[@]}" --merge .
# fuzz_shard_merge's seeds must stay shard files this ptsim reads, or the
# fuzzer starts from header refusals (regenerate them with this sweep's
# --shard 1/1 and 1/2 --csv when the sweep CSV gains columns)
shard_seed=(--model llama3-8b --hw h100-80g --gpus 8 --seq 8192 --gbs 128 --mbs 1 --cp 1 --recompute none)
check "the shard_merge fuzz seed is a shard file of this ptsim" \
  expect 0 "" sweep "${shard_seed[@]}" --merge "$src/tests/fuzz/seeds/shard_merge/all-layouts"
check "sweep --shard 1/2 --csv /dev/full is refused, not replaced" \
  expect 2 "ptsim replaces only regular files" sweep "${small[@]}" --shard 1/2 --csv /dev/full

# ---- the output policy ----
"$ptsim" sweep "${small[@]}" --format csv >/dev/full 2>"$tmp/err"
check "a full stdout is exit 1 naming standard output" test $? -eq 1
check "  (message)" grep -q "standard output" "$tmp/err"
check "--csv /dev/full: a device is never replaced" expect 2 "is a character device" sweep "${small[@]}" --csv /dev/full
check "  (still a device)" test -c /dev/full
mkdir adir
check "--csv DIR is refused" expect 2 "is a directory" sweep "${small[@]}" --csv adir
check "--csv - writes the CSV to stdout" expect 0 "" sweep "${small[@]}" --csv -
check "  (it is there)" grep -q "^rank,model,hw" "$tmp/out"
echo old >target.csv
ln -s target.csv link.csv
check "a link is written through" expect 0 "" sweep "${small[@]}" --csv link.csv
check "  (the link stays a link)" test -L link.csv
check "  (its target has the CSV)" grep -q "^rank,model" target.csv
ln -s missing.csv dangling.csv
check "a dangling link is refused" expect 2 "symbolic link to a missing file" sweep "${small[@]}" --csv dangling.csv
check "a missing folder is refused" expect 2 "does not exist" sweep "${small[@]}" --csv no/such/dir.csv
"$ptsim" predict --memory-timeline m.tsv >/dev/null
cp m.tsv m.before
check "plot allocator --from m.tsv --out m.png does not overwrite its input" \
  expect 2 "is an input of this command" plot allocator --from m.tsv --out m.png
check "  (m.tsv unchanged)" cmp -s m.tsv m.before
check "  (nothing else written)" test ! -e m.gp -a ! -e m.png
printf '[efficiency]\ngemm_efficiency_max = 7\n' >bad_eff.ini
check "calibrate names the user's file, not a temporary" \
  expect 2 "bad_eff.ini gives an invalid profile: bad_eff.ini merged into" calibrate --hw h100-80g --out c.ini bad_eff.ini
check "  (nothing written)" test ! -e c.ini
if command -v gnuplot >/dev/null 2>&1; then
  mkdir fake && printf '#!/bin/sh\necho "fake gnuplot: empty y range" >&2\nexit 1\n' >fake/gnuplot && chmod +x fake/gnuplot
  PATH="$tmp/fake:$PATH" "$ptsim" plot memory --out fig.png >/dev/null 2>"$tmp/err"
  check "a failed gnuplot is exit 1" test $? -eq 1
  check "  (its message is shown)" grep -q "empty y range" "$tmp/err"
  check "  (no partial figure)" test ! -e fig.png
  check "  (no temporary left)" test -z "$(ls -A | grep '^\.fig')"
  check "  (nor the new fig.tsv and fig.gp of the failed figure)" test ! -e fig.tsv -a ! -e fig.gp
fi

# ---- one command's outputs as a whole ----
check "two outputs on one path are refused (--trace tt.json --memory-timeline tt.json)" \
  expect 2 "tt.json: this command wrote that file already" predict --trace tt.json --memory-timeline tt.json
check "  (and nothing is left)" test ! -e tt.json
if command -v gnuplot >/dev/null 2>&1; then
  mkdir -p figs
  check "--csv figs/heatmap.tsv --figures figs is refused" \
    expect 2 "--csv figs/heatmap.tsv is a file --figures figs writes" \
    sweep "${small[@]}" --csv figs/heatmap.tsv --figures figs
fi
"$ptsim" sweep "${small[@]}" --csv /dev/stdout >rep.txt 2>"$tmp/err"
check "--csv /dev/stdout > rep.txt is refused (it replaced the report)" test $? -eq 2
check "  (naming standard output)" grep -q "is the file this command's standard output goes to" "$tmp/err"
"$ptsim" sweep "${small[@]}" --csv /dev/stderr 2>err.txt >/dev/null
check "  (standard error too)" grep -q "standard error goes to" err.txt
echo old >ro.csv && chmod 444 ro.csv
check "a read-only output is refused" expect 2 "ro.csv is read-only; ptsim replaces a read-only file only with --force" \
  sweep "${small[@]}" --csv ro.csv
check "  (unchanged)" grep -qx old ro.csv
check "  --force replaces it" expect 0 "" sweep "${small[@]}" --csv ro.csv --force
check "  (with the CSV, still read-only)" bash -c "grep -q '^rank,model' ro.csv && test ! -w ro.csv -o \$(id -u) -eq 0"
touch afile
check "--csv afile/x (a file as a folder) exits 2, not 1" expect 2 "a part of the path before its last is a file" \
  sweep "${small[@]}" --csv afile/x
check "--csv dir/ exits 2" expect 2 "is a directory" sweep "${small[@]}" --csv adir/
ln -s loopa loopb && ln -s loopb loopa
check "a symbolic link loop is named a loop, not a missing file" expect 2 "loopa is a loop of symbolic links" \
  sweep "${small[@]}" --csv loopa
rm -f t.json
"$ptsim" predict --trace t.json >/dev/full 2>/dev/null
check "a failed predict --trace t.json (stdout full: exit 1) leaves no t.json" test $? -eq 1 -a ! -e t.json
echo old >t.json
"$ptsim" predict --trace t.json >/dev/full 2>/dev/null
check "  and a t.json it replaced comes back" grep -qx old t.json
check "  (no temporary left)" test -z "$(ls -A | grep '\.ptsim-')"
# interrupted: a streamed sweep writing long.csv (minutes), stopped once its temporary shows
# (waited for up to a minute: under ASan the start takes seconds)
long=(sweep --gpus 64,128,256,512,1024 --seq 4096,8192 --gbs 512,1024 --in-memory-max 100 --threads 1)
echo old >long.csv
for sig in INT TERM; do
  (trap - INT; exec "$ptsim" "${long[@]}" --csv long.csv >/dev/null 2>&1) &
  pid=$!
  for _ in $(seq 600); do ls -A | grep -q '^\.long\.csv\.ptsim-' && break; sleep 0.1; done
  kill -$sig $pid; wait $pid
  check "SIG$sig: ptsim dies of it" test $? -gt 128
  check "  (its temporary is gone)" test -z "$(ls -A | grep '^\.long\.csv')"
  check "  (the old file is whole)" grep -qx old long.csv
done
"$ptsim" "${long[@]}" --csv long.csv >/dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do ls -A | grep -q '^\.long\.csv\.ptsim-' && break; sleep 0.1; done
kill -KILL $pid; wait $pid 2>/dev/null
check "kill -9 leaves a temporary of ptsim's naming" test -n "$(ls -A | grep '^\.long\.csv\.ptsim-')"
touch .other.csv.XYZ123
"$ptsim" sweep "${small[@]}" --csv small.csv >/dev/null
check "  the next run in that folder removes it" test -z "$(ls -A | grep '^\.long\.csv')"
check "  (and no file of another naming)" test -e .other.csv.XYZ123
if command -v gnuplot >/dev/null 2>&1; then
  mkdir -p slow && printf '#!/bin/sh\necho $$ >"%s/gnuplot.pid"\nexec sleep 30\n' "$tmp" >slow/gnuplot && chmod +x slow/gnuplot
  PATH="$tmp/slow:$PATH" "$ptsim" plot memory --out slowfig.png >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 600); do [ -s gnuplot.pid ] && break; sleep 0.1; done
  kill -TERM $pid; wait $pid
  sleep 0.5
  # ended: gone, or a zombie nobody reaps (a container's init)
  check "the gnuplot child ends with ptsim" \
    bash -c "! grep -qs '^State:.*[RSD]' /proc/\$(cat gnuplot.pid)/status"
  check "  (no .tsv, .gp or temporary left)" test -z "$(ls -A | grep 'slowfig')"
fi

# ---- inputs ----
check "--megatron-args-file /dev/zero is refused (a device never ends)" \
  expect 2 "/dev/zero: is a character device; ptsim reads regular files" memory --megatron-args-file /dev/zero
head -c $((17 << 20)) /dev/zero | tr '\0' ' ' >big.sh
check "  and a file past the cap stops at it" expect 2 "larger than the 16 MiB" memory --megatron-args-file big.sh
mkfifo fifo
for args in "memory --hw ./fifo" "memory --model ./fifo" "memory --megatron-args-file fifo" \
    "validate --hw h100-80g fifo" "sweep --merge fifo" "plot scaling --from fifo --out f.png"; do
  # shellcheck disable=SC2086
  check "a FIFO with no writer is refused, not waited on: $args" \
    expect 2 "fifo: is a FIFO; ptsim reads regular files" $args
done
check "a pipe on standard input is read (/dev/stdin)" \
  bash -c "'$ptsim' memory --hw /dev/stdin <'$src/hw_profiles/h100-80g.ini' | grep -q 'h100-80g'"
check "  and a shell's <(...)" bash -c "'$ptsim' memory --hw <(cat '$src/hw_profiles/h100-80g.ini') >/dev/null"
# a sweep CSV whose every row is a series of its own at a GPU count of its
# own: the figure's work was cubic in the rows (3000 rows: 70 s)
python3 -c "
lines = open('p1.csv').read().splitlines()
i = next(k for k, l in enumerate(lines) if l.startswith('layout_index'))
hdr = lines[i].split(',')[2:]
row = lines[i + 1].split(',')[2:]
g, s = hdr.index('gpus'), hdr.index('seq')
out = [','.join(hdr)]
for k in range(3000):
    r = list(row); r[g] = str(8 + k); r[s] = str(1000 + k); out.append(','.join(r))
open('wide.csv', 'w').write('\n'.join(out) + '\n')"
start=$(date +%s)
check "plot scaling --from a mutated sweep CSV (3000 series) is refused at once" \
  expect 2 "scaling: 3000 series (model, hw, seq, gbs) over 3000 GPU counts; the figure draws at most 64" \
  plot scaling --from wide.csv --out wide.png
check "  (in seconds)" test $(($(date +%s) - start)) -lt 10
check "--model DIR/ says it is a directory" expect 2 "is a directory" memory --model adir/
cp "$src/tests/data/model_tiny.ini" "modèle.ini"
check "a non-ASCII path works (C locale)" bash -c "LC_ALL=C '$ptsim' memory --model modèle.ini >/dev/null"
check "a non-ASCII path works (UTF-8 locale)" bash -c "LC_ALL=C.UTF-8 '$ptsim' memory --model modèle.ini >/dev/null"
cp "$src/tests/data/model_tiny.ini" $'mod\xe8le.ini'
check "a path that is not UTF-8 opens (paths are bytes on Linux)" \
  bash -c "'$ptsim' memory --model \$'mod\\xe8le.ini' --format json | grep -q '\"name\": \"mod'"
check "a value that is not text names its flag" expect 2 "--recompute 'full" \
  memory --recompute $'full\xe8'

# ---- strict readers: one encoding, no NUL, each key and section once ----
hw="$src/hw_profiles/h100-80g.ini"
sed 's/^peak_bf16_tflops.*/peak_bf16_tflops = 98\x00 9.4/' "$hw" >nul.ini
check "a NUL byte inside an .ini value is refused with its line (was read as 98)" \
  expect 2 "nul.ini:$(grep -n '^peak_bf16_tflops' "$hw" | cut -d: -f1): a NUL byte" memory --hw nul.ini
{ printf '\xef\xbb\xbf'; cat "$hw"; } >bom.ini
check "a UTF-8 BOM is refused with file:1" expect 2 "bom.ini:1: starts with a UTF-8 byte-order mark" memory --hw bom.ini
{ printf '\xff\xfe'; sed 's/./&\x00/g' "$hw"; } >u16.ini
check "UTF-16 is refused with file:1" expect 2 "u16.ini:1: UTF-16 text" memory --hw u16.ini
printf '[\x00g\x00p\x00u\x00]\x00' >u16nobom.ini
check "NUL bytes at the start (UTF-16 without a BOM) name the encoding" \
  expect 2 "u16nobom.ini:1: a NUL byte (UTF-16 or UTF-32 text?)" memory --hw u16nobom.ini
{ cat "$hw"; printf 'x = \xe8\n'; } >latin1.ini
check "bytes that are not UTF-8 are refused with their line" \
  expect 2 "latin1.ini:$(($(wc -l <"$hw") + 1)): bytes that are not UTF-8" memory --hw latin1.ini
awk '{print} /^peak_bf16_tflops/ {print "peak_bf16_tflops = 9999"}' "$hw" >dupkey.ini
check "a duplicate key is refused, naming both lines" \
  expect 2 "[gpu] peak_bf16_tflops again (first at line" memory --hw dupkey.ini
{ cat "$hw"; printf '[gpu]\n'; } >dupsec.ini
check "a duplicate section is refused" expect 2 "dupsec.ini:$(($(wc -l <"$hw") + 1)): [gpu] again (first at line" \
  memory --hw dupsec.ini
awk '{print} /^num_layers/ {print "num_layers=2"}' "$src/tests/data/model_tiny.ini" >dupmodel.ini
check "  (a model file too)" expect 2 "num_layers again" memory --model dupmodel.ini

# ---- measured values: finite and in range, with file:line ----
log="$src/tests/data/megatron_logs/args_llama3_8b_handmade.log"
mklog() { # FILE ELAPSED_MS TFLOPS
  cp "$log" "$1"
  for i in 1 2 3 4 5 6; do
    echo " [2024-05-01 10:00:0$i] iteration        $i/     100 | consumed samples: $((i * 128)) | elapsed time per iteration (ms): $2 | throughput per GPU (TFLOP/s/GPU): $3 | global batch size:   128 |" >>"$1"
  done
}
mklog ok.log 25000.0 150.0
check "a log with measured iterations compares" expect 0 "" validate --hw a100-80g ok.log
n=$(($(wc -l <"$log") + 1))
for v in inf nan -inf -5 0 1e300; do
  mklog bad.log "$v" 150.0
  check "a log's elapsed time per iteration of $v is refused with file:line" \
    expect 2 "bad.log:$n: elapsed time per iteration (ms) '$v' is not allowed" validate --hw a100-80g bad.log
done
mklog bad.log 25000.0 1e300
check "a log's TFLOP/s of 1e300 is refused" expect 2 "bad.log:$n: throughput per GPU (TFLOP/s/GPU) '1e300'" \
  validate --hw a100-80g bad.log
{ cat "$log"; echo "[Rank 0] (after 10 iterations) memory (MB) | allocated: 100.0 | max allocated: -inf | reserved: 200.0 | max reserved: 300.0"; } >mem.log
check "a log's memory of -inf MB is refused" expect 2 "mem.log:$n: memory (MB) max allocated '-inf'" \
  validate --hw a100-80g mem.log
for v in -inf nan 1e300 0; do
  printf 'model,hw,num_gpus,tp,pp,gbs,seq_len,mbs,step_time_s\nllama3-8b,h100-80g,8,1,1,128,8192,1,%s\n' "$v" >r.csv
  check "a run CSV's step_time_s of $v is refused with file:line:column" \
    expect 2 "r.csv:2:37: column step_time_s: '$v'" validate r.csv
done
printf 'model,hw,num_gpus,tp,pp,gbs,seq_len,mbs,step_time_s,max_allocated_mb\nllama3-8b,h100-80g,8,1,1,128,8192,1,14,1e12\n' >r.csv
check "a run CSV's max_allocated_mb of 1e12 (a PB) is refused" \
  expect 2 "r.csv:2:40: column max_allocated_mb: '1e12' is not allowed" validate r.csv

# ---- exit codes of commands that did nothing ----
printf 'model,hw,num_gpus,tp,pp,gbs,seq_len,mbs,step_time_s\nllama3-8b,h100-80g,8,3,1,128,8192,1,14\n' >none.csv
check "validate with nothing compared exits 2" expect 2 "no run could be compared" validate none.csv
check "  (no 'MAPE 0.00% over 0 runs')" bash -c "! grep -q 'over 0 runs' '$tmp/out'"
"$ptsim" predict --format json --memory-threshold 0.8 >p.json
check "JSON oom_at is an object or null" python3 -c "
import json,sys; d=json.load(open('p.json'))
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == 'oom_at': assert v is None or isinstance(v, dict), v
            walk(v)
    elif isinstance(o, list):
        for v in o: walk(v)
walk(d)"

# ---- determinism: same bytes for any thread count ----
"$ptsim" sweep --gpus 8,16 --format csv --threads 1 >t1.csv
"$ptsim" sweep --gpus 8,16 --format csv --threads 3 >t3.csv
check "same CSV with 1 and 3 threads" cmp -s t1.csv t3.csv

[ "$fails" -eq 0 ] && echo "all reliability checks passed"
exit $((fails > 0))
