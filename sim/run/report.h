/* report.h — writing results for people (text) and programs (JSON, CSV).
 *
 * Shell module.  Each writer appends to a GString; the caller decides where
 * it goes, so nothing is half-written on failure.  JSON keys are a stable
 * interface (later versions add keys, never rename): config{...} and
 * memory{...} as documented in README.md.  Bytes are printed as GiB
 * (2^30) in text, as plain bytes in JSON and CSV.
 *
 * Not here: computing anything. */
#ifndef PTSIM_REPORT_H
#define PTSIM_REPORT_H

#include <glib.h>
#include "job.h"
#include "json_writer.h"
#include "engine.h"
#include "error_bands.h"
#include "memory.h"
#include "plan.h"
#include "simulate.h"

typedef enum { PTSIM_FORMAT_TEXT = 0, PTSIM_FORMAT_JSON = 1, PTSIM_FORMAT_CSV = 2 } PtsimFormat;

gboolean ptsim_format_parse(const char *word, PtsimFormat *out);

/* "config": {"model": {...}, "hw": {...}, "layout": {...}} */
void ptsim_report_json_config(PtsimJson *json, const PtsimPlan *plan);
/* "memory": {...}, with "allocator": {...} inside when alloc is not NULL. */
void ptsim_report_json_memory(PtsimJson *json, const PtsimMemoryEstimate *m, double threshold,
                              const PtsimAllocResult *alloc);
/* The allocator emulation beside the analytical estimate, per stage. */
void ptsim_report_text_allocator(GString *out, const PtsimMemoryEstimate *m,
                                 const PtsimAllocResult *alloc);

/* "time": {step_s, band{...}, tokens_per_s, tflops_per_gpu, mfu,
 * bubble_fraction, compute_s, exposed_comm_s{tp,cp,pp,dp,ep}, stages[...]};
 * band (error_bands.h) may be NULL (no "band" key, no band line).  The
 * text names the ep kind (expert-parallel dispatch and combine) when MOE
 * is set. */
void ptsim_report_json_time(PtsimJson *json, const PtsimJob *job, const PtsimTimeResult *t,
                            const PtsimErrorBand *band);
/* MFU against the dense peak of the job's precision (fp8's for an fp8 job
 * on a profile with one), from MFU against the bf16 peak. */
double ptsim_report_mfu_precision(const PtsimJob *job, double mfu_bf16);
void ptsim_report_text_time(GString *out, const PtsimJob *job, const PtsimTimeResult *t,
                            const PtsimErrorBand *band);
/* One line: "10.2100 s +/- 4.0% (...): the mean error on N held-out
 * published runs (...)", or why there is no band. */
void ptsim_report_text_band(GString *out, const PtsimErrorBand *band, double step_s);

/* One-paragraph summary of the job, then the per-stage memory table. */
void ptsim_report_text_config(GString *out, const PtsimPlan *plan);
void ptsim_report_text_memory(GString *out, const PtsimJob *job, const PtsimMemoryEstimate *m);

/* A YYYYMMDD date (source.megatron_date) as "YYYY-MM-DD".  (transfer full) */
char *ptsim_report_date(int32_t yyyymmdd);

/* The settings a prediction assumed beyond the layout's dimensions (JOB's
 * settings, source and the layout's optimizer instances and embedding/loss
 * accounting; M's shape settings, when M is not NULL: a sweep's base job
 * has no model), and where the overlap switches came from (OVERLAP_SOURCE:
 * "default" -- ptsim's, Megatron-LM's example launch scripts --,
 * "megatron-args", "torchtitan" or "flags").  Text: an "overlap:" line
 * (under ZeRO-2/3 what ptsim models of the per-unit collectives instead of
 * Megatron's switches; DDP's buckets for a torchtitan config) and a
 * "settings:" line; JSON: "settings": {...}, with "dp_overlap" (per-unit |
 * bucketed | after-backward) and "layers" (--transformer-impl's word). */
void ptsim_report_text_settings(GString *out, const PtsimJob *job, const PtsimModel *m,
                                const char *overlap_source);
void ptsim_report_json_settings(PtsimJson *json, const PtsimJob *job, const PtsimModel *m,
                                const char *overlap_source);

/* Header + one row per pipeline stage, layout columns first; with T
 * (predict) the step's columns after them, with ALLOC the emulation's. */
void ptsim_report_csv_memory(GString *out, const PtsimJob *job, const PtsimMemoryEstimate *m,
                             const PtsimTimeResult *t, const PtsimAllocResult *alloc);

#endif /* PTSIM_REPORT_H */
