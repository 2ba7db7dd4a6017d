/* report.c — text, JSON and CSV writers; see report.h. */
#include <string.h>
#include "job_validate.h"
#include "units.h"
#include "memory.h"
#include "names.h"
#include "report.h"
#include "topology.h"

#define GIB PTSIM_GIB_BYTES

gboolean ptsim_format_parse(const char *word, PtsimFormat *out) {
  static const char *const words[] = {"text", "json", "csv"};
  for (int i = 0; i < 3; i++) {
    if (strcmp(word, words[i]) == 0) {
      *out = (PtsimFormat)i;
      return TRUE;
    }
  }
  return FALSE;
}

/* ---- JSON ---- */

static void json_model(PtsimJson *json, const PtsimModel *m, int64_t seq) {
  double total, active;
  ptsim_plan_model_parameters(m, seq, &total, &active);
  ptsim_json_begin_object(json, "model");
  ptsim_json_string(json, "name", m->name);
  ptsim_json_double(json, "parameters", total);
  ptsim_json_int(json, "num_layers", m->num_layers);
  ptsim_json_int(json, "hidden_size", m->hidden_size);
  ptsim_json_int(json, "ffn_hidden_size", m->ffn_hidden_size);
  ptsim_json_int(json, "num_attention_heads", m->num_attention_heads);
  ptsim_json_int(json, "num_query_groups", m->num_query_groups);
  ptsim_json_int(json, "vocab_size", m->vocab_size);
  ptsim_json_string(json, "activation",
                    ptsim_names_get(PTSIM_NAMES_ACTIVATION, (int)m->activation));
  ptsim_json_string(json, "norm", ptsim_names_get(PTSIM_NAMES_NORM, (int)m->norm));
  ptsim_json_bool(json, "tied_embeddings", m->tied_embeddings);
  ptsim_json_bool(json, "bias", m->bias);
  ptsim_json_int(json, "num_experts", m->num_experts);
  if (m->num_experts > 0) {
    ptsim_json_double(json, "active_parameters", active);
    ptsim_json_int(json, "moe_router_topk", m->moe_router_topk);
    ptsim_json_int(json, "moe_ffn_hidden_size", m->moe_ffn_hidden_size);
    ptsim_json_int(json, "moe_shared_expert_intermediate_size", m->moe_shared_expert_size);
    ptsim_json_int(json, "moe_layers", ptsim_plan_moe_layers_in(m, 0, m->num_layers));
  }
  ptsim_json_bool(json, "multi_latent_attention", m->multi_latent_attention);
  ptsim_json_int(json, "mtp_num_layers", m->mtp_num_layers);
  ptsim_json_end_object(json);
}

static void json_hw(PtsimJson *json, const PtsimHardware *hw) {
  ptsim_json_begin_object(json, "hw");
  ptsim_json_string(json, "name", hw->name);
  ptsim_json_double(json, "memory_bytes", hw->memory_bytes);
  ptsim_json_double(json, "peak_bf16_flops_per_s", hw->peak_bf16_flops);
  ptsim_json_double(json, "peak_fp8_flops_per_s", hw->peak_fp8_flops);
  ptsim_json_double(json, "hbm_bytes_per_s", hw->hbm_bytes_per_s);
  ptsim_json_int(json, "gpus_per_node", hw->gpus_per_node);
  ptsim_json_int(json, "gpus_per_nvlink_domain", ptsim_topology_domain_size(hw));
  ptsim_json_double(json, "nvlink_bytes_per_s", hw->nvlink_bytes_per_s);
  ptsim_json_double(json, "nic_bytes_per_s", hw->nic_bytes_per_s);
  ptsim_json_end_object(json);
}

static void json_layout(PtsimJson *json, const PtsimPlan *plan) {
  const PtsimLayout *l = &plan->job.layout;
  const PtsimSettings *run = &plan->job.settings;
  const PtsimProvenance *src = &plan->job.source;
  ptsim_json_begin_object(json, "layout");
  ptsim_json_int(json, "gpus", l->gpus);
  ptsim_json_int(json, "tp", l->tp);
  ptsim_json_int(json, "pp", l->pp);
  ptsim_json_int(json, "cp", l->cp);
  ptsim_json_int(json, "dp", l->dp);
  ptsim_json_int(json, "vp", l->vp);
  ptsim_json_int(json, "ep", l->ep);
  ptsim_json_int(json, "etp", l->etp);
  ptsim_json_int(json, "edp", l->edp);
  if (plan->job.model.num_experts > 0) {
    ptsim_json_string(json, "moe_token_dispatcher_type",
                      ptsim_names_get(PTSIM_NAMES_DISPATCHER, (int)run->moe_dispatcher));
    ptsim_json_double(json, "moe_expert_capacity_factor", run->moe_capacity_factor);
    ptsim_json_bool(json, "moe_grouped_gemm", run->moe_grouped_gemm);
    ptsim_json_int(json, "ep_group_nvlink_domains", plan->groups[PTSIM_GROUP_EP].nodes);
  }
  ptsim_json_int(json, "mbs", l->mbs);
  ptsim_json_int(json, "gbs", l->gbs);
  ptsim_json_int(json, "seq", l->seq);
  ptsim_json_int(json, "num_microbatches", plan->num_microbatches);
  ptsim_json_bool(json, "sp", l->sp);
  ptsim_json_string(json, "recompute", ptsim_names_get(PTSIM_NAMES_RECOMPUTE, (int)run->recompute));
  ptsim_json_string(json, "recompute_method",
                    ptsim_names_get(PTSIM_NAMES_RECOMPUTE_METHOD, (int)run->recompute_method));
  ptsim_json_int(json, "recompute_num_layers", run->recompute_num_layers);
  ptsim_json_bool(json, "distributed_optimizer", l->distributed_optimizer);
  ptsim_json_string(json, "sharding", ptsim_layout_sharding_word(l));
  ptsim_json_int(json, "zero_stage", plan->zero_stage);
  ptsim_json_int(json, "shard_group", plan->shard_group.size);
  ptsim_json_int(json, "replicas", plan->replicate_group.size);
  if (plan->zero_stage >= 2) {
    ptsim_json_string(json, "fsdp_impl",
                      ptsim_names_get(PTSIM_NAMES_FSDP_IMPL, (int)run->fsdp_impl));
    ptsim_json_string(json, "reshard_after_forward",
                      ptsim_names_get(PTSIM_NAMES_RESHARD, run->reshard_after_forward + 1));
    ptsim_json_bool(json, "fsdp_prefetch", run->fsdp_prefetch);
    ptsim_json_bool(json, "gradients_reduced_once", plan->sync_once);
    if (plan->job.model.num_experts > 0) { /* the routed experts' groups (plan.h) */
      ptsim_json_int(json, "expert_shard_group", plan->expert_shard_group.size);
      ptsim_json_int(json, "expert_replicas", plan->expert_replicate_group.size);
    }
  }
  ptsim_json_bool(json, "fp32_grad_accumulation", run->fp32_grad_accumulation);
  ptsim_json_bool(json, "flash_attention", run->flash_attention);
  ptsim_json_string(json, "precision", ptsim_names_get(PTSIM_NAMES_PRECISION, (int)run->precision));
  ptsim_json_string(json, "schedule", ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)l->schedule));
  ptsim_json_double(json, "attention_dropout", src->attention_dropout);
  ptsim_json_double(json, "hidden_dropout", src->hidden_dropout);
  ptsim_json_double(json, "memory_threshold", run->memory_threshold);
  ptsim_json_begin_array(json, "stage_layers");
  for (int64_t i = 0; i < l->pp; i++) ptsim_json_int(json, NULL, plan->stage_layers[i]);
  ptsim_json_end_array(json);
  ptsim_json_end_object(json);
}

