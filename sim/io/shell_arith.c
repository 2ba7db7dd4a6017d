/* shell_arith.c — bash's integer arithmetic, as $(( )), (( )) and a C-style
 * for's head use it: int64 numbers and variables, the C operators (comma,
 * assignments and ++/--, ?:, || && with short-circuit, | ^ &, comparisons,
 * shifts, + - * / % **, unary + - ! ~) with C's precedence.  What bash
 * would wrap (overflow) or trap (division by zero) is refused; a variable
 * whose value is not an integer is refused too (bash would evaluate it as
 * an expression).  Sibling: shell_words.c, which expands the text first. */
#include <string.h>

#include "numbers.h"
#include "shell_int.h"

typedef struct {
  const char *p;
  Run *r;
  const char *why; /* NULL: fine so far; else why the expression is refused */
  int depth;       /* of parentheses and unary operators */
  int noeval;      /* > 0: parsing a branch that is not taken */
} Calc;

static int64_t comma(Calc *c);
static int64_t assignment(Calc *c);

static int64_t calc_fail(Calc *c, const char *why) {
  if (!c->why) c->why = why;
  return 0;
}

static void blank(Calc *c) {
  while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r') c->p++;
}

/* Whether the next characters are OP (and not the start of a longer one). */
static gboolean take(Calc *c, const char *op) {
  blank(c);
  gsize n = strlen(op);
  if (strncmp(c->p, op, n) != 0) return FALSE;
  if (n == 1 && strchr("<>=!&|*+-", op[0]) && c->p[1] != '\0') {
    char next = c->p[1];
    if (next == '=' && op[0] != '=' && op[0] != '!') return FALSE; /* <= >= += ... */
    if (next == op[0] && strchr("<>&|*", op[0])) return FALSE;     /* << && || ** */
    if ((op[0] == '=' || op[0] == '!') && next == '=') return FALSE;
  }
  if (n == 2 && strchr("<>", op[0]) && op[0] == op[1] && c->p[2] == '=') return FALSE;
  c->p += n;
  return TRUE;
}

static int64_t var_value(Calc *c, const char *name) {
  GPtrArray *v = ptsim_shell_var_get(c->r, name);
  int64_t value = 0;
  if (!v || v->len == 0) return 0;
  g_autofree char *text = g_strstrip(g_strdup(v->pdata[0]));
  if (text[0] && !ptsim_number_parse_int64(text, &value))
    return calc_fail(c, "a variable that is not an integer");
  return value;
}

static void var_store(Calc *c, const char *name, int64_t value) {
  if (c->noeval || c->why) return;
  g_autofree char *text = g_strdup_printf("%" G_GINT64_FORMAT, value);
  ptsim_shell_var_set_string(c->r, name, text);
}

static char *name_at(Calc *c) {
  blank(c);
  if (!ptsim_shell_is_name_start(*c->p)) return NULL;
  const char *s = c->p;
  while (ptsim_shell_is_name_char(*c->p)) c->p++;
  return g_strndup(s, (gsize)(c->p - s));
}

static int64_t number(Calc *c) {
  const char *s = c->p;
  int base = 10;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    c->p += 2;
  }
  const char *d = c->p;
  while (base == 16 ? g_ascii_isxdigit(*c->p) : g_ascii_isdigit(*c->p)) c->p++;
  if (c->p == d) return calc_fail(c, "not an integer expression ptsim can evaluate");
  uint64_t v = 0;
  for (const char *k = d; k < c->p; k++) {
    int digit = g_ascii_xdigit_value(*k);
    if (v > ((uint64_t)G_MAXINT64 - (uint64_t)digit) / (uint64_t)base)
      return calc_fail(c, "overflows 64-bit integers");
    v = v * (uint64_t)base + (uint64_t)digit;
  }
  return (int64_t)v;
}

static int64_t checked(Calc *c, gboolean overflow, int64_t v) {
  return overflow ? calc_fail(c, "overflows 64-bit integers") : v;
}

static int64_t unary(Calc *c);

