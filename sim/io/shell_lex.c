/* shell_lex.c — the tokens of a launch script: words (quotes, escapes,
 * continuations, comments, $-expansions as parts that remember their
 * quoting), the operators of lists, pipes, subshells and case items,
 * redirections (their file descriptors dropped: nothing is opened) and
 * here-documents, whose bodies are read after the line that names them
 * and kept as the parts of a word (expanded later unless the delimiter was
 * quoted).  What the tokens mean is shell_script.c's and shell_command.c's;
 * the contract is shell_script.h. */
#include <string.h>

#include "config.h"
#include "shell_int.h"

static gboolean fail(const Lexer *lx, int64_t line, const char *what) {
  g_set_error(lx->error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
              "%s:%" G_GINT64_FORMAT ": %s", lx->name, line, what);
  return FALSE;
}

void ptsim_shell_part_clear(gpointer p) { g_free(((Part *)p)->text); }

void ptsim_shell_token_clear(gpointer p) {
  Token *t = p;
  if (t->parts) g_array_unref(t->parts);
}

GArray *ptsim_shell_parts_new(void) {
  GArray *parts = g_array_new(FALSE, FALSE, sizeof(Part));
  g_array_set_clear_func(parts, ptsim_shell_part_clear);
  return parts;
}

void ptsim_shell_add_part(GArray *parts, PartKind kind, const char *text, gsize len,
                          gboolean quoted) {
  /* adjacent literals of the same quoting merge; the lexer adds them a
   * byte at a time, so the text grows by doubling (a 1 MiB word must not
   * cost 1 MiB^2 of copying) */
  if (kind == P_LIT && parts->len > 0) {
    Part *last = &g_array_index(parts, Part, parts->len - 1);
    if (last->kind == P_LIT && last->quoted == quoted) {
      if (last->len + len + 1 > last->size) {
        last->size = MAX(2 * last->size, last->len + len + 1);
        last->text = g_realloc(last->text, last->size);
      }
      memcpy(last->text + last->len, text, len);
      last->len += len;
      last->text[last->len] = '\0';
      return;
    }
  }
  Part part = {kind, g_strndup(text, len), quoted, len, len + 1};
  g_array_append_val(parts, part);
}

gboolean ptsim_shell_is_name_start(char c) { return g_ascii_isalpha(c) || c == '_'; }
gboolean ptsim_shell_is_name_char(char c) { return g_ascii_isalnum(c) || c == '_'; }

/* The end of a bracketed expansion starting after `open` at *q: nesting of
 * the same brackets and quotes respected.  NULL when unterminated. */
static const char *match_close(const char *q, const char *end, char open, char close,
                               int64_t *line) {
  int depth = 1;
  char quote = 0;
  for (; q < end; q++) {
    if (*q == '\n') (*line)++;
    if (quote) {
      if (*q == '\\' && quote == '"' && q + 1 < end)
        q++;
      else if (*q == quote)
        quote = 0;
      continue;
    }
    if (*q == '\\' && q + 1 < end)
      q++;
    else if (*q == '\'' || *q == '"')
      quote = *q;
    else if (*q == open)
      depth++;
    else if (*q == close && --depth == 0)
      return q;
  }
  return NULL;
}

/* A $-expansion at lx->p (which points at '$'). */
static gboolean lex_dollar(Lexer *lx, GArray *parts, gboolean quoted) {
  const char *q = lx->p + 1;
  int64_t line = lx->line;
  if (q < lx->end && *q == '{') {
    const char *c = match_close(q + 1, lx->end, '{', '}', &lx->line);
    if (!c) return fail(lx, line, "unterminated ${");
    ptsim_shell_add_part(parts, P_BRACE, q + 1, (gsize)(c - q - 1), quoted);
    lx->p = c + 1;
  } else if (q + 1 < lx->end && q[0] == '(' && q[1] == '(') {
    const char *c = match_close(q + 2, lx->end, '(', ')', &lx->line);
    if (!c || c + 1 >= lx->end || c[1] != ')') return fail(lx, line, "unterminated $((");
    ptsim_shell_add_part(parts, P_ARITH, q + 2, (gsize)(c - q - 2), quoted);
    lx->p = c + 2;
  } else if (q < lx->end && *q == '(') {
    const char *c = match_close(q + 1, lx->end, '(', ')', &lx->line);
    if (!c) return fail(lx, line, "unterminated $(");
    ptsim_shell_add_part(parts, P_CMD, q + 1, (gsize)(c - q - 1), quoted);
    lx->p = c + 1;
  } else if (q < lx->end && ptsim_shell_is_name_start(*q)) {
    const char *e = q;
    while (e < lx->end && ptsim_shell_is_name_char(*e)) e++;
    ptsim_shell_add_part(parts, P_VAR, q, (gsize)(e - q), quoted);
    lx->p = e;
  } else if (q < lx->end && (g_ascii_isdigit(*q) || strchr("@*#?$!-", *q))) {
    ptsim_shell_add_part(parts, P_VAR, q, 1, quoted);
    lx->p = q + 1;
  } else {
    ptsim_shell_add_part(parts, P_LIT, "$", 1, quoted);
    lx->p = q;
  }
  return TRUE;
}