void ptsim_report_json_config(PtsimJson *json, const PtsimPlan *plan) {
  ptsim_json_begin_object(json, "config");
  json_model(json, &plan->job.model, plan->job.layout.seq);
  json_hw(json, &plan->job.hw);
  json_layout(json, plan);
  ptsim_json_end_object(json);
}

static void json_stage(PtsimJson *json, int64_t index, const PtsimStageMemory *s) {
  ptsim_json_begin_object(json, NULL);
  ptsim_json_int(json, "stage", index);
  ptsim_json_int(json, "first_layer", s->first_layer);
  ptsim_json_int(json, "num_layers", s->num_layers);
  ptsim_json_bool(json, "has_embedding", s->has_embedding);
  ptsim_json_bool(json, "has_lm_head", s->has_lm_head);
  ptsim_json_double(json, "parameters", s->parameters);
  ptsim_json_double(json, "expert_parameters", s->expert_parameters);
  ptsim_json_double(json, "parameters_bytes", s->parameters_bytes);
  ptsim_json_double(json, "gradients_bytes", s->gradients_bytes);
  ptsim_json_double(json, "optimizer_bytes", s->optimizer_bytes);
  ptsim_json_double(json, "activations_bytes", s->activations_bytes);
  ptsim_json_double(json, "activation_bytes_per_layer", s->activation_bytes_per_layer);
  ptsim_json_double(json, "inflight_microbatches", s->inflight_microbatches);
  ptsim_json_double(json, "input_ids_bytes", s->input_ids_bytes);
  ptsim_json_double(json, "logits_bytes", s->logits_bytes);
  ptsim_json_double(json, "workspace_bytes", s->workspace_bytes);
  ptsim_json_double(json, "other_bytes", s->other_bytes);
  ptsim_json_double(json, "unsharded_bytes", s->unsharded_bytes);
  ptsim_json_double(json, "total_bytes", s->total_bytes);
  /* activation offloading's pinned host memory (only when offloading) */
  if (s->host_bytes > 0.0) ptsim_json_double(json, "host_bytes", s->host_bytes);
  ptsim_json_end_object(json);
}

static const char *item_kind_name(int32_t kind) {
  static const char *const names[] = {"forward", "backward", "backward-input", "backward-weight"};
  if (kind == PTSIM_LIFETIMES_AT_OPTIMIZER) return "optimizer step";
  return kind >= 0 && kind < 4 ? names[kind] : "setup";
}

static const char *phase_name(int32_t step) { return step <= 0 ? "first step" : "steady state"; }

/* "backward of microbatch 3 (chunk 0)", "optimizer step", "setup". */
static void append_place(GString *out, int32_t kind, int32_t microbatch, int32_t chunk) {
  g_string_append(out, item_kind_name(kind));
  if (microbatch >= 0)
    g_string_append_printf(out, " of microbatch %d (chunk %d)", microbatch, chunk);
}

static void json_phase(PtsimJson *json, const char *key, const PtsimAllocPhase *ph) {
  ptsim_json_begin_object(json, key);
  ptsim_json_double(json, "allocated_peak_bytes", ph->allocated_peak_bytes);
  ptsim_json_double(json, "requested_peak_bytes", ph->requested_peak_bytes);
  ptsim_json_double(json, "reserved_peak_bytes", ph->reserved_peak_bytes);
  ptsim_json_double(json, "device_peak_bytes", ph->device_peak_bytes);
  ptsim_json_end_object(json);
}

