/* fuzz_alloc_trace.c — an allocator event trace (alloc_trace_io.c), then
 * its replay through the caching-allocator emulation at a small capacity
 * (so OOM paths run too). */
#include "fuzz_common.h"
#include "alloc_trace_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimAllocTrace)
      trace = ptsim_alloc_trace_parse((const char *)data, (gssize)size, "fuzz.trace", &error);
  if (!trace) return 0;
  PtsimAllocOptions opts;
  ptsim_alloc_options_init(&opts);
  PtsimAllocReplay replay;
  g_autofree int64_t *after = g_new0(int64_t, trace->events->len + 1);
  g_autoptr(GError) replay_error = NULL;
  ptsim_alloc_trace_replay(trace, &opts, 64.0 * 1024 * 1024 * 1024, after, &replay, &replay_error);
  return 0;
}
