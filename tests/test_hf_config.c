/* test_hf_config.c — sim/io/hf_config.c: a Hugging Face config.json of each
 * family ptsim reads becomes a model whose parameter total is the one
 * derived by hand from the config (in each row's comment) and, within what
 * ptsim does not count (named in a warning), the published total; where
 * ptsim ships the same model as an .ini the two agree; malformed and
 * unknown configs are one error naming the file and the key. */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "config.h"
#include "hf_config.h"
#include "plan.h"

typedef struct {
  const char *dir;     /* tests/data/hf_configs/DIR/config.json */
  double total;        /* exact, by hand from the config */
  double published;    /* the authors' total, in 1e9 ... */
  double step;         /* ... within this (their rounding, or what ptsim leaves out) */
  const char *shipped; /* the same model in models/, or NULL */
  const char *warning; /* a warning the config must give, or NULL */
} Count;

static const Count counts[] = {
    /* layer: q 4096^2 + k, v 2 x 4096 x 1024 + o 4096^2 = 41,943,040, MLP
     * 3 x 4096 x 14336 = 176,160,768, norms 8192: 218,112,000 x 32 =
     * 6,979,584,000; embedding and head 2 x 128256 x 4096 = 1,050,673,152;
     * final norm 4096.  Published 8.03B. */
    {"llama3-8b", 8030261248.0, 8.03, 0.005, "llama3-8b", NULL},
    /* the same layers; embedding and head 2 x 32000 x 4096 = 262,144,000:
     * 7,241,732,096; published 7.24B */
    {"mistral-7b", 7241732096.0, 7.24, 0.005, NULL, NULL},
    /* test_moe.c's count: 46,702,792,704; published 46.7B */
    {"mixtral-8x7b", 46702792704.0, 46.7, 0.05, "mixtral-8x7b", NULL},
    /* q 3584^2 + k, v 2 x 3584 x 512 + o 3584^2 = 29,360,128, MLP 3 x 3584
     * x 18944 = 203,685,888, norms 7168: 233,053,184 x 28 = 6,525,489,152;
     * 2 x 152064 x 3584 = 1,089,994,752; final norm 3584.  Published
     * 7.62B with the q/k/v biases, 28 x (3584 + 512 + 512) = 129,024,
     * which ptsim leaves out (warned). */
    {"qwen2-7b", 7615487488.0, 7.62, 0.005, NULL, "129024 parameters"},
    /* 41,943,040 attention + 2 x 128 q/k norms + 3 x 4096 x 12288 =
     * 150,994,944 + 8192 norms = 192,946,432 x 36 = 6,946,071,552; 2 x
     * 151936 x 4096 = 1,244,659,712; 4096.  Published 8.2B (6.95B
     * without the embeddings). */
    {"qwen3-8b", 8190735360.0, 8.2, 0.05, NULL, NULL},
    /* 4 x 2048^2 = 16,777,216 attention + 60 x 3 x 2048 x 1408 =
     * 519,045,120 experts + 3 x 2048 x 5632 = 34,603,008 shared + 2048
     * shared gate + 60 x 2048 router + 4096 norms = 570,554,368 x 24 =
     * 13,693,304,832; 2 x 151936 x 2048 = 622,329,856; 2048.  Published
     * 14.3B. */
    {"qwen1.5-moe-a2.7b", 14315636736.0, 14.3, 0.05, NULL, "147456 parameters"},
    /* test_moe.c's count; published 30.5B */
    {"qwen3-30b-a3b", 30532122624.0, 30.5, 0.05, "qwen3-30b-a3b", NULL},
    /* test_moe.c's 671,026,404,352 + the MTP block 11,610,067,968 (one
     * MoE layer, 3 norms, the 2h x h projection); published 671B without
     * it */
    {"deepseek-v3", 682636472320.0, 682.6, 0.05, "deepseek-v3", NULL},
    /* test_moe.c's count; published 15.7B */
    {"deepseek-v2-lite", 15706484224.0, 15.7, 0.05, "deepseek-v2-lite", NULL},
    /* per layer: q 2880 x 4096 + k, v 2 x 2880 x 512 + o 4096 x 2880 =
     * 26,542,080 and their biases 4096 + 512 + 512 + 2880 = 8000; experts
     * 128 x (2880 x 5760 + 2880 x 2880) = 3,185,049,600 and their biases
     * 128 x (5760 + 2880) = 1,105,920; router 128 x 2880 = 368,640; norms
     * 5760: 3,213,080,000 x 36 = 115,670,880,000; 2 x 201088 x 2880 =
     * 1,158,266,880; 2880; the attention sinks 36 x 64 = 2304 (learnable
     * softmax).  Published 116.83B (116,829,156,672) with the router's
     * biases (36 x 128 = 4608), which ptsim does not count (warned). */
    {"gpt-oss-120b", 116829152064.0, 116.83, 0.005, NULL, "router's biases (4608 parameters"},
    /* text_config: q 5120^2 + k, v 2 x 5120 x 1024 + o 5120^2 =
     * 62,914,560, q/k norms 2 x 128 (the weightless L2 norm, counted,
     * warned), 16 x 3 x 5120 x 8192 = 2,013,265,920 experts + one shared
     * 125,829,120 + router 81,920 + norms 10240 = 2,202,102,016 x 48 =
     * 105,700,896,768; 2 x 202048 x 5120 = 2,068,971,520; 5120.  Published
     * 109B with the vision encoder, not modelled (warned). */
    {"llama4-scout", 107769873408.0, 109.0, 1.5, NULL, "vision_config"},
};

