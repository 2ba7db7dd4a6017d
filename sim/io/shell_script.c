/* shell_script.c — a symbolic run of a launch script; see shell_script.h.
 *
 * This file walks the tokens (shell_lex.c) statement by statement: lists
 * (&& || | !), the compound commands (if, for, while/until, case, { },
 * ( ), (( )), function definitions) and calls; simple commands are
 * shell_command.c's, expansion shell_words.c's.  A loop runs its body
 * again from the body's first token while its condition holds, at most
 * SHELL_LOOP_MAX times (then it is stopped with a note); a function call
 * runs the body it recorded. */
#include <string.h>

#include "config.h"
#include "shell_int.h"

static Token *peek(Run *r) { return &g_array_index(r->tokens, Token, r->pos); }

static gboolean is_keyword(const Token *t, const char *word) {
  const char *w = ptsim_shell_plain(t);
  return w && strcmp(w, word) == 0;
}

static void skip_newlines(Run *r) {
  while (peek(r)->type == T_NEWLINE) r->pos++;
}

gboolean ptsim_shell_stopped(const Run *r) {
  return r->exited || r->breaking > 0 || r->continuing > 0 || r->returning;
}

static const char *const then_[] = {"then", NULL};
static const char *const do_[] = {"do", NULL};
static const char *const done_[] = {"done", NULL};
static const char *const fi_[] = {"fi", NULL};
static const char *const esac_[] = {"esac", NULL};
static const char *const brace_[] = {"}", NULL};

/* Statements until STOP_WORD; an error naming WHAT at LINE otherwise. */
static gboolean block(Run *r, gboolean run_it, const char *const *until, const char *what,
                      int64_t line) {
  const char *stop = NULL;
  if (!ptsim_shell_statements(r, run_it, until, &stop)) return FALSE;
  if (stop && strcmp(stop, until[0]) == 0) return TRUE;
  return ptsim_shell_fail(r, line, "'%s' without '%s'", what, until[0]);
}

/* ---- if ---- */

static gboolean if_nested(Run *r, gboolean run_it) {
  static const char *const branch[] = {"elif", "else", "fi", NULL};
  int64_t line = peek(r)->line;
  gboolean taken = FALSE;
  const char *stop = NULL;
  r->pos++; /* if */
  for (;;) {
    gboolean test = run_it && !taken;
    if (!block(r, test, then_, "if", line)) return FALSE;
    gboolean go = test && !ptsim_shell_stopped(r) && r->status == 0;
    if (test) r->status = 0; /* the status of an if whose branch is not taken */
    if (!ptsim_shell_statements(r, go, branch, &stop)) return FALSE;
    if (!stop || strcmp(stop, ";;") == 0 || strcmp(stop, ")") == 0)
      return ptsim_shell_fail(r, line, "'if' without 'fi'");
    taken = taken || go;
    if (strcmp(stop, "elif") == 0) continue;
    if (strcmp(stop, "else") == 0 && !block(r, run_it && !taken, fi_, "else", line)) return FALSE;
    return TRUE;
  }
}

static gboolean if_statement(Run *r, gboolean run_it) {
  if (!ptsim_shell_enter(r, peek(r)->line, "if")) return FALSE;
  gboolean ok = if_nested(r, run_it);
  r->sh->depth--;
  return ok;
}

/* ---- loops ---- */

/* After one run of a loop's body: FALSE when the loop ends here (break,
 * or a continue of an outer loop), the flags left for the loops outside. */
static gboolean next_iteration(Run *r) {
  if (r->breaking > 0) {
    r->breaking--;
    return FALSE;
  }
  if (r->continuing > 0) {
    r->continuing--;
    return r->continuing == 0;
  }
  return !r->exited && !r->returning;
}

/* Counts one iteration: *go FALSE (with a note) once the loop has run
 * SHELL_LOOP_MAX times; an error past SHELL_STEPS_MAX in all. */
static gboolean count_iteration(Run *r, int64_t line, int64_t *n, gboolean *go) {
  if (++r->sh->steps > SHELL_STEPS_MAX)
    return ptsim_shell_fail(r, line,
                            "the script's loops ran more than %d times in all: not a "
                            "launch script ptsim reads",
                            SHELL_STEPS_MAX);
  if (++*n <= SHELL_LOOP_MAX) return TRUE;
  g_autofree char *note = g_strdup_printf("the loop was stopped after %d iterations (ptsim "
                                          "cannot tell when it ends)",
                                          SHELL_LOOP_MAX);
  ptsim_shell_note(r, line, note);
  *go = FALSE;
  return TRUE;
}