static void json_allocator(PtsimJson *json, const PtsimMemoryEstimate *m,
                           const PtsimAllocResult *a) {
  const PtsimStageAlloc *peak = &a->stages[a->peak_stage];
  const PtsimStageAlloc *oom = NULL;
  for (int64_t i = 0; i < a->num_stages && !oom; i++)
    if (!a->stages[i].fits) oom = &a->stages[i];
  ptsim_json_begin_object(json, "allocator");
  ptsim_json_int(json, "steps", a->steps);
  ptsim_json_int(json, "peak_stage", a->peak_stage);
  ptsim_json_double(json, "allocated_peak_bytes", peak->allocated_peak_bytes);
  ptsim_json_double(json, "reserved_peak_bytes", peak->reserved_peak_bytes);
  ptsim_json_double(json, "fragmentation", peak->fragmentation);
  ptsim_json_double(json, "inactive_split_peak_bytes", peak->inactive_split_peak_bytes);
  ptsim_json_double(json, "outside_allocator_bytes", peak->outside_bytes);
  ptsim_json_double(json, "device_peak_bytes", peak->device_peak_bytes);
  ptsim_json_double(json, "device_peak_fraction", peak->device_peak_bytes / m->capacity_bytes);
  ptsim_json_double(json, "analytical_total_bytes", m->total_bytes);
  ptsim_json_double(json, "margin_bytes", m->capacity_bytes - peak->device_peak_bytes);
  ptsim_json_bool(json, "oom", oom != NULL);
  if (oom) {
    ptsim_json_begin_object(json, "oom_at");
    ptsim_json_int(json, "stage", (int64_t)(oom - a->stages));
    ptsim_json_int(json, "step", oom->oom_step);
    ptsim_json_string(json, "phase", phase_name(oom->oom_step));
    ptsim_json_string(json, "item", item_kind_name(oom->oom_kind));
    ptsim_json_int(json, "microbatch", oom->oom_microbatch);
    ptsim_json_int(json, "chunk", oom->oom_chunk);
    ptsim_json_string(json, "tensor", oom->oom_tensor);
    ptsim_json_double(json, "request_bytes", oom->oom_request_bytes);
    ptsim_json_end_object(json);
  } else {
    ptsim_json_null(json, "oom_at");
  }
  /* The verdict and the two phases (lifetimes.h): step 0 runs its forward
   * and backward before Adam's states exist; steps 1.. run with them. */
  ptsim_json_bool(json, "runs", a->runs);
  ptsim_json_double(json, "runs_margin_bytes", peak->runs_margin_bytes);
  ptsim_json_double(json, "runs_outside_error_bytes", PTSIM_LIFETIMES_OUTSIDE_ERROR_BYTES);
  ptsim_json_double(json, "runs_reserved_error_fraction", PTSIM_LIFETIMES_RESERVED_ERROR);
  ptsim_json_int(json, "runs_fail_step", peak->runs_fail_step);
  json_phase(json, "first_step", &peak->first_step);
  json_phase(json, "steady_state", &peak->steady_state);
  ptsim_json_begin_object(json, "peak_at");
  ptsim_json_int(json, "stage", a->peak_stage);
  ptsim_json_int(json, "step", peak->peak_step);
  ptsim_json_string(json, "phase", phase_name(peak->peak_step));
  ptsim_json_string(json, "item", item_kind_name(peak->peak_kind));
  ptsim_json_int(json, "microbatch", peak->peak_microbatch);
  ptsim_json_int(json, "chunk", peak->peak_chunk);
  ptsim_json_end_object(json);
  ptsim_json_begin_array(json, "stages");
  for (int64_t i = 0; i < a->num_stages; i++) {
    const PtsimStageAlloc *s = &a->stages[i];
    ptsim_json_begin_object(json, NULL);
    ptsim_json_int(json, "stage", i);
    ptsim_json_double(json, "allocated_peak_bytes", s->allocated_peak_bytes);
    ptsim_json_double(json, "reserved_peak_bytes", s->reserved_peak_bytes);
    ptsim_json_double(json, "fragmentation", s->fragmentation);
    ptsim_json_double(json, "device_peak_bytes", s->device_peak_bytes);
    ptsim_json_bool(json, "fits", s->fits);
    ptsim_json_bool(json, "runs", s->runs);
    ptsim_json_double(json, "first_step_device_peak_bytes", s->first_step.device_peak_bytes);
    ptsim_json_double(json, "steady_state_device_peak_bytes", s->steady_state.device_peak_bytes);
    ptsim_json_int(json, "peak_step", s->peak_step);
    ptsim_json_end_object(json);
  }
  ptsim_json_end_array(json);
  ptsim_json_end_object(json);
}

static const char *stage_verdict(const PtsimStageAlloc *s) {
  return s->runs ? "runs" : s->fits ? "no margin" : "OOM";
}

/* An allocation of the set-up (the weights, gradients and optimizer
 * states a stage holds before its first microbatch) failed: the replay
 * never reached a step, so it has no peak to show. */
static gboolean failed_at_setup(const PtsimStageAlloc *s) {
  return !s->fits && s->oom_kind == PTSIM_LIFETIMES_AT_SETUP && s->oom_step <= 0;
}

/* What the set-up holds, by the analytical estimate. */
static double static_bytes(const PtsimStageMemory *sm) {
  return sm->parameters_bytes + sm->gradients_bytes + sm->optimizer_bytes;
}

static void append_setup_failure(GString *out, const PtsimStageMemory *sm, const PtsimStageAlloc *s,
                                 double capacity) {
  g_string_append_printf(out,
                         "       first failure: set-up, %s, %.2f GiB: the stage's weights %.2f + "
                         "gradients %.2f + optimizer states %.2f = %.2f GiB (analytical) do not "
                         "fit the %.2f GiB left beside the context and NCCL buffers\n",
                         s->oom_tensor, s->oom_request_bytes / GIB, sm->parameters_bytes / GIB,
                         sm->gradients_bytes / GIB, sm->optimizer_bytes / GIB,
                         static_bytes(sm) / GIB, (capacity - s->outside_bytes) / GIB);
}

