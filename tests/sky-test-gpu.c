/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sky-test-gpu.h"

#include <stdio.h>

void
sky_test_gpu_open (SkyTestGpu *t)
{
  char found[512];

  t->gpu = NULL;
  if (sky_gpu_available (found, sizeof found) != SKY_OK)
    g_snprintf (t->why, sizeof t->why, "no usable GPU: %s", found);
  else if (sky_gpu_new (&t->gpu) != SKY_OK)
    g_snprintf (t->why, sizeof t->why, "no GPU context: %s", sky_last_error ());
  else
    g_snprintf (t->why, sizeof t->why, "%s", found);
}

gboolean
sky_test_gpu_ready (const SkyTestGpu *t)
{
  if (t->gpu == NULL)
    {
      g_test_skip (t->why);
      return FALSE;
    }
  return TRUE;
}

void
sky_test_gpu_close (SkyTestGpu *t, const char *what, int passed, int failed)
{
  if (t->gpu != NULL)
    printf ("# %s: %d passed, %d failed\n", what, passed, failed);
  else
    printf ("# %s skipped: %s\n", what, t->why);
  sky_gpu_free (t->gpu);
  t->gpu = NULL;
}
