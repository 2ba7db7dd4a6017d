/* job_validate.c — the checks that make a resolved PtsimJob one the core
 * may trust; the contract is in job_validate.h.
 *
 * What it is: every constraint a Megatron-LM run would refuse, each failure
 * ONE line in PTSIM_CONFIG_ERROR naming the flag as ptsim's command line
 * spells it, the value and what is allowed.  The checks read the job and
 * never write it.
 *
 * What it is not: the defaults and derived fields (job_resolve.c), file
 * parsing (config.c), Megatron-LM command lines (megatron_args.c), or
 * anything derived for the simulation (the core's plan.h derives it from
 * the checked job). */
#include "job_validate.h"
#include "hybrid_pattern.h"
#include "mamba.h"
#include "plan.h"

#include <string.h>

#define INT_VALUE_MAX PTSIM_CONFIG_INT_MAX

#define I64(x) ((gint64)(x))
#define invalid(...) \
  (g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, __VA_ARGS__), FALSE)

/* A field ptsim_job_resolve derives, found underived: the job was not
 * resolved (ptsim_job_validate never gets here). */
static gboolean unresolved(const char *what, GError **error) {
  return invalid("layout: %s is not resolved (ptsim_job_resolve derives it)", what);
}

/* V in [LO, the flag's most]; 0 for a flag with no default is "required".
 * The GPU count has its own bound: group placement walks ranks, so its work
 * grows with the GPUs (4M GPUs: milliseconds; 2^30: seconds per plan). */
static gboolean check_count(const char *flag, int64_t v, int64_t lo, GError **error) {
  /* within every flag's range: no name to look at (a sweep validates
   * every candidate layout, a dozen counts each) */
  if (v >= lo && v <= PTSIM_JOB_GPUS_MAX && v <= INT_VALUE_MAX) return TRUE;
  gboolean no_default = strcmp(flag, "--gpus") == 0 || strcmp(flag, "--gbs") == 0 ||
                        strcmp(flag, "--seq") == 0;
  int64_t hi = strcmp(flag, "--gpus") == 0 || strcmp(flag, "--dp") == 0 ? PTSIM_JOB_GPUS_MAX
                                                                        : INT_VALUE_MAX;
  if (v < lo || v > hi) {
    if (v == 0 && no_default) return invalid("%s is required: a positive integer (got 0)", flag);
    return invalid("%s %" G_GINT64_FORMAT " is out of range: expected an "
                   "integer from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT,
                   flag, I64(v), I64(lo), I64(hi));
  }
  return TRUE;
}

static gboolean check_divides(const char *flag, int64_t v, const char *what, int64_t n,
                              const char *model, GError **error) {
  if (n % v != 0)
    return invalid("%s %" G_GINT64_FORMAT " does not divide %s %" G_GINT64_FORMAT " of model %s",
                   flag, I64(v), what, I64(n), model);
  return TRUE;
}

static const char *schedule_word(PtsimSchedule s) {
  switch (s) {
  case PTSIM_SCHEDULE_1F1B:
    return "1f1b";
  case PTSIM_SCHEDULE_GPIPE:
    return "gpipe";
  case PTSIM_SCHEDULE_INTERLEAVED:
    return "interleaved";
  case PTSIM_SCHEDULE_ZB_H1:
    return "zb-h1";
  case PTSIM_SCHEDULE_ZBV:
    return "zbv";
  case PTSIM_SCHEDULE_DUALPIPEV:
    return "dualpipev";
  }
  return "?";
}

/* The core's split of a layout these checks accepted; its refusal here is
 * a bug in the checks, reported rather than trusted. */
static gboolean split_done(const PtsimLayout *l, int64_t layers, int64_t *stage_layers,
                           GError **error) {
  if (ptsim_plan_split_stages(l->pp, layers, l->first_stage_layers, l->last_stage_layers,
                              stage_layers) != 0)
    return invalid("--pp %" G_GINT64_FORMAT " cannot split num_layers %" G_GINT64_FORMAT,
                   I64(l->pp), I64(layers));
  return TRUE;
}

/* A pipeline layout's virtual stages (job.h vstage_runs): pp x vp of them,
 * a transformer layer in each but the first and the last, `layers` in all,
 * and no other split flag; their stages' layers into stage_layers. */
static gboolean split_runs(const PtsimLayout *l, int64_t layers, int64_t *stage_layers,
                           GError **error) {
  int32_t counts[PTSIM_MAX_VSTAGES];
  int64_t n = 0, sum = 0, vstages = l->pp * l->vp;
  if (l->account_embedding || l->account_loss || l->first_stage_layers || l->last_stage_layers)
    return invalid("--pipeline-model-parallel-layout gives the split: drop --account-for-* and "
                   "--decoder-first/last-pipeline-num-layers");
  if (l->vstage_runs < 0 || l->vstage_runs > PTSIM_LAYOUT_RUNS)
    return invalid("layout: %d runs of virtual stages (0 to %d)", (int)l->vstage_runs,
                   PTSIM_LAYOUT_RUNS);
  for (int32_t r = 0; r < l->vstage_runs; r++) {
    if (l->vstage_run_count[r] < 1 || l->vstage_run_layers[r] < 0)
      return invalid("layout: virtual-stage run %d of %d stages of %d layers", (int)r,
                     (int)l->vstage_run_count[r], (int)l->vstage_run_layers[r]);
    n += l->vstage_run_count[r];
    sum += (int64_t)l->vstage_run_count[r] * l->vstage_run_layers[r];
  }
  if (n != vstages || sum != layers)
    return invalid("--pipeline-model-parallel-layout: %" G_GINT64_FORMAT
                   " virtual stages of %" G_GINT64_FORMAT
                   " transformer layers, for --pp %" G_GINT64_FORMAT " x --vp %" G_GINT64_FORMAT
                   " = %" G_GINT64_FORMAT " and num_layers %" G_GINT64_FORMAT,
                   I64(n), I64(sum), I64(l->pp), I64(l->vp), I64(vstages), I64(layers));
  if (ptsim_plan_split_vstages(l, layers, counts) != 0)
    return invalid("--pp %" G_GINT64_FORMAT " cannot split num_layers %" G_GINT64_FORMAT,
                   I64(l->pp), I64(layers));
  for (int64_t i = 1; i + 1 < n; i++)
    if (counts[i] == 0 && !(l->mtp_apart && i == n - 2)) /* an MTP stage apart may be */
      return invalid("--pipeline-model-parallel-layout: virtual stage %" G_GINT64_FORMAT
                     " has no transformer layer (only the first and the last may be empty)",
                     I64(i));
  for (int64_t s = 0; s < l->pp; s++) {
    stage_layers[s] = 0;
    for (int64_t c = 0; c < l->vp; c++) stage_layers[s] += counts[c * l->pp + s];
  }
  return TRUE;
}

