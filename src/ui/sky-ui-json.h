/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-ui-json.h: the app's state is JSON written into a GString, quoted
 * by the core's sky_put_quoted so that the app and the CLI escape alike. */
#pragma once

#include <glib.h>

/* Appends s as a JSON string; NULL is "". */
void sky_ui_json_string (GString *out, const char *s);

/* Appends v as a JSON number that reads back exactly ("%.17g"); JSON has
 * no NaN or infinity, so those are null. */
void sky_ui_json_number (GString *out, double v);