static int64_t primary(Calc *c) {
  blank(c);
  if (*c->p == '(') {
    c->p++;
    int64_t v = comma(c);
    blank(c);
    if (*c->p != ')') return calc_fail(c, "a '(' without its ')'");
    c->p++;
    return v;
  }
  if (g_ascii_isdigit(*c->p)) return number(c);
  g_autofree char *name = name_at(c);
  if (!name) return calc_fail(c, "not an integer expression ptsim can evaluate");
  int64_t v = var_value(c, name);
  if (take(c, "++") || take(c, "--")) { /* postfix */
    int64_t w = 0;
    if (__builtin_add_overflow(v, c->p[-1] == '+' ? 1 : -1, &w)) return checked(c, TRUE, 0);
    var_store(c, name, w);
  }
  return v;
}

/* ++NAME / --NAME; bash reads ++ or -- before anything else as two signs. */
static gboolean prefix_step(Calc *c, int64_t *out) {
  if (!((c->p[0] == '+' || c->p[0] == '-') && c->p[1] == c->p[0])) return FALSE;
  const char *q = c->p + 2;
  while (*q == ' ' || *q == '\t') q++;
  if (!ptsim_shell_is_name_start(*q)) return FALSE;
  gboolean up = c->p[0] == '+';
  c->p += 2;
  g_autofree char *name = name_at(c);
  int64_t v = 0;
  if (up ? __builtin_add_overflow(var_value(c, name), 1, &v)
         : __builtin_sub_overflow(var_value(c, name), 1, &v))
    *out = checked(c, TRUE, 0);
  else
    var_store(c, name, *out = v);
  return TRUE;
}

static int64_t unary_nested(Calc *c) {
  blank(c);
  int64_t stepped = 0;
  if (prefix_step(c, &stepped)) return stepped;
  char op = *c->p;
  if (op == '-' || op == '+' || op == '!' || op == '~') {
    c->p++;
    int64_t v = unary(c);
    if (op == '-') return v == G_MININT64 ? checked(c, TRUE, 0) : -v;
    if (op == '!') return !v;
    if (op == '~') return ~v;
    return v;
  }
  return primary(c);
}

static int64_t unary(Calc *c) {
  if (c->why) return 0;
  if (c->depth >= SHELL_DEPTH_MAX) return calc_fail(c, "nested too deep");
  c->depth++;
  int64_t v = unary_nested(c);
  c->depth--;
  return v;
}

static int64_t power(Calc *c) {
  int64_t v = unary(c);
  if (c->why || !take(c, "**")) return v;
  int64_t e = power(c); /* right-associative */
  if (e < 0) return calc_fail(c, "a negative exponent");
  int64_t out = 1;
  for (int64_t i = 0; i < e && !c->why; i++) {
    if (__builtin_mul_overflow(out, v, &out)) return checked(c, TRUE, 0);
    if (out == 0 || out == 1) break;
  }
  return out;
}

static int64_t product(Calc *c) {
  int64_t v = power(c);
  while (!c->why) {
    char op = take(c, "*") ? '*' : take(c, "/") ? '/' : take(c, "%") ? '%' : 0;
    if (!op) return v;
    int64_t w = power(c);
    if (op == '*') {
      if (__builtin_mul_overflow(v, w, &v)) return checked(c, TRUE, 0);
      continue;
    }
    if (w == 0) {
      if (c->noeval) continue;
      return calc_fail(c, "division by zero");
    }
    if (v == G_MININT64 && w == -1) return checked(c, TRUE, 0);
    v = op == '/' ? v / w : v % w;
  }
  return 0;
}

static int64_t sum(Calc *c) {
  int64_t v = product(c);
  while (!c->why) {
    char op = take(c, "+") ? '+' : take(c, "-") ? '-' : 0;
    if (!op) return v;
    int64_t w = product(c);
    if (op == '+' ? __builtin_add_overflow(v, w, &v) : __builtin_sub_overflow(v, w, &v))
      return checked(c, TRUE, 0);
  }
  return 0;
}

static int64_t shift(Calc *c) {
  int64_t v = sum(c);
  while (!c->why) {
    gboolean left = take(c, "<<");
    if (!left && !take(c, ">>")) return v;
    int64_t w = sum(c);
    if (w < 0 || w > 62) return calc_fail(c, "a shift out of range");
    if (left && (v > (G_MAXINT64 >> w) || v < (G_MININT64 >> w))) return checked(c, TRUE, 0);
    v = left ? v * ((int64_t)1 << w) : v >> w;
  }
  return 0;
}

