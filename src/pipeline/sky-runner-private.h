/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The runner's table of steps (sky-runner-steps.c), read by sky-runner.c. */
#ifndef SKY_RUNNER_PRIVATE_H
#define SKY_RUNNER_PRIVATE_H

#include "sky-runner.h"

#include <stddef.h>

typedef struct SkyStepDef {
  /* Whether the step computes something else with b than with a. */
  int (*params_differ) (const SkyParams *a, const SkyParams *b);
  /* Runs the step on the CPU into st, from what the steps before it left
   * there (the runner times it). */
  int (*cpu) (SkyStages *st);
  /* Takes the step's result from prev, which computed it from the same
   * input with the same parameters; NULL: the step always runs again. */
  void (*keep) (SkyStages *st, const SkyStages *prev);
  /* Whether prev still holds the step's result (its buffer may have been
   * given back, sky_stages_give_back); NULL: it always does. */
  int (*held) (const SkyStages *prev);
  /* Whether the GPU's result for the step is the CPU's (docs/contract.md);
   * appends what differs to note. */
  int (*agree) (const SkyStages *st, const SkyResult *gpu, const SkyGpuBackend *backend,
                char *note, size_t size);
} SkyStepDef;

extern const SkyStepDef sky_step_defs[SKY_STEP_COUNT];

#endif
