/* api_error.c — the public errors; see ptsim.h and api_int.h.  The kinds
 * follow the command's exit codes since the start: 2 for what the user can
 * fix in the input (a model, a flag, a file, an output path the policy
 * refuses) or an unusable GPU, 1 for the rest. */
#include "api_int.h"

#include "config.h"
#include "gpu.h"
#include "output.h"
#include "plot.h"

/* The domain name keeps its dashes (clang-format 14 would space them). */
/* clang-format off */
G_DEFINE_QUARK(ptsim-api-stopped-error-quark, ptsim_api_stopped_error)
/* clang-format on */

static PtsimApiErrorCode code_of(const GError *e) {
  if (e->domain == PTSIM_API_STOPPED_ERROR) return PTSIM_API_ERROR_STOPPED;
  if (e->domain == PTSIM_OUTPUT_ERROR)
    return ptsim_output_exit_code(e) == 2 ? PTSIM_API_ERROR_INPUT : PTSIM_API_ERROR_INTERNAL;
  if (e->domain == PTSIM_CUDA_ERROR)
    return e->code == PTSIM_CUDA_ERROR_FAILED ? PTSIM_API_ERROR_INTERNAL
                                              : PTSIM_API_ERROR_GPU_UNAVAILABLE;
  /* a figure's: as `ptsim plot` exits (plot_cmd.c) */
  if (e->domain == PTSIM_PLOT_ERROR)
    return e->code == PTSIM_PLOT_ERROR_FORMAT || e->code == PTSIM_PLOT_ERROR_INPUT ||
                   e->code == PTSIM_PLOT_ERROR_OPTION
               ? PTSIM_API_ERROR_INPUT
               : PTSIM_API_ERROR_INTERNAL;
  if (e->domain == PTSIM_CONFIG_ERROR || e->domain == G_OPTION_ERROR ||
      e->domain == G_KEY_FILE_ERROR || e->domain == G_FILE_ERROR || e->domain == G_SHELL_ERROR)
    return PTSIM_API_ERROR_INPUT;
  return PTSIM_API_ERROR_INTERNAL;
}

/* The command's exit status: its output policy's for outputs; 2 for a
 * failed GPU call too (`ptsim sweep --device gpu` has always said 2). */
static int exit_status_of(const GError *e, PtsimApiErrorCode code) {
  if (e->domain == PTSIM_OUTPUT_ERROR) return ptsim_output_exit_code(e);
  if (e->domain == PTSIM_CUDA_ERROR) return 2;
  return code == PTSIM_API_ERROR_INPUT || code == PTSIM_API_ERROR_GPU_UNAVAILABLE ? 2 : 1;
}

PtsimApiError *ptsim_api_error_new(const GError *e, const GPtrArray *diagnostics) {
  PtsimApiError *error = g_new0(PtsimApiError, 1);
  error->code = code_of(e);
  error->exit_status = exit_status_of(e, error->code);
  error->message = g_strdup(e->message);
  error->diagnostics = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; diagnostics && i < diagnostics->len; i++)
    g_ptr_array_add(error->diagnostics, g_strdup(g_ptr_array_index(diagnostics, i)));
  return error;
}

void ptsim_api_error_set(PtsimApiError **dest, const GError *e, const GPtrArray *diagnostics) {
  if (!dest || *dest) return; /* an error already set stays, as GError's rule */
  *dest = ptsim_api_error_new(e, diagnostics);
}

PtsimApiErrorCode ptsim_api_error_code(const PtsimApiError *error) {
  if (!error) return PTSIM_API_ERROR_INTERNAL;
  return error->code;
}

const char *ptsim_api_error_message(const PtsimApiError *error) {
  if (!error) return "";
  return error->message;
}

int ptsim_api_error_exit_status(const PtsimApiError *error) {
  if (!error) return 1;
  return error->exit_status;
}

size_t ptsim_api_error_diagnostic_count(const PtsimApiError *error) {
  if (!error) return 0;
  return error->diagnostics->len;
}

const char *ptsim_api_error_diagnostic(const PtsimApiError *error, size_t i) {
  if (!error) return NULL;
  return i < error->diagnostics->len ? g_ptr_array_index(error->diagnostics, i) : NULL;
}

void ptsim_api_error_free(PtsimApiError *error) {
  if (!error) return;
  g_free(error->message);
  g_ptr_array_unref(error->diagnostics);
  g_free(error);
}
