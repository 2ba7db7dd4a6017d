#!/usr/bin/env bash
# Runs the benchmarks against a Release build (default build/) and appends
# the results, with the machine named, to bench/RESULTS.md:
#   - bench_engine: one full simulation of a 70B layout (pp 8, 64 microbatches)
#   - bench_batch: layouts/s of the batch evaluator on random light layouts
#   - bench_alloc: operations/s of the caching-allocator emulation
#   - ptsim sweep: layouts/s of a realistic sweep (enumeration + evaluation),
#     1 thread and all threads, and of issue 13's Llama-3-70B sweep (48,216
#     layouts with its cp/vp/mbs lists; the sweep's default lists enumerate
#     more) with the default --top 10 (the allocator emulation of the
#     layouts that settle the top 10), 1 thread and all threads, and with
#     --no-shortcut (its CSV must be the same bytes); the sweep's default
#     lists (issue 29: the sweep users run) at 1 and 2 threads; each rate
#     with the user CPU seconds and the load average (a shared machine)
#   - bench_lifetimes: what that emulation costs per layout, every item vs
#     the periodic shortcut
#   - bench_events: events and time per layout by microbatch count, every
#     event vs the shortcut, over the default sweep; and the sweep's engine
#     alone (the recurrence) per layout by m and by vp (issue 29: flat), and
#     the same as the sweep's workers run it (--replay: the recorded orders)
#   - a sweep of 1,235,184 layouts (streamed): wall time and peak memory
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
export PTSIM_DATA_DIR="$here/.."
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
sweep_args=(--model llama3-70b,llama3-8b --gpus 64,128,256 --seq 4096,8192 --hw a100-80g,h100-80g --gbs 512 --device cpu)

issue_args=(--model llama3-70b --hw a100-80g,h100-80g --gpus 64,128,256,512,1024 --seq 4096,8192
            --gbs 1024 --device cpu --cp 1,2,4,8 --vp 2,4 --mbs 1,2,4,8)
default_lists_args=("${issue_args[@]:0:12}")  # the same scenarios, the sweep's own lists
million_args=(--model llama3-8b,llama3-70b,llama2-7b,llama2-13b,llama2-70b
              --hw a100-80g,h100-80g,h200-141g,a100-40g --gpus 8,16,32,64,128,256,512,1024
              --seq 4096,8192 --gbs 512,1024 --device cpu --top 3)

