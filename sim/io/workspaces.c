/* workspaces.c — the GEMM workspaces of hw_profiles/software/workspaces.ini
 * into a job's settings; the contract is in workspaces.h, the sources of
 * every value in the data file's header. */
#include "workspaces.h"

#include <string.h>
#include "config.h"
#include "numbers.h"

#define fail(code, ...) (g_set_error(error, PTSIM_CONFIG_ERROR, code, __VA_ARGS__), FALSE)

gboolean ptsim_workspaces_parse_config(const char *value, const char *flag, double *bytes,
                                       GError **error) {
  /* PyTorch's regex ":([0-9]+):([0-9]+)", each match adding SIZE KiB x
   * COUNT; what lies between matches is skipped, as std::sregex_iterator
   * skips it */
  const char *p = value;
  double total = 0.0;
  int pairs = 0;
  while ((p = strchr(p, ':')) != NULL) {
    char *end = NULL;
    guint64 size, count;
    if (!g_ascii_isdigit(p[1])) {
      p++;
      continue;
    }
    size = g_ascii_strtoull(p + 1, &end, 10);
    if (*end != ':' || !g_ascii_isdigit(end[1])) {
      p = end;
      continue;
    }
    count = g_ascii_strtoull(end + 1, &end, 10);
    if (size == 0 || count == 0 || size > ((guint64)1 << 30) || count > 1024)
      return fail(PTSIM_CONFIG_ERROR_INVALID,
                  "%s '%s': SIZE and COUNT of each :SIZE:COUNT must be positive (SIZE KiB up to "
                  "2^30, COUNT up to 1024)",
                  flag, value);
    total += (double)size * 1024.0 * (double)count;
    pairs++;
    p = end;
  }
  if (pairs == 0)
    return fail(PTSIM_CONFIG_ERROR_INVALID,
                "%s '%s' has no :SIZE:COUNT pair (PyTorch's form: ':4096:8' is 8 buffers of "
                "4096 KiB)",
                flag, value);
  *bytes = total;
  return TRUE;
}

gboolean ptsim_workspaces_resolve(const char *gpu, const char *cublas_config, PtsimSettings *run,
                                  GError **error) {
  g_autofree char *path = g_build_filename(ptsim_config_data_dir(), PTSIM_WORKSPACES_FILE, NULL);
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_autoptr(GError) local = NULL;
  run->cublas_workspace_bytes = run->te_workspace_bytes = 0.0;
  if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &local))
    return fail(PTSIM_CONFIG_ERROR_NOT_FOUND, "%s: %s", path, local->message);
  if (gpu && g_key_file_has_group(kf, gpu)) {
    g_autofree char *torch = g_key_file_get_string(kf, gpu, "pytorch_cublas_workspace", NULL);
    g_autofree char *te = g_key_file_get_string(kf, gpu, "te_cublas_workspace_bytes", NULL);
    g_autofree char *where = g_strdup_printf("%s: [%s] pytorch_cublas_workspace", path, gpu);
    int64_t te_bytes = 0;
    if (!torch || !te)
      return fail(PTSIM_CONFIG_ERROR_PARSE,
                  "%s: [%s] needs pytorch_cublas_workspace and te_cublas_workspace_bytes", path,
                  gpu);
    if (!ptsim_workspaces_parse_config(torch, where, &run->cublas_workspace_bytes, error))
      return FALSE;
    if (!ptsim_number_parse_int64(te, &te_bytes) || te_bytes <= 0)
      return fail(PTSIM_CONFIG_ERROR_PARSE,
                  "%s: [%s] te_cublas_workspace_bytes '%s' is not a positive integer", path, gpu,
                  te);
    run->te_workspace_bytes = (double)te_bytes;
  }
  if (cublas_config && !ptsim_workspaces_parse_config(cublas_config, "--cublas-workspace-config",
                                                      &run->cublas_workspace_bytes, error))
    return FALSE;
  return TRUE;
}
