/* kernel_registry.c — the process's merged kernel tables; see
 * kernel_registry.h. */
#include "kernel_registry.h"

#include <string.h>
#include "config.h"
#include "kernel_tables.h"

/* What one registration was asked for: the same request, the same id. */
typedef struct {
  char *gpus; /* the GPU names joined by ',' */
  int32_t kinds, transfer;
  double compute_scale;
} Request;

static PtsimKernelTable registry[PTSIM_KERNEL_REGISTRY_MAX];
static Request requests[PTSIM_KERNEL_REGISTRY_MAX];
/* Written under the lock after the table is complete; read without it. */
static volatile gint registry_count = 0;
static PtsimKernelTables *files = NULL; /* the data files, read once */
G_LOCK_DEFINE_STATIC(registry);

static gboolean merge(const char *const *gpus, int32_t kinds, int32_t transfer, double scale,
                      PtsimKernelTable *out, GError **error) {
  g_autofree PtsimKernelTable *part = g_new(PtsimKernelTable, 1);
  ptsim_kernel_table_init(out, gpus[0]);
  for (int i = 0; gpus[i]; i++) {
    if (!ptsim_kernel_tables_select(files, gpus[i], part, error)) return FALSE;
    PtsimKernelAddStatus rc = ptsim_kernel_table_append(out, part, i == 0 ? kinds : transfer,
                                                        i == 0 ? 1.0 : scale);
    if (rc != PTSIM_KERNEL_ADD_OK) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "the kernel table of %s with the rows of %s %s", gpus[0], gpus[i],
                  rc == PTSIM_KERNEL_ADD_BAD_VALUE
                      ? "has a compute scale that is not a number > 0"
                      : "holds more curves or GEMM shapes than a table can (kernel_table.h)");
      return FALSE;
    }
  }
  return TRUE;
}

gboolean ptsim_kernel_registry_add(const char *const *gpus, int32_t kinds, int32_t transfer,
                                   double compute_scale, int32_t *id, GError **error) {
  g_return_val_if_fail(gpus != NULL && gpus[0] != NULL && id != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  g_autofree char *joined = g_strjoinv(",", (char **)gpus);
  G_LOCK(registry);
  gboolean ok = FALSE;
  int n = g_atomic_int_get(&registry_count);
  for (int i = 0; i < n; i++)
    if (strcmp(requests[i].gpus, joined) == 0 && requests[i].kinds == kinds &&
        requests[i].transfer == transfer && requests[i].compute_scale == compute_scale) {
      *id = i + 1;
      ok = TRUE;
      goto out;
    }
  if (n >= PTSIM_KERNEL_REGISTRY_MAX) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "more than %d distinct [kernels] groups in one run", PTSIM_KERNEL_REGISTRY_MAX);
    goto out;
  }
  if (!files) {
    g_autoptr(PtsimKernelTables) loaded = ptsim_kernel_tables_new();
    if (!ptsim_kernel_tables_load(loaded, NULL, error)) goto out;
    files = g_steal_pointer(&loaded);
  }
  if (!merge(gpus, kinds, transfer, compute_scale, &registry[n], error)) goto out;
  requests[n].gpus = g_steal_pointer(&joined);
  requests[n].kinds = kinds;
  requests[n].transfer = transfer;
  requests[n].compute_scale = compute_scale;
  g_atomic_int_set(&registry_count, n + 1);
  *id = n + 1;
  ok = TRUE;
out:
  G_UNLOCK(registry);
  return ok;
}

const PtsimKernelTable *ptsim_kernel_registry_tables(int32_t *count) {
  int n = g_atomic_int_get(&registry_count);
  if (count) *count = n;
  return n > 0 ? registry : NULL;
}

void ptsim_kernel_registry_params(const PtsimHardware *hw, PtsimCostParams *out) {
  int32_t n = 0;
  const PtsimKernelTable *tables = ptsim_kernel_registry_tables(&n);
  ptsim_cost_params_init(hw, tables, n, out);
}
