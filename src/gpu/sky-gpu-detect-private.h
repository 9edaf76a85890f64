/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gpu-detect-private.h: what the local method's detection on the device
 * shares (sky-gpu-flood.cu, sky-gpu-deblend.cu, sky-gpu-measure-local.cu,
 * sky-gpu-detect.cu): the maps it reads, its parameters, its scalars on the
 * device and its buffers. C++ (nvcc) only. */
#ifndef SKY_GPU_LOCAL_PRIVATE_H
#define SKY_GPU_LOCAL_PRIVATE_H

#include "sky-gpu-private.h"
#include "sky-deblend-common.h"
#include "sky-gpu-row-splines.cuh"

/* The maps on the device, nx * ny floats each in rows of nx, as the CPU's
 * SkyLocalMaps and SkySnrSource give them to its steps. */
typedef struct SkyGpuDetectMaps {
  const float *image;        /* the image, NaN where blank */
  const float *background;   /* or NULL: made where read from splines */
  const float *rms;          /* likewise */
  const float *residual;     /* image - background, or NULL: made by the measure */
  const float *snr;          /* the (filtered) detection image in units of its rms, or
                              * NULL: (image - background) / rms where read, NaN where
                              * the rms is not positive, as sky_snr_row makes it */
  SkyGpuRowSplines splines;  /* where background and rms are NULL (the device's own maps:
                              * residual and snr are then never NULL) */
} SkyGpuDetectMaps;

/* The background and rms at pixel (x, y): the map's, or made from the
 * row's spline with the map kernel's arithmetic (the same bits). */
static __device__ __forceinline__ float
sky_gpu_background_at (const SkyGpuDetectMaps &m, int64_t x, int64_t y, int64_t nx)
{
  return m.background != NULL ? m.background[y * nx + x]
                              : sky_gpu_row_spline_at (m.splines, x, y, 0);
}

static __device__ __forceinline__ float
sky_gpu_rms_at (const SkyGpuDetectMaps &m, int64_t x, int64_t y, int64_t nx)
{
  return m.rms != NULL ? m.rms[y * nx + x] : sky_gpu_row_spline_at (m.splines, x, y, 1);
}

/* The detection image at pixel i, as sky_snr_row makes it (the flood and
 * the deblending read it alike; their files are built without FMA
 * contraction, as src/cpu). */
static __device__ __forceinline__ float
sky_gpu_snr_at (const SkyGpuDetectMaps &m, int64_t i)
{
  if (m.snr != NULL)
    return m.snr[i];
  const float rms = m.rms[i], r = m.image[i] - m.background[i];
  return rms > 0 ? r / rms : NAN;
}

/* The parameters as the kernels read them (passed by value). */
typedef struct SkyGpuDetectParams {
  SkyDeblendParams deblend;  /* as the CPU's deblending reads them */
  float flood;               /* (float) flood_sigma: the flood mask compares in float */
  double seed_sigma;
  int has_blank;             /* the image has blank pixels (flags) */
  double core_denominator;   /* 2 pi ln (1 / 0.7), made on the host as the CPU makes it */
} SkyGpuDetectParams;

/* Blocks of `threads` for `items` grid-stride items: enough for each item
 * a thread, at most 16 blocks a multiprocessor (the rest stride), at least
 * one. Every launch of the detection sizes its grid so. */
static inline unsigned
sky_gpu_detect_grid (const SkyGpu *gpu, int64_t items, int threads)
{
  const int64_t blocks = (items + threads - 1) / threads, most = (int64_t) gpu->nsm * 16;
  return (unsigned) (blocks < 1 ? 1 : blocks < most ? blocks : most);
}

/* The blocks of `threads` with `smem` bytes of dynamic shared memory that
 * the device holds at once (at least one a multiprocessor), into *blocks:
 * the grid of a kernel whose blocks take work from a list as they finish
 * one, or the count above which a kernel's blocks no longer all run at once. */
template <typename Kernel, typename Count>
static inline int
sky_gpu_resident_blocks (const SkyGpu *gpu, Kernel kernel, int threads, size_t smem, Count *blocks)
{
  int per_sm = 0;

  SKY_CUDA (cudaOccupancyMaxActiveBlocksPerMultiprocessor (&per_sm, kernel, threads, smem));
  *blocks = (Count) gpu->nsm * (Count) (per_sm > 0 ? per_sm : 1);
  return SKY_OK;
}

/* The detection's scalars on the device, downloaded with SkyGpuState. */
typedef struct SkyGpuDetectHeader {
  unsigned long long nall;         /* components of the flood mask */
  unsigned long long nislands;     /* islands kept */
  unsigned long long nsplit;       /* islands that split */
  unsigned long long extra;        /* sources beyond one an island */
  unsigned long long scratch_need; /* int32 words the deblending asks for */
  unsigned long long nwork;        /* islands that may split, listed for the island blocks:
                                    * the large ones from the start of the list */
  unsigned long long nmedium;      /* ... the medium ones in a list of their own */
  unsigned long long nsmall;       /* ... and the small ones from the first list's end */
  unsigned long long next_work;    /* the next large or medium one a block takes */
  unsigned long long next_small;   /* the next small one a small island's block takes */
  int scratch_overflow;            /* more than the scratch holds: nothing deblended */
  int pad;
} SkyGpuDetectHeader;

/* Bytes a source adds to the local catalogue: sum_err, peak_err, x_win,
 * y_win as doubles, then background, rms, flags as 4-byte words, each
 * array nsources long, packed for one copy home. */
enum { SKY_DETECT_CAT_BYTES = 4 * 8 + 3 * 4 };

