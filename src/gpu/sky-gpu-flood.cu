/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Seed-and-flood islands on the device, as sky-cpu-flood.c makes them: the
 * flood mask snr > flood, the GPU labeller on it (the connected components
 * of the mask, numbered in raster order of their first pixels, as the
 * CPU's labeller numbers them), one reduction per island (peak, area, box,
 * first pixel), then the islands whose peak passes the seed level and
 * whose area passes min_area kept and renumbered in label order. Every
 * reduction is a maximum, a minimum or an integer sum, so the order of the
 * atomics changes nothing: the islands are the CPU's, bit for bit. */
#include "sky-gpu-detect-private.h"

#include <limits.h>

namespace {

constexpr int kThreads = 256;
constexpr int kPixels = 16;   /* the reduction: per thread, in raster order */

typedef unsigned long long u64;

/* The flood mask, and zeros on its padding up to a whole label tile. NaN
 * (blank, or no rms) compares false: never an island pixel. */
__global__ void __launch_bounds__ (kThreads)
floodMaskKernel (SkyGpuDetectMaps m, int64_t n, int64_t padded, float flood,
                 uint8_t *__restrict__ mask)
{
  sky_grid_wait ();
  for (int64_t i = (int64_t) blockIdx.x * kThreads + threadIdx.x; i < padded;
       i += (int64_t) gridDim.x * kThreads)
    mask[i] = i < n && sky_gpu_snr_at (m, i) > flood;
}

/* Every component's reduction starts empty (the count is the labeller's). */
__global__ void __launch_bounds__ (kThreads)
floodClearKernel (const SkyGpuState *__restrict__ st, SkyGpuDetectHeader *__restrict__ hdr,
                  uint32_t *__restrict__ peak_key, u64 *__restrict__ area, int32_t *__restrict__ box,
                  u64 *__restrict__ first)
{
  sky_grid_wait ();
  const int64_t nall = st->nsources;

  if (blockIdx.x == 0 && threadIdx.x == 0)
    hdr->nall = (u64) nall;
  for (int64_t k = (int64_t) blockIdx.x * kThreads + threadIdx.x + 1; k <= nall;
       k += (int64_t) gridDim.x * kThreads)
    {
      peak_key[k] = 0;
      area[k] = 0;
      box[4 * k] = box[4 * k + 2] = INT_MAX;
      box[4 * k + 1] = box[4 * k + 3] = -1;
      first[k] = ~0ull;
    }
}

struct IslandPart {
  int32_t label;
  uint32_t key;
  u64 area, first;
  int32_t x0, x1, y0, y1;
};

__device__ __forceinline__ void
flush_part (const IslandPart &p, uint32_t *peak_key, u64 *area, int32_t *box, u64 *first)
{
  const int64_t k = p.label;

  atomicMax (peak_key + k, p.key);
  atomicAdd (area + k, p.area);
  atomicMin (box + 4 * k, p.x0);
  atomicMax (box + 4 * k + 1, p.x1);
  atomicMin (box + 4 * k + 2, p.y0);
  atomicMax (box + 4 * k + 3, p.y1);
  atomicMin (first + k, p.first);
}

/* Each thread reduces its 16 pixels' islands (consecutive pixels of one
 * island meet in one record), then adds each record with atomics. */
__global__ void __launch_bounds__ (kThreads)
floodReduceKernel (SkyGpuDetectMaps m, const int32_t *__restrict__ labels, int64_t n, int64_t nx,
                   uint32_t *__restrict__ peak_key, u64 *__restrict__ area,
                   int32_t *__restrict__ box, u64 *__restrict__ first)
{
  sky_grid_wait ();
  const int64_t i0 = ((int64_t) blockIdx.x * kThreads + threadIdx.x) * kPixels;
  IslandPart p;

  if (i0 >= n)
    return;
  p.label = 0;
  for (int k = 0; k < kPixels && i0 + k < n; k++)
    {
      const int64_t i = i0 + k;
      const int32_t l = labels[i];
      if (l == 0)
        continue;
      const int32_t x = (int32_t) (i % nx), y = (int32_t) (i / nx);
      const uint32_t key = sky_float_key (sky_gpu_snr_at (m, i));
      if (l != p.label)
        {
          if (p.label != 0)
            flush_part (p, peak_key, area, box, first);
          p.label = l;
          p.key = key;
          p.area = 0;
          p.first = (u64) i;
          p.x0 = p.x1 = x;
          p.y0 = p.y1 = y;
        }
      p.key = key > p.key ? key : p.key;
      p.area++;
      p.x0 = min (p.x0, x);
      p.x1 = max (p.x1, x);
      p.y0 = min (p.y0, y);
      p.y1 = max (p.y1, y);
    }
  if (p.label != 0)
    flush_part (p, peak_key, area, box, first);
}

/* Which islands stay: the peak above the seed level (the float peak
 * compared as a double, as on the CPU) and min_area pixels. */
__global__ void __launch_bounds__ (kThreads)
floodKeepKernel (const SkyGpuDetectHeader *__restrict__ hdr, const uint32_t *__restrict__ peak_key,
                 const u64 *__restrict__ area, double seed, int64_t min_area, u64 *__restrict__ keep)
{
  sky_grid_wait ();
  const int64_t nall = (int64_t) hdr->nall;

  for (int64_t k = (int64_t) blockIdx.x * kThreads + threadIdx.x + 1; k <= nall;
       k += (int64_t) gridDim.x * kThreads)
    keep[k - 1] = (double) sky_key_float (peak_key[k]) > seed && (int64_t) area[k] >= min_area;
}

/* The kept islands in label order, which keeps the raster order of first
 * pixels: the new numbers, and the kept islands' table. */
__global__ void __launch_bounds__ (kThreads)
floodCompactKernel (SkyGpuDetectHeader *__restrict__ hdr, SkyGpuState *__restrict__ st,
                    const u64 *__restrict__ keep, const u64 *__restrict__ pos,
                    const u64 *__restrict__ kept, const uint32_t *__restrict__ peak_key,
                    const u64 *__restrict__ area, const int32_t *__restrict__ box,
                    const u64 *__restrict__ first, int32_t *__restrict__ relabel,
                    float *__restrict__ kpeak, u64 *__restrict__ karea,
                    int32_t *__restrict__ kbox, u64 *__restrict__ kfirst)
{
  sky_grid_wait ();
  const int64_t nall = (int64_t) hdr->nall;

  if (blockIdx.x == 0 && threadIdx.x == 0)
    {
      hdr->nislands = nall > 0 ? *kept : 0;
      st->nsources = (uint32_t) (nall > 0 ? *kept : 0);
    }
  for (int64_t k = (int64_t) blockIdx.x * kThreads + threadIdx.x + 1; k <= nall;
       k += (int64_t) gridDim.x * kThreads)
    {
      if (!keep[k - 1])
        {
          relabel[k] = 0;
          continue;
        }
      const int64_t j = (int64_t) pos[k - 1] + 1;
      relabel[k] = (int32_t) j;
      kpeak[j] = sky_key_float (peak_key[k]);
      karea[j] = area[k];
      for (int q = 0; q < 4; q++)
        kbox[4 * j + q] = box[4 * k + q];
      kfirst[j] = first[k];
    }
}

/* The dropped islands' pixels leave the labels and the mask. */
__global__ void __launch_bounds__ (kThreads)
floodRenumberKernel (const SkyGpuDetectHeader *__restrict__ hdr, const int32_t *__restrict__ relabel,
                     int64_t n, int32_t *__restrict__ labels, uint8_t *__restrict__ mask)
{
  sky_grid_wait ();
  if (hdr->nislands == hdr->nall)
    return;
  for (int64_t i = (int64_t) blockIdx.x * kThreads + threadIdx.x; i < n;
       i += (int64_t) gridDim.x * kThreads)
    {
      const int32_t l = labels[i];
      if (l == 0)
        continue;
      const int32_t nl = relabel[l];
      labels[i] = nl;
      mask[i] = nl != 0;
    }
}

} /* namespace */

