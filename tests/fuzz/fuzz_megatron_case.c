/* fuzz_megatron_case.c — Megatron-LM's test cases as validate reads them
 * (megatron_case.c, yaml_doc.c): the first byte picks the reader of the
 * rest -- a model_config.yaml, ptsim's record of a case (INI), or a golden
 * values file (JSON through libyaml) summarised by step -- and the case's
 * command line is rebuilt from what was read. */
#include "fuzz_common.h"
#include "megatron_case.h"
#include "yaml_doc.h"

static void use_case(const PtsimMegatronCase *c) {
  g_autofree char *command = ptsim_megatron_case_command(c);
  g_assert_nonnull(command);
  g_assert_cmpuint(c->flags->len, ==, c->values->len);
  g_assert_cmpuint(c->env_keys->len, ==, c->env_values->len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > FUZZ_MAX_INPUT) return 0;
  const char *text = (const char *)data + 1;
  gsize len = size - 1;
  g_autoptr(GError) error = NULL;
  switch (data[0] % 3) {
  case 0: {
    g_autoptr(PtsimMegatronCase)
        c = ptsim_megatron_case_parse_config(text, len, "model_config.yaml", &error);
    g_assert_true((c == NULL) == (error != NULL));
    if (c) use_case(c);
    break;
  }
  case 1: {
    g_autoptr(PtsimMegatronCase)
        c = ptsim_megatron_case_parse_record(text, len, "case.ini", &error);
    g_assert_true((c == NULL) == (error != NULL));
    if (c) use_case(c);
    break;
  }
  default: {
    g_autoptr(PtsimYamlDoc) doc = ptsim_yaml_load_data(text, len, "golden_values.json", &error);
    g_assert_true((doc == NULL) == (error != NULL));
    if (!doc) break;
    PtsimMegatronMeasured m;
    memset(&m, 0, sizeof m);
    ptsim_megatron_golden_summarize(doc, 1 + (int64_t)(len % 100), &m);
    g_assert_cmpint(m.time_steps, >=, 0);
    break;
  }
  }
  return 0;
}
