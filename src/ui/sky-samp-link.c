/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkySampLink: the app's SAMP actions and messages (sky-samp-link.h), over
 * SkySampClient. */
#include "sky-samp-link.h"
#include "sky-overlay.h"
#include "sky-samp-client.h"
#include "sky-samp-fetch.h"
#include "sky-samp-xmlrpc.h"
#include "sky-ui-error.h"
#include "sky-ui-json.h"
#include "sky-ui-task.h"
#include "sky-window.h"
#include "sky-window-script.h"

#include <glib/gstdio.h>
#include <math.h>
#include <unistd.h>

/* What the state keeps of the messages received: the last few. */
#define SAMP_RECEIVED_KEPT 8

struct _SkySampLink {
  GObject parent_instance;

  GtkApplication *app;       /* not a reference: the app owns the link */
  SkySampClient *client;
  char *tmp_dir;             /* the tables sent, made on the first */
  int ntables;
  int nfetched;

  char *image_url;           /* sent in this connection, else NULL */
  char *image_sent_path;     /* the image it was sent for */
  char *table_url, *table_id;
  SkyRun *table_run;         /* the run whose catalogue table_id is */
  gboolean table_waiting;    /* asked while the window was busy */
  gboolean table_sending;
  gint64 selected;           /* the selection last seen (label number, 0 none) */
  gint64 nsent, nreceived;
  GQueue received;           /* of char *: "sender mtype params" */
  char *last_error;
};

G_DEFINE_FINAL_TYPE (SkySampLink, sky_samp_link, G_TYPE_OBJECT)

static SkyWindow *
main_window (SkySampLink *self)
{
  for (GList *l = gtk_application_get_windows (self->app); l; l = l->next)
    if (SKY_IS_WINDOW (l->data))
      return l->data;
  return NULL;
}

/* ---------------------------------------------------------------- state */

static void
set_action_state (SkySampLink *self, const char *name, GVariant *state)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self->app), name);
  g_autoptr (GVariant) sunk = g_variant_ref_sink (state);
  g_autoptr (GVariant) old = g_action_get_state (action);

  if (old == NULL || !g_variant_equal (old, sunk))
    g_simple_action_set_state (G_SIMPLE_ACTION (action), sunk);
}

static void
put_key (GString *out, const char *key, const char *value)
{
  g_string_append_printf (out, ", \"%s\": ", key);
  sky_ui_json_string (out, value);
}

static void
update_state (SkySampLink *self)
{
  gboolean connected = sky_samp_client_is_connected (self->client);
  GString *out = g_string_new (NULL);

  g_string_append_printf (out, "{\"connected\": %s", connected ? "true" : "false");
  put_key (out, "client_id", sky_samp_client_get_id (self->client));
  put_key (out, "hub_url", sky_samp_client_get_hub_url (self->client));
  put_key (out, "callback_url", sky_samp_client_get_callback_url (self->client));
  put_key (out, "image_url", self->image_url);
  put_key (out, "table_url", self->table_url);
  put_key (out, "table_id", self->table_id);
  g_string_append_printf (out, ", \"table_rows\": %" G_GINT64_FORMAT,
                          self->table_run ? self->table_run->catalogue.n : (gint64) 0);
  g_string_append_printf (out, ", \"sent\": %" G_GINT64_FORMAT ", \"received\": %"
                          G_GINT64_FORMAT ", \"last_received\": [", self->nsent,
                          self->nreceived);
  for (GList *l = self->received.head; l; l = l->next)
    {
      if (l != self->received.head)
        g_string_append (out, ", ");
      sky_ui_json_string (out, l->data);
    }
  g_string_append (out, "]");
  put_key (out, "last_error", self->last_error);
  g_string_append (out, "}");
  set_action_state (self, "samp", g_variant_new_take_string (g_string_free (out, FALSE)));
  set_action_state (self, "samp-connect", g_variant_new_boolean (connected));
  set_action_state (self, "samp-send-image",
                    g_variant_new_string (self->image_url ? self->image_url : ""));
  set_action_state (self, "samp-send-table",
                    g_variant_new_string (self->table_url ? self->table_url : ""));
}