/* The rest of a comment line; "#SBATCH" directives are kept. */
static void lex_comment(Lexer *lx) {
  const char *e = memchr(lx->p, '\n', (gsize)(lx->end - lx->p));
  if (!e) e = lx->end;
  if (lx->out && (gsize)(e - lx->p) >= 7 && strncmp(lx->p, "#SBATCH", 7) == 0) {
    g_autofree char *body = g_strndup(lx->p + 7, (gsize)(e - lx->p - 7));
    g_auto(GStrv) words = g_strsplit_set(g_strstrip(body), " \t", -1);
    for (char **w = words; *w; w++)
      if (**w) g_ptr_array_add(lx->out->sbatch, g_strdup(*w));
  }
  lx->p = e;
}

/* A `...` command substitution at lx->p. */
static gboolean lex_backquote(Lexer *lx, GArray *parts, gboolean quoted, int64_t start) {
  const char *e = memchr(lx->p + 1, '`', (gsize)(lx->end - lx->p - 1));
  if (!e) return fail(lx, start, "unterminated `");
  for (const char *n = lx->p; n < e; n++) lx->line += *n == '\n';
  ptsim_shell_add_part(parts, P_CMD, lx->p + 1, (gsize)(e - lx->p - 1), quoted);
  lx->p = e + 1;
  return TRUE;
}

static gboolean ends_word(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '&' || c == '|' ||
         c == '(' || c == ')' || c == '<' || c == '>';
}

gboolean ptsim_shell_lex_word(Lexer *lx, GArray *parts) {
  while (lx->p < lx->end) {
    char c = *lx->p;
    if (ends_word(c)) return TRUE;
    if (c == '#' && parts->len == 0) {
      lex_comment(lx);
      return TRUE;
    }
    if (c == '\\') {
      if (lx->p + 1 < lx->end && lx->p[1] == '\n') {
        lx->line++;
      } else if (lx->p + 1 < lx->end) {
        ptsim_shell_add_part(parts, P_LIT, lx->p + 1, 1, TRUE);
      }
      lx->p += 2;
    } else if (c == '\'') {
      const char *e = memchr(lx->p + 1, '\'', (gsize)(lx->end - lx->p - 1));
      if (!e) return fail(lx, lx->line, "unterminated single quote");
      for (const char *n = lx->p; n < e; n++) lx->line += *n == '\n';
      ptsim_shell_add_part(parts, P_LIT, lx->p + 1, (gsize)(e - lx->p - 1), TRUE);
      lx->p = e + 1;
    } else if (c == '"') {
      int64_t start = lx->line;
      lx->p++;
      /* "" is an empty word that still counts */
      ptsim_shell_add_part(parts, P_LIT, "", 0, TRUE);
      while (lx->p < lx->end && *lx->p != '"') {
        if (*lx->p == '\\' && lx->p + 1 < lx->end && strchr("$`\"\\\n", lx->p[1])) {
          if (lx->p[1] == '\n')
            lx->line++;
          else
            ptsim_shell_add_part(parts, P_LIT, lx->p + 1, 1, TRUE);
          lx->p += 2;
        } else if (*lx->p == '$') {
          if (!lex_dollar(lx, parts, TRUE)) return FALSE;
        } else if (*lx->p == '`') {
          if (!lex_backquote(lx, parts, TRUE, start)) return FALSE;
        } else {
          lx->line += *lx->p == '\n';
          ptsim_shell_add_part(parts, P_LIT, lx->p, 1, TRUE);
          lx->p++;
        }
      }
      if (lx->p >= lx->end) return fail(lx, start, "unterminated double quote");
      lx->p++;
    } else if (c == '$') {
      if (!lex_dollar(lx, parts, FALSE)) return FALSE;
    } else if (c == '`') {
      if (!lex_backquote(lx, parts, FALSE, lx->line)) return FALSE;
    } else {
      ptsim_shell_add_part(parts, P_LIT, lx->p, 1, FALSE);
      lx->p++;
    }
  }
  return TRUE;
}

