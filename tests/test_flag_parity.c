/* test_flag_parity.c — every Megatron-LM flag ptsim models gives the same job,
 * and so the same prediction, as its native ptsim flag: for each, a
 * --megatron-args line with the flag against the same line without it plus
 * the native flag (sim/io/job_options.c).  Each case also checks that the flag
 * moves the prediction it should (memory, step time, or the verdict), so a
 * flag that is read but not modelled fails. */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "job_build.h"
#include "config.h"
#include "plan_of.h"

/* A small GPT on one 8 x H100 node: tp 2, pp 2, dp 2, SP, distributed
 * optimizer, bf16, no dropout. */
#define BASE                                                                                 \
  "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "           \
  "--num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 "               \
  "--micro-batch-size 1 --global-batch-size 64 --tensor-model-parallel-size 2 "              \
  "--pipeline-model-parallel-size 2 --sequence-parallel --use-distributed-optimizer --bf16 " \
  "--vocab-size 50257 --swiglu --attention-dropout 0 --hidden-dropout 0 "

typedef void (*Native)(PtsimJobOptions *o);

typedef struct {
  double step_s, memory_bytes, allocator_bytes;
} Prediction; /* memory_bytes: the estimate summed over the stages */

static void resolve(const char *megatron, Native native, PtsimJob *job) {
  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  o.megatron_args = g_strdup(megatron);
  o.hw = g_strdup("h100-80g");
  if (native) native(&o);
  g_autoptr(GError) error = NULL;
  gboolean ok = ptsim_job_build(&o, job, NULL, &error);
  if (!ok) g_error("'%s': %s", megatron, error->message);
  ptsim_job_options_clear(&o);
  /* BASE is small enough for its host to bound each pass (host_time.h):
   * the GPU-side effect each flag has is what this test checks */
  memset(&job->settings.host.costs, 0, sizeof job->settings.host.costs);
}

static void predict(const PtsimJob *job, Prediction *p) {
  g_autofree PtsimPlan *plan = plan_of(job);
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  PtsimMemoryEstimate m;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_simulate(plan, NULL, t, &error));
  g_assert_true(ptsim_simulate_allocator(plan, 2, NULL, NULL, t->step_s, NULL, a, &error));
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &m);
  p->step_s = t->step_s;
  p->memory_bytes = 0.0; /* every stage's, not only the peak's */
  for (int64_t i = 0; i < m.num_stages; i++) p->memory_bytes += m.stages[i].total_bytes;
  p->allocator_bytes = a->stages[a->peak_stage].reserved_peak_bytes;
}

typedef enum { MOVES_TIME = 1, MOVES_MEMORY = 2, MOVES_NOTHING = 4 } Moves;

/* BASE + extra + flag == BASE + extra + native flag; and against BASE + extra
 * alone, the prediction moves as `moves` says. */
static void parity(const char *extra, const char *flag, Native native, Moves moves) {
  g_autofree char *with = g_strconcat(BASE, extra, " ", flag, NULL);
  g_autofree char *without = g_strconcat(BASE, extra, NULL);
  PtsimJob a, b, c;
  resolve(with, NULL, &a);
  resolve(without, native, &b);
  resolve(without, NULL, &c);
  if (memcmp(&a, &b, sizeof a) != 0) g_error("%s: the native flag gives another job", flag);
  Prediction pa, pb, pc;
  predict(&a, &pa);
  predict(&b, &pb);
  predict(&c, &pc);
  g_assert_cmpfloat(pa.step_s, ==, pb.step_s);
  g_assert_cmpfloat(pa.memory_bytes, ==, pb.memory_bytes);
  g_assert_cmpfloat(pa.allocator_bytes, ==, pb.allocator_bytes);
  g_test_message("%s: step %.4f -> %.4f s, memory %.3f -> %.3f GiB", flag, pc.step_s, pa.step_s,
                 pc.memory_bytes / 1073741824.0, pa.memory_bytes / 1073741824.0);
  if (moves & MOVES_TIME && pa.step_s == pc.step_s)
    g_error("%s: the step time does not move", flag);
  if (moves & MOVES_MEMORY && pa.memory_bytes == pc.memory_bytes)
    g_error("%s: the memory estimate does not move", flag);
  if (moves & MOVES_NOTHING && (pa.step_s != pc.step_s || pa.memory_bytes != pc.memory_bytes))
    g_error("%s: moves a prediction it should not", flag);
}