/* Runs (or steps over) a loop body starting at BODY: *again FALSE when the
 * loop ends after it. */
static gboolean body(Run *r, guint start, gboolean run_it, int64_t line, gboolean *again) {
  r->pos = start;
  r->loops++;
  gboolean ok = block(r, run_it, done_, "do", line);
  r->loops--;
  *again = ok && run_it && next_iteration(r);
  return ok;
}

/* for (( init; test; step )): the three expressions of the T_ARITH. */
static gboolean for_arith(Run *r, gboolean run_it, int64_t line) {
  const Token *head = peek(r);
  g_auto(GStrv) parts = g_strsplit(g_array_index(head->parts, Part, 0).text, ";", 3);
  if (g_strv_length(parts) != 3) return ptsim_shell_fail(r, line, "for ((...)) without two ';'");
  r->pos++;
  skip_newlines(r);
  if (!is_keyword(peek(r), "do")) return ptsim_shell_fail(r, line, "'for' without 'do'");
  r->pos++;
  guint start = r->pos;
  int64_t v = 0, n = 0;
  gboolean go = run_it, again = FALSE;
  if (go) {
    g_autofree char *init = ptsim_shell_expand_text(r, parts[0], line);
    go = init && ptsim_shell_arith(r, init, line, "for ((init", &v);
    if (!go) return FALSE;
  }
  for (;;) {
    if (go) {
      g_autofree char *test = ptsim_shell_expand_text(r, parts[1], line);
      if (!test) return FALSE;
      g_strstrip(test);
      if (test[0] && !ptsim_shell_arith(r, test, line, "for ((...; test", &v)) return FALSE;
      go = !test[0] || v != 0;
    }
    if (go && !count_iteration(r, line, &n, &go)) return FALSE;
    if (!body(r, start, go, line, &again)) return FALSE;
    if (!go || !again) return TRUE;
    g_autofree char *step = ptsim_shell_expand_text(r, parts[2], line);
    if (!step || !ptsim_shell_arith(r, step, line, "for ((...; step", &v)) return FALSE;
  }
}

static gboolean for_loop(Run *r, gboolean run_it) {
  int64_t line = peek(r)->line;
  r->pos++; /* for */
  if (peek(r)->type == T_ARITH) return for_arith(r, run_it, line);
  const char *name = ptsim_shell_plain(peek(r));
  if (!name || !ptsim_shell_is_name_start(name[0]))
    return ptsim_shell_fail(r, line, "'for' without a variable name");
  g_autofree char *var = g_strdup(name);
  r->pos++;
  skip_newlines(r);
  g_autoptr(GPtrArray) words = ptsim_shell_strv_new();
  if (is_keyword(peek(r), "in")) {
    r->pos++;
    for (; peek(r)->type == T_WORD; r->pos++)
      if (run_it && !ptsim_shell_expand_word(r, peek(r)->parts, TRUE, peek(r)->line, words))
        return FALSE;
    if (peek(r)->type != T_NEWLINE) return ptsim_shell_fail(r, line, "'for' without 'do'");
  } else if (run_it) { /* for NAME; do: over "$@" */
    for (guint i = 0; i < r->args->len; i++) g_ptr_array_add(words, g_strdup(r->args->pdata[i]));
  }
  skip_newlines(r);
  if (!is_keyword(peek(r), "do")) return ptsim_shell_fail(r, line, "'for' without 'do'");
  r->pos++;
  guint start = r->pos;
  gboolean again = TRUE, go = run_it;
  int64_t n = 0;
  for (guint i = 0; go && again && i < words->len; i++) {
    if (!count_iteration(r, line, &n, &go)) return FALSE;
    if (!go) break;
    ptsim_shell_var_set_string(r, var, words->pdata[i]);
    if (!body(r, start, TRUE, line, &again)) return FALSE;
  }
  return body(r, start, FALSE, line, &again); /* to the token after done */
}

static gboolean while_loop(Run *r, gboolean run_it) {
  int64_t line = peek(r)->line;
  gboolean until = is_keyword(peek(r), "until");
  r->pos++;
  guint test = r->pos;
  gboolean go = run_it, again = TRUE;
  int64_t n = 0;
  for (;;) {
    r->pos = test;
    if (!block(r, go, do_, until ? "until" : "while", line)) return FALSE;
    go = go && !ptsim_shell_stopped(r) && ((r->status == 0) != until);
    if (go && !count_iteration(r, line, &n, &go)) return FALSE;
    if (!body(r, r->pos, go, line, &again)) return FALSE;
    if (!go || !again) break;
  }
  r->status = 0;
  return TRUE;
}

