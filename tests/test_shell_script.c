/* test_shell_script.c — sim/io/shell_script.c: Megatron-LM's own example
 * launch scripts (copies in tests/data/megatron_scripts, see its README)
 * give the command bash would run, word for word; quoting, arrays, defaults,
 * arithmetic and conditions follow bash; malformed scripts are one error. */
#include <string.h>

#include <glib.h>

#include "config.h"
#include "shell_script.h"

static PtsimShellScript *run_text(const char *text) {
  g_autoptr(GError) error = NULL;
  PtsimShellScript *s = ptsim_shell_script_run(text, strlen(text), "t.sh", &error);
  g_assert_no_error(error);
  g_assert_nonnull(s);
  return s;
}

static PtsimShellScript *run_file(const char *name) {
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "megatron_scripts", name,
                                                NULL);
  g_autofree char *text = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(path, &text, &len, NULL));
  g_autoptr(GError) error = NULL;
  PtsimShellScript *s = ptsim_shell_script_run(text, len, name, &error);
  g_assert_no_error(error);
  return s;
}

static char *joined(const PtsimShellScript *s) {
  g_assert_nonnull(s->command);
  g_autoptr(GString) out = g_string_new(NULL);
  for (guint i = 0; i < s->command->len; i++)
    g_string_append_printf(out, "%s[%s]", i ? " " : "", (const char *)s->command->pdata[i]);
  return g_string_free(g_steal_pointer(&out), FALSE);
}

static gboolean has_word_pair(const PtsimShellScript *s, const char *a, const char *b) {
  for (guint i = 0; i + 1 < s->command->len; i++)
    if (strcmp(s->command->pdata[i], a) == 0 && strcmp(s->command->pdata[i + 1], b) == 0)
      return TRUE;
  return FALSE;
}

static void test_quoting(void) {
  g_test_summary("quotes, escapes, continuations and word splitting as bash does them");
  g_autoptr(PtsimShellScript)
      s = run_text("A='x y'\nB=\"$A z\"\nC=(one \"two three\" $A)\n"
                   "python pretrain_gpt.py --a $A --b \"$A\" --c ${C[@]} --d \"${C[@]}\" \\\n"
                   "  --e \"${C[*]}\" --f ${#A} --g 'it''s' --h a\\ b # comment\n");
  g_autofree char *got = joined(s);
  g_assert_cmpstr(got, ==,
                  "[python] [pretrain_gpt.py] [--a] [x] [y] [--b] [x y] [--c] [one] [two] [three] "
                  "[x] [y] [--d] [one] [two three] [x] [y] [--e] [one two three x y] [--f] [3] "
                  "[--g] [its] [--h] [a b]");
  g_assert_cmpint(s->command_line, ==, 4);
}

static void test_expansions(void) {
  g_test_summary("defaults, positional parameters, arithmetic, += and conditions");
  g_autoptr(PtsimShellScript) s = run_text(
      "X=${1:-\"dflt\"}\nY=${UNSET-other}\nN=4\nM=$(( (N + 2) * 3 / 2 ))\n"
      "L=(--a)\nL+=(--b \"--c d\")\nS=ab\nS+=cd\nE=\n"
      "if [[ \"$N\" == \"4\" ]] && [ -z \"$E\" ]; then K=yes; elif true; then K=no; else K=never; fi\n"
      "if [[ $N -gt 7 ]]; then J=big; else J=small; fi\n"
      "if [ ! -f \"/nonexistent\" ]; then echo no; exit 1; fi\n"
      "train.py $X $Y $M ${L[@]} $S $K $J\n");
  g_autofree char *got = joined(s);
  g_assert_cmpstr(got, ==,
                  "[train.py] [dflt] [other] [9] [--a] [--b] [--c] [d] [abcd] [yes] [small]");
  g_assert_cmpuint(s->notes->len, ==, 1); /* the file test was not evaluated */
}

static void test_llama3_8b_fp8(void) {
  g_test_summary(
      "examples/llama/train_llama3_8b_h100_fp8.sh: the torchrun command with its arrays");
  g_autoptr(PtsimShellScript) s = run_file("train_llama3_8b_h100_fp8.sh");
  g_assert_cmpstr(s->command->pdata[0], ==, "torchrun");
  g_assert_true(has_word_pair(s, "--nproc_per_node", "8"));
  g_assert_true(has_word_pair(s, "--nnodes", "1"));
  g_assert_true(has_word_pair(s, "--num-layers", "32"));
  g_assert_true(has_word_pair(s, "--fp8-format", "hybrid")); /* "--fp8-format hybrid" split */
  g_assert_true(has_word_pair(s, "--tokenizer-type", "NullTokenizer")); /* MOCK branch */
  g_assert_true(has_word_pair(s, "--split", "'99,1,0'"));               /* no quote removal */
  g_assert_true(has_word_pair(s, "--use-distributed-optimizer", "--overlap-grad-reduce"));
  /* the commented-out array element is not there */
  for (guint i = 0; i < s->command->len; i++)
    g_assert_cmpstr(s->command->pdata[i], !=, "--pipeline-model-parallel-size");
  g_autofree char *world = ptsim_shell_script_var(s, "WORLD_SIZE");
  g_assert_cmpstr(world, ==, "8");
}

