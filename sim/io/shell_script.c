/* shell_script.c — a symbolic run of a launch script; see shell_script.h.
 *
 * The lexer and word expansion are in shell_words.c; this file walks the
 * tokens statement by statement, keeping the variables, evaluating
 * conditions and expanding the words of each command.  Commands are never
 * run; the one that starts the training is recorded. */
#include <string.h>

#include "config.h"
#include "numbers.h"
#include "shell_int.h"

/* ---- the executor ---- */

static Token *peek(Run *r) { return &g_array_index(r->tokens, Token, r->pos); }

/* The unquoted literal a word is, or NULL (keywords, operators of [[ ]]). */
static const char *plain(const Token *t) {
  if (t->type != T_WORD || t->parts->len != 1) return NULL;
  const Part *p = &g_array_index(t->parts, Part, 0);
  return p->kind == P_LIT && !p->quoted ? p->text : NULL;
}

static gboolean is_keyword(const Token *t, const char *word) {
  const char *w = plain(t);
  return w && strcmp(w, word) == 0;
}

static void skip_newlines(Run *r) {
  while (peek(r)->type == T_NEWLINE) r->pos++;
}

/* One primary of a condition (after its '!'s), over words [from, to). */
static gboolean test_primary(GPtrArray *w, guint from, guint to, gboolean *known) {
  const char *a = w->pdata[from];
  if (to - from == 1) return a[0] != '\0';
  if (to - from == 2) {
    const char *b = w->pdata[from + 1];
    if (strcmp(a, "-z") == 0) return b[0] == '\0';
    if (strcmp(a, "-n") == 0) return b[0] != '\0';
    *known = FALSE; /* file tests and the like: not evaluated */
    return FALSE;
  }
  if (to - from == 3) {
    const char *op = w->pdata[from + 1], *b = w->pdata[from + 2];
    int64_t x, y;
    if (strcmp(op, "==") == 0 || strcmp(op, "=") == 0) return strcmp(a, b) == 0;
    if (strcmp(op, "!=") == 0) return strcmp(a, b) != 0;
    if (op[0] == '-' && ptsim_number_parse_int64(a, &x) && ptsim_number_parse_int64(b, &y)) {
      if (strcmp(op, "-eq") == 0) return x == y;
      if (strcmp(op, "-ne") == 0) return x != y;
      if (strcmp(op, "-lt") == 0) return x < y;
      if (strcmp(op, "-le") == 0) return x <= y;
      if (strcmp(op, "-gt") == 0) return x > y;
      if (strcmp(op, "-ge") == 0) return x >= y;
    }
  }
  *known = FALSE;
  return FALSE;
}

static gboolean is_word(GPtrArray *w, guint i, const char *a, const char *b) {
  return strcmp(w->pdata[i], a) == 0 || strcmp(w->pdata[i], b) == 0;
}

/* A condition of [[ ]], [ ] or test, over expanded words [from, to): '!'
 * binds to its primary, && before ||, both short-circuit (so a file test
 * that is not reached does not make the result unknown).  In one pass: a
 * chain of ten thousand conditions costs ten thousand steps. */
static gboolean test_words(GPtrArray *w, guint from, guint to, gboolean *known) {
  gboolean any = FALSE, all = TRUE; /* of the || terms so far; of this term's && factors */
  guint i = from;
  while (i <= to) {
    guint start = i;
    gboolean negate = FALSE;
    while (start < to && strcmp(w->pdata[start], "!") == 0) {
      negate = !negate;
      start++;
    }
    guint end = start;
    while (end < to && !is_word(w, end, "&&", "-a") && !is_word(w, end, "||", "-o")) end++;
    if (!any && all) /* this factor decides something */
      all = start < end && (test_primary(w, start, end, known) != negate);
    if (end == to || is_word(w, end, "||", "-o")) {
      any = any || all;
      all = TRUE;
    }
    i = end + 1;
  }
  return any;
}

/* NAME=... / NAME+=... at the start of an unquoted word: the name's length
 * and whether it appends; 0 when the word is not an assignment. */
