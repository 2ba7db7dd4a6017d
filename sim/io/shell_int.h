/* shell_int.h — what shell_words.c (lexer, expansion) and shell_script.c
 * (the executor) share; private to those two files. */
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
  T_NEWLINE,
  T_AND,
  T_OR,
  T_PIPE,
  T_ARRAY_OPEN,
  T_LPAREN,
  T_RPAREN,
  T_END
} TokType;

typedef struct {
  TokType type;
  GArray *parts; /* Part, T_WORD only */
  int64_t line;
} Token;

typedef struct {
  const char *name, *p, *end;
  int64_t line;
  GArray *tokens;
  PtsimShellScript *out;
  GError **error;
} Lexer;

/* What a run may spend: a script of PTSIM_SHELL_SCRIPT_MAX_BYTES that
 * doubles a variable on every line would expand to 2^100000 bytes, and one
 * that nests ${...}, $(( )) or if ... fi a million deep would overflow the
 * stack; real launch scripts expand to a few KiB and nest a few deep. */
#define SHELL_EXPANSION_MAX ((gsize)16 << 20) /* bytes + fields made, all in all */
#define SHELL_DEPTH_MAX 64                    /* nesting of expansions, $(( )), if */

typedef struct {
  const char *name;
  GArray *tokens;
  guint pos;
  PtsimShellScript *out;
  gboolean exited;
  GError **error;
  gsize spent; /* bytes + fields expanded and copied so far */
  int depth;   /* of nested expansions or ifs being run */
} Run;

/* Tokens of TEXT into lx->tokens, ending in T_END; FALSE with lx->error set. */
gboolean ptsim_shell_lex(Lexer *lx);
void ptsim_shell_token_clear(gpointer token);
void ptsim_shell_add_part(GArray *parts, PartKind kind, const char *text, gsize len,
                          gboolean quoted);
void ptsim_shell_part_clear(gpointer part);
gboolean ptsim_shell_is_name_start(char c);
gboolean ptsim_shell_is_name_char(char c);

/* Variables of the run. */
GPtrArray *ptsim_shell_var_get(Run *r, const char *name);
void ptsim_shell_var_set(Run *r, const char *name, GPtrArray *values /* transfer full */);
GPtrArray *ptsim_shell_strv_new(void);
void ptsim_shell_note(Run *r, int64_t line, const char *what);

/* Charges COST (bytes + fields) to the run's expansion budget: FALSE with
 * the error set once it is spent. */
gboolean ptsim_shell_spend(Run *r, int64_t line, gsize cost);

/* Enters one level of nesting (an expansion inside an expansion, an if
 * inside an if): FALSE with the error set past SHELL_DEPTH_MAX.  Every
 * successful enter is paired with r->depth--. */
gboolean ptsim_shell_enter(Run *r, int64_t line, const char *what);

/* bash's expansion of one word into fields (see shell_words.c). */
gboolean ptsim_shell_expand_word(Run *r, GArray *parts, gboolean split, int64_t line,
                                 GPtrArray *fields);

#endif /* PTSIM_SHELL_INT_H */