/* Said in a dialog where there is a window, and kept for the state. */
static void
report (SkySampLink *self, const char *primary, const char *detail)
{
  SkyWindow *window = main_window (self);

  g_free (self->last_error);
  self->last_error = g_strdup_printf ("%s: %s", primary, detail);
  if (window != NULL)
    sky_window_show_error (window, primary, detail);
  else
    g_message ("%s", self->last_error);
  update_state (self);
}

static void
forget_sent (SkySampLink *self)
{
  g_clear_pointer (&self->image_url, g_free);
  g_clear_pointer (&self->image_sent_path, g_free);
  g_clear_pointer (&self->table_url, g_free);
  g_clear_pointer (&self->table_id, g_free);
  g_clear_pointer (&self->table_run, sky_run_unref);
  self->table_waiting = FALSE;
}

/* ---------------------------------------------------------------- send */

typedef struct {
  SkySampLink *link;
  char *what;                /* for the message: "the image", "the table" */
} SendData;

static SendData *
send_data_new (SkySampLink *self, const char *what)
{
  SendData *send = g_new0 (SendData, 1);

  send->link = g_object_ref (self);
  send->what = g_strdup (what);
  return send;
}

static void
send_data_free (SendData *send)
{
  g_object_unref (send->link);
  g_free (send->what);
  g_free (send);
}

/* A notification that nobody answers for: its failure is said, a
 * success counted. */
static void
on_notified (GObject *source, GAsyncResult *result, gpointer data)
{
  SendData *send = data;
  g_autoptr (GError) error = NULL;
  gint64 n = sky_samp_client_notify_all_finish (SKY_SAMP_CLIENT (source), result, &error);

  if (n < 0 || error != NULL)
    {
      g_autofree char *primary = g_strdup_printf ("Could not send %s over SAMP", send->what);
      report (send->link, primary, error->message);
    }
  else
    {
      send->link->nsent++;
      g_debug ("SAMP: %s sent to %" G_GINT64_FORMAT " clients", send->what, n);
      update_state (send->link);
    }
  send_data_free (send);
}

static void
notify (SkySampLink *self, const char *mtype, GVariant *params, const char *what,
        GAsyncReadyCallback done)
{
  sky_samp_client_notify_all_async (self->client, mtype, params, done ? done : on_notified,
                                    send_data_new (self, what));
}

static GVariant *
string_map (const char *const *pairs)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sv}"));
  for (int i = 0; pairs[i] && pairs[i + 1]; i += 2)
    g_variant_builder_add (&b, "{sv}", pairs[i], g_variant_new_string (pairs[i + 1]));
  return g_variant_builder_end (&b);
}

/* image.load.fits of the image shown; FALSE (said) where there is none. */
static gboolean
send_image (SkySampLink *self, GAsyncReadyCallback done)
{
  SkyWindow *window = main_window (self);
  const char *path = window ? sky_window_get_image_path (window) : "";
  g_autofree char *url = NULL, *name = NULL;
  g_autoptr (GError) error = NULL;

  if (path == NULL || *path == '\0' || !sky_window_has_image (window))
    {
      report (self, "There is no image to send", "Open an image first.");
      return FALSE;
    }
  url = g_filename_to_uri (path, NULL, &error);
  if (url == NULL)
    {
      report (self, "Could not send the image over SAMP", error->message);
      return FALSE;
    }
  name = g_path_get_basename (path);
  g_free (self->image_url);
  self->image_url = g_strdup (url);
  g_free (self->image_sent_path);
  self->image_sent_path = g_strdup (path);
  notify (self, "image.load.fits",
          string_map ((const char *const[]) { "url", url, "image-id", url, "name", name, NULL }),
          "the image", done);
  update_state (self);
  return TRUE;
}

static void
on_table_notified (GObject *source, GAsyncResult *result, gpointer data)
{
  SendData *send = data;

  send->link->table_sending = FALSE;
  on_notified (source, result, data);
}

