/* trace.c — Chrome/Perfetto trace of the simulated step; see trace.h.
 *
 * Two passes: ptsim_trace_slices derives every slice from the engine's
 * records (items and once-per-step work, with start and end) and the
 * workload (what an item is made of, how long a PP transfer takes); the
 * writer prints them with the metadata Perfetto's JSON importer reads
 * (process_name, process_labels, process_sort_index, thread_name,
 * thread_sort_index).  Flow events follow the trace-event format's v1
 * rules: an "s" inside the send slice and an "f" with "bp":"e" inside the
 * receive slice, both with the same cat, name and id, so each binds to the
 * slice that encloses it. */
#include <math.h>
#include <string.h>
#include "config.h"
#include "kernel_registry.h"
#include "units.h"
#include "json_writer.h"
#include "names.h"
#include "output.h"
#include "trace.h"

/* Perfetto's JSON importer holds the whole file in memory; a few million
 * events (hundreds of MB) is where the browser UI gives up. */
#define MAX_SLICES 4000000

static const char *const track_names[PTSIM_TRACKS] = {"compute", "TP comm", "CP comm", "PP send",
                                                      "PP recv", "DP comm", "EP comm"};

static const char *item_name(int32_t kind) {
  static const char *const names[] = {"forward",   "backward",  "backward-input", "backward-weight",
                                      "grad-sync", "optimizer", "param-gather"};
  return kind >= 0 && kind < (int32_t)G_N_ELEMENTS(names) ? names[kind] : "?";
}

/* Name of a slice as it appears in the trace ("forward", "PP wait", ...). */
static const char *slice_name(const PtsimTraceSlice *s) {
  static const char *const names[] = {NULL,         "compute",
                                      "recompute",  "TP exposed",
                                      "CP exposed", "TP collective",
                                      "CP ring",    "PP send",
                                      "PP recv",    "bubble",
                                      "PP wait",    "DP wait",
                                      "EP exposed", "EP dispatch + combine",
                                      "DP exposed", "FSDP units"};
  if (s->slice == PTSIM_SLICE_ITEM) return item_name(s->kind);
  return s->slice > 0 && s->slice < (int32_t)G_N_ELEMENTS(names) ? names[s->slice] : "?";
}

static int64_t to_ns(double seconds) { return (int64_t)llround(seconds * PTSIM_NS_PER_S); }

static void add(GArray *out, int32_t stage, int32_t track, int32_t slice, int32_t kind, int32_t mb,
                int32_t chunk, int32_t step, int64_t start, int64_t end, int64_t flow) {
  if (end <= start && slice != PTSIM_SLICE_ITEM) return; /* nothing to see */
  PtsimTraceSlice s = {stage, track, slice, kind, mb, chunk, step, start, end, flow};
  g_array_append_val(out, s);
}

/* Where an item's output goes: the stage and chunk that consume it, or -1
 * (the last forward feeds the loss on the same stage; weight gradients go
 * nowhere). */
static int32_t consumer(int32_t kind, int32_t stage, int32_t chunk, int32_t p, int32_t v,
                        int32_t *to_chunk) {
  if (kind == PTSIM_TRACE_FORWARD) {
    if (stage < p - 1) {
      *to_chunk = chunk;
      return stage + 1;
    }
    if (chunk < v - 1) {
      *to_chunk = chunk + 1;
      return 0;
    }
  } else if (kind == PTSIM_TRACE_BACKWARD || kind == PTSIM_TRACE_BACKWARD_INPUT) {
    if (stage > 0) {
      *to_chunk = chunk;
      return stage - 1;
    }
    if (chunk > 0) {
      *to_chunk = chunk - 1;
      return p - 1;
    }
  }
  return -1;
}

/* The item's nested slices and its collectives, from the chunk's work
 * scaled to the item's duration. */