void ptsim_report_text_allocator(GString *out, const PtsimMemoryEstimate *m,
                                 const PtsimAllocResult *a) {
  g_string_append_printf(out,
                         "\ncaching-allocator emulation (%d steps; step 0 runs its forward and "
                         "backward before Adam's states exist; GiB)\n"
                         "stage  estimate  allocated  reserved  frag  +ctx/nccl  device  step 0  "
                         "steady  verdict\n",
                         a->steps);
  for (int64_t i = 0; i < a->num_stages; i++) {
    const PtsimStageAlloc *s = &a->stages[i];
    if (failed_at_setup(s)) { /* no peak was reached: the sizes that did not fit */
      g_string_append_printf(out,
                             "%5" G_GINT64_FORMAT "%s %8.2f %10s %9s %5s %10.2f %7s %7s %7s  %s\n",
                             i, i == a->peak_stage ? "*" : " ", m->stages[i].total_bytes / GIB, "-",
                             "-", "-", s->outside_bytes / GIB, "-", "-", "-", "OOM");
      append_setup_failure(out, &m->stages[i], s, m->capacity_bytes);
      continue;
    }
    g_string_append_printf(out,
                           "%5" G_GINT64_FORMAT "%s %8.2f %10.2f %9.2f %4.0f%% %10.2f %7.2f "
                           "%7.2f %7.2f  %s\n",
                           i, i == a->peak_stage ? "*" : " ", m->stages[i].total_bytes / GIB,
                           s->allocated_peak_bytes / GIB, s->reserved_peak_bytes / GIB,
                           100.0 * s->fragmentation, s->outside_bytes / GIB,
                           s->device_peak_bytes / GIB, s->first_step.device_peak_bytes / GIB,
                           s->steady_state.device_peak_bytes / GIB, stage_verdict(s));
    if (!s->fits) {
      g_string_append_printf(out, "       first failure: step %d (%s), ", s->oom_step,
                             phase_name(s->oom_step));
      append_place(out, s->oom_kind, s->oom_microbatch, s->oom_chunk);
      g_string_append_printf(out, ": %s, %.2f GiB\n", s->oom_tensor, s->oom_request_bytes / GIB);
    }
  }
  const PtsimStageAlloc *p = &a->stages[a->peak_stage];
  const PtsimStageAlloc *setup = NULL;
  int64_t setup_stage = -1;
  for (int64_t i = 0; i < a->num_stages && !setup; i++)
    if (failed_at_setup(&a->stages[i])) setup = &a->stages[setup_stage = i];
  if (setup) {
    const PtsimStageMemory *sm = &m->stages[setup_stage];
    g_string_append_printf(out,
                           "runs: no (stage %" G_GINT64_FORMAT " runs out of memory at set-up, "
                           "before the first step: its weights, gradients and optimizer states, "
                           "%.2f GiB by the analytical estimate, exceed the GPU's %.2f GiB less "
                           "%.2f GiB of CUDA context and NCCL buffers)\n",
                           setup_stage, static_bytes(sm) / GIB, m->capacity_bytes / GIB,
                           setup->outside_bytes / GIB);
    return;
  }
  g_string_append_printf(out,
                         "peak device use %.2f GiB of %.2f (%.1f%%) at stage %" G_GINT64_FORMAT
                         ", step %d (%s), ",
                         p->device_peak_bytes / GIB, m->capacity_bytes / GIB,
                         100.0 * p->device_peak_bytes / m->capacity_bytes, a->peak_stage,
                         p->peak_step, phase_name(p->peak_step));
  append_place(out, p->peak_kind, p->peak_microbatch, p->peak_chunk);
  g_string_append_printf(out, "; the analytical estimate says %.2f GiB (%.1f%%)\n",
                         m->total_bytes / GIB, 100.0 * m->usage_fraction);
  g_string_append_printf(out,
                         "runs: %s (device peak %.2f GiB + margin %.2f GiB, %s the GPU's "
                         "%.2f GiB",
                         a->runs ? "yes" : "no", p->device_peak_bytes / GIB,
                         p->runs_margin_bytes / GIB, a->runs ? "within" : "beyond",
                         m->capacity_bytes / GIB);
  if (!a->runs && p->runs_fail_step >= 0)
    g_string_append_printf(out, "; step %d (%s) already breaks it", p->runs_fail_step,
                           phase_name(p->runs_fail_step));
  g_string_append_printf(out,
                         "; the margin: %.2f GiB outside the allocator + %.0f%% of its "
                         "reserved peak, the emulation's largest shortfalls on measured runs)\n",
                         PTSIM_LIFETIMES_OUTSIDE_ERROR_BYTES / GIB,
                         100.0 * PTSIM_LIFETIMES_RESERVED_ERROR);
}

void ptsim_report_json_memory(PtsimJson *json, const PtsimMemoryEstimate *m, double threshold,
                              const PtsimAllocResult *alloc) {
  ptsim_json_begin_object(json, "memory");
  if (m->closed_form) ptsim_json_string(json, "estimator", "fujii2024");
  ptsim_json_double(json, "parameters_bytes", m->parameters_bytes);
  ptsim_json_double(json, "gradients_bytes", m->gradients_bytes);
  ptsim_json_double(json, "optimizer_bytes", m->optimizer_bytes);
  ptsim_json_double(json, "activations_bytes", m->activations_bytes);
  ptsim_json_double(json, "other_bytes", m->other_bytes);
  ptsim_json_double(json, "unsharded_bytes", m->unsharded_bytes);
  ptsim_json_double(json, "total_bytes", m->total_bytes);
  ptsim_json_double(json, "capacity_bytes", m->capacity_bytes);
  ptsim_json_double(json, "usage_fraction", m->usage_fraction);
  ptsim_json_double(json, "threshold", threshold);
  ptsim_json_bool(json, "fits", m->fits);
  ptsim_json_int(json, "peak_stage", m->peak_stage);
  ptsim_json_begin_array(json, "stages");
  for (int64_t i = 0; i < m->num_stages; i++) json_stage(json, i, &m->stages[i]);
  ptsim_json_end_array(json);
  if (alloc) json_allocator(json, m, alloc);
  ptsim_json_end_object(json);
}

/* ---- text ---- */

/* The MoE line of the summary: experts, the folding and where the
 * all-to-all runs. */
static void text_config_moe(GString *out, const PtsimPlan *plan) {
  const PtsimModel *m = &plan->job.model;
  const PtsimLayout *l = &plan->job.layout;
  const PtsimSettings *run = &plan->job.settings;
  const PtsimGroup *ep = &plan->groups[PTSIM_GROUP_EP];
  g_autofree char *shared = m->moe_shared_expert_size > 0
                                ? g_strdup_printf(", shared %" G_GINT64_FORMAT,
                                                  m->moe_shared_expert_size)
                                : g_strdup("");
  g_autofree char *capacity = run->moe_capacity_factor > 0.0
                                  ? g_strdup_printf("capacity factor %g%s",
                                                    run->moe_capacity_factor,
                                                    run->moe_pad_to_capacity ? " (padded)" : "")
                                  : g_strdup("dropless");
  g_autofree char *where =
      ep->nodes > 1 ? g_strdup_printf("across %" G_GINT64_FORMAT " NVLink domains", ep->nodes)
                    : g_strdup("inside one NVLink domain");
  g_string_append_printf(out,
                         "experts: %" G_GINT64_FORMAT " per MoE layer (%" G_GINT64_FORMAT
                         " of %" G_GINT64_FORMAT " layers), top-%" G_GINT64_FORMAT
                         ", width %" G_GINT64_FORMAT "%s; ep %" G_GINT64_FORMAT
                         " etp %" G_GINT64_FORMAT " edp %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT
                         " local expert%s, the ep group %s), %s dispatcher%s, %s\n",
                         m->num_experts, ptsim_plan_moe_layers_in(m, 0, m->num_layers),
                         m->num_layers, m->moe_router_topk, m->moe_ffn_hidden_size, shared, l->ep,
                         l->etp, l->edp, plan->local_experts, plan->local_experts == 1 ? "" : "s",
                         where, ptsim_names_get(PTSIM_NAMES_DISPATCHER, (int)run->moe_dispatcher),
                         run->moe_grouped_gemm ? ", grouped GEMM" : "", capacity);
}

