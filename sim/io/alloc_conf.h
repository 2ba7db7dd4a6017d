/* alloc_conf.h — PYTORCH_CUDA_ALLOC_CONF text into allocator options, for
 * the emulation's what-ifs ("expandable_segments:True,max_split_size_mb:512").
 * Keys: max_split_size_mb, max_non_split_rounding_mb,
 * roundup_power2_divisions (N, or [256:1,512:2,>:8]),
 * garbage_collection_threshold, expandable_segments (True|False).  Shell
 * module; errors in PTSIM_CONFIG_ERROR name the key and the value. */
#ifndef PTSIM_ALLOC_CONF_H
#define PTSIM_ALLOC_CONF_H

#include <glib.h>
#include "alloc.h"

gboolean ptsim_alloc_conf_parse(const char *text, PtsimAllocOptions *opts, GError **error);

#endif /* PTSIM_ALLOC_CONF_H */
