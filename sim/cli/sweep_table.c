/* sweep_table.c — what a sweep prints: the table with both verdicts and
 * why the best wins (or ties); see sweep_table.h.  Evaluation and the
 * verdicts themselves live in sim/run/sweep.c, the ranking and the CSV in
 * sim/run/sweep_rows.c; the command's flow (held, streamed, shards) in
 * sweep_cmd.c. */
#include "error_bands.h"
#include "units.h"
#include "job_validate.h"
#include "lifetimes.h"
#include "names.h"
#include "report.h"
#include "remedies.h"
#include "schedule.h"
#include "sweep_table.h"
#include "topology.h"
#include "workload.h"

#define GIB PTSIM_GIB_BYTES

/* 1 when any layout of the sweep is of a mixture-of-experts model: the
 * table then shows ep and etp and the exposed all-to-all. */
static gboolean sweep_has_experts(const PtsimSweep *sweep) {
  for (guint i = 0; i < sweep->jobs->len; i++)
    if (g_array_index(sweep->jobs, PtsimJob, i).model.num_experts > 0) return TRUE;
  return FALSE;
}

static void append_layout_words(GString *out, const PtsimJob *j, gboolean experts) {
  const PtsimLayout *l = &j->layout;
  const PtsimSettings *run = &j->settings;
  if (experts)
    g_string_append_printf(out, "%3" G_GINT64_FORMAT " %3" G_GINT64_FORMAT " ", l->ep, l->etp);
  g_string_append_printf(out,
                         "%2" G_GINT64_FORMAT " %2" G_GINT64_FORMAT " %2" G_GINT64_FORMAT
                         " %4" G_GINT64_FORMAT " %2" G_GINT64_FORMAT " %3" G_GINT64_FORMAT
                         " %-9s %-11s",
                         l->tp, l->pp, l->cp, l->dp, l->vp, l->mbs,
                         ptsim_names_get(PTSIM_NAMES_RECOMPUTE, (int)run->recompute),
                         ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)l->schedule));
}

/* The rows shown whose stages are not the plain even split, with that
 * split as Megatron-LM's --pipeline-model-parallel-layout string (the
 * CSV's pipeline_layout): nothing when all are even. */
static void append_uneven_layouts(GString *out, const PtsimSweep *sweep, GArray *order, guint top) {
  gboolean any = FALSE;
  for (guint k = 0; k < MIN(top, order->len); k++) {
    const PtsimJob *j = &g_array_index(sweep->jobs, PtsimJob, g_array_index(order, guint, k));
    g_autofree char *split = ptsim_sweep_layout_string(j);
    if (!split) continue;
    if (!any)
      g_string_append(out, " rank pipeline layout of the uneven splits "
                           "(Megatron-LM --pipeline-model-parallel-layout)\n");
    any = TRUE;
    g_string_append_printf(out, "%5u %s\n", k + 1, split);
  }
}

/* "zero1", "fsdp", "hsdp/8" (its shard group). */
static char *sharding_words(const PtsimLayout *l) {
  const char *word = ptsim_layout_sharding_word(l);
  return strcmp(word, "hsdp") == 0
             ? g_strdup_printf("hsdp/%" G_GINT64_FORMAT, ptsim_sweep_shard_group(l))
             : g_strdup(word);
}

/* The sharding column is shown when the sweep's layouts differ in it. */
static gboolean shows_sharding(const PtsimSweep *sweep) {
  for (guint i = 1; i < sweep->jobs->len; i++) {
    const PtsimLayout *a = &g_array_index(sweep->jobs, PtsimJob, 0).layout;
    const PtsimLayout *b = &g_array_index(sweep->jobs, PtsimJob, i).layout;
    if (a->sharding != b->sharding || a->distributed_optimizer != b->distributed_optimizer ||
        a->optimizer_instances != b->optimizer_instances)
      return TRUE;
  }
  return sweep->jobs->len > 0 &&
         g_array_index(sweep->jobs, PtsimJob, 0).layout.sharding != PTSIM_SHARDING_NONE;
}

/* The gbs column is shown when the sweep's layouts differ in it (two rows
 * would otherwise look the same but for their step time). */
static gboolean shows_gbs(const PtsimSweep *sweep) {
  for (guint i = 1; i < sweep->jobs->len; i++)
    if (g_array_index(sweep->jobs, PtsimJob, i).layout.gbs !=
        g_array_index(sweep->jobs, PtsimJob, 0).layout.gbs)
      return TRUE;
  return FALSE;
}

