/* torchtitan_pipeline.c — a torchtitan config's pipeline: the schedule by
 * PyTorch's name and the stage split (torchtitan's generated one, or a
 * module_fqns_per_model_part), in ptsim's layout terms; see torchtitan.h
 * ("split"). */
#include <string.h>

#include "config.h"
#include "torchtitan_int.h"

/* ---- pipeline ---- */

static const struct {
  const char *name;
  gboolean multi; /* several stages per rank */
  int schedule;   /* PtsimSchedule, or -1: not modelled */
} schedules[] = {
    {"1F1B", FALSE, PTSIM_SCHEDULE_1F1B},
    {"GPipe", FALSE, PTSIM_SCHEDULE_GPIPE},
    {"PipelineScheduleSingle", FALSE, -1},
    {"Interleaved1F1B", TRUE, PTSIM_SCHEDULE_INTERLEAVED},
    {"LoopedBFS", TRUE, -1},
    {"InterleavedZeroBubble", TRUE, -1},
    {"ZBVZeroBubble", TRUE, PTSIM_SCHEDULE_ZBV},
    {"DualPipeV", TRUE, PTSIM_SCHEDULE_DUALPIPEV},
    {"PipelineScheduleMulti", TRUE, -1},
};

/* torchtitan's split (generate_llm_fqn_per_model_part): the embedding and
 * the output count as IN and OUT layers, the N <= layers + in + out stages
 * share layers + in + out evenly, the first `extra` stages one more.
 * Writes the transformer layers of each virtual stage; FALSE (with the
 * error) when torchtitan refuses the split. */
static gboolean torchtitan_split(const Reader *R, int64_t n, int64_t in, int64_t out,
                                 int64_t *layers) {
  int64_t effective = R->layers + in + out; /* >= n: the caller checked */
  int64_t base = effective / n, extra = effective % n;
  if (in > base || out > base)
    return ptsim_tt_invalid(R, "parallelism", "pipeline_parallel_first_stage_less_layers",
                            "first/last-stage weights %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT
                            " exceed the %" G_GINT64_FORMAT
                            " layers per stage (torchtitan refuses it)",
                            (gint64)in, (gint64)out, (gint64)base);
  for (int64_t s = 0; s < n; s++) {
    int64_t mine = base + (s < extra ? 1 : 0);
    if (n == 1)
      mine = R->layers;
    else if (s == 0)
      mine -= in;
    else if (s == n - 1)
      mine -= out;
    layers[s] = mine;
  }
  return TRUE;
}

/* The stages per rank a schedule takes (PyTorch's checks), KEY the field
 * that set them. */
static gboolean stages_ok(const Reader *R, const char *key, size_t k, int64_t per_rank) {
  if (!schedules[k].multi && per_rank != 1)
    return ptsim_tt_invalid(R, "parallelism", key,
                            "the single-stage schedule %s needs 1 stage per rank, this gives "
                            "%" G_GINT64_FORMAT,
                            schedules[k].name, (gint64)per_rank);
  if ((schedules[k].schedule == PTSIM_SCHEDULE_ZBV ||
       schedules[k].schedule == PTSIM_SCHEDULE_DUALPIPEV) &&
      per_rank != 2)
    return ptsim_tt_invalid(R, "parallelism", key,
                            "%s needs exactly 2 stages per rank (PyTorch refuses it), this gives "
                            "%" G_GINT64_FORMAT,
                            schedules[k].name, (gint64)per_rank);
  if (schedules[k].multi && per_rank < 2)
    return ptsim_tt_invalid(R, "parallelism", key,
                            "the multi-stage schedule %s needs >= 2 stages per rank, this gives "
                            "%" G_GINT64_FORMAT,
                            schedules[k].name, (gint64)per_rank);
  return TRUE;
}

/* module_fqns_per_model_part: each model part (virtual stage) names its
 * modules, tok_embeddings, layers.N, norm, output (lm_head in current
 * torchtitan).  ptsim's stages hold consecutive layers in order, the
 * embedding on the first and the norm and output on the last: such a
 * split is exact (*layers: each part's transformer layers, 1); another is
 * recorded as unmodelled and torchtitan's generated split stands in (-1);
 * a name the model does not have, or layers left out, is an error (0). */
