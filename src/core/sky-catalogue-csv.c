/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The catalogue as CSV: a header row, one row per source in label order,
 * empty fields where a value is missing. */
#include "sky-core.h"
#include "sky-export-private.h"
#include "sky-output-private.h"

#include <string.h>

int
sky_export_csv (const char *path, const SkyExport *ex)
{
  SkyColumn cols[SKY_MAX_COLUMNS];
  int ncols = sky_export_columns (ex, cols);
  SkyOutput out;
  int ret = sky_output_open (&out, path);

  if (ret != SKY_OK)
    return ret;
  sky_export_put_table (ex, cols, ncols, out.fp, ',', ",\"\r\n", 0);   /* RFC 4180 */
  return sky_output_close (&out);
}
