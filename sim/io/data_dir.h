/* data_dir.h — where an installed libptsim finds the data it reads at run
 * time (models/, hw_profiles/, validate/error_bands.ini, the published
 * runs): PREFIX/share/ptsim when the library is PREFIX/lib/libptsim.so,
 * found from the library's own path, so that an installed ptsim (or a
 * program linking the library) needs no environment variable wherever the
 * prefix was moved.  ptsim_config_data_dir() (config.h) asks it between
 * $PTSIM_DATA_DIR and the source tree the build came from.
 *
 * Shell module (GLib, dladdr). */
#ifndef PTSIM_DATA_DIR_H
#define PTSIM_DATA_DIR_H

/* The installed data folder beside the library that holds this function
 * (its models/ exists), as an absolute path; NULL when there is none (a
 * build tree).  Looked up once per process, thread-safe.  (transfer none) */
const char *ptsim_data_dir_installed(void);

#endif /* PTSIM_DATA_DIR_H */
