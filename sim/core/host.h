/* host.h — what the host (the CPU process that drives one GPU) costs: the
 * measured per-call costs of issuing work (an eager PyTorch op, a
 * Transformer Engine module, a CUDA graph replay; hw_profiles/software/
 * host_overhead.ini, every number with its source) and the run's switches
 * that change how much the host issues (the norms Megatron-LM logs every
 * step, CUDA graphs).  host_time.h turns them into time.
 *
 * Separate from host_time.h so that job.h can hold it without the plan.
 * Core header: plain C, no GLib. */
#ifndef PTSIM_HOST_H
#define PTSIM_HOST_H

#include <stdint.h>

/* What Megatron-LM captures into CUDA graphs (--enable-cuda-graph,
 * --cuda-graph-impl local|transformer_engine, --cuda-graph-scope). */
typedef enum {
  PTSIM_GRAPH_NONE = 0,
  PTSIM_GRAPH_LAYER = 1,    /* each transformer layer's forward and backward (scope default;
                               an MoE layer's experts only with graph_moe) */
  PTSIM_GRAPH_ATTN = 2,     /* only each layer's attention part (--cuda-graph-scope attn) */
  PTSIM_GRAPH_ITERATION = 3 /* the whole forward-backward (full_iteration) */
} PtsimGraphScope;

/* Whose CUDA graphs (--cuda-graph-impl; the older --enable-cuda-graph is
 * local, --external-cuda-graph transformer_engine): what their static
 * buffers keep differs (memory.c, "CUDA graphs"). */
typedef enum {
  PTSIM_GRAPH_IMPL_NONE = 0,
  PTSIM_GRAPH_IMPL_LOCAL = 1, /* Megatron-Core's CudaGraphManager: a runner per layer and
                                 microbatch under pipeline parallelism, one per layer without */
  PTSIM_GRAPH_IMPL_TE = 2     /* Transformer Engine's make_graphed_callables (TECudaGraphHelper) */
} PtsimGraphImpl;

/* Per-call host costs (seconds), from the data file; all 0: no host model
 * (a hand-made job), and the step time is the GPU's alone. */
typedef struct {
  double op_s;           /* one eager PyTorch op that launches a kernel: Python,
                            dispatcher and cudaLaunchKernel */
  double te_module_s;    /* one Transformer Engine module call, per pass, beyond
                            the ops it launches (its Python) */
  double graph_launch_s; /* replaying one CUDA graph, fixed */
  double graph_node_s;   /* replaying one captured kernel */
  double layer_module_s; /* Megatron-Core's Python of one transformer layer pass per
                            microbatch beyond its counted ops and TE modules (the layer,
                            attention and MLP modules, autograd's Python Functions) */
  double step_log_s;     /* Megatron-LM's training_log of one logged step (the timers'
                            gather, the tensorboard scalars, the memory statistics) */
  /* apex / Transformer Engine multi_tensor_apply: elements per chunk, the
   * chunks (blocks) and tensors one launch takes (l2norm: depth 1; copy:
   * depth 2; Adam: depth 4) */
  double mta_chunk_elements;
  double mta_blocks;
  double mta_tensors_norm;
  double mta_tensors_copy; /* depth 2: the main parameters back into the model's */
  double mta_tensors_adam;
  /* A host-device synchronisation (.item(), .cpu(), .tolist() of a GPU
   * tensor, `while tensor > tol`): the host waits for the op it issued last
   * and the copy back; the GPU then idles until the next launch */
  double sync_s;
  double sinkhorn_iterations; /* Sinkhorn routing's loop trips per call at its tolerance */
} PtsimHostCosts;

typedef struct {
  PtsimHostCosts costs;
  int log_params_norm;       /* --log-params-norm: the parameters' norm every step */
  int log_num_zeros;         /* --log-num-zeros-in-grad: zeros counted per gradient */
  int test_mode;             /* --test-mode: the attention's consistency checks each forward */
  PtsimGraphScope graphs;    /* CUDA graphs */
  int megatron;              /* Megatron-LM's training loop and modules drive the GPU */
  int64_t log_interval;      /* --log-interval: training_log every this many steps (0: none) */
  int graph_moe;             /* ... capturing the MoE layers' dispatch and experts too (scope moe;
                                else only their attention and router are, as graphs allows) */
  PtsimGraphImpl graph_impl; /* ... by whose implementation (NONE without graphs) */
} PtsimHost;

#endif /* PTSIM_HOST_H */
