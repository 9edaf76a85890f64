/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The GPU tests' fixture: one device context for the whole test program,
 * and each test's skip, with the reason, where there is none. */
#ifndef SKY_TEST_GPU_H
#define SKY_TEST_GPU_H

#include <glib.h>

#include "sky-gpu.h"

typedef struct SkyTestGpu {
  SkyGpu *gpu;       /* NULL where there is no usable device */
  char why[512];     /* the device's description, or why there is none */
} SkyTestGpu;

/* Makes the context, or says in t->why why there is none. */
void sky_test_gpu_open (SkyTestGpu *t);

/* TRUE where there is a context; otherwise the running test skips with
 * the reason and this returns FALSE. */
gboolean sky_test_gpu_ready (const SkyTestGpu *t);

/* Frees the context and prints the tally of checks (or why they skipped)
 * as "# WHAT: N passed, N failed". */
void sky_test_gpu_close (SkyTestGpu *t, const char *what, int passed, int failed);

#endif
