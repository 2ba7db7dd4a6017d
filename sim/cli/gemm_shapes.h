/* gemm_shapes.h — the GEMMs of one training step of a job, one per line
 * ("name m n k count"), for validate/short_run/gemm_bench to time on a
 * real GPU (the shapes workload.c prices).
 *
 * Shell module.  Not here: timing them (gemm_bench) or reading the times
 * back (calibrate). */
#ifndef PTSIM_GEMM_SHAPES_H
#define PTSIM_GEMM_SHAPES_H

#include <glib.h>
#include "job.h"

/* Writes the shapes of a validated JOB to PATH by the output policy
 * (output.h). */
gboolean ptsim_gemm_shapes_write(const char *path, const PtsimJob *job, GError **error);

#endif /* PTSIM_GEMM_SHAPES_H */
