/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The FITS loader's own reader for uncompressed planes (sky-fits-read.c). */
#ifndef SKY_FITS_PRIVATE_H
#define SKY_FITS_PRIVATE_H

#include "sky-core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where one uncompressed plane lies in its file and how its stored values
 * become pixels: the values cfitsio found in the header (BSCALE, BZERO,
 * BLANK) and the rule it applies when it reads the plane as float. */
typedef struct SkyFitsRawPlane {
  int64_t offset;       /* bytes from the start of the file to the first pixel */
  int64_t npixels;
  int bitpix;           /* 8, 16, 32, 64, -32 or -64; big-endian in the file */
  double scale, zero;   /* BSCALE, BZERO (1 and 0 when absent) */
  int check_blank;      /* integer data: pixels equal to blank become NaN */
  int64_t blank;        /* BLANK as the reader compares it, already narrowed */
} SkyFitsRawPlane;

/* Reads the plane into pixels (npixels floats) with pread in chunks across
 * nthreads threads (0: sky_default_threads), each chunk converted as soon
 * as it arrives: byte order, scaling and BLANK exactly as cfitsio's
 * fits_read_pixll to float does, then +-Inf made NaN as the loader does.
 * *nblank counts the non-finite pixels, *ninf those that were infinite.
 * Fails with SKY_ERR_IO, naming path, where the file cannot be read. */
int sky_fits_read_raw_plane (const char *path, const SkyFitsRawPlane *plane, int nthreads,
                             float *pixels, int64_t *nblank, int64_t *ninf);
/* The same, with each block handed to each_block once converted (see
 * sky_plane_file_read_each). */
int sky_fits_read_raw_plane_each (const char *path, const SkyFitsRawPlane *plane, int nthreads,
                                  float *pixels, int64_t *nblank, int64_t *ninf,
                                  SkyPixelBlockFunc each_block, void *user);

/* Reads count bytes at offset of fd, retrying short reads: 0, an errno,
 * or -1 where the file ends first. */
int sky_fits_pread (int fd, void *buf, size_t count, int64_t offset);

/* The whole plane of an open SkyPlaneFile as a raw reader sees it (the
 * device's loader, sky-gpu-load.cu, streams it to the GPU), and the path
 * it was opened with. */
const SkyFitsRawPlane *sky_plane_file_raw (const SkyPlaneFile *f);
const char *sky_plane_file_path (const SkyPlaneFile *f);

#ifdef __cplusplus
}
#endif

#endif