static gboolean has_warning(GPtrArray *w, const char *needle) {
  for (guint i = 0; i < w->len; i++)
    if (strstr(w->pdata[i], needle)) return TRUE;
  return FALSE;
}

static void check_count(gconstpointer data) {
  const Count *c = data;
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "hf_configs", c->dir,
                                                "config.json", NULL);
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GError) error = NULL;
  PtsimModel m;
  g_assert_true(ptsim_hf_config_load(path, &m, warnings, &error));
  g_assert_no_error(error);
  for (guint i = 0; i < warnings->len; i++) g_test_message("%s", (char *)warnings->pdata[i]);
  g_assert_cmpstr(m.name, ==, c->dir); /* NAME of NAME/config.json */
  double total = 0;
  ptsim_plan_model_parameters(&m, 4096, &total, NULL);
  g_assert_cmpfloat(total, ==, c->total);
  g_assert_cmpfloat(fabs(total / 1e9 - c->published), <, c->step);
  if (c->warning) g_assert_true(has_warning(warnings, c->warning));
  if (c->shipped) {
    PtsimModel shipped;
    double expected = 0;
    g_assert_true(ptsim_model_load(c->shipped, &shipped, NULL));
    ptsim_plan_model_parameters(&shipped, 4096, &expected, NULL);
    g_assert_cmpfloat(total, ==, expected);
    g_assert_cmpint(m.num_experts, ==, shipped.num_experts);
    g_assert_cmpint(m.moe_router_topk, ==, shipped.moe_router_topk);
    g_assert_cmpint(m.num_query_groups, ==, shipped.num_query_groups);
    g_assert_cmpint(m.mtp_num_layers, ==, shipped.mtp_num_layers);
    g_assert_cmpint(memcmp(m.moe_layers, shipped.moe_layers, sizeof m.moe_layers), ==, 0);
  }
}

/* "hf:PATH" through ptsim_model_load is the same model. */
static void test_model_prefix(void) {
  g_test_summary("--model hf:PATH reads the same config as --hf-config PATH");
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "hf_configs", "llama3-8b",
                                                "config.json", NULL);
  g_autofree char *name = g_strconcat("hf:", path, NULL);
  PtsimModel a, b;
  g_assert_true(ptsim_model_load(name, &a, NULL));
  g_assert_true(ptsim_hf_config_load(path, &b, NULL, NULL));
  g_assert_cmpint(memcmp(&a, &b, sizeof a), ==, 0);
}