static void n_overlap_grad(PtsimJobOptions *o) { o->overlap_grad_reduce = TRUE; }
static void n_overlap_param(PtsimJobOptions *o) { o->overlap_param_gather = TRUE; }
static void n_tp_overlap(PtsimJobOptions *o) { o->tp_comm_overlap = TRUE; }
static void n_no_ag(PtsimJobOptions *o) { o->no_tp_comm_overlap_ag = TRUE; }
static void n_no_rs(PtsimJobOptions *o) { o->no_tp_comm_overlap_rs = TRUE; }
static void n_no_bulk(PtsimJobOptions *o) { o->no_tp_comm_bulk_dgrad = TRUE; }
static void n_rs_dgrad(PtsimJobOptions *o) { o->tp_comm_overlap_rs_dgrad = TRUE; }
static void n_local(PtsimJobOptions *o) { o->transformer_impl = g_strdup("local"); }
static void n_unfused(PtsimJobOptions *o) { o->attention = g_strdup("unfused"); }
static void n_legacy_flash(PtsimJobOptions *o) {
  o->transformer_impl = g_strdup("local");
  o->attention = g_strdup("flash");
}
static void n_softmax_fp32(PtsimJobOptions *o) { o->attention_softmax_fp32 = TRUE; }
static void n_grads_2b(PtsimJobOptions *o) { o->no_fp32_grad_accumulation = TRUE; }
static void n_no_fusion(PtsimJobOptions *o) { o->no_gradient_accumulation_fusion = TRUE; }
static void n_ce_fusion(PtsimJobOptions *o) { o->cross_entropy_loss_fusion = TRUE; }
static void n_ce_te(PtsimJobOptions *o) { o->cross_entropy_fusion_impl = g_strdup("te"); }
static void n_defer(PtsimJobOptions *o) { o->defer_embedding_wgrad = TRUE; }
static void n_defer_limit(PtsimJobOptions *o) {
  o->wgrad_deferral_limit = (PtsimOptionInt){TRUE, 2};
}
static void n_modules(PtsimJobOptions *o) { o->recompute_modules = g_strdup("core_attn,mlp"); }
static void n_tensorwise(PtsimJobOptions *o) { o->fp8_recipe = g_strdup("tensorwise"); }
static void n_fp8_gather(PtsimJobOptions *o) { o->fp8_param_gather = TRUE; }
static void n_low_states(PtsimJobOptions *o) {
  o->precision_aware_optimizer = TRUE;
  o->main_params_dtype = g_strdup("fp16");
  o->exp_avg_dtype = g_strdup("bf16");
  o->exp_avg_sq_dtype = g_strdup("fp8");
}
static void n_remainders(PtsimJobOptions *o) { o->precision_aware_optimizer = TRUE; }
static void n_aware_grads(PtsimJobOptions *o) {
  o->precision_aware_optimizer = TRUE;
  o->no_fp32_grad_accumulation = TRUE;
}
static void n_instances(PtsimJobOptions *o) { o->optimizer_instances = (PtsimOptionInt){TRUE, 2}; }
static void n_account(PtsimJobOptions *o) { o->account_embedding = o->account_loss = TRUE; }
static void n_layout(PtsimJobOptions *o) { o->pipeline_layout = g_strdup("Et*3|t*5L"); }
static void n_layout_mtp_apart(PtsimJobOptions *o) { o->pipeline_layout = g_strdup("Et*8m|L"); }
static void n_layout_unequal(PtsimJobOptions *o) {
  o->pipeline_layout = g_strdup("Et*3|t*2|t*2|tL");
}
static void n_group(PtsimJobOptions *o) { o->microbatch_group = (PtsimOptionInt){TRUE, 4}; }
static void n_first_last(PtsimJobOptions *o) {
  o->first_stage_layers = (PtsimOptionInt){TRUE, 3};
  o->last_stage_layers = (PtsimOptionInt){TRUE, 5};
}
static void n_kv(PtsimJobOptions *o) { o->kv_channels = (PtsimOptionInt){TRUE, 128}; }
static void n_qk(PtsimJobOptions *o) { o->qk_layernorm = TRUE; }
static void n_rope(PtsimJobOptions *o) { o->position_embedding = g_strdup("rope"); }
static void n_gc(PtsimJobOptions *o) { o->manual_gc = TRUE; }
static void n_deterministic(PtsimJobOptions *o) { o->deterministic = TRUE; }
static void n_fp16_grads(PtsimJobOptions *o) { o->no_fp32_grad_accumulation = TRUE; }

