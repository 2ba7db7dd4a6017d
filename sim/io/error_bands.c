/* error_bands.c — validate/error_bands.ini into the band of one job; see
 * error_bands.h. */
#include <string.h>
#include "config.h"
#include "config_int.h"
#include "error_bands.h"
#include "input.h"
#include "job_validate.h"
#include "names.h"
#include "plan.h"

/* 1 when the comma-separated list holds word. */
static gboolean listed(const char *list, const char *word) {
  g_auto(GStrv) parts = g_strsplit(list ? list : "", ",", -1);
  for (char **p = parts; *p; p++)
    if (strcmp(g_strstrip(*p), word) == 0) return TRUE;
  return FALSE;
}

static void append_note(PtsimErrorBand *out, const char *text) {
  if (out->note[0]) g_strlcat(out->note, "; ", sizeof out->note);
  g_strlcat(out->note, text, sizeof out->note);
}

/* The range keys of a band, each optional (absent: no bound, no note). */
typedef struct {
  double params_lo, params_hi; /* billions of parameters */
  int64_t gpus_lo, gpus_hi, seq_lo, seq_hi;
} Ranges;

static gboolean read_ranges(const PtsimIniFile *ini, const char *group, Ranges *r, GError **error) {
  const PtsimRange billions = {0.0, 1e6, TRUE, TRUE};
  memset(r, 0, sizeof *r);
  return ptsim_ini_double(ini, group, "params_b_min", billions, FALSE, NULL, &r->params_lo,
                          error) &&
         ptsim_ini_double(ini, group, "params_b_max", billions, FALSE, NULL, &r->params_hi,
                          error) &&
         ptsim_ini_int(ini, group, "gpus_min", 1, PTSIM_JOB_GPUS_MAX, FALSE, &r->gpus_lo, error) &&
         ptsim_ini_int(ini, group, "gpus_max", 1, PTSIM_JOB_GPUS_MAX, FALSE, &r->gpus_hi, error) &&
         ptsim_ini_int(ini, group, "seq_min", 1, PTSIM_CONFIG_INT_MAX, FALSE, &r->seq_lo, error) &&
         ptsim_ini_int(ini, group, "seq_max", 1, PTSIM_CONFIG_INT_MAX, FALSE, &r->seq_hi, error);
}

/* A note when VALUE (named WHAT) lies outside the runs' [LO, HI]; HI 0: no range known. */
static void note_count_range(PtsimErrorBand *out, const char *what, int64_t value, int64_t lo,
                             int64_t hi) {
  if (hi <= 0 || (value >= lo && value <= hi)) return;
  g_autofree char *t = g_strdup_printf("%s is outside the calibrated range (%" G_GINT64_FORMAT
                                       "-%" G_GINT64_FORMAT ")",
                                       what, (gint64)lo, (gint64)hi);
  append_note(out, t);
}

/* The range notes: where the job lies outside what the band's runs cover. */
static void note_ranges(const Ranges *r, const PtsimJob *job, const char *precision,
                        PtsimErrorBand *out) {
  double params;
  ptsim_plan_model_parameters(&job->model, job->layout.seq, &params, NULL);
  params /= 1e9;
  /* Sizes are compared at the file's 4 significant digits. */
  if (r->params_hi > 0.0 && (params < 0.995 * r->params_lo || params > 1.005 * r->params_hi)) {
    g_autofree char *t = g_strdup_printf("%s with %.3gB parameters is outside the calibrated "
                                         "range (%.4g-%.4gB)",
                                         precision, params, r->params_lo, r->params_hi);
    append_note(out, t);
  }
  g_autofree char *gpus = g_strdup_printf("%" G_GINT64_FORMAT " GPUs", (gint64)job->layout.gpus);
  note_count_range(out, gpus, job->layout.gpus, r->gpus_lo, r->gpus_hi);
  g_autofree char *seq = g_strdup_printf("seq %" G_GINT64_FORMAT, (gint64)job->layout.seq);
  note_count_range(out, seq, job->layout.seq, r->seq_lo, r->seq_hi);
}

/* The band of GROUP, which covers the job: its numbers, each through the
 * strict parser with its range (a fraction of the step time, at most
 * 10 = 1000%). */
static gboolean read_band(const PtsimIniFile *ini, const char *group, PtsimErrorBand *out,
                          Ranges *ranges, GError **error) {
  const PtsimRange error_fraction = {0.0, 10.0, TRUE, TRUE};
  const PtsimRange bias = {-10.0, 10.0, TRUE, TRUE};
  int64_t runs = 0;
  if (!ptsim_ini_double(ini, group, "mean_abs_error", error_fraction, TRUE, NULL,
                        &out->mean_abs_error, error) ||
      !ptsim_ini_double(ini, group, "max_abs_error", error_fraction, TRUE, NULL,
                        &out->max_abs_error, error) ||
      !ptsim_ini_int(ini, group, "runs", 1, 1000000, TRUE, &runs, error) ||
      !ptsim_ini_double(ini, group, "bias", bias, FALSE, NULL, &out->bias, error) ||
      !read_ranges(ini, group, ranges, error))
    return FALSE;
  out->runs = runs;
  return TRUE;
}

