/* test_shell_constructs.c — the bash that real launch scripts use beyond
 * assignments and if-blocks (sim/io/shell_script.c, shell_command.c,
 * shell_lex.c, shell_arith.c): loops, case, functions, here-documents,
 * redirections, the script's arguments and environment, and the commands
 * wrapped in sbatch --wrap, bash -c, a here-document or a string variable.
 * The fixtures in tests/data/shell_scripts were written for these tests
 * with the constructs of Megatron-LM's example scripts; each expected
 * command is what bash runs (the words a stub `python` prints under bash
 * are the same). */
#include <string.h>

#include <glib.h>

#include "config.h"
#include "shell_script.h"

static PtsimShellScript *run_in(const char *text, const char *const *args, const char *const *env) {
  g_autoptr(GError) error = NULL;
  PtsimShellInputs in = {args, env};
  PtsimShellScript *s = ptsim_shell_script_run_with(text, strlen(text), "t.sh", &in, &error);
  g_assert_no_error(error);
  g_assert_nonnull(s);
  return s;
}

static PtsimShellScript *run_text(const char *text) { return run_in(text, NULL, NULL); }

static PtsimShellScript *run_fixture(const char *name, const char *const *args,
                                     const char *const *env) {
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "shell_scripts", name, NULL);
  g_autofree char *text = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(path, &text, &len, NULL));
  g_autoptr(GError) error = NULL;
  PtsimShellInputs in = {args, env};
  PtsimShellScript *s = ptsim_shell_script_run_with(text, len, name, &in, &error);
  g_assert_no_error(error);
  return s;
}

static char *joined(const PtsimShellScript *s) {
  if (!s->command) return g_strdup("(none)");
  g_autoptr(GString) out = g_string_new(NULL);
  for (guint i = 0; i < s->command->len; i++)
    g_string_append_printf(out, "%s[%s]", i ? " " : "", (const char *)s->command->pdata[i]);
  return g_string_free(g_steal_pointer(&out), FALSE);
}

static void expect_command(const PtsimShellScript *s, const char *want) {
  g_autofree char *got = joined(s);
  g_assert_cmpstr(got, ==, want);
}

static void expect_var(const PtsimShellScript *s, const char *name, const char *want) {
  g_autofree char *got = ptsim_shell_script_var(s, name);
  g_assert_cmpstr(got, ==, want);
}

static gboolean has_note(const PtsimShellScript *s, const char *needle) {
  for (guint i = 0; i < s->notes->len; i++)
    if (strstr(s->notes->pdata[i], needle)) return TRUE;
  return FALSE;
}

static void expect_error(const char *text, const char *needle) {
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimShellScript) s = ptsim_shell_script_run(text, strlen(text), "bad.sh", &error);
  g_assert_null(s);
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE);
  if (!strstr(error->message, needle)) g_error("'%s' lacks '%s'", error->message, needle);
}

static void test_loops(void) {
  g_test_summary("for over words and over \"$@\", C-style for, while and until with break "
                 "and continue: the loop's own 'do' no longer opens a block (issue 24)");
  g_autoptr(PtsimShellScript) s = run_text(
      "for i in 1 2; do echo $i; done\n"
      "L=\"\"; for w in a \"b c\" d; do [[ $w == d ]] && continue; L+=\"<$w>\"; done\n"
      "N=0; while [[ $N -lt 5 ]]; do N=$((N + 1)); if [ $N -eq 3 ]; then break; fi; done\n"
      "U=0; until (( U >= 4 )); do ((U++)); done\n"
      "C=\"\"; for ((i = 0; i < 3; i++)); do for j in x y; do [[ $j == y ]] && continue 2; "
      "C+=$i$j; done; done\n"
      "for a in 1 2; do for b in 1 2; do break 2; done; B=reached; done\n"
      "E=; for x in; do E=ran; done\n"
      "python pretrain_gpt.py --n $N --u $U\n");
  /* for i in 1 2 (the issue's example); "b c" one word; continue skips d */
  expect_var(s, "L", "<a><b c>");
  expect_var(s, "N", "3");
  expect_var(s, "U", "4");
  expect_var(s, "C", "0x1x2x"); /* continue 2 skips y and goes on with the next i */
  g_autofree char *b = ptsim_shell_script_var(s, "B");
  g_assert_null(b); /* break 2 leaves both loops */
  expect_var(s, "E", "");
  expect_command(s, "[python] [pretrain_gpt.py] [--n] [3] [--u] [4]");
  /* a loop ptsim cannot see the end of is stopped, with a note, and the
   * script goes on */
  g_autoptr(PtsimShellScript) t = run_text("while true; do sleep 60; done\npython x.py --a 1\n");
  expect_command(t, "[python] [x.py] [--a] [1]");
  g_assert_true(has_note(t, "t.sh:1: the loop was stopped after 10000 iterations"));
}