static void push(Lexer *lx, TokType type, GArray *parts, RedirKind redir) {
  Token t = {type, parts, lx->line, redir};
  g_array_append_val(lx->tokens, t);
}

/* NAME= or NAME+= as the whole (unquoted) word: an array may follow. */
static gboolean ends_assignment(GArray *parts) {
  if (parts->len != 1) return FALSE;
  const Part *p = &g_array_index(parts, Part, 0);
  gsize n = strlen(p->text);
  if (p->quoted || n < 2 || p->text[n - 1] != '=' || !ptsim_shell_is_name_start(p->text[0]))
    return FALSE;
  for (gsize i = 1; i + 1 < n; i++)
    if (!ptsim_shell_is_name_char(p->text[i]) && !(p->text[i] == '+' && i + 2 == n)) return FALSE;
  return TRUE;
}

/* A word of digits alone, just before '<' or '>': a file descriptor. */
static gboolean is_fd(GArray *parts, const Lexer *lx) {
  if (parts->len != 1 || lx->p >= lx->end || (*lx->p != '<' && *lx->p != '>')) return FALSE;
  const Part *p = &g_array_index(parts, Part, 0);
  if (p->kind != P_LIT || p->quoted || p->len == 0) return FALSE;
  return strspn(p->text, "0123456789") == p->len;
}

/* Whether `((` here starts an arithmetic command: at the start of a
 * command (after an operator or a keyword that a command follows). */
static gboolean at_command_start(const Lexer *lx) {
  if (lx->tokens->len == 0) return TRUE;
  const Token *t = &g_array_index(lx->tokens, Token, lx->tokens->len - 1);
  if (t->type != T_WORD)
    return t->type != T_REDIR && t->type != T_HEREDOC && t->type != T_ARRAY_OPEN;
  static const char *const keywords[] = {"for",   "do",    "then", "else", "elif", "if",
                                         "while", "until", "{",    "!",    NULL};
  if (t->parts->len != 1) return FALSE;
  const Part *p = &g_array_index(t->parts, Part, 0);
  if (p->kind != P_LIT || p->quoted) return FALSE;
  for (const char *const *k = keywords; *k; k++)
    if (strcmp(p->text, *k) == 0) return TRUE;
  return FALSE;
}

/* The body of a here-document as parts: expansions and the backslash
 * escapes of double quotes ($ ` \ newline), quotes literal. */
static gboolean heredoc_parts(Lexer *lx, const char *body, gsize len, int64_t line, GArray *parts) {
  Lexer sub = {lx->name, body, body + len, line, NULL, NULL, lx->error, NULL};
  ptsim_shell_add_part(parts, P_LIT, "", 0, TRUE);
  while (sub.p < sub.end) {
    char c = *sub.p;
    if (c == '\\' && sub.p + 1 < sub.end && strchr("$`\\\n", sub.p[1])) {
      if (sub.p[1] != '\n') ptsim_shell_add_part(parts, P_LIT, sub.p + 1, 1, TRUE);
      sub.line += sub.p[1] == '\n';
      sub.p += 2;
    } else if (c == '$') {
      if (!lex_dollar(&sub, parts, TRUE)) return FALSE;
    } else if (c == '`') {
      if (!lex_backquote(&sub, parts, TRUE, sub.line)) return FALSE;
    } else {
      sub.line += c == '\n';
      ptsim_shell_add_part(parts, P_LIT, sub.p, 1, TRUE);
      sub.p++;
    }
  }
  return TRUE;
}

/* Reads the bodies of the pending here-documents, from lx->p (the start
 * of the line after the one that named them). */
