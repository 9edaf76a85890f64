/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gpu.h: the CUDA backend, with the CPU backend's contract (sky-cpu.h):
 * the same statistics, the same label numbers, the same catalogue, checked
 * as docs/contract.md says (sky_result_compare, sky-core.h).
 *
 * Plain C: the kernels live in .cu files behind this header, and nothing
 * here needs CUDA's headers. The image goes up once; clip, segment, label
 * and measure run on the device with no host round trip between them (the
 * clipping loop included); only the statistics and the catalogue come back,
 * and the mask and label image when asked. The CUDA runtime is linked
 * statically, so a program using this starts on a machine without the
 * NVIDIA driver and sky_gpu_available() says so.
 *
 * Failures return a status from sky-core.h with the detail in
 * sky_last_error(): SKY_ERR_UNAVAILABLE when there is no usable device or a
 * CUDA call failed (the message names the call, file and line), and
 * SKY_ERR_MEMORY when the device lacks the memory for an image, so that the
 * caller can fall back to the CPU. Nothing here calls exit(). */
#ifndef SKY_GPU_H
#define SKY_GPU_H

#include "sky-core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SKY_OK when device 0 can run the pipeline; why (if not NULL) then gets a
 * one-line description of it ("NVIDIA H200, compute 9.0, 132 SMs, ...").
 * Otherwise SKY_ERR_UNAVAILABLE, and why gets the reason a person can act
 * on: no NVIDIA driver, a driver older than this build's CUDA, no device,
 * a device older than compute capability 8.0, too little free memory. */
int sky_gpu_available (char *why, size_t why_size);

/* A device context: the stream, events and device buffers of one device,
 * kept between runs so that a rerun on an image of the same size allocates
 * nothing. One thread at a time may use a context. */
typedef struct SkyGpu SkyGpu;

/* Makes a context on device 0; SKY_ERR_UNAVAILABLE when there is none. */
int sky_gpu_new (SkyGpu **out);

/* Frees the context and its device memory; NULL is allowed. */
void sky_gpu_free (SkyGpu *gpu);

/* Bytes of device memory the context holds now. */
size_t sky_gpu_device_bytes (const SkyGpu *gpu);

/* What a run downloads besides the statistics and the catalogue. */
enum {
  SKY_GPU_WANT_MASK = 1u << 0,   /* res->mask, nx * ny bytes */
  SKY_GPU_WANT_LABELS = 1u << 1, /* res->labels, nx * ny int32 */
  /* The image is the one sky_gpu_load_plane put on the device: nothing is
   * uploaded and img->pixels may be NULL. */
  SKY_GPU_IMAGE_LOADED = 1u << 2,
  /* img->pixels is device memory (a caller's device array), left as it
   * is until the run returns: the steps read it in place where it is
   * 16-byte aligned (they take NaN and +-Inf alike as blank), else from a
   * copy on the device; the driver is not asked where it lives. */
  SKY_GPU_PIXELS_ON_DEVICE = 1u << 3,
  /* No events between the steps: res->times and times are NaN, and the
   * host saves the records and the queries (a caller that times itself). */
  SKY_GPU_NO_TIMES = 1u << 4,
  /* The catalogue stays as the device packed it (sky_gpu_packed_catalogue):
   * res->catalogue is left empty and res->nsources counts the sources. */
  SKY_GPU_PACKED_ONLY = 1u << 5,
};

/* Runs the four steps on the device into res, which must be zeroed or hold
 * an earlier result (its catalogue is replaced; its mask and labels are
 * kept for reuse when asked for again at the same size, freed otherwise).
 * res->times gets each step's kernel time; times (if not NULL) also gets
 * the transfers. The upload is a DMA from pinned memory: from the image
 * itself after sky_gpu_pin(), else through a pinned staging buffer that
 * the pixels are first copied into (host time outside the events). Pixels
 * already in the device's memory (a caller's device array) are read there,
 * with no host copy.
 * Images up to 2^32 - 1 pixels (46341^2, 65536 x 40000), as far as the
 * device's memory goes: past 2^31 - 1 the labeller's union-find takes 8
 * bytes a pixel instead of 4. */
int sky_gpu_run_on (SkyGpu *gpu, const SkyImage *img, const SkyParams *params, unsigned flags,
                    SkyResult *res, SkyGpuTimes *times);

