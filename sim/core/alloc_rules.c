/* alloc_rules.c — the caching allocator's options and size rules: how a
 * request is rounded (A3), how big a new segment is (A4); the contract is
 * in alloc.h, the rules in shared/reference/pytorch_caching_allocator.md.
 * Pure functions of their arguments: no allocator state.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.  Siblings: alloc.c,
 * alloc_check.c, alloc_int.h. */
#include "alloc_int.h"

/* ---- options ---- */

PTSIM_HD void ptsim_alloc_options_init(PtsimAllocOptions *o) {
  o->max_split_size_bytes = 0;
  o->max_non_split_rounding_bytes = PTSIM_ALLOC_LARGE_BUFFER;
  for (int32_t i = 0; i < PTSIM_ALLOC_DIVISION_INTERVALS; i++) o->roundup_power2_divisions[i] = 0;
  o->garbage_collection_threshold = 0.0;
  o->memory_fraction = 0.0;
  o->expandable_segments = 0;
}

PTSIM_HD void ptsim_alloc_options_set_divisions(PtsimAllocOptions *o, int32_t divisions) {
  for (int32_t i = 0; i < PTSIM_ALLOC_DIVISION_INTERVALS; i++)
    o->roundup_power2_divisions[i] = divisions;
}

PTSIM_HD int ptsim_alloc_options_valid(const PtsimAllocOptions *o) {
  if (o->max_split_size_bytes != 0 && o->max_split_size_bytes < PTSIM_ALLOC_LARGE_BUFFER) return 0;
  if (o->max_non_split_rounding_bytes < PTSIM_ALLOC_LARGE_BUFFER) return 0;
  for (int32_t i = 0; i < PTSIM_ALLOC_DIVISION_INTERVALS; i++) {
    int32_t d = o->roundup_power2_divisions[i];
    if (d < 0 || (d > 1 && !is_pow2((int64_t)d))) return 0;
  }
  double g = o->garbage_collection_threshold;
  if (!(g == 0.0 || (g > 0.0 && g < 1.0))) return 0;
  double f = o->memory_fraction;
  if (!(f == 0.0 || (f > 0.0 && f <= 1.0))) return 0;
  return 1;
}

/* ---- the rules (A3, A4, A5) ---- */

PTSIM_HD int64_t ptsim_alloc_next_division(int64_t size, int32_t divisions) {
  if (size <= 0 || divisions <= 0) return size;
  if (is_pow2(size)) return size;
  int64_t floor2 = (int64_t)1 << log2_floor(size);
  int64_t step = floor2 >> log2_floor((int64_t)divisions);
  if (step == 0) return 2 * floor2;
  return round_up(size, step);
}

/* Divisions of the interval holding size (A3): index log2(size) - 20, clamped. */
PTSIM_HD static int32_t divisions_for(const PtsimAllocOptions *o, int64_t size) {
  int32_t idx = log2_floor(size) - 20;
  if (idx < 0) idx = 0;
  if (idx > PTSIM_ALLOC_DIVISION_INTERVALS - 1) idx = PTSIM_ALLOC_DIVISION_INTERVALS - 1;
  return o->roundup_power2_divisions[idx];
}

PTSIM_HD int64_t ptsim_alloc_round_size(const PtsimAllocOptions *opts, int64_t size) {
  if (size < PTSIM_ALLOC_MIN_BLOCK) return PTSIM_ALLOC_MIN_BLOCK;
  if (opts != NULL) {
    int32_t d = divisions_for(opts, size);
    if (d > 1 && size > PTSIM_ALLOC_MIN_BLOCK * (int64_t)d)
      return ptsim_alloc_next_division(size, d);
  }
  return round_up(size, PTSIM_ALLOC_MIN_BLOCK);
}

PTSIM_HD int64_t ptsim_alloc_segment_size(int64_t size) {
  if (size <= PTSIM_ALLOC_SMALL_SIZE) return PTSIM_ALLOC_SMALL_BUFFER;
  if (size < PTSIM_ALLOC_MIN_LARGE_ALLOC) return PTSIM_ALLOC_LARGE_BUFFER;
  return round_up(size, PTSIM_ALLOC_ROUND_LARGE);
}
