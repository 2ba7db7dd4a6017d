/* names.c — enum words; see names.h.  Order in each table = enum value. */
#include <string.h>
#include "names.h"

typedef struct {
  const char *const *words;
  int count;
  const char *allowed;
} NameTable;

static const char *const recompute_words[] = {"none", "selective", "full", "selective-op"};
static const char *const method_words[] = {"uniform", "block"};
static const char *const precision_words[] = {"bf16", "fp16", "fp8"};
static const char *const schedule_words[] = {"1f1b",  "gpipe", "interleaved",
                                             "zb-h1", "zbv",   "dualpipev"};
static const char *const activation_words[] = {"swiglu", "gelu", "relu2"};
static const char *const norm_words[] = {"rmsnorm", "layernorm"};
static const char *const sharding_words[] = {"ddp", "zero1", "zero2", "fsdp", "hsdp"};
static const char *const fsdp_impl_words[] = {"megatron", "torch"};
/* PTSIM_RESHARD_* + 1: AUTO is torchtitan's "default" */
static const char *const reshard_words[] = {"default", "never", "but-last", "always"};
static const char *const score_words[] = {"softmax", "sigmoid", "sqrtsoftplus"};
static const char *const balancing_words[] = {"aux_loss", "seq_aux_loss",       "global_aux_loss",
                                              "sinkhorn", "quantile_balancing", "none"};
static const char *const dispatcher_words[] = {"allgather", "alltoall", "flex"};
static const char *const module_words[] = {"core_attn",  "mlp", "layernorm",
                                           "moe_act",    "moe", "shared_experts",
                                           "mla_up_proj"};

static const NameTable tables[] = {
    {recompute_words, 4, "none|selective|full|selective-op"},
    {method_words, 2, "uniform|block"},
    {precision_words, 3, "bf16|fp16|fp8"},
    {schedule_words, 6, "1f1b|gpipe|interleaved|zb-h1|zbv|dualpipev"},
    {activation_words, 3, "swiglu|gelu|relu2"},
    {norm_words, 2, "rmsnorm|layernorm"},
    {sharding_words, 5, "ddp|zero1|zero2|fsdp|hsdp"},
    {fsdp_impl_words, 2, "megatron|torch"},
    {reshard_words, 4, "default|never|but-last|always"},
    {score_words, 3, "softmax|sigmoid|sqrtsoftplus"},
    {balancing_words, 6, "aux_loss|seq_aux_loss|global_aux_loss|sinkhorn|quantile_balancing|none"},
    {dispatcher_words, 3, "allgather|alltoall|flex"},
    {module_words, 7, "core_attn|mlp|layernorm|moe_act|moe|shared_experts|mla_up_proj"},
};

const char *ptsim_names_get(PtsimNamesKind kind, int value) {
  const NameTable *t = &tables[kind];
  if (value < 0 || value >= t->count) return "?";
  return t->words[value];
}

gboolean ptsim_names_parse(PtsimNamesKind kind, const char *word, int *value) {
  const NameTable *t = &tables[kind];
  for (int i = 0; i < t->count; i++) {
    if (strcmp(word, t->words[i]) == 0) {
      *value = i;
      return TRUE;
    }
  }
  return FALSE;
}

const char *ptsim_names_allowed(PtsimNamesKind kind) { return tables[kind].allowed; }