struct SkyGpuDetect {
  int64_t capacity;          /* pixels */
  int64_t island_cap;        /* islands (1-based tables hold island_cap + 1) */
  int64_t source_cap;        /* sources of the local catalogue */
  int64_t scratch_cap;       /* int32 words of the deblending's scratch */

  /* the maps, where the caller gives them (else the maps' own, sky-gpu-background.cu) */
  float *d_background, *d_rms, *d_snr, *d_residual;
  int64_t input_cap;

  /* islands: every component (peak keys, areas, boxes, first pixels), then
   * the kept ones renumbered */
  uint32_t *d_peak_key;
  unsigned long long *d_area, *d_first;
  int32_t *d_box;
  unsigned long long *d_keep, *d_keep_pos;   /* 0-based by island - 1 */
  int32_t *d_relabel;
  float *d_kpeak;
  unsigned long long *d_karea, *d_kfirst;
  int32_t *d_kbox;

  /* deblending */
  unsigned long long *d_need, *d_offset;     /* scratch words by island - 1 */
  int32_t *d_nsub, *d_newlabel;
  int32_t *d_medium;                         /* the medium islands listed (sky-gpu-deblend.cu) */
  int32_t *d_scratch;
  unsigned long long *d_first_bits;          /* a bit at each source's first pixel */
  unsigned long long *d_word_count, *d_word_offset;
  int64_t nwords;
  uint8_t *d_deblended;                      /* by final label, capacity + 1 */
  int64_t island_words;                      /* the island kernel's shared words (0: not yet
                                              * asked of the device) */
  unsigned island_blocks;                    /* its blocks: as many as are resident at once */
  int64_t small_words;                       /* the same for the small islands' blocks, */
  unsigned small_blocks;                     /* which run on side, beside the large ones */
  unsigned small_measure_blocks;             /* the small sources' warps resident at once */
  /* A second stream, for kernels that run beside the main stream's (the
   * small islands', the small sources'), and the events of its fork and
   * join; made on first use (sky_gpu_detect_fork). */
  cudaStream_t side;
  cudaEvent_t side_start, side_done;
  int64_t wide_measure_most;                 /* the most sources measured 512 threads each: the
                                              * blocks of 512 resident at once (0: not yet asked) */

  /* the local measures */
  uint8_t *d_seen;                           /* zero between uses */
  unsigned long long *d_src_need, *d_src_offset;
  unsigned char *d_cat;                      /* source_cap * SKY_DETECT_CAT_BYTES */

  /* exclusive scans */
  unsigned long long *d_chunk;               /* chunk sums */
  int64_t chunk_cap;
  unsigned long long *d_total;               /* scan totals, 4 slots */

  SkyGpuDetectHeader *d_header, *h_header;
  unsigned char *h_cat;
  size_t h_cat_bytes;
};

/* The buffers for images of n pixels, and the local catalogue for at
 * least nsources sources; the deblending's scratch for at least words. */
int sky_gpu_detect_ensure (SkyGpu *gpu, int64_t n);
int sky_gpu_detect_ensure_sources (SkyGpu *gpu, int64_t nsources);
int sky_gpu_detect_ensure_scratch (SkyGpu *gpu, int64_t words);
int sky_gpu_detect_fork (SkyGpu *gpu);
int sky_gpu_detect_join (SkyGpu *gpu);
void sky_gpu_detect_free (SkyGpu *gpu);
size_t sky_gpu_detect_bytes (const SkyGpu *gpu);

/* out[i] = in[0] + ... + in[i - 1] for i < count, where count is *d_count
 * (on the device) or, where d_count is NULL, cap; *d_total gets the sum.
 * Sums in 64 bits; chunks of the scan at most the context's chunk_cap. */
int sky_gpu_scan_enqueue (SkyGpu *gpu, const unsigned long long *in, unsigned long long *out,
                          int64_t cap, const unsigned long long *d_count,
                          unsigned long long *d_total);

/* What each step of the local method is given: the context (its stream,
 * buffers and gpu->detect), the image's size, the maps on the device and
 * the parameters. The steps are enqueued on gpu->stream in the order of
 * sky_gpu_detect_enqueue's table. */
typedef struct
{
  SkyGpu *gpu;
  int64_t nx, ny, n;                         /* n = nx * ny */
  const SkyGpuDetectMaps *maps;
  const SkyGpuDetectParams *params;
} SkyGpuLocalStep;

int sky_gpu_flood_enqueue (const SkyGpuLocalStep *step);
int sky_gpu_deblend_enqueue (const SkyGpuLocalStep *step);
int sky_gpu_measure_local_enqueue (const SkyGpuLocalStep *step);

/* The three steps from the maps on the device (flood, deblend, measure),
 * with an event where each ends (SKY_GPU_EV_STEP_END + step); nblank: the
 * image's blank pixels, for the flags. The mask, labels and image are the
 * context's (d_mask, d_labels, d_image: maps->image is d_image as a rule). */
int sky_gpu_detect_enqueue (SkyGpu *gpu, int64_t nx, int64_t ny, const SkyGpuDetectMaps *maps,
                           const SkyParams *params, int64_t nblank);

/* The common measures (sky-gpu-measure.cu) on another image than the
 * context's: the local method measures the residual. Its deblended sources
 * may touch, so a run of the mask ends where the label changes. */
int sky_gpu_measure_image_enqueue (SkyGpu *gpu, const float *image, int64_t nx, int64_t ny,
                                   int clear);

#endif /* SKY_GPU_LOCAL_PRIVATE_H */