static void test_gpt3_175b(void) {
  g_test_summary("examples/gpt3/train_gpt3_175b_distributed.sh: comments inside arrays, tabs, "
                 "unset positional parameters, unquoted array expansion splitting elements");
  g_autoptr(PtsimShellScript) s = run_file("train_gpt3_175b_distributed.sh");
  g_assert_true(has_word_pair(s, "--attention-backend", "auto"));
  g_assert_true(has_word_pair(s, "--tensor-model-parallel-size", "8"));
  /* the quoted array element is split again by the unquoted ${A[@]}, as
   * bash does */
  g_assert_true(has_word_pair(s, "--step-batch-size-schedule", "0:16"));
  g_assert_true(has_word_pair(s, "0:16", "2.4B:320"));
  /* $DATA_PATH is empty: --data-path is followed by the next flag */
  g_assert_true(has_word_pair(s, "--data-path", "--vocab-file"));
}

static void test_sbatch(void) {
  g_test_summary("#SBATCH directives are kept, other comments dropped");
  g_autoptr(PtsimShellScript) s = run_text("#!/bin/bash\n#SBATCH --nodes=2 --ntasks-per-node=8\n"
                                           "# SBATCH not this\nsrun python train.py --x 1\n");
  g_assert_cmpuint(s->sbatch->len, ==, 2);
  g_assert_cmpstr(s->sbatch->pdata[1], ==, "--ntasks-per-node=8");
}

static void expect_error(const char *text, const char *needle) {
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimShellScript) s = ptsim_shell_script_run(text, strlen(text), "bad.sh", &error);
  g_assert_null(s);
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE);
  if (!strstr(error->message, needle)) g_error("'%s' lacks '%s'", error->message, needle);
  g_assert_null(strchr(error->message, '\n'));
}

static void test_errors(void) {
  g_test_summary("malformed scripts: one line naming file:line");
  expect_error("A='x\n", "bad.sh:1: unterminated single quote");
  expect_error("A=(--x\n--y\n", "bad.sh:1: the array A=( has no closing )");
  expect_error("B=${A\n", "unterminated ${");
  expect_error("if true; then A=1\n", "'if' without");
  expect_error("fi\n", "'fi' without its opening keyword");
  expect_error("torchrun pretrain_gpt.py \\\n  --num-layers 2 \\\n  # layout\n  --tp 2\n",
               "bad.sh:4: a command starting with '--tp' follows the training command of line 1");
  g_autofree char *big = g_strnfill(PTSIM_SHELL_SCRIPT_MAX_BYTES + 1, ' ');
  expect_error(big, "more than a launch script");
  expect_error("X=$(( 2 ** ))\n", "not an integer expression");
}

/* TIMES copies of PIECE.  (transfer full) */
static char *repeat(const char *piece, int times) {
  GString *out = g_string_new(NULL);
  for (int i = 0; i < times; i++) g_string_append(out, piece);
  return g_string_free(out, FALSE);
}