static gsize assignment_name(const Token *t, gboolean *append) {
  *append = FALSE;
  if (t->type != T_WORD) return 0;
  const Part *p = &g_array_index(t->parts, Part, 0);
  if (p->kind != P_LIT || p->quoted || !ptsim_shell_is_name_start(p->text[0])) return 0;
  gsize n = 1;
  while (ptsim_shell_is_name_char(p->text[n])) n++;
  *append = p->text[n] == '+' && p->text[n + 1] == '=';
  return p->text[n] == '=' || *append ? n : 0;
}

/* Applies the assignment word at r->pos (and its array, if one follows). */
static gboolean assign(Run *r, gboolean run_it) {
  Token *t = peek(r);
  gboolean append = FALSE;
  gsize n = assignment_name(t, &append);
  const Part *first = &g_array_index(t->parts, Part, 0);
  g_autofree char *name = g_strndup(first->text, n);
  g_autoptr(GPtrArray) values = ptsim_shell_strv_new();
  gboolean array = FALSE;
  r->pos++;
  if (peek(r)->type == T_ARRAY_OPEN) {
    array = TRUE;
    int64_t line = peek(r)->line;
    r->pos++;
    for (;;) {
      Token *e = peek(r);
      if (e->type == T_RPAREN) break;
      if (e->type == T_END) {
        g_set_error(r->error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                    "%s:%" G_GINT64_FORMAT ": the array %s=( has no closing )", r->name, line,
                    name);
        return FALSE;
      }
      if (e->type == T_WORD && run_it &&
          !ptsim_shell_expand_word(r, e->parts, TRUE, e->line, values))
        return FALSE;
      r->pos++;
    }
    r->pos++;
  } else if (run_it) {
    /* the value: the rest of the word after '=' (no word splitting) */
    g_autoptr(GArray) rest = g_array_new(FALSE, FALSE, sizeof(Part));
    g_array_set_clear_func(rest, ptsim_shell_part_clear);
    const char *after = first->text + n + (append ? 2 : 1);
    ptsim_shell_add_part(rest, P_LIT, after, strlen(after), FALSE);
    for (guint i = 1; i < t->parts->len; i++) {
      const Part *p = &g_array_index(t->parts, Part, i);
      ptsim_shell_add_part(rest, p->kind, p->text, strlen(p->text), p->quoted);
    }
    g_autoptr(GPtrArray) fields = ptsim_shell_strv_new();
    if (!ptsim_shell_expand_word(r, rest, FALSE, t->line, fields)) return FALSE;
    g_ptr_array_add(values, g_strdup(fields->len ? (const char *)fields->pdata[0] : ""));
  }
  if (!run_it) return TRUE;
  GPtrArray *old = ptsim_shell_var_get(r, name);
  GPtrArray *nv = ptsim_shell_strv_new();
  if (append && old) {
    /* the copy costs what it copies: appending a line at a time must stay
     * bounded too */
    gsize cost = old->len;
    for (guint i = 0; i < old->len; i++) cost += strlen(old->pdata[i]);
    if (!ptsim_shell_spend(r, t->line, cost)) {
      g_ptr_array_unref(nv);
      return FALSE;
    }
    for (guint i = 0; i < old->len; i++) g_ptr_array_add(nv, g_strdup(old->pdata[i]));
    if (!array && nv->len > 0) { /* NAME+=text extends the (first) string */
      char *joined = g_strconcat(nv->pdata[0], values->pdata[0], NULL);
      g_free(nv->pdata[0]);
      nv->pdata[0] = joined;
      ptsim_shell_var_set(r, name, nv);
      return TRUE;
    }
  }
  for (guint i = 0; i < values->len; i++) g_ptr_array_add(nv, g_strdup(values->pdata[i]));
  ptsim_shell_var_set(r, name, nv);
  return TRUE;
}

static gboolean names_script(GPtrArray *argv) {
  for (guint i = 0; i < argv->len; i++) {
    const char *w = argv->pdata[i];
    if (g_str_has_suffix(w, ".py")) return TRUE;
    if (strcmp(w, "-m") == 0 && i > 0) {
      g_autofree char *base = g_path_get_basename(argv->pdata[0]);
      if (g_str_has_prefix(base, "python")) return TRUE;
    }
  }
  return FALSE;
}