/* The MTP layers on a virtual stage of their own before the loss's
 * (job.h mtp_apart): there must be MTP layers, that virtual stage must be
 * the last of its rank (pp >= 2, looped), the loss's must hold no layer;
 * the units of sharded data parallelism hold the MTP layers with the
 * output layer, so ZeRO-2/3 is not modelled with them apart. */
static gboolean mtp_apart_modelled(const PtsimLayout *l, const PtsimModel *m, GError **error) {
  int32_t counts[PTSIM_MAX_VSTAGES];
  int64_t n = l->pp * (l->vp > 0 ? l->vp : 1);
  const char *why = m->mtp_num_layers <= 0 ? "--mtp-num-layers > 0"
                    : l->pp < 2 ? "--pp >= 2 (the virtual stage before the loss's is the last of "
                                  "pipeline rank pp - 2)"
                    : ptsim_schedule_is_vshape((int32_t)l->schedule)
                        ? "a looped schedule (not zbv or dualpipev)"
                    : l->sharding != PTSIM_SHARDING_NONE
                        ? "no ZeRO-2/3 sharding (--sharding zero2|fsdp|hsdp)"
                    : ptsim_plan_split_vstages(l, m->num_layers, counts) != 0 || counts[n - 1] != 0
                        ? "the loss's virtual stage without transformer layers"
                        : NULL;
  if (why)
    return invalid("--pipeline-model-parallel-layout: the MTP layers on a virtual stage of "
                   "their own ('m|L') need %s",
                   why);
  return TRUE;
}

/* Checks the split of `layers` over pp stages (even, or the optional uneven
 * first/last stage) and writes it to stage_layers[0..pp) as the core's plan
 * will split it (ptsim_plan_split_stages). */
static gboolean split_stages(const PtsimLayout *l, int64_t layers, int64_t *stage_layers,
                             GError **error) {
  int64_t first = l->first_stage_layers, last = l->last_stage_layers, chunk;
  if (l->vstage_runs != 0) return split_runs(l, layers, stage_layers, error);
  if (l->account_embedding || l->account_loss) {
    int extra = l->account_embedding + l->account_loss;
    if (first || last)
      return invalid("--account-for-embedding/loss-in-pipeline-split cannot be combined with "
                     "--decoder-first/last-pipeline-num-layers (Megatron-LM refuses it)");
    if (ptsim_plan_split_accounted(l->pp, l->vp, layers, l->account_embedding, l->account_loss,
                                   stage_layers, &chunk) != 0)
      return invalid("num_layers %" G_GINT64_FORMAT " plus %d for the embedding/loss is not "
                     "divisible by --pp %" G_GINT64_FORMAT " x --vp %" G_GINT64_FORMAT
                     " (--account-for-embedding/loss-in-pipeline-split)",
                     I64(layers), extra, I64(l->pp), I64(l->vp));
    return TRUE;
  }
  if (first < 0 || first > INT_VALUE_MAX)
    return invalid("--decoder-first-pipeline-num-layers %" G_GINT64_FORMAT
                   " is out of range: expected 0 (even split) or a positive "
                   "integer",
                   I64(first));
  if (last < 0 || last > INT_VALUE_MAX)
    return invalid("--decoder-last-pipeline-num-layers %" G_GINT64_FORMAT
                   " is out of range: expected 0 (even split) or a positive "
                   "integer",
                   I64(last));
  if (first == 0 && last == 0) {
    if (layers % l->pp != 0)
      return invalid("--pp %" G_GINT64_FORMAT " does not divide num_layers %" G_GINT64_FORMAT
                     "; give an uneven split with "
                     "--decoder-first-pipeline-num-layers / "
                     "--decoder-last-pipeline-num-layers",
                     I64(l->pp), I64(layers));
    return split_done(l, layers, stage_layers, error);
  }
  if (l->pp < 2)
    return invalid("--decoder-%s-pipeline-num-layers %" G_GINT64_FORMAT
                   " needs --pp > 1 (got --pp %" G_GINT64_FORMAT ")",
                   first ? "first" : "last", I64(first ? first : last), I64(l->pp));
  /* the plan's rule decides; the counts below only say why not */
  int64_t middle = l->pp - (first ? 1 : 0) - (last ? 1 : 0);
  int64_t rest = layers - first - last;
  if (ptsim_plan_split_stages(l->pp, layers, first, last, stage_layers) != 0)
    return invalid("--decoder-first-pipeline-num-layers %" G_GINT64_FORMAT
                   " and --decoder-last-pipeline-num-layers %" G_GINT64_FORMAT
                   " leave %" G_GINT64_FORMAT " of num_layers %" G_GINT64_FORMAT
                   " for the %" G_GINT64_FORMAT " other stage(s) of --pp %" G_GINT64_FORMAT
                   "; they must split evenly (at least one "
                   "layer each)",
                   I64(first), I64(last), I64(rest), I64(layers), I64(middle), I64(l->pp));
  /* Megatron-LM (TransformerConfig) lets virtual stages split an uneven
   * pipeline when every stage's layers divide by vp. */
  if (l->vp > 1 && !ptsim_plan_split_fits(l->pp, l->vp, layers, first, last)) {
    int64_t bad = first % l->vp                           ? first
                  : last % l->vp                          ? last
                  : middle > 0 && (rest / middle) % l->vp ? rest / middle
                                                          : 0;
    return invalid("--vp %" G_GINT64_FORMAT " does not divide the %" G_GINT64_FORMAT
                   " layers of a pipeline stage (split %" G_GINT64_FORMAT
                   " first, %" G_GINT64_FORMAT " last, %" G_GINT64_FORMAT
                   " on each other stage); with an "
                   "uneven split every stage's layers must divide by vp",
                   I64(l->vp), I64(bad), I64(first), I64(last),
                   I64(middle > 0 ? rest / middle : 0));
  }
  return split_done(l, layers, stage_layers, error);
}

