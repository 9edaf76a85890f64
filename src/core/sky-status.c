/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Status codes and the per-thread message that says what went wrong. */
#include "sky-core.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[1024];

const char *
sky_status_string (int status)
{
  switch (status)
    {
    case SKY_OK: return "success";
    case SKY_ERR_IO: return "input/output error";
    case SKY_ERR_FORMAT: return "not a usable FITS file";
    case SKY_ERR_NO_IMAGE: return "no image data";
    case SKY_ERR_SIZE: return "impossible image size";
    case SKY_ERR_MEMORY: return "out of memory";
    case SKY_ERR_EMPTY: return "every pixel is blank";
    case SKY_ERR_ARGUMENT: return "invalid argument";
    case SKY_ERR_UNAVAILABLE: return "not available";
    case SKY_ERR_CANCELLED: return "cancelled";
    default: return "unknown error";
    }
}

const char *
sky_last_error (void)
{
  return last_error;
}

int
sky_fail (int status, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (last_error, sizeof last_error, fmt, ap);
  va_end (ap);
  return status;
}