/* A small MoE model on the same node: 8 experts of width 1024, top-2,
 * ep 4 etp 1 (edp 1 per stage of 4 GPUs). */
#define MOE_MODEL "--num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 1024 "
#define MOE MOE_MODEL "--expert-model-parallel-size 4 --expert-tensor-parallel-size 1 "

static void n_ep(PtsimJobOptions *o) {
  o->ep = (PtsimOptionInt){TRUE, 4};
  o->etp = (PtsimOptionInt){TRUE, 1};
}
static void n_alltoall(PtsimJobOptions *o) { o->moe_dispatcher = g_strdup("alltoall"); }
static void n_flex(PtsimJobOptions *o) { o->moe_dispatcher = g_strdup("flex"); }
static void n_grouped(PtsimJobOptions *o) { o->moe_grouped_gemm = TRUE; }
static void n_capacity(PtsimJobOptions *o) {
  o->moe_capacity_factor = (PtsimOptionDouble){TRUE, 2.0};
}
static void n_pad(PtsimJobOptions *o) {
  o->moe_capacity_factor = (PtsimOptionDouble){TRUE, 2.0};
  o->moe_pad_to_capacity = TRUE;
}
static void n_router_fp32(PtsimJobOptions *o) { o->moe_router_dtype = g_strdup("fp32"); }
static void n_permute(PtsimJobOptions *o) { o->moe_permute_fusion = TRUE; }
static void n_router_fusion(PtsimJobOptions *o) { o->moe_router_fusion = TRUE; }
static void n_shared_overlap(PtsimJobOptions *o) { o->moe_shared_expert_overlap = TRUE; }
static void n_ep_overlap(PtsimJobOptions *o) { o->moe_ep_comm_overlap = TRUE; }
static void n_delay_wgrad(PtsimJobOptions *o) { o->delay_wgrad_compute = TRUE; }
static void n_mtp(PtsimJobOptions *o) { o->mtp_num_layers = (PtsimOptionInt){TRUE, 1}; }
static void n_moe_recompute(PtsimJobOptions *o) {
  o->recompute = g_strdup("selective");
  o->recompute_modules = g_strdup("core_attn,moe");
}
static void n_moe_act(PtsimJobOptions *o) { o->recompute_modules = g_strdup("moe_act"); }

static void test_moe(void) {
  g_test_summary("Megatron-LM's MoE flags against ptsim's: expert parallelism, the dispatcher, "
                 "grouped GEMMs, capacity, router dtype and fusions, the two overlaps, MTP, the "
                 "MoE recompute modules");
  parity(MOE_MODEL "--expert-tensor-parallel-size 1", "--expert-model-parallel-size 4", n_ep,
         MOVES_TIME | MOVES_MEMORY);
  parity(MOE, "--moe-token-dispatcher-type alltoall", n_alltoall, MOVES_TIME);
  parity(MOE, "--moe-token-dispatcher-type flex", n_flex, MOVES_TIME);
  parity(MOE, "--moe-enable-deepep", n_flex, MOVES_TIME);
  parity(MOE, "--moe-grouped-gemm", n_grouped, MOVES_TIME);
  parity(MOE "--moe-token-dispatcher-type alltoall", "--moe-expert-capacity-factor 2.0", n_capacity,
         MOVES_TIME | MOVES_MEMORY);
  parity(MOE, "--moe-expert-capacity-factor 2.0 --moe-pad-expert-input-to-capacity", n_pad,
         MOVES_TIME | MOVES_MEMORY);
  parity(MOE, "--moe-router-dtype fp32", n_router_fp32, MOVES_TIME);
  parity(MOE, "--moe-permute-fusion", n_permute, MOVES_TIME);
  parity(MOE, "--moe-router-fusion", n_router_fusion, MOVES_TIME);
  parity(MOE "--moe-shared-expert-intermediate-size 2048 --moe-token-dispatcher-type alltoall",
         "--moe-shared-expert-overlap", n_shared_overlap, MOVES_TIME);
  parity(MOE "--moe-token-dispatcher-type alltoall --num-virtual-stages-per-pipeline-rank 2",
         "--overlap-moe-expert-parallel-comm", n_ep_overlap, MOVES_TIME);
  /* the same job either way; here the all-to-all already hides without
   * the delay (the step does not move: test_engine's combined-1f1b shows
   * what the delay hides) */
  parity(MOE "--moe-token-dispatcher-type alltoall --num-virtual-stages-per-pipeline-rank 2 "
             "--overlap-moe-expert-parallel-comm",
         "--delay-wgrad-compute", n_delay_wgrad, 0);
  parity(MOE, "--mtp-num-layers 1", n_mtp, MOVES_TIME | MOVES_MEMORY);
  parity(MOE, "--moe-layer-recompute", n_moe_recompute, MOVES_TIME | MOVES_MEMORY);
  parity(MOE "--recompute-granularity selective", "--recompute-modules moe_act", n_moe_act,
         MOVES_TIME | MOVES_MEMORY);
}

