/* SPDX-License-Identifier: GPL-3.0-or-later */
/* skysift-cli find on the GPU: runs, timing and the CPU/GPU comparison
 * table of --backend gpu and --backend both. Built only with CUDA. */
#ifndef SKY_CLI_GPU_H
#define SKY_CLI_GPU_H

#include "sky-gpu.h"

typedef struct CliGpuRun {
  SkyResult res;         /* the GPU's result; res.times are the best kernel times */
  SkyGpuTimes times;     /* best of the repeats, transfers included */
  size_t device_bytes;   /* device memory the context held */
  int pinned;            /* the upload read the image's own pages */
  int loaded;            /* the image was read to the device with the load */
  int failed_checks;     /* against the CPU's result, when compared */
  /* a run in bands of rows (cli_gpu_find_tiled): how it went */
  int64_t nbands, band_rows;
  double clip_ms;        /* the clip on the host, over reads of the file */
  double read_ms;        /* reading the bands on the host, beside the device's work */
  double merge_ms;       /* joining the bands' labels and adding up their sums */
  double bands_ms;       /* from the first band's read to the last band's sums at home */
  char compare[2048];    /* "agree" or the failed checks */
} CliGpuRun;

/* Runs the pipeline repeat times on the GPU (the image page-locked for the
 * uploads) and, when cpu is not NULL, once more with the label image and
 * compares that run with cpu. loaded: a context whose image
 * cli_gpu_load_direct put on the device (img has no pixels), or NULL for
 * a context of its own. 0, or CLI_EXIT_FAILURE with the error printed. */
int cli_gpu_find (SkyGpu *loaded, const SkyImage *img, const SkyParams *params, int repeat,
                  const SkyResult *cpu, CliGpuRun *run);

/* find --backend gpu's load: the plane of path read straight into a new
 * context's image on the device (sky_gpu_load_plane), img filled as
 * sky_image_load fills it but for the pixels. *gpu is made first (the
 * device's start is not the load's); *load_ms is the rest, the header
 * included. 1 where the plane cannot go that way (compressed, not a
 * regular file, smaller than CLI_GPU_DIRECT_MIN_BYTES, SKYSIFT_FITS_READER=cfitsio
 * or SKYSIFT_GPU_LOAD=host; SKYSIFT_GPU_LOAD=device takes any size), or
 * where the direct load fails (the usual load then says why, or the device
 * fails again and the CPU finishes): nothing is held and the caller loads
 * as usual; 0 when loaded. */
typedef struct CliGpuLoad {
  SkyGpuLoadTimes times;
  double prepare_ms;     /* the ring, made before the load (sky_gpu_load_prepare) */
} CliGpuLoad;

/* Files smaller than this load on the host and go up in one copy unless
 * SKYSIFT_GPU_LOAD=device. Measured on an H100 machine (16 cores,
 * bench/results/gpu-load-h100-2026-11-24.md): page-locking the ring runs
 * at about 1.8 GB/s, 2.5 ms for a 16 MiB file's ring and 40 ms for the
 * 72 MiB ring of a 268 MB one, which the faster load then only matches
 * (the command's wall time within 10 ms either way up to 537 MB), while a
 * 4.3 GB file's command takes half the time (0.40 s against 0.79 s) and
 * its process a twentieth of the memory. */
#define CLI_GPU_DIRECT_MIN_BYTES ((long long) 1 << 30)

int cli_gpu_load_direct (const char *path, const SkyLoadOptions *opts, int nthreads,
                         SkyGpu **gpu, SkyImage *img, double *load_ms, CliGpuLoad *t);

/* find --backend gpu on an image whose run does not fit in the device's
 * memory (its free memory, and limit bytes where limit is not 0: the
 * --gpu-memory-limit), or of more pixels than a whole-image run takes:
 * the plane stays in its file (SkyPlaneFile) and runs in bands of rows,
 * with the whole-image run's catalogue (docs/design.md, "A field larger
 * than the device's memory"). img gets the header as sky_plane_file_open
 * fills it, run the result, and *tiled is set; where the whole-image run
 * fits, the image is compressed, or the device's free memory holds no
 * band of one row, nothing is done (the usual path runs, or fails and the
 * CPU finishes). *load_ms: the header's read. 0, or an exit status with
 * the error printed (a limit that holds no band of one row says so). */
int cli_gpu_find_tiled (const char *path, const SkyLoadOptions *opts, const SkyParams *params,
                        int64_t limit, SkyImage *img, CliGpuRun *run, int *tiled,
                        double *load_ms);

/* The tiled run's line of figures. */
void cli_gpu_print_tiled (const CliGpuRun *run);

/* One line of GPU times for --backend gpu. */
void cli_gpu_print_times (const CliGpuRun *run, const SkyImage *img, int repeat);

/* The --backend both table: each step on the CPU and the GPU, speedups,
 * and whether the results agree. */
void cli_gpu_print_table (const CliGpuRun *run, const SkyResult *cpu, const SkyImage *img,
                          int repeat);

void cli_gpu_clear (CliGpuRun *run);

#endif
