/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gpu-private.h: what the .cu files of the CUDA backend share: the
 * context, the device-side state of a run, the error check, and each step's
 * host interface. C++ (nvcc) only. */
#ifndef SKY_GPU_PRIVATE_H
#define SKY_GPU_PRIVATE_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "sky-gpu.h"

/* Checks a CUDA runtime call; on failure records "CUDA: call failed at
 * file:line: message" and returns the status from the enclosing function. */
#define SKY_CUDA(call)                                                          \
  do                                                                            \
    {                                                                           \
      cudaError_t sky_err_ = (call);                                            \
      if (sky_err_ != cudaSuccess)                                              \
        return sky_gpu_cuda_fail (sky_err_, #call, __FILE__, __LINE__);         \
    }                                                                           \
  while (0)

/* Launches a kernel on gpu->stream's side of things and checks the launch
 * itself; faults inside the kernel surface at the next synchronisation,
 * which SKY_CUDA checks. Where gpu->pdl is set (compute 9.0 and newer), the
 * launch is a programmatic dependent launch: the kernel's blocks may be
 * scheduled while the kernel before it in the stream finishes, and wait in
 * sky_grid_wait () until it has completed and its writes are visible. Every
 * kernel of the backend calls sky_grid_wait () first, in every thread, so
 * the order of the stream holds exactly as for plain launches. Needs `gpu`
 * in scope. */
#define SKY_LAUNCH(kernel, grid, block, smem, stream, ...)                      \
  do                                                                            \
    {                                                                           \
      cudaError_t sky_err_ = sky_gpu_launch (gpu->pdl, kernel, (grid), (block), \
                                             (smem), (stream), __VA_ARGS__);    \
      if (sky_err_ == cudaSuccess)                                              \
        sky_err_ = cudaGetLastError ();                                         \
      if (sky_err_ != cudaSuccess)                                              \
        return sky_gpu_cuda_fail (sky_err_, #kernel "<<<>>>", __FILE__, __LINE__); \
    }                                                                           \
  while (0)

template <typename... KArgs, typename... Args>
static inline cudaError_t
sky_gpu_launch (int pdl, void (*kernel) (KArgs...), dim3 grid, dim3 block, size_t smem,
                cudaStream_t stream, Args... args)
{
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];

  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  return cudaLaunchKernelEx (&cfg, kernel, args...);
}

/* The first statement of every kernel: lets the next kernel in the stream
 * be scheduled (its blocks then wait in this same call), and waits until
 * the kernels before this one have completed and their writes are visible
 * (a no-op for a plain launch). Since every kernel waits before it touches
 * memory, and completes only after its wait, each kernel still sees all
 * the work enqueued before it; the launches' latencies overlap instead of
 * adding up. The next kernel is scheduled only once every block of this
 * one has started, so waiting blocks never keep a kernel's own blocks out. */
#ifdef __CUDACC__
__device__ __forceinline__ void
sky_grid_wait (void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile ("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile ("griddepcontrol.wait;" ::: "memory");
#endif
}
#endif

/* Records the failure (SKY_ERR_MEMORY for an allocation, else
 * SKY_ERR_UNAVAILABLE) and returns its status. */
int sky_gpu_cuda_fail (cudaError_t err, const char *call, const char *file, int line);

/* The parameters as the kernels read them, uploaded with the image so that
 * nothing is baked into a launch. */
typedef struct SkyGpuParams {
  double clip_kappa;
  double threshold;
  int max_iter;
  int relative;
  int connectivity;
  int full_clip;          /* 1: skip the plan, clip on all values (tests) */
  int loop_profile;       /* 1: the clip loop prints its phases' cycles (tuning) */
} SkyGpuParams;

/* A run's scalars on the device; the host downloads this whole struct as
 * the header of the results. */
typedef struct SkyGpuState {
  /* clip */
  double median, sigma, mean;
  double shift;              /* sums are of (x - shift), shift near the median */
  uint32_t ninput, n;        /* non-blank pixels; survivors of the last pass */
  int iterations, converged, flat, empty;
  /* clip plan: which buckets are gathered value by value (up to three
   * ranges, in bucket order, each at range_base in the gathered array); the
   * buckets between (the central band) are only ever summed whole */
  int fallback;              /* the plan did not hold: the full path runs */
  int nranges;
  uint32_t range_lo[3], range_hi[3], range_base[3];  /* inclusive buckets */
  int has_central;
  uint32_t central_lo, central_hi;                   /* first, last not gathered */
  uint32_t ngathered;
  double central_s, central_s2;                      /* sums of the central band */
  /* segment */
  double threshold_value;    /* NAN when flat */
  float bound;               /* pixel > bound  <=>  pixel > threshold_value */
  int has_bound;
  /* label, measure */
  uint32_t nsources;
  int overflow;              /* more sources than the measure buffers hold */
} SkyGpuState;


/* Clip tables: buckets by the top SKY_CLIP_BUCKET_BITS of a value's
 * order-preserving key (sky_float_key, sky-core.h, as on the CPU). */
enum {
  SKY_CLIP_BUCKET_BITS = 15,
  SKY_CLIP_BUCKETS = 1 << SKY_CLIP_BUCKET_BITS,
  SKY_CLIP_GROUP = 256,  /* buckets per group of the two-level sums */
  SKY_CLIP_GROUPS = SKY_CLIP_BUCKETS / SKY_CLIP_GROUP,
};

/* Labelling and numbering work on tiles of this many consecutive pixels;
 * the mask buffer is padded to a whole tile with zeros. */
enum { SKY_LABEL_TILE = 8192 };

/* Tiles per super-tile: a tile's first label comes from the root counts of
 * the super-tiles before it and of the tiles before it in its own. */
enum { SKY_LABEL_SUPER = 64 };

/* Per-source bytes of the measure buffer: accumulators, then the packed
 * catalogue (x, y, sum, npix as 8-byte arrays, then peak, peak_x, peak_y,
 * xmin, xmax, ymin, ymax as 4-byte arrays, each array n long). */
enum { SKY_MEASURE_ACC_BYTES = 56, SKY_MEASURE_CAT_BYTES = 60 };

/* The accumulators of cap sources at the start of the measure buffer:
 * sums in double, pixel counts and peak words, then the boxes. */
typedef struct SkyMeasureAcc {
  double *sum, *sx, *sy;
  unsigned long long *npix, *peak;
  int *x0, *x1, *y0, *y1;
} SkyMeasureAcc;

#ifdef __CUDACC__
__host__ __device__ inline SkyMeasureAcc
sky_measure_acc (unsigned char *base, int64_t cap)
{
  SkyMeasureAcc a;
  a.sum = reinterpret_cast<double *> (base);
  a.sx = a.sum + cap;
  a.sy = a.sx + cap;
  a.npix = reinterpret_cast<unsigned long long *> (a.sy + cap);
  a.peak = a.npix + cap;
  a.x0 = reinterpret_cast<int *> (a.peak + cap);
  a.x1 = a.x0 + cap;
  a.y0 = a.x1 + cap;
  a.y1 = a.y0 + cap;
  return a;
}

/* Source i's accumulators before any pixel: zero sums, an empty box. */
__device__ __forceinline__ void
sky_measure_acc_clear (const SkyMeasureAcc &a, int64_t i)
{
  a.sum[i] = a.sx[i] = a.sy[i] = 0;
  a.npix[i] = 0;
  a.peak[i] = 0;
  a.x0[i] = a.y0[i] = 0x7fffffff;
  a.x1[i] = a.y1[i] = -1;
}
#endif

/* The environment's switches, read once when a context is made
 * (sky_gpu_switches_read in sky-gpu-switches.cu, which names each one and
 * says what it is for): comparisons, tuning and tests. */
typedef struct SkyGpuSwitches {
  int pdl_off;               /* SKYSIFT_GPU_PDL=0: plain launches */
  int full_coop_off;         /* SKYSIFT_GPU_FULL_COOP=0: the full path as five kernels */
  int loop_threads;          /* SKYSIFT_GPU_LOOP_THREADS: 256, 512, 1024; 0 by image size */
  int full_clip;             /* SKYSIFT_GPU_FULL_CLIP=1: the clip's full path always */
  int loop_profile;          /* SKYSIFT_GPU_LOOP_PROFILE=1: the loop prints its cycles */
  int mode_threads;          /* SKYSIFT_GPU_MODE_THREADS: the background's mode a warp a
                              * box (32) or 256 threads a box; 0: 128 */
  int core_queue;            /* SKYSIFT_GPU_CORE_WALK=queue: the local measures' core walked
                              * by a queue in global memory even where it fits a bitmap */
  int measure_threads;       /* SKYSIFT_GPU_MEASURE_THREADS: the local measures' block,
                              * 256, 512 or 1024; 0: by the number of sources */
  int measure_small_own;     /* SKYSIFT_GPU_MEASURE_SMALL=one (0): the small sources by the
                              * other sources' blocks too; 1: a warp each beside them */
  int deblend_tree;          /* SKYSIFT_GPU_DEBLEND_TREE: 2 the component tree decides each
                              * island, 1 it says only which split, 0 every island climbs */
  int deblend_small_own;     /* SKYSIFT_GPU_DEBLEND_SMALL=one (0): the small islands by the
                              * large islands' blocks too; 1: by small blocks beside them */
  int deblend_profile;       /* SKYSIFT_GPU_DEBLEND_PROFILE=1: islands print their phases */
  char fault[16];            /* SKYSIFT_GPU_FAULT: the step before which a kernel traps */
} SkyGpuSwitches;

void sky_gpu_switches_read (SkyGpuSwitches *sw);

/* SKYSIFT_GPU_MEMORY_LIMIT in bytes, 0 for none. Read at each check, not
 * with the other switches: a process keeps one context for its life (the
 * app does), and a limit set later must still hold for it. */
size_t sky_gpu_memory_limit (void);

/* A run's events: the upload's two, then one where each step ends (indexed
 * by SkyStep, so a new step needs no new name here), then the downloads'. */
enum {
  SKY_GPU_EV_START,          /* before the upload */
  SKY_GPU_EV_UPLOADED,
  SKY_GPU_EV_STEP_END,       /* + step: that step's kernels are done */
  SKY_GPU_EV_HEADER = SKY_GPU_EV_STEP_END + SKY_STEP_COUNT, /* statistics at home */
  SKY_GPU_EV_BODY_START,
  SKY_GPU_EV_BODY_END,       /* catalogue (and mask, labels) at home */
  SKY_GPU_EV_REMEASURE,      /* before a second measure with a larger buffer */
  SKY_GPU_EV_COUNT
};

struct SkyGpu {
  int device;
  int nsm;
  SkyGpuSwitches switches;
  int pdl;                   /* programmatic dependent launches (compute 9.0+) */
  int full_coop;             /* the clip's full path as one cooperative kernel */
  cudaStream_t stream;
  cudaEvent_t ev[SKY_GPU_EV_COUNT];
  int broken;                /* a CUDA error left the context unusable */
  char broken_why[512];

  /* image-sized buffers, for up to capacity pixels */
  int64_t capacity;
  float *d_image;            /* padded to 16 floats */
  uint8_t *d_mask;           /* padded to a whole label tile */
  uint32_t *d_work;          /* clip: values by bucket; label: union-find */
  int32_t *d_labels;         /* padded to 4 */

  /* clip */
  uint32_t *d_counts, *d_offs, *d_cursor;    /* NB, NB + 1, NB */
  double *d_bsum, *d_bsum2;                  /* per bucket */
  double *d_gsum, *d_gsum2;                  /* per group */
  uint32_t *d_block_coarse;                  /* nsm * 256 per-block coarse counts */
  uint32_t *d_coarse_cursor;                 /* 256 */
  int clip_blocks;
  int64_t clip_chunk;

  /* label */
  int64_t ntiles;
  uint32_t *d_tile_counts, *d_super_counts;  /* roots per tile, per super-tile */

  /* measure */
  unsigned char *d_meas;
  int64_t meas_cap;          /* sources the measure buffer holds */

  /* the local method's detection (sky-gpu-detect-private.h), made on first use */
  struct SkyGpuDetect *detect;

  /* the last 2D convolution's output, kept for a display (sky-gpu.h,
   * sky_gpu_convolve_output); the buffer is kept while large enough */
  void *d_conv_out;
  size_t conv_out_bytes;     /* capacity of d_conv_out */
  int64_t conv_nx, conv_ny;  /* 0 x 0: none (no 2D convolution, or it failed) */
  int conv_f64;
  float *d_conv_f32;         /* a float64 output rounded to float, made on demand */
  size_t conv_f32_bytes;

  /* the local method's maps (sky-gpu-background.cu): made on first use */
  struct SkyGpuLocal *local;

  /* the file loader's ring (sky-gpu-load.cu), made on first use; loaded_n
   * is the pixels it put in d_image, 0 once anything else may have */
  struct SkyGpuLoader *loader;
  int64_t loaded_n;

  /* the band of rows of the last sky_gpu_band_start (sky-gpu-bands.cu) */
  int64_t band_n, band_nx, band_rows;

  /* host side, pinned */
  SkyGpuState *h_state, *d_state;
  SkyGpuParams *h_params, *d_params;
  int params_uploaded;       /* d_params holds h_params: a writer of h_params
                              * that may not upload it clears this */
  unsigned char *h_cat;
  size_t h_cat_bytes;
  size_t cat_guess;          /* catalogue bytes fetched with the header: the
                              * last run's need and some (0: 64 KiB) */
  cudaEvent_t ev_caller;     /* sky_gpu_wait_for_stream's, made on first use */
  float *h_stage;
  size_t h_stage_bytes;
};

typedef struct SkyGpuLoader SkyGpuLoader;
void sky_gpu_loader_free (SkyGpu *gpu);
size_t sky_gpu_loader_bytes (const SkyGpu *gpu);

/* Each step's kernels, enqueued on gpu->stream for an image of n pixels
 * (nx by ny) already on the device. Sizes of launches depend on the image
 * only; counts found on the device (survivors, sources) are read there. */
int sky_gpu_clip_prepare (SkyGpu *gpu);
int sky_gpu_clip_enqueue (SkyGpu *gpu, int64_t n);
int sky_gpu_segment_enqueue (SkyGpu *gpu, int64_t n);
int sky_gpu_label_enqueue (SkyGpu *gpu, int64_t nx, int64_t ny);
/* clear: the accumulators need clearing first (the label step clears them
 * when they fit; a second measure with a grown buffer passes 1). For labels
 * that are the mask's own components (a run of the mask holds one label). */
int sky_gpu_measure_enqueue (SkyGpu *gpu, int64_t nx, int64_t ny, int clear);

/* The local method's buffers: freed with the context, counted in
 * sky_gpu_device_bytes. */
void sky_gpu_local_free (SkyGpu *gpu);
size_t sky_gpu_local_bytes (const SkyGpu *gpu);

/* Device bytes of the image-sized buffers for n pixels. */
size_t sky_gpu_image_bytes (int64_t n);

/* Sources the measure buffer holds at first: more than any sky image has,
 * and a buffer of under a byte per pixel; a run that finds more grows it
 * and measures again. */
static inline int64_t
sky_gpu_initial_measure_capacity (int64_t n)
{
  return n / 128 > 4096 ? n / 128 : 4096;
}

/* Image-sized buffers for n pixels (kept while large enough), and the
 * measure buffer for at least nsources sources. */
int sky_gpu_ensure_buffers (SkyGpu *gpu, int64_t n);
int sky_gpu_ensure_measure (SkyGpu *gpu, int64_t nsources);

/* Milliseconds between the context's events ev[from] and ev[to], NaN when
 * CUDA cannot tell (an event not recorded, say). */
double sky_gpu_elapsed_ms (const SkyGpu *gpu, int from, int to);

/* Pinned host memory of at least need bytes in *buf (64 at least), kept
 * while large enough; *have is its size. */
int sky_gpu_ensure_host (void **buf, size_t *have, size_t need);

/* The catalogue's common columns of n sources from the measure step's
 * packing (x, y, sum, npix, peak, peak_x, peak_y, xmin, xmax, ymin, ymax,
 * column after column) into cat, allocated here. */
int sky_gpu_unpack_catalogue (const unsigned char *packed, int64_t n, SkyCatalogue *cat);

/* The end of a run's download: queues on s the copies of the mask and the
 * labels (n pixels) into res that flags ask for, then records
 * ev[SKY_GPU_EV_BODY_END] and waits for it. */
int sky_gpu_download_pixels (SkyGpu *gpu, unsigned flags, int64_t n, SkyResult *res,
                             cudaStream_t s);

/* What every run starts with: times zeroed, the parameters checked, and
 * SKY_ERR_UNAVAILABLE where a fault broke the context earlier. */
int sky_gpu_run_begin (SkyGpu *gpu, const SkyParams *params, SkyGpuTimes *times);

/* After a run that failed: err is what the stream's synchronisation (and
 * any cleanup on the device) returned; anything but cudaSuccess means a
 * fault inside a kernel, which leaves the context unusable, so it is
 * marked broken with the last error as the reason. The catalogue goes. */
void sky_gpu_run_failed (SkyGpu *gpu, cudaError_t err, SkyResult *res);

/* Prepares res for a run over img like sky_cpu_run: the catalogue goes;
 * mask and label buffers stay when flags ask for them again at the same
 * size, and are allocated where they are asked for and missing. The
 * background and rms maps are left to the caller. SKY_ERR_MEMORY when the
 * host has no room for them. */
int sky_gpu_reset_result (SkyResult *res, const SkyImage *img, unsigned flags);

/* SKY_ERR_MEMORY, naming what and the sizes, when holding more bytes on
 * top of what gpu holds now would pass SKYSIFT_GPU_MEMORY_LIMIT. */
int sky_gpu_check_memory_limit (const SkyGpu *gpu, size_t more, const char *what);


/* The last 2D convolution's output as float on the device: the kept
 * buffer itself for a float32 output, else a float copy rounded on
 * gpu->stream (enqueued, not waited for) into a buffer the context keeps. */
int sky_gpu_convolve_output_f32 (SkyGpu *gpu, const float **out);

/* The launch geometry of the clip histogram for n pixels. */
void sky_gpu_clip_geometry (const SkyGpu *gpu, int64_t n, int *blocks, int64_t *chunk);

/* The clip's phases, in the order sky_gpu_clip_enqueue (sky-gpu-clip.cu)
 * runs them; d_values: the gathered values, or on the full path (full 1)
 * all of them. Each file's kernels get their shared memory size set by its
 * prepare. */
int sky_gpu_clip_plan_prepare (SkyGpu *gpu);
int sky_gpu_clip_loop_prepare (SkyGpu *gpu);
int sky_gpu_clip_full_prepare (SkyGpu *gpu);
int sky_gpu_clip_histogram_enqueue (SkyGpu *gpu, int64_t n);
int sky_gpu_clip_plan_enqueue (SkyGpu *gpu);
int sky_gpu_clip_gather_enqueue (SkyGpu *gpu, int64_t n);
int sky_gpu_clip_sums_enqueue (SkyGpu *gpu, int64_t n, const float *d_values, int full);
int sky_gpu_clip_loop_enqueue (SkyGpu *gpu, int64_t n, const float *d_values, int full);
int sky_gpu_clip_full_enqueue (SkyGpu *gpu, int64_t n);

/* The clip's value buffers: the gathered values in d_labels (free until
 * the labelling), all values by bucket (the full path) in d_work. */
static inline float *
sky_gpu_clip_gathered (const SkyGpu *gpu)
{
  return reinterpret_cast<float *> (gpu->d_labels);
}

static inline float *
sky_gpu_clip_values (const SkyGpu *gpu)
{
  return reinterpret_cast<float *> (gpu->d_work);
}

#endif /* SKY_GPU_PRIVATE_H */