int
sky_gpu_flood_enqueue (const SkyGpuLocalStep *step)
{
  SkyGpu *gpu = step->gpu;
  SkyGpuDetect *L = gpu->detect;
  const int64_t padded = (step->n + SKY_LABEL_TILE - 1) / SKY_LABEL_TILE * SKY_LABEL_TILE;
  const unsigned pixel_grid = sky_gpu_detect_grid (gpu, padded, kThreads);
  const unsigned island_grid = sky_gpu_detect_grid (gpu, L->island_cap, kThreads);
  const unsigned reduce_blocks
      = (unsigned) ((step->n + kThreads * kPixels - 1) / (kThreads * kPixels));
  int ret;

  SKY_LAUNCH (floodMaskKernel, pixel_grid, kThreads, 0, gpu->stream, *step->maps, step->n, padded,
              step->params->flood, gpu->d_mask);
  if ((ret = sky_gpu_label_enqueue (gpu, step->nx, step->ny)) != SKY_OK)
    return ret;
  SKY_LAUNCH (floodClearKernel, island_grid, kThreads, 0, gpu->stream, gpu->d_state, L->d_header,
              L->d_peak_key, L->d_area, L->d_box, L->d_first);
  SKY_LAUNCH (floodReduceKernel, reduce_blocks, kThreads, 0, gpu->stream, *step->maps,
              gpu->d_labels, step->n, step->nx, L->d_peak_key, L->d_area, L->d_box, L->d_first);
  SKY_LAUNCH (floodKeepKernel, island_grid, kThreads, 0, gpu->stream, L->d_header, L->d_peak_key,
              L->d_area, step->params->seed_sigma, step->params->deblend.min_area, L->d_keep);
  if ((ret = sky_gpu_scan_enqueue (gpu, L->d_keep, L->d_keep_pos, L->island_cap,
                                   &L->d_header->nall, L->d_total)) != SKY_OK)
    return ret;
  SKY_LAUNCH (floodCompactKernel, island_grid, kThreads, 0, gpu->stream, L->d_header, gpu->d_state,
              L->d_keep, L->d_keep_pos, L->d_total, L->d_peak_key, L->d_area, L->d_box, L->d_first,
              L->d_relabel, L->d_kpeak, L->d_karea, L->d_kbox, L->d_kfirst);
  SKY_LAUNCH (floodRenumberKernel, pixel_grid, kThreads, 0, gpu->stream, L->d_header, L->d_relabel,
              step->n, gpu->d_labels, gpu->d_mask);
  return SKY_OK;
}
