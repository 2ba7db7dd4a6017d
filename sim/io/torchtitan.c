/* torchtitan.c — a torchtitan job config mapped to ptsim's layout; the
 * semantics and the contract are in torchtitan.h, the schema in
 * torchtitan_schema.c.
 *
 * Order: schema (types trusted after it), model, layers, degrees and world,
 * batch, pipeline (torchtitan_pipeline.c), recompute, precision, then the
 * fields ptsim does not model (warnings) and the first reason it cannot
 * model the config at all (`unmodelled`).  Each step reads the entries it
 * needs through the small getters below (torchtitan_int.h), which return
 * the default when a key is absent and give the key's line (or its
 * section's) for messages. */
#include "torchtitan.h"

#include <string.h>

#include "config.h"
#include "input.h"
#include "numbers.h"
#include "job_validate.h"
#include "torchtitan_int.h"
#include "torchtitan_model.h"
#include "torchtitan_python.h"
#include "torchtitan_schema.h"

void ptsim_torchtitan_clear(PtsimTorchtitan *tt) {
  g_clear_pointer(&tt->unmodelled, g_free);
  memset(tt, 0, sizeof *tt);
}

/* ---- getters ---- */

const PtsimTomlEntry *ptsim_tt_entry(const Reader *R, const char *table, const char *key) {
  return ptsim_toml_lookup(R->toml, table, key);
}

/* "FILE:LINE" of the key, else of its section, else the file. */
char *ptsim_tt_where(const Reader *R, const char *table, const char *key) {
  const PtsimTomlEntry *e = ptsim_tt_entry(R, table, key);
  int line = e ? e->line : ptsim_toml_table_line(R->toml, table);
  return line > 0 ? g_strdup_printf("%s:%d", R->toml->path, line) : g_strdup(R->toml->path);
}

int64_t ptsim_tt_get_int(const Reader *R, const char *table, const char *key, int64_t fallback) {
  const PtsimTomlEntry *e = ptsim_tt_entry(R, table, key);
  return e ? e->value.integer : fallback;
}

gboolean ptsim_tt_get_bool(const Reader *R, const char *table, const char *key, gboolean fallback) {
  const PtsimTomlEntry *e = ptsim_tt_entry(R, table, key);
  return e ? e->value.boolean : fallback;
}

const char *ptsim_tt_get_str(const Reader *R, const char *table, const char *key,
                             const char *fallback) {
  const PtsimTomlEntry *e = ptsim_tt_entry(R, table, key);
  return e ? e->value.string : fallback;
}

/* 1 when the array KEY holds WORD, 0 when not, FALLBACK when KEY is absent. */
gboolean ptsim_tt_list_has(const Reader *R, const char *table, const char *key, const char *word,
                           gboolean fallback) {
  const PtsimTomlEntry *e = ptsim_tt_entry(R, table, key);
  if (e == NULL) return fallback;
  for (guint i = 0; i < e->value.items->len; i++)
    if (strcmp(((PtsimTomlValue *)g_ptr_array_index(e->value.items, i))->string, word) == 0)
      return TRUE;
  return FALSE;
}

/* ---- messages ---- */

/* A config torchtitan itself refuses: "FILE:LINE: [t] key ...". */
gboolean ptsim_tt_invalid(const Reader *R, const char *table, const char *key, const char *fmt,
                          ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_autofree char *at = ptsim_tt_where(R, table, key);
  g_set_error(R->error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, "%s: %s", at, what);
  return FALSE;
}

/* A field that changes time or memory and that ptsim does not model. */
void ptsim_tt_warn(const Reader *R, const char *table, const char *key, const char *fmt, ...) {
  if (R->warnings == NULL) return;
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_autofree char *at = ptsim_tt_where(R, table, key);
  g_ptr_array_add(R->warnings, g_strdup_printf("%s: [%s] %s: %s", at, table, key, what));
}

/* The first reason ptsim cannot model the config; later ones are dropped. */
void ptsim_tt_unmodelled(const Reader *R, const char *table, const char *key, const char *fmt,
                         ...) {
  if (R->out->unmodelled != NULL) return;
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_autofree char *at = ptsim_tt_where(R, table, key);
  R->out->unmodelled = g_strdup_printf("%s: %s", at, what);
}

/* ---- model ---- */

static gboolean read_model(Reader *R) {
  const char *name = ptsim_tt_get_str(R, "model", "name", "llama3");
  const char *flavor = ptsim_tt_get_str(R, "model", "flavor", "debugmodel");
  const char *note = NULL, *key = NULL;
  g_autoptr(GError) local = NULL;
  if (!ptsim_torchtitan_model(name, flavor, &R->out->model_def, &note, &key, &local)) {
    if (key == NULL) {
      g_propagate_error(R->error, g_steal_pointer(&local));
      return FALSE;
    }
    return ptsim_tt_invalid(R, "model", key, "%s", local->message);
  }
  g_strlcpy(R->out->model, R->out->model_def.name, sizeof R->out->model);
  if (note)
    ptsim_tt_warn(R, "model", "flavor",
                  "'%s' uses %s: ptsim prices full causal attention over the whole sequence",
                  flavor, note);
  R->layers = R->out->model_def.num_layers;
  return TRUE;
}

