/* test_topology.c — Megatron-LM rank order and group placement on nodes. */
#include <glib.h>
#include <string.h>
#include "topology.h"

static void check_group(int64_t tp, int64_t cp, int64_t dp, int64_t pp, int64_t gpn,
                        PtsimGroupKind kind, int64_t size, int64_t nodes, int64_t g,
                        int64_t senders) {
  PtsimGroup grp;
  ptsim_topology_group_of(tp, cp, dp, pp, gpn, kind, 0, &grp);
  g_assert_cmpint(grp.size, ==, size);
  g_assert_cmpint(grp.nodes, ==, nodes);
  g_assert_cmpint(grp.gpus_per_node, ==, g);
  g_assert_cmpint(grp.fabric_senders_per_node, ==, senders);
  g_assert_cmpint(grp.node_size, ==, gpn);
}

static void test_rank_order(void) {
  int64_t t, c, d, p, r;
  g_test_summary("rank = tp_rank + tp*(cp_rank + cp*(dp_rank + dp*pp_rank)), and back");
  g_assert_cmpint(ptsim_topology_rank(2, 2, 2, 1, 0, 0, 0), ==, 1);
  g_assert_cmpint(ptsim_topology_rank(2, 2, 2, 0, 1, 0, 0), ==, 2);
  g_assert_cmpint(ptsim_topology_rank(2, 2, 2, 0, 0, 1, 0), ==, 4);
  g_assert_cmpint(ptsim_topology_rank(2, 2, 2, 0, 0, 0, 1), ==, 8);
  g_assert_cmpint(ptsim_topology_rank(4, 1, 3, 3, 0, 2, 5), ==, 3 + 4 * (0 + 1 * (2 + 3 * 5)));
  for (r = 0; r < 2 * 3 * 5 * 4; r++) {
    ptsim_topology_coords(2, 3, 5, r, &t, &c, &d, &p);
    g_assert_cmpint(t, <, 2);
    g_assert_cmpint(c, <, 3);
    g_assert_cmpint(d, <, 5);
    g_assert_cmpint(ptsim_topology_rank(2, 3, 5, t, c, d, p), ==, r);
  }
}

static void test_tp8_inside_node(void) {
  g_test_summary("tp=8 on 8-GPU nodes: TP inside one node, DP and PP cross nodes with G=1");
  /* tp=8 dp=4 pp=2: 64 GPUs on 8 nodes */
  check_group(8, 1, 4, 2, 8, PTSIM_GROUP_TP, 8, 1, 8, 0);
  check_group(8, 1, 4, 2, 8, PTSIM_GROUP_DP, 4, 4, 1, 8);
  check_group(8, 1, 4, 2, 8, PTSIM_GROUP_PP, 2, 2, 1, 8);
  check_group(8, 1, 4, 2, 8, PTSIM_GROUP_DP_CP, 4, 4, 1, 8);
  check_group(8, 1, 4, 2, 8, PTSIM_GROUP_CP, 1, 1, 1, 0);
}

static void test_dp_crossing_nodes(void) {
  PtsimGroup grp;
  g_test_summary("tp=2 dp=8 on 8-GPU nodes: DP spans 2 nodes with 4 members each");
  check_group(2, 1, 8, 1, 8, PTSIM_GROUP_DP, 8, 2, 4, 8);
  check_group(2, 1, 8, 1, 8, PTSIM_GROUP_TP, 2, 1, 2, 0);
  /* The DP group of rank 1 (tp_rank 1) is 1, 3, 5, ..., 15: also 2 nodes */
  ptsim_topology_group_of(2, 1, 8, 1, 8, PTSIM_GROUP_DP, 1, &grp);
  g_assert_cmpint(grp.first_rank, ==, 1);
  g_assert_cmpint(grp.stride, ==, 2);
  g_assert_cmpint(grp.nodes, ==, 2);
  g_assert_cmpint(grp.even, ==, 1);
  g_assert_true(ptsim_topology_group_crosses_nodes(&grp));
}