static void test_overlap(void) {
  g_test_summary("--overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap and its parts");
  parity("", "--overlap-grad-reduce", n_overlap_grad, MOVES_TIME);
  parity("--overlap-grad-reduce", "--overlap-param-gather", n_overlap_param, MOVES_TIME);
  parity("", "--tp-comm-overlap", n_tp_overlap, MOVES_TIME);
  parity("--tp-comm-overlap", "--no-tp-comm-overlap-ag", n_no_ag, MOVES_TIME);
  parity("--tp-comm-overlap", "--disable-tp-comm-overlap-rs", n_no_rs, MOVES_TIME);
  parity("--tp-comm-overlap", "--no-tp-comm-bulk-dgrad", n_no_bulk, MOVES_TIME);
  parity("--tp-comm-overlap", "--tp-comm-overlap-rs-dgrad", n_rs_dgrad, MOVES_TIME);
}

static void test_attention(void) {
  g_test_summary("--transformer-impl, --attention-backend, --use-flash-attn (legacy models), "
                 "--attention-softmax-in-fp32, --apply-query-key-layer-scaling");
  parity("", "--transformer-impl local", n_local, MOVES_TIME | MOVES_MEMORY);
  parity("", "--attention-backend unfused", n_unfused, MOVES_TIME | MOVES_MEMORY);
  parity("--use-legacy-models", "--use-flash-attn", n_legacy_flash, MOVES_TIME | MOVES_MEMORY);
  /* past 4096 tokens Megatron's local softmax is PyTorch's, in fp32 when
   * asked: 4 + 2 bytes kept per score instead of 2 (memory.c) */
  parity("--transformer-impl local --seq-length 8192 --max-position-embeddings 8192",
         "--attention-softmax-in-fp32", n_softmax_fp32, MOVES_MEMORY);
  parity("--transformer-impl local --seq-length 8192 --max-position-embeddings 8192",
         "--apply-query-key-layer-scaling", n_softmax_fp32, MOVES_MEMORY);
}

static void test_gradients(void) {
  g_test_summary("--grad-reduce-in-bf16, --accumulate-allreduce-grads-in-fp32 (fp16; bf16 forces "
                 "it), --no-gradient-accumulation-fusion, --cross-entropy-loss-fusion");
  parity("", "--grad-reduce-in-bf16", n_grads_2b, MOVES_TIME | MOVES_MEMORY);
  /* under bf16 Megatron forces fp32 accumulation: the flag changes nothing */
  parity("", "--accumulate-allreduce-grads-in-fp32", NULL, MOVES_NOTHING);
  parity("", "--no-gradient-accumulation-fusion", n_no_fusion, MOVES_TIME);
  /* the native one is compiled: a second fp32 copy of the logits while it runs */
  parity("", "--cross-entropy-loss-fusion", n_ce_fusion, MOVES_TIME | MOVES_MEMORY);
  /* Transformer Engine's keeps what the unfused one keeps */
  parity("--cross-entropy-loss-fusion", "--cross-entropy-fusion-impl te", n_ce_te, MOVES_MEMORY);
  /* the last stage keeps every microbatch's logits gradient to the flush */
  parity("", "--defer-embedding-wgrad-compute", n_defer, MOVES_MEMORY);
  parity("--defer-embedding-wgrad-compute", "--wgrad-deferral-limit 2", n_defer_limit,
         MOVES_MEMORY);
}

