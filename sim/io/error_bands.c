/* error_bands.c — validate/error_bands.ini into the band of one job; see
 * error_bands.h. */
#include <string.h>
#include "config.h"
#include "error_bands.h"
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

/* The range notes: where the job lies outside what the band's runs cover. */
static void note_ranges(GKeyFile *kf, const char *group, const PtsimJob *job,
                        const char *precision, PtsimErrorBand *out) {
  double params;
  ptsim_plan_model_parameters(&job->model, job->layout.seq, &params, NULL);
  params /= 1e9;
  double lo = g_key_file_get_double(kf, group, "params_b_min", NULL);
  double hi = g_key_file_get_double(kf, group, "params_b_max", NULL);
  gint64 gpus_lo = g_key_file_get_int64(kf, group, "gpus_min", NULL);
  gint64 gpus_hi = g_key_file_get_int64(kf, group, "gpus_max", NULL);
  gint64 seq_lo = g_key_file_get_int64(kf, group, "seq_min", NULL);
  gint64 seq_hi = g_key_file_get_int64(kf, group, "seq_max", NULL);
  /* Sizes are compared at the file's 4 significant digits. */
  if (hi > 0.0 && (params < 0.995 * lo || params > 1.005 * hi)) {
    g_autofree char *t = g_strdup_printf("%s with %.3gB parameters is outside the calibrated "
                                         "range (%.4g-%.4gB)", precision, params, lo, hi);
    append_note(out, t);
  }
  if (gpus_hi > 0 && (job->layout.gpus < gpus_lo || job->layout.gpus > gpus_hi)) {
    g_autofree char *t = g_strdup_printf("%" G_GINT64_FORMAT " GPUs is outside the calibrated "
                                         "range (%" G_GINT64_FORMAT "-%" G_GINT64_FORMAT ")",
                                         job->layout.gpus, gpus_lo, gpus_hi);
    append_note(out, t);
  }
  if (seq_hi > 0 && (job->layout.seq < seq_lo || job->layout.seq > seq_hi)) {
    g_autofree char *t = g_strdup_printf("seq %" G_GINT64_FORMAT " is outside the calibrated "
                                         "range (%" G_GINT64_FORMAT "-%" G_GINT64_FORMAT ")",
                                         job->layout.seq, seq_lo, seq_hi);
    append_note(out, t);
  }
}

void ptsim_error_band_lookup(const PtsimJob *job, PtsimErrorBand *out) {
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_autoptr(GError) error = NULL;
  g_autofree char *path =
      g_build_filename(ptsim_config_data_dir(), PTSIM_ERROR_BANDS_FILE, NULL);
  const char *precision = ptsim_names_get(PTSIM_NAMES_PRECISION, (int)job->layout.precision);
  memset(out, 0, sizeof *out);
  if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &error)) {
    g_snprintf(out->note, sizeof out->note, "no error band: %s: %s", PTSIM_ERROR_BANDS_FILE,
               error->message);
    return;
  }
  g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
  for (char **g = groups; *g; g++) {
    g_autofree char *profiles = g_key_file_get_string(kf, *g, "profiles", NULL);
    g_autofree char *precisions = g_key_file_get_string(kf, *g, "precisions", NULL);
    if (!listed(profiles, job->hw.name) || !listed(precisions, precision)) continue;
    g_autoptr(GError) e1 = NULL, e2 = NULL, e3 = NULL;
    out->mean_abs_error = g_key_file_get_double(kf, *g, "mean_abs_error", &e1);
    out->max_abs_error = g_key_file_get_double(kf, *g, "max_abs_error", &e2);
    out->runs = g_key_file_get_int64(kf, *g, "runs", &e3);
    if (e1 || e2 || e3 || !(out->mean_abs_error >= 0.0) || out->runs < 1) {
      g_snprintf(out->note, sizeof out->note, "no error band: %s [%s]: %s",
                 PTSIM_ERROR_BANDS_FILE, *g,
                 e1 ? e1->message : e2 ? e2->message : e3 ? e3->message : "bad values");
      return;
    }
    out->bias = g_key_file_get_double(kf, *g, "bias", NULL);
    g_autofree char *sources = g_key_file_get_string(kf, *g, "sources", NULL);
    g_strlcpy(out->sources, sources ? sources : "", sizeof out->sources);
    g_strlcpy(out->group, *g, sizeof out->group);
    out->found = TRUE;
    note_ranges(kf, *g, job, precision, out);
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
