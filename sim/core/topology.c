/* topology.c — Megatron-LM rank placement on nodes; see topology.h for the
 * rank order, the group table and the NIC-sharing rules.
 *
 * Invariants: every group is the arithmetic progression first_rank +
 * i*stride, i < size; node(rank) = rank / node_size is non-decreasing along
 * it, so distinct nodes are counted by watching the node index change. */
#include "topology.h"

/* ---- small helpers (prefixed: core .c files may be compiled together) ---- */

PTSIM_HD static int64_t topo_at_least_one(int64_t x) { return x < 1 ? 1 : x; }

/* The dense kind whose progression an expert kind shares (topology.h). */
PTSIM_HD static PtsimGroupKind topo_dense_twin(PtsimGroupKind kind) {
  switch (kind) {
  case PTSIM_GROUP_ETP:
    return PTSIM_GROUP_TP;
  case PTSIM_GROUP_EP:
    return PTSIM_GROUP_CP;
  case PTSIM_GROUP_EDP:
    return PTSIM_GROUP_DP;
  case PTSIM_GROUP_ETP_EP:
    return PTSIM_GROUP_TP_CP;
  default:
    return kind;
  }
}

/* Size and stride of a group kind (the table in topology.h). */
PTSIM_HD static void topo_kind_shape(int64_t tp, int64_t cp, int64_t dp, int64_t pp,
                                     PtsimGroupKind kind, int64_t *size, int64_t *stride) {
  switch (topo_dense_twin(kind)) {
  case PTSIM_GROUP_TP:
    *size = tp;
    *stride = 1;
    break;
  case PTSIM_GROUP_CP:
    *size = cp;
    *stride = tp;
    break;
  case PTSIM_GROUP_DP:
    *size = dp;
    *stride = tp * cp;
    break;
  case PTSIM_GROUP_DP_CP:
    *size = dp * cp;
    *stride = tp;
    break;
  case PTSIM_GROUP_PP:
    *size = pp;
    *stride = tp * cp * dp;
    break;
  case PTSIM_GROUP_TP_CP:
  default:
    *size = tp * cp;
    *stride = 1;
    break;
  }
}

/* First (lowest) rank of the group of `kind` holding `rank`: the rank with
 * the kind's own coordinates set to zero. */
PTSIM_HD static int64_t topo_group_start(int64_t tp, int64_t cp, int64_t dp, PtsimGroupKind kind,
                                         int64_t rank) {
  int64_t t = 0, c = 0, d = 0, p = 0;
  ptsim_topology_coords(tp, cp, dp, rank, &t, &c, &d, &p);
  switch (topo_dense_twin(kind)) {
  case PTSIM_GROUP_TP:
    t = 0;
    break;
  case PTSIM_GROUP_CP:
    c = 0;
    break;
  case PTSIM_GROUP_DP:
    d = 0;
    break;
  case PTSIM_GROUP_DP_CP:
    d = 0;
    c = 0;
    break;
  case PTSIM_GROUP_PP:
    p = 0;
    break;
  case PTSIM_GROUP_TP_CP:
  default:
    t = 0;
    c = 0;
    break;
  }
  return ptsim_topology_rank(tp, cp, dp, t, c, d, p);
}

/* 1 when the progression start + i*stride (i < size) leaves start's node.
 * O(1): the progression is monotone, so compare its two ends. */
PTSIM_HD static int topo_progression_crosses(int64_t start, int64_t stride, int64_t size,
                                             int64_t node_size) {
  int64_t last = start + (size - 1) * stride;
  return (start / node_size) != (last / node_size);
}

/* ---- public ---- */

PTSIM_HD int64_t ptsim_topology_rank(int64_t tp, int64_t cp, int64_t dp, int64_t tp_rank,
                                     int64_t cp_rank, int64_t dp_rank, int64_t pp_rank) {
  tp = topo_at_least_one(tp);
  cp = topo_at_least_one(cp);
  dp = topo_at_least_one(dp);
  return tp_rank + tp * (cp_rank + cp * (dp_rank + dp * pp_rank));
}

PTSIM_HD void ptsim_topology_coords(int64_t tp, int64_t cp, int64_t dp, int64_t rank,
                                    int64_t *tp_rank, int64_t *cp_rank, int64_t *dp_rank,
                                    int64_t *pp_rank) {
  int64_t r;
  tp = topo_at_least_one(tp);
  cp = topo_at_least_one(cp);
  dp = topo_at_least_one(dp);
  r = rank < 0 ? 0 : rank;
  if (tp_rank != 0) *tp_rank = r % tp;
  r /= tp;
  if (cp_rank != 0) *cp_rank = r % cp;
  r /= cp;
  if (dp_rank != 0) *dp_rank = r % dp;
  r /= dp;
  if (pp_rank != 0) *pp_rank = r;
}

