/* validate_cmd.h — `ptsim validate`: predictions against measured runs.
 *
 * Inputs: Megatron-LM logs (any file that is not *.csv; the model and
 * layout come from its arguments block, or from --model / --megatron-args /
 * layout flags when it has none; --hw is required since logs do not name
 * the hardware) and measured-run CSV files (validate/README.md).  Rows of
 * the known published sources (validate/data/published/) are mapped to a
 * ptsim job the way validate/calibrate_published.py maps them: the table
 * `published_sources` in validate_sources.c.  `--suite published` adds every
 * CSV of validate/data/published/.
 *
 * Also `--emit-gemm-shapes FILE`: the GEMMs one GPU of the job runs per
 * step, in the format validate/short_run/gemm_bench.cu reads.
 *
 * Exit codes: 0 ok, 2 bad input (one line naming the file or flag),
 * 1 internal failure.  Not here: the statistics (validation.h). */
#ifndef PTSIM_VALIDATE_CMD_H
#define PTSIM_VALIDATE_CMD_H

int ptsim_validate_main(int argc, char **argv);

#endif /* PTSIM_VALIDATE_CMD_H */
