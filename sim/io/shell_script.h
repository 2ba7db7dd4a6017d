/* shell_script.h — the part of bash that Megatron-LM's launch scripts use,
 * enough to find the training command they run and the words it gets.
 *
 * Shell module (GLib).  A launch script such as Megatron-LM's
 * examples/llama/train_llama3_8b_h100_fp8.sh sets variables and arrays,
 * appends to them under if-blocks, and ends in
 *     torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py ${MODEL_ARGS[@]} ...
 * This module runs such a script symbolically: nothing is executed, no
 * environment is read, no file is touched.
 *
 * Understood: comments (and "#SBATCH" directives, kept), quotes ('...',
 * "..." with expansions), backslash escapes and line continuations,
 * NAME=value and NAME+=value, arrays NAME=( ... ) and NAME+=( ... ) over
 * several lines (comments inside), export/local/declare/readonly,
 * $NAME ${NAME} ${NAME[@]} ${NAME[*]} ${NAME[i]} ${#NAME} ${NAME:-default}
 * ${NAME-default} ${NAME:=default}, positional parameters (never set:
 * their defaults apply), $(( arithmetic )), word splitting of unquoted
 * expansions, "${ARRAY[@]}" as one word per element, `;` `&&` `||` `|`
 * lists, if/elif/else/fi with [[ ]] / [ ] / test conditions on strings
 * and integers (-z -n == = != -eq -ne -lt -le -gt -ge, !), exit.
 * Not understood, and skipped with a note: command substitution $(...)
 * and `...` (empty), loops and case (their bodies are not run), file tests
 * (-f, -d, -e: taken as false), functions.
 *
 * The training command is the last command run that names a Python script
 * (a word ending in ".py", or python's "-m MODULE"), else the last command
 * whose words include a "--flag".  Not here: what its words mean
 * (megatron_args.c). */
#ifndef PTSIM_SHELL_SCRIPT_H
#define PTSIM_SHELL_SCRIPT_H

#include <glib.h>
#include <stdint.h>

/* Scripts larger than this are refused: a launch script is a few KiB. */
#define PTSIM_SHELL_SCRIPT_MAX_BYTES (1024 * 1024)

typedef struct {
  GPtrArray *command;   /* (element-type utf8) the training command's words, expanded */
  int64_t command_line; /* 1-based line where it starts; 0: no command found */
  GHashTable *vars;     /* name (utf8) -> GPtrArray of utf8 (a scalar has one element) */
  GPtrArray *sbatch;    /* (element-type utf8) words of "#SBATCH" directives, in order */
  GPtrArray *notes;     /* (element-type utf8) "NAME:LINE: ..." what was skipped */
} PtsimShellScript;

void ptsim_shell_script_free(PtsimShellScript *script);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimShellScript, ptsim_shell_script_free)

/* Runs LEN bytes of TEXT (NAME names it in messages and notes).  Errors
 * (PTSIM_CONFIG_ERROR_PARSE, "NAME:LINE: ..."): more than
 * PTSIM_SHELL_SCRIPT_MAX_BYTES, NUL bytes, an unterminated quote, array or
 * ${...}, an if without fi, and a command that begins with a "--flag" after
 * the training command (in bash a comment line inside a backslash-continued
 * command ends the command there).  The run is bounded whatever the text:
 * expansions (and the copies += makes) may produce 16 MiB in all, ${...},
 * $((...)) and if nest at most 64 deep, $((...)) refuses what overflows
 * int64 or divides by zero; past a bound the script is refused, never run
 * for long.  TEXT need not end in a NUL.  (transfer full) */
PtsimShellScript *ptsim_shell_script_run(const char *text, gsize len, const char *name,
                                         GError **error);

/* The value of variable NAME after the run (an array's elements joined by
 * spaces), or NULL when unset.  (transfer full) */
char *ptsim_shell_script_var(const PtsimShellScript *script, const char *name);

#endif /* PTSIM_SHELL_SCRIPT_H */
