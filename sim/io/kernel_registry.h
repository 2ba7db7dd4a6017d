/* kernel_registry.h — the measured kernel tables this process's hardware
 * profiles use: one merged PtsimKernelTable per distinct [kernels] group
 * (its GPUs in fallback order, what the fallbacks may give, their compute
 * scale), kept in one array for the life of the process.
 *
 * A profile with a [kernels] group (config.c) registers its table here and
 * keeps only the table's 1-based index, PtsimHardware.kernel_table, so a
 * job stays plain fixed-size data: the array travels beside a batch of
 * jobs (batch.h), the CPU batch reads it in place and the GPU batch copies
 * it to the device once per batch.  The first registration reads
 * hw_profiles/kernels/ from the data dir (kernel_tables.h) and keeps it.
 *
 * Shell module (GLib).  Thread-safe: registration takes a lock, and a
 * registered table never moves or changes (the array is fixed-size and
 * only grows), so readers need none.
 * Not here: the files' format (kernel_tables.h), the lookups and the
 * prices (kernel_table.h, cost.h). */
#ifndef PTSIM_KERNEL_REGISTRY_H
#define PTSIM_KERNEL_REGISTRY_H

#include <glib.h>
#include "cost.h"
#include "kernel_table.h"

/* Distinct [kernels] groups one process may register. */
#define PTSIM_KERNEL_REGISTRY_MAX 16

/* The kinds a fallback GPU gives when a profile names none: GEMM and
 * attention, which depend on the SM architecture only
 * (hw_profiles/kernels/README.md, "Profiles and GPU names"). */
#define PTSIM_KERNEL_TRANSFER_DEFAULT ((1 << PTSIM_KERNEL_GEMM) | (1 << PTSIM_KERNEL_ATTENTION))

/* All kinds (bit 1 << kind). */
#define PTSIM_KERNEL_KINDS_ALL ((1 << PTSIM_KERNEL_KIND_COUNT) - 1)

/* The table of GPUS[0]'s rows of the kinds in KINDS (bit 1 << kind),
 * followed by those of GPUS[1..] (NULL-terminated) of the kinds in
 * TRANSFER, their GEMM and attention TFLOP/s times COMPUTE_SCALE; *ID its
 * 1-based index, the same index for the same arguments.  Errors: the data files do not load (their
 * own message), a GPU has no rows (PTSIM_CONFIG_ERROR_NOT_FOUND, naming
 * the GPUs there are), the merged table is full or the registry holds
 * PTSIM_KERNEL_REGISTRY_MAX tables (PTSIM_CONFIG_ERROR_PARSE). */
gboolean ptsim_kernel_registry_add(const char *const *gpus, int32_t kinds, int32_t transfer,
                                   double compute_scale, int32_t *id, GError **error);

/* The registered tables, *COUNT of them, index i holding id i + 1; NULL
 * (and 0) before any registration.  (transfer none: valid until exit) */
const PtsimKernelTable *ptsim_kernel_registry_tables(int32_t *count);

/* The cost parameters of HW with its table, if it has one
 * (ptsim_cost_params_init over the registry).  Never fails. */
void ptsim_kernel_registry_params(const PtsimHardware *hw, PtsimCostParams *out);

#endif /* PTSIM_KERNEL_REGISTRY_H */
