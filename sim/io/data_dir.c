/* data_dir.c — the installed data folder, found from the library's path;
 * see data_dir.h.  PTSIM_LIB_TO_DATA is the install layout's relative path
 * from the library's folder to the data ("../share/ptsim"), set by
 * CMakeLists.txt from GNUInstallDirs. */
#define _GNU_SOURCE /* dladdr */
#include "data_dir.h"

#include <dlfcn.h>
#include <glib.h>
#include <stdlib.h>

static gpointer find_installed(gpointer unused) {
  (void)unused;
  Dl_info info;
  if (!dladdr((void *)ptsim_data_dir_installed, &info) || !info.dli_fname) return NULL;
  g_autofree char *lib_dir = g_path_get_dirname(info.dli_fname);
  g_autofree char *data = g_build_filename(lib_dir, PTSIM_LIB_TO_DATA, NULL);
  g_autofree char *models = g_build_filename(data, "models", NULL);
  if (!g_file_test(models, G_FILE_TEST_IS_DIR)) return NULL;
  /* messages name the data folder: without the lib/.. detour */
  char *real = realpath(data, NULL);
  if (!real) return g_steal_pointer(&data);
  char *dir = g_strdup(real);
  free(real);
  return dir;
}

const char *ptsim_data_dir_installed(void) {
  static GOnce once = G_ONCE_INIT;
  return g_once(&once, find_installed, NULL);
}