static void test_case(void) {
  g_test_summary("case: patterns with * ? [...] and |, quoted patterns literal, the first "
                 "match only, the last item without ';;'");
  g_autoptr(PtsimShellScript) s = run_text("for w in --tp=4 -h x7 '*' other; do\n"
                                           "  case \"$w\" in\n"
                                           "    --tp=*) TP=${w#*=} ;;\n"
                                           "    -h|--help) H=help ;;\n"
                                           "    x[0-9]) X=digit ;;\n"
                                           "    \"*\") STAR=literal ;;\n"
                                           "    *) REST+=$w\n"
                                           "  esac\n"
                                           "done\n"
                                           "case a in (a) A=1 ;; a) A=2 ;; esac\n");
  expect_var(s, "TP", "4");
  expect_var(s, "H", "help");
  expect_var(s, "X", "digit");
  expect_var(s, "STAR", "literal");
  expect_var(s, "REST", "other");
  expect_var(s, "A", "1");
}

static void test_functions(void) {
  g_test_summary("functions: both spellings, their own $1.. and $#, local, return and its "
                 "status, a function calling another, unset -f");
  g_autoptr(PtsimShellScript) s = run_text("count() { N=$#; return 3; }\n"
                                           "function twice { local v=$1; R=\"$v$v\"; }\n"
                                           "outer() { twice \"$2\"; }\n"
                                           "count a 'b c' d; S=$?\n"
                                           "outer x yz\n"
                                           "f() { G=in; }; unset -f f; f\n"
                                           "python train.py --first $1 --count $N\n");
  expect_var(s, "N", "3");
  expect_var(s, "S", "3");
  expect_var(s, "R", "yzyz");
  g_autofree char *g = ptsim_shell_script_var(s, "G");
  g_assert_null(g);
  expect_command(s, "[python] [train.py] [--first] [--count] [3]"); /* the script's $1: unset */
}