static void
on_table_written (GObject *source, GAsyncResult *result, gpointer data)
{
  SendData *send = data;
  SkySampLink *self = send->link;
  g_autoptr (GError) error = NULL;
  SkyRun *run = sky_ui_task_finish_pointer (result, sky_samp_link_new, &error);

  if (run == NULL)
    {
      self->table_sending = FALSE;
      report (self, "Could not write the catalogue to send", error->message);
    }
  else if (!sky_samp_client_is_connected (self->client))
    {
      self->table_sending = FALSE;
      sky_run_unref (run);
    }
  else
    {
      SkyWindow *window = main_window (self);
      const char *image = window ? sky_window_get_image_path (window) : "";
      g_autofree char *base = g_path_get_basename (image && *image ? image : "skysift");
      g_autofree char *name = g_strdup_printf ("skysift sources of %s", base);

      g_clear_pointer (&self->table_run, sky_run_unref);
      self->table_run = run;
      notify (self, "table.load.votable",
              string_map ((const char *const[]) { "url", self->table_url, "table-id",
                                                  self->table_id, "name", name, NULL }),
              "the table", on_table_notified);
      update_state (self);
    }
  send_data_free (send);
}

typedef struct {
  SkyRun *run;
  char *path;
} WriteInput;

static void
write_input_free (WriteInput *in)
{
  sky_run_unref (in->run);
  g_free (in->path);
  g_free (in);
}

static void
write_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  WriteInput *in = task_data;
  GError *error = NULL;

  if (sky_run_write_catalogue (in->run, in->path, &error))
    g_task_return_pointer (task, sky_run_ref (in->run), (GDestroyNotify) sky_run_unref);
  else
    g_task_return_error (task, error);
}

/* The catalogue shown, written where the table's URL says, then sent. */
static void
write_and_send_table (SkySampLink *self)
{
  SkyWindow *window = main_window (self);
  SkyRun *run = window ? sky_window_get_catalogue_run (window) : NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  WriteInput *in;

  self->table_sending = FALSE;
  if (run == NULL)
    {
      report (self, "There is no catalogue to send yet", "Run measure (or Run All) first.");
      return;
    }
  if (self->tmp_dir == NULL && (self->tmp_dir = g_dir_make_tmp ("skysift-samp-XXXXXX", &error))
                               == NULL)
    {
      report (self, "Could not write the catalogue to send", error->message);
      return;
    }
  self->ntables++;
  path = g_strdup_printf ("%s/skysift-catalogue-%d.xml", self->tmp_dir, self->ntables);
  g_free (self->table_url);
  self->table_url = g_filename_to_uri (path, NULL, NULL);
  g_free (self->table_id);
  self->table_id = g_strdup_printf ("skysift-%d-%d", (int) getpid (), self->ntables);
  in = g_new0 (WriteInput, 1);
  in->run = sky_run_ref (run);
  in->path = g_steal_pointer (&path);
  self->table_sending = TRUE;
  sky_ui_task_run (sky_samp_link_new, in, (GDestroyNotify) write_input_free, write_thread, NULL,
                   on_table_written, send_data_new (self, "the table"));
}

static void
on_image_before_table (GObject *source, GAsyncResult *result, gpointer data)
{
  SendData *send = data;
  SkySampLink *self = g_object_ref (send->link);
  gboolean sent_ok;
  g_autoptr (GError) error = NULL;

  /* Failed or not, the table goes next (TOPCAT needs no image), but only
   * once the hub has taken the image, so that DS9 gets them in order. */
  sent_ok = sky_samp_client_notify_all_finish (SKY_SAMP_CLIENT (source), result, &error) >= 0
            && error == NULL;
  if (sent_ok)
    self->nsent++;
  else
    g_debug ("SAMP: the image before the table: %s", error->message);
  send_data_free (send);
  if (sky_samp_client_is_connected (self->client))
    write_and_send_table (self);
  else
    self->table_sending = FALSE;
  g_object_unref (self);
}