static int fqns_split(const Reader *R, const PtsimTomlEntry *e, int64_t **layers) {
  const char *P = "parallelism", *K = "module_fqns_per_model_part";
  guint n = e->value.items->len;
  g_autofree int64_t *out = g_new0(int64_t, n);
  int64_t next = 0;
  gboolean exact = TRUE;
  for (guint s = 0; s < n; s++) {
    const PtsimTomlValue *part = e->value.items->pdata[s];
    for (guint i = 0; i < part->items->len; i++) {
      const char *w = ((const PtsimTomlValue *)part->items->pdata[i])->string;
      int64_t idx = -1;
      if (g_str_has_prefix(w, "layers.") && w[7] != '\0' && strlen(w + 7) <= 9 &&
          strspn(w + 7, "0123456789") == strlen(w + 7))
        idx = g_ascii_strtoll(w + 7, NULL, 10);
      if (strcmp(w, "tok_embeddings") == 0) {
        if (s != 0 && exact)
          ptsim_tt_unmodelled(R, P, K,
                              "tok_embeddings in model part %u: ptsim places the embedding on "
                              "the first stage",
                              s);
        exact = exact && s == 0;
      } else if (strcmp(w, "norm") == 0 || strcmp(w, "output") == 0 || strcmp(w, "lm_head") == 0) {
        if (s != n - 1 && exact)
          ptsim_tt_unmodelled(R, P, K,
                              "%s in model part %u of %u: ptsim places the final norm and "
                              "the output on the last stage",
                              w, s, n);
        exact = exact && s == n - 1;
      } else if (idx >= 0 && idx < R->layers) {
        if (idx != next && exact)
          ptsim_tt_unmodelled(R, P, K,
                              "%s in model part %u: ptsim's stages hold consecutive layers in "
                              "order (expected layers.%" G_GINT64_FORMAT ")",
                              w, s, (gint64)next);
        exact = exact && idx == next;
        next++;
        out[s]++;
      } else {
        ptsim_tt_invalid(R, P, K,
                         "'%s' is not a module of %s: expected tok_embeddings, layers.0 .. "
                         "layers.%" G_GINT64_FORMAT ", norm, output",
                         w, R->out->model, (gint64)(R->layers - 1));
        return 0;
      }
    }
  }
  if (next != R->layers) {
    ptsim_tt_invalid(R, P, K,
                     "the model parts hold %" G_GINT64_FORMAT " of %s's %" G_GINT64_FORMAT
                     " layers",
                     (gint64)next, R->out->model, (gint64)R->layers);
    return 0;
  }
  if (!exact) return -1;
  *layers = g_steal_pointer(&out);
  return 1;
}