PTSIM_HD void ptsim_topology_group_of(int64_t tp, int64_t cp, int64_t dp, int64_t pp,
                                      int64_t gpus_per_node, PtsimGroupKind kind, int64_t rank,
                                      PtsimGroup *out) {
  int64_t world, g, size, stride, start, i, node, last, run;
  int64_t nodes, min_run, max_run, node_first, node_last, r, senders;

  tp = topo_at_least_one(tp);
  cp = topo_at_least_one(cp);
  dp = topo_at_least_one(dp);
  pp = topo_at_least_one(pp);
  g = topo_at_least_one(gpus_per_node);
  world = tp * cp * dp * pp;
  rank = rank < 0 ? 0 : rank % world;

  topo_kind_shape(tp, cp, dp, pp, kind, &size, &stride);
  start = topo_group_start(tp, cp, dp, kind, rank);

  /* Distinct nodes and members per node (exact for any node size; a group
   * with one member elsewhere counts as crossing).  The members ascend, so
   * each node holds a run of them: one division a node, not a member (a
   * sweep builds a plan per layout), and none when every member has a node
   * to itself. */
  if (stride >= g) {
    nodes = size;
    min_run = max_run = 1;
  } else {
    nodes = 0;
    min_run = size;
    max_run = 0;
    for (i = 0; i < size; i = last + 1) {
      node = (start + i * stride) / g;
      last = ((node + 1) * g - 1 - start) / stride; /* the last member on this node */
      if (last > size - 1) last = size - 1;
      run = last - i + 1;
      if (run < min_run) min_run = run;
      if (run > max_run) max_run = run;
      nodes++;
    }
  }

  /* Senders: GPUs of this group's first node whose own group of this kind
   * leaves the node.  All groups of a kind run at once. */
  senders = 0;
  node_first = (start / g) * g;
  node_last = node_first + g;
  if (node_last > world) node_last = world;
  for (r = node_first; r < node_last; r++) {
    /* r's group starts where r's place in its progression is zero (what
     * topo_group_start says, with two divisions instead of six) */
    int64_t s = r - (r / stride) % size * stride;
    if (topo_progression_crosses(s, stride, size, g)) senders++;
  }

  out->kind = kind;
  out->size = size;
  out->first_rank = start;
  out->stride = stride;
  out->nodes = nodes;
  out->gpus_per_node = min_run;
  out->max_gpus_per_node = max_run;
  out->even = (min_run == max_run && nodes * min_run == size) ? 1 : 0;
  out->fabric_senders_per_node = senders;
  out->node_size = g;
}

PTSIM_HD int64_t ptsim_topology_domain_size(const PtsimHardware *hw) {
  int64_t g = hw->gpus_per_nvlink_domain > 0 ? hw->gpus_per_nvlink_domain : hw->gpus_per_node;
  return topo_at_least_one(g);
}

PTSIM_HD void ptsim_topology_group(const PtsimLayout *layout, const PtsimHardware *hw,
                                   PtsimGroupKind kind, PtsimGroup *out) {
  if (topo_dense_twin(kind) != kind) {
    int64_t etp = layout->etp > 0 ? layout->etp : layout->tp;
    int64_t ep = layout->ep > 0 ? layout->ep : 1;
    int64_t edp = layout->edp > 0 ? layout->edp : layout->tp * layout->cp * layout->dp / (etp * ep);
    ptsim_topology_group_of(etp, ep, edp, layout->pp, ptsim_topology_domain_size(hw), kind, 0, out);
    return;
  }
  ptsim_topology_group_of(layout->tp, layout->cp, layout->dp, layout->pp,
                          ptsim_topology_domain_size(hw), kind, 0, out);
}

PTSIM_HD int ptsim_topology_group_crosses_nodes(const PtsimGroup *group) {
  return group->nodes > 1 ? 1 : 0;
}

PTSIM_HD void ptsim_topology_group_uniform(int64_t n, int64_t g, PtsimGroup *out) {
  int64_t last;
  n = topo_at_least_one(n);
  if (g < 1 || g > n) g = n;
  out->kind = PTSIM_GROUP_DP;
  out->size = n;
  out->first_rank = 0;
  out->stride = 1;
  out->nodes = (n + g - 1) / g;
  last = n - (out->nodes - 1) * g; /* members on the last node */
  out->gpus_per_node = last < g ? last : g;
  out->max_gpus_per_node = g;
  out->even = last == g ? 1 : 0;
  out->fabric_senders_per_node = out->nodes > 1 ? g : 0;
  out->node_size = g;
}
