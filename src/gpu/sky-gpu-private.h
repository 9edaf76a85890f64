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

/* Launches a kernel and checks the launch itself; faults inside the kernel
 * surface at the next synchronisation, which SKY_CUDA checks. */
#define SKY_LAUNCH(kernel, grid, block, smem, stream, ...)                      \
  do                                                                            \
    {                                                                           \
      kernel<<<(grid), (block), (smem), (stream)>>> (__VA_ARGS__);              \
      cudaError_t sky_err_ = cudaGetLastError ();                               \
      if (sky_err_ != cudaSuccess)                                              \
        return sky_gpu_cuda_fail (sky_err_, #kernel "<<<>>>", __FILE__, __LINE__); \
    }                                                                           \
  while (0)

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

/* Clip tables: buckets by the top kClipBucketBits of an order-preserving key. */
enum {
  SKY_CLIP_BUCKET_BITS = 15,
  SKY_CLIP_BUCKETS = 1 << SKY_CLIP_BUCKET_BITS,
  SKY_CLIP_GROUP = 256,  /* buckets per group of the two-level sums */
  SKY_CLIP_GROUPS = SKY_CLIP_BUCKETS / SKY_CLIP_GROUP,
};

/* Labelling and numbering work on tiles of this many consecutive pixels;
 * the mask buffer is padded to a whole tile with zeros. */
enum { SKY_LABEL_TILE = 8192 };

/* Per-source bytes of the measure buffer: accumulators, then the packed
 * catalogue (x, y, sum, npix as 8-byte arrays, then peak, peak_x, peak_y,
 * xmin, xmax, ymin, ymax as 4-byte arrays, each array n long). */
enum { SKY_MEASURE_ACC_BYTES = 56, SKY_MEASURE_CAT_BYTES = 60 };

struct SkyGpu {
  int device;
  int nsm;
  cudaStream_t stream;
  cudaEvent_t ev[10];
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
  uint32_t *d_tile_counts, *d_tile_offs;
  void *d_scan_temp;
  size_t scan_temp_bytes;

  /* measure */
  unsigned char *d_meas;
  int64_t meas_cap;          /* sources the measure buffer holds */

  /* host side, pinned */
  SkyGpuState *h_state, *d_state;
  SkyGpuParams *h_params, *d_params;
  unsigned char *h_cat;
  size_t h_cat_bytes;
  float *h_stage;
  size_t h_stage_bytes;
};

/* Each step's kernels, enqueued on gpu->stream for an image of n pixels
 * (nx by ny) already on the device. Sizes of launches depend on the image
 * only; counts found on the device (survivors, sources) are read there. */
int sky_gpu_clip_prepare (SkyGpu *gpu);
int sky_gpu_clip_enqueue (SkyGpu *gpu, int64_t n);
int sky_gpu_segment_enqueue (SkyGpu *gpu, int64_t n);
int sky_gpu_label_enqueue (SkyGpu *gpu, int64_t nx, int64_t ny);
int sky_gpu_measure_enqueue (SkyGpu *gpu, int64_t nx, int64_t ny);

/* Image-sized buffers for n pixels (kept while large enough), and the
 * measure buffer for at least nsources sources. */
int sky_gpu_ensure_buffers (SkyGpu *gpu, int64_t n);
int sky_gpu_ensure_measure (SkyGpu *gpu, int64_t nsources);

/* Bytes of scratch the label step's scan needs for ntiles tiles. */
int sky_gpu_label_scan_bytes (int64_t ntiles, size_t *bytes);

/* The launch geometry of the clip histogram for n pixels. */
void sky_gpu_clip_geometry (const SkyGpu *gpu, int64_t n, int *blocks, int64_t *chunk);

#endif /* SKY_GPU_PRIVATE_H */