static void split_item(GArray *out, const PtsimWorkload *w, const PtsimTraceRecord *r, int32_t step,
                       int64_t t0) {
  PtsimWork work;
  ptsim_workload_chunk(w, r->stage, r->chunk, &work);
  double expected = 0, tp = 0, cp = 0, ep = 0, dp = 0, rc = 0;
  switch (r->kind) {
  case PTSIM_TRACE_FORWARD:
    expected = work.forward_s;
    tp = work.forward_comm_s[PTSIM_COMM_TP];
    cp = work.forward_comm_s[PTSIM_COMM_CP];
    ep = work.forward_comm_s[PTSIM_COMM_EP];
    dp = work.forward_comm_s[PTSIM_COMM_DP];
    break;
  case PTSIM_TRACE_BACKWARD:
  case PTSIM_TRACE_BACKWARD_INPUT:
    expected = work.backward_input_s +
               (r->kind == PTSIM_TRACE_BACKWARD ? work.backward_weight_s : 0.0);
    tp = work.backward_comm_s[PTSIM_COMM_TP];
    cp = work.backward_comm_s[PTSIM_COMM_CP];
    ep = work.backward_comm_s[PTSIM_COMM_EP];
    dp = work.backward_comm_s[PTSIM_COMM_DP];
    /* the re-run forward's own collectives are in backward_comm_s; its
     * math is recompute_s less the forward's share of collectives */
    if (work.forward_s > 0) {
      double fwd_comm = 0;
      for (int k = 0; k < PTSIM_COMM_KINDS; k++) fwd_comm += work.forward_comm_s[k];
      rc = work.recompute_s * MAX(0.0, 1.0 - fwd_comm / work.forward_s);
    }
    break;
  default:
    expected = work.backward_weight_s;
    break;
  }
  int64_t start = t0 + r->start_ns, end = t0 + r->end_ns, d = end - start;
  double scale = expected > 0 ? (double)d / (expected * PTSIM_NS_PER_S) : 0.0;
  int64_t rc_ns = MIN(d, (int64_t)llround(rc * PTSIM_NS_PER_S * scale));
  int64_t tp_ns = MIN(d - rc_ns, (int64_t)llround(tp * PTSIM_NS_PER_S * scale));
  int64_t cp_ns = MIN(d - rc_ns - tp_ns, (int64_t)llround(cp * PTSIM_NS_PER_S * scale));
  int64_t ep_ns = MIN(d - rc_ns - tp_ns - cp_ns, (int64_t)llround(ep * PTSIM_NS_PER_S * scale));
  int64_t dp_ns = MIN(d - rc_ns - tp_ns - cp_ns - ep_ns,
                      (int64_t)llround(dp * PTSIM_NS_PER_S * scale));
  int64_t at = start;
  add(out, r->stage, PTSIM_TRACK_COMPUTE, PTSIM_SLICE_RECOMPUTE, r->kind, r->microbatch, r->chunk,
      step, at, at + rc_ns, 0);
  at += rc_ns;
  int64_t compute_end = end - tp_ns - cp_ns - ep_ns - dp_ns;
  add(out, r->stage, PTSIM_TRACK_COMPUTE, PTSIM_SLICE_COMPUTE, r->kind, r->microbatch, r->chunk,
      step, at, compute_end, 0);
  at = compute_end;
  const int32_t exposed[4] = {PTSIM_SLICE_TP_EXPOSED, PTSIM_SLICE_CP_EXPOSED,
                              PTSIM_SLICE_EP_EXPOSED, PTSIM_SLICE_DP_EXPOSED};
  const int32_t stream[4] = {PTSIM_SLICE_TP, PTSIM_SLICE_CP, PTSIM_SLICE_EP, PTSIM_SLICE_DP};
  const int32_t track[4] = {PTSIM_TRACK_TP, PTSIM_TRACK_CP, PTSIM_TRACK_EP, PTSIM_TRACK_DP};
  const int64_t len[4] = {tp_ns, cp_ns, ep_ns, dp_ns};
  for (int k = 0; k < 4; k++) {
    add(out, r->stage, PTSIM_TRACK_COMPUTE, exposed[k], r->kind, r->microbatch, r->chunk, step, at,
        at + len[k], 0);
    add(out, r->stage, track[k], stream[k], r->kind, r->microbatch, r->chunk, step, at, at + len[k],
        0);
    at += len[k];
  }
}