static int64_t compare(Calc *c) {
  int64_t v = shift(c);
  while (!c->why) {
    if (take(c, "<="))
      v = v <= shift(c);
    else if (take(c, ">="))
      v = v >= shift(c);
    else if (take(c, "<"))
      v = v < shift(c);
    else if (take(c, ">"))
      v = v > shift(c);
    else
      return v;
  }
  return 0;
}

static int64_t equality(Calc *c) {
  int64_t v = compare(c);
  while (!c->why) {
    if (take(c, "=="))
      v = v == compare(c);
    else if (take(c, "!="))
      v = v != compare(c);
    else
      return v;
  }
  return 0;
}

static int64_t bits(Calc *c) { /* & ^ | at one level: launch scripts do not mix them */
  int64_t v = equality(c);
  while (!c->why) {
    if (take(c, "&"))
      v &= equality(c);
    else if (take(c, "^"))
      v ^= equality(c);
    else if (take(c, "|"))
      v |= equality(c);
    else
      return v;
  }
  return 0;
}

static int64_t logic_and(Calc *c) {
  int64_t v = bits(c);
  while (!c->why && take(c, "&&")) {
    if (!v) c->noeval++;
    int64_t w = bits(c);
    if (!v) c->noeval--;
    v = v && w;
  }
  return v;
}

static int64_t logic_or(Calc *c) {
  int64_t v = logic_and(c);
  while (!c->why && take(c, "||")) {
    if (v) c->noeval++;
    int64_t w = logic_and(c);
    if (v) c->noeval--;
    v = v || w;
  }
  return v;
}

static int64_t conditional(Calc *c) {
  int64_t v = logic_or(c);
  if (c->why || !take(c, "?")) return v;
  if (!v) c->noeval++;
  int64_t a = assignment(c);
  if (!v) c->noeval--;
  if (!take(c, ":")) return calc_fail(c, "a '?' without its ':'");
  if (v) c->noeval++;
  int64_t b = conditional(c);
  if (v) c->noeval--;
  return v ? a : b;
}

static int64_t assignment(Calc *c) {
  blank(c);
  const char *start = c->p;
  g_autofree char *name = name_at(c);
  if (name) {
    static const char *const ops[] = {"+=", "-=", "*=", "/=", "%=", "=", NULL};
    for (const char *const *op = ops; *op; op++) {
      if (!take(c, *op)) continue;
      int64_t w = assignment(c), v = 0, old = (*op)[0] == '=' ? 0 : var_value(c, name);
      gboolean overflow = FALSE;
      switch ((*op)[0]) {
      case '+':
        overflow = __builtin_add_overflow(old, w, &v);
        break;
      case '-':
        overflow = __builtin_sub_overflow(old, w, &v);
        break;
      case '*':
        overflow = __builtin_mul_overflow(old, w, &v);
        break;
      case '/':
      case '%':
        if (w == 0 && !c->noeval) return calc_fail(c, "division by zero");
        if (old == G_MININT64 && w == -1)
          overflow = TRUE;
        else if (w != 0)
          v = (*op)[0] == '/' ? old / w : old % w;
        break;
      default:
        v = w;
        break;
      }
      if (overflow) return checked(c, TRUE, 0);
      var_store(c, name, v);
      return v;
    }
    c->p = start; /* not an assignment: the name is an operand */
  }
  return conditional(c);
}

static int64_t comma(Calc *c) {
  int64_t v = assignment(c);
  while (!c->why && take(c, ",")) v = assignment(c);
  return v;
}

gboolean ptsim_shell_arith(Run *r, const char *text, int64_t line, const char *what,
                           int64_t *value) {
  Calc c = {text, r, NULL, 0, 0};
  blank(&c);
  *value = *c.p ? comma(&c) : 0; /* bash: an empty expression is 0 */
  blank(&c);
  if (!c.why && *c.p) c.why = "not an integer expression ptsim can evaluate";
  if (!c.why) return TRUE;
  return ptsim_shell_fail(r, line, "%s: %s", what, c.why);
}