static void test_bounds(void) {
  g_test_summary("what a script expands to and how deep it nests are bounded: each of these "
                 "exhausted memory or the stack, or took seconds, before (fuzz_shell_script)");
  /* 2^40 bytes in 40 lines */
  g_autofree char *doubling = repeat("A=$A$A\n", 40);
  g_autofree char *doubling_script = g_strconcat("A=x\n", doubling, NULL);
  expect_error(doubling_script, "expansions pass 16 MiB in all");
  /* appending to an array copies it: quadratic */
  g_autofree char *appends = repeat("A+=(yy)\n", 20000);
  expect_error(appends, "expansions pass 16 MiB in all");
  /* nesting */
  g_autofree char *open = repeat("(", 100), *close = repeat(")", 100);
  g_autofree char *parens = g_strconcat("X=$((", open, "1", close, "))\n", NULL);
  expect_error(parens, "nested too deep");
  g_autofree char *signs = repeat("-", 100);
  g_autofree char *unary = g_strconcat("X=$((", signs, "1))\n", NULL);
  expect_error(unary, "nested too deep");
  g_autofree char *defaults_open = repeat("${B:-", 100), *defaults_close = repeat("}", 100);
  g_autofree char *defaults = g_strconcat("X=", defaults_open, "x", defaults_close, "\n", NULL);
  expect_error(defaults, "bad.sh:1: ${...} or $((...)) nested more than 64 deep");
  g_autofree char *ifs = repeat("if true; then\n", 100), *fis = repeat("fi\n", 100);
  g_autofree char *nested_ifs = g_strconcat(ifs, fis, NULL);
  expect_error(nested_ifs, "bad.sh:65: if nested more than 64 deep");
  /* 64 deep is fine */
  g_autofree char *ifs64 = repeat("if true; then\n", 64), *fis64 = repeat("fi\n", 64);
  g_autofree char *ok_ifs = g_strconcat(ifs64, "K=in\n", fis64, NULL);
  g_autoptr(PtsimShellScript) deep = run_text(ok_ifs);
  g_autofree char *k = ptsim_shell_script_var(deep, "K");
  g_assert_cmpstr(k, ==, "in");
  /* arithmetic bash would wrap is refused */
  expect_error("X=$((8 * 9223372036854775807))\n", "overflows 64-bit integers");
  expect_error("X=$((99999999999999999999))\n", "overflows 64-bit integers");
  expect_error("X=$((-9223372036854775807 - 2))\n", "overflows 64-bit integers");
  expect_error("X=$((1 / 0))\n", "division by zero");
}

static void test_conditions(void) {
  g_test_summary("conditions: '!' binds to its primary, && before ||, long chains in one pass");
  g_autoptr(PtsimShellScript) s = run_text("if [ ! a = b -a ! x ]; then A=no; else A=yes; fi\n"
                                           "if [[ a == b || a == a && ! -z a ]]; then B=yes; fi\n"
                                           "if [ ! -z x -o -f /nonexistent ]; then C=yes; fi\n");
  g_autofree char *a = ptsim_shell_script_var(s, "A");
  g_autofree char *b = ptsim_shell_script_var(s, "B");
  g_autofree char *c = ptsim_shell_script_var(s, "C");
  g_assert_cmpstr(a, ==, "yes");
  g_assert_cmpstr(b, ==, "yes");
  g_assert_cmpstr(c, ==, "yes"); /* the file test is never reached */
  g_assert_cmpuint(s->notes->len, ==, 0);
  /* thousands of '!' and && (a stack overflow and seconds of rescanning
   * before) */
  g_autofree char *nots = repeat("! ", 30000);
  g_autofree char *ands = repeat("a && ", 20000);
  g_autofree char *chains = g_strconcat("if [ ", nots, "x ]; then N=even; fi\nif [[ ", ands,
                                        "a ]]; then M=all; fi\n", NULL);
  g_autoptr(PtsimShellScript) t = run_text(chains);
  g_autofree char *n = ptsim_shell_script_var(t, "N");
  g_autofree char *m = ptsim_shell_script_var(t, "M");
  g_assert_cmpstr(n, ==, "even");
  g_assert_cmpstr(m, ==, "all");
}

static void test_length(void) {
  g_test_summary("LEN bytes of TEXT are the script, whatever follows them; a word of 100k "
                 "characters is one word");
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimShellScript) s = ptsim_shell_script_run("A=1 #xyz\nA=2\n", 5, "t.sh", &error);
  g_assert_no_error(error);
  g_autofree char *a = ptsim_shell_script_var(s, "A");
  g_assert_cmpstr(a, ==, "1");
  g_autofree char *word = g_strnfill(100000, 'w');
  g_autofree char *text = g_strconcat("python pretrain_gpt.py --x ", word, "\n", NULL);
  g_autoptr(PtsimShellScript) t = run_text(text);
  g_assert_cmpuint(t->command->len, ==, 4);
  g_assert_cmpuint(strlen(t->command->pdata[3]), ==, 100000);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/shell_script/quoting", test_quoting);
  g_test_add_func("/shell_script/expansions", test_expansions);
  g_test_add_func("/shell_script/llama3-8b-fp8", test_llama3_8b_fp8);
  g_test_add_func("/shell_script/gpt3-175b", test_gpt3_175b);
  g_test_add_func("/shell_script/sbatch", test_sbatch);
  g_test_add_func("/shell_script/errors", test_errors);
  g_test_add_func("/shell_script/bounds", test_bounds);
  g_test_add_func("/shell_script/conditions", test_conditions);
  g_test_add_func("/shell_script/length", test_length);
  return g_test_run();
}
