/* shell_words.c — bash's expansion of one word of a launch script into
 * fields: parameters (variables, array elements, the positional parameters
 * $1.. $# $@ $* and $? $0), their operators (defaults, lengths, pattern
 * removal and replacement, substrings, case), arithmetic (shell_arith.c),
 * word splitting and "${A[@]}" as one field per element; and bash's
 * pattern matching, which case and the removal operators use.  The lexer
 * is shell_lex.c, the executor shell_script.c; the contract shell_script.h. */
#include <stdarg.h>
#include <string.h>

#include "config.h"
#include "numbers.h"
#include "shell_int.h"

GPtrArray *ptsim_shell_var_get(Run *r, const char *name) {
  return g_hash_table_lookup(r->sh->out->vars, name);
}

void ptsim_shell_var_set(Run *r, const char *name, GPtrArray *values /* transfer full */) {
  g_hash_table_replace(r->sh->out->vars, g_strdup(name), values);
}

void ptsim_shell_var_set_string(Run *r, const char *name, const char *value) {
  GPtrArray *v = ptsim_shell_strv_new();
  g_ptr_array_add(v, g_strdup(value));
  ptsim_shell_var_set(r, name, v);
}

GPtrArray *ptsim_shell_strv_new(void) { return g_ptr_array_new_with_free_func(g_free); }

void ptsim_shell_note(Run *r, int64_t line, const char *what) {
  g_ptr_array_add(r->sh->out->notes,
                  g_strdup_printf("%s:%" G_GINT64_FORMAT ": %s", r->name, line, what));
}

gboolean ptsim_shell_fail(Run *r, int64_t line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(r->error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s:%" G_GINT64_FORMAT ": %s",
              r->name, line, what);
  return FALSE;
}

gboolean ptsim_shell_spend(Run *r, int64_t line, gsize cost) {
  if (cost <= SHELL_EXPANSION_MAX - r->sh->spent) {
    r->sh->spent += cost;
    return TRUE;
  }
  r->sh->spent = SHELL_EXPANSION_MAX;
  return ptsim_shell_fail(r, line,
                          "the script's expansions pass %" G_GSIZE_FORMAT
                          " MiB in all: not a launch script ptsim reads (a variable that doubles "
                          "on every line?)",
                          SHELL_EXPANSION_MAX >> 20);
}

gboolean ptsim_shell_enter(Run *r, int64_t line, const char *what) {
  if (r->sh->depth < SHELL_DEPTH_MAX) {
    r->sh->depth++;
    return TRUE;
  }
  return ptsim_shell_fail(r, line, "%s nested more than %d deep: not a launch script ptsim reads",
                          what, SHELL_DEPTH_MAX);
}

/* ---- pattern matching ---- */

/* One character of PATTERN at *p against C: advances *p past it. */
static gboolean match_one(const char **p, char c) {
  const char *q = *p;
  if (*q == '?') {
    *p = q + 1;
    return TRUE;
  }
  if (*q == '[') {
    const char *k = q + 1;
    gboolean negate = *k == '!' || *k == '^';
    if (negate) k++;
    const char *close = k + (*k == ']'); /* a ']' first is a member */
    while (*close && *close != ']') close++;
    if (*close == ']') {
      gboolean in = FALSE;
      for (const char *m = k; m < close; m++) {
        if (m + 2 < close && m[1] == '-') {
          in = in || (c >= m[0] && c <= m[2]);
          m += 2;
        } else {
          in = in || c == *m;
        }
      }
      *p = close + 1;
      return in != negate;
    } /* an unterminated [ is a literal */
  }
  if (*q == '\\' && q[1]) q++;
  *p = q + 1;
  return *q == c;
}

gboolean ptsim_shell_glob_match(const char *pattern, const char *s) {
  const char *p = pattern, *star = NULL, *resume = NULL;
  while (*s) {
    if (*p == '*') {
      while (*p == '*') p++;
      star = p;
      resume = s;
      continue;
    }
    const char *next = p;
    if (*p && match_one(&next, *s)) {
      p = next;
      s++;
      continue;
    }
    if (!star) return FALSE;
    p = star;
    s = ++resume;
  }
  while (*p == '*') p++;
  return *p == '\0';
}

/* ---- expansion ---- */

static char *expand_text_nested(Run *r, const char *text, int64_t line);