/* ---- case ---- */

static gboolean case_statement(Run *r, gboolean run_it) {
  int64_t line = peek(r)->line;
  r->pos++; /* case */
  Token *subject = peek(r);
  if (subject->type != T_WORD) return ptsim_shell_fail(r, line, "'case' without its word");
  g_autofree char *value = run_it ? ptsim_shell_expand_string(r, subject->parts, line) : NULL;
  if (run_it && !value) return FALSE;
  r->pos++;
  skip_newlines(r);
  if (!is_keyword(peek(r), "in")) return ptsim_shell_fail(r, line, "'case' without 'in'");
  r->pos++;
  gboolean matched = FALSE;
  r->status = 0;
  for (;;) {
    skip_newlines(r);
    if (is_keyword(peek(r), "esac")) {
      r->pos++;
      return TRUE;
    }
    if (peek(r)->type == T_END) return ptsim_shell_fail(r, line, "'case' without 'esac'");
    if (peek(r)->type == T_LPAREN) r->pos++;
    gboolean hit = FALSE;
    for (;;) { /* pattern | pattern ... ) */
      Token *t = peek(r);
      if (t->type != T_WORD)
        return ptsim_shell_fail(r, t->line,
                                "a case pattern without its ')' (case of line %" G_GINT64_FORMAT
                                ")",
                                line);
      if (run_it && !matched && !hit) {
        g_autofree char *pattern = ptsim_shell_expand_pattern(r, t->parts, t->line);
        if (!pattern) return FALSE;
        hit = ptsim_shell_glob_match(pattern, value);
      }
      r->pos++;
      if (peek(r)->type == T_PIPE) {
        r->pos++;
        continue;
      }
      if (peek(r)->type != T_RPAREN)
        return ptsim_shell_fail(r, t->line,
                                "a case pattern without its ')' (case of line %" G_GINT64_FORMAT
                                ")",
                                line);
      r->pos++;
      break;
    }
    const char *stop = NULL;
    if (!ptsim_shell_statements(r, hit, esac_, &stop)) return FALSE;
    matched = matched || hit;
    if (stop && strcmp(stop, "esac") == 0) return TRUE;
    if (!stop || strcmp(stop, ";;") != 0) return ptsim_shell_fail(r, line, "'case' without 'esac'");
  }
}

/* ---- functions ---- */

static void function_free(gpointer data) {
  Function *f = data;
  g_array_unref(f->tokens);
  g_free(f->name);
  g_free(f);
}

/* NAME () BODY or function NAME [()] BODY, at r->pos (NAME_AT: the name's
 * token); BODY is stepped over and recorded. */
static gboolean function_definition(Run *r, gboolean run_it, guint name_at) {
  int64_t line = peek(r)->line;
  const char *name = ptsim_shell_plain(&g_array_index(r->tokens, Token, name_at));
  if (!name) return ptsim_shell_fail(r, line, "a function without a plain name");
  skip_newlines(r);
  guint start = r->pos;
  Token *b = peek(r);
  if (!is_keyword(b, "{") && b->type != T_LPAREN && !is_keyword(b, "if") && !is_keyword(b, "for") &&
      !is_keyword(b, "while") && !is_keyword(b, "until") && !is_keyword(b, "case"))
    return ptsim_shell_fail(r, line, "function %s without a body ({ ... })", name);
  if (!ptsim_shell_command(r, FALSE)) return FALSE;
  if (!run_it) return TRUE;
  Function *f = g_new0(Function, 1);
  f->tokens = g_array_ref(r->tokens);
  f->start = start;
  f->name = g_strdup(r->name);
  g_hash_table_replace(r->sh->functions, g_strdup(name), f);
  r->status = 0;
  return TRUE;
}

gboolean ptsim_shell_call(Run *r, const Function *f, GPtrArray *args, int64_t line) {
  if (!ptsim_shell_enter(r, line, "function calls")) return FALSE;
  /* a body may redefine (and free) its own function: its tokens and name
   * must outlive that */
  GArray *keep = g_array_ref(f->tokens);
  g_autofree char *name = g_strdup(f->name);
  Run call = *r;
  call.tokens = f->tokens;
  call.name = name;
  call.pos = f->start;
  call.args = args;
  call.loops = 0;
  call.returning = FALSE;
  gboolean ok = ptsim_shell_command(&call, TRUE);
  g_array_unref(keep);
  r->sh->depth--;
  r->status = call.status;
  r->exited = call.exited;
  return ok;
}