/* The interleaved schedule's microbatch group (job.h microbatch_group) for
 * m microbatches, as Megatron-LM's forward_backward_pipelining_with_
 * interleaving accepts it: g from pp to m, and a last group of g or of pp
 * at least (a shorter one waits on itself; with g = pp, the default, m
 * must be a multiple of pp). */
static gboolean check_microbatch_group(const PtsimLayout *l, int64_t m, GError **error) {
  int64_t g = l->microbatch_group > 0 ? l->microbatch_group : l->pp;
  if (l->microbatch_group < 0 || l->microbatch_group > INT_VALUE_MAX)
    return invalid("--microbatch-group-size %" G_GINT64_FORMAT " is out of range: expected 0 "
                   "(pp) or a positive integer",
                   I64(l->microbatch_group));
  if (l->vp <= 1 || l->schedule != PTSIM_SCHEDULE_INTERLEAVED)
    return TRUE; /* only the interleaved schedule groups microbatches */
  if (l->microbatch_group == 0 && m % l->pp != 0)
    return invalid("the interleaved schedule (--vp %" G_GINT64_FORMAT
                   ") needs the number of microbatches gbs/(mbs*dp) = %" G_GINT64_FORMAT
                   " to be a multiple of --pp %" G_GINT64_FORMAT
                   ", or a --microbatch-group-size from pp to the microbatches whose "
                   "remainder is 0 or at least pp",
                   I64(l->vp), I64(m), I64(l->pp));
  if (g < l->pp || g > m)
    return invalid("--microbatch-group-size %" G_GINT64_FORMAT
                   " must be from --pp %" G_GINT64_FORMAT
                   " to the number of microbatches gbs/(mbs*dp) = %" G_GINT64_FORMAT
                   " (Megatron-LM refuses it)",
                   I64(g), I64(l->pp), I64(m));
  if (m % g != 0 && m % g < l->pp)
    return invalid("--microbatch-group-size %" G_GINT64_FORMAT
                   " leaves a last group of %" G_GINT64_FORMAT " of the %" G_GINT64_FORMAT
                   " microbatches, fewer than --pp %" G_GINT64_FORMAT
                   " (Megatron-LM refuses it: the group would wait on itself)",
                   I64(g), I64(m % g), I64(m), I64(l->pp));
  return TRUE;
}

/* Sharded data parallelism (job.h PtsimSharding): ranges, what it needs,
 * and reshard_after_forward resolved (job_resolve.h). */
static gboolean check_sharding(const PtsimJob *job, GError **error) {
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  const PtsimModel *m = &job->model;
  if ((unsigned)l->sharding > PTSIM_SHARDING_PARAMS ||
      (unsigned)run->fsdp_impl > PTSIM_FSDP_TORCH ||
      run->reshard_after_forward < PTSIM_RESHARD_AUTO ||
      run->reshard_after_forward > PTSIM_RESHARD_ALWAYS ||
      (run->fsdp_prefetch != 0 && run->fsdp_prefetch != 1))
    return invalid("layout: sharding, fsdp implementation, reshard-after-forward or prefetch out "
                   "of range");
  if (l->sharding == PTSIM_SHARDING_NONE) return TRUE;
  const char *word = l->sharding == PTSIM_SHARDING_GRADS ? "zero2" : "fsdp";
  if (!l->distributed_optimizer)
    return invalid("--sharding %s shards the optimizer states too: it needs the distributed "
                   "optimizer (drop --no-distributed-optimizer)",
                   word);
  if (l->sharding == PTSIM_SHARDING_GRADS && run->fsdp_impl == PTSIM_FSDP_TORCH)
    return invalid("--sharding zero2 with --fsdp-impl torch: PyTorch FSDP2 shards parameters "
                   "(use --sharding fsdp, with --reshard-after-forward never for ZeRO-2-like "
                   "memory)");
  if (l->schedule == PTSIM_SCHEDULE_ZB_H1)
    return invalid("--schedule zb-h1 with --sharding %s is not modelled (a unit's gradient is "
                   "ready only after its deferred weight-gradient pass); use 1f1b, gpipe or "
                   "interleaved",
                   word);
  /* torch.distributed.pipelining (torchtitan's V schedules) reduces an FSDP2
   * model's gradients once per step, after the last W (plan.c sync_once) */
  if ((l->schedule == PTSIM_SCHEDULE_ZBV || l->schedule == PTSIM_SCHEDULE_DUALPIPEV) &&
      !(l->sharding == PTSIM_SHARDING_PARAMS && run->fsdp_impl == PTSIM_FSDP_TORCH))
    return invalid("--schedule %s with --sharding %s is modelled only as PyTorch runs it, "
                   "--sharding fsdp --fsdp-impl torch (gradients reduced once per step, after "
                   "the deferred weight-gradient passes)",
                   schedule_word(l->schedule), word);
  /* Both implementations shard a mixture-of-experts model's routed experts
   * over the expert data-parallel group (plan.c "Sharding"): Megatron-FSDP
   * as its adapter builds the expert mesh, torch's FSDP2 as torchtitan
   * places them (efsdp: dp_shard x cp x tp / ep ranks, the experts not
   * tensor-parallel, EP borrowing from TP; older torchtitan's
   * expert_tensor_parallel_degree could also be tp, "dp_shard_mod_ep").
   * Other expert tensor-parallel sizes have no torch layout. */
  if (run->fsdp_impl == PTSIM_FSDP_TORCH && m->num_experts > 0 && l->etp != l->tp &&
      !(l->etp == 1 && l->ep > 1))
    return invalid("--sharding %s --fsdp-impl torch with experts: --etp %" G_GINT64_FORMAT
                   " has no PyTorch FSDP2 layout; torchtitan shards experts over tp "
                   "(--etp %" G_GINT64_FORMAT ") or, with --ep > 1, not at all (--etp 1, EP "
                   "borrowing from TP)",
                   word, I64(l->etp), I64(l->tp));
  if (run->fsdp_impl == PTSIM_FSDP_TORCH &&
      (run->main_params_bytes != 4 || run->precision_aware_optimizer))
    return invalid("--fsdp-impl torch keeps the fp32 sharded parameters as the optimizer's "
                   "master weights: --main-params-dtype must be fp32 and "
                   "--use-precision-aware-optimizer is not available");
  if (run->reshard_after_forward == PTSIM_RESHARD_AUTO)
    return unresolved("reshard_after_forward auto", error);
  return TRUE;
}