static void test_parameters(void) {
  g_test_summary("the script's arguments and environment: $0 $1 ${10} $# $@ \"$@\" $* "
                 "${@:2}, shift, set --; --env entries as variables the script may override");
  static const char *const args[] = {"a", "b c", "d", "e", "f", "g", "h", "i", "j", "ten", NULL};
  static const char *const env[] = {"NNODES=4", "GPUS=8", "GPUS=2", NULL};
  g_autoptr(PtsimShellScript) s = run_in("A0=$0; N=$#; TEN=${10}; ALL=\"$*\"; TWO=(\"${@:2:2}\")\n"
                                         "Q=(\"$@\"); U=($@)\n"
                                         "shift 2; AFTER=$1\n"
                                         "set -- x y; SET=$#$1\n"
                                         "NODES=${NNODES:-1}; G=$GPUS\n",
                                         args, env);
  expect_var(s, "A0", "t.sh");
  expect_var(s, "N", "10");
  expect_var(s, "TEN", "ten");
  expect_var(s, "ALL", "a b c d e f g h i j ten");
  expect_var(s, "TWO", "b c d"); /* two elements: "b c" and "d" */
  g_assert_cmpuint(((GPtrArray *)g_hash_table_lookup(s->vars, "TWO"))->len, ==, 2);
  g_assert_cmpuint(((GPtrArray *)g_hash_table_lookup(s->vars, "Q"))->len, ==, 10);
  g_assert_cmpuint(((GPtrArray *)g_hash_table_lookup(s->vars, "U"))->len, ==, 11);
  expect_var(s, "AFTER", "d");
  expect_var(s, "SET", "2x");
  expect_var(s, "NODES", "4");
  expect_var(s, "G", "2"); /* the later entry wins */
  /* "$@" of no arguments is no word at all, "" is one */
  g_autoptr(PtsimShellScript) t = run_text("python x.py --a \"$@\" \"\" --b\n");
  expect_command(t, "[python] [x.py] [--a] [] [--b]");
  /* an environment entry that is no NAME=VALUE */
  static const char *const bad[] = {"1X=2", NULL};
  g_autoptr(GError) error = NULL;
  PtsimShellInputs in = {NULL, bad};
  g_assert_null(ptsim_shell_script_run_with("A=1\n", 4, "t.sh", &in, &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID);
}

static void test_operators(void) {
  g_test_summary("${...} operators: # ## % %% / // :offset:length ^^ ,, ${#A[@]} ${!N} "
                 "NAME[i]=; arithmetic with C's operators");
  g_autoptr(PtsimShellScript)
      s = run_text("P=/a/b/c.tar.gz; A=${P#*/}; B=${P##*/}; C=${P%.*}; D=${P%%.*}\n"
                   "E=${P/b/X}; F=${P//\\//_}; G=${P:1:3}; H=${P: -2}; I=${P^^}; J=${I,,}\n"
                   "ARR=(x y z); K=${#ARR[@]}; ARR[4]=w; L=${#ARR[@]}; M=${ARR[-1]}\n"
                   "REF=P; O=${!REF}\n"
                   "V=$(( 7 > 3 && 2 == 2 ? 10 ** 2 : -1 )); W=$(( V %= 7, V << 2 )); Z=$((--5))\n"
                   "Y=$(( 0x10 + $((3)) ))\n");
  expect_var(s, "A", "a/b/c.tar.gz");
  expect_var(s, "B", "c.tar.gz");
  expect_var(s, "C", "/a/b/c.tar");
  expect_var(s, "D", "/a/b/c");
  expect_var(s, "E", "/a/X/c.tar.gz");
  expect_var(s, "F", "_a_b_c.tar.gz");
  expect_var(s, "G", "a/b");
  expect_var(s, "H", "gz");
  expect_var(s, "I", "/A/B/C.TAR.GZ");
  expect_var(s, "J", "/a/b/c.tar.gz");
  expect_var(s, "K", "3");
  expect_var(s, "L", "5"); /* ptsim keeps the gap as an empty element */
  expect_var(s, "M", "w");
  expect_var(s, "O", "/a/b/c.tar.gz");
  expect_var(s, "V", "2"); /* 100 % 7 */
  expect_var(s, "W", "8");
  expect_var(s, "Z", "5"); /* two minus signs, as bash reads them */
  expect_var(s, "Y", "19");
}

static void test_heredocs(void) {
  g_test_summary("here-documents: expanded unless the delimiter is quoted, <<- strips tabs, "
                 "the body read after the line that names it; here-strings; redirections "
                 "with file descriptors are no words");
  g_autoptr(PtsimShellScript)
      s = run_text("N=3\n"
                   "cat > a.txt <<EOF; A=after\n"
                   "n=$N \\$N\n"
                   "EOF\n"
                   "cat > b.sh <<'EOF'\n"
                   "B=$N\n"
                   "EOF\n"
                   "cat > c.sh <<-END\n"
                   "\t\tC=$N\n"
                   "\tEND\n"
                   "source b.sh; . c.sh\n"
                   "read X <<< \"word\"\n"
                   "python x.py --a 1 2>&1 >/dev/null </dev/null | tee log.txt\n");
  expect_var(s, "A", "after");
  expect_var(s, "B", "3"); /* written literally, expanded when sourced */
  expect_var(s, "C", "3");
  expect_var(s, "X", ""); /* read reads nothing */
  expect_command(s, "[python] [x.py] [--a] [1]");
}

static void test_args_loop(void) {
  g_test_summary("an options loop as examples/gptoss/02_train.sh has, fed by --script-args: "
                 "while/case/shift, ${1#*=}, -- and the rest, file tests, quoted flag strings");
  g_autoptr(PtsimShellScript) none = run_fixture("args_loop.sh", NULL, NULL);
  expect_command(none,
                 "[python] [-m] [torch.distributed.run] [--nproc_per_node] [4] [--nnodes] [1] "
                 "[pretrain_gpt.py] [--num-layers] [4] [--hidden-size] [256] "
                 "[--num-attention-heads] [4] [--seq-length] [1024] [--max-position-embeddings] "
                 "[1024] [--micro-batch-size] [1] [--bf16] [--mock-data] [--tokenizer-type] "
                 "[NullTokenizer] [--vocab-size] [32000] [--tensor-model-parallel-size] [2] "
                 "[--pipeline-model-parallel-size] [2]");
  static const char *const args[] = {"--ckpt",
                                     "/x",
                                     "-t",
                                     "meta-llama/Llama-3.1-8B",
                                     "--layers=8",
                                     "--",
                                     "--recompute-activations",
                                     "--seed 7",
                                     NULL};
  static const char *const env[] = {"GPUS_PER_NODE=8", NULL};
  g_autoptr(PtsimShellScript) s = run_fixture("args_loop.sh", args, env);
  expect_command(s, "[python] [-m] [torch.distributed.run] [--nproc_per_node] [8] [--nnodes] [1] "
                    "[pretrain_gpt.py] [--num-layers] [8] [--hidden-size] [256] "
                    "[--num-attention-heads] [4] [--seq-length] [1024] "
                    "[--max-position-embeddings] [1024] [--micro-batch-size] [1] [--bf16] "
                    "[--tokenizer-type] [HuggingFaceTokenizer] [--tokenizer-model] "
                    "[meta-llama/Llama-3.1-8B] [--tensor-model-parallel-size] [2] "
                    "[--pipeline-model-parallel-size] [4] [--recompute-activations] [--seed 7]");
  /* an option the script refuses: it exits 1, and the note says where */
  static const char *const bad[] = {"--bogus", NULL};
  g_autoptr(PtsimShellScript) t = run_fixture("args_loop.sh", bad, NULL);
  g_assert_null(t->command);
  g_assert_true(has_note(t, "args_loop.sh:38: the script exits here with status 1"));
}

static void test_positional(void) {
  g_test_summary("$1 $2 $3 and ${SLURM_NNODES:-\"1\"} as examples/mixtral/"
                 "train_mixtral_8x7b_distributed.sh reads them, from --script-args and --env");
  static const char *const args[] = {"/ckpt", "/tok/tokenizer.model", "/data", NULL};
  static const char *const env[] = {"SLURM_NNODES=4", NULL};
  g_autoptr(PtsimShellScript) s = run_fixture("positional.sh", args, env);
  expect_command(s, "[torchrun] [--nproc_per_node] [8] [--nnodes] [4] [pretrain_gpt.py] "
                    "[--num-layers] [8] [--hidden-size] [1024] [--num-attention-heads] [8] "
                    "[--seq-length] [2048] [--max-position-embeddings] [2048] [--swiglu] "
                    "[--normalization] [RMSNorm] [--tokenizer-type] [HuggingFaceTokenizer] "
                    "[--tokenizer-model] [/tok/tokenizer.model] [--data-path] [/data] "
                    "[--micro-batch-size] [1] [--global-batch-size] [64] [--bf16] [--save] "
                    "[/ckpt]");
  expect_var(s, "WORLD_SIZE", "32");
}

static void test_sbatch_heredoc(void) {
  g_test_summary("a command in a string, run by bash -c under srun inside an sbatch "
                 "here-document (examples/megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh's shape): "
                 "found with srun's words in front, the #SBATCH lines of the body kept");
  g_autoptr(PtsimShellScript) s = run_fixture("sbatch_heredoc.sh", NULL, NULL);
  expect_command(s, "[sbatch] [srun] [--mpi=pmix] [-l] [--container-workdir=/opt/megatron] "
                    "[python] [/opt/megatron/pretrain_gpt.py] [--tensor-model-parallel-size] "
                    "[2] [--num-layers] [4] [--hidden-size] [512] [--num-attention-heads] [8] "
                    "[--seq-length] [1024] [--max-position-embeddings] [1024] "
                    "[--micro-batch-size] [1] [--global-batch-size] [32] [--moe-layer-freq] "
                    "[[0]*1+[1]*3] [--bf16]");
  g_assert_cmpuint(s->sbatch->len, ==, 3);
  g_assert_cmpstr(s->sbatch->pdata[1], ==, "--nodes=2");
  /* the environment switches the branches */
  static const char *const env[] = {"USE_FSDP=1", "PROFILE=1", "TP=4", NULL};
  g_autoptr(PtsimShellScript) t = run_fixture("sbatch_heredoc.sh", NULL, env);
  g_autofree char *got = joined(t);
  g_assert_nonnull(strstr(got, "[--container-workdir=/opt/megatron] [nsys] [profile] [-o] "
                               "[/tmp/out/nsys] [python]"));
  g_assert_nonnull(strstr(got, "[--tensor-model-parallel-size] [4]"));
  g_assert_true(g_str_has_suffix(got, "[--bf16] [--use-megatron-fsdp]"));
}

static void test_wrappers(void) {
  g_test_summary("sbatch --wrap, sbatch FILE of a file the script wrote, bash -c with its $0 "
                 "and $1, eval, and a command kept in a string variable");
  g_autoptr(PtsimShellScript) f = run_fixture("functions.sh", NULL, NULL);
  expect_command(f, "[sbatch] [--job-name=ptsim] [srun] [python] [pretrain_gpt.py] "
                    "[--num-layers] [8] [--hidden-size] [512] [--num-attention-heads] [8] "
                    "[--seq-length] [1024] [--micro-batch-size] [4] "
                    "[--max-position-embeddings] [1024] [--bf16]");
  g_assert_cmpuint(f->sbatch->len, ==, 2); /* the job file's own #SBATCH lines */
  g_assert_cmpstr(f->sbatch->pdata[0], ==, "--nodes=4");
  g_autoptr(PtsimShellScript) w = run_text(
      "sbatch -N 2 --ntasks-per-node=8 -J x --wrap \"srun python pretrain_gpt.py --a 1\"\n");
  expect_command(w, "[sbatch] [-N] [2] [--ntasks-per-node=8] [-J] [x] [srun] [python] "
                    "[pretrain_gpt.py] [--a] [1]");
  g_autoptr(PtsimShellScript)
      c = run_text("srun -N 2 bash -e -c 'python train.py --name $0 --v \"$1\"' me 'one two'\n");
  expect_command(c, "[srun] [-N] [2] [python] [train.py] [--name] [me] [--v] [one two]");
  g_autoptr(PtsimShellScript) e = run_text("CMD=\"torchrun x.py --a 1\"\neval \"$CMD --b 2\"\n");
  expect_command(e, "[torchrun] [x.py] [--a] [1] [--b] [2]");
  g_autoptr(PtsimShellScript) v = run_fixture("string_command.sh", NULL, NULL);
  expect_command(v, "[torchrun] [--nproc_per_node] [8] [--nnodes] [2] [pretrain_gpt.py] "
                    "[--num-layers] [4] [--hidden-size] [512] [--num-attention-heads] [8] "
                    "[--seq-length] [1024] [--max-position-embeddings] [1024] "
                    "[--micro-batch-size] [1] [--bf16]");
  g_assert_true(has_note(v, "no command runs the training; the one the variable CMD holds"));
}

static void test_unreadable(void) {
  g_test_summary("what still cannot be read names the file:line and the construct");
  expect_error("for i in 1 2\necho $i\n", "bad.sh:1: 'for' without 'do'");
  expect_error("for i in 1 2; do echo $i\n", "bad.sh:1: 'do' without 'done'");
  expect_error("while true; do :\n", "bad.sh:1: 'do' without 'done'");
  expect_error("case x in\n a) A=1 ;;\n", "bad.sh:1: 'case' without 'esac'");
  expect_error("case x in\n a) A=1 ;&\n esac\n", "bad.sh:2: ';&' (fall through");
  expect_error("case x\n a) ;; esac\n", "'case' without 'in'");
  expect_error("X=${A@Q}\n", "bad.sh:1: ${A@Q}: an expansion ptsim does not understand");
  expect_error("f() { A=1\n", "bad.sh:1: '{' without '}'");
  expect_error("( A=1\n", "bad.sh:1: '(' without ')'");
  expect_error("done\n", "bad.sh:1: 'done' without its opening keyword");
  expect_error("X=<PATH_TO_DATA>\n", "a redirection ('<' or '>') without its file");
  expect_error("X=$(( a = ))\n", "not an integer expression");
  expect_error("bash -c 'if true; then A=1'\n", "bad.sh:1: 'if' without 'fi'");
}

static void test_bounds(void) {
  g_test_summary("loops and calls stay bounded: a loop in a loop runs a million iterations "
                 "in all at most, recursion 64 calls deep, eval of eval too");
  expect_error("for ((i=0;;i++)); do for ((j=0;;j++)); do :; done; done\n",
               "loops ran more than 1000000 times in all");
  expect_error("f() { f; }\nf\n", "function calls nested more than 64 deep");
  expect_error("E='eval \"$E\"'\neval \"$E\"\n", "nested more than 64 deep");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/shell_constructs/loops", test_loops);
  g_test_add_func("/shell_constructs/case", test_case);
  g_test_add_func("/shell_constructs/functions", test_functions);
  g_test_add_func("/shell_constructs/parameters", test_parameters);
  g_test_add_func("/shell_constructs/operators", test_operators);
  g_test_add_func("/shell_constructs/heredocs", test_heredocs);
  g_test_add_func("/shell_constructs/args-loop", test_args_loop);
  g_test_add_func("/shell_constructs/positional", test_positional);
  g_test_add_func("/shell_constructs/sbatch-heredoc", test_sbatch_heredoc);
  g_test_add_func("/shell_constructs/wrappers", test_wrappers);
  g_test_add_func("/shell_constructs/unreadable", test_unreadable);
  g_test_add_func("/shell_constructs/bounds", test_bounds);
  return g_test_run();
}