/* sky_gpu_run_on() with a process-wide context made on first use (and
 * guarded by a lock), downloading no mask and no labels. */
int sky_gpu_run (const SkyImage *img, const SkyParams *params, SkyResult *res,
                 SkyGpuTimes *times);

/* Frees the process-wide context of sky_gpu_run(), if any. */
void sky_gpu_shutdown (void);

/* ------------------------------------------------ from the file, directly */

typedef struct SkyGpuLoadTimes {
  double buffers_ms;    /* the image's buffers on the device */
  double ring_ms;       /* the page-locked ring, where not prepared before */
  double stream_ms;     /* reading, copying up and converting, overlapped */
  int64_t nchunks, chunk_bytes;
  int nslots, nthreads;
} SkyGpuLoadTimes;

/* Reads the plane of f (sky_plane_file_open; img as it filled it) straight
 * into the context's image on the device, with no image in host memory:
 * nthreads threads (0: every core) pread the stored values in chunks of
 * chunk_bytes (0: by the plane's size) into a ring of page-locked slots
 * that go up by DMA while the next chunks are read, and the device
 * converts them exactly as sky_image_load does (the same float bits:
 * byte order, BSCALE/BZERO, BLANK, infinities to NaN). Sets img->nblank
 * and img->ninf; SKY_ERR_EMPTY when every pixel is blank, SKY_ERR_IO when
 * the file cannot be read, SKY_ERR_ARGUMENT when it is not a regular file.
 * A run then takes SKY_GPU_IMAGE_LOADED, until the next run on the
 * context that uploads an image. */
int sky_gpu_load_plane (SkyGpu *gpu, SkyPlaneFile *f, SkyImage *img, int nthreads,
                        size_t chunk_bytes, SkyGpuLoadTimes *times);

/* Makes the loader's ring of page-locked slots and their streams for a
 * plane of about plane_bytes on nthreads threads (0: every core) and loads
 * the conversion's kernel, ahead of sky_gpu_load_plane (which otherwise
 * does it itself): for a caller that counts the device's start apart from
 * the file's load. The ring is kept for later loads. */
int sky_gpu_load_prepare (SkyGpu *gpu, int64_t plane_bytes, int nthreads);

/* The context's image (n pixels) brought home, for tests. */
int sky_gpu_image_download (SkyGpu *gpu, float *pixels, int64_t n);

/* Orders the context's next work after everything enqueued so far on
 * stream (a cudaStream_t; NULL: the legacy default stream), without the
 * host waiting: for a caller whose device array another stream wrote. */
int sky_gpu_wait_for_stream (SkyGpu *gpu, void *stream);

/* The packed catalogue of the context's last lesson run on the host
 * (nsources each of x, y, sum as double, npix as int64, peak as float,
 * peak_x, peak_y, xmin, xmax, ymin, ymax as int32, column after column),
 * valid until the next run on the context. */
const void *sky_gpu_packed_catalogue (const SkyGpu *gpu);

/* Page-locks the image's pixels so that uploads read them directly; the
 * caller must call sky_gpu_unpin() before freeing or reallocating them. */
int sky_gpu_pin (const SkyImage *img);
void sky_gpu_unpin (const SkyImage *img);

/* Keeps, field by field, the smaller of best and t (best of N repeats). */
void sky_gpu_times_min (SkyGpuTimes *best, const SkyGpuTimes *t);

/* How every front end times the GPU, as cupyx.profiler.benchmark does: the
 * image page-locked for the run's duration (unless it already is), one
 * untimed warm-up run, then repeat (at least 1) runs downloading only the
 * statistics and the catalogue, keeping each figure's best in best
 * (best->runs = repeat); then, where flags ask, the mask and labels of the
 * last run brought home once by DMA into page-locked pages, timed apart in
 * best->outputs. res as sky_gpu_run_on() says. */
int sky_gpu_run_best (SkyGpu *gpu, const SkyImage *img, const SkyParams *params, unsigned flags,
                      int repeat, SkyResult *res, SkyGpuTimes *best);

/* The repeats a front end takes when it is not told: the same as the
 * figures skysift-cli find --repeat 10 prints. */
#define SKY_GPU_DEFAULT_REPEAT 10

