/* plan.c — a validated job's derived quantities, computed once; see plan.h.
 *
 * Conventions decided here (each module downstream inherits them):
 *  - Learned absolute position embeddings are counted for GELU + LayerNorm
 *    models only (ptsim_plan_has_learned_positions()).
 *  - Tied embeddings with pp > 1: the last stage keeps its own copy of the
 *    word embedding (Megatron does, and all-reduces their gradients); with
 *    pp = 1 the shared matrix is counted once.
 *  - An unknown batch (gbs 0, so m = 0) is taken as "enough microbatches"
 *    for the in-flight counts, as Megatron's estimate does without
 *    num_microbatches.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "plan.h"
#include "schedule.h"

static PTSIM_HD double plan_dmin(double x, double y) { return x < y ? x : y; }

static PTSIM_HD int64_t plan_imin(int64_t x, int64_t y) { return x < y ? x : y; }

/* Parameters of one norm: RMSNorm weight h; LayerNorm weight + bias 2h. */
static PTSIM_HD double plan_norm_parameters(const PtsimModel *m) {
  double h = (double)m->hidden_size;
  return m->norm == PTSIM_NORM_LAYERNORM ? 2.0 * h : h;
}

/* ---- the stage split ---- */

PTSIM_HD int32_t ptsim_plan_split_stages(int64_t pp, int64_t layers, int64_t first, int64_t last,
                                         int64_t *out) {
  int64_t s, middle, rest;
  if (pp < 1 || pp > PTSIM_MAX_STAGES || layers < 1 || first < 0 || last < 0) return -1;
  if (first == 0 && last == 0) {
    if (layers % pp != 0) return -1;
    for (s = 0; s < pp; s++) out[s] = layers / pp;
    return 0;
  }
  if (pp < 2) return -1;
  middle = pp - (first ? 1 : 0) - (last ? 1 : 0);
  rest = layers - first - last;
  if (rest < 0 || (middle == 0 && rest != 0) ||
      (middle > 0 && (rest < middle || rest % middle != 0)))
    return -1;
  for (s = 0; s < pp; s++) out[s] = middle > 0 ? rest / middle : 0;
  if (first) out[0] = first;
  if (last) out[pp - 1] = last;
  return 0;
}

/* ---- parameters ---- */

PTSIM_HD int ptsim_plan_has_learned_positions(const PtsimModel *model) {
  return model->activation == PTSIM_ACTIVATION_GELU && model->norm == PTSIM_NORM_LAYERNORM;
}

PTSIM_HD double ptsim_plan_layer_parameters(const PtsimModel *model, int64_t tp) {
  double h = (double)model->hidden_size;
  double hf = (double)model->ffn_hidden_size;
  double ka = (double)model->num_query_groups / (double)model->num_attention_heads;
  double t = (double)tp;
  int swiglu = model->activation == PTSIM_ACTIVATION_SWIGLU;
  /* Attention, head_dim = h/a: Q and O h^2 each, K and V h^2*k/a each, all
   * TP-sharded (column-parallel QKV, row-parallel O). */
  double attention = 2.0 * h * h * (1.0 + ka) / t;
  /* MLP: SwiGLU gate, up, down; GELU fc1, fc2. */
  double mlp = (swiglu ? 3.0 : 2.0) * h * hf / t;
  double bias = 0.0;
  if (model->bias) {
    /* Column-parallel biases are split, row-parallel ones are not. */
    bias += (h + 2.0 * h * ka) / t;        /* QKV */
    bias += h;                             /* O (row-parallel) */
    bias += (swiglu ? 2.0 : 1.0) * hf / t; /* fc1 (gate+up for SwiGLU) */
    bias += h;                             /* fc2 (row-parallel) */
  }
  /* Two norms per layer, replicated over TP (SP splits the sequence). */
  return attention + mlp + bias + 2.0 * plan_norm_parameters(model);
}

/* Parameters held by one GPU of pipeline stage `stage`. */
static PTSIM_HD double plan_stage_parameters(const PtsimPlan *plan, int64_t stage) {
  const PtsimModel *m = &plan->job.model;
  const PtsimLayout *l = &plan->job.layout;
  double h = (double)m->hidden_size;
  double v = (double)m->vocab_size;
  double word_embedding = h * v / (double)l->tp; /* vocabulary-parallel */
  double n = (double)plan->stage_layers[stage] * plan->layer_parameters;
  if (stage == 0) {
    n += word_embedding;
    /* Megatron's learned position embedding is a plain (not parallel)
     * embedding: replicated over TP.  max_position_embeddings = seq. */
    if (ptsim_plan_has_learned_positions(m)) n += (double)l->seq * h;
  }
  if (stage == l->pp - 1) {
    n += plan_norm_parameters(m); /* final norm */
    /* Untied: the LM head.  Tied with pp > 1: the last stage's copy of the
     * word embedding.  Tied with pp = 1: already counted above. */
    if (!m->tied_embeddings || l->pp > 1) n += word_embedding;
  }
  return n;
}

