/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-api.h: the C API of libskysift, the shared library under the Python
 * package (python/skysift). Plain functions, opaque handles and one flat
 * struct of fixed layout, so that ctypes calls it without mirroring the
 * core's structs (which grow as methods and steps are added). Everything
 * runs through the core: the runner for whole runs, the CPU's steps for
 * the lesson's steps one by one, the core's writers for files.
 *
 * Every function that can fail returns a status from sky-core.h, SKY_OK
 * (0) on success, with the message in sky_last_error() of the calling
 * thread. Nothing here touches Python: ctypes releases the GIL around each
 * call, so threads may call concurrently (each with its own handles).
 */
#ifndef SKY_API_H
#define SKY_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct or signature below changes; the Python side
 * refuses a library of another version. */
#define SKY_API_VERSION 5

int sky_api_version (void);

/* --------------------------------------------------------------- images */

typedef struct SkyApiImage SkyApiImage;

/* Loads a plane of a FITS file as the CLI does (hdu 0: the first image). */
int sky_api_image_load (const char *path, int hdu, int64_t plane, SkyApiImage **out);

/* An image over pixels (float32, nx * ny in rows of nx, NaN for blank),
 * borrowed: they must outlive the image. header (may be NULL) holds the
 * HDU's cards, 80 characters each, for the WCS; bunit ("" or NULL: none)
 * and the beam (bmaj, bmin, bpa in degrees; NaN: none) as the loader reads
 * them. Counts the blanks; *ninf (if not NULL) gets how many pixels are
 * infinite, which the caller must make NaN before a run. */
int sky_api_image_wrap (const float *pixels, int64_t nx, int64_t ny, const char *header,
                        int64_t header_len, const char *bunit, double bmaj, double bmin,
                        double bpa, const char *path, SkyApiImage **out, int64_t *ninf);

/* The loaded pixels (float32, ny rows of nx) and their shape. */
const float *sky_api_image_pixels (const SkyApiImage *img, int64_t *nx, int64_t *ny);

void sky_api_image_free (SkyApiImage *img);

/* ----------------------------------------------------------------- runs */

/* The pipeline's parameters with the CLI's names and defaults
 * (sky_api_params_init fills them; SkyParams in sky-core.h says what each
 * means). */
typedef struct SkyApiParams {
  double clip_kappa;    /* 3 */
  int32_t max_iter;     /* 0: until stable */
  double threshold;     /* 5 */
  int32_t relative;     /* 0 */
  int32_t connectivity; /* 4 */
  int32_t nthreads;     /* 0: every core */
  int32_t bkg_box;      /* local, background: mesh box, pixels a side; 64 */
  int32_t bkg_filter;   /* local, background: median filter, boxes a side; 3 */
  double seed_sigma;    /* local: 4.6 */
  double flood_sigma;   /* local: 2.5 */
  int64_t min_area;     /* local: 1 */
  int32_t deblend_nthresh;  /* local: 32 */
  double deblend_mincont;   /* local: 0.005 */
  double deblend_sigma;     /* local: 5 */
} SkyApiParams;

void sky_api_params_init (SkyApiParams *params);

/* SKY_OK where every parameter is in range, else SKY_ERR_ARGUMENT with a
 * message naming the first that is not (what a run would say), so that a
 * caller may refuse them before sending any work out. */
int sky_api_params_check (const SkyApiParams *params);

typedef struct SkyApiRun SkyApiRun;

/* What a run found, by pointers into the run (valid until it is freed). */
typedef struct SkyApiResult {
  int64_t nx, ny;
  double median, sigma, mean;
  int64_t n, ninput;
  int32_t iterations, converged, flat, connectivity;
  double threshold_value;        /* NaN when flat */
  int64_t nsources;
  const double *x, *y, *sum;     /* nsources each */
  const int64_t *npix;
  const float *peak;
  const int32_t *peak_x, *peak_y, *xmin, *xmax, *ymin, *ymax;
  /* The local method's columns, NULL for the lesson's. */
  const float *background, *rms;
  const double *sum_err, *peak_err, *x_win, *y_win;
  const uint32_t *flags;
  int64_t nislands;              /* local: islands before deblending */
  const uint8_t *mask;           /* nx * ny, NULL when not kept */
  const int32_t *labels;
  int32_t nsteps;                /* the method's steps, in order: */
  const char *step_name[8];      /* "clip", "segment"... */
  double step_ms[8];             /* their CPU times, or the GPU's kernels when
                                  * it ran */
  double total_ms;               /* the steps together */
  int32_t gpu_ran;               /* the GPU ran the steps */
  double gpu_kernels_ms, gpu_total_ms; /* device events: kernels; all with transfers */
  const char *backend;           /* "cpu" or "gpu": what ran */
  const char *gpu_fault;         /* why the GPU failed and the CPU finished, or "" */
  /* A device run's catalogue as the device packed it, on the host: its
   * nsources values of x, y, sum (double), npix (int64), peak (float),
   * peak_x, peak_y, xmin, xmax, ymin, ymax (int32), column after column,
   * the CSV's order, so that one copy makes every column; valid until
   * sky_api_gpu_release. NULL for other runs. */
  const void *packed_catalogue;
} SkyApiResult;

/* Runs a method ("lesson" or "local") on img through the runner: backend
 * is "cpu", "gpu" (falls back to the CPU, saying why in gpu_fault) or
 * "both"; until is a step's name ("all"). The local method takes
 * background and rms maps (float32, nx * ny each, borrowed for the call)
 * in place of the ones it computes, or NULL. */
int sky_api_run (const SkyApiImage *img, const SkyApiParams *params, const char *method,
                 const char *backend, const char *until, const float *background,
                 const float *rms, SkyApiRun **out);