void ptsim_report_text_config(GString *out, const PtsimPlan *plan) {
  const PtsimJob *job = &plan->job;
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  int64_t domain = ptsim_topology_domain_size(&job->hw);
  g_autofree char *domain_note = domain != job->hw.gpus_per_node
                                     ? g_strdup_printf(", %" G_GINT64_FORMAT " per NVLink domain",
                                                       domain)
                                     : g_strdup("");
  g_string_append_printf(out,
                         "%s on %" G_GINT64_FORMAT " x %s (%" G_GINT64_FORMAT " GPUs/node%s)\n"
                         "layout: tp %" G_GINT64_FORMAT " pp %" G_GINT64_FORMAT
                         " cp %" G_GINT64_FORMAT " dp %" G_GINT64_FORMAT " vp %" G_GINT64_FORMAT
                         ", mbs %" G_GINT64_FORMAT " gbs %" G_GINT64_FORMAT " seq %" G_GINT64_FORMAT
                         " (%" G_GINT64_FORMAT
                         " microbatches), sp %s, recompute %s, %s, %s optimizer, schedule %s\n",
                         job->model.name, l->gpus, job->hw.name, job->hw.gpus_per_node, domain_note,
                         l->tp, l->pp, l->cp, l->dp, l->vp, l->mbs, l->gbs, l->seq,
                         plan->num_microbatches, l->sp ? "on" : "off",
                         ptsim_names_get(PTSIM_NAMES_RECOMPUTE, (int)run->recompute),
                         ptsim_names_get(PTSIM_NAMES_PRECISION, (int)run->precision),
                         l->distributed_optimizer ? "distributed" : "replicated",
                         ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)l->schedule));
  g_autofree char *experts =
      job->model.num_experts > 0
          ? g_strdup_printf("; the routed experts' %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT,
                            plan->expert_shard_group.size, plan->expert_replicate_group.size)
          : g_strdup("");
  if (plan->zero_stage >= 2)
    g_string_append_printf(
        out,
        "sharding: %s (%s; shard group %" G_GINT64_FORMAT " ranks x %" G_GINT64_FORMAT
        " replicas%s), %s%s%s\n",
        ptsim_layout_sharding_word(l), ptsim_names_get(PTSIM_NAMES_FSDP_IMPL, (int)run->fsdp_impl),
        plan->shard_group.size, plan->replicate_group.size, experts,
        plan->zero_stage == 2 ? "gradients reduce-scattered per layer"
        : plan->sync_once     ? (plan->gather_backward ? "units gathered at the first forward and "
                                                         "before each backward"
                                                       : "units gathered once per step")
        : run->reshard_after_forward == PTSIM_RESHARD_NEVER
            ? "units kept gathered from forward to backward"
        : run->reshard_after_forward == PTSIM_RESHARD_BUT_LAST
            ? "units resharded after forward but the output unit"
            : "units resharded after forward",
        plan->zero_stage == 3 && !run->fsdp_prefetch ? ", no prefetch" : "",
        plan->sync_once ? ", gradients reduced once after the last micro-batch (PP)" : "");
  if (job->model.num_experts > 0) text_config_moe(out, plan);
}

static const char *overlap_words(const char *source) {
  if (g_strcmp0(source, "default") == 0)
    return "ptsim's default, as Megatron-LM's example launch scripts set them";
  if (g_strcmp0(source, "megatron-args") == 0) return "from the Megatron-LM command line";
  if (g_strcmp0(source, "torchtitan") == 0) return "from the torchtitan config";
  return "as given";
}

/* How the data-parallel collectives meet the compute: ZeRO-2/3's per-unit
 * collectives on their own stream (workload_shard.c, sharding.c), or
 * Megatron's / DDP's bucketed gradient reduction overlapped with backward
 * (grad-reduce on), or after it. */
static const char *dp_overlap_word(const PtsimJob *job) {
  const PtsimSettings *run = &job->settings;
  if (job->layout.sharding != PTSIM_SHARDING_NONE) return "per-unit";
  return run->overlap_grad_reduce ? "bucketed" : "after-backward";
}

/* The "overlap:" line's data-parallel part. */
static char *dp_overlap_text(const PtsimJob *job, const char *source) {
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  gboolean torchtitan = g_strcmp0(source, "torchtitan") == 0;
  gboolean once = run->fsdp_impl == PTSIM_FSDP_TORCH && l->pp > 1;
  if (l->sharding == PTSIM_SHARDING_PARAMS)
    return g_strdup_printf(
        "FSDP's per-unit all-gathers%s and %s on their own stream, exposed only where the "
        "compute does not hide them",
        run->fsdp_prefetch ? " (the next unit's prefetched)" : " (no prefetch)",
        once ? "the gradients' reduction once after the last micro-batch (PP)"
        : l->optimizer_instances > 1 ? "reduce-scatters (and the replicas' all-reduces)"
                                     : "reduce-scatters");
  if (l->sharding == PTSIM_SHARDING_GRADS)
    return g_strdup_printf("ZeRO-2's per-unit reduce-scatters on their own stream, exposed only "
                           "where the compute does not hide them, param-gather %s",
                           run->overlap_param_gather ? "on" : "off");
  if (torchtitan)
    return g_strdup(run->overlap_grad_reduce ? "DDP's bucketed all-reduce overlapped with backward"
                                             : "no data-parallel gradient reduction");
  return g_strdup_printf("grad-reduce %s, param-gather %s", run->overlap_grad_reduce ? "on" : "off",
                         run->overlap_param_gather ? "on" : "off");
}

/* The layers' implementation, for the "settings:" line. */
static const char *layers_words(const PtsimSettings *run) {
  if (run->transformer_engine) return "Transformer Engine layers";
  switch (run->torch_layers) {
  case PTSIM_TORCH_LAYERS_EAGER:
    return "PyTorch layers (torchtitan's modules, eager kernels)";
  case PTSIM_TORCH_LAYERS_COMPILED:
    return "PyTorch layers (torchtitan's modules, fused by torch.compile)";
  default:
    return "local layers";
  }
}

/* The same for JSON: transformer_engine | local | torch | torch-compile
 * (--transformer-impl's words). */
static const char *layers_word(const PtsimSettings *run) {
  if (run->transformer_engine) return "transformer_engine";
  return run->torch_layers == PTSIM_TORCH_LAYERS_EAGER      ? "torch"
         : run->torch_layers == PTSIM_TORCH_LAYERS_COMPILED ? "torch-compile"
                                                            : "local";
}

static const char *fp8_recipe_word(PtsimFp8Recipe r) {
  static const char *const words[] = {"delayed", "tensorwise", "blockwise", "mxfp8", "nvfp4"};
  return (unsigned)r < 5 ? words[r] : "?";
}

