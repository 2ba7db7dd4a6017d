/* alloc_trace_io.h — the plain-text allocator event trace: reading it, and
 * replaying it through a fresh emulated allocator.
 *
 * Format, one event per line; blanks separate fields; '#' starts a comment
 * (a whole line or the end of one); blank lines are ignored:
 *
 *   alloc ID SIZE STREAM   ID any token without blanks or '#'; SIZE bytes,
 *                          a decimal integer >= 0; STREAM an integer >= 0
 *   free ID                ID must be live (allocated, not yet freed)
 *   empty_cache            torch.cuda.empty_cache()
 *
 * An ID may be allocated again after its free.  Tensors still live at the
 * end are fine.
 *
 * Observations: a comment that is exactly "# reserved N" (N bytes, a
 * decimal integer >= 0; blanks around the words are free) records what a
 * real allocator had reserved just after the latest event at or before
 * that line (validate/snapshot_to_trace.py writes one after each event).
 * One before any event is ignored; a later one for the same event wins.
 * "# reserved" followed by one number that is not a byte count ("# reserved
 * -5") is a malformed line; every other comment, "# reserved for later" and
 * "# reserved 9 bytes" included, is plain text.  Every malformed line is one GError in
 * PTSIM_ALLOC_TRACE_ERROR whose message starts "NAME:LINE: ".
 *
 * Shell module (GLib). */
#ifndef PTSIM_ALLOC_TRACE_IO_H
#define PTSIM_ALLOC_TRACE_IO_H

#include <glib.h>
#include "alloc.h"
#include "alloc_trace.h"

#define PTSIM_ALLOC_TRACE_ERROR (ptsim_alloc_trace_error_quark())
GQuark ptsim_alloc_trace_error_quark(void);

typedef enum {
  PTSIM_ALLOC_TRACE_ERROR_NOT_FOUND, /* the file cannot be read */
  PTSIM_ALLOC_TRACE_ERROR_PARSE,     /* a malformed line or a bad lifetime */
  PTSIM_ALLOC_TRACE_ERROR_REPLAY     /* the emulator refused the trace */
} PtsimAllocTraceError;

typedef struct {
  char *name;       /* file name used in messages */
  GArray *events;   /* of PtsimAllocEvent, ids dense, lines 1-based */
  int32_t num_ids;  /* distinct IDs */
  int32_t max_live; /* most tensors live at once */
  /* "# reserved N" observations: of int64_t, one per event, -1 where the
   * event has none; NULL when the trace has no observation at all. */
  GArray *observed_reserved;
  int64_t num_observed; /* events with an observation */
} PtsimAllocTrace;

void ptsim_alloc_trace_free(PtsimAllocTrace *trace);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimAllocTrace, ptsim_alloc_trace_free)

/* Parses TEXT (len bytes, or NUL-terminated when len < 0); NAME is used in
 * messages.  Returns (transfer full) a trace, or NULL with *error set. */
PtsimAllocTrace *ptsim_alloc_trace_parse(const char *text, gssize len, const char *name,
                                         GError **error);

/* Reads and parses the file at PATH.  (transfer full), or NULL with
 * PTSIM_ALLOC_TRACE_ERROR_NOT_FOUND / _PARSE. */
PtsimAllocTrace *ptsim_alloc_trace_load(const char *path, GError **error);

/* Replays TRACE through a new allocator with OPTS (NULL: defaults) and
 * capacity_bytes, sizing the block storage itself, and fills
 * reserved_after[0..events->len) (when not NULL) with the emulated
 * reserved bytes just after each event.  Returns TRUE and fills *out, or
 * FALSE with PTSIM_ALLOC_TRACE_ERROR_REPLAY (bad options). */
gboolean ptsim_alloc_trace_replay(const PtsimAllocTrace *trace, const PtsimAllocOptions *opts,
                                  double capacity_bytes, int64_t *reserved_after,
                                  PtsimAllocReplay *out, GError **error);

#endif /* PTSIM_ALLOC_TRACE_IO_H */
