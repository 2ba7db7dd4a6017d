/* torchtitan.h — a torchtitan job config (.toml) read strictly and mapped to
 * the layout ptsim models.
 *
 * The schema is torchtitan's JobConfig at pytorch/torchtitan@238fa99 (the
 * last commit whose configs are TOML files; a launch of the later Python
 * form is read into the same words, torchtitan_python.h): every
 * [section] and key of torchtitan/config/job_config.py, with its type and
 * choices.  As torchtitan's own loader, unknown sections and keys are errors
 * (with a hint for the common keys that were renamed).  The semantics are
 * torchtitan's (train.py, distributed/parallel_dims.py, utils.py
 * maybe_enable_amp, pipeline_parallel.py, models/llama3, models/qwen3):
 *
 *   model   llama3 flavors 8B (and _flex, _varlen), 70B, 405B from models/;
 *           qwen3's dense flavors 0.6B .. 32B built from torchtitan's flavor
 *           args (hf_config.h); the mixture-of-experts flavors
 *           (torchtitan_model.h: deepseek_v3 16B / 671B, qwen3 30B-A3B /
 *           235B-A22B, gpt_oss 20b / 120b, llama4 17bx16e / 17bx128e)
 *           priced as Megatron-LM's local layers (the workload's PyTorch-
 *           module layers are dense), warned; expert_parallel_degree ->
 *           --ep, expert_tensor_parallel_degree -> --etp (FSDP2 over a
 *           mixture of experts is refused by job_validate.c until modelled)
 *   split   torchtitan's stage split (the embedding and the output a layer
 *           slot each) exactly: Megatron's uneven first/last stages, or the
 *           virtual stages' layer counts as runs (job.h vstage_runs); a
 *           module_fqns_per_model_part split likewise when its parts hold
 *           consecutive layers (the embedding first, norm and output last),
 *           else read and refused by name
 *
 *   world = data_parallel_replicate_degree x data_parallel_shard_degree x
 *           context_parallel_degree x tensor_parallel_degree x
 *           pipeline_parallel_degree (shard -1: the leftover ranks of --gpus)
 *   ptsim dp = replicate x shard (the batch degree); rank order tp, cp,
 *           shard, replicate, pp, which is Megatron's tp, cp, dp, pp
 *   parameters are sharded (FSDP) over shard x cp, replicated (DDP) over
 *           replicate; HSDP when both: ptsim's --sharding fsdp|hsdp with
 *           --fsdp-impl torch (FSDP2: fp32 shards, bf16 all-gather, fp32
 *           reduce-scatter; every micro-step gathers and reduces, under PP
 *           once per step), --num-distributed-optimizer-instances =
 *           replicate, fsdp_reshard_after_forward -> --reshard-after-forward
 *           (default|always|never), enable_fsdp_float8_all_gather ->
 *           --fp8-param-gather
 *   gbs = training.global_batch_size (-1: local_batch_size x dp); mbs =
 *           local_batch_size without PP, pipeline_parallel_microbatch_size
 *           with it
 *   mixed precision (bf16 compute, fp32 master weights) only through FSDP,
 *           or through autocast on one GPU or pure DDP; TP or PP without
 *           FSDP trains in float32
 *   layers: PyTorch's modules (--transformer-impl torch: separate q/k/v and
 *           gate/up projections, eager kernels, SDPA flash attention);
 *           [compile] enable over the model with the inductor backend ->
 *           torch-compile (norms and elementwise ops fused)
 *   activation_checkpoint: full -> full recompute; selective 'op' -> torch's
 *           per-op checkpointing (--recompute selective-op: the block input,
 *           every other matmul's output, SDPA's and TP's reduce-scatters'
 *           kept); selective 'N' -> full recompute of every N-th layer (as
 *           a block of the same size)
 *   model.converters quantize.linear.float8 -> fp8 GEMMs with the
 *           tensorwise recipe (torchao's default dynamic scaling; rowwise
 *           recipes -> blockwise, warned); quantize.linear.mx -> fp8 GEMMs
 *           with the blockwise recipe (warned)
 *
 * What a field changes that ptsim does not model is a warning naming
 * FILE:LINE and the field; what ptsim cannot model at all yet is recorded in
 * `unmodelled` (the load succeeds, ptsim_torchtitan_job refuses): TP or
 * PP without FSDP (float32 training) is such a case.
 *
 * Shell module (GLib).  Errors: one line, PTSIM_CONFIG_ERROR_PARSE for
 * malformed TOML or a value of the wrong type, _INVALID for a config
 * torchtitan itself would refuse, each naming FILE:LINE. */