static void test_pp_crossing_nodes(void) {
  g_test_summary("tp=4 dp=2 pp=4 on 8-GPU nodes: one stage per node, PP spans 4 nodes");
  check_group(4, 1, 2, 4, 8, PTSIM_GROUP_PP, 4, 4, 1, 8);
  check_group(4, 1, 2, 4, 8, PTSIM_GROUP_DP, 2, 1, 2, 0);
  check_group(4, 1, 2, 4, 8, PTSIM_GROUP_TP, 4, 1, 4, 0);
  /* tp=2 pp=8 on 8-GPU nodes: stages 0-3 on node 0, 4-7 on node 1 */
  check_group(2, 1, 1, 8, 8, PTSIM_GROUP_PP, 8, 2, 4, 8);
}

static void test_tp2_cp2_dp2_one_node(void) {
  PtsimGroupKind k;
  g_test_summary("tp=2 cp=2 dp=2 on one 8-GPU node: every group inside the node");
  for (k = PTSIM_GROUP_TP; k <= PTSIM_GROUP_TP_CP; k = (PtsimGroupKind)(k + 1)) {
    PtsimGroup grp;
    ptsim_topology_group_of(2, 2, 2, 1, 8, k, 0, &grp);
    g_assert_cmpint(grp.nodes, ==, 1);
    g_assert_cmpint(grp.fabric_senders_per_node, ==, 0);
    g_assert_cmpint(grp.gpus_per_node, ==, grp.size);
  }
  check_group(2, 2, 2, 1, 8, PTSIM_GROUP_DP_CP, 4, 1, 4, 0);
  check_group(2, 2, 2, 1, 8, PTSIM_GROUP_TP_CP, 4, 1, 4, 0);
  check_group(2, 2, 2, 1, 8, PTSIM_GROUP_CP, 2, 1, 2, 0);
  /* the same layout on 4-GPU nodes: tp and cp stay, dp crosses */
  check_group(2, 2, 2, 1, 4, PTSIM_GROUP_TP_CP, 4, 1, 4, 0);
  check_group(2, 2, 2, 1, 4, PTSIM_GROUP_DP, 2, 2, 1, 4);
  check_group(2, 2, 2, 1, 4, PTSIM_GROUP_DP_CP, 4, 2, 2, 4);
}

static void test_tp16_two_nodes(void) {
  g_test_summary("tp=16 on 8-GPU nodes spans 2 nodes, 8 members each");
  check_group(16, 1, 2, 1, 8, PTSIM_GROUP_TP, 16, 2, 8, 8);
  check_group(16, 1, 2, 1, 8, PTSIM_GROUP_DP, 2, 2, 1, 8);
}

static void test_uneven(void) {
  PtsimGroup grp;
  g_test_summary("gpus_per_node not dividing the layout: counted exactly, conservative G");
  /* tp=3 on 4-GPU nodes: TP group 0 = {0,1,2} inside node 0, group of rank 3
   * = {3,4,5} spans nodes 0 and 1 (1 + 2 members) */
  ptsim_topology_group_of(3, 1, 4, 1, 4, PTSIM_GROUP_TP, 0, &grp);
  g_assert_cmpint(grp.nodes, ==, 1);
  /* on node 0, rank 3's TP group crosses: one sender */
  g_assert_cmpint(grp.fabric_senders_per_node, ==, 1);
  ptsim_topology_group_of(3, 1, 4, 1, 4, PTSIM_GROUP_TP, 3, &grp);
  g_assert_cmpint(grp.first_rank, ==, 3);
  g_assert_cmpint(grp.nodes, ==, 2);
  g_assert_cmpint(grp.gpus_per_node, ==, 1);
  g_assert_cmpint(grp.max_gpus_per_node, ==, 2);
  g_assert_cmpint(grp.even, ==, 0);
  /* uniform helper */
  ptsim_topology_group_uniform(12, 8, &grp);
  g_assert_cmpint(grp.nodes, ==, 2);
  g_assert_cmpint(grp.gpus_per_node, ==, 4);
  g_assert_cmpint(grp.even, ==, 0);
  ptsim_topology_group_uniform(32, 8, &grp);
  g_assert_cmpint(grp.nodes, ==, 4);
  g_assert_cmpint(grp.gpus_per_node, ==, 8);
  g_assert_cmpint(grp.even, ==, 1);
  ptsim_topology_group_uniform(4, 0, &grp);
  g_assert_cmpint(grp.nodes, ==, 1);
}