static int cmp_start(const void *a, const void *b) {
  const PtsimTraceRecord *x = *(const PtsimTraceRecord *const *)a;
  const PtsimTraceRecord *y = *(const PtsimTraceRecord *const *)b;
  return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

GArray *ptsim_trace_slices(const PtsimPlan *plan, const PtsimWorkload *w, const PtsimTrace *trace,
                           const PtsimTimeResult *time, int32_t steps) {
  g_return_val_if_fail(plan && w && trace && time && steps >= 1, NULL);
  if (trace->count > trace->capacity || (trace->count > 0 && !trace->records)) return NULL;
  int32_t p = (int32_t)plan->num_stages, v = (int32_t)plan->num_chunks;
  int32_t m = (int32_t)plan->num_microbatches;
  int64_t pp_ns = to_ns(w->pp_transfer_s), step_ns = to_ns(time->step_s);
  /* end of each forward and input-gradient item, by (stage, microbatch, chunk) */
  gsize n_ends = (gsize)p * (gsize)MAX(m, 1) * (gsize)v;
  g_autofree int64_t *fwd_end = g_new(int64_t, n_ends), *bwd_end = g_new(int64_t, n_ends);
  for (gsize i = 0; i < n_ends; i++) fwd_end[i] = bwd_end[i] = -1;
  g_autoptr(GPtrArray) items = g_ptr_array_new(); /* compute items, by stage then start */
  for (int64_t i = 0; i < trace->count; i++) {
    const PtsimTraceRecord *r = &trace->records[i];
    if (r->kind > PTSIM_TRACE_BACKWARD_WEIGHT || r->stage < 0 || r->stage >= p ||
        r->microbatch < 0 || r->microbatch >= m || r->chunk < 0 || r->chunk >= v)
      continue;
    gsize at = ((gsize)r->stage * m + r->microbatch) * v + r->chunk;
    if (r->kind == PTSIM_TRACE_FORWARD)
      fwd_end[at] = r->end_ns;
    else if (r->kind != PTSIM_TRACE_BACKWARD_WEIGHT)
      bwd_end[at] = r->end_ns;
    g_ptr_array_add(items, (gpointer)r);
  }
  g_ptr_array_sort(items, cmp_start);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(PtsimTraceSlice));
  int64_t flow = 0;
  for (int32_t k = 0; k < steps; k++) {
    int64_t t0 = (int64_t)k * step_ns;
    int64_t last_end[PTSIM_MAX_STAGES] = {0}, dp_from[PTSIM_MAX_STAGES] = {0};
    for (guint i = 0; i < items->len; i++) {
      const PtsimTraceRecord *r = g_ptr_array_index(items, i);
      int32_t s = r->stage, to_chunk = 0;
      /* the wait before it: for the producer (bubble), then for the transfer */
      int64_t landed = 0, sent = 0;
      if (r->kind == PTSIM_TRACE_FORWARD && !(s == 0 && r->chunk == 0)) {
        int32_t from = s > 0 ? s - 1 : p - 1, from_chunk = s > 0 ? r->chunk : r->chunk - 1;
        sent = fwd_end[((gsize)from * m + r->microbatch) * v + from_chunk];
        landed = sent + pp_ns;
      } else if (r->kind == PTSIM_TRACE_BACKWARD || r->kind == PTSIM_TRACE_BACKWARD_INPUT) {
        if (s == p - 1 && r->chunk == v - 1) { /* the loss: this stage's own forward */
          sent = landed = fwd_end[((gsize)s * m + r->microbatch) * v + r->chunk];
        } else {
          int32_t from = s < p - 1 ? s + 1 : 0, from_chunk = s < p - 1 ? r->chunk : r->chunk + 1;
          sent = bwd_end[((gsize)from * m + r->microbatch) * v + from_chunk];
          landed = sent + pp_ns;
        }
      }
      int64_t free_at = last_end[s], start = r->start_ns;
      if (start > free_at) {
        int64_t bubble_end = MIN(start, MAX(free_at, sent));
        add(out, s, PTSIM_TRACK_COMPUTE, PTSIM_SLICE_BUBBLE, -1, r->microbatch, r->chunk, k,
            t0 + free_at, t0 + bubble_end, 0);
        add(out, s, PTSIM_TRACK_COMPUTE, PTSIM_SLICE_PP_WAIT, -1, r->microbatch, r->chunk, k,
            t0 + MAX(free_at, sent), t0 + MIN(start, landed), 0);
        /* an idle stretch the inputs do not explain (none in the engine's
         * rules) is shown as bubble, so the compute track has no holes */
        add(out, s, PTSIM_TRACK_COMPUTE, PTSIM_SLICE_BUBBLE, -1, r->microbatch, r->chunk, k,
            t0 + MAX(free_at, landed), t0 + start, 0);
      }
      last_end[s] = MAX(last_end[s], r->end_ns);
      dp_from[s] = last_end[s];
      add(out, s, PTSIM_TRACK_COMPUTE, PTSIM_SLICE_ITEM, r->kind, r->microbatch, r->chunk, k,
          t0 + r->start_ns, t0 + r->end_ns, 0);
      split_item(out, w, r, k, t0);
      int32_t to = pp_ns > 0 ? consumer(r->kind, s, r->chunk, p, v, &to_chunk) : -1;
      if (to >= 0) {
        ++flow;
        add(out, s, PTSIM_TRACK_PP_SEND, PTSIM_SLICE_PP_SEND, r->kind, r->microbatch, r->chunk, k,
            t0 + r->end_ns, t0 + r->end_ns + pp_ns, flow);
        add(out, to, PTSIM_TRACK_PP_RECV, PTSIM_SLICE_PP_RECV, r->kind, r->microbatch, to_chunk, k,
            t0 + r->end_ns, t0 + r->end_ns + pp_ns, flow);
      }
    }
    /* once per step: the DP stream, the optimizer, and the wait for them */
    for (int64_t i = 0; i < trace->count; i++) {
      const PtsimTraceRecord *r = &trace->records[i];
      if (r->kind <= PTSIM_TRACE_BACKWARD_WEIGHT || r->stage < 0 || r->stage >= p) continue;
      gboolean on_dp = r->kind == PTSIM_TRACE_GRAD_SYNC || r->kind == PTSIM_TRACE_PARAM_GATHER;
      if (r->kind == PTSIM_TRACE_OPTIMIZER && r->start_ns > dp_from[r->stage])
        add(out, r->stage, PTSIM_TRACK_COMPUTE, PTSIM_SLICE_DP_WAIT, -1, -1, -1, k,
            t0 + dp_from[r->stage], t0 + r->start_ns, 0);
      add(out, r->stage, on_dp ? PTSIM_TRACK_DP : PTSIM_TRACK_COMPUTE, PTSIM_SLICE_ITEM, r->kind,
          r->microbatch, r->chunk, k, t0 + r->start_ns, t0 + r->end_ns, 0);
    }
  }
  return out;
}

