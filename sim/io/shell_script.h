/* shell_script.h — the part of bash that launch scripts use, enough to find
 * the training command they run and the words it gets.
 *
 * Shell module (GLib).  A launch script such as Megatron-LM's
 * examples/llama/train_llama3_8b_h100_fp8.sh sets variables and arrays,
 * appends to them under if-blocks, reads its arguments in a while/case loop,
 * and ends in
 *     torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py ${MODEL_ARGS[@]} ...
 * or submits such a command through sbatch.  This module runs a script
 * symbolically: nothing is executed and no file is read; the script's
 * arguments and environment are what the caller gives (PtsimShellInputs),
 * nothing else.
 *
 * Understood: comments (and "#SBATCH" directives, kept), quotes ('...',
 * "..." with expansions), backslash escapes and line continuations,
 * NAME=value, NAME+=value, NAME[i]=value, arrays NAME=( ... ) and
 * NAME+=( ... ) over several lines, export/local/declare/readonly/typeset
 * (with arrays), unset; $NAME ${NAME} ${NAME[@]} ${NAME[*]} ${NAME[i]}
 * ${#NAME} ${#NAME[@]} ${!NAME}, the operators :- - := = :+ + :? ? # ## %
 * %% / // /# /% :offset:length ^ ^^ , ,, of ${...}; the positional
 * parameters $0 $1.. ${10} $# $@ "$@" $* and ${@:N:M}, set --, shift; $?;
 * $(( arithmetic )) and (( )) with C's operators; word splitting of
 * unquoted expansions; `;` `&` `&&` `||` `|` `!` lists; if/elif/else/fi,
 * for NAME [in WORDS], for (( ; ; )), while and until loops with break
 * [N] and continue [N] (a loop is stopped after 10000 iterations, with a
 * note), case with patterns (* ? [...] |), { } groups, ( ) subshells,
 * functions (NAME () { }, function NAME { }) with their arguments and
 * return; [[ ]] / [ ] / test on strings and integers (-z -n == = != -eq
 * -ne -lt -le -gt -ge, !, && || -a -o); redirections (ignored but for
 * the input they give), here-documents (<<WORD, <<-WORD, <<'WORD': expanded
 * unless quoted) and here-strings (<<<); eval; exit.
 * Texts run as scripts of their own are read too: `bash -c TEXT` and
 * `sh -c` (with its launcher: `srun ... bash -c "python pretrain_gpt.py
 * ..."`), `sbatch --wrap TEXT`, a here-document fed to sbatch or bash, a
 * file the script wrote with `cat > FILE <<EOF` and then runs with sbatch,
 * bash or source; the launcher's words stay in front of the command found
 * in them.
 * Not understood, and taken as nothing with a note: command substitution
 * $(...) and `...` (empty), file tests (-f, -d, -e: false), reading other
 * files (source FILE, bash FILE); `read` reads nothing (status 1).
 * Refused with the file:line and the construct: ';&' and ';;&' in a case,
 * ${...} operators not listed above, unterminated quotes and blocks.
 *
 * The training command is the last command run that names a Python script
 * (a word ending in ".py", or python's "-m MODULE"), else the last command
 * whose words include a "--flag"; when no command is run, the last string
 * variable assigned that holds one (".py" and "--") is run as a script, with
 * a note.  Not here: what its words mean (megatron_args.c). */
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

/* What a script is run with: its arguments ($1, $2, ...) and the
 * environment it starts in.  Either may be NULL. */
typedef struct {
  const char *const *args; /* NULL-terminated */
  const char *const *env;  /* NULL-terminated NAME=VALUE entries; a later one wins */
} PtsimShellInputs;

/* Runs LEN bytes of TEXT (NAME names it in messages and notes, and is $0)
 * with INPUTS (may be NULL: no arguments, an empty environment).  Errors
 * (PTSIM_CONFIG_ERROR_PARSE, "NAME:LINE: ..."): more than
 * PTSIM_SHELL_SCRIPT_MAX_BYTES, NUL bytes, an unterminated quote, array or
 * ${...}, here-document or block (if without fi, do without done, case
 * without esac, ...), a construct ptsim does not read (named), and a
 * command that begins with a "--flag" after the training command (in bash
 * a comment line inside a backslash-continued command ends the command
 * there); PTSIM_CONFIG_ERROR_INVALID: an environment entry that is not
 * NAME=VALUE.  The run is bounded whatever the text: expansions (and the
 * copies += makes) may produce 16 MiB in all, ${...}, $((...)), if,
 * function calls and texts run as scripts nest at most 64 deep, loops run
 * a million iterations in all, $((...)) refuses what overflows int64 or
 * divides by zero; past a bound the script is refused, never run for long.
 * TEXT need not end in a NUL.  (transfer full) */
PtsimShellScript *ptsim_shell_script_run_with(const char *text, gsize len, const char *name,
                                              const PtsimShellInputs *inputs, GError **error);

/* The same without arguments or environment. */
PtsimShellScript *ptsim_shell_script_run(const char *text, gsize len, const char *name,
                                         GError **error);

/* The value of variable NAME after the run (an array's elements joined by
 * spaces), or NULL when unset.  (transfer full) */
char *ptsim_shell_script_var(const PtsimShellScript *script, const char *name);

#endif /* PTSIM_SHELL_SCRIPT_H */