/* Runs every step on the device, on pixels in the device's memory (a
 * CuPy array's): nx * ny float32 in rows of nx, read after what was
 * enqueued on stream (the caller's cudaStream_t; NULL: the legacy default
 * stream) without the host waiting for it. No host copy; the mask and
 * labels stay on the device (sky_api_gpu_buffers). One process-wide
 * device context behind a lock, held until sky_api_gpu_release: the
 * caller copies the buffers out in between. result (if not NULL) gets
 * sky_api_run_result's figures, packed_catalogue included, in the same
 * call. SKY_ERR_UNAVAILABLE in a build without CUDA or on a machine
 * without a device. */
int sky_api_gpu_run_device (const float *d_pixels, int64_t nx, int64_t ny,
                            const SkyApiParams *params, void *stream, SkyApiRun **out,
                            SkyApiResult *result);

/* What sky_api_gpu_find_device gives back: doubles, then int64s, then the
 * catalogue, so that a binding reads each group in one go. */
typedef struct SkyApiDeviceFind {
  double median, sigma, mean;    /* the clip's statistics */
  double threshold_value;        /* the pixel value a source is above */
  double step_ms[4];             /* clip, segment, label, measure: kernels
                                  * (device events), NaN without SKY_API_TIMES */
  double kernels_ms, total_ms;   /* the four steps; with the copies to the host */
  int64_t n, ninput;             /* pixels the clip kept; non-blank pixels */
  int64_t nsources;
  int64_t iterations, converged, flat;
  /* The catalogue as sky_api_gpu_run_device's packed_catalogue, valid
   * until sky_api_gpu_release. */
  const void *packed_catalogue;
} SkyApiDeviceFind;

enum {
  SKY_API_TIMES = 1 << 0,        /* time the steps with device events */
};

/* sky_api_gpu_run_device for a caller that wants the figures and the packed
 * catalogue alone, at the least cost a call can have: the same run (the
 * array read in place, the lock held until sky_api_gpu_release), without a
 * run to free, without the catalogue's unpacking, and without event
 * timings unless flags hold SKY_API_TIMES. */
int sky_api_gpu_find_device (const float *d_pixels, int64_t nx, int64_t ny,
                             const SkyApiParams *params, void *stream, int32_t flags,
                             SkyApiDeviceFind *out);

/* Runs every step of the lesson's method once on the device, on a host
 * image (a loaded file's), with the same process-wide context as
 * sky_api_gpu_run_device: no warm-up run, no repeats, and only the
 * statistics and the catalogue come back (no mask, no labels), which is
 * what a batch of images wants of one device. The run keeps img for the
 * writers (its WCS and provenance): img must outlive it. Unlike
 * sky_api_run's "gpu" it never falls back to the CPU: a failing device is
 * SKY_ERR_UNAVAILABLE (or SKY_ERR_MEMORY), for the caller to decide. */
int sky_api_gpu_run_image (const SkyApiImage *img, const SkyApiParams *params,
                           SkyApiRun **out);

/* The device buffers of the last sky_api_gpu_run_device (mask: uint8,
 * labels: int32, nx * ny each); valid until sky_api_gpu_release. */
int sky_api_gpu_buffers (const void **d_mask, const void **d_labels);
void sky_api_gpu_release (void);

/* A description of the device, or the reason there is none: SKY_OK or
 * SKY_ERR_UNAVAILABLE. */
int sky_api_gpu_available (char *why, size_t why_size);

int sky_api_run_result (const SkyApiRun *run, SkyApiResult *out);

/* Writes the run's catalogue with the core's writers, as the CLI does:
 * format "csv", "ecsv", "regions" or "votable". */
int sky_api_run_write (const SkyApiRun *run, const char *format, const char *path);

void sky_api_run_free (SkyApiRun *run);

/* ---------------------------------------------------------------- steps */

/* The lesson's steps one by one on the CPU (sky-cpu.h). */
int sky_api_clip (const SkyApiImage *img, const SkyApiParams *params, double *median,
                  double *sigma, int64_t *n, int32_t *iterations);
int sky_api_segment (const SkyApiImage *img, double level, int32_t nthreads, uint8_t *mask);
int sky_api_label (const uint8_t *mask, int64_t nx, int64_t ny, int32_t connectivity,
                   int32_t nthreads, int32_t *labels, int64_t *nlabels);

/* The background and rms maps on a mesh of bkg_box pixels, median
 * filtered over bkg_filter boxes (sky_cpu_background: SEP's way), into
 * background and rms (nx * ny float32 each). */
int sky_api_background (const SkyApiImage *img, const SkyApiParams *params, float *background,
                        float *rms);

/* Measures the sources of labels (1..nlabels) on img into a run whose
 * result holds the catalogue alone. */
int sky_api_measure (const SkyApiImage *img, const int32_t *labels, int64_t nlabels,
                     int32_t nthreads, SkyApiRun **out);

/* scipy.signal.convolve2d (in, k, mode) with zero fill: double where f64,
 * else float; out gets the size sky_api_convolve2d_shape gives. */
int sky_api_convolve2d_shape (int64_t nx, int64_t ny, int32_t knx, int32_t kny, const char *mode,
                              int64_t *out_nx, int64_t *out_ny);
int sky_api_convolve2d (const void *in, int64_t nx, int64_t ny, const double *k, int32_t knx,
                        int32_t kny, const char *mode, int32_t f64, int32_t nthreads, void *out);

/* np.convolve (a, v): the full 1D convolution, n + m - 1 values. */
int sky_api_convolve1d (const void *a, int64_t n, const void *v, int64_t m, int32_t f64,
                        int32_t nthreads, void *out);

#ifdef __cplusplus
}
#endif

#endif /* SKY_API_H */