static void test_from_job(void) {
  PtsimLayout layout;
  PtsimHardware hw;
  PtsimGroup grp;
  g_test_summary("ptsim_topology_group reads tp/cp/dp/pp and gpus_per_node from the job");
  memset(&layout, 0, sizeof layout);
  memset(&hw, 0, sizeof hw);
  layout.tp = 4;
  layout.cp = 2;
  layout.dp = 4;
  layout.pp = 2;
  hw.gpus_per_node = 8;
  ptsim_topology_group(&layout, &hw, PTSIM_GROUP_DP_CP, &grp);
  g_assert_cmpint(grp.size, ==, 8);
  g_assert_cmpint(grp.stride, ==, 4);
  g_assert_cmpint(grp.nodes, ==, 4);
  g_assert_cmpint(grp.gpus_per_node, ==, 2);
  ptsim_topology_group(&layout, &hw, PTSIM_GROUP_TP_CP, &grp);
  g_assert_cmpint(grp.nodes, ==, 1);
  g_assert_cmpint(grp.size, ==, 8);
}

static void test_nvl72_domain(void) {
  PtsimLayout layout;
  PtsimHardware hw;
  PtsimGroup grp;
  g_test_summary("GB200 NVL72: hosts of 4 GPUs, one 72-GPU NVLink domain; groups "
                 "inside the domain stay on NVLink");
  memset(&layout, 0, sizeof layout);
  memset(&hw, 0, sizeof hw);
  hw.gpus_per_node = 4;
  hw.gpus_per_nvlink_domain = 72;
  g_assert_cmpint(ptsim_topology_domain_size(&hw), ==, 72);
  /* tp=8 dp=9: 72 GPUs on 18 hosts.  By host the DP group (stride 8) would
   * span 9 hosts; by NVLink domain it is one domain, nothing crosses. */
  layout.tp = 8;
  layout.cp = 1;
  layout.dp = 9;
  layout.pp = 1;
  ptsim_topology_group(&layout, &hw, PTSIM_GROUP_DP, &grp);
  g_assert_cmpint(grp.size, ==, 9);
  g_assert_cmpint(grp.nodes, ==, 1);
  g_assert_cmpint(grp.fabric_senders_per_node, ==, 0);
  g_assert_cmpint(grp.node_size, ==, 72);
  ptsim_topology_group(&layout, &hw, PTSIM_GROUP_TP, &grp);
  g_assert_cmpint(grp.nodes, ==, 1);
  /* tp=8 dp=18: 144 GPUs, 2 racks.  The DP group 0, 8, ..., 136 has 9
   * members in each domain and crosses once; all 72 GPUs of a domain send. */
  layout.dp = 18;
  ptsim_topology_group(&layout, &hw, PTSIM_GROUP_DP, &grp);
  g_assert_cmpint(grp.size, ==, 18);
  g_assert_cmpint(grp.nodes, ==, 2);
  g_assert_cmpint(grp.gpus_per_node, ==, 9);
  g_assert_cmpint(grp.even, ==, 1);
  g_assert_cmpint(grp.fabric_senders_per_node, ==, 72);
  /* tp=4 pp=18: PP neighbours 4 ranks apart, all 18 stages on NVLink. */
  layout.tp = 4;
  layout.dp = 1;
  layout.pp = 18;
  ptsim_topology_group(&layout, &hw, PTSIM_GROUP_PP, &grp);
  g_assert_cmpint(grp.nodes, ==, 1);
  /* 0 (a hand-made struct): the domain is the host. */
  hw.gpus_per_nvlink_domain = 0;
  g_assert_cmpint(ptsim_topology_domain_size(&hw), ==, 4);
  ptsim_topology_group(&layout, &hw, PTSIM_GROUP_PP, &grp);
  g_assert_cmpint(grp.nodes, ==, 18);
}

