/* topology.h — where the ranks of a parallel layout sit: which communicator
 * groups stay inside one NVLink domain and which cross the fabric.
 *
 * Rank order is Megatron-LM's (tp fastest, then cp, then dp, then pp):
 *
 *     rank = tp_rank + tp * (cp_rank + cp * (dp_rank + dp * pp_rank))
 *
 * and node(rank) = rank / node_size (ranks fill nodes in order, as a
 * launcher with one process per GPU does).  A "node" in this module is an
 * NVLink domain: the GPUs whose traffic stays on NVLink, so the unit whose
 * edge is the fabric (ptsim_topology_domain_size).  On HGX/DGX machines it
 * is the host (8 GPUs); on a GB200 NVL72 rack it is 72 GPUs spread over 18
 * hosts of 4, and a group of up to 72 consecutive ranks never touches a NIC.
 * Hosts themselves (PtsimHardware.gpus_per_node) matter only for counting
 * nodes on the command line.  With that order every group kind is an
 * arithmetic progression of ranks, which this module exploits:
 *
 *   kind    members of the group holding rank 0    size n     stride
 *   TP      0, 1, ..., tp-1                        tp         1
 *   CP      0, tp, 2tp, ...                        cp         tp
 *   DP      0, tp*cp, ...                          dp         tp*cp
 *   DP_CP   0, tp, 2tp, ... (cp and dp adjacent)   dp*cp      tp
 *   PP      0, tp*cp*dp, ...                       pp         tp*cp*dp
 *   TP_CP   0, 1, ..., tp*cp-1                     tp*cp      1
 *
 * DP_CP is the distributed optimizer's gradient group (reduce-scatter of
 * gradients, all-gather of parameters); TP_CP is the group Megatron-LM uses
 * for some CP-with-TP collectives.
 *
 * Expert layers (Megatron-Core's MoE parallel folding) regroup the same
 * GPUs with a second rank generator, etp fastest, then ep, then edp, then
 * pp (edp = gpus / (etp ep pp); the pp groups coincide):
 *
 *     rank = etp_rank + etp * (ep_rank + ep * (edp_rank + edp * pp_rank))
 *
 *   kind    members of the group holding rank 0    size n     stride
 *   ETP     0, 1, ..., etp-1                       etp        1
 *   EP      0, etp, 2etp, ...                      ep         etp
 *   EDP     0, etp*ep, ...                         edp        etp*ep
 *   ETP_EP  0, 1, ..., etp*ep-1                    etp*ep     1
 *
 * the same progressions as TP, CP, DP and TP_CP of the dense table with
 * (tp, cp, dp) = (etp, ep, edp), which is how they are computed.  EP is
 * the all-to-all dispatcher's group, ETP_EP the all-gather and flex
 * dispatchers' (and the token counts'), EDP the expert gradients' and
 * expert optimizer states' group.  So the all-to-all stays inside an
 * NVLink domain exactly when etp x ep ranks fit in one.
 *
 * What a group tells the cost model (sim/core/cost.h):
 *   size n       ranks in the group
 *   nodes N      distinct nodes the group spans
 *   G            members of the group per spanned node (n/N when even)
 *   senders      GPUs of one node that send across the fabric at the same
 *                time, counting every group of this kind (all groups of one
 *                kind run their collectives concurrently: e.g. with tp = 8
 *                on 8-GPU nodes the 8 DP groups of a node all-reduce at once)
 *
 * NIC sharing.  PtsimHardware.nic_bytes_per_s is per GPU (a DGX has one NIC
 * per GPU; a node with fewer NICs has a smaller per-GPU share in its
 * profile).  Two cases, both handled by the cost model:
 *   G = 1   one member per node; each member's ring/tree traffic (the whole
 *           n-byte buffer) goes out through that GPU's own NIC.  The other
 *           groups of the node use the other NICs, so nothing is shared.
 *   G > 1   the hierarchical algorithm first reduce-scatters inside the node,
 *           then each of the G members carries n/G bytes over its own NIC; a
 *           flat ring's node egress is spread over G NICs.
 *   The per-sender share is node NIC bandwidth / senders; it equals
 *   nic_bytes_per_s whenever every GPU of the node sends, which is the case
 *   for any group kind that crosses nodes in an even layout.
 *
 * Uneven layouts (gpus_per_node not dividing the group layout): N and the
 * per-node counts are counted exactly, member by member; a group with any
 * member on another node is treated as crossing, and G is the SMALLEST number
 * of members on any spanned node (conservative: that node's NICs carry the
 * largest shard), with `even` = 0 telling the caller.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.  Sibling: topology.c.
 * Not here: what a collective costs (cost.h). */