/* ---- commands and lists ---- */

static const char *token_name(const Token *t) {
  switch (t->type) {
  case T_AND:
    return "'&&'";
  case T_OR:
    return "'||'";
  case T_PIPE:
    return "'|'";
  case T_RPAREN:
    return "')'";
  case T_DSEMI:
    return "';;'";
  case T_ARRAY_OPEN:
    return "'=('";
  case T_END:
    return "the end of the script";
  default:
    return "a token";
  }
}

gboolean ptsim_shell_command(Run *r, gboolean run_it) {
  Token *t = peek(r);
  run_it = run_it && !ptsim_shell_stopped(r);
  gboolean ok;
  if (is_keyword(t, "if")) {
    ok = if_statement(r, run_it);
  } else if (is_keyword(t, "for")) {
    ok = for_loop(r, run_it);
  } else if (is_keyword(t, "while") || is_keyword(t, "until")) {
    ok = while_loop(r, run_it);
  } else if (is_keyword(t, "case")) {
    ok = case_statement(r, run_it);
  } else if (is_keyword(t, "{")) {
    r->pos++;
    ok = block(r, run_it, brace_, "{", t->line);
  } else if (t->type == T_LPAREN) { /* a subshell: its assignments are kept (they rarely matter) */
    int64_t line = t->line;
    const char *stop = NULL;
    r->pos++;
    ok = ptsim_shell_statements(r, run_it, NULL, &stop);
    if (ok && (!stop || strcmp(stop, ")") != 0)) ok = ptsim_shell_fail(r, line, "'(' without ')'");
  } else if (t->type == T_ARITH) {
    int64_t v = 0;
    r->pos++;
    g_autofree char *text =
        run_it ? ptsim_shell_expand_text(r, g_array_index(t->parts, Part, 0).text, t->line) : NULL;
    ok = !run_it || (text && ptsim_shell_arith(r, text, t->line, "((...))", &v));
    if (run_it) r->status = v != 0 ? 0 : 1;
  } else if (is_keyword(t, "function")) {
    guint name_at = ++r->pos;
    r->pos++;
    if (peek(r)->type == T_LPAREN && g_array_index(r->tokens, Token, r->pos + 1).type == T_RPAREN)
      r->pos += 2;
    return function_definition(r, run_it, name_at);
  } else if (t->type == T_WORD && r->pos + 2 < r->tokens->len &&
             g_array_index(r->tokens, Token, r->pos + 1).type == T_LPAREN &&
             g_array_index(r->tokens, Token, r->pos + 2).type == T_RPAREN) {
    guint name_at = r->pos;
    r->pos += 3;
    return function_definition(r, run_it, name_at);
  } else if (t->type == T_WORD || t->type == T_REDIR || t->type == T_HEREDOC) {
    return ptsim_shell_simple_command(r, run_it);
  } else {
    return ptsim_shell_fail(r, t->line, "%s where a command should be", token_name(t));
  }
  return ok && ptsim_shell_redirections(r, run_it);
}

/* [!] command [| command ...]: the status of the last one. */
static gboolean pipeline(Run *r, gboolean run_it) {
  gboolean negate = FALSE;
  while (is_keyword(peek(r), "!")) {
    negate = !negate;
    r->pos++;
  }
  if (!ptsim_shell_command(r, run_it)) return FALSE;
  while (peek(r)->type == T_PIPE) {
    r->pos++;
    skip_newlines(r);
    if (!ptsim_shell_command(r, run_it)) return FALSE;
  }
  if (negate && run_it && !ptsim_shell_stopped(r)) r->status = r->status == 0 ? 1 : 0;
  return TRUE;
}

/* pipeline [&&|| pipeline ...]. */
static gboolean and_or_list(Run *r, gboolean run_it) {
  if (!pipeline(r, run_it)) return FALSE;
  for (;;) {
    TokType type = peek(r)->type;
    if (type != T_AND && type != T_OR) return TRUE;
    r->pos++;
    skip_newlines(r);
    gboolean go = run_it && !ptsim_shell_stopped(r) && ((r->status == 0) == (type == T_AND));
    if (!pipeline(r, go)) return FALSE;
  }
}

