/* shell_command.c — one simple command of a launch script: its assignments
 * (NAME=value, NAME+=value, arrays, NAME[i]=value), its words, its
 * redirections and here-documents; then what it does.  Builtins that
 * change what later commands see are run (export/local/declare, set --,
 * shift, unset, test/[/[[, true/false, exit, return, break, continue, read,
 * eval, source of a file the script wrote); functions are called; wrappers
 * that run a text as a script of its own are looked into (bash/sh -c TEXT,
 * bash FILE or a here-document fed to bash or sbatch, sbatch --wrap TEXT,
 * sbatch FILE) with their launcher's words kept in front; every other
 * command is a candidate for the training command (shell_script.h says
 * which one wins).  Nothing is executed: an unknown command succeeds. */
#include <string.h>

#include "numbers.h"
#include "shell_int.h"

static Token *peek(Run *r) { return &g_array_index(r->tokens, Token, r->pos); }

/* What a command's redirections give it: its input (a here-document, a
 * here-string) and the file its output goes to. */
typedef struct {
  char *input;
  char *output;
  gboolean append;
  int64_t input_line; /* where a here-document's body starts (0: no here-document) */
} Redirs;

static void redirs_clear(Redirs *d) {
  g_free(d->input);
  g_free(d->output);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Redirs, redirs_clear)

const char *ptsim_shell_plain(const Token *t) {
  if (t->type != T_WORD || t->parts->len != 1) return NULL;
  const Part *p = &g_array_index(t->parts, Part, 0);
  return p->kind == P_LIT && !p->quoted ? p->text : NULL;
}

static gboolean is_word(const char *w, const char *const *set) {
  for (; *set; set++)
    if (strcmp(w, *set) == 0) return TRUE;
  return FALSE;
}

/* ---- conditions ---- */

/* One primary of a condition (after its '!'s), over words [from, to). */
static gboolean test_primary(GPtrArray *w, guint from, guint to, gboolean glob, gboolean *known) {
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
    /* [[ ]] matches a pattern; the quoting that would make it literal is
     * gone by now, and a literal matches itself either way */
    gboolean same = strcmp(a, b) == 0 || (glob && ptsim_shell_glob_match(b, a));
    if (strcmp(op, "==") == 0 || strcmp(op, "=") == 0) return same;
    if (strcmp(op, "!=") == 0) return !same;
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

static gboolean is_either(GPtrArray *w, guint i, const char *a, const char *b) {
  return strcmp(w->pdata[i], a) == 0 || strcmp(w->pdata[i], b) == 0;
}

/* A condition of [[ ]], [ ] or test, over expanded words [from, to): '!'
 * binds to its primary, && before ||, both short-circuit (so a file test
 * that is not reached does not make the result unknown).  In one pass: a
 * chain of ten thousand conditions costs ten thousand steps. */
static gboolean test_words(GPtrArray *w, guint from, guint to, gboolean glob, gboolean *known) {
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
    while (end < to && !is_either(w, end, "&&", "-a") && !is_either(w, end, "||", "-o")) end++;
    if (!any && all) /* this factor decides something */
      all = start < end && (test_primary(w, start, end, glob, known) != negate);
    if (end == to || is_either(w, end, "||", "-o")) {
      any = any || all;
      all = TRUE;
    }
    i = end + 1;
  }
  return any;
}

/* ---- assignments ---- */

/* NAME=... / NAME+=... / NAME[i]=... at the start of an unquoted word: the
 * length of what precedes the '=' (or '+='), 0 when not an assignment.
 * *index_at: where '[' is (0: none); *append: '+='. */
static gsize assignment_name(const Token *t, gboolean *append, gsize *index_at) {
  *append = FALSE;
  *index_at = 0;
  if (t->type != T_WORD) return 0;
  const Part *p = &g_array_index(t->parts, Part, 0);
  if (p->kind != P_LIT || p->quoted || !ptsim_shell_is_name_start(p->text[0])) return 0;
  gsize n = 1;
  while (ptsim_shell_is_name_char(p->text[n])) n++;
  if (p->text[n] == '[') {
    const char *close = strchr(p->text + n, ']');
    if (!close) return 0;
    *index_at = n;
    n = (gsize)(close - p->text) + 1;
  }
  *append = p->text[n] == '+' && p->text[n + 1] == '=';
  return p->text[n] == '=' || *append ? n : 0;
}