void ptsim_report_text_settings(GString *out, const PtsimJob *job, const PtsimModel *m,
                                const char *overlap_source) {
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  g_autofree char *dp = dp_overlap_text(job, overlap_source);
  g_string_append_printf(out, "overlap: %s, tp-comm %s (%s)\n", dp,
                         run->tp_comm_overlap ? "on" : "off", overlap_words(overlap_source));
  g_string_append_printf(out, "settings: %s attention, %s, %s main grads",
                         run->flash_attention ? "flash" : "unfused (s x s scores kept)",
                         layers_words(run), run->fp32_grad_accumulation ? "fp32" : "2-byte");
  if (!run->grad_accumulation_fusion) g_string_append(out, ", no gradient-accumulation fusion");
  if (run->cross_entropy_fusion) g_string_append(out, ", fused cross entropy");
  if (run->recompute == PTSIM_RECOMPUTE_SELECTIVE) {
    g_string_append(out, ", recompute modules");
    for (int v = 0; (1 << v) <= PTSIM_RECOMPUTE_ALL_MODULES; v++)
      if (run->recompute_modules & (1 << v))
        g_string_append_printf(out, " %s", ptsim_names_get(PTSIM_NAMES_RECOMPUTE_MODULE, v));
  }
  if (run->recompute == PTSIM_RECOMPUTE_SELECTIVE_OP)
    g_string_append(out, ", per-op checkpointing (block input, every other matmul's output and "
                         "attention kept)");
  if (run->precision == PTSIM_PRECISION_FP8)
    g_string_append_printf(out, ", fp8 recipe %s%s", fp8_recipe_word(run->fp8_recipe),
                           run->fp8_param_gather ? ", fp8 weights" : "");
  if (run->main_params_bytes != 4 || run->exp_avg_bytes != 4 || run->exp_avg_sq_bytes != 4 ||
      run->precision_aware_optimizer)
    g_string_append_printf(out, ", optimizer states %d+%d+%d B%s", run->main_params_bytes,
                           run->exp_avg_bytes, run->exp_avg_sq_bytes,
                           run->precision_aware_optimizer ? " (precision-aware)" : "");
  if (l->optimizer_instances > 1 && l->sharding == PTSIM_SHARDING_NONE) /* else: replicas */
    g_string_append_printf(out, ", %" G_GINT64_FORMAT " optimizer instances",
                           l->optimizer_instances);
  if (m && m->kv_channels > 0)
    g_string_append_printf(out, ", head dim %" G_GINT64_FORMAT, m->kv_channels);
  if (m && m->qk_layernorm) g_string_append(out, ", qk-layernorm");
  if (job->source.megatron_date) {
    g_autofree char *date = ptsim_report_date(job->source.megatron_date);
    g_string_append_printf(out, ", Megatron-LM of %s", date);
  }
  g_string_append_printf(out, ", %s\n",
                         run->manual_gc ? "manual GC"
                                        : "no GC stalls modelled (Megatron without "
                                          "--manual-gc may be slower)");
}

char *ptsim_report_date(int32_t yyyymmdd) {
  return g_strdup_printf("%04d-%02d-%02d", (int)(yyyymmdd / 10000), (int)(yyyymmdd / 100 % 100),
                         (int)(yyyymmdd % 100));
}

void ptsim_report_json_settings(PtsimJson *json, const PtsimJob *job, const PtsimModel *m,
                                const char *overlap_source) {
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  int32_t megatron_date = job->source.megatron_date;
  ptsim_json_begin_object(json, "settings");
  ptsim_json_bool(json, "overlap_grad_reduce", run->overlap_grad_reduce);
  ptsim_json_bool(json, "overlap_param_gather", run->overlap_param_gather);
  ptsim_json_bool(json, "tp_comm_overlap", run->tp_comm_overlap);
  ptsim_json_string(json, "overlap_source", overlap_source ? overlap_source : "");
  ptsim_json_string(json, "dp_overlap", dp_overlap_word(job));
  ptsim_json_bool(json, "tp_comm_overlap_ag", run->tp_comm_overlap_ag);
  ptsim_json_bool(json, "tp_comm_overlap_rs", run->tp_comm_overlap_rs);
  ptsim_json_bool(json, "tp_comm_bulk_dgrad", run->tp_comm_bulk_dgrad);
  ptsim_json_bool(json, "tp_comm_overlap_rs_dgrad", run->tp_comm_overlap_rs_dgrad);
  ptsim_json_bool(json, "flash_attention", run->flash_attention);
  ptsim_json_bool(json, "transformer_engine", run->transformer_engine);
  ptsim_json_string(json, "layers", layers_word(run));
  ptsim_json_bool(json, "fp32_grad_accumulation", run->fp32_grad_accumulation);
  ptsim_json_bool(json, "gradient_accumulation_fusion", run->grad_accumulation_fusion);
  ptsim_json_bool(json, "cross_entropy_fusion", run->cross_entropy_fusion);
  ptsim_json_int(json, "recompute_modules", run->recompute_modules);
  ptsim_json_string(json, "fp8_recipe", fp8_recipe_word(run->fp8_recipe));
  ptsim_json_bool(json, "fp8_param_gather", run->fp8_param_gather);
  ptsim_json_bool(json, "precision_aware_optimizer", run->precision_aware_optimizer);
  ptsim_json_int(json, "main_params_bytes", run->main_params_bytes);
  ptsim_json_int(json, "exp_avg_bytes", run->exp_avg_bytes);
  ptsim_json_int(json, "exp_avg_sq_bytes", run->exp_avg_sq_bytes);
  ptsim_json_int(json, "optimizer_instances", l->optimizer_instances);
  ptsim_json_bool(json, "account_embedding", l->account_embedding);
  ptsim_json_bool(json, "account_loss", l->account_loss);
  ptsim_json_bool(json, "manual_gc", run->manual_gc);
  g_autofree char *date = megatron_date ? ptsim_report_date(megatron_date) : g_strdup("current");
  ptsim_json_string(json, "megatron_date", date);
  if (m) {
    ptsim_json_int(json, "kv_channels", m->kv_channels);
    ptsim_json_bool(json, "qk_layernorm", m->qk_layernorm);
  }
  ptsim_json_end_object(json);
}