static gboolean read_heredocs(Lexer *lx) {
  for (guint k = 0; k < lx->pending->len; k++) {
    PendingHeredoc *h = &g_array_index(lx->pending, PendingHeredoc, k);
    Token *t = &g_array_index(lx->tokens, Token, h->token);
    int64_t first = lx->line;
    g_autoptr(GString) body = g_string_new(NULL);
    gboolean closed = FALSE;
    while (lx->p < lx->end && !closed) {
      const char *e = memchr(lx->p, '\n', (gsize)(lx->end - lx->p));
      const char *stop = e ? e : lx->end;
      const char *s = lx->p;
      if (h->strip)
        while (s < stop && *s == '\t') s++;
      gsize n = (gsize)(stop - s);
      closed = n == strlen(h->delimiter) && strncmp(s, h->delimiter, n) == 0;
      if (!closed) {
        g_string_append_len(body, s, (gssize)n);
        g_string_append_c(body, '\n');
      }
      lx->p = e ? e + 1 : lx->end;
      lx->line++;
    }
    if (!closed && lx->out) /* bash runs it too, with a warning */
      g_ptr_array_add(lx->out->notes,
                      g_strdup_printf("%s:%" G_GINT64_FORMAT ": the here-document ends at the end "
                                      "of the text, not at a line '%s'",
                                      lx->name, t->line, h->delimiter));
    t->parts = ptsim_shell_parts_new();
    if (h->literal)
      ptsim_shell_add_part(t->parts, P_LIT, body->str, body->len, TRUE);
    else if (!heredoc_parts(lx, body->str, body->len, first, t->parts))
      return FALSE;
    g_clear_pointer(&h->delimiter, g_free);
  }
  g_array_set_size(lx->pending, 0);
  return TRUE;
}

/* A redirection operator at lx->p ('<' or '>', or '&>'). */
static gboolean lex_redirection(Lexer *lx) {
  const char *p = lx->p;
  gsize left = (gsize)(lx->end - p);
  int64_t line = lx->line;
  if (left >= 2 && (p[0] == '<' || p[0] == '>') && p[1] == '(') { /* process substitution */
    const char *c = match_close(p + 2, lx->end, '(', ')', &lx->line);
    if (!c) return fail(lx, line, "unterminated process substitution");
    GArray *parts = ptsim_shell_parts_new();
    ptsim_shell_add_part(parts, P_CMD, p + 2, (gsize)(c - p - 2), FALSE);
    Token t = {T_WORD, parts, line, R_NONE};
    g_array_append_val(lx->tokens, t);
    lx->p = c + 1;
    return TRUE;
  }
  if (left >= 3 && strncmp(p, "<<<", 3) == 0) {
    push(lx, T_REDIR, NULL, R_STRING);
    lx->p += 3;
    return TRUE;
  }
  if (left >= 2 && strncmp(p, "<<", 2) == 0) {
    gboolean strip = left >= 3 && p[2] == '-';
    lx->p += strip ? 3 : 2;
    while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t')) lx->p++;
    g_autoptr(GArray) parts = ptsim_shell_parts_new();
    if (!ptsim_shell_lex_word(lx, parts)) return FALSE;
    if (parts->len == 0) return fail(lx, line, "a here-document (<<) without its delimiter word");
    g_autoptr(GString) delimiter = g_string_new(NULL);
    gboolean literal = FALSE;
    for (guint i = 0; i < parts->len; i++) {
      const Part *part = &g_array_index(parts, Part, i);
      literal = literal || part->quoted;
      if (part->kind != P_LIT) g_string_append_c(delimiter, '$');
      g_string_append(delimiter, part->text);
    }
    PendingHeredoc h = {lx->tokens->len, g_strdup(delimiter->str), strip, literal};
    g_array_append_val(lx->pending, h);
    push(lx, T_HEREDOC, NULL, R_NONE);
    return TRUE;
  }
  RedirKind kind;
  gsize n;
  if (p[0] == '&') { /* &> and &>> */
    kind = left >= 3 && p[2] == '>' ? R_APPEND : R_OUT;
    n = kind == R_APPEND ? 3 : 2;
  } else if (left >= 2 && (p[1] == '&')) {
    kind = R_DUP;
    n = 2;
  } else if (p[0] == '>' && left >= 2 && p[1] == '>') {
    kind = R_APPEND;
    n = 2;
  } else if (left >= 2 && ((p[0] == '>' && p[1] == '|') || (p[0] == '<' && p[1] == '>'))) {
    kind = p[0] == '>' ? R_OUT : R_IN;
    n = 2;
  } else {
    kind = p[0] == '>' ? R_OUT : R_IN;
    n = 1;
  }
  push(lx, T_REDIR, NULL, kind);
  lx->p += n;
  return TRUE;
}

