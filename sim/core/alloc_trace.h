/* alloc_trace.h — replaying a stream of tensor alloc/free events through the
 * caching-allocator emulation (alloc.h) and summarising what it reserved.
 *
 * What it is: the event record and the replay loop, in the core (PTSIM_HD,
 * no allocation, no I/O), so the engine, a trace file and a GPU batch can
 * all drive the allocator the same way.  Events name tensors by a dense id
 * in [0, num_ids); the caller gives one int32 per id for the live handle.
 * Reading the text format is alloc_trace_io.h (shell).
 *
 * Replay semantics: an alloc that fails for capacity is an OOM; it is
 * counted (the first one is reported with its event index and source line),
 * the replay goes on, and the later free of that id is skipped.  A free of
 * an id that is not live, or an alloc of a live id, stops the replay with
 * PTSIM_ALLOC_ERR_HANDLE; running out of block slots stops it with
 * PTSIM_ALLOC_ERR_NO_BLOCKS (give more slots and replay again).
 *
 * Fragmentation here is 1 - peak allocated / peak reserved (GMLake's
 * 1 - utilisation; allocated == active in this emulation). */
#ifndef PTSIM_ALLOC_TRACE_H
#define PTSIM_ALLOC_TRACE_H

#include <stdint.h>
#include "alloc.h"
#include "hd.h"

#define PTSIM_ALLOC_EVENT_ALLOC 0
#define PTSIM_ALLOC_EVENT_FREE 1
#define PTSIM_ALLOC_EVENT_EMPTY_CACHE 2

/* handles[] values that are not handles */
#define PTSIM_ALLOC_ID_DEAD (-1) /* not allocated */
#define PTSIM_ALLOC_ID_OOM (-2)  /* its alloc failed; its free is skipped */

typedef struct {
  int32_t kind;       /* PTSIM_ALLOC_EVENT_* */
  int32_t id;         /* tensor id in [0, num_ids) (alloc, free) */
  int64_t size_bytes; /* alloc: bytes asked for */
  int32_t stream;     /* alloc: stream (>= 0) */
  int32_t line;       /* source line for reports, 0 when none */
} PtsimAllocEvent;

typedef struct {
  int64_t events; /* events replayed */
  int64_t allocs, frees, empty_caches;
  int64_t skipped_frees;             /* frees of ids whose alloc failed */
  int64_t ooms;                      /* allocs that failed for capacity */
  int64_t first_oom_event;           /* index of the first, -1 when none */
  int32_t first_oom_line;            /* its line, 0 when none (or unknown) */
  int64_t first_oom_size_bytes;      /* what it asked for */
  int64_t first_oom_allocated_bytes; /* allocated / reserved just after it */
  int64_t first_oom_reserved_bytes;
  int64_t peak_allocated_bytes;
  int64_t peak_reserved_bytes;
  int64_t peak_requested_bytes;
  double fragmentation;         /* 1 - peak allocated / peak reserved; 0 when
                                   nothing was reserved */
  int64_t inactive_split_bytes; /* at the end */
  int64_t inactive_split_bytes_peak;
  int64_t error_event;   /* the event that stopped the replay, -1 */
  PtsimAllocStats stats; /* at the end */
} PtsimAllocReplay;

/* Runs events[0..n) through allocator a (which may already hold state; the
 * peaks are a's own).  handles[0..num_ids) is scratch the replay fills
 * (initialised here to PTSIM_ALLOC_ID_DEAD).  reserved_after, when not
 * NULL, gets reserved_after[e] = reserved bytes just after event e (for
 * e < out->events; entries from the stopping event on are left as they
 * were): what a real allocator's trace is compared with.  Fills *out in
 * every case.  Returns 0, PTSIM_ALLOC_ERR_HANDLE (bad id or lifetime;
 * out->error_event), PTSIM_ALLOC_ERR_NO_BLOCKS (out of slots;
 * out->error_event) or PTSIM_ALLOC_ERR_ARGS (a negative size or stream,
 * unknown kind). */
PTSIM_HD int32_t ptsim_alloc_replay(PtsimAllocator *a, const PtsimAllocEvent *events, int64_t n,
                                    int32_t *handles, int32_t num_ids, int64_t *reserved_after,
                                    PtsimAllocReplay *out);

#endif /* PTSIM_ALLOC_TRACE_H */
