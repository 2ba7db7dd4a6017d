/* bench_alloc.c — operations per second of the caching-allocator emulation
 * on a random alloc/free stream (sizes 512 B .. 256 MiB, log-uniform, half
 * the live tensors freed at random), with PyTorch's defaults and with
 * expandable segments.  A benchmark: it asserts nothing. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include "alloc.h"

#define OPS 100000
#define SLOTS 200000
#define LIVE_MAX 4096

static double run(const PtsimAllocOptions *opts) {
  g_autofree PtsimAllocBlock *blocks = g_new0(PtsimAllocBlock, SLOTS);
  PtsimAllocator a;
  int32_t live[LIVE_MAX];
  int n = 0;
  g_autoptr(GRand) rand = g_rand_new_with_seed(7);
  ptsim_alloc_init(&a, opts, 1e13, blocks, SLOTS);
  gint64 t0 = g_get_monotonic_time();
  for (int op = 0; op < OPS; op++) {
    if (n > 0 && (n == LIVE_MAX || g_rand_boolean(rand))) {
      int k = g_rand_int_range(rand, 0, n);
      ptsim_alloc_free(&a, live[k]);
      live[k] = live[--n];
    } else {
      int64_t size = (int64_t)exp(g_rand_double_range(rand, log(512.0), log(256.0 * 1048576.0)));
      int32_t h = ptsim_alloc_malloc(&a, size, 0);
      if (h >= 0) live[n++] = h;
    }
  }
  return OPS / ((double)(g_get_monotonic_time() - t0) / 1e6);
}

int main(void) {
  PtsimAllocOptions opts;
  ptsim_alloc_options_init(&opts);
  printf("- allocator emulation, defaults: %.0f ops/s\n", run(&opts));
  opts.expandable_segments = 1;
  printf("- allocator emulation, expandable segments: %.0f ops/s\n", run(&opts));
  return 0;
}