gboolean ptsim_shell_lex(Lexer *lx) {
  g_autoptr(GArray) pending = g_array_new(FALSE, FALSE, sizeof(PendingHeredoc));
  lx->pending = pending;
  gboolean ok = TRUE;
  while (ok && lx->p < lx->end) {
    char c = *lx->p;
    gsize left = (gsize)(lx->end - lx->p);
    if (c == ' ' || c == '\t' || c == '\r') {
      lx->p++;
    } else if (c == '\\' && left >= 2 && lx->p[1] == '\n') {
      lx->p += 2;
      lx->line++;
    } else if (c == '\n') {
      push(lx, T_NEWLINE, NULL, R_NONE);
      lx->line++;
      lx->p++;
      ok = read_heredocs(lx);
    } else if (c == ';' && left >= 2 && lx->p[1] == ';') {
      if (left >= 3 && lx->p[2] == '&')
        ok = fail(lx, lx->line, "';;&' (test the next case patterns too): not read by ptsim");
      push(lx, T_DSEMI, NULL, R_NONE);
      lx->p += 2;
    } else if (c == ';' && left >= 2 && lx->p[1] == '&') {
      ok = fail(lx, lx->line, "';&' (fall through to the next case item): not read by ptsim");
    } else if (c == ';' || (c == '&' && (left < 2 || (lx->p[1] != '&' && lx->p[1] != '>')))) {
      push(lx, T_NEWLINE, NULL, R_NONE);
      lx->p++;
    } else if (c == '&' && lx->p[1] == '&') {
      push(lx, T_AND, NULL, R_NONE);
      lx->p += 2;
    } else if (c == '|' && left >= 2 && lx->p[1] == '|') {
      push(lx, T_OR, NULL, R_NONE);
      lx->p += 2;
    } else if (c == '|') {
      push(lx, T_PIPE, NULL, R_NONE);
      lx->p += left >= 2 && lx->p[1] == '&' ? 2 : 1; /* |& pipes stderr too */
    } else if (c == '(' && left >= 2 && lx->p[1] == '(' && at_command_start(lx)) {
      int64_t line = lx->line;
      const char *e = match_close(lx->p + 2, lx->end, '(', ')', &lx->line);
      if (!e || e + 1 >= lx->end || e[1] != ')') {
        ok = fail(lx, line, "unterminated ((");
        break;
      }
      GArray *parts = ptsim_shell_parts_new();
      ptsim_shell_add_part(parts, P_ARITH, lx->p + 2, (gsize)(e - lx->p - 2), FALSE);
      Token t = {T_ARITH, parts, line, R_NONE};
      g_array_append_val(lx->tokens, t);
      lx->p = e + 2;
    } else if (c == '(' || c == ')') {
      push(lx, c == '(' ? T_LPAREN : T_RPAREN, NULL, R_NONE);
      lx->p++;
    } else if (c == '<' || c == '>' || c == '&') {
      ok = lex_redirection(lx);
    } else {
      GArray *parts = ptsim_shell_parts_new();
      int64_t line = lx->line;
      if (!ptsim_shell_lex_word(lx, parts)) {
        g_array_unref(parts);
        ok = FALSE;
        break;
      }
      if (parts->len == 0 || is_fd(parts, lx)) {
        g_array_unref(parts);
        continue;
      }
      Token t = {T_WORD, parts, line, R_NONE};
      g_array_append_val(lx->tokens, t);
      if (ends_assignment(parts) && lx->p < lx->end && *lx->p == '(') {
        push(lx, T_ARRAY_OPEN, NULL, R_NONE);
        lx->p++;
      }
    }
  }
  if (ok && pending->len > 0) ok = read_heredocs(lx); /* named on the last line */
  for (guint k = 0; k < pending->len; k++)
    g_free(g_array_index(pending, PendingHeredoc, k).delimiter);
  lx->pending = NULL;
  if (ok) push(lx, T_END, NULL, R_NONE);
  return ok;
}

GArray *ptsim_shell_tokens(const char *text, gsize len, const char *name, int64_t line,
                           PtsimShellScript *out, GError **error) {
  GArray *tokens = g_array_new(FALSE, FALSE, sizeof(Token));
  g_array_set_clear_func(tokens, ptsim_shell_token_clear);
  Lexer lx = {name, text, text + len, line, tokens, out, error, NULL};
  if (ptsim_shell_lex(&lx)) return tokens;
  g_array_unref(tokens);
  return NULL;
}