sweep_rate() { # threads [more sweep args...] (default: sweep_args); TOP (default 1)
  local threads=$1 start end n load user; shift
  local args=("$@"); [ ${#args[@]} -gt 0 ] || args=("${sweep_args[@]}")
  load=$(cut -d' ' -f1 /proc/loadavg)
  start=$(date +%s.%N)
  n=$(python3 -c 'import resource, subprocess, sys
out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, text=True, check=True).stdout
print(out, resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime)' \
      "$build/ptsim" sweep "${args[@]}" --threads "$threads" --top "${TOP:-1}" |
      sed -n 's/.*: \([0-9]*\) valid layouts.*/\1/p; $s/.* \([0-9.]*\)$/user \1/p')
  end=$(date +%s.%N)
  user=$(sed -n 's/^user //p' <<<"$n"); n=$(head -1 <<<"$n")
  # the machine may be shared: the user CPU seconds and the load average say how much
  python3 -c "print('%d layouts in %.2f s: %.0f layouts/s (user %.2f s: %.0f layouts per CPU second; load average %s)' % ($n, $end - $start, $n / ($end - $start), $user, $n / max($user, 1e-9), '$load'))"
}

{
  echo "## $(date -u +%Y-%m-%d) on ${cpu} ($(nproc) cores)"
  echo
  for schedule in 1f1b interleaved zb-h1; do
    echo "- one core, $("$build/bench_engine" "$schedule")"
  done
  echo
  "$build/bench_batch" 10000
  echo
  "$build/bench_alloc"
  echo
  echo "- sweep \`ptsim sweep ${sweep_args[*]}\`, 1 thread: $(sweep_rate 1)"
  echo "- same sweep, $(nproc) threads: $(sweep_rate 0)"
  echo "- issue 13's sweep \`ptsim sweep ${issue_args[*]}\` (default --top 10), 1 thread: $(TOP=10 sweep_rate 1 "${issue_args[@]}")"
  echo "- same sweep, $(nproc) threads: $(TOP=10 sweep_rate 0 "${issue_args[@]}")"
  echo "- same sweep, --top 1 (the emulation of one layout or two), $(nproc) threads: $(sweep_rate 0 "${issue_args[@]}")"
  echo "- the sweep's default lists (\`ptsim sweep ${default_lists_args[*]}\`, --top 10), 1 thread: $(TOP=10 sweep_rate 1 "${default_lists_args[@]}")"
  echo "- same sweep, 2 threads: $(TOP=10 sweep_rate 2 "${default_lists_args[@]}")"
  if [ "$(nproc)" -ne 2 ]; then echo "- same sweep, $(nproc) threads: $(TOP=10 sweep_rate 0 "${default_lists_args[@]}")"; fi
  echo "- same sweep, --top 1 (the engine's share: the emulation of the per-group best rows remains), 1 thread: $(sweep_rate 1 "${default_lists_args[@]}")"
  echo "- same sweep, --top 1, 2 threads: $(sweep_rate 2 "${default_lists_args[@]}")"
  "$build/ptsim" sweep "${issue_args[@]}" --csv /tmp/ptsim-bench-a.csv >/dev/null
  "$build/ptsim" sweep "${issue_args[@]}" --no-shortcut --csv /tmp/ptsim-bench-b.csv >/dev/null
  same=$(cmp -s /tmp/ptsim-bench-a.csv /tmp/ptsim-bench-b.csv && echo "the same bytes" || echo "DIFFERENT")
  echo "- issue 13's sweep, $(nproc) threads, --no-shortcut: $(TOP=10 sweep_rate 0 "${issue_args[@]}" --no-shortcut); CSV $same as with the shortcuts"
  rm -f /tmp/ptsim-bench-a.csv /tmp/ptsim-bench-b.csv
  echo
  "$build/bench_lifetimes"
  echo
  "$build/bench_events"
  "$build/bench_events" --recurrence-only
  "$build/bench_events" --recurrence-only --replay
  echo
  if [ -x /usr/bin/time ]; then # peak memory of a 128k-layout sweep, held vs streamed
    big=(--model llama3-8b,llama2-7b,llama2-13b --hw a100-80g,h100-80g,h200-141g,a100-40g
         --gpus 8,16,32,64 --seq 2048,4096 --gbs 64,128 --mbs 1,2,4 --cp 1,2 --top 3)
    for mode in held streamed; do
      extra=(); [ "$mode" = streamed ] && extra=(--in-memory-max 0)
      rss=$( { /usr/bin/time -v "$build/ptsim" sweep "${big[@]}" "${extra[@]}" --csv /tmp/ptsim-bench.csv >/dev/null; } 2>&1 |
             sed -n 's/.*Maximum resident set size (kbytes): //p')
      echo "- 128,304-layout sweep ($mode): peak RSS $((rss / 1024)) MiB"
    done
    out=$( { /usr/bin/time -v "$build/ptsim" sweep "${million_args[@]}" --csv /tmp/ptsim-bench.csv >/dev/null; } 2>&1)
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' <<<"$out")
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' <<<"$out")
    echo "- 1,235,184-layout sweep (\`ptsim sweep ${million_args[*]}\`, streamed, $(nproc) threads): wall $wall, peak RSS $((rss / 1024)) MiB"
    rm -f /tmp/ptsim-bench.csv
  fi
  echo
} | tee -a "$here/RESULTS.md"