/* ---- layers ---- */

/* A model whose layers workload_torch.c does not build (experts, MLA, MTP). */
static gboolean moe_family(const Reader *R) {
  const PtsimModel *m = &R->out->model_def;
  return m->num_experts > 0 || m->multi_latent_attention || m->mtp_num_layers > 0;
}

/* PyTorch's own modules (no Transformer Engine): eager, or fused by
 * torch.compile's Inductor when [compile] covers the model; attention is
 * SDPA's flash / cuDNN kernels either way (workload_torch.c). */
static gboolean read_layers(Reader *R) {
  PtsimTorchtitan *o = R->out;
  PtsimSettings *run = &o->settings;
  const char *C = "compile";
  const char *backend = ptsim_tt_get_str(R, C, "backend", "inductor");
  o->compile = ptsim_tt_get_bool(R, C, "enable", FALSE) &&
               ptsim_tt_list_has(R, C, "components", "model", TRUE);
  run->transformer_engine = 0;
  run->flash_attention = 1;
  run->torch_layers = o->compile && strcmp(backend, "inductor") == 0 ? PTSIM_TORCH_LAYERS_COMPILED
                                                                     : PTSIM_TORCH_LAYERS_EAGER;
  if (moe_family(R)) {
    /* the workload's PyTorch-module layers are dense (workload_torch.c):
     * a mixture of experts, MLA or gpt_oss's biased, windowed attention is
     * priced as Megatron-LM's local layers run it (grouped expert GEMMs,
     * unfused ops), the nearest ptsim models */
    run->torch_layers = PTSIM_TORCH_LAYERS_NONE;
    ptsim_tt_warn(
        R, "model", "name",
        "'%s' (%s): ptsim prices its layers as Megatron-LM's local (non-Transformer-Engine) "
        "modules run them, not as torchtitan's PyTorch modules%s",
        ptsim_tt_get_str(R, "model", "name", "llama3"), R->out->model,
        o->compile ? "; torch.compile's fusions are not modelled for them" : "");
    return TRUE;
  }
  if (o->compile && run->torch_layers == PTSIM_TORCH_LAYERS_EAGER)
    ptsim_tt_warn(R, C, "backend",
                  "'%s' does not generate fused kernels; ptsim prices the model's "
                  "kernels as eager PyTorch runs them",
                  backend);
  else if (o->compile)
    ptsim_tt_warn(
        R, C, "enable",
        "torch.compile's Inductor fuses RoPE, the SwiGLU product and the "
        "gradient sums into single passes, priced so (the norms are one fused kernel either "
        "way); not modelled: a residual add fused into the next norm, the compilation time "
        "of the first steps%s",
        ptsim_tt_list_has(R, C, "components", "loss", TRUE)
            ? ", the compiled loss (ptsim prices Megatron's unfused cross entropy)"
            : "");
  return TRUE;
}

/* ---- degrees, world, batch ---- */