/* Expert parallelism (Megatron-Core's MoE parallel folding) and the MoE
 * execution settings, as Megatron-LM checks them (arguments.py,
 * transformer_config.py, moe_layer.py); dp is known, etp and edp
 * resolved. */
static gboolean check_experts(const PtsimJob *job, GError **error) {
  const PtsimModel *m = &job->model;
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  const char *name = m->name[0] ? m->name : "(unnamed)";
  if (l->ep == 0) return unresolved("ep 0", error);
  if (!check_count("--ep", l->ep, 1, error) || !check_count("--etp", l->etp, 0, error))
    return FALSE;
  if (l->etp == 0) return unresolved("etp 0", error);
  if (m->num_experts == 0 && l->ep > 1)
    return invalid("--ep %" G_GINT64_FORMAT " needs a mixture-of-experts model; model %s has "
                   "no experts (Megatron-LM asserts num_experts for expert parallelism)",
                   I64(l->ep), name);
  if (l->gpus % l->etp != 0 || (l->gpus / l->etp) % l->ep != 0 ||
      (l->gpus / l->etp / l->ep) % l->pp != 0)
    return invalid("--gpus %" G_GINT64_FORMAT
                   " is not divisible by etp*ep*pp (--etp %" G_GINT64_FORMAT
                   " --ep %" G_GINT64_FORMAT " --pp %" G_GINT64_FORMAT
                   "): the expert layers regroup every pipeline stage's GPUs as etp x ep x edp",
                   I64(l->gpus), I64(l->etp), I64(l->ep), I64(l->pp));
  if (l->edp != l->gpus / l->etp / l->ep / l->pp) return unresolved("edp", error);
  if (m->num_experts == 0 && (run->moe_ep_comm_overlap || run->delay_wgrad_compute))
    return invalid("%s needs a mixture-of-experts model with --ep > 1; model %s has no experts "
                   "(Megatron-LM asserts expert parallelism)",
                   run->moe_ep_comm_overlap ? "--overlap-moe-expert-parallel-comm"
                                            : "--delay-wgrad-compute",
                   name);
  if (m->num_experts == 0) return TRUE;
  if (m->num_experts % l->ep != 0)
    return invalid("--ep %" G_GINT64_FORMAT " does not divide num_experts %" G_GINT64_FORMAT
                   " of model %s",
                   I64(l->ep), I64(m->num_experts), name);
  if (m->moe_ffn_hidden_size % l->etp != 0)
    return invalid("--etp %" G_GINT64_FORMAT
                   " does not divide moe_ffn_hidden_size %" G_GINT64_FORMAT " of model %s",
                   I64(l->etp), I64(m->moe_ffn_hidden_size), name);
  if (m->moe_shared_expert_size % l->tp != 0)
    return invalid("--tp %" G_GINT64_FORMAT " does not divide moe_shared_expert_intermediate_size "
                   "%" G_GINT64_FORMAT " of model %s",
                   I64(l->tp), I64(m->moe_shared_expert_size), name);
  if (l->sp == 0 && l->tp > 1)
    return invalid("a mixture-of-experts model with --tp %" G_GINT64_FORMAT " needs sequence "
                   "parallelism (--sp; Megatron-LM's MoE layer refuses to train without it)",
                   I64(l->tp));
  if (l->distributed_optimizer && l->edp % l->optimizer_instances != 0)
    return invalid("--num-distributed-optimizer-instances %" G_GINT64_FORMAT "%s must divide the "
                   "expert data-parallel size %" G_GINT64_FORMAT,
                   I64(l->optimizer_instances),
                   l->sharding == PTSIM_SHARDING_NONE ? ""
                                                      : " (the HSDP replicas: dp x cp / "
                                                        "--hsdp-shard-size)",
                   I64(l->edp));
  if ((unsigned)run->moe_dispatcher > PTSIM_DISPATCH_FLEX || !(run->moe_capacity_factor >= 0.0) ||
      run->moe_capacity_factor > 1e6)
    return invalid("layout: MoE dispatcher or capacity factor out of range");
  if (run->moe_pad_to_capacity && run->moe_capacity_factor <= 0.0)
    return invalid("--moe-pad-expert-input-to-capacity needs --moe-expert-capacity-factor "
                   "(Megatron-LM refuses it)");
  if (run->moe_capacity_factor > 0.0 && m->moe_load_balancing != PTSIM_BALANCE_AUX_LOSS &&
      m->moe_load_balancing != PTSIM_BALANCE_SEQ_AUX_LOSS &&
      m->moe_load_balancing != PTSIM_BALANCE_GLOBAL_AUX_LOSS &&
      m->moe_load_balancing != PTSIM_BALANCE_NONE)
    return invalid("--moe-expert-capacity-factor works only with aux_loss, seq_aux_loss, "
                   "global_aux_loss or none load balancing (Megatron-LM refuses it)");
  if (run->moe_shared_expert_overlap &&
      (m->moe_shared_expert_size == 0 || run->moe_dispatcher == PTSIM_DISPATCH_ALLGATHER))
    return invalid("--moe-shared-expert-overlap needs shared experts and the alltoall or flex "
                   "dispatcher (Megatron-LM refuses it otherwise)");
  if (run->moe_ep_comm_overlap) {
    const char *why = l->ep < 2 ? "--ep > 1"
                      : run->moe_dispatcher == PTSIM_DISPATCH_ALLGATHER
                          ? "the alltoall or flex dispatcher"
                      : run->recompute == PTSIM_RECOMPUTE_FULL ? "no full recomputation"
                      : (run->recompute == PTSIM_RECOMPUTE_SELECTIVE &&
                         (run->recompute_modules & PTSIM_RECOMPUTE_MOE))
                          ? "no moe recompute module"
                      : run->moe_shared_expert_overlap ? "no --moe-shared-expert-overlap"
                      : m->mtp_num_layers > 1          ? "at most one MTP layer"
                      : l->pp > 1 && l->vp < 2 ? "virtual pipeline stages (--vp > 1) with --pp > 1"
                                               : NULL;
    if (why)
      return invalid("--overlap-moe-expert-parallel-comm needs %s (Megatron-LM asserts it)", why);
  }
  if (run->delay_wgrad_compute && !run->moe_ep_comm_overlap)
    return invalid("--delay-wgrad-compute needs --overlap-moe-expert-parallel-comm (Megatron-LM "
                   "asserts it)");
  if (run->delay_wgrad_compute && run->torch_layers != PTSIM_TORCH_LAYERS_NONE)
    return invalid("--delay-wgrad-compute needs Transformer Engine's layers (Megatron-LM "
                   "asserts it)");
  return TRUE;
}