static void
send_table (SkySampLink *self)
{
  SkyWindow *window = main_window (self);
  const char *image = window ? sky_window_get_image_path (window) : NULL;

  self->table_waiting = FALSE;
  if (window != NULL && sky_window_get_catalogue_run (window) != NULL && image
      && g_strcmp0 (image, self->image_sent_path) != 0)
    {
      self->table_sending = TRUE;
      if (send_image (self, on_image_before_table))
        return;
      self->table_sending = FALSE;
    }
  write_and_send_table (self);
}

/* ------------------------------------------------------------ selection */

/* Equatorial (ICRS) degrees of source id's centroid, where the image has
 * a celestial WCS that is equatorial or galactic. */
static gboolean
source_radec (SkyWindow *window, SkyRun *run, gint64 id, double *ra, double *dec)
{
  SkyImageData *image = sky_window_get_image (window);
  double lng, lat;

  if (image == NULL || image != run->image || image->wcs == NULL || id < 1
      || id > run->catalogue.n)
    return FALSE;
  if (sky_wcs_pix2world (image->wcs, run->catalogue.x[id - 1], run->catalogue.y[id - 1], &lng,
                         &lat) != SKY_OK)
    return FALSE;
  switch (sky_wcs_system (image->wcs))
    {
    case SKY_COORD_EQUATORIAL:
      *ra = lng;
      *dec = lat;
      return TRUE;
    case SKY_COORD_GALACTIC:
      sky_frame_convert (SKY_FRAME_GALACTIC, SKY_FRAME_EQUATORIAL, lng, lat, ra, dec);
      return TRUE;
    default:
      return FALSE;
    }
}

static void
selection_changed (SkySampLink *self, SkyWindow *window, gint64 id)
{
  SkyRun *run = sky_window_get_catalogue_run (window);
  double ra, dec;

  if (run == NULL || id < 1 || !sky_samp_client_is_connected (self->client))
    return;
  if (self->table_run == run && self->table_url != NULL)
    {
      g_autofree char *row = g_strdup_printf ("%" G_GINT64_FORMAT, id - 1);
      notify (self, "table.highlight.row",
              string_map ((const char *const[]) { "table-id", self->table_id, "url",
                                                  self->table_url, "row", row, NULL }),
              "the selected row", NULL);
    }
  if (source_radec (window, run, id, &ra, &dec))
    {
      char ra_text[G_ASCII_DTOSTR_BUF_SIZE], dec_text[G_ASCII_DTOSTR_BUF_SIZE];
      notify (self, "coord.pointAt.sky",
              string_map ((const char *const[]) {
                "ra", g_ascii_dtostr (ra_text, sizeof ra_text, ra),
                "dec", g_ascii_dtostr (dec_text, sizeof dec_text, dec), NULL }),
              "the selected source's position", NULL);
    }
}

void
sky_samp_link_window_changed (SkySampLink *self, GtkWindow *window)
{
  SkyWindow *sky = SKY_WINDOW (window);
  gint64 id = sky_window_get_selected_source (sky);

  if (id != self->selected)
    {
      self->selected = id;
      selection_changed (self, sky, id);
    }
  if (self->table_waiting && !sky_window_is_busy (sky)
      && sky_samp_client_is_connected (self->client))
    send_table (self);
}

/* Selects source id as a message asked, without sending it back. */
static void
select_from_hub (SkySampLink *self, SkyWindow *window, gint64 id)
{
  self->selected = id;
  sky_window_select_source (window, id);
}

/* ------------------------------------------------------------- receive */

/* Whether url names the table sent: TOPCAT gives back file:/tmp/... for
 * file:///tmp/..., so file URLs are compared as the paths they name. */
static gboolean
is_table_url (SkySampLink *self, const char *url)
{
  g_autofree char *path = NULL, *sent = NULL;

  if (url == NULL || self->table_url == NULL)
    return FALSE;
  if (g_str_equal (url, self->table_url))
    return TRUE;
  path = g_filename_from_uri (url, NULL, NULL);
  sent = g_filename_from_uri (self->table_url, NULL, NULL);
  return path != NULL && sent != NULL && g_str_equal (path, sent);
}