/* ---- writing ---- */

/* "us.nnn": microseconds with the nanoseconds as decimals. */
static void append_us(GString *s, int64_t ns) {
  g_string_append_printf(s, "%" G_GINT64_FORMAT ".%03d", ns / 1000, (int)(ns % 1000));
}

static void append_metadata(GString *out, const char *what, int64_t pid, int64_t tid,
                            const char *key, const char *text, int64_t number) {
  PtsimJson json;
  ptsim_json_init(&json, out);
  ptsim_json_begin_object(&json, NULL);
  ptsim_json_string(&json, "ph", "M");
  ptsim_json_string(&json, "name", what);
  ptsim_json_int(&json, "pid", pid);
  if (tid >= 0) ptsim_json_int(&json, "tid", tid);
  ptsim_json_begin_object(&json, "args");
  if (text)
    ptsim_json_string(&json, key, text);
  else
    ptsim_json_int(&json, key, number);
  ptsim_json_end_object(&json);
  ptsim_json_end_object(&json);
  g_string_append(out, ",\n");
}

static const char *slice_cat(const PtsimTraceSlice *s) {
  switch (s->slice) {
  case PTSIM_SLICE_ITEM:
    return s->track == PTSIM_TRACK_DP ? "comm" : "compute";
  case PTSIM_SLICE_COMPUTE:
  case PTSIM_SLICE_RECOMPUTE:
    return "compute";
  case PTSIM_SLICE_BUBBLE:
  case PTSIM_SLICE_PP_WAIT:
  case PTSIM_SLICE_DP_WAIT:
    return "wait";
  case PTSIM_SLICE_PP_SEND:
  case PTSIM_SLICE_PP_RECV:
    return "pp";
  default:
    return "comm";
  }
}