void ptsim_report_text_memory(GString *out, const PtsimJob *job, const PtsimMemoryEstimate *m) {
  gboolean sharded = job->layout.sharding != PTSIM_SHARDING_NONE;
  g_string_append_printf(out,
                         "\nmemory per GPU (GiB), %s\n"
                         "stage  layers  params  grads  optim  activ  other%s  total  use\n",
                         m->closed_form ? "the seed's closed form (Fujii et al. 2024)"
                                        : "analytical estimate",
                         sharded ? "  unshard" : "");
  for (int64_t i = 0; i < m->num_stages; i++) {
    const PtsimStageMemory *s = &m->stages[i];
    g_autofree char *unsharded = sharded ? g_strdup_printf(" %8.2f", s->unsharded_bytes / GIB)
                                         : g_strdup("");
    g_string_append_printf(out,
                           "%5" G_GINT64_FORMAT "%s %6" G_GINT64_FORMAT
                           " %7.2f %6.2f %6.2f %6.2f %6.2f%s %6.2f %4.0f%%\n",
                           i, i == m->peak_stage ? "*" : " ", s->num_layers,
                           s->parameters_bytes / GIB, s->gradients_bytes / GIB,
                           s->optimizer_bytes / GIB, s->activations_bytes / GIB,
                           s->other_bytes / GIB, unsharded, s->total_bytes / GIB,
                           100.0 * s->total_bytes / m->capacity_bytes);
  }
  if (sharded)
    g_string_append(out, "(unshard: the units gathered at once and the unsharded gradients in "
                         "backward; torch's fp32 sharded parameters are its master weights, "
                         "under optim)\n");
  g_string_append_printf(
      out,
      "peak: stage %" G_GINT64_FORMAT ", %.2f GiB of %.2f GiB (%.1f%%): %s "
      "(threshold %.0f%%)\n",
      m->peak_stage, m->total_bytes / GIB, m->capacity_bytes / GIB, 100.0 * m->usage_fraction,
      m->fits ? "fits" : (m->usage_fraction <= 1.0 ? "over threshold, may OOM" : "does not fit"),
      100.0 * job->settings.memory_threshold);
  if (job->settings.offload_modules) {
    double most = 0.0;
    for (int64_t i = 0; i < m->num_stages; i++)
      if (m->stages[i].host_bytes > most) most = m->stages[i].host_bytes;
    g_string_append_printf(out,
                           "host memory: %.2f GiB of pinned offloaded activations per GPU (the "
                           "stage that offloads the most)\n",
                           most / GIB);
  }
}

/* ---- CSV ---- */

void ptsim_report_csv_memory(GString *out, const PtsimJob *job, const PtsimMemoryEstimate *m,
                             const PtsimTimeResult *t, const PtsimAllocResult *alloc) {
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  g_string_append(out, "model,hw,gpus,tp,pp,cp,dp,vp,mbs,gbs,seq,sp,recompute,schedule,"
                       "stage,num_layers,parameters_bytes,gradients_bytes,optimizer_bytes,"
                       "activations_bytes,other_bytes,total_bytes,capacity_bytes,"
                       "usage_fraction,is_peak,fits,unsharded_bytes");
  /* predict's: the step (the job's, on every row) and the emulation's
   * verdict (each stage's device peak, the job's runs) */
  if (t)
    g_string_append(out, ",step_s,tokens_per_s,tokens_per_s_per_gpu,tflops_per_gpu,"
                         "mfu_precision_peak,mfu_bf16_peak,bubble_fraction,stage_busy_s");
  if (alloc) g_string_append(out, ",device_peak_bytes,runs");
  g_string_append_c(out, '\n');
  for (int64_t i = 0; i < m->num_stages; i++) {
    const PtsimStageMemory *s = &m->stages[i];
    g_string_append_printf(out,
                           "%s,%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                           ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                           ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                           ",%d,%s,%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                           ",%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.6f,%d,%d,%.0f\n",
                           job->model.name, job->hw.name, l->gpus, l->tp, l->pp, l->cp, l->dp,
                           l->vp, l->mbs, l->gbs, l->seq, l->sp,
                           ptsim_names_get(PTSIM_NAMES_RECOMPUTE, (int)run->recompute),
                           ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)l->schedule), i,
                           s->num_layers, s->parameters_bytes, s->gradients_bytes,
                           s->optimizer_bytes, s->activations_bytes, s->other_bytes, s->total_bytes,
                           m->capacity_bytes, s->total_bytes / m->capacity_bytes,
                           i == m->peak_stage, m->fits, s->unsharded_bytes);
    if (t) {
      g_string_truncate(out, out->len - 1); /* the newline: more cells */
      g_string_append_printf(out, ",%.9g,%.9g,%.9g,%.6g,%.6f,%.6f,%.6f,%.9g\n", t->step_s,
                             t->tokens_per_s, t->tokens_per_s / (double)l->gpus, t->tflops_per_gpu,
                             ptsim_report_mfu_precision(job, t->mfu), t->mfu, t->bubble_fraction,
                             i < t->num_stages ? t->stages[i].busy_s : 0.0);
    }
    if (alloc) {
      g_string_truncate(out, out->len - 1);
      g_string_append_printf(out, ",%.0f,%d\n",
                             i < alloc->num_stages ? alloc->stages[i].device_peak_bytes : 0.0,
                             alloc->runs);
    }
  }
}

/* ---- time ---- */

static const char *const comm_names[PTSIM_COMM_KINDS] = {"tp", "cp", "pp", "dp", "ep"};

static void json_comm(PtsimJson *json, const char *key, const double *comm) {
  ptsim_json_begin_object(json, key);
  for (int k = 0; k < PTSIM_COMM_KINDS; k++) ptsim_json_double(json, comm_names[k], comm[k]);
  ptsim_json_end_object(json);
}

/* "band": the step time's error band (error_bands.h). */
static void json_band(PtsimJson *json, const PtsimTimeResult *t, const PtsimErrorBand *b) {
  ptsim_json_begin_object(json, "band");
  ptsim_json_bool(json, "found", b->found);
  if (b->found) {
    ptsim_json_double(json, "fraction", b->mean_abs_error);
    ptsim_json_double(json, "low_s", t->step_s * (1.0 - b->mean_abs_error));
    ptsim_json_double(json, "high_s", t->step_s * (1.0 + b->mean_abs_error));
    ptsim_json_double(json, "max_error_fraction", b->max_abs_error);
    ptsim_json_double(json, "bias_fraction", b->bias);
    ptsim_json_int(json, "runs", b->runs);
    ptsim_json_string(json, "group", b->group);
    ptsim_json_string(json, "sources", b->sources);
    ptsim_json_string(json, "outside_range", b->note);
  } else {
    ptsim_json_string(json, "reason", b->note);
  }
  ptsim_json_string(json, "file", PTSIM_ERROR_BANDS_FILE);
  ptsim_json_end_object(json);
}