/* PyTorch's layers replace Megatron's local ones (transformer_engine 0)
 * in dense models; torch's per-op checkpointing needs them (its policy
 * counts aten.mm calls, which Transformer Engine's GEMMs are not) and
 * SDPA's fused attention, whose outputs it keeps. */
static gboolean check_torch_layers(const PtsimJob *job, GError **error) {
  const PtsimModel *m = &job->model;
  const PtsimSettings *run = &job->settings;
  int dense = m->num_experts == 0 && !m->multi_latent_attention && m->mtp_num_layers == 0;
  if (run->torch_layers != PTSIM_TORCH_LAYERS_NONE && run->transformer_engine)
    return invalid("layout: PyTorch layers (torch_layers) replace Megatron's local layers, not "
                   "Transformer Engine's (transformer_engine must be 0)");
  if (run->torch_layers != PTSIM_TORCH_LAYERS_NONE && !dense)
    return invalid("--transformer-impl torch|torch-compile is modelled for dense models "
                   "(torchtitan's llama3); model %s has experts, MLA or MTP layers",
                   m->name[0] ? m->name : "(unnamed)");
  if (run->recompute == PTSIM_RECOMPUTE_SELECTIVE && run->torch_layers != PTSIM_TORCH_LAYERS_NONE)
    return invalid("--recompute selective is Megatron's --recompute-modules; PyTorch layers "
                   "(--transformer-impl torch|torch-compile) checkpoint per op: use "
                   "--recompute selective-op");
  if (run->recompute != PTSIM_RECOMPUTE_SELECTIVE_OP) return TRUE;
  if (run->torch_layers == PTSIM_TORCH_LAYERS_NONE)
    return invalid("--recompute selective-op is PyTorch's per-op checkpointing (torchtitan's "
                   "selective_ac_option 'op'), which counts aten.mm calls: it needs "
                   "--transformer-impl torch or torch-compile");
  if (!run->flash_attention)
    return invalid("--recompute selective-op keeps the outputs of SDPA's fused attention "
                   "kernels: it needs --attention flash");
  return TRUE;
}