char *ptsim_shell_expand_text(Run *r, const char *text, int64_t line) {
  if (!ptsim_shell_enter(r, line, "${...} or $((...))")) return NULL;
  char *out = expand_text_nested(r, text, line);
  r->sh->depth--;
  return out;
}

static char *expand_text_nested(Run *r, const char *text, int64_t line) {
  Lexer lx = {r->name, text, text + strlen(text), line, NULL, NULL, r->error, NULL};
  g_autoptr(GArray) parts = ptsim_shell_parts_new();
  /* a default may hold blanks and operators ("${X:-a b}"): lex it piece
   * by piece, the rest kept as it is */
  while (lx.p < lx.end) {
    if (!ptsim_shell_lex_word(&lx, parts)) return NULL;
    if (lx.p < lx.end) {
      ptsim_shell_add_part(parts, P_LIT, lx.p, 1, TRUE);
      lx.p++;
    }
  }
  return ptsim_shell_expand_string(r, parts, line);
}

/* Bounds the pattern operators, whose cost is quadratic in the value. */
static gboolean pattern_cost(Run *r, int64_t line, const char *value, const char *pattern) {
  gsize n = strlen(value) + 1, m = strlen(pattern) + 1;
  if (n <= 4096 && n * n * m <= ((gsize)1 << 26)) return ptsim_shell_spend(r, line, n);
  return ptsim_shell_fail(r, line,
                          "a pattern operator over %" G_GSIZE_FORMAT
                          " bytes: more than ptsim evaluates in a launch script",
                          n - 1);
}

/* ${V#p} ${V##p} ${V%p} ${V%%p}: V with its shortest/longest matching
 * prefix or suffix removed. */
static char *remove_match(const char *v, const char *pattern, gboolean suffix, gboolean longest) {
  gsize n = strlen(v);
  for (gsize k = 0; k <= n; k++) {
    gsize len = longest ? n - k : k; /* the length of the part tried */
    g_autofree char *part = suffix ? g_strdup(v + n - len) : g_strndup(v, len);
    if (ptsim_shell_glob_match(pattern, part))
      return suffix ? g_strndup(v, n - len) : g_strdup(v + len);
  }
  return g_strdup(v);
}

/* ${V/p/s} (first), ${V//p/s} (all), ${V/#p/s} (at the start), ${V/%p/s}
 * (at the end): the longest match at each place. */
static char *replace_match(const char *v, const char *pattern, const char *with, char mode) {
  gsize n = strlen(v);
  g_autoptr(GString) out = g_string_new(NULL);
  gsize i = 0;
  gboolean done = FALSE;
  while (i <= n) {
    gsize found = 0;
    gboolean hit = FALSE;
    if (!done && (mode != '#' || i == 0)) {
      for (gsize len = n - i; len > 0 && !hit; len--) {
        if (mode == '%' && len != n - i) break;
        g_autofree char *part = g_strndup(v + i, len);
        if (ptsim_shell_glob_match(pattern, part)) {
          hit = TRUE;
          found = len;
        }
      }
    }
    if (hit) {
      g_string_append(out, with);
      i += found;
      done = mode != '/';
      continue;
    }
    if (i < n) g_string_append_c(out, v[i]);
    i++;
  }
  return g_string_free(g_steal_pointer(&out), FALSE);
}

/* The values a parameter NAME names (with its [subscript] at *e, moved
 * past it), into SEL; *each: "$@" / "${A[@]}" (a field per element). */
