/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-output-private.h: atomic output files for the writers of src/core.
 *
 * A regular file is written beside its final name under a temporary one,
 * flushed, synced and renamed into place, so a reader never sees half a
 * file and a failure leaves whatever was there before. Special files (a
 * terminal, /dev/stdout, a pipe) are written in place. Not installed: only
 * the writers in this folder use it.
 */
#ifndef SKY_OUTPUT_PRIVATE_H
#define SKY_OUTPUT_PRIVATE_H

#include <stdio.h>

typedef struct SkyOutput {
  const char *path;     /* the final name, borrowed */
  char *tmp_path;       /* NULL when writing in place */
  FILE *fp;             /* write here between open and close (NULL: by name) */
} SkyOutput;

/* Opens the temporary beside path (or path itself when it is not a regular
 * file). On failure nothing is left behind and sky_last_error() names path. */
int sky_output_open (SkyOutput *out, const char *path);

/* As sky_output_open, for a library that writes a file by name (cfitsio):
 * out->tmp_path names the temporary, made empty with the final mode, and
 * there is no stream (out->fp NULL); sky_output_close syncs and renames
 * it. path must be a regular file or not exist yet. */
int sky_output_open_named (SkyOutput *out, const char *path);

/* Flushes, checks every write, syncs and renames into place. On failure the
 * temporary is removed, the old file (if any) stays, and the error names
 * path. Always closes the stream. */
int sky_output_close (SkyOutput *out);

/* Gives up: closes the stream and removes the temporary. For a writer that
 * finds a problem half way; returns status unchanged. */
int sky_output_abort (SkyOutput *out, int status);

#endif /* SKY_OUTPUT_PRIVATE_H */
