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
} Part;

typedef enum { T_WORD, T_NEWLINE, T_AND, T_OR, T_PIPE, T_ARRAY_OPEN, T_LPAREN, T_RPAREN, T_END } TokType;

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

typedef struct {
  const char *name;
  GArray *tokens;
  guint pos;
  PtsimShellScript *out;
  gboolean exited;
  GError **error;
} Run;

/* Tokens of TEXT into lx->tokens, ending in T_END; FALSE with lx->error set. */
gboolean ptsim_shell_lex(Lexer *lx);
void ptsim_shell_token_clear(gpointer token);
void ptsim_shell_add_part(GArray *parts, PartKind kind, const char *text, gsize len, gboolean quoted);
void ptsim_shell_part_clear(gpointer part);
gboolean ptsim_shell_is_name_start(char c);
gboolean ptsim_shell_is_name_char(char c);

/* Variables of the run. */
GPtrArray *ptsim_shell_var_get(Run *r, const char *name);
void ptsim_shell_var_set(Run *r, const char *name, GPtrArray *values /* transfer full */);
GPtrArray *ptsim_shell_strv_new(void);
void ptsim_shell_note(Run *r, int64_t line, const char *what);

/* bash's expansion of one word into fields (see shell_words.c). */
gboolean ptsim_shell_expand_word(Run *r, GArray *parts, gboolean split, int64_t line,
                                 GPtrArray *fields);

#endif /* PTSIM_SHELL_INT_H */