void ptsim_sweep_count_verdicts(PtsimSweepCounts *c, const PtsimBatchResult *results, guint n) {
  for (guint i = 0; i < n; i++) {
    const PtsimBatchResult *r = &results[i];
    if (r->status != 0) {
      c->failed++;
      continue;
    }
    c->fitting += r->fits != 0;
    c->running += r->runs == 1;
    c->tight += r->runs == 1 && !r->fits;
    c->doubt += r->runs < 0;
    c->emulated += r->runs_from == PTSIM_RUNS_FROM_ALLOCATOR;
  }
}

/* "yes", "no", "?" (not settled). */
static const char *runs_word(const PtsimBatchResult *r) {
  return r->runs == 1 ? "yes" : r->runs == 0 ? "no" : "?";
}

/* Whether the best wins or ties: the layouts that run and whose tokens/s
 * per GPU is within the best's error band (error_bands.h) of it. */
static void append_tie(GString *out, const PtsimSweep *sweep, GArray *order, guint top) {
  guint first = g_array_index(order, guint, 0), ties = 0;
  const PtsimJob *j = &g_array_index(sweep->jobs, PtsimJob, first);
  double best = ptsim_sweep_rank_key(j, &g_array_index(sweep->results, PtsimBatchResult, first));
  PtsimErrorBand band;
  ptsim_error_band_lookup(j, &band);
  if (!band.found) {
    g_string_append_printf(out, "(%s, so no tie is called)\n", band.note);
    return;
  }
  for (guint k = 1; k < order->len; k++) {
    guint i = g_array_index(order, guint, k);
    const PtsimBatchResult *r = &g_array_index(sweep->results, PtsimBatchResult, i);
    if (r->runs != 1 || r->status != 0 ||
        ptsim_sweep_rank_key(&g_array_index(sweep->jobs, PtsimJob, i), r) <
            best * (1.0 - band.mean_abs_error))
      break;
    ties++;
  }
  if (ties == 0)
    g_string_append_printf(out,
                           "a winner: the next layout is more than the +/-%.1f%% error band "
                           "(%s, %" G_GINT64_FORMAT " held-out published runs) behind\n",
                           100.0 * band.mean_abs_error, band.group, band.runs);
  else
    g_string_append_printf(out,
                           "a tie, not a winner: the top %u layouts%s are within the "
                           "+/-%.1f%% error band (%s, %" G_GINT64_FORMAT " held-out published "
                           "runs) of each other; choose among them by what ptsim does not rank "
                           "(memory headroom, GPUs, simplicity)\n",
                           ties + 1, ties + 1 > top ? " (more than shown)" : "",
                           100.0 * band.mean_abs_error, band.group, band.runs);
  if (band.note[0]) g_string_append_printf(out, "(band: %s)\n", band.note);
}