static void test_fp16_accumulation(void) {
  g_test_summary("fp16 keeps 2-byte grads unless --accumulate-allreduce-grads-in-fp32");
  g_autofree char *line = g_strconcat(BASE, "--fp16", NULL);
  /* BASE has --bf16: replace it */
  char *at = strstr(line, "--bf16 ");
  memcpy(at, "       ", 7);
  g_autofree char *acc = g_strconcat(line, " --accumulate-allreduce-grads-in-fp32", NULL);
  PtsimJob a, b;
  resolve(line, NULL, &a);
  resolve(acc, NULL, &b);
  g_assert_cmpint(a.settings.fp32_grad_accumulation, ==, 0);
  g_assert_cmpint(b.settings.fp32_grad_accumulation, ==, 1);
  PtsimJob c;
  resolve(acc, n_fp16_grads, &c); /* the native flag turns it back to 2 bytes */
  g_assert_cmpint(memcmp(&a, &c, sizeof a), ==, 0);
}

static void test_recompute_fp8_optimizer(void) {
  g_test_summary("--recompute-modules, --fp8-recipe, --fp8-param-gather, the precision-aware "
                 "optimizer's dtypes, --num-distributed-optimizer-instances");
  parity("--recompute-granularity selective", "--recompute-modules core_attn mlp", n_modules,
         MOVES_TIME | MOVES_MEMORY);
  parity("--fp8-format hybrid", "--fp8-recipe tensorwise", n_tensorwise, MOVES_TIME);
  parity("--fp8-format hybrid", "--fp8-param-gather", n_fp8_gather, MOVES_TIME | MOVES_MEMORY);
  parity("",
         "--use-precision-aware-optimizer --main-params-dtype fp16 --exp-avg-dtype bf16 "
         "--exp-avg-sq-dtype fp8",
         n_low_states, MOVES_TIME | MOVES_MEMORY);
  /* fp32 masters of bf16 weights become 16-bit remainders */
  parity("", "--use-precision-aware-optimizer", n_remainders, MOVES_TIME | MOVES_MEMORY);
  parity("", "--use-precision-aware-optimizer --main-grads-dtype bf16", n_aware_grads,
         MOVES_TIME | MOVES_MEMORY);
  parity("", "--num-distributed-optimizer-instances 2", n_instances, MOVES_TIME | MOVES_MEMORY);
}

static void n_fsdp(PtsimJobOptions *o) { o->sharding = g_strdup("fsdp"); }
static void n_zero2(PtsimJobOptions *o) { o->sharding = g_strdup("zero2"); }
static void n_ddp(PtsimJobOptions *o) { o->sharding = g_strdup("ddp"); }
static void n_hsdp(PtsimJobOptions *o) {
  o->sharding = g_strdup("hsdp");
  o->hsdp_shard_size = (PtsimOptionInt){TRUE, 1};
}
static void n_torch_fsdp2(PtsimJobOptions *o) {
  o->sharding = g_strdup("fsdp");
  o->no_fp32_grad_accumulation = TRUE;
}
static void n_torch_fsdp2_keep(PtsimJobOptions *o) {
  n_torch_fsdp2(o);
  o->reshard_after_forward = g_strdup("never");
}

