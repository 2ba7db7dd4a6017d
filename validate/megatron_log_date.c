/* megatron_log_date.c — the Megatron-LM source's date from a log's arguments
 * block; see megatron_log_date.h. */
#include "megatron_log_date.h"
#include "report.h"

/* Arguments by the date their addition was merged into main, oldest first. */
static const struct {
  const char *name;
  int32_t added;
} markers[] = {
    {"encoder_num_layers", 20221011},        {"max_tokens_to_oom", 20221123},
    {"group_query_attention", 20230724},     {"manual_gc", 20231030},
    {"cross_entropy_loss_fusion", 20240614},
};

/* The day before YYYYMMDD D, near enough for the bounds (the 1st goes to
 * the 28th of the month before). */
static int32_t day_before(int32_t d) {
  if (d % 100 > 1) return d - 1;
  if (d / 100 % 100 > 1) return d - 100 + 27;
  return (d / 10000 - 1) * 10000 + 1228;
}

int32_t ptsim_megatron_log_date(const PtsimMegatronLog *log, int32_t *before) {
  int32_t after = 0;
  *before = 0;
  if (!log->args_found) return 0;
  /* A block may lack an older marker and print a newer one (edited, or the
   * older argument since removed): the bound is the first missing after
   * the latest printed, never one before the date. */
  for (gsize i = 0; i < G_N_ELEMENTS(markers); i++) {
    if (g_hash_table_contains(log->args, markers[i].name))
      after = markers[i].added, *before = 0;
    else if (*before == 0)
      *before = markers[i].added;
  }
  return after > 0 ? after : day_before(*before);
}

char *ptsim_megatron_log_dated(const PtsimMegatronLog *log, char **assumed) {
  int32_t before = 0, date = ptsim_megatron_log_date(log, &before);
  if (date <= 0) return NULL;
  char *dated = ptsim_report_date(date);
  g_autofree char *until = before > 0 ? ptsim_report_date(before) : NULL;
  g_free(*assumed);
  *assumed = until ? g_strdup_printf("Megatron-LM of %s to %s (the arguments it prints; "
                                     "--megatron-date changes it)",
                                     dated, until)
                   : g_strdup_printf("Megatron-LM of %s or later (the arguments it prints)", dated);
  return dated;
}