static void
on_highlight_row (SkySampLink *self, SkyWindow *window, GVariant *params)
{
  const char *table_id = sky_samp_map_string (params, "table-id");
  const char *url = sky_samp_map_string (params, "url");
  const char *row = sky_samp_map_string (params, "row");
  gint64 n;

  if (self->table_run == NULL
      || !(g_strcmp0 (table_id, self->table_id) == 0 || is_table_url (self, url)))
    return;   /* another application's table */
  if (row == NULL || !g_ascii_string_to_signed (row, 10, 0, self->table_run->catalogue.n - 1, &n,
                                                NULL))
    return;
  if (sky_window_get_catalogue_run (window) != self->table_run)
    {
      g_free (self->last_error);
      self->last_error = g_strdup ("table.highlight.row: the table highlighted is the "
                                   "catalogue of an earlier run; send the table again");
      return;
    }
  select_from_hub (self, window, n + 1);
}

static void
on_point_at_sky (SkySampLink *self, SkyWindow *window, GVariant *params)
{
  SkyImageData *image = sky_window_get_image (window);
  SkyRun *run = sky_window_get_catalogue_run (window);
  const char *ra_text = sky_samp_map_string (params, "ra");
  const char *dec_text = sky_samp_map_string (params, "dec");
  double ra = ra_text ? g_ascii_strtod (ra_text, NULL) : NAN;
  double dec = dec_text ? g_ascii_strtod (dec_text, NULL) : NAN;
  double x, y;

  if (image == NULL || image->wcs == NULL || !isfinite (ra) || !isfinite (dec)
      || sky_overlay_to_pixel (image->wcs, SKY_FRAME_EQUATORIAL, ra, dec, &x, &y) != SKY_OK
      || x < -0.5 || y < -0.5 || x > image->image.nx - 0.5 || y > image->image.ny - 0.5)
    return;   /* not on this image */
  sky_window_pan (window, x + 1, y + 1);
  if (run != NULL && run->labels != NULL && run->image == image)
    {
      gint64 ix = (gint64) floor (x + 0.5), iy = (gint64) floor (y + 0.5);
      gint32 label = run->labels[iy * image->image.nx + ix];
      if (label > 0)
        select_from_hub (self, window, label);
    }
}

/* What another application sent: an image to open, or a table to draw
 * over the image as an overlay (app.open, app.overlay). */
static void
load_file (SkySampLink *self, const char *mtype, const char *path)
{
  SkyWindow *window = main_window (self);

  if (window == NULL)
    return;
  if (g_str_equal (mtype, "image.load.fits"))
    sky_window_open (window, path, FALSE);
  else
    sky_window_add_overlay (window, path);
}

typedef struct {
  SkySampLink *link;
  char *mtype;
  char *path;
} Fetched;

static void
on_fetched (GObject *source, GAsyncResult *result, gpointer data)
{
  Fetched *fetched = data;
  g_autoptr (GError) error = NULL;

  if (sky_samp_fetch_finish (result, &error))
    load_file (fetched->link, fetched->mtype, fetched->path);
  else
    report (fetched->link, "Could not fetch what was sent over SAMP", error->message);
  g_object_unref (fetched->link);
  g_free (fetched->mtype);
  g_free (fetched->path);
  g_free (fetched);
}

/* TOPCAT and others serve what they send over HTTP: it is copied to the
 * temporary folder, then loaded. */
static void
fetch_and_load (SkySampLink *self, const char *mtype, const char *url, const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *base = g_path_get_basename (name && *name ? name : url);
  g_autofree char *file_name = NULL;
  Fetched *fetched;

  if (self->tmp_dir == NULL && (self->tmp_dir = g_dir_make_tmp ("skysift-samp-XXXXXX", &error))
                               == NULL)
    {
      report (self, "Could not fetch what was sent over SAMP", error->message);
      return;
    }
  g_strdelimit (base, "/\\:", '_');
  file_name = g_strdup_printf ("received-%d-%s", ++self->nfetched, base);
  fetched = g_new0 (Fetched, 1);
  fetched->link = g_object_ref (self);
  fetched->mtype = g_strdup (mtype);
  fetched->path = g_build_filename (self->tmp_dir, file_name, NULL);
  sky_samp_fetch_async (url, fetched->path, NULL, on_fetched, fetched);
}

