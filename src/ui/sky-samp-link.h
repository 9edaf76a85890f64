/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-samp-link.h: the app on a SAMP hub, beside DS9, TOPCAT, Aladin and
 * CARTA: its actions, what it sends, and what it does with what it is
 * sent.
 *
 * Actions it adds to the application (so to D-Bus, as the others):
 *   samp-connect (b)    true registers with the hub the standard profile
 *                       finds ($SAMP_HUB or ~/.samp), false unregisters;
 *                       state: connected (the menu's two radio items)
 *   samp-send-image     image.load.fits: the image shown, by file: URL;
 *                       state: the URL last sent ("")
 *   samp-send-table     table.load.votable: the catalogue shown, written
 *                       as skysift-cli find --votable writes it to a
 *                       temporary file; the image first where it was not
 *                       sent yet (DS9 gives a table sky columns only over
 *                       an image); waits for queued operations (open,
 *                       run) to end; state: the URL last sent ("")
 *   samp                no parameter; state: JSON (connected, client_id,
 *                       hub_url, callback_url, image_url, table_url,
 *                       table_id, sent, received, last_error)
 * Selecting a source (the table, the view, app.select-source) sends
 * table.highlight.row for the table sent, where it is the catalogue shown,
 * and coord.pointAt.sky with the source's RA and Dec; table.highlight.row
 * for that table selects its row's source, and coord.pointAt.sky centres
 * the view there and selects the source under it. image.load.fits from
 * another application opens the image, table.load.votable draws the table
 * over it as an overlay (file: URLs, and http: ones fetched first). Failures (no hub, a hub gone) are
 * said in an error dialog and last_error, never more. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SKY_TYPE_SAMP_LINK (sky_samp_link_get_type ())
G_DECLARE_FINAL_TYPE (SkySampLink, sky_samp_link, SKY, SAMP_LINK, GObject)

/* Adds the actions to app (which it does not hold). */
SkySampLink *sky_samp_link_new (GtkApplication *app);

/* The application's main window said its state changed: a new selection
 * is sent, a send that waited for the queue goes. */
void sky_samp_link_window_changed (SkySampLink *self, GtkWindow *window);

/* The app is ending: unregisters (a blocking call of at most a second or
 * two on the loopback: the main loop no longer turns), removes the
 * temporary tables at once (a callback still pending would never run),
 * and drops the caller's reference. For g_clear_pointer. */
void sky_samp_link_close (SkySampLink *self);

G_END_DECLS