static gboolean has_flag(GPtrArray *argv) {
  for (guint i = 0; i < argv->len; i++)
    if (g_str_has_prefix(argv->pdata[i], "--")) return TRUE;
  return FALSE;
}

/* Records ARGV as the training command when it is one (see the header). */
static gboolean consider(Run *r, GPtrArray *argv, int64_t line) {
  PtsimShellScript *o = r->out;
  gboolean script = names_script(argv);
  gboolean had_script = o->command && names_script(o->command);
  if (!script && !has_flag(argv)) return TRUE;
  if (had_script && !script && g_str_has_prefix(argv->pdata[0], "--")) {
    g_set_error(r->error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s:%" G_GINT64_FORMAT
                ": a command starting with '%s' follows the training command "
                "of line %" G_GINT64_FORMAT ": in bash a comment line (or a line without its "
                "trailing backslash) ends a continued command, so these flags would not reach "
                "Megatron-LM; move the comment or add the backslash",
                r->name, line, (const char *)argv->pdata[0], o->command_line);
    return FALSE;
  }
  if (had_script && !script) return TRUE;
  if (o->command) g_ptr_array_unref(o->command);
  o->command = g_ptr_array_ref(argv);
  o->command_line = line;
  return TRUE;
}

/* One simple command (or [[ ]]); *status is its exit status (TRUE: 0). */
static gboolean simple_command(Run *r, gboolean run_it, gboolean *status) {
  g_autoptr(GPtrArray) argv = ptsim_shell_strv_new();
  int64_t line = peek(r)->line;
  gboolean append, test = is_keyword(peek(r), "[[");
  *status = TRUE;
  while (assignment_name(peek(r), &append) > 0)
    if (!assign(r, run_it)) return FALSE;
  for (;;) {
    Token *t = peek(r);
    if (t->type == T_END || t->type == T_NEWLINE || t->type == T_PIPE ||
        (!test && (t->type == T_AND || t->type == T_OR)))
      break;
    if (t->type == T_AND || t->type == T_OR) { /* inside [[ ]] */
      g_ptr_array_add(argv, g_strdup(t->type == T_AND ? "&&" : "||"));
      r->pos++;
      if (test && is_keyword(&g_array_index(r->tokens, Token, r->pos - 2), "]]")) break;
      continue;
    }
    if (t->type == T_WORD) {
      if (run_it && !ptsim_shell_expand_word(r, t->parts, TRUE, t->line, argv)) return FALSE;
      r->pos++;
      if (test && is_keyword(t, "]]")) break;
      continue;
    }
    r->pos++; /* ( ) outside arrays: subshells and function bodies are not run */
  }
  if (!run_it || argv->len == 0) return TRUE;
  const char *cmd = argv->pdata[0];
  if (strcmp(cmd, "export") == 0 || strcmp(cmd, "local") == 0 || strcmp(cmd, "declare") == 0 ||
      strcmp(cmd, "readonly") == 0 || strcmp(cmd, "typeset") == 0) {
    for (guint i = 1; i < argv->len; i++) {
      const char *w = argv->pdata[i], *eq = strchr(w, '=');
      if (!eq || !ptsim_shell_is_name_start(w[0])) continue;
      g_autofree char *name = g_strndup(w, (gsize)(eq - w));
      GPtrArray *v = ptsim_shell_strv_new();
      g_ptr_array_add(v, g_strdup(eq + 1));
      ptsim_shell_var_set(r, name, v);
    }
  } else if (strcmp(cmd, "exit") == 0) {
    r->exited = TRUE;
  } else if (strcmp(cmd, "true") == 0 || strcmp(cmd, ":") == 0) {
    *status = TRUE;
  } else if (strcmp(cmd, "false") == 0) {
    *status = FALSE;
  } else if (strcmp(cmd, "[[") == 0 || strcmp(cmd, "[") == 0 || strcmp(cmd, "test") == 0) {
    guint to = argv->len;
    if (strcmp(cmd, "test") != 0 && to > 1) to--; /* the closing ]] or ] */
    gboolean known = TRUE;
    *status = test_words(argv, 1, to, &known);
    if (!known) {
      *status = FALSE;
      ptsim_shell_note(r, line,
                       "a condition ptsim cannot evaluate (a file test?) is taken as false");
    }
  } else {
    return consider(r, argv, line);
  }
  return TRUE;
}

