/* workspaces.h — the GEMM workspaces a run keeps in PyTorch's caching
 * allocator (PyTorch's cuBLAS workspace per thread, Transformer Engine's),
 * read from hw_profiles/software/workspaces.ini for the job's GPU profile
 * into its settings (job.h cublas_workspace_bytes, te_workspace_bytes);
 * the core counts how many of each a stage holds (memory.h
 * ptsim_memory_workspace_bytes).
 *
 * Shell module (GLib).  Errors: PTSIM_CONFIG_ERROR naming the file:group
 * or the flag. */
#ifndef PTSIM_WORKSPACES_H
#define PTSIM_WORKSPACES_H

#include <glib.h>
#include "job.h"

#define PTSIM_WORKSPACES_FILE "hw_profiles/software/workspaces.ini"

/* Bytes of a CUBLAS_WORKSPACE_CONFIG value as PyTorch reads it: the sum of
 * SIZE KiB x COUNT over its ":SIZE:COUNT" pairs (":4096:8" is 32 MiB).
 * FLAG names the value in errors (the flag or the variable).  FALSE with an
 * error when VALUE has no pair, or a number is not a positive integer. */
gboolean ptsim_workspaces_parse_config(const char *value, const char *flag, double *bytes,
                                       GError **error);

/* Fills run->cublas_workspace_bytes and run->te_workspace_bytes for the GPU
 * profile named GPU (PtsimHardware.name): its defaults from the data file,
 * PyTorch's from CUBLAS_CONFIG instead when not NULL (the value of
 * --cublas-workspace-config or of the run's CUBLAS_WORKSPACE_CONFIG).  A
 * profile the file does not list gets none (0), unless CUBLAS_CONFIG is
 * given.  FALSE with an error when the file or CUBLAS_CONFIG is malformed. */
gboolean ptsim_workspaces_resolve(const char *gpu, const char *cublas_config, PtsimSettings *run,
                                  GError **error);

#endif /* PTSIM_WORKSPACES_H */