#ifndef PTSIM_TORCHTITAN_H
#define PTSIM_TORCHTITAN_H

#include <glib.h>
#include "job.h"
#include "toml.h"

typedef enum {
  PTSIM_TORCHTITAN_DP_NONE = 0, /* one data-parallel rank */
  PTSIM_TORCHTITAN_DP_DDP = 1,  /* replicate(): gradients all-reduced */
  PTSIM_TORCHTITAN_DP_FSDP = 2, /* fully_shard over shard x cp */
  PTSIM_TORCHTITAN_DP_HSDP = 3  /* replicate x shard */
} PtsimTorchtitanDp;

typedef enum {
  PTSIM_TORCHTITAN_RESHARD_DEFAULT = 0, /* "default": not after forward when PP is on */
  PTSIM_TORCHTITAN_RESHARD_ALWAYS = 1,
  PTSIM_TORCHTITAN_RESHARD_NEVER = 2
} PtsimTorchtitanReshard;

typedef struct {
  char model[PTSIM_NAME_MAX]; /* the flavor's model: models/NAME.ini (llama3-8b, ...), or
                                 qwen3-8b, ... built from torchtitan's flavor args */
  PtsimModel model_def;       /* that model */
  PtsimLayout layout;         /* as torchtitan would run it (see above) */
  PtsimSettings settings;     /* likewise */
  PtsimTorchtitanDp dp_mode;
  int64_t dp_replicate; /* resolved degrees */
  int64_t dp_shard;
  int64_t fsdp_degree; /* shard x cp: the ranks parameters are split over */
  PtsimTorchtitanReshard reshard_after_forward;
  gboolean fsdp_float8_all_gather; /* parameters all-gathered in fp8 */
  int64_t grad_accumulation;       /* microsteps per optimizer step (gbs / (local x dp)) */
  gboolean mixed_precision;        /* bf16 compute with fp32 master weights */
  gboolean compile;                /* torch.compile on the model */
  char *unmodelled;                /* why ptsim cannot model this config yet ("FILE:LINE:
                                      ..."), NULL when it can; owned */
} PtsimTorchtitan;

void ptsim_torchtitan_clear(PtsimTorchtitan *tt);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PtsimTorchtitan, ptsim_torchtitan_clear)

/* Reads a parsed config.  GPUS is the world size (--gpus), or -1 when not
 * given (then data_parallel_shard_degree must not be -1).  Warnings (one
 * line each, transfer full) are appended to WARNINGS when it is not NULL.
 * The model file of the flavor is loaded from models/ for its layer count. */
gboolean ptsim_torchtitan_parse(const PtsimToml *toml, int64_t gpus, PtsimTorchtitan *out,
                                GPtrArray *warnings, GError **error);

/* ptsim_toml_load + ptsim_torchtitan_parse; a file that is not TOML but a
 * launch of the Python form (--module M --config F) is read by
 * torchtitan_python.h, its torchrun world size taken when GPUS is -1. */
gboolean ptsim_torchtitan_load(const char *path, int64_t gpus, PtsimTorchtitan *out,
                               GPtrArray *warnings, GError **error);

/* The job ptsim simulates: JOB->hw must be set; the model is loaded, the
 * layout and settings copied, and the source cleared (torchtitan's models
 * have no dropout, and no Megatron-LM runs them).  Fails with
 * PTSIM_CONFIG_ERROR_INVALID when the config is unmodelled, or asks for
 * float8 on a GPU without fp8 (torchtitan refuses float8 below SM89).  The
 * job is not validated here (the caller runs ptsim_job_validate after its
 * own overrides). */
gboolean ptsim_torchtitan_job(const PtsimTorchtitan *tt, PtsimJob *job, GError **error);

#endif /* PTSIM_TORCHTITAN_H */