/* Page-locks [p, p + size) for DMA unless it already is; returns whether
 * sky_gpu_unlock_host must undo it (0 also when locking failed: copies then
 * go through the driver's staging, slower but right). */
int sky_gpu_lock_host (void *p, size_t size);
void sky_gpu_unlock_host (void *p, int locked);

/* The device buffers of the context's last run, for a display that reads
 * them where they are (sky-gpu-gl.h): the float image, the mask (one byte a
 * pixel) and the label image (int32), each nx * ny values in rows of nx,
 * as the last sky_gpu_run_on() left them, valid until the next run on the
 * context or its sky_gpu_free(); capacity is how many pixels they hold
 * (the image is not the last run's where that run read a caller's device
 * array in place: SKY_GPU_PIXELS_ON_DEVICE).
 * SKY_ERR_ARGUMENT when the context has run nothing yet. The caller must
 * keep other threads from running on the context meanwhile. */
typedef struct SkyGpuDeviceBuffers {
  const float *image;
  const uint8_t *mask;
  const int32_t *labels;
  int64_t capacity;
} SkyGpuDeviceBuffers;

int sky_gpu_device_buffers (const SkyGpu *gpu, SkyGpuDeviceBuffers *out);

/* ----------------------------------------------------- a band of rows */

/* Device bytes a run of the lesson's steps on n pixels takes (the image's
 * buffers and the catalogue's first size; the clip's tables and the
 * context's own are about a MiB more). */
size_t sky_gpu_run_bytes (int64_t n);

/* Bytes of device memory a run on the context (NULL: a new one on device
 * 0) may take: the device's free memory (the context's image-sized
 * buffers counted as free) less a margin, and no more than limit (0: no
 * limit) less what the context holds besides. */
int sky_gpu_room (SkyGpu *gpu, size_t limit, size_t *room);

/* The most rows of nx pixels (at most ny) whose band a run in room bytes
 * holds (sky_gpu_run_bytes), and whose pixel indices stay 32-bit; 0 when
 * not even one row fits. */
int64_t sky_gpu_band_rows (int64_t nx, int64_t ny, size_t room);

/* One band of rows of a larger image, as the band alone labels it (1 to
 * nlabels in raster order within the band): its first and last rows of
 * labels (nx each) and, for band label l at index l - 1, the sums of the
 * measure step not yet divided (sum, sum of value * x, of value * y),
 * the pixel count, the peak (the first in raster order on ties) and the
 * box, with rows counted in the whole image. Times in ms from device
 * events. Host memory, grown as needed; sky_gpu_band_clear frees it. */
typedef struct SkyGpuBand {
  int64_t nlabels, nx, capacity;
  int32_t *first_row, *last_row;
  double *sum, *sx, *sy;
  int64_t *npix;
  float *peak;
  int32_t *peak_x, *peak_y;
  int32_t *xmin, *xmax, *ymin, *ymax;
  double upload_ms, segment_ms, label_ms, measure_ms, download_ms;
} SkyGpuBand;

/* Enqueues a band of rows (nx x rows pixels at pixels, host memory,
 * page-locked for the copy to overlap: sky_gpu_lock_host) on the
 * context's stream: upload, segment at threshold_value (the whole image's
 * sky_threshold_value; NAN: no sources), label, measure. Returns without
 * waiting, so the host can read the next band meanwhile; pixels must stay
 * untouched until sky_gpu_band_finish. Bands of up to 2^31 - 1 pixels. */
int sky_gpu_band_start (SkyGpu *gpu, const float *pixels, int64_t nx, int64_t rows,
                        double threshold_value, const SkyParams *params);

/* Waits for the band of the last sky_gpu_band_start and brings its labels'
 * rows and sums home into band; y0: the band's first row in the image. */
int sky_gpu_band_finish (SkyGpu *gpu, int64_t y0, SkyGpuBand *band);

/* After a band that failed: waits for the stream and marks the context
 * unusable where a kernel faulted (SKY_ERR_UNAVAILABLE), else SKY_OK. */
int sky_gpu_band_failed (SkyGpu *gpu);

void sky_gpu_band_clear (SkyGpuBand *band);

/* ------------------------------------------------------- the local method */