/* Applies the assignment word at r->pos (and its array, if one follows). */
static gboolean assign(Run *r, gboolean run_it) {
  Token *t = peek(r);
  gboolean append = FALSE;
  gsize index_at = 0;
  gsize n = assignment_name(t, &append, &index_at);
  const Part *first = &g_array_index(t->parts, Part, 0);
  g_autofree char *name = g_strndup(first->text, index_at ? index_at : n);
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
      if (e->type == T_END)
        return ptsim_shell_fail(r, line, "the array %s=( has no closing )", name);
      if (e->type == T_WORD && run_it &&
          !ptsim_shell_expand_word(r, e->parts, TRUE, e->line, values))
        return FALSE;
      r->pos++;
    }
    r->pos++;
  } else if (run_it) {
    /* the value: the rest of the word after '=' (no word splitting) */
    g_autoptr(GArray) rest = ptsim_shell_parts_new();
    const char *after = first->text + n + (append ? 2 : 1);
    ptsim_shell_add_part(rest, P_LIT, after, strlen(after), FALSE);
    for (guint i = 1; i < t->parts->len; i++) {
      const Part *p = &g_array_index(t->parts, Part, i);
      ptsim_shell_add_part(rest, p->kind, p->text, strlen(p->text), p->quoted);
    }
    g_autofree char *value = ptsim_shell_expand_string(r, rest, t->line);
    if (!value) return FALSE;
    g_ptr_array_add(values, g_steal_pointer(&value));
  }
  if (!run_it) return TRUE;
  GPtrArray *old = ptsim_shell_var_get(r, name);
  if (index_at) { /* NAME[i]=value: one element */
    g_autofree char *itext = g_strndup(first->text + index_at + 1, n - index_at - 2);
    g_autofree char *expanded = ptsim_shell_expand_text(r, itext, t->line);
    int64_t i = 0;
    if (!expanded || !ptsim_shell_arith(r, expanded, t->line, "an array index", &i)) return FALSE;
    if (i < 0 || i > 65535)
      return ptsim_shell_fail(r, t->line,
                              "%s[%s]: an index ptsim does not "
                              "keep (0 to 65535)",
                              name, itext);
    if (!ptsim_shell_spend(r, t->line, (gsize)i + 1)) return FALSE;
    GPtrArray *nv = ptsim_shell_strv_new();
    for (guint k = 0; old && k < old->len; k++) g_ptr_array_add(nv, g_strdup(old->pdata[k]));
    while (nv->len <= (guint)i) g_ptr_array_add(nv, g_strdup(""));
    char *joined = g_strconcat(append ? (char *)nv->pdata[i] : "", values->pdata[0], NULL);
    g_free(nv->pdata[i]);
    nv->pdata[i] = joined;
    ptsim_shell_var_set(r, name, nv);
    return TRUE;
  }
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
      ptsim_shell_remember_candidate(r, name, joined, t->line);
      ptsim_shell_var_set(r, name, nv);
      return TRUE;
    }
  }
  for (guint i = 0; i < values->len; i++) g_ptr_array_add(nv, g_strdup(values->pdata[i]));
  if (!array && nv->len == 1) ptsim_shell_remember_candidate(r, name, nv->pdata[0], t->line);
  ptsim_shell_var_set(r, name, nv);
  return TRUE;
}

/* ---- the training command ---- */