static gboolean read_degrees(Reader *R, int64_t gpus) {
  PtsimTorchtitan *o = R->out;
  PtsimLayout *l = &o->layout;
  const char *P = "parallelism";
  static const char *const keys[] = {"data_parallel_replicate_degree", "context_parallel_degree",
                                     "tensor_parallel_degree", "pipeline_parallel_degree"};
  int64_t v[4];
  for (int i = 0; i < 4; i++) {
    v[i] = ptsim_tt_get_int(R, P, keys[i], 1);
    if (v[i] < 1 || v[i] > PTSIM_CONFIG_INT_MAX)
      return ptsim_tt_invalid(R, P, keys[i],
                              "[parallelism] %s = %" G_GINT64_FORMAT
                              " is out of range: expected an integer >= 1",
                              keys[i], (gint64)v[i]);
  }
  int64_t r = v[0], cp = v[1], tp = v[2], pp = v[3];
  int64_t shard = ptsim_tt_get_int(R, P, "data_parallel_shard_degree", -1);
  if (shard != -1 && (shard < 1 || shard > PTSIM_CONFIG_INT_MAX))
    return ptsim_tt_invalid(R, P, "data_parallel_shard_degree",
                            "[parallelism] data_parallel_shard_degree = %" G_GINT64_FORMAT
                            " is out of range: expected -1 (the leftover ranks) or >= 1",
                            (gint64)shard);
  int64_t rest = 1;
  for (int i = 0; i < 4; i++) {
    rest *= v[i]; /* each factor <= 2^30: the product is checked step by step */
    if (rest > PTSIM_CONFIG_INT_MAX)
      return ptsim_tt_invalid(R, P, keys[i],
                              "replicate x cp x tp x pp exceeds %" G_GINT64_FORMAT " GPUs",
                              (gint64)PTSIM_CONFIG_INT_MAX);
  }
  if (shard > 0 && rest * shard > PTSIM_CONFIG_INT_MAX)
    return ptsim_tt_invalid(R, P, "data_parallel_shard_degree",
                            "the world size exceeds %" G_GINT64_FORMAT " GPUs",
                            (gint64)PTSIM_CONFIG_INT_MAX);
  if (shard == -1) {
    if (gpus < 1)
      return ptsim_tt_invalid(
          R, P, "data_parallel_shard_degree",
          "data_parallel_shard_degree = -1 takes the ranks left over from the world "
          "size, which a torchtitan config does not state; give --gpus (or --nodes)");
    if (gpus % rest != 0)
      return ptsim_tt_invalid(R, P, "data_parallel_shard_degree",
                              "--gpus %" G_GINT64_FORMAT
                              " is not divisible by replicate x cp x tp x pp = %" G_GINT64_FORMAT
                              " (data_parallel_shard_degree = -1 takes the leftover ranks)",
                              (gint64)gpus, (gint64)rest);
    shard = gpus / rest;
  } else if (gpus > 0 && gpus != rest * shard) {
    return ptsim_tt_invalid(R, P, "data_parallel_shard_degree",
                            "replicate %" G_GINT64_FORMAT " x shard %" G_GINT64_FORMAT
                            " x cp %" G_GINT64_FORMAT " x tp %" G_GINT64_FORMAT
                            " x pp %" G_GINT64_FORMAT " = %" G_GINT64_FORMAT
                            " GPUs, but --gpus is %" G_GINT64_FORMAT
                            " (torchtitan requires them equal)",
                            (gint64)r, (gint64)shard, (gint64)cp, (gint64)tp, (gint64)pp,
                            (gint64)(rest * shard), (gint64)gpus);
  }
  l->gpus = rest * shard;
  l->tp = tp;
  l->pp = pp;
  l->cp = cp;
  l->dp = r * shard;
  o->dp_replicate = r;
  o->dp_shard = shard;
  o->fsdp_degree = shard * cp;
  o->dp_mode = o->fsdp_degree > 1 ? (r > 1 ? PTSIM_TORCHTITAN_DP_HSDP : PTSIM_TORCHTITAN_DP_FSDP)
                                  : (r > 1 ? PTSIM_TORCHTITAN_DP_DDP : PTSIM_TORCHTITAN_DP_NONE);
  if (o->dp_mode == PTSIM_TORCHTITAN_DP_DDP && (tp > 1 || pp > 1))
    return ptsim_tt_invalid(R, P, "data_parallel_replicate_degree",
                            "DDP (replicate %" G_GINT64_FORMAT
                            ", shard 1) with tp %" G_GINT64_FORMAT " or pp %" G_GINT64_FORMAT
                            ": torchtitan refuses it (\"DDP has not supported "
                            "> 1D parallelism\"); use data_parallel_shard_degree for FSDP/HSDP",
                            (gint64)r, (gint64)tp, (gint64)pp);
  const char *reshard = ptsim_tt_get_str(R, P, "fsdp_reshard_after_forward", "default");
  o->reshard_after_forward = strcmp(reshard, "always") == 0  ? PTSIM_TORCHTITAN_RESHARD_ALWAYS
                             : strcmp(reshard, "never") == 0 ? PTSIM_TORCHTITAN_RESHARD_NEVER
                                                             : PTSIM_TORCHTITAN_RESHARD_DEFAULT;
  return TRUE;
}

