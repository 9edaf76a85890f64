/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-cube-axis.h: the world value of a cube's plane along its third axis
 * (frequency, velocity, wavelength...), read from the header with wcslib,
 * and written for a person in a unit of a handy size (GHz, km/s, µm). */
#pragma once

#include <glib.h>

#include "sky-core.h"

G_BEGIN_DECLS

typedef struct {
  char type[16];    /* the axis type, CTYPE's first part: FREQ, VRAD, WAVE... */
  double value;     /* the plane's world value, in unit */
  char unit[24];    /* the unit wcslib gives after wcsset (SI for spectral axes) */
  double shown;     /* value in shown_unit */
  char shown_unit[24];
  char text[96];    /* "FREQ 1.4204058 GHz" */
} SkyPlaneWorld;

/* The world value of plane (0-based) of img's cube, taken at the reference
 * pixel of the other axes; FALSE where the header has no third WCS axis
 * or wcslib refuses it (out->text then says so). */
gboolean sky_cube_plane_world (const SkyImage *img, gint64 plane, SkyPlaneWorld *out);

G_END_DECLS