/* The local method's maps for its detection on the device, nx * ny floats
 * each in rows of nx, in host or device memory: the background and rms
 * maps, and the detection image in units of its rms where a matched filter
 * made one (NULL: (image - background) / rms, NaN where the rms is not
 * positive, as the CPU makes it where it reads it). */
typedef struct SkyGpuDetectInput {
  const float *background;
  const float *rms;
  const float *snr;
} SkyGpuDetectInput;

/* The local method on the device: with in NULL every step (the maps of
 * sky_gpu_local_maps below, then flood, deblend and measure), else flood,
 * deblend and measure from the maps in `in` (uploaded, or copied on the
 * device), as the CPU's sky_cpu_local_* steps make them: the same islands,
 * labels and sources, the catalogue with its local columns
 * (docs/contract.md). Nothing crosses the bus between the upload and the
 * results. res as sky_gpu_run_on says (res->method SKY_METHOD_LOCAL,
 * nislands, ndeblended); res->times and times get each step's kernel time
 * (with in given, background and detect are 0: the maps came made).
 * Images up to 2^31 - 1 pixels. */
int sky_gpu_run_local_on (SkyGpu *gpu, const SkyImage *img, const SkyParams *params,
                          const SkyGpuDetectInput *in, unsigned flags, SkyResult *res,
                          SkyGpuTimes *times);

/* ------------------------------------------------- the local method's maps */

/* The local method's maps on the device (the CPU's sky_cpu_background and
 * the detection image of sky-cpu-local.c without a matched filter), equal
 * to the CPU's bit for bit: background and rms (SEP's mesh, filled,
 * median-filtered, bicubic spline), residual = image - background, and
 * snr = residual / rms (NaN where rms <= 0 or is NaN). Each map is nx * ny
 * floats in rows of nx (pixel indices are 64-bit); the finished mesh
 * (filled and filtered, what the spline goes through) is nbx * nby floats.
 * Every pointer is device memory owned by the context: valid until the
 * next sky_gpu_local_maps on it, or sky_gpu_free. */
typedef struct SkyGpuLocalMaps {
  int64_t nx, ny;
  float *background, *rms, *residual, *snr;
  int64_t nbx, nby;          /* boxes across and down */
  int box;                   /* params->bkg_box */
  const float *mesh_background, *mesh_rms;
} SkyGpuLocalMaps;

/* Enqueues the maps of d_image (device memory, nx * ny floats: the
 * context's own image or any device array) on the context's stream and
 * returns without waiting: a kernel enqueued after it on that stream sees
 * the maps; nothing crosses the bus. Reads params->bkg_box and
 * params->bkg_filter. SKY_ERR_ARGUMENT for bad parameters or sizes,
 * SKY_ERR_MEMORY when the device lacks the memory for the maps (16 bytes a
 * pixel), SKY_ERR_UNAVAILABLE when a CUDA call fails. */
int sky_gpu_local_maps (SkyGpu *gpu, const float *d_image, int64_t nx, int64_t ny,
                        const SkyParams *params, SkyGpuLocalMaps *out);

/* A host image's maps: upload, sky_gpu_local_maps, and the maps asked for
 * (each NULL or nx * ny floats on the host) brought home; times (if not
 * NULL) in ms from CUDA events: upload, kernels, download. */
typedef struct SkyGpuMapsTimes {
  double upload_ms, kernel_ms, download_ms;
} SkyGpuMapsTimes;

/* The finished mesh of the context's last sky_gpu_local_maps (nbx * nby
 * floats each into back and rms, either NULL), waiting for it: for tests
 * and a display of the mesh. SKY_ERR_ARGUMENT when none was made. */
int sky_gpu_local_mesh_download (SkyGpu *gpu, float *back, float *rms);

int sky_gpu_local_maps_host (SkyGpu *gpu, const SkyImage *img, const SkyParams *params,
                             float *background, float *rms, float *residual, float *snr,
                             SkyGpuMapsTimes *times);

/* The local method timed as sky_gpu_run_best times the lesson's steps, for
 * every front end. The maps: the image page-locked for the call, one
 * untimed warm-up, the best of repeat runs bringing nothing home, then the
 * background and rms of one more run brought home (either NULL), its
 * download timed apart; times->ms[SKY_STEP_BACKGROUND] is the kernels'. */