static gboolean read_batch(Reader *R) {
  PtsimTorchtitan *o = R->out;
  PtsimLayout *l = &o->layout;
  const char *T = "training";
  int64_t local = ptsim_tt_get_int(R, T, "local_batch_size", 8);
  int64_t global = ptsim_tt_get_int(R, T, "global_batch_size", -1);
  int64_t seq = ptsim_tt_get_int(R, T, "seq_len", 2048);
  if (local < 1 || local > PTSIM_CONFIG_INT_MAX)
    return ptsim_tt_invalid(R, T, "local_batch_size",
                            "[training] local_batch_size = %" G_GINT64_FORMAT
                            " is out of range: expected an integer >= 1",
                            (gint64)local);
  if (seq < 1 || seq > PTSIM_CONFIG_INT_MAX)
    return ptsim_tt_invalid(R, T, "seq_len",
                            "[training] seq_len = %" G_GINT64_FORMAT
                            " is out of range: expected an integer >= 1",
                            (gint64)seq);
  if (global < 0) global = local * l->dp; /* torchtitan: negative means local x dp */
  if (global == 0 || global > PTSIM_CONFIG_INT_MAX || global % (local * l->dp) != 0)
    return ptsim_tt_invalid(R, T, "global_batch_size",
                            "[training] global_batch_size = %" G_GINT64_FORMAT
                            " is not a multiple of local_batch_size %" G_GINT64_FORMAT
                            " x data-parallel degree %" G_GINT64_FORMAT " (torchtitan's gradient "
                            "accumulation needs it)",
                            (gint64)global, (gint64)local, (gint64)l->dp);
  if (seq % (l->tp * 2 * l->cp) != 0) /* parallelize_llama asserts it, even at tp = cp = 1 */
    return ptsim_tt_invalid(R, T, "seq_len",
                            "[training] seq_len = %" G_GINT64_FORMAT " is not divisible "
                            "by tp x 2 cp = %" G_GINT64_FORMAT " (torchtitan asserts it)",
                            (gint64)seq, (gint64)(l->tp * 2 * l->cp));
  o->grad_accumulation = global / (local * l->dp);
  l->gbs = global;
  l->seq = seq;
  l->mbs = local;
  if (l->pp > 1) {
    int64_t mb = ptsim_tt_get_int(R, "parallelism", "pipeline_parallel_microbatch_size", 1);
    if (mb < 1 || local % mb != 0)
      return ptsim_tt_invalid(R, "parallelism", "pipeline_parallel_microbatch_size",
                              "[parallelism] pipeline_parallel_microbatch_size = %" G_GINT64_FORMAT
                              " does not divide local_batch_size %" G_GINT64_FORMAT,
                              (gint64)mb, (gint64)local);
    l->mbs = mb;
    if (o->grad_accumulation > 1)
      ptsim_tt_warn(R, T, "global_batch_size",
                    "%" G_GINT64_FORMAT " gradient-accumulation steps each run their own pipeline "
                    "schedule (a bubble each); ptsim runs one schedule over all gbs/(mbs x dp) "
                    "microbatches, so it under-predicts the bubble",
                    (gint64)o->grad_accumulation);
  }
  return TRUE;
}

/* ---- recompute, precision, the rest ---- */

static gboolean read_recompute(Reader *R) {
  PtsimLayout *l = &R->out->layout;
  PtsimSettings *run = &R->out->settings;
  const char *A = "activation_checkpoint";
  const char *mode = ptsim_tt_get_str(R, A, "mode", "selective");
  const char *option = ptsim_tt_get_str(R, A, "selective_ac_option", "2");
  run->recompute = PTSIM_RECOMPUTE_NONE;
  if (strcmp(mode, "full") == 0) {
    run->recompute = PTSIM_RECOMPUTE_FULL;
  } else if (strcmp(mode, "memory_budget") == 0) {
    ptsim_tt_unmodelled(R, A, "mode",
                        "mode = 'memory_budget' lets the compiler pick what to save; "
                        "ptsim models none, selective and full recomputation");
  } else if (strcmp(mode, "selective") == 0 && strcmp(option, "op") == 0 && moe_family(R)) {
    ptsim_tt_unmodelled(
        R, A, "selective_ac_option",
        "selective_ac_option = 'op' (per-op checkpointing) on %s: ptsim prices it for "
        "PyTorch's dense layers only; mode 'full' or 'none' is modelled",
        R->out->model);
  } else if (strcmp(mode, "selective") == 0 && strcmp(option, "op") == 0) {
    run->recompute = PTSIM_RECOMPUTE_SELECTIVE_OP; /* _op_sac_save_list, every other mm */
    if (l->cp > 1)
      ptsim_tt_warn(
          R, A, "selective_ac_option",
          "'op' under context parallelism keeps the output and logsumexp of each ring step's "
          "attention kernel; ptsim counts one attention output per layer");
    const PtsimTomlEntry *fqns = ptsim_tt_entry(R, A,
                                                "per_op_sac_force_recompute_mm_shapes_by_fqns");
    for (guint i = 0; fqns && i < fqns->value.items->len; i++)
      if (strcmp(((PtsimTomlValue *)g_ptr_array_index(fqns->value.items, i))->string,
                 "moe.router.gate") != 0) {
        ptsim_tt_warn(
            R, A, "per_op_sac_force_recompute_mm_shapes_by_fqns",
            "forced recomputation of matmuls by shape changes which outputs the policy keeps; "
            "ptsim keeps every other matmul of the block (wq, wv, w1, w2)");
        break;
      }
  } else if (strcmp(mode, "selective") == 0) {
    /* torchtitan takes int(option): plain digits here, and 9 of them at most */
    gboolean digits = option[0] != '\0' && strspn(option, "0123456789") == strlen(option);
    int64_t every = 0;
    if (!digits || strlen(option) > 9 || !ptsim_number_parse_int64(option, &every))
      return ptsim_tt_invalid(
          R, A, "selective_ac_option",
          "[activation_checkpoint] selective_ac_option = "
          "'%s': allowed 'op' or a layer interval such as '2' (torchtitan refuses "
          "anything else)",
          option);
    int64_t chunk = R->layers / (l->pp * l->vp);
    int64_t saved = every <= 1 ? chunk
                               : chunk / every; /* torchtitan: '0' and '1' mean every layer */
    if (saved == chunk) {
      run->recompute = PTSIM_RECOMPUTE_FULL;
    } else if (saved > 0) {
      run->recompute = PTSIM_RECOMPUTE_FULL;
      run->recompute_method = PTSIM_RECOMPUTE_METHOD_BLOCK;
      run->recompute_num_layers = saved;
      ptsim_tt_warn(R, A, "selective_ac_option",
                    "every %" G_GINT64_FORMAT
                    "-th layer is recomputed; ptsim recomputes the same number "
                    "(%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                    " per stage) as a block at the start of "
                    "each stage",
                    (gint64)every, (gint64)saved, (gint64)chunk);
    }
  }
  if (run->recompute != PTSIM_RECOMPUTE_NONE && ptsim_tt_get_bool(R, A, "early_stop", FALSE))
    ptsim_tt_warn(R, A, "early_stop",
                  "true stops recomputation early; ptsim recomputes the whole block");
  if (ptsim_tt_get_bool(R, A, "debug", FALSE))
    ptsim_tt_warn(R, A, "debug", "true captures AC debug information (slower); not modelled");
  return TRUE;
}