static void parse_fails(const char *json, int code, const char *needle) {
  g_autoptr(GError) error = NULL;
  PtsimModel m;
  g_assert_false(ptsim_hf_config_parse(json, strlen(json), "x/config.json", &m, NULL, &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, code);
  g_test_message("%s", error->message);
  g_assert_true(g_str_has_prefix(error->message, "x/config.json: "));
  g_assert_nonnull(strstr(error->message, needle));
}

#define LLAMA_KEYS                                                                \
  "\"hidden_size\": 64, \"intermediate_size\": 128, \"num_attention_heads\": 4, " \
  "\"vocab_size\": 100"

static void test_errors(void) {
  g_test_summary("not JSON, an unknown architecture, a missing or mistyped key: one error "
                 "naming the file and the key");
  parse_fails("{", PTSIM_CONFIG_ERROR_PARSE, "not JSON");
  parse_fails("[1]", PTSIM_CONFIG_ERROR_PARSE, "not a JSON object");
  parse_fails("{\"architectures\": [\"BertModel\"]}", PTSIM_CONFIG_ERROR_INVALID,
              "architectures[0] 'BertModel' is not one ptsim reads");
  parse_fails("{\"model_type\": \"llama\", " LLAMA_KEYS "}", PTSIM_CONFIG_ERROR_PARSE,
              "num_hidden_layers is missing");
  parse_fails("{\"model_type\": \"llama\", \"num_hidden_layers\": \"2\", " LLAMA_KEYS "}",
              PTSIM_CONFIG_ERROR_PARSE, "num_hidden_layers: expected an integer");
  parse_fails("{\"model_type\": \"llama\", \"num_hidden_layers\": 2.5, " LLAMA_KEYS "}",
              PTSIM_CONFIG_ERROR_PARSE, "num_hidden_layers: expected an integer");
  parse_fails(
      "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"num_key_value_heads\": 3, " LLAMA_KEYS
      "}",
      PTSIM_CONFIG_ERROR_INVALID, "");
  parse_fails("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
              PTSIM_CONFIG_ERROR_PARSE, "nested more than 32 deep");
}

static void test_unread_keys(void) {
  g_test_summary("keys ptsim does not know are named in one warning; quiet ones are not");
  const char *json = "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, " LLAMA_KEYS
                     ", \"rope_theta\": 10000, \"my_extension\": 1, \"other\": true}";
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  PtsimModel m;
  g_assert_true(ptsim_hf_config_parse(json, strlen(json), "t.json", &m, warnings, NULL));
  g_assert_cmpuint(warnings->len, ==, 1);
  g_assert_nonnull(strstr(warnings->pdata[0], "my_extension, other"));
  g_assert_null(strstr(warnings->pdata[0], "rope_theta"));
  g_assert_cmpstr(m.name, ==, "t");
  g_assert_cmpint(m.num_query_groups, ==, 4); /* no num_key_value_heads: every head its own */
}

static void load_dir(const char *dir, PtsimModel *m) {
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "hf_configs", dir,
                                                "config.json", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_hf_config_load(path, m, NULL, &error));
  g_assert_no_error(error);
}

static void test_sliding_window(void) {
  g_test_summary("sliding_window counts the keys a query sees, itself included: the window's "
                 "tokens before it are one fewer; layer_types names the windowed layers");
  PtsimModel m;
  load_dir("mistral-7b", &m); /* sliding_window 4096, no layer_types: all 32 layers */
  g_assert_cmpint(m.window_size, ==, 4095);
  g_assert_cmpint(m.window_layers, ==, 32);
  load_dir("gpt-oss-120b", &m); /* 128; layer_types: 18 of 36 "sliding_attention" */
  g_assert_cmpint(m.window_size, ==, 127);
  g_assert_cmpint(m.window_layers, ==, 18);
  /* GptOssAttention.sinks: the learnable softmax; the others vanilla */
  g_assert_cmpint(m.softmax_type, ==, PTSIM_SOFTMAX_LEARNABLE);
  load_dir("qwen2-7b", &m); /* use_sliding_window false */
  g_assert_cmpint(m.softmax_type, ==, PTSIM_SOFTMAX_VANILLA);
  g_assert_cmpint(m.window_size, ==, 0);
  load_dir("mixtral-8x7b", &m); /* sliding_window null */
  g_assert_cmpint(m.window_size, ==, 0);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(counts); i++) {
    g_autofree char *name = g_strdup_printf("/hf-config/total/%s", counts[i].dir);
    g_test_add_data_func(name, &counts[i], check_count);
  }
  g_test_add_func("/hf-config/model-prefix", test_model_prefix);
  g_test_add_func("/hf-config/errors", test_errors);
  g_test_add_func("/hf-config/unread-keys", test_unread_keys);
  g_test_add_func("/hf-config/sliding-window", test_sliding_window);
  return g_test_run();
}