static gboolean select_values(Run *r, const char *name, const char **e, int64_t line,
                              GPtrArray *sel, gboolean *each, gboolean *elements) {
  if (g_ascii_isdigit(name[0])) {
    int64_t k = 0;
    if (!ptsim_number_parse_int64(name, &k)) k = G_MAXINT32;
    if (k == 0)
      g_ptr_array_add(sel, g_strdup(r->arg0 ? r->arg0 : ""));
    else if (r->args && k <= (int64_t)r->args->len)
      g_ptr_array_add(sel, g_strdup(r->args->pdata[k - 1]));
    return TRUE;
  }
  if (name[0] == '@' || name[0] == '*') {
    *each = name[0] == '@';
    *elements = TRUE;
    for (guint i = 0; r->args && i < r->args->len; i++)
      g_ptr_array_add(sel, g_strdup(r->args->pdata[i]));
    return TRUE;
  }
  if (name[0] == '#') {
    g_ptr_array_add(sel, g_strdup_printf("%u", r->args ? r->args->len : 0u));
    return TRUE;
  }
  if (name[0] == '?') {
    g_ptr_array_add(sel, g_strdup_printf("%d", r->status));
    return TRUE;
  }
  if (name[0] == '$') { /* a process id: any will do */
    g_ptr_array_add(sel, g_strdup("4242"));
    return TRUE;
  }
  if (!ptsim_shell_is_name_start(name[0])) return TRUE; /* $! $-: unset */
  GPtrArray *v = ptsim_shell_var_get(r, name);
  if (**e != '[') {
    if (v && v->len > 0) g_ptr_array_add(sel, g_strdup(v->pdata[0]));
    return TRUE;
  }
  const char *close = strchr(*e, ']');
  if (!close) return FALSE;
  g_autofree char *index = g_strndup(*e + 1, (gsize)(close - *e - 1));
  *e = close + 1;
  if (strcmp(index, "@") == 0 || strcmp(index, "*") == 0) {
    *each = index[0] == '@';
    *elements = TRUE;
    for (guint i = 0; v && i < v->len; i++) g_ptr_array_add(sel, g_strdup(v->pdata[i]));
    return TRUE;
  }
  g_autofree char *text = ptsim_shell_expand_text(r, index, line);
  int64_t i = 0;
  if (!text || !ptsim_shell_arith(r, text, line, "an array index", &i)) return FALSE;
  if (v && i < 0) i += (int64_t)v->len;
  if (v && i >= 0 && i < (int64_t)v->len) g_ptr_array_add(sel, g_strdup(v->pdata[i]));
  return TRUE;
}

/* ${V:offset} and ${V:offset:length} of one value, or of the elements. */
static gboolean substring(Run *r, const char *spec, int64_t line, gboolean elements,
                          GPtrArray *sel) {
  const char *colon = strchr(spec, ':');
  g_autofree char *off_text = colon ? g_strndup(spec, (gsize)(colon - spec)) : g_strdup(spec);
  g_autofree char *a = ptsim_shell_expand_text(r, off_text, line);
  g_autofree char *b = colon ? ptsim_shell_expand_text(r, colon + 1, line) : NULL;
  int64_t off = 0, len = G_MAXINT64;
  if (!a || (colon && !b) || !ptsim_shell_arith(r, a, line, "a substring offset", &off) ||
      (colon && !ptsim_shell_arith(r, b, line, "a substring length", &len)))
    return FALSE;
  if (elements) { /* a slice of the elements ($@ counts from $1: offset 1 is the first) */
    int64_t n = (int64_t)sel->len, from = off < 0 ? MAX(n + off, 0) : MIN(off, n);
    int64_t to = len < 0 ? MAX(n + len, from) : (len > n - from ? n : from + len);
    g_autoptr(GPtrArray) keep = ptsim_shell_strv_new();
    for (int64_t i = from; i < to; i++) g_ptr_array_add(keep, g_strdup(sel->pdata[i]));
    g_ptr_array_set_size(sel, 0);
    for (guint i = 0; i < keep->len; i++) g_ptr_array_add(sel, g_strdup(keep->pdata[i]));
    return TRUE;
  }
  for (guint k = 0; k < sel->len; k++) {
    char *v = sel->pdata[k];
    int64_t n = (int64_t)strlen(v), from = off < 0 ? MAX(n + off, 0) : MIN(off, n);
    int64_t to = len < 0 ? MAX(n + len, from) : (len > n - from ? n : from + len);
    sel->pdata[k] = g_strndup(v + from, (gsize)(to - from));
    g_free(v);
  }
  return TRUE;
}

/* The operator of ${NAME<op>word} at E applied to SEL (set and null as
 * bash tests them); *each cleared when a default replaces the values. */
