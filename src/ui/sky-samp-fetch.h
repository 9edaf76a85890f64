/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-samp-fetch.h: what another SAMP application serves over HTTP (TOPCAT
 * serves the tables it sends from its own server), copied to a file
 * (GLib and libsoup 3, no toolkit). */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Streams url (http: or https:) into a new file at path, never holding
 * more than a buffer of it: an image may be large. Errors name the URL
 * (an HTTP status, a refused connection) or the file. */
void sky_samp_fetch_async (const char *url, const char *path, GCancellable *cancellable,
                           GAsyncReadyCallback callback, gpointer user_data);
gboolean sky_samp_fetch_finish (GAsyncResult *result, GError **error);

G_END_DECLS