gboolean ptsim_shell_statements(Run *r, gboolean run_it, const char *const *until,
                                const char **stop) {
  *stop = NULL;
  for (;;) {
    skip_newlines(r);
    Token *t = peek(r);
    if (t->type == T_END) return TRUE;
    if (t->type == T_DSEMI || t->type == T_RPAREN) {
      *stop = t->type == T_DSEMI ? ";;" : ")";
      r->pos++;
      return TRUE;
    }
    for (const char *const *u = until; u && *u; u++)
      if (is_keyword(t, *u)) {
        *stop = *u;
        r->pos++;
        return TRUE;
      }
    if (!and_or_list(r, run_it)) return FALSE;
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

/* NAME=VALUE entries into the variables (the environment the script sees). */
static gboolean set_environment(Run *r, const char *const *env, GError **error) {
  for (; env && *env; env++) {
    const char *eq = strchr(*env, '=');
    gboolean valid = eq && eq > *env && ptsim_shell_is_name_start((*env)[0]);
    for (const char *c = *env; valid && c < eq; c++) valid = ptsim_shell_is_name_char(*c);
    if (!valid) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                  "environment entry '%s': expected NAME=VALUE (NAME of letters, digits and _)",
                  *env);
      return FALSE;
    }
    g_autofree char *name = g_strndup(*env, (gsize)(eq - *env));
    ptsim_shell_var_set_string(r, name, eq + 1);
  }
  return TRUE;
}

/* No command that names a script was run: a variable holding one (a string
 * the script builds and hands to something ptsim does not follow) is run
 * instead. */
static gboolean run_candidate(Run *r) {
  Shell *sh = r->sh;
  if (!sh->candidate || (sh->out->command && ptsim_shell_names_script(sh->out->command)))
    return TRUE;
  g_autofree char *note = g_strdup_printf("no command runs the training; the one the variable %s "
                                          "holds is read",
                                          sh->candidate_name);
  ptsim_shell_note(r, sh->candidate_line, note);
  g_autofree char *text = g_steal_pointer(&sh->candidate);
  r->exited = FALSE;
  return ptsim_shell_run_text(r, text, sh->candidate_line, TRUE, NULL, NULL, NULL);
}

PtsimShellScript *ptsim_shell_script_run_with(const char *text, gsize len, const char *name,
                                              const PtsimShellInputs *inputs, GError **error) {
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
  g_autoptr(PtsimShellScript) out = g_new0(PtsimShellScript, 1);
  out->vars = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                    (GDestroyNotify)g_ptr_array_unref);
  out->sbatch = ptsim_shell_strv_new();
  out->notes = ptsim_shell_strv_new();
  Shell sh = {out,
              g_hash_table_new_full(g_str_hash, g_str_equal, g_free, function_free),
              g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
              0,
              0,
              0,
              NULL,
              NULL,
              0};
  g_autoptr(GPtrArray) args = ptsim_shell_strv_new();
  for (const char *const *a = inputs ? inputs->args : NULL; a && *a; a++)
    g_ptr_array_add(args, g_strdup(*a));
  Run r;
  memset(&r, 0, sizeof r);
  r.sh = &sh;
  r.name = name;
  r.error = error;
  r.args = args;
  r.arg0 = name;
  g_autoptr(GArray) tokens = NULL;
  gboolean ok = set_environment(&r, inputs ? inputs->env : NULL, error) &&
                (tokens = ptsim_shell_tokens(own, len, name, 1, out, error)) != NULL;
  if (ok) {
    r.tokens = tokens;
    const char *stop = NULL;
    static const char *const stray[] = {"fi",   "done", "esac", "then", "else",
                                        "elif", "do",   "}",    NULL};
    ok = ptsim_shell_statements(&r, TRUE, stray, &stop);
    if (ok && stop)
      ok = ptsim_shell_fail(&r, g_array_index(tokens, Token, r.pos - 1).line,
                            "'%s' without its opening keyword", stop);
    ok = ok && run_candidate(&r);
  }
  g_hash_table_unref(sh.functions);
  g_hash_table_unref(sh.files);
  g_free(sh.candidate);
  g_free(sh.candidate_name);
  return ok ? g_steal_pointer(&out) : NULL;
}

PtsimShellScript *ptsim_shell_script_run(const char *text, gsize len, const char *name,
                                         GError **error) {
  return ptsim_shell_script_run_with(text, len, name, NULL, error);
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