static gboolean apply_operator(Run *r, const char *name, const char *e, int64_t line,
                               gboolean elements, GPtrArray *sel, gboolean *each, gboolean *bad) {
  gboolean set = sel->len > 0, null = !set || (sel->len == 1 && !*(char *)sel->pdata[0]);
  gboolean colon = *e == ':';
  char op = colon ? e[1] : e[0];
  if (colon && !strchr("-=+?", op)) return substring(r, e + 1, line, elements, sel);
  const char *word = e + (colon ? 2 : 1);
  gboolean use = colon ? null : !set;
  if (op == '-' || op == '=') {
    if (!use) return TRUE;
    char *d = ptsim_shell_expand_text(r, word, line);
    if (!d) return FALSE;
    if (op == '=' && ptsim_shell_is_name_start(name[0])) ptsim_shell_var_set_string(r, name, d);
    g_ptr_array_set_size(sel, 0);
    g_ptr_array_add(sel, d);
    *each = FALSE;
    return TRUE;
  }
  if (op == '+') {
    g_ptr_array_set_size(sel, 0);
    if (use) return TRUE;
    char *d = ptsim_shell_expand_text(r, word, line);
    if (!d) return FALSE;
    g_ptr_array_add(sel, d);
    return TRUE;
  }
  if (op == '?') return TRUE; /* the error bash would print needs the value unset */
  if (op == '#' || op == '%') {
    gboolean longest = e[1] == op;
    g_autofree char *pattern = ptsim_shell_expand_text(r, e + (longest ? 2 : 1), line);
    if (!pattern) return FALSE;
    for (guint k = 0; k < sel->len; k++) {
      char *v = sel->pdata[k];
      if (!pattern_cost(r, line, v, pattern)) return FALSE;
      sel->pdata[k] = remove_match(v, pattern, op == '%', longest);
      g_free(v);
    }
    return TRUE;
  }
  if (op == '/') {
    char mode = strchr("/#%", e[1]) && e[1] ? e[1] : 0;
    const char *p = e + (mode ? 2 : 1), *slash = p;
    while (*slash && *slash != '/') slash += slash[0] == '\\' && slash[1] ? 2 : 1;
    if (!*slash) slash = NULL;
    g_autofree char *ptext = slash ? g_strndup(p, (gsize)(slash - p)) : g_strdup(p);
    g_autofree char *pattern = ptsim_shell_expand_text(r, ptext, line);
    g_autofree char *with = ptsim_shell_expand_text(r, slash ? slash + 1 : "", line);
    if (!pattern || !with) return FALSE;
    if (!pattern[0]) return TRUE;
    for (guint k = 0; k < sel->len; k++) {
      char *v = sel->pdata[k];
      if (!pattern_cost(r, line, v, pattern) || !ptsim_shell_spend(r, line, strlen(with)))
        return FALSE;
      sel->pdata[k] = replace_match(v, pattern, with, mode ? mode : '1');
      g_free(v);
    }
    return TRUE;
  }
  if (op == '^' || op == ',') {
    for (guint k = 0; k < sel->len; k++) {
      char *v = sel->pdata[k];
      gboolean all = e[1] == op;
      for (char *c = v; *c; c++) {
        *c = op == '^' ? g_ascii_toupper(*c) : g_ascii_tolower(*c);
        if (!all) break;
      }
    }
    return TRUE;
  }
  *bad = TRUE;
  return TRUE;
}

/* Appends what one ${...} / $NAME / $((...)) gives to *values; *each: one
 * field per element even inside quotes ("$@", "${A[@]}"). */
