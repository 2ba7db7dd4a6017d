/* shell_words.c — the words of a launch script: the lexer (quotes, escapes,
 * continuations, comments, $-expansions as parts that remember their
 * quoting) and bash's expansion of a word into fields (parameters,
 * defaults, arrays, arithmetic, word splitting).  The executor that uses
 * them is shell_script.c; the contract is in shell_script.h. */
#include <string.h>

#include "config.h"
#include "numbers.h"
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
  if (g_str_has_prefix(lx->p, "#SBATCH")) {
    g_autofree char *body = g_strndup(lx->p + 7, (gsize)(e - lx->p - 7));
    g_auto(GStrv) words = g_strsplit_set(g_strstrip(body), " \t", -1);
    for (char **w = words; *w; w++)
      if (**w) g_ptr_array_add(lx->out->sbatch, g_strdup(*w));
  }
  lx->p = e;
}

/* One word at lx->p; *parts receives it (empty when only a comment). */
static gboolean lex_word(Lexer *lx, GArray *parts) {
  while (lx->p < lx->end) {
    char c = *lx->p;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '&' || c == '|' ||
        c == '(' || c == ')')
      return TRUE;
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
          const char *e = memchr(lx->p + 1, '`', (gsize)(lx->end - lx->p - 1));
          if (!e) return fail(lx, start, "unterminated `");
          ptsim_shell_add_part(parts, P_CMD, lx->p + 1, (gsize)(e - lx->p - 1), TRUE);
          lx->p = e + 1;
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
      const char *e = memchr(lx->p + 1, '`', (gsize)(lx->end - lx->p - 1));
      if (!e) return fail(lx, lx->line, "unterminated `");
      ptsim_shell_add_part(parts, P_CMD, lx->p + 1, (gsize)(e - lx->p - 1), FALSE);
      lx->p = e + 1;
    } else {
      ptsim_shell_add_part(parts, P_LIT, lx->p, 1, FALSE);
      lx->p++;
    }
  }
  return TRUE;
}