void ptsim_sweep_write_table(GString *out, const PtsimSweep *sweep, const PtsimSweepCounts *c,
                             GArray *order, guint top) {
  g_string_append_printf(
      out,
      "%" G_GUINT64_FORMAT " combinations: %" G_GUINT64_FORMAT
      " valid layouts evaluated on %s; %" G_GUINT64_FORMAT
      " fit by the 80%% rule, %" G_GUINT64_FORMAT " predicted to run (%" G_GUINT64_FORMAT
      " of them tight), %" G_GUINT64_FORMAT " in doubt and out of contention, %" G_GUINT64_FORMAT
      " could not be scheduled (counted with the rejections, not ranked)\n"
      "(mem GiB: analytical estimate, judged by the 80%% rule; alloc GiB: the "
      "caching-allocator emulation, first step and steady state, plus CUDA "
      "context and NCCL, run on %" G_GUINT64_FORMAT " layouts: the fastest that "
      "may run and the rows shown; >N OOM: an allocation failed, N the least it needed; runs: its verdict with a margin of %.2f GiB "
      "+ %.0f%% of the reserved peak; tight: runs although over the 80%% rule)\n",
      sweep->candidates, sweep->valid, sweep->device_used, c->fitting, c->running, c->tight,
      c->doubt, c->failed, c->emulated, PTSIM_LIFETIMES_OUTSIDE_ERROR_BYTES / GIB,
      100.0 * PTSIM_LIFETIMES_RESERVED_ERROR);
  gboolean mc = sweep->mc.samples > 0, experts = sweep_has_experts(sweep);
  gboolean sharding = shows_sharding(sweep), gbs = shows_gbs(sweep);
  /* MFU against the peak of the precision computed in; fp8 layouts also
   * against the bf16 peak, named */
  gboolean fp8 = FALSE;
  for (guint k = 0; k < MIN(top, order->len); k++) {
    const PtsimJob *j = &g_array_index(sweep->jobs, PtsimJob, g_array_index(order, guint, k));
    fp8 |= ptsim_report_mfu_precision(j, 1.0) != 1.0;
  }
  g_string_append_printf(out,
                         "\n rank model            hw         gpus   seq %s%stp pp cp   dp vp mbs "
                         "recompute schedule   ",
                         gbs ? "    gbs " : "", experts ? " ep etp " : "");
  g_string_append(out, sharding ? " sharding  " : "");
  g_string_append(out, "   step_s  tok/s/gpu TFLOP/s   MFU");
  g_string_append(out, fp8 ? " MFU@bf16" : "");
  g_string_append(out, " bubble  mem GiB");
  g_string_append(out, mc ? "  p50_s  p90_s  p99_s" : "");
  g_string_append(out, " 80% rule  alloc GiB runs\n");
  for (guint k = 0; k < MIN(top, order->len); k++) {
    guint i = g_array_index(order, guint, k);
    const PtsimJob *j = &g_array_index(sweep->jobs, PtsimJob, i);
    const PtsimBatchResult *r = &g_array_index(sweep->results, PtsimBatchResult, i);
    g_string_append_printf(out,
                           "%5u %-16.16s %-10.10s %4" G_GINT64_FORMAT " %5" G_GINT64_FORMAT " ",
                           k + 1, j->model.name, j->hw.name, j->layout.gpus, j->layout.seq);
    if (gbs) g_string_append_printf(out, "%7" G_GINT64_FORMAT " ", j->layout.gbs);
    append_layout_words(out, j, experts);
    if (sharding) {
      g_autofree char *words = sharding_words(&j->layout);
      g_string_append_printf(out, " %-10s", words);
    }
    g_string_append_printf(out, " %7.3f %10.0f %7.1f %4.1f%%", r->step_s,
                           r->tokens_per_s / (double)j->layout.gpus, r->tflops_per_gpu,
                           100.0 * ptsim_report_mfu_precision(j, r->mfu));
    if (fp8) g_string_append_printf(out, "    %4.1f%%", 100.0 * r->mfu);
    g_string_append_printf(out, " %5.1f%% %6.1f", 100.0 * r->bubble_fraction, r->total_bytes / GIB);
    if (mc)
      g_string_append_printf(out, " %6.3f %6.3f %6.3f", r->step_p50_s, r->step_p90_s,
                             r->step_p99_s);
    g_string_append_printf(out, "   %-6s", r->fits ? "fits" : "over");
    if (r->runs_from == PTSIM_RUNS_FROM_ALLOCATOR && r->alloc_oom) {
      /* an emulation that failed has no peak: what it needed at least */
      g_autofree char *need =
          g_strdup_printf(">%.1f", MAX(r->alloc_device_peak_bytes,
                                       r->held_floor_bytes + ptsim_lifetimes_outside_bytes(j)) /
                                       GIB);
      g_string_append_printf(out, " %10s OOM", need);
    } else if (r->runs_from == PTSIM_RUNS_FROM_ALLOCATOR)
      g_string_append_printf(out, " %10.1f    ", r->alloc_device_peak_bytes / GIB);
    else
      g_string_append(out, "          -    ");
    g_string_append_printf(out, " %-4s%s%s\n", runs_word(r),
                           r->runs == 1 && !r->fits ? " tight" : "",
                           r->status != 0 ? " (unscheduled)" : "");
  }
  append_uneven_layouts(out, sweep, order, top);
  if (order->len > 0) {
    guint i = g_array_index(order, guint, 0);
    const PtsimBatchResult *best = &g_array_index(sweep->results, PtsimBatchResult, i);
    const PtsimJob *j = &g_array_index(sweep->jobs, PtsimJob, i);
    if (best->runs == 1 && best->status == 0) {
      gboolean moe = j->model.num_experts > 0;
      /* an MoE layout also names its exposed all-to-all (dispatch and combine) */
      g_autofree char *ep =
          moe ? g_strdup_printf(", ep all-to-all %.3f at ep %" G_GINT64_FORMAT " (%s)",
                                best->exposed_comm_s[PTSIM_COMM_EP], j->layout.ep,
                                j->layout.ep * j->layout.etp <= ptsim_topology_domain_size(&j->hw)
                                    ? "inside an NVLink domain"
                                    : "across NVLink domains")
              : g_strdup("");
      double exposed = best->exposed_comm_s[0] + best->exposed_comm_s[1] + best->exposed_comm_s[2] +
                       best->exposed_comm_s[3];
      if (moe) exposed += best->exposed_comm_s[PTSIM_COMM_EP];
      g_string_append_printf(
          out,
          "\nwhy the best wins: bubble %.1f%%; exposed communication %.3f s of the %.3f s step "
          "(tp %.3f, cp %.3f, pp %.3f, dp %.3f%s); ",
          100.0 * best->bubble_fraction, exposed, best->step_s, best->exposed_comm_s[0],
          best->exposed_comm_s[1], best->exposed_comm_s[2], best->exposed_comm_s[3], ep);
      if (best->runs_from == PTSIM_RUNS_FROM_ALLOCATOR)
        g_string_append_printf(out,
                               "device peak %.1f GiB of %.1f (%.0f%%), the estimate %.0f%% of "
                               "the GPU (%s the %.0f%% rule)\n",
                               best->alloc_device_peak_bytes / GIB, j->hw.memory_bytes / GIB,
                               100.0 * best->alloc_device_peak_bytes / j->hw.memory_bytes,
                               100.0 * best->usage_fraction, best->fits ? "within" : "over",
                               100.0 * j->settings.memory_threshold);
      else
        g_string_append_printf(out,
                               "memory margin %.1f GiB below the %.0f%% threshold (%.0f%% "
                               "of the GPU used)\n",
                               (j->settings.memory_threshold - best->usage_fraction) *
                                   j->hw.memory_bytes / GIB,
                               100.0 * j->settings.memory_threshold, 100.0 * best->usage_fraction);
      append_tie(out, sweep, order, top);
    }
  }
  if (g_hash_table_size(sweep->rejected) > 0) {
    g_string_append(out, "\nrejected combinations, by reason:\n");
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, sweep->rejected);
    while (g_hash_table_iter_next(&it, &key, &value))
      g_string_append_printf(out, "%8u  %s\n", GPOINTER_TO_UINT(value), (const char *)key);
  }
}