gboolean ptsim_job_check(const PtsimJob *job, GError **error) {
  g_return_val_if_fail(job != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  const PtsimModel *m = &job->model;
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  const PtsimProvenance *src = &job->source;
  const char *name = m->name[0] ? m->name : "(unnamed)";

  if (!ptsim_model_check(m, error)) return FALSE;
  if (ptsim_model_is_hybrid(m) && !ptsim_hybrid_job_check(job, error)) return FALSE;

  /* Plain ranges first, so later arithmetic cannot overflow. */
  if (!check_count("--gpus", l->gpus, 1, error) || !check_count("--tp", l->tp, 1, error) ||
      !check_count("--pp", l->pp, 1, error) || !check_count("--cp", l->cp, 1, error) ||
      !check_count("--dp", l->dp, 0, error) || !check_count("--vp", l->vp, 1, error) ||
      !check_count("--mbs", l->mbs, 1, error) || !check_count("--gbs", l->gbs, 1, error) ||
      !check_count("--seq", l->seq, 1, error) ||
      !check_count("--recompute-num-layers", run->recompute_num_layers, 0, error))
    return FALSE;
  if (l->sp < -1 || l->sp > 1)
    return invalid("--sp %d is out of range: expected -1 (auto), 0 or 1", l->sp);
  if ((unsigned)run->recompute > PTSIM_RECOMPUTE_SELECTIVE_OP ||
      (unsigned)run->torch_layers > PTSIM_TORCH_LAYERS_COMPILED ||
      (unsigned)run->recompute_method > PTSIM_RECOMPUTE_METHOD_BLOCK ||
      (unsigned)run->precision > PTSIM_PRECISION_FP8 ||
      (unsigned)l->schedule > PTSIM_SCHEDULE_DUALPIPEV)
    return invalid("layout: recompute/recompute method/layers/precision/schedule out "
                   "of range");
  if (!check_torch_layers(job, error)) return FALSE;
  if (!(run->memory_threshold > 0 && run->memory_threshold <= 1))
    return invalid("--memory-threshold %g is out of range: expected a number "
                   "in (0, 1]",
                   run->memory_threshold);
  if (src->megatron_date != 0 &&
      (src->megatron_date < 20190101 || src->megatron_date > 21001231 ||
       src->megatron_date / 100 % 100 < 1 || src->megatron_date / 100 % 100 > 12 ||
       src->megatron_date % 100 < 1 || src->megatron_date % 100 > 31))
    return invalid("--megatron-date %d is out of range: expected 0 (current) or a date "
                   "YYYYMMDD from 2019 to 2100",
                   (int)src->megatron_date);
  if (!(src->attention_dropout >= 0 && src->attention_dropout < 1))
    return invalid("--attention-dropout %g is out of range: expected a "
                   "probability in [0, 1)",
                   src->attention_dropout);
  if (!(src->hidden_dropout >= 0 && src->hidden_dropout < 1))
    return invalid("--hidden-dropout %g is out of range: expected a "
                   "probability in [0, 1)",
                   src->hidden_dropout);

  /* Precision the hardware has, and the settings' ranges. */
  if (run->precision == PTSIM_PRECISION_FP8 && !(job->hw.peak_fp8_flops > 0.0))
    return invalid("--precision fp8: hardware profile %s has no FP8 tensor cores "
                   "(peak_fp8_tflops 0); use bf16 or fp16",
                   job->hw.name);
  if (run->precision == PTSIM_PRECISION_FP8 && run->fp8_recipe == PTSIM_FP8_MXFP8 && !job->hw.mxfp8)
    return invalid(
        "--fp8-recipe mxfp8 needs MXFP8 tensor cores (Blackwell: b200-180g, "
        "gb200-nvl72, b300-288g, gb300-nvl72); hardware profile %s has none (its [gpu] mxfp8 key; use delayed, "
        "tensorwise or blockwise)",
        job->hw.name);
  if (run->precision == PTSIM_PRECISION_FP8 && run->fp8_recipe == PTSIM_FP8_NVFP4 &&
      !(job->hw.peak_fp4_flops > 0.0))
    return invalid("--fp4-format needs NVFP4 tensor cores (Blackwell: b200-180g, gb200-nvl72, "
                   "b300-288g, gb300-nvl72); "
                   "hardware profile %s has none (its [gpu] peak_fp4_tflops key)",
                   job->hw.name);
  if ((unsigned)run->fp8_recipe > PTSIM_FP8_NVFP4 ||
      (run->main_params_bytes != 4 && run->main_params_bytes != 2) ||
      (run->exp_avg_bytes != 4 && run->exp_avg_bytes != 2 && run->exp_avg_bytes != 1) ||
      (run->exp_avg_sq_bytes != 4 && run->exp_avg_sq_bytes != 2 && run->exp_avg_sq_bytes != 1 &&
       run->exp_avg_sq_bytes != 0) ||
      (run->recompute_modules & ~PTSIM_RECOMPUTE_ALL_MODULES) != 0)
    return invalid("layout: fp8 recipe, optimizer state bytes or recompute modules out of range");
  if (run->defer_embedding_wgrad && l->pp == 1)
    return invalid("--defer-embedding-wgrad-compute needs pipeline parallelism (--pp > 1; "
                   "Megatron-LM refuses it without)");
  if (run->defer_embedding_wgrad && !run->grad_accumulation_fusion)
    return invalid("--defer-embedding-wgrad-compute needs gradient accumulation fusion "
                   "(Megatron-LM refuses it with --no-gradient-accumulation-fusion)");
  if (run->wgrad_deferral_limit < 0)
    return invalid("--wgrad-deferral-limit %" G_GINT64_FORMAT " is out of range: expected 0 "
                   "(every microbatch) or more",
                   I64(run->wgrad_deferral_limit));
  if (run->lora_rank < 0 ||
      (run->lora_rank > 0 &&
       (run->lora_targets <= 0 || run->lora_targets > PTSIM_LORA_ALL || !(run->lora_alpha > 0.0))))
    return invalid("--lora-rank %" G_GINT64_FORMAT ": expected a rank of 1 or more with a positive "
                   "--lora-alpha and at least one --lora-target-modules",
                   I64(run->lora_rank));
  if (run->lora_rank > 0) {
    const char *what = m->num_experts > 0          ? "mixture-of-experts models"
                       : m->multi_latent_attention ? "multi-latent attention"
                       : m->mtp_num_layers > 0     ? "multi-token prediction"
                       : run->torch_layers != PTSIM_TORCH_LAYERS_NONE
                           ? "PyTorch's layers (--transformer-impl torch)"
                       : l->sharding != PTSIM_SHARDING_NONE
                           ? "ZeRO-2/3 (--sharding zero2|fsdp|hsdp)"
                           : NULL;
    if (what)
      return invalid("--lora-rank: LoRA is modelled for dense Megatron-Core layers with DDP or "
                     "the distributed optimizer, not yet with %s",
                     what);
  }
  if (run->offload_modules & ~PTSIM_OFFLOAD_ALL)
    return invalid("--offload-modules: unknown modules");
  if (run->offload_modules && !(job->hw.host_link_bytes_per_s > 0.0))
    return invalid("--fine-grained-activation-offloading: hardware profile %s gives no host link "
                   "bandwidth (its [node] host_link_gbps key), which the offloaded activations "
                   "cross",
                   job->hw.name);
  if (run->offload_modules && run->torch_layers != PTSIM_TORCH_LAYERS_NONE)
    return invalid("--fine-grained-activation-offloading: modelled for Megatron-Core's layers, "
                   "not PyTorch's (--transformer-impl torch)");
  if (run->fp8_param_gather && !l->distributed_optimizer)
    return invalid("--fp8-param-gather needs the distributed optimizer (Megatron-LM asserts it)");

  int64_t dp = ptsim_layout_data_parallel(l->gpus, l->tp, l->pp, l->cp);
  if (dp == 0)
    return invalid("--gpus %" G_GINT64_FORMAT " is not divisible by tp*pp*cp "
                   "(--tp %" G_GINT64_FORMAT " --pp %" G_GINT64_FORMAT " --cp %" G_GINT64_FORMAT
                   ")",
                   I64(l->gpus), I64(l->tp), I64(l->pp), I64(l->cp));
  if (l->dp == 0) return unresolved("dp 0", error);
  if (l->dp != dp)
    return invalid("--dp %" G_GINT64_FORMAT " does not match --gpus %" G_GINT64_FORMAT
                   ": tp*pp*cp*dp = %" G_GINT64_FORMAT "*%" G_GINT64_FORMAT "*%" G_GINT64_FORMAT
                   "*%" G_GINT64_FORMAT " must equal gpus (dp would be %" G_GINT64_FORMAT ")",
                   I64(l->dp), I64(l->gpus), I64(l->tp), I64(l->pp), I64(l->cp), I64(l->dp),
                   I64(dp));
  if (l->optimizer_instances < 1 || (l->distributed_optimizer && dp % l->optimizer_instances != 0))
    return invalid("--num-distributed-optimizer-instances %" G_GINT64_FORMAT
                   " must divide dp %" G_GINT64_FORMAT
                   " (ptsim keeps each instance to whole data-parallel ranks)",
                   I64(l->optimizer_instances), I64(dp));

  if (!check_experts(job, error)) return FALSE;

  if (!check_sharding(job, error)) return FALSE;

  /* Tensor parallelism splits heads, KV groups and the MLP.  The vocabulary
   * is padded by Megatron-LM to a multiple of tp, so it is not checked. */
  if (!check_divides("--tp", l->tp, "num_attention_heads", m->num_attention_heads, name, error) ||
      !check_divides("--tp", l->tp, "num_query_groups", m->num_query_groups, name, error) ||
      !check_divides("--tp", l->tp, "ffn_hidden_size", m->ffn_hidden_size, name, error))
    return FALSE;

  if (l->sp == -1) return unresolved("sp -1 (auto)", error);
  if ((unsigned)job->settings.cp_comm > PTSIM_CP_ALLGATHER)
    return invalid("layout: cp comm type out of range");
  /* Ulysses hands each CP rank heads / cp of the TP rank's heads and KV
   * groups (Transformer Engine asserts both divide) */
  if (l->cp > 1 && job->settings.cp_comm == PTSIM_CP_A2A &&
      ((m->num_attention_heads / l->tp) % l->cp != 0 || (m->num_query_groups / l->tp) % l->cp != 0))
    return invalid("--cp-comm-type a2a: the attention heads (%" G_GINT64_FORMAT
                   ") and KV groups (%" G_GINT64_FORMAT ") per TP rank must be divisible by "
                   "--cp %" G_GINT64_FORMAT " (each CP rank takes heads / cp)",
                   I64(m->num_attention_heads / l->tp), I64(m->num_query_groups / l->tp),
                   I64(l->cp));
  /* Attention sinks under context parallelism: Transformer Engine turns
   * FlashAttention off for any softmax but vanilla, its fused (cuDNN)
   * attention off for CP other than a2a, and its unfused attention has no
   * CP: no backend is left (get_attention_backend, pytorch/attention/
   * dot_product_attention/utils.py at d0067d0d) */
  if (l->cp > 1 && m->softmax_type != PTSIM_SOFTMAX_VANILLA && job->settings.transformer_engine &&
      job->settings.cp_comm != PTSIM_CP_A2A)
    return invalid("softmax_type %s with --cp %" G_GINT64_FORMAT
                   " and the %s exchange: Transformer Engine runs attention sinks under context "
                   "parallelism only with cp_comm_type a2a (FlashAttention takes no sinks, "
                   "cuDNN's fused attention no other CP, the unfused one no CP); use "
                   "--cp-comm-type a2a",
                   m->softmax_type == PTSIM_SOFTMAX_LEARNABLE ? "learnable" : "off-by-one",
                   I64(l->cp), job->settings.cp_comm == PTSIM_CP_P2P ? "p2p ring" : "all-gather");
  if (l->cp > 1 && l->seq % (2 * l->cp) != 0)
    return invalid("--seq %" G_GINT64_FORMAT " is not divisible by 2*cp = %" G_GINT64_FORMAT
                   " (--cp %" G_GINT64_FORMAT "; context "
                   "parallelism splits the sequence into 2*cp chunks)",
                   I64(l->seq), I64(2 * l->cp), I64(l->cp));
  if (l->sp == 1 && (l->seq / l->cp) % l->tp != 0)
    return invalid("--seq %" G_GINT64_FORMAT " (per cp rank %" G_GINT64_FORMAT
                   ") is not divisible by --tp %" G_GINT64_FORMAT
                   " as sequence parallelism (--sp) needs",
                   I64(l->seq), I64(l->seq / l->cp), I64(l->tp));

  /* Pipeline. */
  if (l->pp > PTSIM_MAX_STAGES)
    return invalid("--pp %" G_GINT64_FORMAT " is more than ptsim's limit of %d "
                   "pipeline stages",
                   I64(l->pp), PTSIM_MAX_STAGES);
  if (l->pp > m->num_layers)
    return invalid("--pp %" G_GINT64_FORMAT " is more than num_layers %" G_GINT64_FORMAT
                   " of model %s",
                   I64(l->pp), I64(m->num_layers), name);
  if (l->vp > 1) {
    if (l->pp < 2)
      return invalid("--vp %" G_GINT64_FORMAT " (interleaved schedule) needs "
                     "--pp >= 2 (got --pp %" G_GINT64_FORMAT ")",
                     I64(l->vp), I64(l->pp));
    if (l->pp * l->vp > PTSIM_MAX_VSTAGES) /* pp <= 128 and vp < 2^31: no overflow */
      return invalid("--pp %" G_GINT64_FORMAT " x --vp %" G_GINT64_FORMAT " = %" G_GINT64_FORMAT
                     " virtual stages is more than ptsim's limit of %d",
                     I64(l->pp), I64(l->vp), I64(l->pp * l->vp), PTSIM_MAX_VSTAGES);
    /* an uneven, accounted or laid-out split is checked by split_stages */
    if (l->first_stage_layers == 0 && l->last_stage_layers == 0 && !l->account_embedding &&
        !l->account_loss && l->vstage_runs == 0 && m->num_layers % (l->pp * l->vp) != 0)
      return invalid("--pp %" G_GINT64_FORMAT " times --vp %" G_GINT64_FORMAT " = %" G_GINT64_FORMAT
                     " does not divide num_layers %" G_GINT64_FORMAT " of model %s",
                     I64(l->pp), I64(l->vp), I64(l->pp * l->vp), I64(m->num_layers), name);
    if (l->schedule == PTSIM_SCHEDULE_GPIPE || l->schedule == PTSIM_SCHEDULE_ZB_H1)
      return invalid("--schedule %s cannot run virtual stages (--vp %" G_GINT64_FORMAT
                     "); use --schedule interleaved or --vp 1",
                     schedule_word(l->schedule), I64(l->vp));
    if ((l->schedule == PTSIM_SCHEDULE_ZBV || l->schedule == PTSIM_SCHEDULE_DUALPIPEV) &&
        l->vp != 2)
      return invalid("--schedule %s runs 2 chunks per stage (a V), not --vp %" G_GINT64_FORMAT
                     " (PyTorch refuses it)",
                     schedule_word(l->schedule), I64(l->vp));
    if (l->schedule != PTSIM_SCHEDULE_INTERLEAVED && l->schedule != PTSIM_SCHEDULE_ZBV &&
        l->schedule != PTSIM_SCHEDULE_DUALPIPEV)
      return unresolved("schedule 1f1b with --vp > 1", error);
  } else if (l->schedule == PTSIM_SCHEDULE_INTERLEAVED) {
    return invalid("--schedule interleaved needs --vp > 1 (got --vp 1)");
  }
  int64_t stage_layers[PTSIM_MAX_STAGES];
  if (!split_stages(l, m->num_layers, stage_layers, error)) return FALSE;
  if (l->mtp_apart && !mtp_apart_modelled(l, m, error)) return FALSE;

  /* Batch. */
  if (l->gbs % l->mbs != 0 || (l->gbs / l->mbs) % l->dp != 0)
    return invalid("--gbs %" G_GINT64_FORMAT " is not a multiple of mbs*dp "
                   "(--mbs %" G_GINT64_FORMAT " times dp %" G_GINT64_FORMAT ")",
                   I64(l->gbs), I64(l->mbs), I64(l->dp));
  int64_t microbatches = l->gbs / l->mbs / l->dp;
  if (!check_microbatch_group(l, microbatches, error)) return FALSE;
  /* PyTorch's ScheduleDualPipeV refuses fewer microbatches than its 2 pp
   * stages; ScheduleZBVZeroBubble builds the order of 2 pp - 1 and drops
   * the missing ones, which ptsim does not model */
  if ((l->schedule == PTSIM_SCHEDULE_ZBV && microbatches < 2 * l->pp - 1) ||
      (l->schedule == PTSIM_SCHEDULE_DUALPIPEV && microbatches < 2 * l->pp))
    return invalid("--schedule %s needs at least %" G_GINT64_FORMAT
                   " microbatches (2 pp%s), got gbs/(mbs*dp) = %" G_GINT64_FORMAT,
                   schedule_word(l->schedule),
                   I64(2 * l->pp - (l->schedule == PTSIM_SCHEDULE_ZBV ? 1 : 0)),
                   l->schedule == PTSIM_SCHEDULE_ZBV ? " - 1" : "", I64(microbatches));

  /* Recomputation. */
  if (run->recompute == PTSIM_RECOMPUTE_FULL && run->recompute_num_layers > 0) {
    int32_t counts[PTSIM_MAX_VSTAGES];
    int64_t most = 0;
    if (ptsim_plan_split_vstages(l, m->num_layers, counts) != 0) /* split_stages took it */
      return invalid("--pp %" G_GINT64_FORMAT " cannot split num_layers %" G_GINT64_FORMAT,
                     I64(l->pp), I64(m->num_layers));
    for (int64_t k = 0; k < l->pp * l->vp; k++)
      if (counts[k] > most) most = counts[k];
    if (run->recompute_num_layers > most)
      return invalid("--recompute-num-layers %" G_GINT64_FORMAT " is more "
                     "than the %" G_GINT64_FORMAT " layers of a pipeline "
                     "stage%s",
                     I64(run->recompute_num_layers), I64(most),
                     l->vp > 1 ? " (per virtual stage)" : "");
  }
  return TRUE;
}

gboolean ptsim_job_validate(PtsimJob *job, GError **error) {
  g_return_val_if_fail(job != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  ptsim_job_resolve(job);
  return ptsim_job_check(job, error) && ptsim_hybrid_simulation_check(job, error);
}