gboolean ptsim_trace_write(const char *path, const PtsimPlan *plan, const PtsimTrace *trace,
                           const PtsimTimeResult *time, int32_t steps, GError **error) {
  g_return_val_if_fail(path && plan && trace && time, FALSE);
  const PtsimJob *job = &plan->job;
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  if (steps < 1 || steps > 1000) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--trace-steps %d: allowed are 1 to 1000", steps);
    return FALSE;
  }
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  PtsimCostParams params;
  ptsim_kernel_registry_params(&plan->job.hw, &params);
  ptsim_workload_build(plan, &params, w);
  g_autoptr(GArray) slices = ptsim_trace_slices(plan, w, trace, time, steps);
  if (!slices) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--trace: the engine's trace is truncated (%" G_GINT64_FORMAT
                " of %" G_GINT64_FORMAT " records kept)",
                trace->capacity, trace->count);
    return FALSE;
  }
  if (slices->len > MAX_SLICES) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--trace: %u slices (%d step%s of %" G_GINT64_FORMAT " stages x %" G_GINT64_FORMAT
                " microbatches x vp %" G_GINT64_FORMAT ") is more than Perfetto's JSON importer "
                "loads comfortably (%d); use fewer --trace-steps, or trace a smaller gbs",
                slices->len, steps, steps == 1 ? "" : "s", l->pp, plan->num_microbatches,
                plan->num_chunks, MAX_SLICES);
    return FALSE;
  }
  gboolean used[PTSIM_MAX_STAGES][PTSIM_TRACKS];
  memset(used, 0, sizeof used);
  for (guint i = 0; i < slices->len; i++) {
    const PtsimTraceSlice *s = &g_array_index(slices, PtsimTraceSlice, i);
    used[s->stage][s->track] = TRUE;
  }

  g_autoptr(GString) out = g_string_sized_new(256 + (gsize)slices->len * 150);
  g_autofree char *what =
      g_strdup_printf("%s on %" G_GINT64_FORMAT " x %s: tp %" G_GINT64_FORMAT
                      " pp %" G_GINT64_FORMAT " cp %" G_GINT64_FORMAT " dp %" G_GINT64_FORMAT
                      " vp %" G_GINT64_FORMAT ", mbs %" G_GINT64_FORMAT " gbs %" G_GINT64_FORMAT
                      " seq %" G_GINT64_FORMAT ", recompute %s, schedule %s; step %.6f s",
                      job->model.name, l->gpus, job->hw.name, l->tp, l->pp, l->cp, l->dp, l->vp,
                      l->mbs, l->gbs, l->seq,
                      ptsim_names_get(PTSIM_NAMES_RECOMPUTE, run->recompute),
                      ptsim_names_get(PTSIM_NAMES_SCHEDULE, l->schedule), time->step_s);
  {
    PtsimJson json;
    ptsim_json_init(&json, out);
    g_string_append(out, "{\"displayTimeUnit\": \"ms\", \"otherData\": ");
    ptsim_json_begin_object(&json, NULL);
    ptsim_json_string(&json, "ptsim", what);
    ptsim_json_string(
        &json, "note",
        job->model.num_experts > 0
            ? "one GPU per pipeline stage; an item's TP/CP/EP collectives and "
              "recompute are drawn as one block each (in the run they interleave "
              "with the GEMMs layer by layer)"
            : "one GPU per pipeline stage; an item's TP/CP collectives and recompute "
              "are drawn as one block each (in the run they interleave with the GEMMs "
              "layer by layer)");
    ptsim_json_int(&json, "steps", steps);
    ptsim_json_end_object(&json);
    g_string_append(out, ",\n\"traceEvents\": [\n");
  }
  int64_t per_stage = l->tp * l->cp * l->dp;
  for (int64_t s = 0; s < l->pp; s++) {
    g_autofree char *name = g_strdup_printf("pipeline stage %" G_GINT64_FORMAT, s);
    g_autofree char *labels =
        g_strdup_printf("layers %" G_GINT64_FORMAT "-%" G_GINT64_FORMAT ", ranks %" G_GINT64_FORMAT
                        "-%" G_GINT64_FORMAT " (tp %" G_GINT64_FORMAT " x cp %" G_GINT64_FORMAT
                        " x dp %" G_GINT64_FORMAT "; one drawn)",
                        plan->stage_first_layer[s],
                        plan->stage_first_layer[s] + plan->stage_layers[s] - 1, s * per_stage,
                        (s + 1) * per_stage - 1, l->tp, l->cp, l->dp);
    append_metadata(out, "process_name", s, -1, "name", name, 0);
    append_metadata(out, "process_labels", s, -1, "labels", labels, 0);
    append_metadata(out, "process_sort_index", s, -1, "sort_index", NULL, s);
    for (int t = 0; t < PTSIM_TRACKS; t++) {
      if (!used[s][t]) continue;
      append_metadata(out, "thread_name", s, t, "name", track_names[t], 0);
      append_metadata(out, "thread_sort_index", s, t, "sort_index", NULL, t);
    }
  }
  for (guint i = 0; i < slices->len; i++) {
    const PtsimTraceSlice *s = &g_array_index(slices, PtsimTraceSlice, i);
    const char *name = slice_name(s);
    g_string_append_printf(out, "{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": ", name,
                           slice_cat(s));
    append_us(out, s->start_ns);
    g_string_append(out, ", \"dur\": ");
    append_us(out, s->end_ns - s->start_ns);
    g_string_append_printf(out, ", \"pid\": %d, \"tid\": %d, \"args\": {\"step\": %d", s->stage,
                           s->track, s->step);
    if (s->microbatch >= 0)
      g_string_append_printf(out, ", \"microbatch\": %d, \"chunk\": %d", s->microbatch, s->chunk);
    if (s->slice != PTSIM_SLICE_ITEM && s->kind >= 0)
      g_string_append_printf(out, ", \"item\": \"%s\"", item_name(s->kind));
    if (s->slice == PTSIM_SLICE_TP || s->slice == PTSIM_SLICE_CP)
      g_string_append_printf(out, ", \"layers\": %" G_GINT64_FORMAT, plan->chunk_layers[s->stage]);
    g_string_append(out, "}}");
    if (s->flow > 0) {
      /* the flow's end point: inside the slice, so "bp":"e" binds it there */
      gboolean send = s->slice == PTSIM_SLICE_PP_SEND;
      g_string_append_printf(out,
                             ",\n{\"name\": \"PP transfer\", \"cat\": \"pp\", \"ph\": \"%s\", "
                             "%s\"id\": %" G_GINT64_FORMAT ", \"ts\": ",
                             send ? "s" : "f", send ? "" : "\"bp\": \"e\", ", s->flow);
      append_us(out, s->start_ns + (s->end_ns - s->start_ns) / 2);
      g_string_append_printf(out, ", \"pid\": %d, \"tid\": %d}", s->stage, s->track);
    }
    g_string_append(out, i + 1 < slices->len ? ",\n" : "\n");
  }
  if (slices->len == 0 && g_str_has_suffix(out->str, ",\n")) g_string_truncate(out, out->len - 2);
  g_string_append(out, "]}\n");
  /* the output policy: never half-written, no device or input replaced */
  return ptsim_output_write(path, out->str, out->len, error);
}
