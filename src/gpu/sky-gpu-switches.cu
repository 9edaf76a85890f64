/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The environment's switches of the CUDA backend, read once when a context
 * is made: nothing else in the backend calls getenv (but for the memory
 * limit, read where it is checked; see sky-gpu-private.h).
 *
 *   SKYSIFT_GPU_PDL=0           plain launches instead of programmatic
 *                               dependent ones (comparisons);
 *   SKYSIFT_GPU_FULL_COOP=0     the clip's full path as five kernels instead
 *                               of one cooperative kernel (comparisons);
 *   SKYSIFT_GPU_LOOP_THREADS=N  the clip loop's block, 256, 512 or 1024
 *                               (tuning; otherwise by image size);
 *   SKYSIFT_GPU_FULL_CLIP=1     the clip's full path always, which otherwise
 *                               runs only when its plan misses (tests);
 *   SKYSIFT_GPU_LOOP_PROFILE=1  the clip loop prints its phases' cycles, in
 *                               a build with SKY_GPU_LOOP_PROFILE (tuning);
 *   SKYSIFT_GPU_MODE_THREADS=N  the local method's background mode a warp a
 *                               box (32) or 256 threads a box instead of 128
 *                               (tests, comparisons);
 *   SKYSIFT_GPU_MEASURE_THREADS=N  the local measures in blocks of 256, 512
 *                               or 1024 threads a source, where otherwise
 *                               the number of sources picks (tests, tuning);
 *   SKYSIFT_GPU_MEASURE_SMALL=one  where the sources are many, those whose
 *                               box is at most 10 a side measured by the
 *                               others' blocks too, instead of a warp each
 *                               beside them (tests, comparisons);
 *   SKYSIFT_GPU_CORE_WALK=queue the local measures' core (the pixels above
 *                               0.7 of the peak joined to it) walked by a
 *                               queue in global memory even where the
 *                               source's box fits the bitmap in shared
 *                               memory that is grown otherwise (tests);
 *   SKYSIFT_GPU_DEBLEND_TREE=N  how the local method's deblending decides an
 *                               island: 2 (the default) its component tree
 *                               decides, 1 the tree says only whether it
 *                               splits (those that do climb the levels), 0
 *                               every island climbs (tests, comparisons);
 *   SKYSIFT_GPU_DEBLEND_SMALL=one  the islands under 256 pixels deblended by
 *                               the larger islands' blocks too, instead of
 *                               by small blocks of their own beside them
 *                               (tests, comparisons);
 *   SKYSIFT_GPU_DEBLEND_PROFILE=1  each island that may split prints its
 *                               phases' cycles (tuning);
 *   SKYSIFT_GPU_FAULT=STEP      before STEP (clip, segment, label, measure)
 *                               a kernel traps, a real device fault
 *                               (tests of what callers do about one);
 *   SKYSIFT_GPU_MEMORY_LIMIT=S  the device memory one context may hold, in
 *                               bytes or with K, M or G (tests). */
#include "sky-gpu-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
env_is (const char *name, const char *value)
{
  const char *v = getenv (name);

  return v != NULL && strcmp (v, value) == 0;
}

void
sky_gpu_switches_read (SkyGpuSwitches *sw)
{
  const char *threads = getenv ("SKYSIFT_GPU_LOOP_THREADS");
  const char *fault = getenv ("SKYSIFT_GPU_FAULT");

  memset (sw, 0, sizeof *sw);
  sw->pdl_off = env_is ("SKYSIFT_GPU_PDL", "0");
  sw->full_coop_off = env_is ("SKYSIFT_GPU_FULL_COOP", "0");
  if (threads != NULL && (atoi (threads) == 256 || atoi (threads) == 512
                          || atoi (threads) == 1024))
    sw->loop_threads = atoi (threads);
  sw->full_clip = env_is ("SKYSIFT_GPU_FULL_CLIP", "1");
  sw->loop_profile = env_is ("SKYSIFT_GPU_LOOP_PROFILE", "1");
  sw->mode_threads = env_is ("SKYSIFT_GPU_MODE_THREADS", "32")    ? 32
                     : env_is ("SKYSIFT_GPU_MODE_THREADS", "128") ? 128
                     : env_is ("SKYSIFT_GPU_MODE_THREADS", "256") ? 256
                                                                  : 0;
  sw->measure_small_own = !env_is ("SKYSIFT_GPU_MEASURE_SMALL", "one");
  sw->core_queue = env_is ("SKYSIFT_GPU_CORE_WALK", "queue");
  sw->measure_threads = env_is ("SKYSIFT_GPU_MEASURE_THREADS", "256")    ? 256
                        : env_is ("SKYSIFT_GPU_MEASURE_THREADS", "512")  ? 512
                        : env_is ("SKYSIFT_GPU_MEASURE_THREADS", "1024") ? 1024
                                                                         : 0;
  sw->deblend_tree = env_is ("SKYSIFT_GPU_DEBLEND_TREE", "0")   ? 0
                     : env_is ("SKYSIFT_GPU_DEBLEND_TREE", "1") ? 1
                                                                : 2;
  sw->deblend_small_own = !env_is ("SKYSIFT_GPU_DEBLEND_SMALL", "one");
  sw->deblend_profile = env_is ("SKYSIFT_GPU_DEBLEND_PROFILE", "1");
  if (fault != NULL)
    snprintf (sw->fault, sizeof sw->fault, "%s", fault);
}

/* Unset, empty or unreadable: no cap but the device's own. */
size_t
sky_gpu_memory_limit (void)
{
  const char *v = getenv ("SKYSIFT_GPU_MEMORY_LIMIT");
  char *end = NULL;
  double bytes;

  if (v == NULL || *v == '\0')
    return 0;
  bytes = strtod (v, &end);
  switch (end != NULL ? *end : '\0')
    {
    case 'k': case 'K': bytes *= 1024.0; break;
    case 'm': case 'M': bytes *= 1048576.0; break;
    case 'g': case 'G': bytes *= 1073741824.0; break;
    default: break;
    }
  return bytes >= 1 ? (size_t) bytes : 0;
}
