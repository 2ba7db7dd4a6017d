/* edit_distance.c — the Levenshtein distance behind every "did you mean"
 * (edit_distance.h). */
#include "edit_distance.h"

#include <string.h>

static char folded(char c, gboolean fold_dash) { return fold_dash && c == '_' ? '-' : c; }

size_t ptsim_edit_distance(const char *a, const char *b, gboolean fold_dash) {
  size_t la = strlen(a), lb = strlen(b);
  g_autofree size_t *row = g_new(size_t, lb + 1);
  for (size_t j = 0; j <= lb; j++) row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t best = MIN(row[j] + 1, row[j - 1] + 1);
      row[j] = MIN(best, diagonal + (folded(a[i - 1], fold_dash) != folded(b[j - 1], fold_dash)));
      diagonal = up;
    }
  }
  return row[lb];
}