/* SETTINGS, and the layout's split as a --pipeline-model-parallel-layout
 * string where the command's --decoder-first/last-pipeline-num-layers
 * (ptsim_remedy_layout_words) cannot say it: runs of virtual stages (a
 * --pipeline-layout's; the V schedules' split is their own), or the
 * embedding and loss in the split when the settings do not say so.
 * (transfer full) */
static char **words_with_split(const PtsimJob *j, const char *const *settings) {
  const PtsimLayout *l = &j->layout;
  gboolean accounted = FALSE;
  for (gsize i = 0; settings && settings[i]; i++)
    accounted |= g_str_has_prefix(settings[i], "--account-for-");
  gboolean runs = l->vstage_runs > 0 && !ptsim_schedule_is_vshape((int32_t)l->schedule);
  g_autofree char *split = runs || ((l->account_embedding || l->account_loss) && !accounted)
                               ? ptsim_sweep_layout_string(j)
                               : NULL;
  GPtrArray *w = g_ptr_array_new();
  for (gsize i = 0; settings && settings[i]; i++) g_ptr_array_add(w, g_strdup(settings[i]));
  if (split) {
    g_ptr_array_add(w, g_strdup("--pipeline-model-parallel-layout"));
    g_ptr_array_add(w, g_steal_pointer(&split));
  }
  g_ptr_array_add(w, NULL);
  return (char **)g_ptr_array_free(w, FALSE);
}

/* How many of the closest layouts get their remedies searched. */
#define CLOSEST_SHOWN 2

