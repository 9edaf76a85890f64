/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-samp-client.h: a client of a SAMP hub (IVOA Simple Application
 * Messaging Protocol 1.3, standard profile), GLib and libsoup 3, no
 * toolkit.
 *
 * The hub is found as the standard profile says: $SAMP_HUB
 * ("std-lockurl:URL", a file: URL) or else the lockfile ~/.samp, whose
 * samp.secret and samp.hub.xmlrpc.url it reads. Connecting registers with
 * the hub, declares the metadata, serves the client's XML-RPC callback on
 * the loopback (a SoupServer on 127.0.0.1, any free port) and declares the
 * subscriptions. Every call to the hub is asynchronous on the main
 * context, so the main loop never waits on the network; the one exception
 * is sky_samp_client_unregister_now, for an app that is ending. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define SKY_TYPE_SAMP_CLIENT (sky_samp_client_get_type ())
G_DECLARE_FINAL_TYPE (SkySampClient, sky_samp_client, SKY, SAMP_CLIENT, GObject)

/* metadata: the samp.name, samp.description.text... map ("a{sv}" of
 * strings; its floating reference is taken); subscriptions: the MTypes the
 * app wants besides those the client answers itself (samp.app.ping,
 * samp.hub.event.shutdown, samp.hub.disconnect). */
SkySampClient *sky_samp_client_new (GVariant *metadata, const char *const *subscriptions);

/* Where the hub's lockfile is by the standard profile: the URL of
 * $SAMP_HUB's std-lockurl:, or file:// for ~/.samp. NULL with error
 * (SKY_UI_ERROR_SAMP_NO_HUB) where SAMP_HUB names another profile. */
char *sky_samp_lockfile_url (GError **error);

/* Reads a lockfile's text: samp.secret and samp.hub.xmlrpc.url (copies).
 * FALSE with error (SKY_UI_ERROR_SAMP_NO_HUB, naming where) where either
 * is missing. */
gboolean sky_samp_lockfile_parse (const char *text, const char *where, char **secret,
                                  char **hub_url, GError **error);

/* Finds the hub and registers (above). Errors are in SKY_UI_ERROR: no
 * lockfile or no hub at its URL (SAMP_NO_HUB), a hub that refuses
 * (SAMP_HUB), a reply that is not SAMP (SAMP_PROTOCOL); each message says
 * where it looked or what answered. Connecting while connected does
 * nothing and succeeds. */
void sky_samp_client_connect_async (SkySampClient *self, GCancellable *cancellable,
                                    GAsyncReadyCallback callback, gpointer user_data);
gboolean sky_samp_client_connect_finish (SkySampClient *self, GAsyncResult *result,
                                         GError **error);

/* Unregisters and stops serving the callback. Where the hub is gone the
 * client is disconnected all the same (no error). */
void sky_samp_client_disconnect_async (SkySampClient *self, GAsyncReadyCallback callback,
                                       gpointer user_data);
gboolean sky_samp_client_disconnect_finish (SkySampClient *self, GAsyncResult *result,
                                            GError **error);
/* For an app that is ending (its main loop no longer turns): unregisters
 * with a blocking call of at most timeout_s seconds on the loopback. */
void sky_samp_client_unregister_now (SkySampClient *self, guint timeout_s);

/* samp.hub.notifyAll: the message (mtype and its params, "a{sv}" of
 * strings, floating reference taken) to every client subscribed to it; the
 * result is the number of recipients the hub names. */
void sky_samp_client_notify_all_async (SkySampClient *self, const char *mtype,
                                       GVariant *params, GAsyncReadyCallback callback,
                                       gpointer user_data);
gint64 sky_samp_client_notify_all_finish (SkySampClient *self, GAsyncResult *result,
                                          GError **error);

gboolean sky_samp_client_is_connected (SkySampClient *self);
/* The hub's name for this client (samp.self-id), "" when not connected. */
const char *sky_samp_client_get_id (SkySampClient *self);
/* The hub's XML-RPC URL and this client's callback URL, "" when not
 * connected. */
const char *sky_samp_client_get_hub_url (SkySampClient *self);
const char *sky_samp_client_get_callback_url (SkySampClient *self);

/* Signals:
 *   message (sender: s, mtype: s, params: a{sv}): a notification or a call
 *     from another client, for an MType subscribed to; calls are answered
 *     samp.ok after the handlers ran.
 *   disconnected (reason: s): the hub shut down, told this client to go,
 *     or stopped answering; the client is no longer connected.
 * Property "connected" (boolean, read-only) notifies on every change. */

G_END_DECLS
