/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The steps' names and the methods' lists of steps: the one place that
 * says which steps exist and in which order a method runs them. */
#include "sky-core.h"

#include <string.h>

static const char *const step_names[SKY_STEP_COUNT] = {
  [SKY_STEP_CLIP] = "clip",
  [SKY_STEP_SEGMENT] = "segment",
  [SKY_STEP_LABEL] = "label",
  [SKY_STEP_MEASURE] = "measure",
  [SKY_STEP_BACKGROUND] = "background",
  [SKY_STEP_DETECT] = "detect",
  [SKY_STEP_FLOOD] = "flood",
  [SKY_STEP_DEBLEND] = "deblend",
};

static const SkyStep lesson_steps[] = {
  SKY_STEP_CLIP, SKY_STEP_SEGMENT, SKY_STEP_LABEL, SKY_STEP_MEASURE,
};

static const SkyStep local_steps[] = {
  SKY_STEP_BACKGROUND, SKY_STEP_DETECT, SKY_STEP_FLOOD, SKY_STEP_DEBLEND, SKY_STEP_MEASURE,
};

static const struct {
  const char *name;
  const SkyStep *steps;
  int nsteps;
} methods[SKY_METHOD_COUNT] = {
  [SKY_METHOD_LESSON] = { "lesson", lesson_steps, sizeof lesson_steps / sizeof lesson_steps[0] },
  [SKY_METHOD_LOCAL] = { "local", local_steps, sizeof local_steps / sizeof local_steps[0] },
};

const char *
sky_step_name (SkyStep step)
{
  if (step == SKY_STEP_NONE)
    return "none";
  return step >= 0 && step < SKY_STEP_COUNT ? step_names[step] : "";
}

SkyStep
sky_step_from_name (const char *name)
{
  if (name == NULL)
    return SKY_STEP_INVALID;
  if (strcmp (name, "none") == 0)
    return SKY_STEP_NONE;
  if (strcmp (name, "all") == 0)
    return SKY_STEP_MEASURE;
  for (int i = 0; i < SKY_STEP_COUNT; i++)
    if (strcmp (name, step_names[i]) == 0)
      return (SkyStep) i;
  return SKY_STEP_INVALID;
}

int
sky_method_steps (SkyMethod method, const SkyStep **steps)
{
  if (method < 0 || method >= SKY_METHOD_COUNT)
    {
      *steps = NULL;
      return 0;
    }
  *steps = methods[method].steps;
  return methods[method].nsteps;
}

const char *
sky_method_name (SkyMethod method)
{
  return method >= 0 && method < SKY_METHOD_COUNT ? methods[method].name : "";
}