static void push(Lexer *lx, TokType type, GArray *parts) {
  Token t = {type, parts, lx->line};
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

gboolean ptsim_shell_lex(Lexer *lx) {
  while (lx->p < lx->end) {
    char c = *lx->p;
    if (c == ' ' || c == '\t' || c == '\r') {
      lx->p++;
    } else if (c == '\\' && lx->p + 1 < lx->end && lx->p[1] == '\n') {
      lx->p += 2;
      lx->line++;
    } else if (c == '\n' || c == ';' || (c == '&' && (lx->p + 1 >= lx->end || lx->p[1] != '&'))) {
      push(lx, T_NEWLINE, NULL);
      lx->line += c == '\n';
      lx->p++;
    } else if (c == '&' || (c == '|' && lx->p + 1 < lx->end && lx->p[1] == '|')) {
      push(lx, c == '&' ? T_AND : T_OR, NULL);
      lx->p += 2;
    } else if (c == '|') {
      push(lx, T_PIPE, NULL);
      lx->p++;
    } else if (c == '(' || c == ')') {
      push(lx, c == '(' ? T_LPAREN : T_RPAREN, NULL);
      lx->p++;
    } else {
      GArray *parts = g_array_new(FALSE, FALSE, sizeof(Part));
      g_array_set_clear_func(parts, ptsim_shell_part_clear);
      int64_t line = lx->line;
      if (!lex_word(lx, parts)) {
        g_array_unref(parts);
        return FALSE;
      }
      if (parts->len == 0) {
        g_array_unref(parts);
        continue;
      }
      Token t = {T_WORD, parts, line};
      g_array_append_val(lx->tokens, t);
      if (ends_assignment(parts) && lx->p < lx->end && *lx->p == '(') {
        push(lx, T_ARRAY_OPEN, NULL);
        lx->p++;
      }
    }
  }
  push(lx, T_END, NULL);
  return TRUE;
}

GPtrArray *ptsim_shell_var_get(Run *r, const char *name) {
  return g_hash_table_lookup(r->out->vars, name);
}

void ptsim_shell_var_set(Run *r, const char *name, GPtrArray *values /* transfer full */) {
  g_hash_table_replace(r->out->vars, g_strdup(name), values);
}

GPtrArray *ptsim_shell_strv_new(void) { return g_ptr_array_new_with_free_func(g_free); }

void ptsim_shell_note(Run *r, int64_t line, const char *what) {
  g_ptr_array_add(r->out->notes,
                  g_strdup_printf("%s:%" G_GINT64_FORMAT ": %s", r->name, line, what));
}

gboolean ptsim_shell_spend(Run *r, int64_t line, gsize cost) {
  if (cost <= SHELL_EXPANSION_MAX - r->spent) {
    r->spent += cost;
    return TRUE;
  }
  r->spent = SHELL_EXPANSION_MAX;
  g_set_error(r->error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
              "%s:%" G_GINT64_FORMAT ": the script's expansions pass %" G_GSIZE_FORMAT
              " MiB in all: not a launch script ptsim reads (a variable that doubles on every "
              "line?)",
              r->name, line, SHELL_EXPANSION_MAX >> 20);
  return FALSE;
}

gboolean ptsim_shell_enter(Run *r, int64_t line, const char *what) {
  if (r->depth < SHELL_DEPTH_MAX) {
    r->depth++;
    return TRUE;
  }
  g_set_error(r->error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
              "%s:%" G_GINT64_FORMAT ": %s nested more than %d deep: not a launch script ptsim "
              "reads",
              r->name, line, what, SHELL_DEPTH_MAX);
  return FALSE;
}

static char *expand_text_nested(Run *r, const char *text, int64_t line);

/* TEXT lexed as one word and expanded without splitting ("" when empty):
 * a default's word or an arithmetic expression, inside the expansion that
 * holds it. */
static char *expand_text(Run *r, const char *text, int64_t line) {
  if (!ptsim_shell_enter(r, line, "${...} or $((...))")) return NULL;
  char *out = expand_text_nested(r, text, line);
  r->depth--;
  return out;
}

static char *expand_text_nested(Run *r, const char *text, int64_t line) {
  Lexer lx = {r->name, text, text + strlen(text), line, NULL, r->out, r->error};
  g_autoptr(GArray) parts = g_array_new(FALSE, FALSE, sizeof(Part));
  g_array_set_clear_func(parts, ptsim_shell_part_clear);
  g_autoptr(GPtrArray) fields = ptsim_shell_strv_new();
  /* a default may hold blanks ("${X:-a b}"): lex it piece by piece */
  while (lx.p < lx.end) {
    if (!lex_word(&lx, parts)) return NULL;
    if (lx.p < lx.end) {
      ptsim_shell_add_part(parts, P_LIT, lx.p, 1, TRUE);
      lx.p++;
    }
  }
  if (!ptsim_shell_expand_word(r, parts, FALSE, line, fields)) return NULL;
  return g_strdup(fields->len > 0 ? (const char *)fields->pdata[0] : "");
}

/* A tiny integer calculator for $(( )): + - * / % and parentheses over
 * numbers and variable names, in int64; what bash would wrap (overflow)
 * is refused. */
typedef struct {
  const char *p;
  Run *r;
  const char *why; /* NULL: fine so far; else why the expression is refused */
  int depth;       /* of parentheses and unary signs */
} Calc;

static int64_t calc_sum(Calc *c);

static int64_t calc_fail(Calc *c, const char *why) {
  if (!c->why) c->why = why;
  return 0;
}

static void calc_blank(Calc *c) {
  while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n') c->p++;
}

static int64_t calc_atom(Calc *c);

static int64_t calc_atom_nested(Calc *c) {
  calc_blank(c);
  if (*c->p == '(') {
    c->p++;
    int64_t v = calc_sum(c);
    calc_blank(c);
    if (*c->p == ')')
      c->p++;
    else
      calc_fail(c, "a '(' without its ')'");
    return v;
  }
  if (*c->p == '-' || *c->p == '+') {
    gboolean neg = *c->p == '-';
    c->p++;
    int64_t v = calc_atom(c);
    if (neg && v == G_MININT64) return calc_fail(c, "overflows 64-bit integers");
    return neg ? -v : v;
  }
  if (g_ascii_isdigit(*c->p)) {
    const char *s = c->p;
    while (g_ascii_isdigit(*c->p)) c->p++;
    g_autofree char *digits = g_strndup(s, (gsize)(c->p - s));
    int64_t v = 0;
    if (!ptsim_number_parse_int64(digits, &v)) return calc_fail(c, "overflows 64-bit integers");
    return v;
  }
  if (ptsim_shell_is_name_start(*c->p)) {
    const char *s = c->p;
    while (ptsim_shell_is_name_char(*c->p)) c->p++;
    g_autofree char *name = g_strndup(s, (gsize)(c->p - s));
    GPtrArray *v = ptsim_shell_var_get(c->r, name);
    int64_t value = 0;
    if (v && v->len > 0 && !ptsim_number_parse_int64(v->pdata[0], &value))
      return calc_fail(c, "a variable that is not an integer");
    return value;
  }
  return calc_fail(c, "not an integer expression ptsim can evaluate");
}

static int64_t calc_atom(Calc *c) {
  if (c->why) return 0;
  if (c->depth >= SHELL_DEPTH_MAX) return calc_fail(c, "nested too deep");
  c->depth++;
  int64_t v = calc_atom_nested(c);
  c->depth--;
  return v;
}

static int64_t calc_product(Calc *c) {
  int64_t v = calc_atom(c);
  while (!c->why) {
    calc_blank(c);
    char op = *c->p;
    if (op != '*' && op != '/' && op != '%') return v;
    c->p++;
    int64_t w = calc_atom(c);
    if (op == '*' && __builtin_mul_overflow(v, w, &v))
      return calc_fail(c, "overflows 64-bit integers");
    if (op == '*') continue;
    if (w == 0) return calc_fail(c, "division by zero");
    if (v == G_MININT64 && w == -1) return calc_fail(c, "overflows 64-bit integers");
    v = op == '/' ? v / w : v % w;
  }
  return 0;
}

static int64_t calc_sum(Calc *c) {
  int64_t v = calc_product(c);
  while (!c->why) {
    calc_blank(c);
    if (*c->p != '+' && *c->p != '-') return v;
    gboolean minus = *c->p == '-';
    c->p++;
    int64_t w = calc_product(c);
    if (minus ? __builtin_sub_overflow(v, w, &v) : __builtin_add_overflow(v, w, &v))
      return calc_fail(c, "overflows 64-bit integers");
  }
  return 0;
}

/* Appends what one ${...} / $NAME gives to *values; *each: one word per
 * element even inside quotes ([@]). */
static gboolean expand_param(Run *r, const Part *part, int64_t line, GPtrArray *values,
                             gboolean *each) {
  const char *t = part->text;
  *each = FALSE;
  if (part->kind == P_CMD) {
    ptsim_shell_note(r, line, "command substitution is not run (taken as empty)");
    return TRUE;
  }
  if (part->kind == P_ARITH) {
    g_autofree char *text = expand_text(r, t, line);
    if (!text) return FALSE;
    Calc c = {text, r, NULL, 0};
    int64_t v = calc_sum(&c);
    calc_blank(&c);
    if (c.why || *c.p) {
      g_set_error(r->error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s:%" G_GINT64_FORMAT ": $((%s)): %s", r->name, line, part->text,
                  c.why ? c.why : "not an integer expression ptsim can evaluate");
      return FALSE;
    }
    g_ptr_array_add(values, g_strdup_printf("%" G_GINT64_FORMAT, v));
    return TRUE;
  }
  gboolean length = part->kind == P_BRACE && t[0] == '#' && t[1] != '\0';
  if (length) t++;
  const char *e = t;
  if (ptsim_shell_is_name_start(*e))
    while (ptsim_shell_is_name_char(*e)) e++;
  else if (*e)
    e++; /* a positional or special parameter */
  g_autofree char *name = g_strndup(t, (gsize)(e - t));
  GPtrArray *v = g_ascii_isalpha(name[0]) || name[0] == '_' ? ptsim_shell_var_get(r, name) : NULL;
  g_autoptr(GPtrArray) sel = ptsim_shell_strv_new();
  if (*e == '[') {
    const char *close = strchr(e, ']');
    if (!close) goto bad;
    g_autofree char *index = g_strndup(e + 1, (gsize)(close - e - 1));
    if (strcmp(index, "@") == 0 || strcmp(index, "*") == 0) {
      *each = strcmp(index, "@") == 0;
      for (guint i = 0; v && i < v->len; i++) g_ptr_array_add(sel, g_strdup(v->pdata[i]));
    } else {
      int64_t i = 0;
      if (!ptsim_number_parse_int64(index, &i)) goto bad;
      if (v && i >= 0 && i < (int64_t)v->len) g_ptr_array_add(sel, g_strdup(v->pdata[i]));
    }
    e = close + 1;
  } else if (v && v->len > 0) {
    g_ptr_array_add(sel, g_strdup(v->pdata[0]));
  }
  gboolean set = sel->len > 0, null = !set || (sel->len == 1 && !*(char *)sel->pdata[0]);
  if (length) {
    if (*e) goto bad;
    g_ptr_array_add(values, g_strdup_printf("%zu", sel->len > 0 ? strlen(sel->pdata[0]) : 0));
    return TRUE;
  }
  if (*e) { /* an operator and its word */
    gboolean colon = *e == ':';
    char op = colon ? e[1] : e[0];
    const char *word = e + (colon ? 2 : 1);
    gboolean use = colon ? null : !set;
    if (op == '-' || op == '=') {
      if (use) {
        char *d = expand_text(r, word, line);
        if (!d) return FALSE;
        if (op == '=') {
          GPtrArray *nv = ptsim_shell_strv_new();
          g_ptr_array_add(nv, g_strdup(d));
          ptsim_shell_var_set(r, name, nv);
        }
        g_ptr_array_set_size(sel, 0);
        g_ptr_array_add(sel, d);
        *each = FALSE;
      }
    } else if (op == '+') {
      g_ptr_array_set_size(sel, 0);
      if (!use) {
        char *d = expand_text(r, word, line);
        if (!d) return FALSE;
        g_ptr_array_add(sel, d);
      }
    } else if (op != '?') {
      goto bad;
    }
  }
  for (guint i = 0; i < sel->len; i++) g_ptr_array_add(values, g_strdup(sel->pdata[i]));
  return TRUE;
bad:
  g_set_error(r->error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
              "%s:%" G_GINT64_FORMAT ": ${%s}: an expansion ptsim does not understand", r->name,
              line, part->text);
  return FALSE;
}

/* bash's expansion of one word into fields: quoted text stays whole,
 * unquoted expansions split on blanks (when `split`), "${A[@]}" gives one
 * field per element; a word of unquoted empty expansions gives none. */
gboolean ptsim_shell_expand_word(Run *r, GArray *parts, gboolean split, int64_t line,
                                 GPtrArray *fields) {
  g_autoptr(GString) cur = g_string_new(NULL);
  gboolean have = FALSE; /* cur is a field (even if empty) */
  for (guint i = 0; i < parts->len; i++) {
    const Part *p = &g_array_index(parts, Part, i);
    if (p->kind == P_LIT) {
      if (!ptsim_shell_spend(r, line, p->len)) return FALSE;
      g_string_append(cur, p->text);
      have = have || p->quoted || p->text[0];
      continue;
    }
    g_autoptr(GPtrArray) values = ptsim_shell_strv_new();
    gboolean each;
    if (!expand_param(r, p, line, values, &each)) return FALSE;
    gsize cost = values->len;
    for (guint k = 0; k < values->len; k++) cost += strlen(values->pdata[k]);
    if (!ptsim_shell_spend(r, line, cost)) return FALSE;
    if (p->quoted) {
      have = TRUE;
      for (guint k = 0; k < values->len; k++) {
        if (k > 0) {
          if (each) {
            g_ptr_array_add(fields, g_strdup(cur->str));
            g_string_truncate(cur, 0);
          } else {
            g_string_append_c(cur, ' ');
          }
        }
        g_string_append(cur, values->pdata[k]);
      }
      continue;
    }
    for (guint k = 0; k < values->len; k++) {
      const char *v = values->pdata[k];
      if (!split) {
        if (k > 0) g_string_append_c(cur, ' ');
        g_string_append(cur, v);
        have = have || v[0];
        continue;
      }
      if (k > 0 && have) { /* elements are separate words */
        g_ptr_array_add(fields, g_strdup(cur->str));
        g_string_truncate(cur, 0);
        have = FALSE;
      }
      for (const char *c = v; *c;) {
        if (g_ascii_isspace(*c)) {
          if (have) g_ptr_array_add(fields, g_strdup(cur->str));
          g_string_truncate(cur, 0);
          have = FALSE;
          while (g_ascii_isspace(*c)) c++;
        } else {
          g_string_append_c(cur, *c++);
          have = TRUE;
        }
      }
    }
  }
  if (have || !split) g_ptr_array_add(fields, g_strdup(cur->str));
  return TRUE;
}