gboolean ptsim_tt_read_pipeline(Reader *R) {
  PtsimLayout *l = &R->out->layout;
  const char *P = "parallelism";
  l->vp = 1;
  l->schedule = PTSIM_SCHEDULE_1F1B;
  if (l->pp == 1) return TRUE;
  const char *csv = ptsim_tt_get_str(R, P, "pipeline_parallel_schedule_csv", "");
  if (csv[0] != '\0')
    ptsim_tt_unmodelled(R, P, "pipeline_parallel_schedule_csv",
                        "a pipeline schedule from a CSV file is not modelled (ptsim builds 1F1B, "
                        "interleaved 1F1B and GPipe)");
  const char *name = ptsim_tt_get_str(R, P, "pipeline_parallel_schedule", "1F1B");
  size_t k = 0;
  while (k < G_N_ELEMENTS(schedules) && g_ascii_strcasecmp(schedules[k].name, name) != 0) k++;
  if (k == G_N_ELEMENTS(schedules))
    return ptsim_tt_invalid(
        R, P, "pipeline_parallel_schedule",
        "[parallelism] pipeline_parallel_schedule = '%s' is not a PyTorch schedule; "
        "allowed (case-insensitive): 1F1B, GPipe, Interleaved1F1B, LoopedBFS, "
        "InterleavedZeroBubble, ZBVZeroBubble, DualPipeV, PipelineScheduleSingle, "
        "PipelineScheduleMulti",
        name);
  if (schedules[k].schedule < 0)
    ptsim_tt_unmodelled(R, P, "pipeline_parallel_schedule",
                        "pipeline_parallel_schedule = '%s' is not modelled; ptsim models 1F1B, "
                        "Interleaved1F1B, GPipe, ZBVZeroBubble and DualPipeV",
                        name);
  else
    l->schedule = (PtsimSchedule)schedules[k].schedule;
  int64_t in = ptsim_tt_get_int(R, P, "pipeline_parallel_first_stage_less_layers", 1);
  int64_t out = ptsim_tt_get_int(R, P, "pipeline_parallel_last_stage_less_layers", 1);
  if (in < 0 || out < 0 || in > PTSIM_CONFIG_INT_MAX || out > PTSIM_CONFIG_INT_MAX)
    return ptsim_tt_invalid(R, P,
                            in < 0 || in > PTSIM_CONFIG_INT_MAX
                                ? "pipeline_parallel_first_stage_less_layers"
                                : "pipeline_parallel_last_stage_less_layers",
                            "first/last-stage weights must be integers from 0 to %" G_GINT64_FORMAT,
                            (gint64)PTSIM_CONFIG_INT_MAX);
  int64_t per_rank = schedules[k].multi ? 2 : 1;
  const PtsimTomlEntry *lps = ptsim_tt_entry(R, P, "pipeline_parallel_layers_per_stage");
  if (lps != NULL) {
    if (lps->value.integer < 1 || lps->value.integer > PTSIM_CONFIG_INT_MAX)
      return ptsim_tt_invalid(
          R, P, "pipeline_parallel_layers_per_stage",
          "pipeline_parallel_layers_per_stage must be an integer from 1 to %" G_GINT64_FORMAT,
          (gint64)PTSIM_CONFIG_INT_MAX);
    int64_t stages = (R->layers + in + out + lps->value.integer - 1) / lps->value.integer;
    if (stages % l->pp != 0)
      return ptsim_tt_invalid(R, P, "pipeline_parallel_layers_per_stage",
                              "%" G_GINT64_FORMAT " virtual stages (ceil((layers %" G_GINT64_FORMAT
                              " + %" G_GINT64_FORMAT " + %" G_GINT64_FORMAT ") / %" G_GINT64_FORMAT
                              ")) are not divisible by pipeline_parallel_degree %" G_GINT64_FORMAT,
                              (gint64)stages, (gint64)R->layers, (gint64)in, (gint64)out,
                              (gint64)lps->value.integer, (gint64)l->pp);
    per_rank = stages / l->pp;
    if (!stages_ok(R, "pipeline_parallel_layers_per_stage", k, per_rank)) return FALSE;
  }
  const PtsimTomlEntry *fqns = ptsim_tt_entry(R, P, "module_fqns_per_model_part");
  g_autofree int64_t *given = NULL;
  if (fqns != NULL) {
    int got = fqns_split(R, fqns, &given);
    if (got == 0) return FALSE;
    if (got > 0) {
      int64_t parts = (int64_t)fqns->value.items->len;
      if (parts % l->pp != 0)
        return ptsim_tt_invalid(R, P, "module_fqns_per_model_part",
                                "%" G_GINT64_FORMAT " model parts are not divisible by "
                                "pipeline_parallel_degree %" G_GINT64_FORMAT,
                                (gint64)parts, (gint64)l->pp);
      per_rank = parts / l->pp;
      if (!stages_ok(R, "module_fqns_per_model_part", k, per_rank)) return FALSE;
    } else {
      g_clear_pointer(&given, g_free);
    }
  }
  int64_t n = l->pp * per_rank;
  if (n > R->layers + in + out)
    return ptsim_tt_invalid(R, P, "pipeline_parallel_degree",
                            "%" G_GINT64_FORMAT
                            " pipeline stages are more than the %" G_GINT64_FORMAT
                            " layers (+ embedding and output weights) of the model",
                            (gint64)n, (gint64)(R->layers + in + out));
  g_autofree int64_t *layers = g_steal_pointer(&given);
  if (layers == NULL) {
    layers = g_new0(int64_t, n);
    if (!torchtitan_split(R, n, in, out, layers)) return FALSE;
  }
  l->vp = per_rank;
  gboolean even = TRUE;
  for (int64_t s = 1; s < n; s++) even = even && layers[s] == layers[0];
  if (even) return TRUE;
  g_autoptr(GString) split = g_string_new("");
  for (int64_t s = 0; s < n; s++)
    g_string_append_printf(split, "%s%" G_GINT64_FORMAT, s ? "," : "", (gint64)layers[s]);
  gboolean middle_even = TRUE;
  for (int64_t s = 2; s < n - 1; s++) middle_even = middle_even && layers[s] == layers[1];
  if (per_rank == 1 && middle_even && n >= 2) {
    l->first_stage_layers = layers[0]; /* Megatron's uneven ends: exact */
    l->last_stage_layers = layers[n - 1];
    return TRUE;
  }
  /* any other split: the virtual stages' layer counts as runs of equal
   * ones, as a --pipeline-model-parallel-layout gives them (job.h) */
  int32_t runs = 0;
  for (int64_t s = 0; s < n && runs <= PTSIM_LAYOUT_RUNS; s++) {
    if (s > 0 && layers[s] == layers[s - 1]) {
      l->vstage_run_count[runs - 1]++;
      continue;
    }
    if (runs < PTSIM_LAYOUT_RUNS) {
      l->vstage_run_count[runs] = 1;
      l->vstage_run_layers[runs] = (int32_t)layers[s];
    }
    runs++;
  }
  if (runs <= PTSIM_LAYOUT_RUNS) {
    l->vstage_runs = runs;
    return TRUE;
  }
  memset(l->vstage_run_count, 0, sizeof l->vstage_run_count);
  memset(l->vstage_run_layers, 0, sizeof l->vstage_run_layers);
  ptsim_tt_unmodelled(
      R, P, "pipeline_parallel_degree",
      "torchtitan's stage split (layers %s) cannot be expressed: more than %d runs of "
      "equal virtual stages",
      split->str, PTSIM_LAYOUT_RUNS);
  return TRUE;
}