static void test_sharding(void) {
  g_test_summary("--use-megatron-fsdp with each --data-parallel-sharding-strategy and instances "
                 "(and with expert parallelism) == --sharding ddp|zero1|zero2|fsdp|hsdp; "
                 "--use-torch-fsdp2 == --sharding fsdp "
                 "with 2-byte gradients");
  parity("", "--use-megatron-fsdp", n_fsdp, MOVES_TIME | MOVES_MEMORY);
  parity("", "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params", n_fsdp,
         MOVES_TIME | MOVES_MEMORY);
  parity("", "--use-custom-fsdp --data-parallel-sharding-strategy optim_grads", n_zero2,
         MOVES_TIME | MOVES_MEMORY);
  parity("", "--use-megatron-fsdp --data-parallel-sharding-strategy optim", NULL, MOVES_NOTHING);
  parity("", "--use-megatron-fsdp --data-parallel-sharding-strategy no_shard", n_ddp,
         MOVES_TIME | MOVES_MEMORY);
  parity("--num-distributed-optimizer-instances 2", "--use-megatron-fsdp", n_hsdp,
         MOVES_TIME | MOVES_MEMORY);
  /* with experts: Megatron-FSDP shards them over the expert data-parallel
   * group (edp 8 / (etp 1 x ep 2 x pp 2) = 2) */
  parity("--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 2 "
         "--expert-tensor-parallel-size 1 --moe-token-dispatcher-type alltoall",
         "--use-megatron-fsdp", n_fsdp, MOVES_TIME | MOVES_MEMORY);
  /* FSDP2: no pipeline, no distributed optimizer, no wgrad fusion, untied */
  static const char torch_base[] =
      "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 "
      "--micro-batch-size 1 --global-batch-size 64 --tensor-model-parallel-size 2 "
      "--sequence-parallel --bf16 --vocab-size 50257 --swiglu --attention-dropout 0 "
      "--hidden-dropout 0 --no-gradient-accumulation-fusion --untie-embeddings-and-output-weights";
  static const struct {
    const char *flag;
    Native native;
  } cases[] = {{"--use-torch-fsdp2", n_torch_fsdp2},
               {"--use-torch-fsdp2 --torch-fsdp2-no-reshard-after-forward", n_torch_fsdp2_keep}};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *with = g_strconcat(torch_base, " ", cases[i].flag, NULL);
    PtsimJob a, b;
    resolve(with, NULL, &a);
    resolve(torch_base, cases[i].native, &b);
    if (memcmp(&a, &b, sizeof a) != 0)
      g_error("%s: the native flags give another job", cases[i].flag);
    g_assert_cmpint(a.layout.sharding, ==, PTSIM_SHARDING_PARAMS);
  }
}

static void test_split_and_shape(void) {
  g_test_summary("--account-for-*, --pipeline-model-parallel-layout (unequal virtual stages "
                 "too), --microbatch-group-size-per-virtual-pipeline-stage, --kv-channels, "
                 "--qk-layernorm, --position-embedding-type, --manual-gc, --deterministic-mode");
  /* with both flags at pp 2 the split equals the even one: parity only;
   * the split itself is checked below */
  parity("", "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split",
         n_account, 0);
  parity("", "--pipeline-model-parallel-layout 'Et*3|t*5L'", n_layout, MOVES_TIME | MOVES_MEMORY);
  parity("", "--pipeline-model-parallel-layout 'Et*3|t*5L'", n_first_last, MOVES_TIME);
  /* unequal virtual stages (3, 2, 2, 1 over pp 2 x vp 2) */
  parity("", "--pipeline-model-parallel-layout 'Et*3|t*2|t*2|tL'", n_layout_unequal,
         MOVES_TIME | MOVES_MEMORY);
  /* the MTP layer apart, with the embedding on rank 0; rank 1 the loss */
  parity(" --mtp-num-layers 1", "--pipeline-model-parallel-layout 'Et*8m|L'", n_layout_mtp_apart,
         MOVES_TIME | MOVES_MEMORY);
  /* the interleaved schedule's microbatch group: 32 microbatches over pp 2
   * x vp 2 in groups of 4 instead of 2 (more warm-up: more memory) */
  parity("--num-virtual-stages-per-pipeline-rank 2",
         "--microbatch-group-size-per-virtual-pipeline-stage 4", n_group,
         MOVES_TIME | MOVES_MEMORY);
  parity("", "--kv-channels 128", n_kv, MOVES_TIME | MOVES_MEMORY);
  parity("", "--qk-layernorm", n_qk, MOVES_TIME | MOVES_MEMORY);
  parity("", "--position-embedding-type rope", n_rope, MOVES_TIME | MOVES_MEMORY);
  /* GC stalls are not modelled: the switch is recorded, nothing moves */
  parity("", "--manual-gc", n_gc, MOVES_NOTHING);
  /* deterministic mode fills every output TE allocates: slower, no memory */
  parity("", "--deterministic-mode", n_deterministic, MOVES_TIME);
}