static gboolean expand_param(Run *r, const Part *part, int64_t line, GPtrArray *values,
                             gboolean *each) {
  const char *t = part->text;
  *each = FALSE;
  if (part->kind == P_CMD) {
    ptsim_shell_note(r, line, "command substitution is not run (taken as empty)");
    return TRUE;
  }
  if (part->kind == P_ARITH) {
    g_autofree char *text = ptsim_shell_expand_text(r, t, line);
    int64_t v = 0;
    if (!text) return FALSE;
    g_autofree char *what = g_strdup_printf("$((%s))", part->text);
    if (!ptsim_shell_arith(r, text, line, what, &v)) return FALSE;
    g_ptr_array_add(values, g_strdup_printf("%" G_GINT64_FORMAT, v));
    return TRUE;
  }
  gboolean length = part->kind == P_BRACE && t[0] == '#' && t[1] != '\0' && t[1] != '-' &&
                    t[1] != '=' && t[1] != '+' && t[1] != '?' && t[1] != ':';
  gboolean indirect = part->kind == P_BRACE && t[0] == '!' && t[1] != '\0';
  if (length || indirect) t++;
  const char *e = t;
  if (ptsim_shell_is_name_start(*e))
    while (ptsim_shell_is_name_char(*e)) e++;
  else if (g_ascii_isdigit(*e) && part->kind == P_BRACE)
    while (g_ascii_isdigit(*e)) e++;
  else if (*e)
    e++; /* a special parameter: @ * # ? $ ! - or one digit */
  g_autofree char *name = g_strndup(t, (gsize)(e - t));
  if (name[0] == '\0') goto bad;
  if (indirect) { /* ${!NAME}: the variable NAME's value names */
    if (!ptsim_shell_is_name_start(name[0]) || *e) goto bad;
    GPtrArray *v = ptsim_shell_var_get(r, name);
    const char *target = v && v->len ? v->pdata[0] : "";
    g_free(name);
    name = g_strdup(target);
    if (name[0] && !ptsim_shell_is_name_start(name[0]) && !g_ascii_isdigit(name[0])) goto bad;
  }
  g_autoptr(GPtrArray) sel = ptsim_shell_strv_new();
  gboolean elements = FALSE;
  if (name[0] && !select_values(r, name, &e, line, sel, each, &elements)) {
    if (r->error && *r->error) return FALSE;
    goto bad;
  }
  if (elements && (name[0] == '@' || name[0] == '*') && *e == ':' && !strchr("-=+?", e[1]))
    g_ptr_array_insert(sel, 0, g_strdup(r->arg0 ? r->arg0 : "")); /* ${@:N} counts $0 */
  if (length) {
    if (*e) goto bad;
    gboolean count = elements || name[0] == '@' || name[0] == '*';
    g_ptr_array_add(values, g_strdup_printf("%zu", count ? (size_t)sel->len
                                                         : (sel->len ? strlen(sel->pdata[0]) : 0)));
    *each = FALSE;
    return TRUE;
  }
  if (*e) {
    gboolean bad_op = FALSE;
    if (!apply_operator(r, name, e, line, elements, sel, each, &bad_op)) return FALSE;
    if (bad_op) goto bad;
  }
  for (guint i = 0; i < sel->len; i++) g_ptr_array_add(values, g_strdup(sel->pdata[i]));
  return TRUE;
bad:
  return ptsim_shell_fail(r, line, "${%s}: an expansion ptsim does not understand", part->text);
}

gboolean ptsim_shell_expand_word(Run *r, GArray *parts, gboolean split, int64_t line,
                                 GPtrArray *fields) {
  g_autoptr(GString) cur = g_string_new(NULL);
  gboolean have = FALSE;        /* cur is a field (even if empty) */
  gboolean empty_quote = FALSE; /* "" or '' seen: a field even if empty ... */
  gboolean each_empty = FALSE;  /* ... unless it held a "$@" of nothing */
  for (guint i = 0; i < parts->len; i++) {
    const Part *p = &g_array_index(parts, Part, i);
    if (p->kind == P_LIT) {
      if (!ptsim_shell_spend(r, line, p->len)) return FALSE;
      g_string_append(cur, p->text);
      if (p->quoted && p->len == 0)
        empty_quote = TRUE;
      else
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
      if (each && values->len == 0) {
        each_empty = TRUE;
        continue;
      }
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
  if (have || (empty_quote && !each_empty) || !split) g_ptr_array_add(fields, g_strdup(cur->str));
  return TRUE;
}

char *ptsim_shell_expand_string(Run *r, GArray *parts, int64_t line) {
  g_autoptr(GPtrArray) fields = ptsim_shell_strv_new();
  if (!ptsim_shell_expand_word(r, parts, FALSE, line, fields)) return NULL;
  g_ptr_array_add(fields, NULL);
  return g_strjoinv(" ", (char **)fields->pdata);
}

/* TEXT with the characters patterns give a meaning escaped. */
static void append_escaped(GString *out, const char *text) {
  for (const char *c = text; *c; c++) {
    if (strchr("*?[]\\", *c)) g_string_append_c(out, '\\');
    g_string_append_c(out, *c);
  }
}

char *ptsim_shell_expand_pattern(Run *r, GArray *parts, int64_t line) {
  g_autoptr(GString) out = g_string_new(NULL);
  for (guint i = 0; i < parts->len; i++) {
    const Part *p = &g_array_index(parts, Part, i);
    if (p->kind == P_LIT) {
      if (p->quoted)
        append_escaped(out, p->text);
      else
        g_string_append(out, p->text);
      continue;
    }
    g_autoptr(GArray) one = ptsim_shell_parts_new();
    ptsim_shell_add_part(one, p->kind, p->text, p->len, p->quoted);
    g_autofree char *v = ptsim_shell_expand_string(r, one, line);
    if (!v) return NULL;
    if (p->quoted)
      append_escaped(out, v);
    else
      g_string_append(out, v);
  }
  return g_string_free(g_steal_pointer(&out), FALSE);
}
