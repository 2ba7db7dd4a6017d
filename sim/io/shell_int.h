/* shell_int.h — what the files of the launch-script reader share; private to
 * them: shell_lex.c (the lexer: words, operators, here-documents),
 * shell_words.c (bash's expansion of a word), shell_arith.c (the integer
 * arithmetic of $(( )) and (( ))), shell_command.c (simple commands, the
 * builtins, wrappers and the training command) and shell_script.c (the
 * compound commands and the entry points).  The contract is shell_script.h.
 *
 * A script is lexed once into tokens; the executor walks them statement by
 * statement with a `run_it` flag, so that one pass both runs what is taken
 * and steps over what is not (an if's other branch, a loop's last check):
 * a loop goes back to its body's first token, a function call to its
 * body's.  Text run as a script of its own (`bash -c TEXT`, `eval`, a
 * here-document fed to sbatch) is lexed into tokens of its own and run by
 * a Run of its own that shares the Shell. */
#ifndef PTSIM_SHELL_INT_H
#define PTSIM_SHELL_INT_H

#include <glib.h>
#include <stdint.h>

#include "shell_script.h"

typedef enum { P_LIT, P_VAR, P_BRACE, P_ARITH, P_CMD } PartKind;

typedef struct {
  PartKind kind;
  char *text;
  gboolean quoted;
  gsize len, size; /* of text, and its allocation: literals grow a byte at a time */
} Part;

typedef enum {
  T_WORD,
  T_NEWLINE, /* also ';' and '&' */
  T_AND,
  T_OR,
  T_PIPE,
  T_ARRAY_OPEN,
  T_LPAREN,
  T_RPAREN,
  T_DSEMI,   /* ';;' ending a case item */
  T_ARITH,   /* (( ... )) as a command or a C-style for's head: parts hold one P_ARITH */
  T_REDIR,   /* a redirection; its target is the next (word) token */
  T_HEREDOC, /* <<WORD: parts hold the body (quoted parts: no splitting) */
  T_END
} TokType;

/* What a T_REDIR does (Token.redir). */
typedef enum {
  R_NONE = 0,
  R_IN,     /* < FILE, <> FILE */
  R_OUT,    /* > FILE, >| FILE, &> FILE */
  R_APPEND, /* >> FILE, &>> FILE */
  R_DUP,    /* >&N, <&N, >&- */
  R_STRING  /* <<< WORD: the word is the input */
} RedirKind;

typedef struct {
  TokType type;
  GArray *parts; /* Part: T_WORD, T_ARITH, T_HEREDOC */
  int64_t line;
  RedirKind redir; /* T_REDIR */
} Token;

/* A here-document whose body starts after the current line. */
typedef struct {
  guint token;      /* its T_HEREDOC in tokens */
  char *delimiter;  /* the closing line */
  gboolean strip;   /* <<-: leading tabs removed */
  gboolean literal; /* the delimiter was quoted: no expansion */
} PendingHeredoc;

typedef struct {
  const char *name, *p, *end;
  int64_t line;
  GArray *tokens;
  PtsimShellScript *out; /* "#SBATCH" directives go to out->sbatch (NULL: not kept) */
  GError **error;
  GArray *pending; /* PendingHeredoc, waiting for the end of the line */
} Lexer;

/* What a run may spend: a script of PTSIM_SHELL_SCRIPT_MAX_BYTES that
 * doubles a variable on every line would expand to 2^100000 bytes, and one
 * that nests ${...}, $(( )), if ... fi or function calls a million deep
 * would overflow the stack; a loop may not end.  Real launch scripts expand
 * to a few KiB, nest a few deep and loop over their arguments. */
#define SHELL_EXPANSION_MAX ((gsize)16 << 20) /* bytes + fields made, all in all */
#define SHELL_DEPTH_MAX 64                    /* nesting of expansions, $(( )), if, calls */
#define SHELL_LOOP_MAX 10000                  /* iterations of one loop before it is stopped */
#define SHELL_STEPS_MAX 1000000               /* loop iterations of the whole run */

/* A function: the first token of its body (a compound command) in the
 * tokens of the text that defined it. */
typedef struct {
  GArray *tokens; /* a reference */
  guint start;
  char *name; /* of that text, for messages */
} Function;

/* What every Run of one script shares. */
typedef struct {
  PtsimShellScript *out;
  GHashTable *functions;  /* name -> Function */
  GHashTable *files;      /* path -> text the script wrote (cat > FILE <<EOF) */
  gsize spent;            /* bytes + fields expanded and copied so far */
  int depth;              /* of nested expansions, ifs, calls, texts being run */
  int64_t steps;          /* loop iterations so far */
  char *candidate;        /* the last scalar assigned that holds a training command ... */
  char *candidate_name;   /* ... the variable's name ... */
  int64_t candidate_line; /* ... and where */
} Shell;

/* One text being run: the script, or a text it runs (bash -c, eval, a
 * here-document, a file it wrote). */
typedef struct {
  Shell *sh;
  const char *name; /* in messages: the script's */
  GArray *tokens;
  guint pos;
  GError **error;
  GPtrArray *args;    /* $1, $2, ... (owned by the frame that set them) */
  const char *arg0;   /* $0 */
  GPtrArray *prefix;  /* words in front of any command found here (a wrapper's launcher), or NULL */
  int status;         /* $?: the last command's exit status (0: success) */
  gboolean exited;    /* exit ran: nothing more runs */
  int breaking;       /* loops `break` leaves */
  int continuing;     /* loops `continue` ends the iteration of */
  gboolean returning; /* return ran inside a function */
  int loops;          /* loops being run, for break and continue */
} Run;

