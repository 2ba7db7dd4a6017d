#!/usr/bin/env bash
# End-to-end checks of `ptsim plot`: exit codes and the files it leaves.
# Skips (77) when gnuplot is not installed, except for the bad-input checks.
set -u
. "$(dirname "$0")/common.bash" "$1"
expect_exit() { # code, args...
  local want=$1; shift
  "$ptsim" "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  [ "$got" -eq "$want" ] || { echo "  exit $got, wanted $want for: $*" >&2; cat "$tmp/err" >&2; return 1; }
}

check "plot --help runs" expect_exit 0 plot --help
check "no kind is bad input" expect_exit 2 plot --out "$tmp/x.png"
check "unknown kind is bad input" expect_exit 2 plot frobnicate --out "$tmp/x.png"
check "missing --out is bad input" expect_exit 2 plot memory
check "bad extension is bad input" expect_exit 2 plot memory --out "$tmp/x.jpg"
check "bad job option is bad input" expect_exit 2 plot memory --tp 3 --out "$tmp/x.png"
check "missing output folder is bad input" expect_exit 2 plot memory --out "$tmp/no/such/x.png"
check "gnuplot missing exits 1" bash -c "PATH=/nonexistent '$ptsim' plot memory --out '$tmp/np.png' 2>&1 >/dev/null | grep -q 'apt-get install gnuplot-nox'; [ \${PIPESTATUS[0]} -eq 1 ]"

check "heatmap without --from is bad input" expect_exit 2 plot heatmap --out "$tmp/h.png"
check "timeline with --from is bad input" expect_exit 2 plot timeline --from x.csv --out "$tmp/h.png"
check "bad --facet is bad input" expect_exit 2 plot heatmap --from x.csv --facet tp --out "$tmp/h.png"
check "missing --from file is bad input" expect_exit 2 plot pareto --from "$tmp/none.csv" --out "$tmp/p.png"
printf 'source,run,measured_s,predicted_s\na,r1,1.0,1.1\na,r2,x,2\n' >"$tmp/bad.csv"
check "malformed validation CSV is bad input" expect_exit 2 plot validation --from "$tmp/bad.csv" --out "$tmp/v.png"
check "the error names file:line" grep -q "bad.csv:3: column measured_s" "$tmp/err"
printf 'rank,model\n1,x\n' >"$tmp/badsweep.csv"
check "sweep CSV without columns is bad input" expect_exit 2 plot heatmap --from "$tmp/badsweep.csv" --out "$tmp/h.png"
check "the error names the missing column" grep -q "badsweep.csv:1: the header has no column" "$tmp/err"

if ! command -v gnuplot >/dev/null; then
  echo "# SKIP gnuplot not installed"
  [ "$fails" -eq 0 ] && exit 77 || exit 1
fi
check "memory png" expect_exit 0 plot memory --pp 4 --out "$tmp/m.png"
check "memory leaves tsv + gp" test -s "$tmp/m.tsv" -a -s "$tmp/m.gp"
check "stdout names the figure" grep -q "$tmp/m.png" "$tmp/out"
check "timeline pdf" expect_exit 0 plot timeline --pp 4 --gbs 8 --gpus 4 --out "$tmp/t.pdf"
check "timeline --window --stages --size" expect_exit 0 plot timeline --pp 4 --gbs 8 --gpus 4 --window 0:300ms --stages 0,2:3 --size 12x6cm --out "$tmp/tw.png"
check "  draws stages 0, 2, 3 only" test "$(grep -v '^#' "$tmp/tw.tsv" | cut -f1 | sort -u | tr '\n' ' ')" = "0 2 3 "
check "bad --size is bad input" expect_exit 2 plot memory --size 2x2mm --out "$tmp/x.png"
check "bad --window is bad input" expect_exit 2 plot timeline --window 3:1 --out "$tmp/x.png"
check "--stages past the pipeline is bad input" expect_exit 2 plot timeline --pp 2 --gpus 2 --stages 0:5 --out "$tmp/x.png"
check "  the message names the job's pp" grep -q "the job has pp 2" "$tmp/err"
check "--window on memory is bad input" expect_exit 2 plot memory --window 0:1 --out "$tmp/x.png"
check "timeline is a PDF" bash -c "head -c 4 '$tmp/t.pdf' | grep -q '%PDF'"
check "the .gp reruns from its folder" bash -c "rm '$tmp/t.pdf' && cd '$tmp' && gnuplot t.gp && test -s t.pdf"

# allocator: computed (timeline written next to the figure) and --from predict's TSV
check "allocator png" expect_exit 0 plot allocator --pp 4 --gbs 16 --out "$tmp/a.png"
check "allocator leaves its timeline" test -s "$tmp/a.timeline.tsv"
"$ptsim" predict --pp 4 --gbs 16 --memory-timeline "$tmp/mt.tsv" >/dev/null
check "allocator --from a predict timeline" expect_exit 0 plot allocator --pp 4 --gbs 16 --from "$tmp/mt.tsv" --out "$tmp/a2.svg"
check "same data either way" cmp -s <(grep -v '^# from' "$tmp/a.tsv") <(grep -v '^# from' "$tmp/a2.tsv")
check "allocator --from with the wrong pp is bad input" expect_exit 2 plot allocator --pp 2 --gbs 16 --from "$tmp/mt.tsv" --out "$tmp/a3.png"

