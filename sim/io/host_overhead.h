/* host_overhead.h — hw_profiles/software/host_overhead.ini (the host's
 * per-call costs, each with its source) into a job's PtsimHostCosts
 * (sim/core/host.h).
 *
 * Shell module (GLib).  Errors: PTSIM_CONFIG_ERROR (a missing file, a key
 * missing, out of range or without a source, naming file:line). */
#ifndef PTSIM_HOST_OVERHEAD_H
#define PTSIM_HOST_OVERHEAD_H

#include <glib.h>
#include "host.h"

#define PTSIM_HOST_OVERHEAD_FILE "hw_profiles/software/host_overhead.ini"

/* The costs of the data folder's file (ptsim_config_data_dir()); read once
 * per process and kept.  FALSE with *error when it cannot be read. */
gboolean ptsim_host_costs_load(PtsimHostCosts *out, GError **error);

/* The same from TEXT (LEN bytes) labelled LABEL in messages. */
gboolean ptsim_host_costs_load_data(const char *text, gsize len, const char *label,
                                    PtsimHostCosts *out, GError **error);

#endif /* PTSIM_HOST_OVERHEAD_H */