void ptsim_sweep_write_nothing_runs(GString *out, const PtsimSweep *sweep,
                                    const PtsimSweepCounts *c, const char *const *settings) {
  if (c->running > 0 || sweep->valid == 0) return;
  g_string_append_printf(out,
                         "NOTHING RUNS: none of the %" G_GUINT64_FORMAT
                         " valid layouts is predicted to run (%" G_GUINT64_FORMAT
                         " ruled out by what they must hold, %" G_GUINT64_FORMAT
                         " by the allocator emulation, %" G_GUINT64_FORMAT
                         " could not be scheduled); the closest to running, by what they must "
                         "hold against the GPU, and what would make them run:\n",
                         sweep->valid, sweep->valid - c->emulated - c->failed, c->emulated,
                         c->failed);
  g_autoptr(GArray) closest = ptsim_sweep_closest(sweep, CLOSEST_SHOWN);
  for (guint k = 0; k < closest->len; k++) {
    guint i = g_array_index(closest, guint, k);
    const PtsimJob *j = &g_array_index(sweep->jobs, PtsimJob, i);
    const PtsimBatchResult *r = &g_array_index(sweep->results, PtsimBatchResult, i);
    g_auto(GStrv) extra = words_with_split(j, settings);
    g_auto(GStrv) words = ptsim_remedy_layout_words(j, (const char *const *)extra);
    g_autoptr(GString) command = g_string_new(NULL);
    for (gsize w = 0; words[w]; w++) ptsim_remedy_append_word(command, words[w]);
    g_string_append_printf(out,
                           "\n%u. ptsim predict%s\n   holds at least %.1f GiB with context "
                           "and NCCL, of the GPU's %.1f\n",
                           k + 1, command->str,
                           (r->held_floor_bytes + ptsim_lifetimes_outside_bytes(j)) / GIB,
                           j->hw.memory_bytes / GIB);
    PtsimAllocOptions alloc;
    ptsim_alloc_options_init(&alloc);
    PtsimRemedies remedies;
    ptsim_remedies_find(j, &alloc, NULL, &remedies);
    ptsim_remedies_write_text(out, &remedies, j, (const char *const *)words);
    ptsim_remedies_clear(&remedies);
  }
  g_string_append_c(out, '\n');
}

void ptsim_sweep_write_best_per_group(GString *out, const PtsimSweep *sweep, const GArray *groups,
                                      const GArray *best) {
  if (groups->len < 2) return;
  gboolean uneven = FALSE;
  for (guint g = 0; g < groups->len && !uneven; g++) {
    guint i = g_array_index(best, guint, g);
    g_autofree char *split =
        i == G_MAXUINT ? NULL : ptsim_sweep_layout_string(&g_array_index(sweep->jobs, PtsimJob, i));
    uneven = split != NULL;
  }
  g_string_append(out,
                  "\nthe best layout that runs per model, hardware and GPU count (tokens/s per "
                  "GPU, and the job's):\n"
                  "model            hw          gpus   seq   gbs tp pp cp   dp vp mbs recompute "
                  "schedule      step_s  tok/s/gpu   tok/s(job)   MFU");
  g_string_append(out, uneven ? " pipeline layout\n" : "\n");
  for (guint g = 0; g < groups->len; g++) {
    guint i = g_array_index(best, guint, g);
    const PtsimJob *first = &g_array_index(sweep->jobs, PtsimJob, g_array_index(groups, guint, g));
    if (i == G_MAXUINT) {
      g_string_append_printf(out, "%-16.16s %-10.10s %5" G_GINT64_FORMAT "  nothing runs\n",
                             first->model.name, first->hw.name, first->layout.gpus);
      continue;
    }
    const PtsimJob *j = &g_array_index(sweep->jobs, PtsimJob, i);
    const PtsimBatchResult *r = &g_array_index(sweep->results, PtsimBatchResult, i);
    g_string_append_printf(out,
                           "%-16.16s %-10.10s %5" G_GINT64_FORMAT " %5" G_GINT64_FORMAT
                           " %5" G_GINT64_FORMAT " ",
                           j->model.name, j->hw.name, j->layout.gpus, j->layout.seq, j->layout.gbs);
    append_layout_words(out, j, FALSE);
    g_string_append_printf(out, " %7.3f %10.0f %12.0f %4.1f%%", r->step_s,
                           r->tokens_per_s / (double)j->layout.gpus, r->tokens_per_s,
                           100.0 * ptsim_report_mfu_precision(j, r->mfu));
    g_autofree char *split = uneven ? ptsim_sweep_layout_string(j) : NULL;
    if (split) g_string_append_printf(out, " %s", split);
    g_string_append_c(out, '\n');
  }
}