/* image.load.fits opens the image; table.load.votable draws the table over
 * it as an overlay: a file: URL as it is, an http: one fetched first. */
static void
on_load (SkySampLink *self, const char *sender, const char *mtype, GVariant *params)
{
  const char *url = sky_samp_map_string (params, "url");
  g_autofree char *path = url ? g_filename_from_uri (url, NULL, NULL) : NULL;

  if (path != NULL)
    load_file (self, mtype, path);
  else if (url && (g_str_has_prefix (url, "http://") || g_str_has_prefix (url, "https://")))
    fetch_and_load (self, mtype, url, sky_samp_map_string (params, "name"));
  else
    {
      g_autofree char *primary = g_strdup_printf ("Could not load what %s sent over SAMP",
                                                  sender);
      g_autofree char *detail = g_strdup_printf ("%s: skysift loads file: and http: URLs, not "
                                                 "“%s”.", mtype, url ? url : "");
      report (self, primary, detail);
    }
}

static void
on_message (SkySampClient *client, const char *sender, const char *mtype, GVariant *params,
            SkySampLink *self)
{
  SkyWindow *window = main_window (self);
  g_autofree char *printed = g_variant_print (params, FALSE);

  self->nreceived++;
  g_queue_push_tail (&self->received, g_strdup_printf ("%s %s %s", sender, mtype, printed));
  while (g_queue_get_length (&self->received) > SAMP_RECEIVED_KEPT)
    g_free (g_queue_pop_head (&self->received));
  if (window != NULL && g_str_equal (mtype, "table.highlight.row"))
    on_highlight_row (self, window, params);
  else if (window != NULL && g_str_equal (mtype, "coord.pointAt.sky"))
    on_point_at_sky (self, window, params);
  else if (window != NULL && (g_str_equal (mtype, "image.load.fits")
                              || g_str_equal (mtype, "table.load.votable")))
    on_load (self, sender, mtype, params);
  update_state (self);
}

static void
on_disconnected (SkySampClient *client, const char *reason, SkySampLink *self)
{
  forget_sent (self);
  report (self, "skysift is no longer on the SAMP hub", reason);
}

static void
on_connected_changed (SkySampClient *client, GParamSpec *pspec, SkySampLink *self)
{
  update_state (self);
}

/* ------------------------------------------------------------- actions */

static void
on_connected (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (SkySampLink) self = data;
  g_autoptr (GError) error = NULL;

  if (!sky_samp_client_connect_finish (SKY_SAMP_CLIENT (source), result, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PENDING))
        report (self, "Could not connect to a SAMP hub", error->message);
      return;
    }
  g_clear_pointer (&self->last_error, g_free);
  update_state (self);
  if (self->table_waiting)
    {
      SkyWindow *window = main_window (self);
      if (window && !sky_window_is_busy (window))
        send_table (self);
    }
}

static void
on_disconnect_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (SkySampLink) self = data;

  sky_samp_client_disconnect_finish (SKY_SAMP_CLIENT (source), result, NULL);
  update_state (self);
}

static void
action_connect (GSimpleAction *action, GVariant *param, gpointer data)
{
  SkySampLink *self = data;
  gboolean connect = g_variant_get_boolean (param);

  if (connect)
    sky_samp_client_connect_async (self->client, NULL, on_connected, g_object_ref (self));
  else
    {
      forget_sent (self);
      sky_samp_client_disconnect_async (self->client, on_disconnect_done, g_object_ref (self));
    }
}

static gboolean
need_hub (SkySampLink *self)
{
  if (sky_samp_client_is_connected (self->client))
    return TRUE;
  report (self, "skysift is not connected to a SAMP hub",
          "Connect first (the menu's SAMP, Connected to the Hub), with a hub running.");
  return FALSE;
}