/* [F] filter_fqns: ptsim keeps the output projection (the LM head) in bf16
 * and every transformer-layer projection in fp8.  DEFAULT_OUTPUT: the
 * list's default holds "output" (quantize.linear.mx). */
static void filter_warning(const Reader *R, const char *F, gboolean default_output) {
  gboolean output = ptsim_tt_list_has(R, F, "filter_fqns", "output", default_output);
  const PtsimTomlEntry *e = ptsim_tt_entry(R, F, "filter_fqns");
  if (!output)
    ptsim_tt_warn(R, F, "filter_fqns",
                  "the output projection is converted too (its name, 'output', is "
                  "not listed); ptsim prices the LM head's GEMMs in bf16");
  if (e && e->value.items->len > (output ? 1u : 0u))
    ptsim_tt_warn(R, F, "filter_fqns",
                  "the listed layer modules stay in bf16; ptsim runs every "
                  "transformer-layer projection's GEMMs at the fp8 rate");
}

/* [quantize.linear.float8]: torchao's Float8Linear.  Without recipe_name
 * it is the default Float8LinearConfig: dynamic tensorwise scaling, an amax
 * pass before each cast (ptsim's tensorwise recipe); the rowwise recipes
 * scale each row in the cast kernel (priced as ptsim's blockwise casts). */
static gboolean read_float8(Reader *R) {
  PtsimTorchtitan *o = R->out;
  PtsimSettings *run = &o->settings;
  const char *F = "quantize.linear.float8";
  const char *recipe = ptsim_tt_get_str(R, F, "recipe_name", "");
  o->fsdp_float8_all_gather = ptsim_tt_get_bool(R, F, "enable_fsdp_float8_all_gather", FALSE);
  if (recipe[0] != '\0' && o->fsdp_float8_all_gather)
    return ptsim_tt_invalid(
        R, F, "recipe_name",
        "[quantize.linear.float8] recipe_name = '%s' with "
        "enable_fsdp_float8_all_gather = true: torchtitan asserts they are not used "
        "together (the fp8 all-gather is tensorwise only)",
        recipe);
  if (ptsim_tt_get_bool(R, F, "emulate", FALSE))
    ptsim_tt_unmodelled(R, F, "emulate", "emulate = true runs float8 as bf16 math (a test mode)");
  if (recipe[0] == '\0' || strcmp(recipe, "tensorwise") == 0) {
    run->fp8_recipe = PTSIM_FP8_TENSORWISE;
  } else {
    run->fp8_recipe = PTSIM_FP8_BLOCKWISE;
    ptsim_tt_warn(
        R, F, "recipe_name",
        "'%s' scales each row in its cast kernels, priced as ptsim's "
        "blockwise casts%s",
        recipe,
        strcmp(recipe, "rowwise_with_gw_hp") == 0
            ? "; its weight-gradient GEMMs run in bf16, which ptsim prices at the fp8 rate"
            : "");
  }
  if (!o->compile)
    ptsim_tt_warn(R, "model", "converters",
                  "eager float8 (no torch.compile) runs each amax and cast as "
                  "several unfused kernels; ptsim prices one amax pass and one cast each");
  filter_warning(R, F, FALSE);
  return TRUE;
}

