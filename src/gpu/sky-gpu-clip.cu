/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Kappa-sigma clipping on the device, by the CPU's method (sky-cpu-clip.c).
 *
 * Every pass keeps the pixels strictly inside an interval nested in the
 * last, so the survivors are the non-blank pixels inside (L, H), the
 * intersection of the intervals so far. Pixels are bucketed by the top 15
 * bits of an order-preserving key. A pass needs exact values only in the
 * buckets of its two bounds and of its median; every bucket between counts
 * whole. So nothing sorts or scatters the whole image:
 *
 *   histogram  each block counts its chunk in shared memory (128 KiB of
 *              32-bit counters) into the global counts;
 *   scan, plan one block: bucket offsets (positions in sorted order), then
 *              from the counts a robust sigma (half the spread of the
 *              16th to 84th percentiles) and median; the tails
 *              beyond median +- 2.5 sigma, where every bound of the loop
 *              should fall, and the window of ranks every median of the
 *              loop can take, are gathered value by value; the central
 *              band between is only ever needed whole;
 *   gather     each block places its gathered values (a few per cent of
 *              the pixels) grouped by bucket, and sums the central band in
 *              registers: one pass over the image;
 *   sums       per-bucket sums of (x - shift) and its square in double for
 *              the gathered buckets, and per group of 256 buckets;
 *   loop       one block on one multiprocessor runs the passes with no
 *              host round trip: the median by a radix select inside its
 *              bucket (histograms of the low key bits, kept while the
 *              median stays there), the next interval's count and moments
 *              from its two edge buckets value by value, the whole buckets
 *              between from their sums (kept while they stay the same),
 *              and the central band whole. Every warp repeats the pass's
 *              scalar logic, so the block is 256 threads for images of up
 *              to 4096 x 4096 pixels and larger ones for larger images.
 *
 * The loop checks at every pass that its median and bounds lie in
 * gathered buckets and that its interval holds the whole central band. If
 * not (a distribution the plan misjudged), it says so, and the full path
 * runs instead, still on the device with no host round trip, as one
 * cooperative kernel with grid barriers between its phases (it returns at
 * once when the plan held): all values partitioned by the top 8 key bits,
 * then scattered by bucket, summed, and the same loop over all of them.
 * The median is an exact order statistic and the sums are double either
 * way, so the statistics, iteration count and survivor count are the
 * CPU's.
 *
 * Each phase has a file, and this one lists them in order:
 *
 *   sky-gpu-clip-keys.cuh  what the phases share: buckets, the plan as
 *                          kernels read it, chunk loops, bucket sums;
 *   sky-gpu-clip-plan.cu   histogram, scan and plan, gather, sums;
 *   sky-gpu-clip-loop.cuh  the loop as device code (loop and full path);
 *   sky-gpu-clip-loop.cu   the loop's kernel and its block size;
 *   sky-gpu-clip-full.cu   the full path. */
#include "sky-gpu-private.h"

int
sky_gpu_clip_prepare (SkyGpu *gpu)
{
  int ret;

  if ((ret = sky_gpu_clip_plan_prepare (gpu)) != SKY_OK
      || (ret = sky_gpu_clip_loop_prepare (gpu)) != SKY_OK)
    return ret;
  return sky_gpu_clip_full_prepare (gpu);
}

/* The phases in the order they run, all enqueued on gpu->stream. */
int
sky_gpu_clip_enqueue (SkyGpu *gpu, int64_t n)
{
  const float *d_gathered = sky_gpu_clip_gathered (gpu);
  int ret;

  if ((ret = sky_gpu_clip_histogram_enqueue (gpu, n)) != SKY_OK
      || (ret = sky_gpu_clip_plan_enqueue (gpu)) != SKY_OK
      || (ret = sky_gpu_clip_gather_enqueue (gpu, n)) != SKY_OK
      || (ret = sky_gpu_clip_sums_enqueue (gpu, n, d_gathered, 0)) != SKY_OK
      || (ret = sky_gpu_clip_loop_enqueue (gpu, n, d_gathered, 0)) != SKY_OK)
    return ret;
  return sky_gpu_clip_full_enqueue (gpu, n);
}
