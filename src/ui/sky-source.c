/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkySource: the catalogue's numbers as properties, for sorting by
 * expression and for the table's cells. */
#include "sky-source.h"

#include <string.h>

#include <math.h>

struct _SkySource {
  GObject parent_instance;
  gint64 index;
  double x, y, peak, sum;
  gint64 npix;
  double int_flux, snr, local_rms;  /* NaN where unknown */
  double lng, lat;          /* degrees, NaN without a sky position */
  gboolean equatorial;
};

G_DEFINE_FINAL_TYPE (SkySource, sky_source, G_TYPE_OBJECT)

enum { PROP_0, PROP_ID, PROP_X, PROP_Y, PROP_PEAK, PROP_SUM, PROP_NPIX, PROP_LNG, PROP_LAT,
       PROP_INT_FLUX, PROP_SNR, PROP_LOCAL_RMS, N_PROPS };
static GParamSpec *properties[N_PROPS];

SkySource *
sky_source_new (const SkySourceRows *rows, gint64 index)
{
  SkySource *self;

  g_return_val_if_fail (index >= 0 && index < rows->n, NULL);
  self = g_object_new (SKY_TYPE_SOURCE, NULL);
  self->index = index;
  self->x = sky_source_rows_value (rows, index, SKY_SOURCE_KEY_X);
  self->y = sky_source_rows_value (rows, index, SKY_SOURCE_KEY_Y);
  self->peak = sky_source_rows_value (rows, index, SKY_SOURCE_KEY_PEAK);
  self->sum = sky_source_rows_value (rows, index, SKY_SOURCE_KEY_SUM);
  self->npix = rows->run->catalogue.npix[index];
  self->lng = sky_source_rows_value (rows, index, SKY_SOURCE_KEY_LNG);
  self->lat = sky_source_rows_value (rows, index, SKY_SOURCE_KEY_LAT);
  self->equatorial = rows->export.wcs != NULL
                     && sky_wcs_system (rows->export.wcs) == SKY_COORD_EQUATORIAL;
  self->int_flux = sky_source_rows_value (rows, index, SKY_SOURCE_KEY_INT_FLUX);
  self->local_rms = sky_source_rows_value (rows, index, SKY_SOURCE_KEY_LOCAL_RMS);
  self->snr = sky_source_rows_value (rows, index, SKY_SOURCE_KEY_SNR);
  return self;
}

double
sky_source_get_value (SkySource *self, SkySourceKey key)
{
  switch (key)
    {
    case SKY_SOURCE_KEY_ID:
      return (double) (self->index + 1);
    case SKY_SOURCE_KEY_X:
      return self->x;
    case SKY_SOURCE_KEY_Y:
      return self->y;
    case SKY_SOURCE_KEY_PEAK:
      return self->peak;
    case SKY_SOURCE_KEY_SUM:
      return self->sum;
    case SKY_SOURCE_KEY_NPIX:
      return (double) self->npix;
    case SKY_SOURCE_KEY_LNG:
      return self->lng;
    case SKY_SOURCE_KEY_LAT:
      return self->lat;
    case SKY_SOURCE_KEY_INT_FLUX:
      return self->int_flux;
    case SKY_SOURCE_KEY_SNR:
      return self->snr;
    case SKY_SOURCE_KEY_LOCAL_RMS:
      return self->local_rms;
    default:
      g_return_val_if_reached (NAN);
    }
}

void
sky_source_format_lng (SkySource *self, char *buf, gsize size)
{
  if (isnan (self->lng))
    g_strlcpy (buf, "", size);
  else if (self->equatorial && size >= SKY_SEXAGESIMAL_SIZE)
    sky_format_ra (self->lng, buf, size);
  else
    g_snprintf (buf, size, "%.5f", self->lng);
}

void
sky_source_format_lat (SkySource *self, char *buf, gsize size)
{
  if (isnan (self->lat))
    g_strlcpy (buf, "", size);
  else if (self->equatorial && size >= SKY_SEXAGESIMAL_SIZE)
    sky_format_dec (self->lat, buf, size);
  else
    g_snprintf (buf, size, "%+.5f", self->lat);
}

void
sky_source_swap (SkySource *a, SkySource *b)
{
  SkySource held;
  gsize offset = G_STRUCT_OFFSET (SkySource, index);

  g_return_if_fail (SKY_IS_SOURCE (a) && SKY_IS_SOURCE (b));
  memcpy ((char *) &held + offset, (char *) a + offset, sizeof held - offset);
  memcpy ((char *) a + offset, (char *) b + offset, sizeof held - offset);
  memcpy ((char *) b + offset, (char *) &held + offset, sizeof held - offset);
}

gint64
sky_source_get_index (SkySource *self)
{
  return self->index;
}

static void
sky_source_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SkySource *self = SKY_SOURCE (object);

  switch (prop_id)
    {
    case PROP_ID:
      g_value_set_int64 (value, self->index + 1);
      break;
    case PROP_X:
      g_value_set_double (value, self->x);
      break;
    case PROP_Y:
      g_value_set_double (value, self->y);
      break;
    case PROP_PEAK:
      g_value_set_double (value, self->peak);
      break;
    case PROP_SUM:
      g_value_set_double (value, self->sum);
      break;
    case PROP_NPIX:
      g_value_set_int64 (value, self->npix);
      break;
    case PROP_LNG:
      g_value_set_double (value, self->lng);
      break;
    case PROP_LAT:
      g_value_set_double (value, self->lat);
      break;
    case PROP_INT_FLUX:
      g_value_set_double (value, self->int_flux);
      break;
    case PROP_SNR:
      g_value_set_double (value, self->snr);
      break;
    case PROP_LOCAL_RMS:
      g_value_set_double (value, self->local_rms);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sky_source_class_init (SkySourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->get_property = sky_source_get_property;

  properties[PROP_ID] = g_param_spec_int64 ("id", NULL, NULL, 0, G_MAXINT64, 0, flags);
  properties[PROP_X] = g_param_spec_double ("x", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, flags);
  properties[PROP_Y] = g_param_spec_double ("y", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, flags);
  properties[PROP_PEAK] =
    g_param_spec_double ("peak", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, flags);
  properties[PROP_SUM] = g_param_spec_double ("sum", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, flags);
  properties[PROP_NPIX] = g_param_spec_int64 ("npix", NULL, NULL, 0, G_MAXINT64, 0, flags);
  /* Degrees in the WCS's own system (RA/Dec, or galactic...), NaN without. */
  properties[PROP_LNG] = g_param_spec_double ("lng", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, flags);
  properties[PROP_LAT] = g_param_spec_double ("lat", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, flags);
  /* As the catalogue's columns of those names; NaN where unknown. */
  properties[PROP_INT_FLUX] =
    g_param_spec_double ("int-flux", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, flags);
  properties[PROP_SNR] = g_param_spec_double ("snr", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, flags);
  properties[PROP_LOCAL_RMS] =
    g_param_spec_double ("local-rms", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, flags);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
sky_source_init (SkySource *self)
{
}

char *
sky_source_count_text (gint64 n)
{
  return g_strdup_printf ("%" G_GINT64_FORMAT " %s", n, n == 1 ? "source" : "sources");
}