# the sweep kinds, from ptsim sweep --csv
"$ptsim" sweep --gpus 8,16 --hw h100-80g,a100-80g --mbs 1,2 --cp 1,2 --csv "$tmp/s.csv" >/dev/null
check "heatmap of a multi-scenario CSV asks which" expect_exit 2 plot heatmap --from "$tmp/s.csv" --out "$tmp/h.png"
check "  naming the scenarios and the flags" grep -q "holds 4 scenarios (pick one with --hw --gpus)" "$tmp/err"
check "pareto of a multi-scenario CSV asks which" expect_exit 2 plot pareto --from "$tmp/s.csv" --out "$tmp/p.png"
check "a filter that matches nothing is bad input" expect_exit 2 plot heatmap --from "$tmp/s.csv" --gpus 32 --out "$tmp/h.png"
check "heatmap png" expect_exit 0 plot heatmap --from "$tmp/s.csv" --gpus 8 --hw h100-80g --out "$tmp/h.png"
check "heatmap is a PNG" bash -c "head -c 4 '$tmp/h.png' | od -c | grep -q 'P   N   G'"
# the scenario asked for: its (cp, tp, pp) triples, one cell each
cells=$(awk -F, 'NR>1 && $3=="h100-80g" && $4==8 {print $9"/"$7"/"$8}' "$tmp/s.csv" | sort -u | wc -l)
rows=$(grep -vc '^#' "$tmp/h.tsv")
check "one heatmap cell per (cp, tp, pp) of the scenario ($cells)" test "$rows" -eq "$cells"
check "heatmap --facet mbs pdf at column size" expect_exit 0 plot heatmap --from "$tmp/s.csv" --gpus 16 --hw a100-80g --facet mbs --size column --out "$tmp/hm.pdf"
check "  a 3.5 in wide PDF page" bash -c "grep -q 'size 8.89cm' '$tmp/hm.gp'"
check "pareto svg" expect_exit 0 plot pareto --from "$tmp/s.csv" --gpus 8 --hw h100-80g --out "$tmp/p.svg"
check "pareto is an SVG" grep -q "<svg" "$tmp/p.svg"
# h100-80g: 0.8 x 81559 MiB (the capacity the driver reports) = 63.7180 GiB, to the 1e-4 GiB
# the CSV's six-digit usage_fraction leaves the capacity it is read back from
check "pareto draws the 80% fit limit" awk '/^# fit_limit_gib/ {d = $3 - 63.718; ok = d < 2e-4 && d > -2e-4} END {exit !ok}' "$tmp/p.tsv"
check "scaling png" expect_exit 0 plot scaling --from "$tmp/s.csv" --out "$tmp/sc.png"
check "scaling: one row per (hw, gpus)" test "$(grep -v '^#' "$tmp/sc.tsv" | grep -c .)" -eq 4
check "scaling --y step" expect_exit 0 plot scaling --from "$tmp/s.csv" --y step --out "$tmp/sc2.png"
# one GPU count where a layout fits: no OOM label to draw (gnuplot 5.4 crashed on a labels plot
# whose every point was undefined)
awk -F, 'NR==1 || ($3=="h100-80g" && $4==8)' "$tmp/s.csv" >"$tmp/one.csv"
check "scaling of one GPU count" expect_exit 0 plot scaling --from "$tmp/one.csv" --out "$tmp/sc1.png"
check "  one row" test "$(grep -v '^#' "$tmp/sc1.tsv" | grep -c .)" -eq 1
check "  no OOM labels when every count fits" bash -c "! grep -q \"('OOM')\" '$tmp/sc1.gp'"
# Llama-3-70B fits no layout of 8 H100s: its count is marked OOM
"$ptsim" sweep --model llama3-70b --gpus 8,64 --hw h100-80g --mbs 1 --cp 1 --csv "$tmp/s70.csv" >/dev/null
check "scaling with a count where nothing fits" expect_exit 0 plot scaling --from "$tmp/s70.csv" --out "$tmp/sc70.png"
check "  that count: fits 0, NaN values" grep -q "^0	h100-80g	8	0	NaN	NaN	NaN	" "$tmp/sc70.tsv"
check "  drawn with an OOM label" grep -q "('OOM')" "$tmp/sc70.gp"
printf 'source,run,measured_s,predicted_s\na,r1,1.0,1.1\nb,r2,3,2.8\n' >"$tmp/v.csv"
check "validation png" expect_exit 0 plot validation --from "$tmp/v.csv" --out "$tmp/v.png"
check "validation: one row per run" test "$(grep -vc '^#' "$tmp/v.tsv")" -eq 2
check "validation --held-out marks a source" expect_exit 0 plot validation --from "$tmp/v.csv" --held-out b --view parity --out "$tmp/vp.png"
check "  fit column: a in-sample (1), b held-out (2)" test "$(grep -v '^#' "$tmp/vp.tsv" | cut -f7 | tr '\n' ' ')" = "1 2 "
printf 'source,run,measured_s,predicted_s,fit\na,r1,1.0,1.1,maybe\n' >"$tmp/vf.csv"
check "a bad fit cell is bad input naming file:line" expect_exit 2 plot validation --from "$tmp/vf.csv" --out "$tmp/v.png"
check "  file:line" grep -q "vf.csv:2: column fit" "$tmp/err"
check "a .gp with show_title = 0 reruns (a paper's figure)" bash -c "cd '$tmp' && sed 's/^show_title = 1/show_title = 0/' p.gp >p0.gp && grep -q '^show_title = 0' p0.gp && gnuplot p0.gp"
for k in h p sc v a; do
  check "$k.gp reruns with gnuplot exit 0" bash -c "cd '$tmp' && gnuplot $k.gp"
done
[ "$fails" -eq 0 ]