/* cmd [&&|| cmd ...] [| cmd ...]: the status of the last one run. */
static gboolean and_or_list(Run *r, gboolean run_it, gboolean *status) {
  gboolean st = TRUE;
  if (!simple_command(r, run_it, &st)) return FALSE;
  for (;;) {
    TokType type = peek(r)->type;
    if (type != T_AND && type != T_OR && type != T_PIPE) break;
    r->pos++;
    skip_newlines(r);
    gboolean go = run_it && !r->exited && (type == T_PIPE || (type == T_AND ? st : !st));
    gboolean next = TRUE;
    if (!simple_command(r, go, &next)) return FALSE;
    if (go) st = next;
  }
  *status = st;
  return TRUE;
}

static gboolean statements(Run *r, gboolean run_it, const char *const *until, const char **stop);

/* Skips to the keyword closing the construct opened by `open`. */
static gboolean skip_block(Run *r, const char *open, const char *close, int64_t line) {
  int depth = 1;
  gboolean at_start = FALSE; /* the opening keyword was consumed */
  for (; peek(r)->type != T_END; r->pos++) {
    Token *t = peek(r);
    if (t->type == T_NEWLINE || t->type == T_AND || t->type == T_OR || t->type == T_PIPE) {
      at_start = TRUE;
      continue;
    }
    if (is_keyword(t, open) && at_start) depth++;
    if (is_keyword(t, close) && --depth == 0) {
      r->pos++;
      return TRUE;
    }
    at_start = t->type != T_WORD || is_keyword(t, "do") || is_keyword(t, "then");
  }
  g_set_error(r->error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
              "%s:%" G_GINT64_FORMAT ": '%s' without '%s'", r->name, line, open, close);
  return FALSE;
}

static gboolean if_nested(Run *r, gboolean run_it);

static gboolean if_statement(Run *r, gboolean run_it) {
  if (!ptsim_shell_enter(r, peek(r)->line, "if")) return FALSE;
  gboolean ok = if_nested(r, run_it);
  r->depth--;
  return ok;
}

static gboolean if_nested(Run *r, gboolean run_it) {
  static const char *const then_[] = {"then", NULL};
  static const char *const branch[] = {"elif", "else", "fi", NULL};
  static const char *const fi[] = {"fi", NULL};
  int64_t line = peek(r)->line;
  gboolean taken = FALSE;
  const char *stop = NULL;
  r->pos++; /* if */
  for (;;) {
    gboolean cond = FALSE;
    skip_newlines(r);
    if (!and_or_list(r, run_it && !taken, &cond)) return FALSE;
    if (!statements(r, FALSE, then_, &stop) || !stop) goto unterminated;
    gboolean go = run_it && !taken && cond;
    if (!statements(r, go, branch, &stop) || !stop) goto unterminated;
    taken = taken || go;
    if (strcmp(stop, "elif") == 0) continue;
    if (strcmp(stop, "else") == 0 && (!statements(r, run_it && !taken, fi, &stop) || !stop))
      goto unterminated;
    return TRUE;
  }
unterminated:
  if (r->error && *r->error) return FALSE;
  g_set_error(r->error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
              "%s:%" G_GINT64_FORMAT ": 'if' without 'then' ... 'fi'", r->name, line);
  return FALSE;
}

/* Statements until one of `until` (consumed, returned in *stop) or the end
 * (*stop NULL). */