static void test_accounted_split(void) {
  g_test_summary("--account-for-embedding/loss-in-pipeline-split: 126 layers + 2 over pp 8 x vp 2 "
                 "= 8 per virtual stage, one fewer in the first and the last");
  PtsimJob job;
  resolve("torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers 126 "
          "--hidden-size 1024 --num-attention-heads 16 --seq-length 4096 "
          "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 "
          "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 "
          "--num-virtual-stages-per-pipeline-rank 2 --account-for-embedding-in-pipeline-split "
          "--account-for-loss-in-pipeline-split --bf16 --vocab-size 50257",
          NULL, &job);
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_assert_cmpint(plan->stage_layers[0], ==, 15);
  for (int s = 1; s < 7; s++) g_assert_cmpint(plan->stage_layers[s], ==, 16);
  g_assert_cmpint(plan->stage_layers[7], ==, 15);
  g_assert_cmpint(plan->chunk_layers[3], ==, 8);
  /* virtual stages 0 (chunk 0 of stage 0) and 15 (chunk 1 of stage 7) */
  g_assert_cmpint(plan->vstage_layers[0], ==, 7);
  for (int vs = 1; vs < 15; vs++) g_assert_cmpint(plan->vstage_layers[vs], ==, 8);
  g_assert_cmpint(plan->vstage_layers[15], ==, 7);
  g_assert_cmpint(plan->vstage_first_layer[15], ==, 7 + 14 * 8);
  /* In flight, the held chunks weighed by their layers (m = 64, g = p = 8).
   * Stage 0 (chunks of 7 and 8 layers) warms up with w = 2*7 + 8 = 22
   * forwards; after F(22) it holds virtual microbatches 0..22: 8 of chunk
   * 0, 8 of chunk 1, 7 of chunk 0 = 8*7 + 8*8 + 7*7 = 169 layers.  Then
   * each pair B(k), F(23+k) moves it by lF - lB: -1 (B of chunk 1, F of
   * chunk 0), seven 0s, +1, seven 0s per period of 16: 169 at most, over
   * its 15 layers (count alone: 23/2 = 11.5).  The last stage (8 and 7)
   * warms up with w = 8: after F(8), 8*8 + 7 = 71; the pairs give 0 (x7),
   * +1, 0 (x7), -1: 72 at most, 72/15 (count alone: 9/2 = 4.5). */
  g_assert_cmpfloat_with_epsilon(plan->inflight_microbatches[0], 169.0 / 15.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(plan->inflight_microbatches[7], 72.0 / 15.0, 1e-12);
  for (int s = 1; s < 7; s++) /* equal chunks: (2(7-s) + 8 + 1) / 2 */
    g_assert_cmpfloat(plan->inflight_microbatches[s], ==, (2.0 * (7 - s) + 9.0) / 2.0);
  /* --num-layers-per-virtual-pipeline-stage counts the embedding and loss too */
  PtsimJob same;
  resolve("torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers 126 "
          "--hidden-size 1024 --num-attention-heads 16 --seq-length 4096 "
          "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 "
          "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 "
          "--num-layers-per-virtual-pipeline-stage 8 --account-for-embedding-in-pipeline-split "
          "--account-for-loss-in-pipeline-split --bf16 --vocab-size 50257",
          NULL, &same);
  g_assert_cmpint(memcmp(&job, &same, sizeof job), ==, 0);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/flag-parity/overlap", test_overlap);
  g_test_add_func("/flag-parity/moe", test_moe);
  g_test_add_func("/flag-parity/attention", test_attention);
  g_test_add_func("/flag-parity/gradients", test_gradients);
  g_test_add_func("/flag-parity/fp16-accumulation", test_fp16_accumulation);
  g_test_add_func("/flag-parity/recompute-fp8-optimizer", test_recompute_fp8_optimizer);
  g_test_add_func("/flag-parity/split-and-shape", test_split_and_shape);
  g_test_add_func("/flag-parity/sharding", test_sharding);
  g_test_add_func("/flag-parity/accounted-split", test_accounted_split);
  return g_test_run();
}
