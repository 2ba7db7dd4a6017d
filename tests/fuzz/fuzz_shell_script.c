/* fuzz_shell_script.c — the symbolic run of a launch script
 * (sim/io/shell_script.c, shell_words.c): lexing, quoting, expansions,
 * arithmetic, conditions, arrays.  A script is a few KiB of text, but what
 * it expands to must stay bounded too: a run that doubles a variable on
 * every line, nests ${...} or $(( )) deeply, or chains thousands of
 * conditions has to end quickly with an error, never hang or blow the
 * stack.  Half the inputs run with arguments and an environment (the
 * loops over "$@", shift, ${1:-...}).  Then the accessors, which the
 * launcher and megatron_args.c call. */
#include "fuzz_common.h"
#include "shell_script.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  g_autoptr(GError) error = NULL;
  static const char *const args[] = {"--layers=4", "--", "-x", "two words", NULL};
  static const char *const env[] = {"TP=2", "NNODES=2", "A=", NULL};
  PtsimShellInputs inputs = {args, env};
  g_autoptr(PtsimShellScript) s = ptsim_shell_script_run_with((const char *)data, size, "fuzz.sh",
                                                              size % 2 ? &inputs : NULL, &error);
  if (!s) {
    g_assert_nonnull(error);
    return 0;
  }
  g_assert_true((s->command != NULL) == (s->command_line > 0));
  for (guint i = 0; s->command && i < s->command->len; i++) g_assert_nonnull(s->command->pdata[i]);
  static const char *const names[] = {"WORLD_SIZE", "GPUS_PER_NODE", "NNODES", "A"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) g_free(ptsim_shell_script_var(s, names[i]));
  return 0;
}
