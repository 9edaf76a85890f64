/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-pipeline-gpu.h: the app's bridge to the GPU backend (src/gpu). Built
 * from sky-pipeline-gpu.c where meson found that backend, and from
 * sky-pipeline-gpu-none.c, which says why there is none, elsewhere. */
#pragma once

#include "sky-pipeline.h"

G_BEGIN_DECLS

/* Whether a GPU can run the steps; if not, *reason (free it) says why. The
 * first call looks for the device (starting CUDA can take a moment: call
 * it from a worker); later calls answer from what it found. */
gboolean sky_pipeline_gpu_available (char **reason);

/* The GPU and driver in use, or why there is none; free it. */
char *sky_pipeline_gpu_describe (void);

/* The runner's way to the device (sky-runner.h): this bridge's context
 * under its lock, telling the view which results the device holds. NULL in
 * a build without the GPU backend (the runner's default then says why). */
const SkyGpuBackend *sky_pipeline_gpu_backend (void);

/* The GPU's part of the Convolution lab's demo (d made by
 * sky_convolution_demo_init, its gpu_2d and gpu_1d allocated, the CPU's
 * part run) on the app's one context, timed as skysift-cli convolve --demo
 * times it (sky_gpu_convolution_demo: page-locked buffers, a warm-up run,
 * the best of repeat; path auto). FALSE with error where there is no GPU.
 * The 2D output stays on the device too, until the next 2D convolution:
 * *device_output gets the number under which the bridge published it for
 * the image view (sky_display_publish_convolved), 0 where it is not kept. */
gboolean sky_pipeline_gpu_convolution_demo (SkyConvolutionDemo *d, int repeat,
                                            guint64 *device_output, GError **error);

G_END_DECLS
