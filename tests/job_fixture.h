/* job_fixture.h — a validated job from a shipped model and profile, for
 * tests: fixture_job() loads them (PTSIM_DATA_DIR is set by ctest), applies
 * the layout fields given, and validates, failing the test on any error;
 * fixture_assert_refused() checks that command-line words are refused with
 * the message expected.  Header-only; include it from one test file each. */
#ifndef PTSIM_TEST_JOB_FIXTURE_H
#define PTSIM_TEST_JOB_FIXTURE_H

#include <glib.h>
#include <string.h>
#include "config.h"
#include "job_build.h"
#include "job_validate.h"

typedef struct {
  gint64 gpus, tp, pp, vp, mbs, gbs, seq;
  PtsimRecompute recompute;
} FixtureLayout;

static inline void fixture_job(PtsimJob *job, const char *model, const char *hw, FixtureLayout l) {
  g_autoptr(GError) error = NULL;
  memset(job, 0, sizeof *job);
  gboolean ok = ptsim_model_load(model, &job->model, &error) &&
                ptsim_hardware_load(hw, &job->hw, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  ptsim_job_init_defaults(job);
  job->layout.gpus = l.gpus;
  job->layout.tp = l.tp > 0 ? l.tp : 1;
  job->layout.pp = l.pp > 0 ? l.pp : 1;
  job->layout.vp = l.vp > 0 ? l.vp : 1;
  job->layout.mbs = l.mbs > 0 ? l.mbs : 1;
  job->layout.gbs = l.gbs;
  job->layout.seq = l.seq;
  job->settings.recompute = l.recompute;
  ok = ptsim_job_validate(job, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
}

/* The command-line words FLAGS (NULL-ended) are refused, by the parser or
 * by the job's build, with a message containing SAYS. */
static inline void fixture_assert_refused(const char *const *flags, const char *says) {
  PtsimJobOptions o;
  PtsimJob job;
  g_autoptr(GError) e = NULL;
  ptsim_job_options_init(&o);
  gboolean done = ptsim_job_options_parse(&o, flags, &e) && ptsim_job_build(&o, &job, NULL, &e);
  g_assert_false(done);
  g_assert_nonnull(e);
  g_assert_nonnull(strstr(e->message, says));
  ptsim_job_options_clear(&o);
}

#endif /* PTSIM_TEST_JOB_FIXTURE_H */
