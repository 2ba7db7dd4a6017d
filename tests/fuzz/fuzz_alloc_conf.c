/* fuzz_alloc_conf.c — a PYTORCH_CUDA_ALLOC_CONF string as --alloc-conf
 * takes it (alloc_conf.c); accepted options must keep the allocator's
 * invariants on a short replay. */
static void load_trace(void);
#define FUZZ_TARGET_INIT load_trace()
#include "fuzz_common.h"
#include "alloc_conf.h"
#include "alloc_trace_io.h"

static PtsimAllocTrace *trace;

static void load_trace(void) {
  g_autofree char *path = g_build_filename(PTSIM_SOURCE_DIR, "tests", "data", "alloc_small.trace",
                                           NULL);
  trace = ptsim_alloc_trace_load(path, NULL);
  g_assert(trace != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  g_autofree char *text = g_strndup((const char *)data, size);
  PtsimAllocOptions opts;
  ptsim_alloc_options_init(&opts);
  g_autoptr(GError) error = NULL;
  if (!ptsim_alloc_conf_parse(text, &opts, &error)) return 0;
  PtsimAllocReplay replay;
  g_autoptr(GError) replay_error = NULL;
  ptsim_alloc_trace_replay(trace, &opts, 1024.0 * 1024 * 1024, NULL, &replay, &replay_error);
  return 0;
}