static gboolean read_precision(Reader *R) {
  PtsimTorchtitan *o = R->out;
  PtsimLayout *l = &o->layout;
  PtsimSettings *run = &o->settings;
  const char *T = "training", *M = "model";
  run->precision = PTSIM_PRECISION_BF16;
  if (strcmp(ptsim_tt_get_str(R, T, "dtype", "float32"), "bfloat16") == 0)
    ptsim_tt_unmodelled(
        R, T, "dtype",
        "dtype = 'bfloat16' trains without fp32 master weights; ptsim "
        "models mixed precision (bf16 or fp8 compute, fp32 master weights and gradients)");
  if (strcmp(ptsim_tt_get_str(R, T, "mixed_precision_param", "bfloat16"), "float32") == 0)
    ptsim_tt_unmodelled(R, T, "mixed_precision_param",
                        "mixed_precision_param = 'float32' computes in "
                        "float32; ptsim models bf16 or fp8 compute");
  o->mixed_precision = o->fsdp_degree > 1 || (l->tp == 1 && l->pp == 1);
  if (!o->mixed_precision)
    ptsim_tt_unmodelled(
        R, "parallelism", l->tp > 1 ? "tensor_parallel_degree" : "pipeline_parallel_degree",
        "with tp or pp and no FSDP (shard x cp = 1) torchtitan trains in float32 (mixed "
        "precision comes from fully_shard, or autocast on one GPU or pure DDP); ptsim "
        "models bf16 or fp8 compute");
  gboolean f8 = ptsim_tt_list_has(R, M, "converters", "quantize.linear.float8", FALSE);
  gboolean mx = ptsim_tt_list_has(R, M, "converters", "quantize.linear.mx", FALSE);
  const PtsimTomlEntry *conv = ptsim_tt_entry(R, M, "converters");
  for (guint i = 0; conv && i < conv->value.items->len; i++) {
    const char *c = ((PtsimTomlValue *)g_ptr_array_index(conv->value.items, i))->string;
    if (strcmp(c, "quantize.grouped_mm.float8") == 0 || strcmp(c, "quantize.grouped_mm.mx") == 0)
      ptsim_tt_warn(R, M, "converters", "'%s' converts MoE grouped GEMMs; a dense model has none",
                    c);
    else if (strcmp(c, "quantize.linear.float8") != 0 && strcmp(c, "quantize.linear.mx") != 0)
      return ptsim_tt_invalid(
          R, M, "converters",
          "[model] converters has '%s'; allowed: "
          "quantize.linear.float8, quantize.linear.mx, quantize.grouped_mm.float8, "
          "quantize.grouped_mm.mx%s",
          c,
          strcmp(c, "float8") == 0 ? " ('float8' was renamed 'quantize.linear.float8' in 2025-09)"
                                   : "");
  }
  if (f8 && mx)
    return ptsim_tt_invalid(R, M, "converters",
                            "quantize.linear.float8 and quantize.linear.mx both "
                            "convert the Linear layers; give one");
  if (f8 || mx) run->precision = PTSIM_PRECISION_FP8;
  if (f8 && !read_float8(R)) return FALSE;
  if (mx) {
    run->fp8_recipe = PTSIM_FP8_BLOCKWISE; /* scales computed by the cast kernel itself */
    ptsim_tt_warn(R, M, "converters",
                  "quantize.linear.mx: MXFP8 (32-element E8M0 block scales, "
                  "Blackwell sm_100) is priced as fp8 GEMMs whose casts compute their block scales "
                  "themselves (ptsim's blockwise recipe); MXFP8's own GEMM rate is not modelled");
    filter_warning(R, "quantize.linear.mx", TRUE);
  }
  return TRUE;
}

/* Fields that change step time or memory, set away from their defaults,
 * that ptsim does not model (or models by something else). */
