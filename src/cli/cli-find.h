/* SPDX-License-Identifier: GPL-3.0-or-later */
/* skysift-cli find: the local method's part (cli-find-local.c). */
#ifndef SKY_CLI_FIND_H
#define SKY_CLI_FIND_H

#include "cli.h"
#include "sky-core.h"
#include "sky-cpu.h"

/* The local method's options besides SkyParams. */
typedef struct {
  const char *bkg, *rms;  /* FITS maps replacing the computed ones, or NULL */
  const char *smooth;     /* matched filter: "beam" or a kernel spec, or NULL */
  int repeat;
} CliLocalArgs;

/* --deblend: "NTHRESH,MINCONT", or "0" for none. */
int cli_parse_deblend (const char *text, SkyParams *params);

/* "beam" (the header's BMAJ, BMIN, BPA) or any sky_kernel_parse spec. */
int cli_find_kernel (const SkyImage *img, const char *spec, SkyKernel *k);

/* What the local method's run takes besides the image: the maps given
 * with --bkg and --rms (NULL: computed) and the matched filter. */
typedef struct {
  float *background, *rms;
  SkyKernel filter;
  int has_filter;
} CliLocalInputs;

/* Loads the given maps and makes the filter. 0, or an exit status with the
 * error printed; clear with cli_local_inputs_clear either way. */
int cli_local_inputs (const CliLocalArgs *a, const SkyImage *img, CliLocalInputs *in);
void cli_local_inputs_clear (CliLocalInputs *in);

/* The summary lines of a local run. */
void cli_print_local (const CliLocalArgs *a, const SkyParams *params, const SkyResult *res);

/* The global method's warning, on stderr, where its threshold lies below
 * the clipped median or one source covers most of the image. */
void cli_warn_global (const SkyParams *params, const SkyImage *img, const SkyResult *res);

/* --memory-limit: "2G", "512M", "1.5G", or bytes. */
int cli_parse_size (const char *option, const char *text, int64_t *bytes);

/* The pixel source over an open plane file that the runs in bands read
 * (sky_cpu_clip_source's chunks included). */
void cli_plane_source (SkyPlaneFile *file, const SkyImage *img, SkyPixelSource *src);

/* The global method on the CPU within limit bytes (cli-find-tiled.c): where
 * the whole-image run would need more, the image is opened without its
 * pixels (img), run in bands into res and *tiled set; otherwise, or for a
 * compressed image, nothing is done and the caller loads it whole. 0, or
 * an exit status with the error printed. */
int cli_find_tiled (const char *image, const SkyLoadOptions *load, const SkyParams *params,
                    int64_t limit, SkyImage *img, SkyResult *res, int *tiled);

#endif