#ifndef PTSIM_TOPOLOGY_H
#define PTSIM_TOPOLOGY_H

#include <stdint.h>
#include "hd.h"
#include "job.h"

typedef enum {
  PTSIM_GROUP_TP = 0,    /* tensor parallel */
  PTSIM_GROUP_CP = 1,    /* context parallel */
  PTSIM_GROUP_DP = 2,    /* data parallel (same tp, cp, pp ranks) */
  PTSIM_GROUP_DP_CP = 3, /* dp x cp: the distributed optimizer's gradient group */
  PTSIM_GROUP_PP = 4,    /* pipeline (stage neighbours send/recv in it) */
  PTSIM_GROUP_TP_CP = 5, /* tp x cp */
  PTSIM_GROUP_ETP = 6,   /* expert tensor parallel */
  PTSIM_GROUP_EP = 7,    /* expert parallel: the dispatch all-to-all */
  PTSIM_GROUP_EDP = 8,   /* expert data parallel: expert gradients */
  PTSIM_GROUP_ETP_EP = 9 /* etp x ep: all-gather dispatcher, token counts */
} PtsimGroupKind;

#define PTSIM_GROUP_KIND_COUNT 10

/* One communicator group and how it maps onto nodes. */
typedef struct {
  PtsimGroupKind kind;
  int64_t size;                    /* n: ranks in the group */
  int64_t first_rank;              /* lowest rank of the group */
  int64_t stride;                  /* rank distance between consecutive members */
  int64_t nodes;                   /* N: distinct nodes spanned (1: inside one node) */
  int64_t gpus_per_node;           /* G: fewest members on any spanned node (= n/N when even) */
  int64_t max_gpus_per_node;       /* most members on any spanned node */
  int even;                        /* 1: every spanned node holds G members (n == N*G) */
  int64_t fabric_senders_per_node; /* GPUs of the first rank's node sending across the
                                      fabric at once for groups of this kind (0: none cross) */
  int64_t node_size;               /* GPUs per node this was computed for */
} PtsimGroup;

/* Megatron-LM rank of the given coordinates (see the table above).  Layout
 * dimensions below 1 count as 1. */
PTSIM_HD int64_t ptsim_topology_rank(int64_t tp, int64_t cp, int64_t dp, int64_t tp_rank,
                                     int64_t cp_rank, int64_t dp_rank, int64_t pp_rank);

/* Inverse of ptsim_topology_rank.  Any output pointer may be NULL. */
PTSIM_HD void ptsim_topology_coords(int64_t tp, int64_t cp, int64_t dp, int64_t rank,
                                    int64_t *tp_rank, int64_t *cp_rank, int64_t *dp_rank,
                                    int64_t *pp_rank);

/* The group of `kind` holding `rank`, for a layout of tp x cp x dp x pp ranks
 * on nodes of `gpus_per_node` GPUs (values below 1 count as 1; a rank
 * outside the world is taken modulo the world size).  The expert kinds
 * are read as their dense twins (ETP as TP, EP as CP, EDP as DP, ETP_EP as
 * TP_CP): pass (etp, ep, edp, pp) for them.  Never fails.
 * Cost: O(n) for the node count, O(gpus_per_node) for the senders. */
PTSIM_HD void ptsim_topology_group_of(int64_t tp, int64_t cp, int64_t dp, int64_t pp,
                                      int64_t gpus_per_node, PtsimGroupKind kind, int64_t rank,
                                      PtsimGroup *out);

/* GPUs of one NVLink domain: hw->gpus_per_nvlink_domain, or
 * hw->gpus_per_node when that is not set (< 1), at least 1. */
PTSIM_HD int64_t ptsim_topology_domain_size(const PtsimHardware *hw);

/* The group of `kind` holding rank 0, from a job's layout and hardware
 * (layout->tp, cp, dp, pp, and etp, ep, edp for the expert kinds; nodes of
 * ptsim_topology_domain_size(hw) GPUs).
 * When the domain size divides the layout evenly every group of a kind
 * looks the same, so this is the one the cost model needs.  Never fails. */
PTSIM_HD void ptsim_topology_group(const PtsimLayout *layout, const PtsimHardware *hw,
                                   PtsimGroupKind kind, PtsimGroup *out);

/* 1 when the group spans more than one node. */
PTSIM_HD int ptsim_topology_group_crosses_nodes(const PtsimGroup *group);

/* A hand-made group of n ranks, G per node over N = n/G nodes, every GPU of
 * a node sending when N > 1: for callers (and tests) that have no layout.
 * g < 1 or g > n counts as n (one node). */
PTSIM_HD void ptsim_topology_group_uniform(int64_t n, int64_t g, PtsimGroup *out);

#endif /* PTSIM_TOPOLOGY_H */
