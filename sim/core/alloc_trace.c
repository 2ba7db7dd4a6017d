/* alloc_trace.c — the replay loop over alloc/free events; see
 * alloc_trace.h.  Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "alloc_trace.h"

PTSIM_HD static void finish(const PtsimAllocator *a, PtsimAllocReplay *out) {
  ptsim_alloc_stats(a, &out->stats);
  out->peak_allocated_bytes = out->stats.allocated_bytes_peak;
  out->peak_reserved_bytes = out->stats.reserved_bytes_peak;
  out->peak_requested_bytes = out->stats.requested_bytes_peak;
  out->inactive_split_bytes = out->stats.inactive_split_bytes;
  out->inactive_split_bytes_peak = out->stats.inactive_split_bytes_peak;
  out->fragmentation = 0.0;
  if (out->peak_reserved_bytes > 0)
    out->fragmentation = 1.0 - (double)out->peak_allocated_bytes / (double)out->peak_reserved_bytes;
}

PTSIM_HD int32_t ptsim_alloc_replay(PtsimAllocator *a, const PtsimAllocEvent *events, int64_t n,
                                    int32_t *handles, int32_t num_ids, int64_t *reserved_after,
                                    PtsimAllocReplay *out) {
  out->events = out->allocs = out->frees = out->empty_caches = 0;
  out->skipped_frees = out->ooms = 0;
  out->first_oom_event = -1;
  out->first_oom_line = 0;
  out->first_oom_size_bytes = 0;
  out->first_oom_allocated_bytes = out->first_oom_reserved_bytes = 0;
  out->error_event = -1;
  for (int32_t i = 0; i < num_ids; i++) handles[i] = PTSIM_ALLOC_ID_DEAD;
  int32_t rc = 0;
  for (int64_t e = 0; e < n && rc == 0; e++) {
    const PtsimAllocEvent *ev = &events[e];
    int has_id = ev->kind == PTSIM_ALLOC_EVENT_ALLOC || ev->kind == PTSIM_ALLOC_EVENT_FREE;
    if (has_id && (ev->id < 0 || ev->id >= num_ids)) {
      rc = PTSIM_ALLOC_ERR_HANDLE;
    } else if (ev->kind == PTSIM_ALLOC_EVENT_ALLOC) {
      if (handles[ev->id] >= 0) {
        rc = PTSIM_ALLOC_ERR_HANDLE;
      } else {
        int32_t h = ptsim_alloc_malloc(a, ev->size_bytes, ev->stream);
        if (h >= 0) {
          handles[ev->id] = h;
          out->allocs += 1;
        } else if (h == PTSIM_ALLOC_ERR_OOM) {
          handles[ev->id] = PTSIM_ALLOC_ID_OOM;
          out->allocs += 1;
          out->ooms += 1;
          if (out->first_oom_event < 0) {
            out->first_oom_event = e;
            out->first_oom_line = ev->line;
            out->first_oom_size_bytes = ev->size_bytes;
            out->first_oom_allocated_bytes = a->stats.allocated_bytes;
            out->first_oom_reserved_bytes = a->stats.reserved_bytes;
          }
        } else {
          rc = h;
        }
      }
    } else if (ev->kind == PTSIM_ALLOC_EVENT_FREE) {
      int32_t h = handles[ev->id];
      if (h == PTSIM_ALLOC_ID_OOM) {
        handles[ev->id] = PTSIM_ALLOC_ID_DEAD;
        out->frees += 1;
        out->skipped_frees += 1;
      } else if (h < 0 || ptsim_alloc_free(a, h) != 0) {
        rc = PTSIM_ALLOC_ERR_HANDLE;
      } else {
        handles[ev->id] = PTSIM_ALLOC_ID_DEAD;
        out->frees += 1;
      }
    } else if (ev->kind == PTSIM_ALLOC_EVENT_EMPTY_CACHE) {
      ptsim_alloc_empty_cache(a);
      out->empty_caches += 1;
    } else {
      rc = PTSIM_ALLOC_ERR_ARGS;
    }
    if (rc != 0) {
      out->error_event = e;
    } else {
      out->events += 1;
      if (reserved_after) reserved_after[e] = a->stats.reserved_bytes;
    }
  }
  finish(a, out);
  return rc;
}
