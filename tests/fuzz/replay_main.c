/* replay_main.c — runs a fuzz target over files, without libFuzzer: the
 * normal (gcc) build links each target with this main, and ctest replays
 * the crashes kept in tests/data/fuzz_regressions/TARGET/ and the seed
 * fixtures.  Arguments: files or folders (every regular file inside). */
#define FUZZ_REPLAY_MAIN
#include "fuzz_common.h"

static int replay_file(const char *path) {
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr(GError) error = NULL;
  if (!g_file_get_contents(path, &data, &len, &error)) {
    fprintf(stderr, "replay: %s\n", error->message);
    return 1;
  }
  LLVMFuzzerTestOneInput((const uint8_t *)data, len);
  return 0;
}

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  int failures = 0, files = 0;
  for (int i = 1; i < argc; i++) {
    if (!g_file_test(argv[i], G_FILE_TEST_IS_DIR)) {
      failures += replay_file(argv[i]);
      files++;
      continue;
    }
    g_autoptr(GDir) dir = g_dir_open(argv[i], 0, NULL);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while (dir && (name = g_dir_read_name(dir)))
      g_ptr_array_add(names, g_build_filename(argv[i], name, NULL));
    for (guint k = 0; k < names->len; k++) {
      if (!g_file_test(names->pdata[k], G_FILE_TEST_IS_REGULAR)) continue;
      failures += replay_file(names->pdata[k]);
      files++;
    }
  }
  printf("replayed %d input(s), %d unreadable\n", files, failures);
  return failures ? 1 : 0;
}
