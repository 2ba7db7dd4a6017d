/* test_megatron_vocab.c — sim/io/megatron_vocab.c: a HuggingFaceTokenizer's
 * vocabulary is known from the --tokenizer-model name for the common model
 * families (the sizes and their sources in megatron_vocab.h), the more
 * specific name winning, and --vocab-size still decides for a name ptsim
 * does not know. */
#include <string.h>

#include <glib.h>

#include "config.h"
#include "megatron_vocab.h"

static int64_t vocab_of(const char *model) {
  int64_t vocab = 0;
  g_autofree char *how = NULL;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_megatron_vocab("HuggingFaceTokenizer", model, 0, &vocab, &how, &error));
  g_assert_no_error(error);
  g_assert_nonnull(strstr(how, model)); /* the message names what was read */
  return vocab;
}

static void test_named_tokenizers(void) {
  g_test_summary("HuggingFaceTokenizer sizes by --tokenizer-model name, per family");
  /* Llama 3: 128000 BPE tokens + 256 reserved specials */
  g_assert_cmpint(vocab_of("meta-llama/Meta-Llama-3-8B"), ==, 128000 + 256);
  g_assert_cmpint(vocab_of("/models/Llama-3.1-70B-Instruct"), ==, 128256);
  g_assert_cmpint(vocab_of("meta-llama/Llama-2-7b-hf"), ==, 32000);
  /* Mistral 7B v0.1 and Mixtral 8x7B 32000; v0.3 and 8x22B extended to 32768 */
  g_assert_cmpint(vocab_of("mistralai/Mistral-7B-v0.1"), ==, 32000);
  g_assert_cmpint(vocab_of("mistralai/Mixtral-8x7B-v0.1"), ==, 32000);
  g_assert_cmpint(vocab_of("mistralai/Mistral-7B-v0.3"), ==, 32768);
  g_assert_cmpint(vocab_of("mistralai/Mixtral-8x22B-v0.1"), ==, 32768);
  g_assert_cmpint(vocab_of("mistralai/Mistral-Nemo-Base-2407"), ==, 131072); /* 2^17, Tekken */
  /* Qwen: 151643 BPE + 3 specials; Qwen2.5 + 19 more; Qwen3 + 4 more */
  g_assert_cmpint(vocab_of("Qwen/Qwen2-7B"), ==, 151643 + 3);
  g_assert_cmpint(vocab_of("Qwen/Qwen2.5-72B"), ==, 151646 + 19);
  g_assert_cmpint(vocab_of("Qwen/Qwen3-30B-A3B"), ==, 151665 + 4);
  /* DeepSeek LLM / MoE: 100000 BPE + 15 specials; V2 and V3 their embedding rows */
  g_assert_cmpint(vocab_of("deepseek-ai/deepseek-moe-16b-base"), ==, 100000 + 15);
  g_assert_cmpint(vocab_of("deepseek-ai/DeepSeek-V2-Lite"), ==, 102400);
  g_assert_cmpint(vocab_of("deepseek-ai/DeepSeek-V3"), ==, 129280);
  g_assert_cmpint(vocab_of("openai/gpt-oss-120b"), ==, 201088);
  g_assert_cmpint(vocab_of("openai-community/gpt2"), ==, 50257);
}

static void test_unknown_name(void) {
  g_test_summary("an unknown tokenizer name needs --vocab-size; given, it decides");
  int64_t vocab = 0;
  g_autofree char *how = NULL;
  g_autoptr(GError) error = NULL;
  g_assert_false(
      ptsim_megatron_vocab("HuggingFaceTokenizer", "my-org/own-tok", 0, &vocab, &how, &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE);
  g_assert_nonnull(strstr(error->message, "my-org/own-tok"));
  g_assert_true(
      ptsim_megatron_vocab("HuggingFaceTokenizer", "my-org/own-tok", 1000, &vocab, &how, NULL));
  g_assert_cmpint(vocab, ==, 1000);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/megatron-vocab/named", test_named_tokenizers);
  g_test_add_func("/megatron-vocab/unknown", test_unknown_name);
  return g_test_run();
}
