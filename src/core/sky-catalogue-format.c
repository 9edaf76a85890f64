/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Which catalogue writer a file name asks for, for the app's export and
 * any caller that has a name rather than an option per format. */
#include "sky-core.h"

#include <string.h>
#include <strings.h>

static const struct {
  const char *extension;
  SkyCatalogueFormat format;
} extensions[] = {
  { "csv", SKY_CATALOGUE_CSV },       { "ecsv", SKY_CATALOGUE_ECSV },
  { "xml", SKY_CATALOGUE_VOTABLE },   { "vot", SKY_CATALOGUE_VOTABLE },
  { "votable", SKY_CATALOGUE_VOTABLE }, { "reg", SKY_CATALOGUE_REGIONS },
};

static int
lookup (const char *path, SkyCatalogueFormat *f)
{
  const char *slash = strrchr (path, '/');
  const char *dot = strrchr (slash != NULL ? slash + 1 : path, '.');

  if (dot == NULL)
    return 0;
  for (size_t i = 0; i < sizeof extensions / sizeof extensions[0]; i++)
    if (strcasecmp (dot + 1, extensions[i].extension) == 0)
      {
        *f = extensions[i].format;
        return 1;
      }
  return 0;
}

SkyCatalogueFormat
sky_catalogue_format_for_path (const char *path)
{
  SkyCatalogueFormat f = SKY_CATALOGUE_CSV;

  lookup (path, &f);
  return f;
}

int
sky_catalogue_format_known (const char *path)
{
  SkyCatalogueFormat f;

  return lookup (path, &f);
}

const char *
sky_catalogue_format_extension (SkyCatalogueFormat f)
{
  switch (f)
    {
    case SKY_CATALOGUE_ECSV: return "ecsv";
    case SKY_CATALOGUE_VOTABLE: return "xml";
    case SKY_CATALOGUE_REGIONS: return "reg";
    case SKY_CATALOGUE_CSV: default: return "csv";
    }
}

int
sky_export_write (const char *path, SkyCatalogueFormat f, const SkyExport *ex)
{
  switch (f)
    {
    case SKY_CATALOGUE_ECSV: return sky_export_ecsv (path, ex);
    case SKY_CATALOGUE_VOTABLE: return sky_export_votable (path, ex);
    case SKY_CATALOGUE_REGIONS: return sky_export_regions (path, ex);
    case SKY_CATALOGUE_CSV: default: return sky_export_csv (path, ex);
    }
}