static gboolean statements(Run *r, gboolean run_it, const char *const *until, const char **stop) {
  *stop = NULL;
  for (;;) {
    skip_newlines(r);
    Token *t = peek(r);
    if (t->type == T_END) return TRUE;
    for (const char *const *u = until; u && *u; u++)
      if (is_keyword(t, *u)) {
        *stop = *u;
        r->pos++;
        return TRUE;
      }
    run_it = run_it && !r->exited;
    if (is_keyword(t, "if")) {
      if (!if_statement(r, run_it)) return FALSE;
    } else if (is_keyword(t, "for") || is_keyword(t, "while") || is_keyword(t, "until")) {
      if (run_it) ptsim_shell_note(r, t->line, "a loop is not run");
      r->pos++;
      if (!skip_block(r, "do", "done", t->line)) return FALSE;
    } else if (is_keyword(t, "case")) {
      if (run_it) ptsim_shell_note(r, t->line, "a case statement is not run");
      r->pos++;
      if (!skip_block(r, "case", "esac", t->line)) return FALSE;
    } else if (t->type == T_WORD && r->pos + 2 < r->tokens->len &&
               g_array_index(r->tokens, Token, r->pos + 1).type == T_LPAREN &&
               g_array_index(r->tokens, Token, r->pos + 2).type == T_RPAREN) {
      if (run_it) ptsim_shell_note(r, t->line, "a function definition is not run");
      r->pos += 3;
      skip_newlines(r);
      if (is_keyword(peek(r), "{")) {
        r->pos++;
        if (!skip_block(r, "{", "}", t->line)) return FALSE;
      }
    } else {
      gboolean status;
      if (!and_or_list(r, run_it, &status)) return FALSE;
    }
  }
}

/* ---- entry points ---- */

void ptsim_shell_script_free(PtsimShellScript *s) {
  if (!s) return;
  if (s->command) g_ptr_array_unref(s->command);
  g_hash_table_unref(s->vars);
  g_ptr_array_unref(s->sbatch);
  g_ptr_array_unref(s->notes);
  g_free(s);
}

PtsimShellScript *ptsim_shell_script_run(const char *text, gsize len, const char *name,
                                         GError **error) {
  g_return_val_if_fail(text != NULL || len == 0, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);
  if (len > PTSIM_SHELL_SCRIPT_MAX_BYTES) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: %" G_GSIZE_FORMAT " bytes: more than a launch script (at most %d bytes)", name,
                len, PTSIM_SHELL_SCRIPT_MAX_BYTES);
    return NULL;
  }
  if (memchr(text, '\0', len)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: holds NUL bytes: not a shell script", name);
    return NULL;
  }
  /* the lexer reads to a NUL, so it gets one: TEXT need not end in one */
  g_autofree char *own = g_strndup(text, len);
  text = own;
  g_autoptr(PtsimShellScript) out = g_new0(PtsimShellScript, 1);
  out->vars = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                    (GDestroyNotify)g_ptr_array_unref);
  out->sbatch = ptsim_shell_strv_new();
  out->notes = ptsim_shell_strv_new();
  g_autoptr(GArray) tokens = g_array_new(FALSE, FALSE, sizeof(Token));
  g_array_set_clear_func(tokens, ptsim_shell_token_clear);
  Lexer lx = {name, text, text + len, 1, tokens, out, error};
  if (!ptsim_shell_lex(&lx)) return NULL;
  Run r = {name, tokens, 0, out, FALSE, error, 0, 0};
  const char *stop = NULL;
  static const char *const stray[] = {"fi", "done", "esac", "then", "else", "elif", "do", NULL};
  if (!statements(&r, TRUE, stray, &stop)) return NULL;
  if (stop) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s:%" G_GINT64_FORMAT ": '%s' without its opening keyword", name,
                g_array_index(tokens, Token, r.pos - 1).line, stop);
    return NULL;
  }
  return g_steal_pointer(&out);
}

char *ptsim_shell_script_var(const PtsimShellScript *s, const char *name) {
  g_return_val_if_fail(s != NULL && name != NULL, NULL);
  GPtrArray *v = g_hash_table_lookup(s->vars, name);
  if (!v) return NULL;
  g_autoptr(GString) out = g_string_new(NULL);
  for (guint i = 0; i < v->len; i++) {
    if (i) g_string_append_c(out, ' ');
    g_string_append(out, v->pdata[i]);
  }
  return g_string_free(g_steal_pointer(&out), FALSE);
}
