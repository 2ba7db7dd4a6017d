/* validate_args.c — a validation row's job as ptsim flags; see
 * validate_args.h. */
#include "validate_args.h"

/* Parses ARGS (ptsim job flags) into *opts. */
gboolean ptsim_validate_args_parse(GPtrArray *args, PtsimJobOptions *opts, GError **error) {
  g_autofree const char **flags = g_new0(const char *, args->len + 1);
  for (guint i = 0; i < args->len; i++) flags[i] = args->pdata[i];
  return ptsim_job_options_parse(opts, flags, error);
}

static void copy_string(char **dst, const char *src) {
  if (!src) return;
  g_free(*dst);
  *dst = g_strdup(src);
}

/* The options the user gave on the command line win over a row's. */
void ptsim_validate_options_overlay(PtsimJobOptions *d, const PtsimJobOptions *u) {
  copy_string(&d->model, u->model);
  copy_string(&d->hw, u->hw);
  copy_string(&d->recompute, u->recompute);
  copy_string(&d->recompute_method, u->recompute_method);
  copy_string(&d->precision, u->precision);
  copy_string(&d->schedule, u->schedule);
  copy_string(&d->megatron_args, u->megatron_args);
  copy_string(&d->megatron_args_file, u->megatron_args_file);
  copy_string(&d->sharding, u->sharding);
  copy_string(&d->fsdp_impl, u->fsdp_impl);
  copy_string(&d->reshard_after_forward, u->reshard_after_forward);
  d->no_fsdp_prefetch |= u->no_fsdp_prefetch;
  PtsimOptionInt *const di[] = {&d->gpus,
                                &d->nodes,
                                &d->tp,
                                &d->pp,
                                &d->cp,
                                &d->dp,
                                &d->vp,
                                &d->mbs,
                                &d->gbs,
                                &d->seq,
                                &d->recompute_num_layers,
                                &d->first_stage_layers,
                                &d->last_stage_layers,
                                &d->optimizer_instances,
                                &d->hsdp_shard_size,
                                &d->kv_channels,
                                &d->ep,
                                &d->etp};
  const PtsimOptionInt *const ui[] = {&u->gpus,
                                      &u->nodes,
                                      &u->tp,
                                      &u->pp,
                                      &u->cp,
                                      &u->dp,
                                      &u->vp,
                                      &u->mbs,
                                      &u->gbs,
                                      &u->seq,
                                      &u->recompute_num_layers,
                                      &u->first_stage_layers,
                                      &u->last_stage_layers,
                                      &u->optimizer_instances,
                                      &u->hsdp_shard_size,
                                      &u->kv_channels,
                                      &u->ep,
                                      &u->etp};
  for (size_t i = 0; i < G_N_ELEMENTS(ui); i++)
    if (ui[i]->given) *di[i] = *ui[i];
  if (u->nodes.given) d->gpus.given = FALSE;
  if (u->gpus.given) d->nodes.given = FALSE;
  if (u->sp) d->sp = TRUE, d->no_sp = FALSE;
  if (u->no_sp) d->no_sp = TRUE, d->sp = FALSE;
  if (u->distributed_optimizer)
    d->distributed_optimizer = TRUE, d->no_distributed_optimizer = FALSE;
  if (u->no_distributed_optimizer)
    d->no_distributed_optimizer = TRUE, d->distributed_optimizer = FALSE;
  d->no_flash_attention |= u->no_flash_attention;
  d->overlap_grad_reduce |= u->overlap_grad_reduce;
  d->overlap_param_gather |= u->overlap_param_gather;
  d->tp_comm_overlap |= u->tp_comm_overlap;
  d->no_fp32_grad_accumulation |= u->no_fp32_grad_accumulation;
  if (u->threshold.given) d->threshold = u->threshold;
  if (u->attention_dropout.given) d->attention_dropout = u->attention_dropout;
  if (u->hidden_dropout.given) d->hidden_dropout = u->hidden_dropout;
}

void ptsim_validate_args_add(GPtrArray *args, const char *flag, const char *value) {
  g_ptr_array_add(args, g_strdup(flag));
  if (value) g_ptr_array_add(args, g_strdup(value));
}

void ptsim_validate_args_add_int(GPtrArray *args, const char *flag, int64_t value) {
  g_ptr_array_add(args, g_strdup(flag));
  g_ptr_array_add(args, g_strdup_printf("%" G_GINT64_FORMAT, value));
}

void ptsim_validate_args_add_words(GPtrArray *args, const char *words) {
  g_auto(GStrv) parts = g_strsplit(words, " ", -1);
  for (char **p = parts; *p; p++)
    if (**p) g_ptr_array_add(args, g_strdup(*p));
}

char *ptsim_validate_args_join(GPtrArray *args) {
  g_autoptr(GString) s = g_string_new(NULL);
  for (guint i = 0; i < args->len; i++) {
    if (i) g_string_append_c(s, ' ');
    g_string_append(s, args->pdata[i]);
  }
  return g_string_free(g_steal_pointer(&s), FALSE);
}
