/* mamba.c — a Mamba-2 layer's parameters, FLOPs and saved bytes, and the
 * layer kinds of a hybrid pattern (mamba.h has the sources
 * and the layer's shape). */
#include "mamba.h"

PTSIM_HD void ptsim_mamba_dims(const PtsimModel *m, PtsimMambaDims *out) {
  int64_t head = m->mamba_head_dim > 0 ? m->mamba_head_dim : 64;
  /* MambaMixer: d_inner = nheads x headdim when --mamba-num-heads is
   * given, else expand (2) x hidden and nheads = d_inner / headdim */
  out->headdim = head;
  out->nheads = m->mamba_num_heads > 0 ? m->mamba_num_heads : 2 * m->hidden_size / head;
  out->d_inner = out->nheads * head;
  out->ngroups = m->mamba_num_groups > 0 ? m->mamba_num_groups : 8;
  out->d_state = m->mamba_state_dim > 0 ? m->mamba_state_dim : 128;
  out->conv_dim = out->d_inner + 2 * out->ngroups * out->d_state;
  out->in_proj_width = out->d_inner + out->conv_dim + out->nheads;
}

PTSIM_HD int ptsim_model_is_hybrid(const PtsimModel *m) { return m->hybrid_pattern[0] != '\0'; }

PTSIM_HD int64_t ptsim_hybrid_count(const PtsimModel *m, int64_t first, int64_t count, char kind) {
  int64_t n = 0, i;
  for (i = first; i < first + count && i >= 0 && i < PTSIM_MAX_LAYERS; i++) {
    if (m->hybrid_pattern[i] == '\0') break;
    if (m->hybrid_pattern[i] == kind) n++;
  }
  return n;
}

PTSIM_HD double ptsim_mamba_layer_parameters(const PtsimModel *m, int64_t tp) {
  PtsimMambaDims d;
  double h = (double)m->hidden_size, t = (double)tp;
  ptsim_mamba_dims(m, &d);
  double in_proj = h * (double)d.in_proj_width;
  double conv = (double)d.conv_dim * (double)(PTSIM_MAMBA_CONV_KERNEL + 1); /* weight + bias */
  double per_head = 3.0 * (double)d.nheads;                                 /* A_log, D, dt_bias */
  double out_proj = (double)d.d_inner * h;
  double gated_norm = (double)d.d_inner;
  double pre_norm = m->norm == PTSIM_NORM_LAYERNORM ? 2.0 * h : h; /* replicated over TP */
  return (in_proj + conv + per_head + gated_norm + out_proj) / t + pre_norm;
}

PTSIM_HD void ptsim_mamba_forward_flops(const PtsimModel *m, int64_t tp, double tokens,
                                        PtsimMambaFlops *out) {
  PtsimMambaDims d;
  double h = (double)m->hidden_size, t = (double)tp, q = (double)PTSIM_MAMBA_CHUNK;
  ptsim_mamba_dims(m, &d);
  double n = (double)d.d_state, p = (double)d.headdim;
  out->in_proj = 2.0 * tokens * h * (double)d.in_proj_width / t;
  out->out_proj = 2.0 * tokens * (double)d.d_inner * h / t;
  out->conv = 2.0 * tokens * (double)PTSIM_MAMBA_CONV_KERNEL * (double)d.conv_dim / t;
  out->ssd = tokens *
             ((double)d.ngroups * 2.0 * q * n + (double)d.nheads * (2.0 * q * p + 4.0 * n * p)) / t;
}

PTSIM_HD double ptsim_mamba_saved_bytes(const PtsimModel *m, int64_t tp, int sp, double tokens,
                                        int dropout) {
  PtsimMambaDims d;
  double t = (double)tp, h = (double)m->hidden_size;
  double hs = sp ? h / t : h; /* what sequence parallelism splits */
  ptsim_mamba_dims(m, &d);
  double inner = (double)d.d_inner / t;
  double per_token = 2.0 * hs + 2.0 * hs + 4.0           /* in_proj: input, norm output, rstd */
                     + 2.0 * (double)d.in_proj_width / t /* [z x B C dt] */
                     + 2.0 * inner                       /* out_x */
                     + 2.0 * inner + 4.0 * (double)d.ngroups / t /* gated norm: input, rstd */
                     + 2.0 * inner;                              /* out_proj's input */
  if (dropout) per_token += hs;
  return tokens * per_token;
}
