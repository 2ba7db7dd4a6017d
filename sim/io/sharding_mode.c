/* sharding_mode.c — the data-parallel modes users name; the contract is
 * in sharding_mode.h. */
#include "sharding_mode.h"
#include "config.h"
#include "job_resolve.h"

#define I64(x) ((gint64)(x))
#define invalid(...) \
  (g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, __VA_ARGS__), FALSE)

gboolean ptsim_layout_set_sharding(PtsimLayout *l, int64_t domain_size, int mode,
                                   int64_t shard_size, GError **error) {
  g_return_val_if_fail(l != NULL, FALSE);
  static const char *const words[] = {"ddp", "zero1", "zero2", "fsdp", "hsdp"};
  if (mode >= PTSIM_SHARDING_MODE_DDP && mode <= PTSIM_SHARDING_MODE_HSDP) {
    l->distributed_optimizer = mode != PTSIM_SHARDING_MODE_DDP;
    l->sharding = mode == PTSIM_SHARDING_MODE_ZERO2  ? PTSIM_SHARDING_GRADS
                  : mode >= PTSIM_SHARDING_MODE_FSDP ? PTSIM_SHARDING_PARAMS
                                                     : PTSIM_SHARDING_NONE;
    l->optimizer_instances = 1;
    if (mode == PTSIM_SHARDING_MODE_HSDP && shard_size < 0) shard_size = 0;
  }
  if (shard_size < 0) return TRUE;
  if (!l->distributed_optimizer)
    return invalid("--hsdp-shard-size needs sharded states: --sharding zero1, zero2, fsdp or "
                   "hsdp (got %s)",
                   mode >= 0 ? words[mode] : "the optimizer states replicated");
  /* dp by division, not tp x pp x cp (each up to 2^30: their product
   * overflows); dp x cp is at most 2^22 x 2^30 */
  int64_t dp = ptsim_layout_data_parallel(l->gpus, l->tp, l->pp, l->cp);
  if (dp == 0) return TRUE; /* ptsim_job_validate names the dimensions */
  int64_t ranks = (l->dp > 0 ? l->dp : dp) * l->cp;
  int64_t size = shard_size > 0 ? shard_size : (domain_size > 0 ? domain_size : 1) / l->tp;
  if (size < 1 || ranks % size != 0 || size % l->cp != 0)
    return invalid("--hsdp-shard-size %" G_GINT64_FORMAT
                   "%s must divide dp x cp = %" G_GINT64_FORMAT
                   " and be a multiple of --cp %" G_GINT64_FORMAT
                   " (whole context-parallel groups)",
                   I64(size), shard_size > 0 ? "" : " (one NVLink domain / tp)", I64(ranks),
                   I64(l->cp));
  if (mode == PTSIM_SHARDING_MODE_HSDP && size == ranks)
    return invalid("--sharding hsdp with a shard group of all dp x cp = %" G_GINT64_FORMAT
                   " ranks has no replicas (that is --sharding fsdp)%s",
                   I64(ranks), shard_size > 0 ? "" : "; give a smaller --hsdp-shard-size");
  l->optimizer_instances = ranks / size;
  return TRUE;
}

const char *ptsim_layout_sharding_word(const PtsimLayout *l) {
  g_return_val_if_fail(l != NULL, "?");
  if (l->sharding == PTSIM_SHARDING_PARAMS) return l->optimizer_instances > 1 ? "hsdp" : "fsdp";
  if (l->sharding == PTSIM_SHARDING_GRADS) return "zero2";
  return l->distributed_optimizer ? "zero1" : "ddp";
}
