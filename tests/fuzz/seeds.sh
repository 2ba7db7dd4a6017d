# seeds.sh — the seed inputs of each fuzz target, sourced by run.sh and
# replay.sh: the fixtures in tests/data (and the shipped models, profiles
# and published CSVs), plus the few hand-written seeds in seeds/TARGET/.
# Usage: seeds TARGET (paths relative to the source tree, one per line).
fuzz_targets="model_ini hw_ini megatron_args megatron_args_file megatron_log run_csv alloc_trace alloc_conf plot_tables job_options torchtitan shell_script launcher pipeline_layout shard_merge error_bands megatron_case kernel_tables host_overhead hf_config torchtitan_python"

seeds() {
  case $1 in
    model_ini) ls tests/data/bad_model_*.ini tests/data/model_tiny.ini models/*.ini ;;
    hw_ini) ls tests/data/bad_hw_*.ini tests/data/hw_memory_bytes.ini hw_profiles/*.ini ;;
    megatron_args|megatron_args_file|shell_script|launcher)
      ls tests/data/megatron_llama3_8b.sh tests/data/megatron_scripts/*.sh tests/data/shell_scripts/*.sh ;;
    megatron_log) ls tests/data/megatron_logs/*.log ;;
    run_csv) ls tests/data/published/*.csv validate/data/published/*.csv ;;
    alloc_trace) ls tests/data/alloc_small.trace ;;
    torchtitan) ls tests/data/torchtitan/*.toml 2>/dev/null ;;
    torchtitan_python) ls tests/data/torchtitan/*.sh ;;
    hf_config) ls tests/data/hf_configs/*/config.json ;;
    error_bands) ls validate/error_bands.ini tests/data/error_bands/validate/error_bands.ini ;;
    host_overhead) ls hw_profiles/software/host_overhead.ini ;;
  esac
  [ -d "tests/fuzz/seeds/$1" ] && ls -d "tests/fuzz/seeds/$1"/* 2>/dev/null
  return 0
}