/* ---- shell_lex.c ---- */

/* Tokens of lx's text into lx->tokens, ending in T_END; FALSE with lx->error set. */
gboolean ptsim_shell_lex(Lexer *lx);
/* One word at lx->p into PARTS (empty when only a comment). */
gboolean ptsim_shell_lex_word(Lexer *lx, GArray *parts);
void ptsim_shell_token_clear(gpointer token);
void ptsim_shell_add_part(GArray *parts, PartKind kind, const char *text, gsize len,
                          gboolean quoted);
void ptsim_shell_part_clear(gpointer part);
GArray *ptsim_shell_parts_new(void);
gboolean ptsim_shell_is_name_start(char c);
gboolean ptsim_shell_is_name_char(char c);
/* TEXT lexed into tokens of its own (transfer full), or NULL with *error. */
GArray *ptsim_shell_tokens(const char *text, gsize len, const char *name, int64_t line,
                           PtsimShellScript *out, GError **error);

/* ---- shell_words.c ---- */

GPtrArray *ptsim_shell_var_get(Run *r, const char *name);
void ptsim_shell_var_set(Run *r, const char *name, GPtrArray *values /* transfer full */);
void ptsim_shell_var_set_string(Run *r, const char *name, const char *value);
GPtrArray *ptsim_shell_strv_new(void);
void ptsim_shell_note(Run *r, int64_t line, const char *what);
/* FALSE with r->error set: NAME:LINE: WHAT (printf-style). */
gboolean ptsim_shell_fail(Run *r, int64_t line, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/* Charges COST (bytes + fields) to the run's expansion budget: FALSE with
 * the error set once it is spent. */
gboolean ptsim_shell_spend(Run *r, int64_t line, gsize cost);

/* Enters one level of nesting (an expansion inside an expansion, an if
 * inside an if, a call): FALSE with the error set past SHELL_DEPTH_MAX.
 * Every successful enter is paired with r->sh->depth--. */
gboolean ptsim_shell_enter(Run *r, int64_t line, const char *what);

/* bash's expansion of one word into fields (appended to FIELDS). */
gboolean ptsim_shell_expand_word(Run *r, GArray *parts, gboolean split, int64_t line,
                                 GPtrArray *fields);
/* One word expanded without splitting, its fields joined by spaces (a
 * here-document, a case subject).  (transfer full) NULL with the error. */
char *ptsim_shell_expand_string(Run *r, GArray *parts, int64_t line);
/* TEXT lexed as one word and expanded without splitting ("" when empty). */
char *ptsim_shell_expand_text(Run *r, const char *text, int64_t line);
/* A case pattern: the word expanded, its quoted characters escaped. */
char *ptsim_shell_expand_pattern(Run *r, GArray *parts, int64_t line);
/* bash's pattern matching (*, ?, [...], backslash) of the whole of S. */
gboolean ptsim_shell_glob_match(const char *pattern, const char *s);

/* ---- shell_arith.c ---- */

/* TEXT (already expanded) evaluated as bash's $(( )) does: FALSE with the
 * error naming WHAT at LINE when it cannot be. */
gboolean ptsim_shell_arith(Run *r, const char *text, int64_t line, const char *what,
                           int64_t *value);

/* ---- shell_command.c ---- */

/* One simple command at r->pos (assignments, words, redirections), run
 * when RUN_IT; r->status is its exit status. */
gboolean ptsim_shell_simple_command(Run *r, gboolean run_it);
/* Redirections after a compound command (done < FILE, } > LOG). */
gboolean ptsim_shell_redirections(Run *r, gboolean run_it);
/* The unquoted literal a word is, or NULL. */
const char *ptsim_shell_plain(const Token *t);
/* TEXT run as a script of its own (bash -c, eval, a here-document, a file
 * the script wrote): CHILD, a new process (its exit ends only it); ARG0 and
 * ARGS its $0 and positional parameters (NULL: the caller's); PREFIX put
 * in front of any command found in it. */
gboolean ptsim_shell_run_text(Run *r, const char *text, int64_t line, gboolean child,
                              const char *arg0, GPtrArray *args, GPtrArray *prefix);
/* Records a scalar assignment that holds a training command (the fallback
 * when none is run). */
void ptsim_shell_remember_candidate(Run *r, const char *name, const char *value, int64_t line);
/* TRUE when WORDS name a Python script (a *.py, or python's -m MODULE). */
gboolean ptsim_shell_names_script(GPtrArray *words);

/* ---- shell_script.c ---- */

/* Statements until one of `until` (consumed, returned in *stop), a ';;' or
 * ')' (consumed, *stop ";;" or ")"), or the end (*stop NULL). */
gboolean ptsim_shell_statements(Run *r, gboolean run_it, const char *const *until,
                                const char **stop);
/* One command (compound or simple) at r->pos. */
gboolean ptsim_shell_command(Run *r, gboolean run_it);
/* TRUE when nothing more runs in this run (exit, break, continue, return). */
gboolean ptsim_shell_stopped(const Run *r);
/* Calls function F with ARGS ($1...) at LINE. */
gboolean ptsim_shell_call(Run *r, const Function *f, GPtrArray *args, int64_t line);

#endif /* PTSIM_SHELL_INT_H */
