/* validate_args.h — the job flags of one validation row: a row (a
 * published or measured run's CSV line, a log's arguments) is turned into
 * the ptsim flags that name its job, the options the user gave `ptsim
 * validate` are laid over them, and the result is parsed as `ptsim
 * predict` parses its command line.
 *
 * Shell module (the cli layer, beside validate_cmd.c). */
#ifndef PTSIM_VALIDATE_ARGS_H
#define PTSIM_VALIDATE_ARGS_H

#include <glib.h>
#include <stdint.h>
#include "job_options.h"

/* Appends FLAG and, when not NULL, VALUE to ARGS (element-type utf8). */
void ptsim_validate_args_add(GPtrArray *args, const char *flag, const char *value);
/* Appends FLAG and VALUE as decimal. */
void ptsim_validate_args_add_int(GPtrArray *args, const char *flag, int64_t value);
/* Appends each space-separated word of WORDS. */
void ptsim_validate_args_add_words(GPtrArray *args, const char *words);
/* ARGS joined by spaces, as the row's command shows it.  (transfer full) */
char *ptsim_validate_args_join(GPtrArray *args);

/* Parses ARGS (ptsim job flags) into *opts. */
gboolean ptsim_validate_args_parse(GPtrArray *args, PtsimJobOptions *opts, GError **error);

/* The options the user gave on the command line (U) win over a row's (D):
 * the model, hardware, layout dimensions, recompute, precision, schedule,
 * sharding, Megatron-LM arguments, overlaps, dropouts and threshold. */
void ptsim_validate_options_overlay(PtsimJobOptions *d, const PtsimJobOptions *u);

#endif /* PTSIM_VALIDATE_ARGS_H */