gboolean ptsim_shell_names_script(GPtrArray *argv) {
  for (guint i = 0; i < argv->len; i++) {
    const char *w = argv->pdata[i];
    if (g_str_has_suffix(w, ".py")) return TRUE;
    if (strcmp(w, "-m") == 0 && i > 0) {
      g_autofree char *base = g_path_get_basename(argv->pdata[i - 1]);
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

/* Records PREFIX + ARGV as the training command when it is one (see the
 * header). */
static gboolean consider(Run *r, GPtrArray *argv, int64_t line) {
  PtsimShellScript *o = r->sh->out;
  gboolean script = ptsim_shell_names_script(argv);
  gboolean had_script = o->command && ptsim_shell_names_script(o->command);
  if (!script && !has_flag(argv)) return TRUE;
  if (had_script && !script && g_str_has_prefix(argv->pdata[0], "--"))
    return ptsim_shell_fail(r, line,
                            "a command starting with '%s' follows the training command "
                            "of line %" G_GINT64_FORMAT
                            ": in bash a comment line (or a line without its "
                            "trailing backslash) ends a continued command, so these flags would "
                            "not reach Megatron-LM; move the comment or add the backslash",
                            (const char *)argv->pdata[0], o->command_line);
  if (had_script && !script) return TRUE;
  GPtrArray *command = ptsim_shell_strv_new();
  for (guint i = 0; r->prefix && i < r->prefix->len; i++)
    g_ptr_array_add(command, g_strdup(r->prefix->pdata[i]));
  for (guint i = 0; i < argv->len; i++) g_ptr_array_add(command, g_strdup(argv->pdata[i]));
  if (o->command) g_ptr_array_unref(o->command);
  o->command = command;
  o->command_line = line;
  return TRUE;
}

void ptsim_shell_remember_candidate(Run *r, const char *name, const char *value, int64_t line) {
  if (!strstr(value, ".py") || !strstr(value, "--")) return;
  Shell *sh = r->sh;
  g_free(sh->candidate);
  g_free(sh->candidate_name);
  sh->candidate = g_strdup(value);
  sh->candidate_name = g_strdup(name);
  sh->candidate_line = line;
}

/* ---- texts run as scripts of their own ---- */

gboolean ptsim_shell_run_text(Run *r, const char *text, int64_t line, gboolean child,
                              const char *arg0, GPtrArray *args, GPtrArray *prefix) {
  if (!ptsim_shell_enter(r, line, "a text run as a script (bash -c, eval, a here-document)"))
    return FALSE;
  if (!ptsim_shell_spend(r, line, strlen(text))) {
    r->sh->depth--;
    return FALSE;
  }
  g_autoptr(GArray)
      tokens = ptsim_shell_tokens(text, strlen(text), r->name, line, r->sh->out, r->error);
  gboolean ok = tokens != NULL;
  if (ok) {
    Run sub = *r;
    sub.tokens = tokens;
    sub.pos = 0;
    sub.args = args ? args : r->args;
    sub.arg0 = arg0 ? arg0 : r->arg0;
    sub.prefix = prefix ? prefix : r->prefix;
    sub.breaking = sub.continuing = sub.loops = 0;
    sub.returning = FALSE;
    const char *stop = NULL;
    static const char *const stray[] = {"fi",   "done", "esac", "then", "else",
                                        "elif", "do",   "}",    NULL};
    ok = ptsim_shell_statements(&sub, TRUE, stray, &stop);
    if (ok && stop)
      ok = ptsim_shell_fail(r, line, "'%s' without its opening keyword (in the text run here)",
                            stop);
    r->status = sub.status;
    if (!child) r->exited = r->exited || sub.exited;
  }
  r->sh->depth--;
  return ok;
}

/* Words [from, to) of ARGV appended to a copy of the run's prefix. */
static GPtrArray *prefix_with(Run *r, GPtrArray *argv, guint from, guint to) {
  GPtrArray *p = ptsim_shell_strv_new();
  for (guint i = 0; r->prefix && i < r->prefix->len; i++)
    g_ptr_array_add(p, g_strdup(r->prefix->pdata[i]));
  for (guint i = from; i < to && i < argv->len; i++) g_ptr_array_add(p, g_strdup(argv->pdata[i]));
  return p;
}

static GPtrArray *words_from(GPtrArray *argv, guint from) {
  GPtrArray *p = ptsim_shell_strv_new();
  for (guint i = from; i < argv->len; i++) g_ptr_array_add(p, g_strdup(argv->pdata[i]));
  return p;
}

/* sbatch's short options that take a value, and its long ones that do not. */
static const char *const sbatch_short_values = "AaBbcDdeGiJLMmNnopqStwx";
static const char *const sbatch_long_switches[] = {"--exclusive",
                                                   "--hold",
                                                   "--parsable",
                                                   "--requeue",
                                                   "--no-requeue",
                                                   "--test-only",
                                                   "--wait",
                                                   "--spread-job",
                                                   "--use-min-nodes",
                                                   "--verbose",
                                                   "--quiet",
                                                   "--overcommit",
                                                   "--contiguous",
                                                   "--no-kill",
                                                   "--ignore-pbs",
                                                   "--get-user-env",
                                                   NULL};

/* A wrapper at ARGV[at] (bash/sh, or sbatch): runs what it runs and sets
 * *handled; the words before it and its options become the prefix. */
static gboolean wrapper(Run *r, GPtrArray *argv, guint at, const Redirs *d, int64_t line,
                        gboolean *handled) {
  const char *input = d->input;
  int64_t input_line = d->input_line > 0 ? d->input_line : line;
  g_autofree char *base = g_path_get_basename(argv->pdata[at]);
  *handled = FALSE;
  if (strcmp(base, "sbatch") == 0) {
    guint i = at + 1;
    for (; i < argv->len; i++) {
      const char *w = argv->pdata[i];
      if (strcmp(w, "--wrap") == 0 || g_str_has_prefix(w, "--wrap=")) {
        const char *text = w[6] == '=' ? w + 7 : (i + 1 < argv->len ? argv->pdata[i + 1] : "");
        g_autoptr(GPtrArray) prefix = prefix_with(r, argv, 0, i);
        for (guint k = i + (w[6] == '=' ? 1 : 2); k < argv->len; k++)
          g_ptr_array_add(prefix, g_strdup(argv->pdata[k]));
        *handled = TRUE;
        return ptsim_shell_run_text(r, text, line, TRUE, NULL, NULL, prefix);
      }
      if (w[0] != '-') break; /* the script */
      if (w[1] != '-' && w[1] && !w[2] && strchr(sbatch_short_values, w[1]))
        i++;
      else if (w[1] == '-' && !strchr(w, '=') && !is_word(w, sbatch_long_switches))
        i++;
    }
    const char *file = i < argv->len ? argv->pdata[i] : NULL;
    const char *text = file ? g_hash_table_lookup(r->sh->files, file) : input;
    if (!text) return TRUE;
    g_autoptr(GPtrArray) prefix = prefix_with(r, argv, 0, i);
    g_autoptr(GPtrArray) args = file ? words_from(argv, i + 1) : NULL;
    *handled = TRUE;
    return ptsim_shell_run_text(r, text, file ? line : input_line, TRUE, file, args, prefix);
  }
  static const char *const shells[] = {"bash", "sh", "dash", "zsh", "ksh", NULL};
  if (!is_word(base, shells)) return TRUE;
  guint i = at + 1;
  gboolean c = FALSE;
  for (; i < argv->len; i++) {
    const char *w = argv->pdata[i];
    if (w[0] != '-' && w[0] != '+') break;
    if (strcmp(w, "--") == 0) {
      i++;
      break;
    }
    if (w[1] != '-' && strchr(w, 'c')) c = TRUE;
    if (strcmp(w, "-o") == 0 || strcmp(w, "+o") == 0 || strcmp(w, "-O") == 0) i++;
  }
  g_autoptr(GPtrArray) prefix = prefix_with(r, argv, 0, at);
  if (c) {
    if (i >= argv->len) return TRUE; /* bash -c without its text: an error in bash */
    g_autoptr(GPtrArray) args = words_from(argv, i + 2);
    const char *arg0 = i + 1 < argv->len ? argv->pdata[i + 1] : base;
    *handled = TRUE;
    return ptsim_shell_run_text(r, argv->pdata[i], line, TRUE, arg0, args, prefix);
  }
  const char *file = i < argv->len ? argv->pdata[i] : NULL;
  const char *text = file ? g_hash_table_lookup(r->sh->files, file) : input;
  if (!text) {
    if (file) {
      g_autofree char *note = g_strdup_printf("%s %s: a script in another file is not read", base,
                                              file);
      ptsim_shell_note(r, line, note);
    }
    return TRUE;
  }
  g_autoptr(GPtrArray) args = file ? words_from(argv, i + 1) : NULL;
  *handled = TRUE;
  return ptsim_shell_run_text(r, text, file ? line : input_line, TRUE, file, args, prefix);
}

/* ---- builtins ---- */

static const char *const declarations[] = {"export",   "local",   "declare",
                                           "readonly", "typeset", NULL};

/* A count argument of shift, break, continue, return, exit (default 1 or 0). */
static int64_t count_arg(GPtrArray *argv, int64_t fallback) {
  int64_t n = fallback;
  if (argv->len > 1 && !ptsim_number_parse_int64(argv->pdata[1], &n)) n = fallback;
  return n;
}

/* Runs builtin ARGV[0] when it is one: *done. */
static gboolean builtin(Run *r, GPtrArray *argv, int64_t line, gboolean *done) {
  const char *cmd = argv->pdata[0];
  *done = TRUE;
  r->status = 0;
  if (is_word(cmd, declarations)) {
    for (guint i = 1; i < argv->len; i++) { /* "NAME=value" given as an expanded word */
      const char *w = argv->pdata[i], *eq = strchr(w, '=');
      if (!eq || !ptsim_shell_is_name_start(w[0])) continue;
      g_autofree char *name = g_strndup(w, (gsize)(eq - w));
      gboolean valid = TRUE;
      for (const char *c = name; *c; c++) valid = valid && ptsim_shell_is_name_char(*c);
      if (valid) ptsim_shell_var_set_string(r, name, eq + 1);
    }
  } else if (strcmp(cmd, "exit") == 0) {
    r->exited = TRUE;
    r->status = (int)count_arg(argv, 0);
    if (r->status != 0) {
      g_autofree char *note = g_strdup_printf("the script exits here with status %d (what "
                                              "made it fail? --script-args and --env give it "
                                              "its arguments and environment)",
                                              r->status);
      ptsim_shell_note(r, line, note);
    }
  } else if (strcmp(cmd, "return") == 0) {
    r->returning = TRUE;
    r->status = (int)count_arg(argv, 0);
  } else if (strcmp(cmd, "break") == 0 || strcmp(cmd, "continue") == 0) {
    int64_t n = count_arg(argv, 1);
    if (n < 1) n = 1;
    if (n > r->loops) n = r->loops;
    if (cmd[0] == 'b')
      r->breaking = (int)n;
    else
      r->continuing = (int)n;
  } else if (strcmp(cmd, "true") == 0 || strcmp(cmd, ":") == 0) {
    r->status = 0;
  } else if (strcmp(cmd, "false") == 0) {
    r->status = 1;
  } else if (strcmp(cmd, "[[") == 0 || strcmp(cmd, "[") == 0 || strcmp(cmd, "test") == 0) {
    guint to = argv->len;
    if (strcmp(cmd, "test") != 0 && to > 1) to--; /* the closing ]] or ] */
    gboolean known = TRUE;
    r->status = test_words(argv, 1, to, cmd[1] == '[', &known) ? 0 : 1;
    if (!known) {
      r->status = 1;
      ptsim_shell_note(r, line,
                       "a condition ptsim cannot evaluate (a file test?) is taken as false");
    }
  } else if (strcmp(cmd, "set") == 0) {
    for (guint i = 1; i < argv->len; i++) {
      if (strcmp(argv->pdata[i], "--") != 0 &&
          (i > 1 || ((char *)argv->pdata[i])[0] == '-' || ((char *)argv->pdata[i])[0] == '+'))
        continue; /* set -e, set -x, set -o pipefail: nothing to keep */
      guint from = strcmp(argv->pdata[i], "--") == 0 ? i + 1 : i;
      g_ptr_array_set_size(r->args, 0);
      for (guint k = from; k < argv->len; k++) g_ptr_array_add(r->args, g_strdup(argv->pdata[k]));
      break;
    }
  } else if (strcmp(cmd, "shift") == 0) {
    int64_t n = count_arg(argv, 1);
    if (n < 0 || n > (int64_t)r->args->len)
      r->status = 1;
    else
      g_ptr_array_remove_range(r->args, 0, (guint)n);
  } else if (strcmp(cmd, "unset") == 0) {
    gboolean functions = FALSE;
    for (guint i = 1; i < argv->len; i++) {
      const char *w = argv->pdata[i];
      if (strcmp(w, "-f") == 0) functions = TRUE;
      if (w[0] == '-') continue;
      g_hash_table_remove(functions ? r->sh->functions : r->sh->out->vars, w);
    }
  } else if (strcmp(cmd, "read") == 0) {
    for (guint i = 1; i < argv->len; i++) /* no input: the names are emptied, the status 1 */
      if (ptsim_shell_is_name_start(((char *)argv->pdata[i])[0]))
        ptsim_shell_var_set_string(r, argv->pdata[i], "");
    r->status = 1;
  } else if (strcmp(cmd, "eval") == 0) {
    g_autoptr(GPtrArray) words = words_from(argv, 1);
    g_ptr_array_add(words, NULL);
    g_autofree char *text = g_strjoinv(" ", (char **)words->pdata);
    return ptsim_shell_run_text(r, text, line, FALSE, NULL, NULL, NULL);
  } else if (strcmp(cmd, "source") == 0 || strcmp(cmd, ".") == 0) {
    const char *file = argv->len > 1 ? argv->pdata[1] : "";
    const char *text = g_hash_table_lookup(r->sh->files, file);
    if (text) {
      g_autoptr(GPtrArray) args = argv->len > 2 ? words_from(argv, 2) : NULL;
      return ptsim_shell_run_text(r, text, line, FALSE, NULL, args, NULL);
    }
    g_autofree char *note = g_strdup_printf("%s %s: another file is not read (give its "
                                            "variables with --env NAME=VALUE)",
                                            cmd, file);
    ptsim_shell_note(r, line, note);
  } else if (strcmp(cmd, "cat") == 0 || strcmp(cmd, "tee") == 0 || strcmp(cmd, "echo") == 0 ||
             strcmp(cmd, "printf") == 0 || strcmp(cmd, "cd") == 0 || strcmp(cmd, "mkdir") == 0 ||
             strcmp(cmd, "pushd") == 0 || strcmp(cmd, "popd") == 0) {
    /* they never launch training (cat and tee may write a file) */
  } else {
    *done = FALSE;
  }
  return TRUE;
}

/* ---- redirections ---- */

/* The redirection at r->pos (and its target word). */
static gboolean redirection(Run *r, gboolean run_it, Redirs *d) {
  Token *t = peek(r);
  r->pos++;
  if (t->type == T_HEREDOC) {
    if (!run_it || !t->parts) return TRUE;
    g_free(d->input);
    d->input = ptsim_shell_expand_string(r, t->parts, t->line);
    d->input_line = t->line + 1;
    return d->input != NULL;
  }
  Token *target = peek(r);
  if (target->type != T_WORD)
    return ptsim_shell_fail(r, t->line,
                            "a redirection ('<' or '>') without its file: a "
                            "<placeholder> left to fill in?");
  r->pos++;
  if (!run_it) return TRUE;
  g_autofree char *word = ptsim_shell_expand_string(r, target->parts, target->line);
  if (!word) return FALSE;
  if (t->redir == R_STRING) {
    g_free(d->input);
    d->input = g_strconcat(word, "\n", NULL);
    d->input_line = 0;
  } else if (t->redir == R_OUT || t->redir == R_APPEND) {
    g_free(d->output);
    d->output = g_steal_pointer(&word);
    d->append = t->redir == R_APPEND;
  }
  return TRUE;
}

gboolean ptsim_shell_redirections(Run *r, gboolean run_it) {
  Redirs d = {NULL, NULL, FALSE, 0};
  gboolean ok = TRUE;
  while (ok && (peek(r)->type == T_REDIR || peek(r)->type == T_HEREDOC))
    ok = redirection(r, run_it, &d);
  redirs_clear(&d);
  return ok;
}

/* cat > FILE (or tee FILE) with a here-document: the script writes FILE,
 * which a later sbatch, bash or source may run. */
static gboolean write_file(Run *r, GPtrArray *argv, const Redirs *d, int64_t line) {
  const char *cmd = argv->pdata[0];
  const char *file = strcmp(cmd, "tee") == 0 && argv->len > 1 ? argv->pdata[argv->len - 1]
                                                              : d->output;
  if (!d->input || !file || (strcmp(cmd, "cat") != 0 && strcmp(cmd, "tee") != 0)) return TRUE;
  const char *old = d->append ? g_hash_table_lookup(r->sh->files, file) : NULL;
  char *text = g_strconcat(old ? old : "", d->input, NULL);
  if (!ptsim_shell_spend(r, line, strlen(text))) {
    g_free(text);
    return FALSE;
  }
  g_hash_table_replace(r->sh->files, g_strdup(file), text);
  return TRUE;
}

/* ---- a simple command ---- */

gboolean ptsim_shell_simple_command(Run *r, gboolean run_it) {
  g_autoptr(GPtrArray) argv = ptsim_shell_strv_new();
  int64_t line = peek(r)->line;
  gboolean test = ptsim_shell_plain(peek(r)) && strcmp(ptsim_shell_plain(peek(r)), "[[") == 0;
  gboolean declaring = FALSE, command_word = FALSE, append;
  gsize index_at;
  g_auto(Redirs) d = {NULL, NULL, FALSE, 0};
  for (;;) {
    Token *t = peek(r);
    if (t->type == T_END || t->type == T_NEWLINE || t->type == T_PIPE || t->type == T_LPAREN ||
        t->type == T_RPAREN || t->type == T_DSEMI || t->type == T_ARRAY_OPEN ||
        t->type == T_ARITH || (!test && (t->type == T_AND || t->type == T_OR)))
      break;
    if (t->type == T_AND || t->type == T_OR) { /* inside [[ ]] */
      if (run_it) g_ptr_array_add(argv, g_strdup(t->type == T_AND ? "&&" : "||"));
      r->pos++;
      continue;
    }
    if (t->type == T_REDIR || t->type == T_HEREDOC) {
      if (!redirection(r, run_it, &d)) return FALSE;
      continue;
    }
    if ((!command_word || declaring) && assignment_name(t, &append, &index_at) > 0) {
      if (!assign(r, run_it)) return FALSE;
      continue;
    }
    const char *w = ptsim_shell_plain(t);
    if (!command_word && w && is_word(w, declarations)) declaring = TRUE;
    command_word = TRUE;
    if (run_it && !ptsim_shell_expand_word(r, t->parts, TRUE, t->line, argv)) return FALSE;
    r->pos++;
    if (test && w && strcmp(w, "]]") == 0) break;
  }
  if (peek(r)->type == T_ARRAY_OPEN)
    return ptsim_shell_fail(r, line, "'(' after a word that is not NAME=: not read by ptsim");
  if (!run_it) return TRUE;
  r->status = 0;
  if (argv->len == 0) return TRUE;
  const Function *f = g_hash_table_lookup(r->sh->functions, argv->pdata[0]);
  if (f) {
    g_autoptr(GPtrArray) args = words_from(argv, 1);
    return ptsim_shell_call(r, f, args, line);
  }
  gboolean done = FALSE;
  if (!builtin(r, argv, line, &done)) return FALSE;
  if (done) return write_file(r, argv, &d, line);
  for (guint at = 0; at < argv->len; at++) {
    const char *w = argv->pdata[at];
    if (g_str_has_suffix(w, ".py")) break;       /* a word after the script is its argument */
    if (w[0] == '-' || strchr(w, '=')) continue; /* an option (or its value) of a launcher */
    gboolean handled = FALSE;
    if (!wrapper(r, argv, at, &d, line, &handled)) return FALSE;
    if (handled) return TRUE;
  }
  return consider(r, argv, line);
}