static void
action_send_image (GSimpleAction *action, GVariant *param, gpointer data)
{
  SkySampLink *self = data;

  if (need_hub (self))
    send_image (self, NULL);
}

static void
action_send_table (GSimpleAction *action, GVariant *param, gpointer data)
{
  SkySampLink *self = data;
  SkyWindow *window = main_window (self);

  if (!need_hub (self) || self->table_sending)
    return;
  if (window != NULL && sky_window_is_busy (window))
    {
      self->table_waiting = TRUE;   /* sent when the queue is done */
      return;
    }
  send_table (self);
}

static void
action_samp_state (GSimpleAction *action, GVariant *param, gpointer data)
{
  /* Nothing to do: the state is the answer. */
}

static const GActionEntry samp_actions[] = {
  { "samp-connect", action_connect, "b", "false", NULL },
  { "samp-send-image", action_send_image, NULL, "''", NULL },
  { "samp-send-table", action_send_table, NULL, "''", NULL },
  { "samp", action_samp_state, NULL, "'{}'", NULL },
};

/* --------------------------------------------------------------- class */

SkySampLink *
sky_samp_link_new (GtkApplication *app)
{
  SkySampLink *self = g_object_new (SKY_TYPE_SAMP_LINK, NULL);
  static const char *const subscriptions[] = {
    "table.highlight.row", "coord.pointAt.sky", "image.load.fits", "table.load.votable", NULL
  };
  GVariant *metadata = string_map ((const char *const[]) {
    "samp.name", "skysift",
    "samp.description.text", "Finds and measures the sources in radio images (kappa-sigma "
                             "clipping, segmentation, labelling, measurement) on the CPU and "
                             "the GPU",
    "samp.documentation.url", "https://github.com/skysift/skysift",
    "author.name", "The skysift authors",
    "skysift.version", SKYSIFT_VERSION,
    NULL });

  self->app = app;
  self->client = sky_samp_client_new (metadata, subscriptions);
  g_signal_connect_object (self->client, "message", G_CALLBACK (on_message), self, 0);
  g_signal_connect_object (self->client, "disconnected", G_CALLBACK (on_disconnected), self, 0);
  g_signal_connect_object (self->client, "notify::connected", G_CALLBACK (on_connected_changed),
                           self, 0);
  g_action_map_add_action_entries (G_ACTION_MAP (app), samp_actions, G_N_ELEMENTS (samp_actions),
                                   self);
  update_state (self);
  return self;
}

static void
remove_tables (SkySampLink *self)
{
  g_autoptr (GDir) dir = NULL;
  const char *name;

  if (self->tmp_dir == NULL)
    return;
  dir = g_dir_open (self->tmp_dir, 0, NULL);
  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *path = g_build_filename (self->tmp_dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (self->tmp_dir);
  g_clear_pointer (&self->tmp_dir, g_free);
}

void
sky_samp_link_close (SkySampLink *self)
{
  sky_samp_client_unregister_now (self->client, 2);
  forget_sent (self);
  remove_tables (self);
  g_object_unref (self);
}

static void
sky_samp_link_dispose (GObject *object)
{
  SkySampLink *self = SKY_SAMP_LINK (object);

  forget_sent (self);
  remove_tables (self);
  g_clear_object (&self->client);
  G_OBJECT_CLASS (sky_samp_link_parent_class)->dispose (object);
}

static void
sky_samp_link_finalize (GObject *object)
{
  SkySampLink *self = SKY_SAMP_LINK (object);

  g_queue_clear_full (&self->received, g_free);
  g_free (self->last_error);
  G_OBJECT_CLASS (sky_samp_link_parent_class)->finalize (object);
}

static void
sky_samp_link_class_init (SkySampLinkClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sky_samp_link_dispose;
  object_class->finalize = sky_samp_link_finalize;
}

static void
sky_samp_link_init (SkySampLink *self)
{
  g_queue_init (&self->received);
}