/* A technique the job uses that no published run measured: its step time
 * has no band ("uncalibrated"), and no other class's stands in for it. */
static const char *uncalibrated_technique(const PtsimJob *job) {
  if (job->settings.lora_rank > 0) return "LoRA fine-tuning (--lora-rank)";
  if (job->settings.offload_modules)
    return "activation offloading (--fine-grained-activation-offloading)";
  if (job->settings.moe_ep_comm_overlap)
    return "combined 1F1B's expert all-to-all overlap (--overlap-moe-expert-parallel-comm)";
  /* torchtitan's and NeMo AutoModel's MoE runs: none published in scope */
  if (job->layout.sharding == PTSIM_SHARDING_PARAMS &&
      job->settings.fsdp_impl == PTSIM_FSDP_TORCH && job->model.num_experts > 0)
    return "PyTorch FSDP2 with experts (--fsdp-impl torch, a mixture-of-experts model)";
  return NULL;
}

void ptsim_error_band_lookup_data(const PtsimJob *job, const char *data, gsize len,
                                  PtsimErrorBand *out) {
  g_auto(PtsimIniFile) ini = {PTSIM_ERROR_BANDS_FILE, NULL, NULL, FALSE};
  g_autoptr(GError) error = NULL;
  const char *precision = ptsim_names_get(PTSIM_NAMES_PRECISION, (int)job->settings.precision);
  const char *technique = uncalibrated_technique(job);
  memset(out, 0, sizeof *out);
  /* no published run uses a V-shaped schedule: no band of another
   * schedule's runs stands in for one (validate/REPORT.md's classes) */
  if (job->layout.schedule == PTSIM_SCHEDULE_ZBV ||
      job->layout.schedule == PTSIM_SCHEDULE_DUALPIPEV) {
    g_snprintf(out->note, sizeof out->note,
               "uncalibrated: no published run of the V-shaped schedule %s was held out, so "
               "ptsim cannot quote its error",
               ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)job->layout.schedule));
    return;
  }
  if (technique) {
    g_snprintf(out->note, sizeof out->note,
               "uncalibrated: no published run measures %s, so ptsim has no error band for it",
               technique);
    return;
  }
  if (!ptsim_ini_parse(&ini, g_strndup(data, len), len, &error)) {
    g_snprintf(out->note, sizeof out->note, "no error band: %s", error->message);
    return;
  }
  g_auto(GStrv) groups = g_key_file_get_groups(ini.kf, NULL);
  for (char **g = groups; *g; g++) {
    g_autofree char *profiles = g_key_file_get_string(ini.kf, *g, "profiles", NULL);
    g_autofree char *precisions = g_key_file_get_string(ini.kf, *g, "precisions", NULL);
    if (!listed(profiles, job->hw.name) || !listed(precisions, precision)) continue;
    Ranges ranges;
    if (!read_band(&ini, *g, out, &ranges, &error)) {
      memset(out, 0, sizeof *out);
      g_snprintf(out->note, sizeof out->note, "no error band: %s", error->message);
      return;
    }
    g_autofree char *sources = g_key_file_get_string(ini.kf, *g, "sources", NULL);
    g_strlcpy(out->sources, sources ? sources : "", sizeof out->sources);
    g_strlcpy(out->group, *g, sizeof out->group);
    out->found = TRUE;
    note_ranges(&ranges, job, precision, out);
    /* the published MoE rows are validation only (validate/README.md) */
    if (job->model.num_experts > 0)
      append_note(out, "a mixture-of-experts model: the band's runs are all dense, its "
                       "expert-parallel (ep) all-to-all is not behind it");
    return;
  }
  g_snprintf(out->note, sizeof out->note,
             "no error band: no published %s runs on %s were held out (%s)", precision,
             job->hw.name, PTSIM_ERROR_BANDS_FILE);
}

void ptsim_error_band_lookup(const PtsimJob *job, PtsimErrorBand *out) {
  g_autofree char *path = g_build_filename(ptsim_config_data_dir(), PTSIM_ERROR_BANDS_FILE, NULL);
  g_autofree char *contents = NULL;
  gsize len = 0;
  g_autoptr(GError) error = NULL;
  if (!ptsim_input_read(path, "error bands file", PTSIM_INPUT_MAX_TEXT, &contents, &len, &error)) {
    memset(out, 0, sizeof *out);
    g_snprintf(out->note, sizeof out->note, "no error band: %s", error->message);
    return;
  }
  ptsim_error_band_lookup_data(job, contents, len, out);
}
