/* megatron_log_date.h — when the Megatron-LM source of a log was written,
 * read from the arguments its block prints.
 *
 * Megatron-LM prints every argument it has, so a block dates its source:
 * an argument printed was added to arguments.py before it, one missing
 * after.  A few arguments whose merge into main lies next to a change of
 * what the code allocates (lifetimes.c: the cross entropy's second fp32
 * copy from 2022-11-02 to 2024-06-13, the K/V copies from 2023-07-21 to
 * 2023-11-02) bound the date:
 *
 *   encoder_num_layers         2022-10-11  (merge a95fda70ca "nmt-main")
 *   max_tokens_to_oom          2022-11-23  (merge 8ce8256ff0 "boxin/detoxify_lm_cr")
 *   group_query_attention      2023-07-24  (merge b042f8af60 "core_gqa")
 *   manual_gc                  2023-10-30  (merge 739539c85c "slym/gc")
 *   cross_entropy_loss_fusion  2024-06-14  (merge f07647f633 "fused_cross_entropy")
 *
 * (first-parent dates of NVIDIA/Megatron-LM main.)  The date given is the
 * latest marker printed, or the day before the earliest one missing when
 * none is; between two markers the memory it selects is the same except in
 * 2022-10-11..2022-11-22 (the copy began on 11-02: taken as not yet) and
 * 2023-10-30..2023-11-01 (the legacy model's K/V copies had ended on
 * 10-16, Megatron-Core's had not: taken as still there).  A fork keeps the
 * arguments of the upstream it branched from, so it dates as that.
 *
 * Shell module (validate layer).  Not here: reading the log
 * (megatron_log.h), what a date changes (lifetimes.c). */
#ifndef PTSIM_MEGATRON_LOG_DATE_H
#define PTSIM_MEGATRON_LOG_DATE_H

#include <stdint.h>
#include "megatron_log.h"

/* The date YYYYMMDD of LOG's Megatron-LM source, and the latest it can be
 * (*before: the first marker missing after the latest printed, exclusive;
 * 0 when none is);
 * 0 when the log has no arguments block. */
int32_t ptsim_megatron_log_date(const PtsimMegatronLog *log, int32_t *before);

/* The same as "YYYY-MM-DD" (NULL: no arguments block), and *assumed (freed
 * and replaced) saying the interval and where it came from.  (transfer
 * full) */
char *ptsim_megatron_log_dated(const PtsimMegatronLog *log, char **assumed);

#endif /* PTSIM_MEGATRON_LOG_DATE_H */
