/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-fits-write-private.h: what the FITS writers (sky-fits-write.c,
 * sky-fits-write-map.c) share. */
#pragma once

#include <fitsio.h>
#include <stddef.h>

/* Ends a FITS file that cfitsio built in memory (fits_create_memfile on
 * *buffer and *size) with status its status so far: flushes and closes it,
 * and writes it to path through the atomic output, so that nothing is left
 * half-written. Frees *buffer on every path. SKY_OK, or SKY_ERR_IO with a
 * message naming path and cfitsio's reason. */
int sky_fits_memfile_write (fitsfile *f, void **buffer, size_t *size, int status,
                            const char *path);
