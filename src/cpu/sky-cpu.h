/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-cpu.h: the CPU backend, the reference every other backend is checked
 * against. Each step takes the previous step's result; all of them split
 * their work over row bands on nthreads threads (0: every online core). */
#ifndef SKY_CPU_H
#define SKY_CPU_H

#include "sky-core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kappa-sigma clipping of the non-blank pixels around the median until a
 * pass clips nothing (or params->max_iter passes): keeps pixels with
 * median - kappa * sigma < x < median + kappa * sigma, sigma the population
 * standard deviation. The pixels are bucketed once by their top 12 bits;
 * every pass then works on the few buckets at its bounds and its median, so
 * no pass sorts or even reads the whole image. */
int sky_cpu_clip (const SkyImage *img, const SkyParams *params, SkyClipStats *stats);

/* mask[i] = 1 where pixels[i] > threshold_value, else 0 (blanks are 0, and a
 * NAN threshold, a flat image, gives an empty mask). mask holds nx * ny. */
int sky_cpu_segment (const SkyImage *img, double threshold_value, int nthreads, uint8_t *mask);

/* Connected components of the mask with 4- or 8-connectivity. labels
 * (nx * ny) gets 1..n in raster order of each component's first pixel,
 * exactly as scipy.ndimage.label numbers them, 0 elsewhere. Union-find over
 * provisional labels, one band per thread, bands joined along their edges. */
int sky_cpu_label (const uint8_t *mask, int64_t nx, int64_t ny, int connectivity, int nthreads,
                   int32_t *labels, int64_t *nlabels);

/* One pass over the source pixels: centroid, sum, pixel count, peak (first
 * in raster order on ties) and bounding box of labels 1..nlabels, into a
 * catalogue it allocates. */
int sky_cpu_measure (const SkyImage *img, const int32_t *labels, int64_t nlabels, int nthreads,
                     SkyCatalogue *cat);

/* Runs the four steps, timing each, into res, which must be zeroed or hold
 * an earlier result: its mask and label buffers are reused when the image
 * has the same size. The caller frees it with sky_result_clear. */
int sky_cpu_run (const SkyImage *img, const SkyParams *params, SkyResult *res);

/* The pipeline with detection and measurement apart: clip and segment run
 * on detect (a smoothed copy of img, say: a matched filter), label on its
 * mask, and measure on img, so fluxes and centroids are the image's own.
 * Both images must be the same size. sky_cpu_run (img) is detect = img. */
int sky_cpu_run_detect (const SkyImage *img, const SkyImage *detect, const SkyParams *params,
                        SkyResult *res);

/* A smoothed copy of img for detection: convolved ("same" mode) with k
 * scaled to unit sum, blank pixels counted as 0 and kept blank. out is
 * allocated; SKY_ERR_ARGUMENT if k sums to 0. */
int sky_cpu_smooth (const SkyImage *img, const SkyKernel *k, int nthreads, SkyImage *out);


/* 2D convolution of an nx x ny image (row-major) with zero fill, as
 * scipy.signal.convolve2d in the given mode (sky_convolve_geometry gives the
 * output's size; out must hold it). Accumulates in the element type. *used,
 * if not NULL, says which path ran. SKY_ERR_ARGUMENT for a separable path
 * asked of a kernel of higher rank. */
int sky_cpu_convolve2d_f32 (const float *in, int64_t nx, int64_t ny, const SkyKernel *kernel,
                            SkyConvolveMode mode, SkyConvolvePath path, int nthreads,
                            float *out, SkyConvolvePath *used);
int sky_cpu_convolve2d_f64 (const double *in, int64_t nx, int64_t ny, const SkyKernel *kernel,
                            SkyConvolveMode mode, SkyConvolvePath path, int nthreads,
                            double *out, SkyConvolvePath *used);

/* 1D full convolution as np.convolve: out (n + m - 1 values)[j] =
 * sum over k of a[j - k] * v[k]. */
int sky_cpu_convolve1d_f32 (const float *a, int64_t n, const float *v, int64_t m, int nthreads,
                            float *out);
int sky_cpu_convolve1d_f64 (const double *a, int64_t n, const double *v, int64_t m,
                            int nthreads, double *out);

/* The CPU's part of the lesson's convolution demo (sky-core.h) on d, made
 * by sky_convolution_demo_init(): the 2D convolution on path (direct asks
 * for auto here, as the direct path always runs second), then on the
 * direct path, then the 1D convolution, each repeat times (the best time
 * kept); the 2D outputs are compared, and the 1D output with one thread's.
 * nthreads 0: every core. */
int sky_cpu_convolution_demo (SkyConvolutionDemo *d, SkyConvolvePath path, int repeat,
                              int nthreads);

#ifdef __cplusplus
}
#endif

#endif /* SKY_CPU_H */