int sky_gpu_local_maps_best (SkyGpu *gpu, const SkyImage *img, const SkyParams *params,
                             int repeat, float *background, float *rms, SkyGpuTimes *times);

/* The local method's detection (every step, or from given maps: in as
 * sky_gpu_run_local_on takes it): one warm-up run, then the best of repeat
 * (at least 1), each figure's own best; res holds the last run's results
 * with its mask and labels. */
int sky_gpu_run_local_best (SkyGpu *gpu, const SkyImage *img, const SkyParams *params,
                            const SkyGpuDetectInput *in, int repeat, SkyResult *res,
                            SkyGpuTimes *times);

/* ------------------------------------------------------------- convolution */

/* One convolution's times in milliseconds, from CUDA events on the
 * context's stream: the upload of the input (and kernel values), the
 * kernel, the download of the output, and their sum. path: which ran. */
typedef struct SkyGpuConvolveTimes {
  double upload_ms, kernel_ms, download_ms, total_ms;
  SkyConvolvePath path;
} SkyGpuConvolveTimes;

/* 2D convolution with zero fill as scipy.signal.convolve2d in mode (and as
 * sky_cpu_convolve2d_*()): in is nx x ny row-major on the host, out (on the
 * host) gets the size sky_convolve_geometry() gives. Accumulates in the
 * element type. The input and kernel buffers on the device are allocated
 * and freed per call (outside the timed span); the output's stays with the
 * context, holding this output after the download (sky_gpu_convolve_output
 * below), and is reused by the next call while large enough.
 * path as SkyConvolvePath (sky-core.h) says, as on the CPU.
 * SKY_ERR_ARGUMENT as sky_convolve_geometry() says, or for a separable path
 * asked of a kernel of higher rank; times may be NULL. */
int sky_gpu_convolve2d_f32 (SkyGpu *gpu, const float *in, int64_t nx, int64_t ny,
                            const SkyKernel *kernel, SkyConvolveMode mode, SkyConvolvePath path,
                            float *out, SkyGpuConvolveTimes *times);
int sky_gpu_convolve2d_f64 (SkyGpu *gpu, const double *in, int64_t nx, int64_t ny,
                            const SkyKernel *kernel, SkyConvolveMode mode, SkyConvolvePath path,
                            double *out, SkyGpuConvolveTimes *times);

/* The output of the context's last successful 2D convolution, still on
 * the device, for a display that reads it there (sky_gpu_gl_write_convolved
 * in sky-gpu-gl.h): nx x ny values in rows of nx, double where f64, else
 * float, equal bit for bit to what was downloaded. Valid until the next 2D
 * convolution on the context (which may fail and leave none) or its
 * sky_gpu_free(); a pipeline run or a 1D convolution leaves it alone.
 * SKY_ERR_ARGUMENT when there is none. The caller keeps other threads off
 * the context meanwhile. */
typedef struct SkyGpuConvolveOutput {
  const void *data;
  int64_t nx, ny;
  int f64;
} SkyGpuConvolveOutput;

int sky_gpu_convolve_output (const SkyGpu *gpu, SkyGpuConvolveOutput *out);

/* 1D full convolution as np.convolve: out (n + m - 1 values, host)[j] =
 * sum over k of a[j - k] * v[k]. */
int sky_gpu_convolve1d_f32 (SkyGpu *gpu, const float *a, int64_t n, const float *v, int64_t m,
                            float *out, SkyGpuConvolveTimes *times);
int sky_gpu_convolve1d_f64 (SkyGpu *gpu, const double *a, int64_t n, const double *v,
                            int64_t m, double *out, SkyGpuConvolveTimes *times);

/* The GPU's part of the lesson's convolution demo (sky-core.h) on d, made
 * by sky_convolution_demo_init() with_gpu after the CPU's part ran: the 2D
 * convolution on path and the 1D one, once to warm up (the first call
 * loads the module), then repeat times, keeping each time's best; then
 * sky_convolution_demo_check_gpu(). */
int sky_gpu_convolution_demo (SkyGpu *gpu, SkyConvolutionDemo *d, SkyConvolvePath path,
                              int repeat);

#ifdef __cplusplus
}
#endif

#endif /* SKY_GPU_H */