static void read_the_rest(Reader *R) {
  PtsimTorchtitan *o = R->out;
  PtsimLayout *l = &o->layout;
  PtsimSettings *run = &o->settings;
  const char *P = "parallelism";
  if (ptsim_tt_get_bool(R, P, "enable_async_tensor_parallel", FALSE)) {
    if (!o->compile || l->tp == 1)
      ptsim_tt_warn(R, P, "enable_async_tensor_parallel",
                    "ignored by torchtitan without compile and tp > 1");
    else
      run->tp_comm_overlap = 1; /* modelled as Megatron's --tp-comm-overlap */
  }
  if (l->tp > 1 && ptsim_tt_get_bool(R, P, "disable_loss_parallel", FALSE))
    ptsim_tt_warn(R, P, "disable_loss_parallel",
                  "true gathers the full logits on every TP rank; ptsim "
                  "keeps them vocabulary-parallel (memory under-predicted)");
  /* PyTorch's context_parallel: 'allgather' gathers every K/V shard before
   * the attention, 'alltoall' rotates them round the ring (its exchanges
   * overlap the blocks, as Transformer Engine's p2p) */
  if (l->cp > 1)
    run->cp_comm = strcmp(ptsim_tt_get_str(R, P, "context_parallel_rotate_method", "allgather"),
                          "allgather") == 0
                       ? PTSIM_CP_ALLGATHER
                       : PTSIM_CP_P2P;
  int64_t ep = ptsim_tt_get_int(R, P, "expert_parallel_degree", 1);
  int64_t etp = ptsim_tt_get_int(R, P, "expert_tensor_parallel_degree", 1);
  if (o->model_def.num_experts == 0 && ep > 1)
    ptsim_tt_warn(R, P, "expert_parallel_degree", "no effect on a dense model");
  if (o->model_def.num_experts > 0) {
    /* torchtitan's EP borrows its ranks from dp_shard x cp x tp (ParallelDims:
     * efsdp = dp_shard x cp x tp / ep): ptsim's expert grid etp x ep x edp
     * over the same ranks */
    l->ep = ep;
    l->etp = etp;
  }
  if (ptsim_tt_get_bool(R, "training", "enable_cpu_offload", FALSE))
    ptsim_tt_unmodelled(R, "training", "enable_cpu_offload",
                        "enable_cpu_offload = true moves FSDP "
                        "states to CPU memory; not modelled");
  if (ptsim_tt_get_bool(R, "training", "gc_debug", FALSE))
    ptsim_tt_warn(R, "training", "gc_debug", "true runs gc.collect() every step; not modelled");
  const char *opt = ptsim_tt_get_str(R, "optimizer", "name", "AdamW");
  if (strcmp(opt, "AdamW") != 0 && strcmp(opt, "Adam") != 0)
    ptsim_tt_warn(R, "optimizer", "name",
                  "'%s': ptsim counts Adam's state (fp32 master, m, v: 12 bytes "
                  "per parameter)",
                  opt);
  const char *impl = ptsim_tt_get_str(R, "optimizer", "implementation", "fused");
  if (strcmp(impl, "fused") != 0)
    ptsim_tt_warn(R, "optimizer", "implementation",
                  "'%s' is slower than the fused step ptsim prices", impl);
  if (ptsim_tt_get_bool(R, "optimizer", "early_step_in_backward", FALSE))
    ptsim_tt_warn(R, "optimizer", "early_step_in_backward",
                  "true frees each gradient after its update in "
                  "backward; ptsim keeps gradients until the step (memory over-predicted)");
  if (ptsim_tt_get_bool(R, "checkpoint", "enable", FALSE))
    ptsim_tt_warn(R, "checkpoint", "enable",
                  "saving a checkpoint every %" G_GINT64_FORMAT " steps is not "
                  "in ptsim's step time",
                  (gint64)ptsim_tt_get_int(R, "checkpoint", "interval", 500));
  if (ptsim_tt_get_bool(R, "validation", "enable", FALSE))
    ptsim_tt_warn(R, "validation", "enable",
                  "validation every %" G_GINT64_FORMAT " steps is not in ptsim's "
                  "step time",
                  (gint64)ptsim_tt_get_int(R, "validation", "freq", 10));
  if (ptsim_tt_get_bool(R, "profiling", "enable_profiling", FALSE))
    ptsim_tt_warn(R, "profiling", "enable_profiling", "profiled steps run slower; not modelled");
  if (ptsim_tt_get_bool(R, "profiling", "enable_memory_snapshot", FALSE))
    ptsim_tt_warn(R, "profiling", "enable_memory_snapshot",
                  "recording allocation history slows steps; not "
                  "modelled");
  if (ptsim_tt_get_bool(R, "debug", "deterministic", FALSE))
    ptsim_tt_warn(R, "debug", "deterministic", "deterministic kernels are slower; not modelled");
  if (ptsim_tt_get_bool(R, "fault_tolerance", "enable", FALSE))
    ptsim_tt_unmodelled(R, "fault_tolerance", "enable",
                        "TorchFT (fault-tolerant HSDP with a dynamic "
                        "replica group) is not modelled");
  if (ptsim_tt_get_str(R, "experimental", "custom_import", "")[0] != '\0')
    ptsim_tt_warn(R, "experimental", "custom_import",
                  "a custom module may change the model or its "
                  "parallelisation; ptsim reads the config only");
}

/* fully_shard over dp_shard x cp (HSDP: replicated dp_replicate times):
 * PyTorch FSDP2 as torchtitan applies it (models/llama3/infra/
 * parallelize.py): one unit per transformer block, the embedding and
 * [norm, output]; MixedPrecisionPolicy(bf16 params, fp32 reduce); gradient
 * sync never turned off, so every micro-step gathers and reduces; under
 * PP torch.distributed.pipelining reduces once (plan.c "Sharding").
 * fsdp_reshard_after_forward "default" is ptsim's AUTO (torch: not under
 * PP, and never the output unit). */
