/* sky-source.h: one row of the source table, a view of one catalogue entry. */
#pragma once

#include <glib-object.h>

#include "sky-pipeline.h"

G_BEGIN_DECLS

#define SKY_TYPE_SOURCE (sky_source_get_type ())
G_DECLARE_FINAL_TYPE (SkySource, sky_source, SKY, SOURCE, GObject)

/* The source at catalogue index `index` of run (label index + 1). */
SkySource *sky_source_new (SkyRun *run, gint64 index);
gint64 sky_source_get_index (SkySource *self);

G_END_DECLS
