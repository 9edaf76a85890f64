/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The catalogue as CSV: a header row, one row per source in label order,
 * NaN where a number is missing and an empty field where a text is. */
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
  /* RFC 4180 quoting. A missing float is NaN, not an empty field: CSV has
   * no types, and a column of empty fields (int_flux without a beam) is
   * read back as integers or text by astropy and STILTS; NaN reads as a
   * float in both, in pandas and in spreadsheets. Text columns stay empty. */
  sky_export_put_table (ex, cols, ncols, out.fp, ',', ",\"\r\n", 0, "NaN");
  return sky_output_close (&out);
}