static void read_sharding(Reader *R) {
  PtsimTorchtitan *o = R->out;
  PtsimLayout *l = &o->layout;
  PtsimSettings *run = &o->settings;
  if (o->dp_mode != PTSIM_TORCHTITAN_DP_FSDP && o->dp_mode != PTSIM_TORCHTITAN_DP_HSDP) return;
  l->sharding = PTSIM_SHARDING_PARAMS;
  run->fsdp_impl = PTSIM_FSDP_TORCH;
  l->distributed_optimizer = 1; /* the optimizer steps the fp32 shards */
  l->optimizer_instances = o->dp_replicate;
  run->reshard_after_forward = o->reshard_after_forward == PTSIM_TORCHTITAN_RESHARD_ALWAYS
                                   ? PTSIM_RESHARD_ALWAYS
                               : o->reshard_after_forward == PTSIM_TORCHTITAN_RESHARD_NEVER
                                   ? PTSIM_RESHARD_NEVER
                                   : PTSIM_RESHARD_AUTO;
  /* float8 weights all-gathered in fp8 (tensorwise scaling only) */
  run->fp8_param_gather = o->fsdp_float8_all_gather && run->precision == PTSIM_PRECISION_FP8;
  if (ptsim_tt_get_bool(R, "quantize.linear.float8", "precompute_float8_dynamic_scale_for_fsdp",
                        FALSE))
    ptsim_tt_warn(
        R, "quantize.linear.float8", "precompute_float8_dynamic_scale_for_fsdp",
        "true computes the fp8 scales of all weights in one kernel after the optimizer step; "
        "ptsim does not price the scale computation");
}

gboolean ptsim_torchtitan_parse(const PtsimToml *toml, int64_t gpus, PtsimTorchtitan *out,
                                GPtrArray *warnings, GError **error) {
  g_return_val_if_fail(toml != NULL && out != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  PtsimTorchtitan tt;
  memset(&tt, 0, sizeof tt);
  ptsim_layout_init_defaults(&tt.layout);
  ptsim_settings_init_defaults(&tt.settings);
  tt.layout.sp = -1; /* torchtitan's TP shards norms over the sequence */
  tt.layout.distributed_optimizer = 0;
  tt.settings.fp32_grad_accumulation = 1;
  Reader R = {toml, &tt, warnings, error, 0};
  gboolean ok = ptsim_torchtitan_check_schema(toml, error) && read_model(&R) && read_layers(&R) &&
                read_degrees(&R, gpus) && read_batch(&R) && ptsim_tt_read_pipeline(&R) &&
                read_recompute(&R) && read_precision(&R);
  if (ok) {
    read_sharding(&R);
    read_the_rest(&R);
    /* DDP overlaps its bucketed fp32 all-reduce with backward.  Its memory
     * under autocast (fp32 weights 4 + fp32 gradients 4 + Adam m, v 8 + the
     * bf16 weight copies autocast keeps for backward 2 = 18 bytes per
     * parameter) is the total of ptsim's replicated Megatron states (bf16
     * weights 2 + fp32 gradients 4 + fp32 master, m, v 12), split otherwise. */
    tt.settings.overlap_grad_reduce = tt.dp_mode == PTSIM_TORCHTITAN_DP_DDP;
    *out = tt;
    return TRUE;
  }
  g_free(tt.unmodelled);
  return FALSE;
}

/* A launch of torchtitan's Python form (torchtitan_python.h) is read
 * when the file is not TOML; the world size it names (torchrun's
 * processes) when --gpus does not. */
gboolean ptsim_torchtitan_load(const char *path, int64_t gpus, PtsimTorchtitan *out,
                               GPtrArray *warnings, GError **error) {
  g_autoptr(GError) local = NULL;
  g_autoptr(PtsimToml) toml = ptsim_toml_load(path, &local);
  if (toml == NULL) {
    g_autofree char *text = NULL;
    gsize len = 0;
    if (local->code != PTSIM_CONFIG_ERROR_PARSE ||
        !ptsim_input_read(path, "torchtitan config", PTSIM_INPUT_MAX_TEXT, &text, &len, NULL) ||
        !ptsim_torchtitan_python_detect(text, len)) {
      g_propagate_error(error, g_steal_pointer(&local));
      return FALSE;
    }
    int64_t launched = -1;
    toml = ptsim_torchtitan_python_parse(path, text, len, &launched, warnings, error);
    if (toml == NULL) return FALSE;
    if (gpus < 1) gpus = launched;
  }
  return ptsim_torchtitan_parse(toml, gpus, out, warnings, error);
}

gboolean ptsim_torchtitan_job(const PtsimTorchtitan *tt, PtsimJob *job, GError **error) {
  g_return_val_if_fail(tt != NULL && job != NULL, FALSE);
  if (tt->unmodelled != NULL) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, "%s", tt->unmodelled);
    return FALSE;
  }
  if (tt->settings.precision == PTSIM_PRECISION_FP8 && job->hw.peak_fp8_flops <= 0.0) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "torchtitan's float8/MX converters need fp8 tensor cores (SM89 or later); "
                "hardware profile %s has none (peak_fp8_tflops = 0)",
                job->hw.name);
    return FALSE;
  }
  job->model = tt->model_def;
  job->layout = tt->layout;
  job->settings = tt->settings;
  memset(&job->source, 0, sizeof job->source);
  return TRUE;
}
