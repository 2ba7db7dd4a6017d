/* lifetimes_mtp.c — the tensors of the multi-token prediction layers of a
 * model with MTP layers (--mtp-num-layers): after the decoder's forward on
 * their virtual stage (the last, or apart the one before it: plan.h
 * mtp_stage), each MTP layer's inputs and saved set; on the last, each
 * one's output head's logits and loss; before the decoder's backward,
 * their gradients.  The estimate counts the same tensors (memory.c).
 *
 * Core module (PTSIM_HD).  Sibling of lifetimes.c, whose forward and
 * backward call these; lifetimes_int.h declares them. */
#include "lifetimes_int.h"

/* The saved set of an MTP layer: its layer's (the decoder's last kind). */
static PTSIM_HD const PtsimLifetimesTensor *mtp_set(const PtsimLifetimesCtx *x, int32_t *n) {
  if (x->plan->mtp_layer_is_moe && x->n_saved_moe > 0) {
    *n = x->n_saved_moe;
    return x->saved_moe;
  }
  *n = x->n_saved;
  return x->saved;
}

/* Forward of the MTP layers after the decoder's, into handles h: the
 * inputs the estimate counts (the shifted tokens' embedding, the two
 * norms, the concatenation: 4 x the layer input) and the layer's saved
 * set, kept in full as the estimate keeps them. */
PTSIM_HD void ptsim_lifetimes_mtp_forward(PtsimLifetimesCtx *x, int32_t *h) {
  int64_t j;
  int32_t n;
  const PtsimLifetimesTensor *set = mtp_set(x, &n);
  for (j = 0; j < x->job->model.mtp_num_layers; j++, h += PTSIM_LIFETIMES_MTP_TENSORS) {
    h[0] = ptsim_lifetimes_take(x, "mtp_inputs", 4.0 * x->layer_input_bytes,
                                PTSIM_LIFETIMES_STREAM_COMPUTE);
    ptsim_lifetimes_take_set(x, set, n, 1.0, 1, h + 1);
  }
}

/* Each MTP layer's output head after the main one: logits (bf16), the
 * fp32 copy kept for backward, the loss. */
PTSIM_HD void ptsim_lifetimes_mtp_heads(PtsimLifetimesCtx *x, int32_t *h) {
  int64_t j;
  for (j = 0; j < x->job->model.mtp_num_layers; j++, h += PTSIM_LIFETIMES_MTP_TENSORS) {
    int32_t logits = ptsim_lifetimes_take(x, "mtp_logits", PTSIM_LIFETIMES_ELEM * x->logits_elems,
                                          PTSIM_LIFETIMES_STREAM_COMPUTE);
    h[PTSIM_LIFETIMES_MTP_TENSORS - 2] = ptsim_lifetimes_take(x, "mtp_logits_fp32",
                                                              4.0 * x->logits_elems,
                                                              PTSIM_LIFETIMES_STREAM_COMPUTE);
    if (ptsim_lifetimes_ce_compiled(x)) /* lifetimes_int.h */
      ptsim_lifetimes_take_give(x, "mtp_logits_exp_compiled", 4.0 * x->logits_elems,
                                PTSIM_LIFETIMES_STREAM_COMPUTE);
    ptsim_lifetimes_give(x, logits);
    h[PTSIM_LIFETIMES_MTP_TENSORS - 1] = ptsim_lifetimes_take(x, "mtp_loss", 4.0 * x->tokens,
                                                              PTSIM_LIFETIMES_STREAM_COMPUTE);
  }
}

/* Frees handles h[first, last) of every MTP layer, in reverse. */
PTSIM_HD void ptsim_lifetimes_mtp_give(PtsimLifetimesCtx *x, int32_t *h, int32_t first,
                                       int32_t last) {
  int64_t j;
  int32_t i;
  for (j = x->job->model.mtp_num_layers - 1; j >= 0; j--)
    for (i = last - 1; i >= first; i--) {
      ptsim_lifetimes_give(x, h[j * PTSIM_LIFETIMES_MTP_TENSORS + i]);
      h[j * PTSIM_LIFETIMES_MTP_TENSORS + i] = -1;
    }
}

/* Backward of the MTP layers, before the decoder's: their heads' gradients
 * (transient) and fp32 logits and losses freed (heads: on the loss's
 * virtual stage), then per layer the incoming and outgoing gradients
 * (layers: where the MTP layers run; both when that is the loss's); the
 * saved sets go unless keep_saved. */
PTSIM_HD void ptsim_lifetimes_mtp_backward(PtsimLifetimesCtx *x, int32_t *h, int keep_saved,
                                           int heads, int layers) {
  int64_t j;
  int32_t n;
  const PtsimLifetimesTensor *set = mtp_set(x, &n);
  /* as the main head's: the kept softmax becomes the gradient; to 16 bits */
  for (j = 0; heads && j < x->job->model.mtp_num_layers; j++) {
    int32_t compiled = -1;
    if (ptsim_lifetimes_ce_compiled(x))
      compiled = ptsim_lifetimes_take(x, "mtp_logits_grad_compiled", 4.0 * x->logits_elems,
                                      PTSIM_LIFETIMES_STREAM_COMPUTE);
    ptsim_lifetimes_take_give(x, "mtp_logits_grad", PTSIM_LIFETIMES_ELEM * x->logits_elems,
                              PTSIM_LIFETIMES_STREAM_COMPUTE);
    ptsim_lifetimes_give(x, compiled);
  }
  if (heads)
    ptsim_lifetimes_mtp_give(x, h, PTSIM_LIFETIMES_MTP_TENSORS - 2, PTSIM_LIFETIMES_MTP_TENSORS);
  for (j = 0; layers && j < x->job->model.mtp_num_layers; j++) {
    int32_t grad = ptsim_lifetimes_take(x, "activation_grad", x->layer_input_bytes,
                                        PTSIM_LIFETIMES_STREAM_COMPUTE);
    ptsim_lifetimes_layer_transients(x);
    ptsim_lifetimes_attention_backward(x);
    if (set == x->saved_moe) ptsim_lifetimes_moe_transients(x);
    ptsim_lifetimes_give(x, grad);
  }
  if (layers && !keep_saved) ptsim_lifetimes_mtp_give(x, h, 0, PTSIM_LIFETIMES_MTP_TENSORS - 2);
}