/* Every member's node, one by one: what nodes, gpus_per_node and
 * max_gpus_per_node must say. */
static void test_nodes_member_by_member(void) {
  static const int64_t sizes[] = {1, 2, 3, 4, 5, 6, 8, 16};
  g_test_summary("nodes, members per node and fabric senders agree with placing every member, "
                 "for all group kinds, ranks and node sizes 1..9 of small layouts");
  for (int k = 0; k < PTSIM_GROUP_KIND_COUNT; k++)
    for (guint a = 0; a < G_N_ELEMENTS(sizes); a++)
      for (guint b = 0; b < 4; b++)
        for (guint c = 0; c < 6; c++)
          for (int64_t pp = 1; pp <= 3; pp++)
            for (int64_t gpn = 1; gpn <= 9; gpn++) {
              int64_t tp = sizes[a], cp = sizes[b], dp = sizes[c];
              for (int64_t rank = 0; rank < tp * cp * dp * pp; rank += 7) {
                PtsimGroup grp;
                int64_t nodes = 1, run = 1, lo = G_MAXINT64, hi = 0;
                ptsim_topology_group_of(tp, cp, dp, pp, gpn, (PtsimGroupKind)k, rank, &grp);
                for (int64_t i = 1; i <= grp.size; i++) {
                  if (i < grp.size && (grp.first_rank + i * grp.stride) / gpn ==
                                          (grp.first_rank + (i - 1) * grp.stride) / gpn) {
                    run++;
                    continue;
                  }
                  lo = MIN(lo, run);
                  hi = MAX(hi, run);
                  if (i < grp.size) nodes++;
                  run = 1;
                }
                g_assert_cmpint(grp.nodes, ==, nodes);
                g_assert_cmpint(grp.gpus_per_node, ==, lo);
                g_assert_cmpint(grp.max_gpus_per_node, ==, hi);
                /* senders: the GPUs of the group's first node whose own group
                 * (found from their rank) leaves the node */
                int64_t senders = 0, first = grp.first_rank / gpn * gpn;
                for (int64_t r = first; r < MIN(first + gpn, tp * cp * dp * pp); r++) {
                  PtsimGroup other;
                  ptsim_topology_group_of(tp, cp, dp, pp, gpn, (PtsimGroupKind)k, r, &other);
                  senders += other.first_rank / gpn !=
                             (other.first_rank + (other.size - 1) * other.stride) / gpn;
                }
                g_assert_cmpint(grp.fabric_senders_per_node, ==, senders);
              }
            }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/topology/rank-order", test_rank_order);
  g_test_add_func("/topology/tp8-inside-node", test_tp8_inside_node);
  g_test_add_func("/topology/dp-crossing-nodes", test_dp_crossing_nodes);
  g_test_add_func("/topology/pp-crossing-nodes", test_pp_crossing_nodes);
  g_test_add_func("/topology/tp2-cp2-dp2-one-node", test_tp2_cp2_dp2_one_node);
  g_test_add_func("/topology/tp16-two-nodes", test_tp16_two_nodes);
  g_test_add_func("/topology/uneven-node-size", test_uneven);
  g_test_add_func("/topology/from-job", test_from_job);
  g_test_add_func("/topology/nvl72-domain", test_nvl72_domain);
  g_test_add_func("/topology/nodes-member-by-member", test_nodes_member_by_member);
  return g_test_run();
}
