/* api_version.c — the version of the library loaded; see ptsim.h. */
#include "api_int.h"

int ptsim_api_version(void) { return PTSIM_VERSION_NUMBER; }

const char *ptsim_api_version_string(void) { return PTSIM_VERSION_STRING; }
