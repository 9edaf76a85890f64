/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-ui-error.h: the app's GError domain. Its first codes are the core's
 * statuses (SKY_ERR_*) one for one, so that a failure from the core keeps
 * its kind on the way to a dialog; the rest are the app's own.
 */
#pragma once

#include <glib.h>

#include "sky-core.h"

G_BEGIN_DECLS

#define SKY_UI_ERROR (sky_ui_error_quark ())
GQuark sky_ui_error_quark (void);

typedef enum {
  SKY_UI_ERROR_IO = SKY_ERR_IO,
  SKY_UI_ERROR_FORMAT = SKY_ERR_FORMAT,
  SKY_UI_ERROR_NO_IMAGE = SKY_ERR_NO_IMAGE,
  SKY_UI_ERROR_SIZE = SKY_ERR_SIZE,
  SKY_UI_ERROR_MEMORY = SKY_ERR_MEMORY,
  SKY_UI_ERROR_EMPTY = SKY_ERR_EMPTY,
  SKY_UI_ERROR_ARGUMENT = SKY_ERR_ARGUMENT,
  SKY_UI_ERROR_UNAVAILABLE = SKY_ERR_UNAVAILABLE,
  SKY_UI_ERROR_CANCELLED = SKY_ERR_CANCELLED,
  SKY_UI_ERROR_GL = 100,   /* OpenGL too old, or a shader that does not build */
  SKY_UI_ERROR_NOT_SHOWN,  /* a widget not on screen, or one that drew nothing */
  SKY_UI_ERROR_ENCODE,     /* an image that cannot be encoded (PNG) */
  SKY_UI_ERROR_FAILED,     /* a core status this enum does not know */
  SKY_UI_ERROR_SAMP_NO_HUB,    /* SAMP: no hub's lockfile, or one without its URL */
  SKY_UI_ERROR_SAMP_HUB,       /* SAMP: the hub refused a call or cannot be reached */
  SKY_UI_ERROR_SAMP_PROTOCOL,  /* SAMP: a message that is not SAMP's XML-RPC */
} SkyUiError;

/* The code for a core status (SKY_ERR_*); SKY_UI_ERROR_FAILED for one
 * out of the known range (SKY_OK included: it is not an error). */
SkyUiError sky_ui_error_from_status (int status);

/* A new error in SKY_UI_ERROR for a core status, with the core's message of
 * this thread (sky_last_error), which names the file and the reason. */
GError *sky_ui_error_new_from_status (int status);

G_END_DECLS