/* ---- in-flight microbatches ---- */

static PTSIM_HD double plan_inflight(const PtsimPlan *plan, int64_t stage) {
  const PtsimLayout *l = &plan->job.layout;
  int64_t p = l->pp;
  int64_t m = plan->num_microbatches;
  int64_t m_eff = m > 0 ? m : (int64_t)1 << 40;
  switch (l->schedule) {
  case PTSIM_SCHEDULE_GPIPE:
    /* All forwards before any backward. */
    return (double)(m > 0 ? m : p);
  case PTSIM_SCHEDULE_INTERLEAVED:
    if (l->vp > 1) {
      /* Interleaved 1F1B with v chunks per rank: rank i runs
       * 2(p-1-i) + (v-1)p warm-up chunk-forwards and holds one more in the
       * steady state, capped at all m*v chunk-forwards.  A chunk is 1/v of
       * the stage's layers, so in whole-stage microbatches stage 0 holds
       * p + (p-1)/v = p * (1 + (p-1)/(p v)): exactly Megatron's interleaved
       * memory penalty times p (Megatron prints ceil() of it as a count but
       * scales activations by the unrounded factor; so does ptsim). The
       * last stage holds p - (p-1)/v. */
      int64_t v = l->vp;
      int64_t chunks = 2 * (p - 1 - stage) + (v - 1) * p + 1;
      double cap = (double)m_eff * (double)v;
      return plan_dmin((double)chunks, cap) / (double)v;
    }
    return (double)plan_imin(p - stage, m_eff);
  case PTSIM_SCHEDULE_ZB_H1:
    /* ZB-H1 keeps 1F1B's warm-up depth, but stage i defers each weight-
     * gradient pass (W) by i microbatches (schedule.h), and W needs the
     * inputs of the layer's linear layers, most of what the layer saved.
     * So every stage holds min(p, m) microbatches until their W: stage 0's
     * 1F1B peak on every stage (the paper's "same peak memory as 1F1B";
     * counted in full, a slight over-estimate, as the allocator replay
     * does). */
    return (double)plan_imin(p, m_eff);
  case PTSIM_SCHEDULE_1F1B:
  default:
    /* Stage i runs p-1-i warm-up forwards plus one: min(p - i, m).  For
     * stage 0 with m < p this is Megatron's min(1, m/p) discount. */
    return (double)plan_imin(p - stage, m_eff);
  }
}

/* ---- the plan ---- */

PTSIM_HD void ptsim_plan_counts(const PtsimJob *job, PtsimPlan *out) {
  const PtsimLayout *l = &job->layout;
  int64_t per = l->mbs * l->dp;
  out->num_stages = l->pp;
  out->num_chunks = l->vp > 0 ? l->vp : 1;
  out->num_microbatches = per > 0 ? l->gbs / per : 0;
  out->schedule_items = ptsim_schedule_num_items(l->schedule, (int32_t)l->pp,
                                                 (int32_t)out->num_microbatches,
                                                 (int32_t)out->num_chunks);
}

PTSIM_HD void ptsim_plan_build(const PtsimJob *job, PtsimPlan *out) {
  const PtsimLayout *l = &job->layout;
  int64_t s, first = 0;
  int k;
  out->job = *job;
  ptsim_plan_counts(job, out);
  out->tokens = l->mbs * l->seq / l->cp;
  out->tokens_sp = l->sp ? (double)out->tokens / (double)l->tp : (double)out->tokens;
  out->layer_parameters = ptsim_plan_layer_parameters(&job->model, l->tp);
  for (k = 0; k < PTSIM_GROUP_KIND_COUNT; k++)
    ptsim_topology_group(l, &job->hw, (PtsimGroupKind)k, &out->groups[k]);
  for (s = 0; s < PTSIM_MAX_STAGES; s++) out->stage_layers[s] = 0;
  if (ptsim_plan_split_stages(l->pp, job->model.num_layers, l->first_stage_layers,
                              l->last_stage_layers, out->stage_layers) != 0)
    for (s = 0; s < PTSIM_MAX_STAGES; s++) out->stage_layers[s] = 0;
  for (s = 0; s < PTSIM_MAX_STAGES; s++) {
    int active = s < l->pp;
    out->stage_first_layer[s] = active ? first : 0;
    out->chunk_layers[s] = active ? out->stage_layers[s] / out->num_chunks : 0;
    if (active) first += out->stage_layers[s];
  }
  for (s = 0; s < PTSIM_MAX_STAGES; s++) {
    out->stage_parameters[s] = s < l->pp ? plan_stage_parameters(out, s) : 0.0;
    out->inflight_microbatches[s] = s < l->pp ? plan_inflight(out, s) : 0.0;
  }
}