/* The dense peak of the precision the job computes in: fp8's with fp8
 * (when the profile has one), else bf16's (fp16's is the same). */
static double precision_peak(const PtsimJob *job, const char **name) {
  gboolean fp8 = job->settings.precision == PTSIM_PRECISION_FP8 && job->hw.peak_fp8_flops > 0.0;
  *name = fp8 ? "fp8" : "bf16";
  return fp8 ? job->hw.peak_fp8_flops : job->hw.peak_bf16_flops;
}

double ptsim_report_mfu_precision(const PtsimJob *job, double mfu_bf16) {
  const char *name;
  double peak = precision_peak(job, &name);
  return peak > 0.0 ? mfu_bf16 * job->hw.peak_bf16_flops / peak : mfu_bf16;
}

void ptsim_report_json_time(PtsimJson *json, const PtsimJob *job, const PtsimTimeResult *t,
                            const PtsimErrorBand *band) {
  const char *peak_name;
  double peak = precision_peak(job, &peak_name);
  ptsim_json_begin_object(json, "time");
  ptsim_json_double(json, "step_s", t->step_s);
  if (band) json_band(json, t, band);
  ptsim_json_double(json, "tokens_per_s", t->tokens_per_s);
  ptsim_json_double(json, "tokens_per_s_per_gpu", t->tokens_per_s / (double)job->layout.gpus);
  ptsim_json_double(json, "tflops_per_gpu", t->tflops_per_gpu);
  ptsim_json_double(json, "mfu", t->mfu);
  ptsim_json_double(json, "mfu_bf16_peak", t->mfu);
  ptsim_json_double(json, "mfu_precision_peak", ptsim_report_mfu_precision(job, t->mfu));
  ptsim_json_string(json, "precision_peak", peak_name);
  ptsim_json_double(json, "precision_peak_flops_per_s", peak);
  ptsim_json_double(json, "hfu", t->hfu);
  ptsim_json_double(json, "bubble_fraction", t->bubble_fraction);
  ptsim_json_double(json, "compute_s", t->compute_s);
  ptsim_json_double(json, "pipeline_s", t->pipeline_s);
  ptsim_json_double(json, "optimizer_s", t->optimizer_s);
  json_comm(json, "exposed_comm_s", t->exposed_comm_s);
  ptsim_json_int(json, "busiest_stage", t->busiest_stage);
  ptsim_json_int(json, "events", t->events);
  ptsim_json_begin_array(json, "stages");
  for (int64_t i = 0; i < t->num_stages; i++) {
    const PtsimStageTime *s = &t->stages[i];
    ptsim_json_begin_object(json, NULL);
    ptsim_json_int(json, "stage", i);
    ptsim_json_double(json, "busy_s", s->busy_s);
    ptsim_json_double(json, "compute_s", s->compute_s);
    ptsim_json_double(json, "idle_s", s->idle_s);
    ptsim_json_double(json, "end_s", s->end_s);
    ptsim_json_double(json, "grad_sync_end_s", s->grad_sync_end_s);
    json_comm(json, "exposed_comm_s", s->exposed_comm_s);
    ptsim_json_end_object(json);
  }
  ptsim_json_end_array(json);
  ptsim_json_end_object(json);
}

void ptsim_report_text_band(GString *out, const PtsimErrorBand *b, double step_s) {
  if (!b->found) {
    g_string_append_printf(out, "(%s)\n", b->note);
    return;
  }
  g_string_append_printf(out,
                         "%.4f s +/- %.1f%% (%.4f-%.4f s): the mean error on %" G_GINT64_FORMAT
                         " held-out published runs (%s; largest %.1f%%, bias %+.1f%%)%s%s\n",
                         step_s, 100.0 * b->mean_abs_error, step_s * (1.0 - b->mean_abs_error),
                         step_s * (1.0 + b->mean_abs_error), b->runs, b->group,
                         100.0 * b->max_abs_error, 100.0 * b->bias, b->note[0] ? "; " : "",
                         b->note);
}

void ptsim_report_text_time(GString *out, const PtsimJob *job, const PtsimTimeResult *t,
                            const PtsimErrorBand *band) {
  const char *peak_name;
  precision_peak(job, &peak_name);
  double mfu = ptsim_report_mfu_precision(job, t->mfu);
  g_autofree char *bf16 = strcmp(peak_name, "bf16") != 0
                              ? g_strdup_printf(" (%.1f%% of the bf16 peak)", 100.0 * t->mfu)
                              : g_strdup("");
  g_string_append_printf(out, "\nstep time (discrete-event simulation)\n");
  if (band) ptsim_report_text_band(out, band, t->step_s);
  g_string_append_printf(
      out,
      "step %.4f s: %.0f tokens/s per GPU (%.0f for the job's %" G_GINT64_FORMAT
      " GPUs), %.1f TFLOP/s per GPU (Megatron-LM formula), MFU %.1f%% of the %s peak%s\n"
      "pipeline %.4f s, bubble %.1f%%, optimizer + param gather %.4f s\n"
      "busiest stage %" G_GINT64_FORMAT ": compute %.4f s; exposed comm tp %.4f s, cp %.4f s, "
      "pp %.4f s, dp %.4f s",
      t->step_s, t->tokens_per_s / (double)job->layout.gpus, t->tokens_per_s, job->layout.gpus,
      t->tflops_per_gpu, 100.0 * mfu, peak_name, bf16, t->pipeline_s, 100.0 * t->bubble_fraction,
      t->optimizer_s, t->busiest_stage, t->compute_s, t->exposed_comm_s[PTSIM_COMM_TP],
      t->exposed_comm_s[PTSIM_COMM_CP], t->exposed_comm_s[PTSIM_COMM_PP],
      t->exposed_comm_s[PTSIM_COMM_DP]);
  /* the expert-parallel dispatch and combine: MoE models only, so a dense
   * model's report reads as before */
  if (job->model.num_experts > 0)
    g_string_append_printf(out, ", ep %.4f s", t->exposed_comm_s[PTSIM_COMM_EP]);
  g_string_append_c(out, '\n');
  if (t->num_stages > 1) {
    g_string_append(out, "stage    busy_s  compute_s   idle_s    end_s\n");
    for (int64_t i = 0; i < t->num_stages; i++) {
      const PtsimStageTime *s = &t->stages[i];
      g_string_append_printf(out, "%5" G_GINT64_FORMAT " %9.4f %10.4f %8.4f %8.4f\n", i, s->busy_s,
                             s->compute_s, s->idle_s, s->end_s);
    }
  }
}
