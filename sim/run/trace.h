/* trace.h — the simulated step as a Chrome trace-event JSON file that
 * ui.perfetto.dev (and chrome://tracing) opens: what each pipeline stage's
 * streams did, and why a stream waited.
 *
 * Layout of the file, as a Perfetto user expects it: one process per
 * pipeline stage ("pipeline stage S", labelled with its layers and GPU
 * ranks, sorted by stage), one thread per stream that stage uses:
 *   compute   the schedule's items (forward, backward, ...; args: microbatch,
 *             chunk, step), each split into nested slices: compute,
 *             recompute, and the collectives it blocks on ("TP exposed",
 *             "CP exposed"); the waits between items ("bubble" while the
 *             input is still being computed upstream, "PP wait" while it is
 *             in flight); the DP tail ("DP wait") and the optimizer;
 *   TP, CP    the tensor- and context-parallel collectives, one slice per
 *             item that has them;
 *   PP send, PP recv   each activation (gradient) transfer to (from) the
 *             neighbouring stage, joined by a flow arrow from send to recv;
 *   DP        gradient reduce-scatter / all-reduce and parameter all-gather.
 * Times are microseconds with nanosecond decimals, from the first step's
 * start; `steps` repeats the (deterministic, so identical) step that many
 * times, step k starting at k x step_s.
 *
 * The engine records each item's start and end only; the split of an item
 * into compute, recompute and collectives is the workload's own breakdown
 * (workload.h: forward_comm_s, backward_comm_s, recompute_s of the item's
 * chunk) scaled to the item's duration.  The collectives of the item's
 * layers are drawn as one block each: in the run they interleave with the
 * GEMMs layer by layer, and their sum is what the engine reports as
 * exposed.
 *
 * Shell module (GLib).  Not here: the simulation (engine.h), the figure
 * (plots/). */
#ifndef PTSIM_TRACE_H
#define PTSIM_TRACE_H

#include <glib.h>
#include "engine.h"
#include "plan.h"
#include "workload.h"

/* The threads of a stage's process, in display order. */
typedef enum {
  PTSIM_TRACK_COMPUTE = 0,
  PTSIM_TRACK_TP = 1,
  PTSIM_TRACK_CP = 2,
  PTSIM_TRACK_PP_SEND = 3,
  PTSIM_TRACK_PP_RECV = 4,
  PTSIM_TRACK_DP = 5,
  PTSIM_TRACK_EP = 6 /* an MoE model's token dispatch and combine */
} PtsimTrackId;
#define PTSIM_TRACKS 7

/* What a slice is. */
typedef enum {
  PTSIM_SLICE_ITEM = 0,       /* a schedule item or once-per-step work (PtsimTraceKind) */
  PTSIM_SLICE_COMPUTE = 1,    /* inside an item: its own math */
  PTSIM_SLICE_RECOMPUTE = 2,  /* inside a backward: forward work re-run */
  PTSIM_SLICE_TP_EXPOSED = 3, /* inside an item: the compute stream blocked on TP */
  PTSIM_SLICE_CP_EXPOSED = 4, /* inside an item: blocked on the CP ring */
  PTSIM_SLICE_TP = 5,         /* a TP collective (TP track) */
  PTSIM_SLICE_CP = 6,         /* a CP exchange (CP track) */
  PTSIM_SLICE_PP_SEND = 7,
  PTSIM_SLICE_PP_RECV = 8,
  PTSIM_SLICE_BUBBLE = 9,      /* compute idle: its input is still being computed upstream */
  PTSIM_SLICE_PP_WAIT = 10,    /* compute idle: its input is in flight */
  PTSIM_SLICE_DP_WAIT = 11,    /* compute done, the step waits for the DP reduction */
  PTSIM_SLICE_EP_EXPOSED = 12, /* inside an item: blocked on the MoE dispatch / combine */
  PTSIM_SLICE_EP = 13,         /* an all-to-all (or all-gather) dispatch and combine (EP track) */
  PTSIM_SLICE_DP_EXPOSED = 14, /* inside an item: blocked on its FSDP units' collectives */
  PTSIM_SLICE_DP = 15          /* the FSDP units' collectives the item waited for (DP track) */
} PtsimSliceKind;

typedef struct {
  int32_t stage, track;      /* pid, tid */
  int32_t slice;             /* PtsimSliceKind */
  int32_t kind;              /* PtsimTraceKind of the item (-1 for waits) */
  int32_t microbatch, chunk; /* -1: none */
  int32_t step;              /* 0-based */
  int64_t start_ns, end_ns;  /* from the first step's start */
  int64_t flow;              /* > 0: the PP transfer this send/recv belongs to */
} PtsimTraceSlice;

/* The slices of `steps` steps from the engine's trace of one (records
 * past its capacity are lost: returns NULL) and the job's workload.
 * (transfer full) */
GArray *ptsim_trace_slices(const PtsimPlan *plan, const PtsimWorkload *workload,
                           const PtsimTrace *trace, const PtsimTimeResult *time, int32_t steps);

/* Writes the trace of `steps` steps (1 to 1000) of the plan's job, whose
 * engine run left `trace` and `time`, to `path` by the output policy
 * (output.h: nothing half-written, no device or input replaced).  Errors:
 * PTSIM_CONFIG_ERROR_INVALID for a truncated trace or more slices than
 * Perfetto's JSON importer loads comfortably (the message says how many
 * and what to shrink), PTSIM_OUTPUT_ERROR writing. */
gboolean ptsim_trace_write(const char *path, const PtsimPlan *plan, const PtsimTrace *trace,
                           const PtsimTimeResult *time, int32_t steps, GError **error);

#endif /* PTSIM_TRACE_H */
