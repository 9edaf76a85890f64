/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkySampClient: a SAMP standard-profile client over libsoup 3. */
#include "sky-samp-client.h"
#include "sky-samp-xmlrpc.h"
#include "sky-ui-error.h"
#include "sky-ui-signal.h"

#include <libsoup/soup.h>
#include <string.h>

/* The hub's answers come within milliseconds on the loopback; a hub that
 * takes this long is taken as gone. */
#define SAMP_CALL_TIMEOUT_S 10

struct _SkySampClient {
  GObject parent_instance;

  GVariant *metadata;
  char **subscriptions;
  SoupSession *session;
  SoupServer *server;       /* the callback, while registered */
  gboolean connecting;

  /* Set while registered */
  char *hub_url;
  char *private_key;
  char *self_id;
  char *callback_url;
};

enum { PROP_0, PROP_CONNECTED, N_PROPS };
enum { SIGNAL_MESSAGE, SIGNAL_DISCONNECTED, N_SIGNALS };
static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (SkySampClient, sky_samp_client, G_TYPE_OBJECT)

/* The MTypes the client answers without the app. */
static const char *const own_subscriptions[] = {
  "samp.app.ping", "samp.hub.event.shutdown", "samp.hub.disconnect", NULL
};

/* ------------------------------------------------------------ lockfile */

char *
sky_samp_lockfile_url (GError **error)
{
  const char *hub = g_getenv ("SAMP_HUB");
  g_autofree char *path = NULL;

  if (hub != NULL && *hub != '\0')
    {
      if (!g_str_has_prefix (hub, "std-lockurl:"))
        {
          g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_NO_HUB,
                       "SAMP_HUB is “%s”: the standard profile wants std-lockurl:URL", hub);
          return NULL;
        }
      return g_strdup (hub + strlen ("std-lockurl:"));
    }
  path = g_build_filename (g_get_home_dir (), ".samp", NULL);
  return g_filename_to_uri (path, NULL, error);
}

gboolean
sky_samp_lockfile_parse (const char *text, const char *where, char **secret, char **hub_url,
                         GError **error)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);

  *secret = *hub_url = NULL;
  for (int i = 0; lines[i]; i++)
    {
      char *line = g_strstrip (lines[i]);
      char *eq = strchr (line, '=');

      if (*line == '#' || eq == NULL)
        continue;
      *eq = '\0';
      if (g_str_equal (line, "samp.secret") && *secret == NULL)
        *secret = g_strdup (eq + 1);
      else if (g_str_equal (line, "samp.hub.xmlrpc.url") && *hub_url == NULL)
        *hub_url = g_strdup (eq + 1);
    }
  if (*secret != NULL && *hub_url != NULL)
    return TRUE;
  g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_NO_HUB,
               "The SAMP lockfile %s has no %s", where,
               *secret == NULL ? "samp.secret" : "samp.hub.xmlrpc.url");
  g_clear_pointer (secret, g_free);
  g_clear_pointer (hub_url, g_free);
  return FALSE;
}

/* ---------------------------------------------------------- hub calls */

typedef struct {
  char *method;
  gboolean transport_failed;   /* no answer at all: the hub is gone */
} CallData;

static void
call_data_free (CallData *call)
{
  g_free (call->method);
  g_free (call);
}

static void
on_call_answered (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GTask) task = data;
  CallData *call = g_task_get_task_data (task);
  SoupMessage *msg = soup_session_get_async_result_message (SOUP_SESSION (source), result);
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) body = soup_session_send_and_read_finish (SOUP_SESSION (source), result,
                                                               &error);
  GVariant *value;
  gsize length;
  const char *xml;

  if (body == NULL)
    {
      call->transport_failed = TRUE;
      g_task_return_new_error (task, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_HUB,
                               "The SAMP hub does not answer %s: %s", call->method,
                               error->message);
      return;
    }
  if (soup_message_get_status (msg) != SOUP_STATUS_OK)
    {
      g_task_return_new_error (task, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_HUB,
                               "The SAMP hub answered %s with HTTP %u %s", call->method,
                               soup_message_get_status (msg),
                               soup_message_get_reason_phrase (msg));
      return;
    }
  xml = g_bytes_get_data (body, &length);
  value = sky_xmlrpc_read_response (xml, length, &error);
  if (value == NULL)
    {
      g_prefix_error (&error, "%s: ", call->method);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  g_task_return_pointer (task, value, (GDestroyNotify) g_variant_unref);
}

/* One XML-RPC call of the hub at url; params is a tuple (floating taken). */
static void
hub_call_async (SkySampClient *self, const char *url, const char *method, GVariant *params,
                GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  CallData *call = g_new0 (CallData, 1);
  char *xml = sky_xmlrpc_write_call (method, params);
  gsize length = strlen (xml);
  g_autoptr (GBytes) body = g_bytes_new_take (xml, length);
  g_autoptr (SoupMessage) msg = soup_message_new ("POST", url);

  call->method = g_strdup (method);
  g_task_set_task_data (task, call, (GDestroyNotify) call_data_free);
  if (msg == NULL)
    {
      g_task_return_new_error (task, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_NO_HUB,
                               "The SAMP hub's URL “%s” is not an HTTP URL", url);
      return;
    }
  soup_message_set_request_body_from_bytes (msg, "text/xml", body);
  soup_session_send_and_read_async (self->session, msg, G_PRIORITY_DEFAULT, cancellable,
                                    on_call_answered, g_steal_pointer (&task));
}

static GVariant *
hub_call_finish (GAsyncResult *result, gboolean *transport_failed, GError **error)
{
  CallData *call = g_task_get_task_data (G_TASK (result));

  if (transport_failed)
    *transport_failed = call->transport_failed;
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ------------------------------------------------------ state changes */

static void
forget_registration (SkySampClient *self)
{
  gboolean was = self->private_key != NULL;

  if (self->server)
    {
      soup_server_disconnect (self->server);
      g_clear_object (&self->server);
    }
  g_clear_pointer (&self->hub_url, g_free);
  g_clear_pointer (&self->private_key, g_free);
  g_clear_pointer (&self->self_id, g_free);
  g_clear_pointer (&self->callback_url, g_free);
  if (was)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CONNECTED]);
}

typedef struct {
  SkySampClient *client;
  char *reason;
} LostHub;

static void
lost_hub_free (LostHub *lost)
{
  g_object_unref (lost->client);
  g_free (lost->reason);
  g_free (lost);
}

static gboolean
emit_disconnected_idle (gpointer data)
{
  LostHub *lost = data;

  if (lost->client->private_key == NULL)
    return G_SOURCE_REMOVE;   /* already said, or disconnected meanwhile */
  forget_registration (lost->client);
  g_signal_emit (lost->client, signals[SIGNAL_DISCONNECTED], 0, lost->reason);
  return G_SOURCE_REMOVE;
}

/* The hub has gone: said once, on the main loop after the request that
 * told us (the callback server is stopped there, not inside its handler). */
static void
lose_hub (SkySampClient *self, const char *reason)
{
  LostHub *lost;

  if (self->private_key == NULL)
    return;
  lost = g_new0 (LostHub, 1);
  lost->client = g_object_ref (self);
  lost->reason = g_strdup (reason);
  g_idle_add_full (G_PRIORITY_DEFAULT, emit_disconnected_idle, lost,
                   (GDestroyNotify) lost_hub_free);
}

/* --------------------------------------------------- callable client */

static void
on_reply_sent (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) value = hub_call_finish (result, NULL, &error);

  if (value == NULL)
    g_debug ("SAMP: samp.hub.reply: %s", error->message);
}

/* Parameter i of a call's "av", unwrapped. */
static GVariant *
param_at (GVariant *params, gsize i)
{
  g_autoptr (GVariant) boxed = g_variant_get_child_value (params, i);
  return g_variant_get_variant (boxed);
}

/* What the hub's call of this client does; NULL with error for a fault. */
static GVariant *
dispatch (SkySampClient *self, const char *method, GVariant *params, GError **error)
{
  gsize n = g_variant_n_children (params);
  g_autoptr (GVariant) key_s = n > 0 ? param_at (params, 0) : NULL;
  gboolean call = g_str_equal (method, "samp.client.receiveCall");
  g_autoptr (GVariant) message = NULL;
  const char *mtype, *sender;
  g_autoptr (GVariant) sender_v = NULL;
  g_autoptr (GVariant) mparams = NULL;

  if (key_s == NULL || !g_variant_is_of_type (key_s, G_VARIANT_TYPE_STRING)
      || self->private_key == NULL || !g_str_equal (g_variant_get_string (key_s, NULL),
                                                    self->private_key))
    {
      g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_PROTOCOL,
                   "%s: not this client's private key", method);
      return NULL;
    }
  if (g_str_equal (method, "samp.client.receiveResponse"))
    return g_variant_new_string ("");   /* the app sends notifications only */
  if (!(call && n == 4) && !(g_str_equal (method, "samp.client.receiveNotification") && n == 3))
    {
      g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_PROTOCOL,
                   "%s with %zu parameters is not a SAMP client method", method, n);
      return NULL;
    }
  sender_v = param_at (params, 1);
  message = param_at (params, n - 1);
  if (!g_variant_is_of_type (message, G_VARIANT_TYPE ("a{sv}")))
    {
      g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_PROTOCOL,
                   "%s: the message is not a map", method);
      return NULL;
    }
  mtype = sky_samp_map_string (message, "samp.mtype");
  mparams = g_variant_lookup_value (message, "samp.params", G_VARIANT_TYPE ("a{sv}"));
  if (mtype == NULL || !g_variant_is_of_type (sender_v, G_VARIANT_TYPE_STRING))
    {
      g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_PROTOCOL,
                   "%s: a message without samp.mtype", method);
      return NULL;
    }
  sender = g_variant_get_string (sender_v, NULL);
  if (mparams == NULL)
    mparams = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
  if (g_str_equal (mtype, "samp.hub.event.shutdown") || g_str_equal (mtype, "samp.hub.disconnect"))
    lose_hub (self, g_str_equal (mtype, "samp.hub.disconnect")
                    ? "The SAMP hub disconnected skysift" : "The SAMP hub shut down");
  else if (!g_str_equal (mtype, "samp.app.ping"))
    g_signal_emit (self, signals[SIGNAL_MESSAGE], 0, sender, mtype, mparams);
  if (call)
    {
      g_autoptr (GVariant) id = param_at (params, 2);
      GVariantDict response;

      g_variant_dict_init (&response, NULL);
      g_variant_dict_insert (&response, "samp.status", "s", "samp.ok");
      g_variant_dict_insert_value (&response, "samp.result",
                                   g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
      if (self->hub_url && g_variant_is_of_type (id, G_VARIANT_TYPE_STRING))
        hub_call_async (self, self->hub_url, "samp.hub.reply",
                        g_variant_new ("(s@s@a{sv})", self->private_key, id,
                                       g_variant_dict_end (&response)),
                        NULL, on_reply_sent, NULL);
      else
        g_variant_dict_clear (&response);
    }
  return g_variant_new_string ("");
}

static void
on_server_request (SoupServer *server, SoupServerMessage *msg, const char *path,
                   GHashTable *query, gpointer data)
{
  SkySampClient *self = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) params = NULL;
  g_autoptr (GBytes) body = NULL;
  g_autofree char *method = NULL, *reply = NULL;
  GVariant *result = NULL;
  gsize length;
  const char *xml;

  if (!g_str_equal (soup_server_message_get_method (msg), "POST"))
    {
      soup_server_message_set_status (msg, SOUP_STATUS_METHOD_NOT_ALLOWED, NULL);
      return;
    }
  body = soup_message_body_flatten (soup_server_message_get_request_body (msg));
  xml = g_bytes_get_data (body, &length);
  if (sky_xmlrpc_read_call (xml, length, &method, &params, &error))
    result = dispatch (self, method, params, &error);
  if (result != NULL)
    reply = sky_xmlrpc_write_response (result);
  else
    {
      g_debug ("SAMP: refused a call: %s", error->message);
      reply = sky_xmlrpc_write_fault (1, error->message);
    }
  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  soup_server_message_set_response (msg, "text/xml", SOUP_MEMORY_COPY, reply, strlen (reply));
}

/* ------------------------------------------------------------ connect */

typedef struct {
  char *hub_url;
  char *private_key;
  char *self_id;
  SoupServer *server;
  char *callback_url;
  int step;
} ConnectData;

static void
connect_data_free (ConnectData *c)
{
  g_free (c->hub_url);
  g_free (c->private_key);
  g_free (c->self_id);
  if (c->server)
    {
      soup_server_disconnect (c->server);
      g_object_unref (c->server);
    }
  g_free (c->callback_url);
  g_free (c);
}

static void connect_next (GTask *task);

/* Ends a connection attempt: with error (taken), failed; without, the
 * client is registered and says so. The caller keeps its reference. */
static void
connect_done (GTask *task, GError *error)
{
  SkySampClient *self = g_task_get_source_object (task);

  self->connecting = FALSE;
  if (error != NULL)
    g_task_return_error (task, error);
  else
    {
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CONNECTED]);
      g_task_return_boolean (task, TRUE);
    }
}

static void
on_connect_step (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GTask) task = data;
  ConnectData *c = g_task_get_task_data (task);
  GError *error = NULL;
  g_autoptr (GVariant) value = hub_call_finish (result, NULL, &error);

  if (value == NULL)
    {
      if (c->step == 0 && error->code == SKY_UI_ERROR_SAMP_HUB)
        {
          /* A lockfile left by a hub that is gone is the usual case. */
          g_autoptr (GError) cause = error;
          error = g_error_new (SKY_UI_ERROR, SKY_UI_ERROR_SAMP_NO_HUB,
                               "No SAMP hub answers at %s (%s): start one (TOPCAT, DS9, "
                               "samp_hub from astropy) or remove a stale lockfile", c->hub_url,
                               cause->message);
        }
      connect_done (task, error);
      return;
    }
  if (c->step == 0)
    {
      const char *key = sky_samp_map_string (value, "samp.private-key");
      const char *id = sky_samp_map_string (value, "samp.self-id");
      if (key == NULL || id == NULL)
        {
          connect_done (task, g_error_new (SKY_UI_ERROR, SKY_UI_ERROR_SAMP_PROTOCOL,
                                             "samp.hub.register gave no private key or id"));
          return;
        }
      c->private_key = g_strdup (key);
      c->self_id = g_strdup (id);
    }
  c->step++;
  connect_next (task);
}

static gboolean
start_server (SkySampClient *self, ConnectData *c, GError **error)
{
  GSList *uris;

  c->server = soup_server_new ("server-header", "skysift-samp ", NULL);
  soup_server_add_handler (c->server, "/xmlrpc", on_server_request, self, NULL);
  if (!soup_server_listen_local (c->server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, error))
    {
      g_prefix_error (error, "skysift cannot listen for the SAMP hub on the loopback: ");
      return FALSE;
    }
  uris = soup_server_get_uris (c->server);
  c->callback_url = g_strdup_printf ("http://127.0.0.1:%d/xmlrpc",
                                     uris ? g_uri_get_port (uris->data) : 0);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  return TRUE;
}

static GVariant *
subscriptions_map (SkySampClient *self)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sv}"));
  for (int i = 0; own_subscriptions[i]; i++)
    g_variant_builder_add (&b, "{sv}", own_subscriptions[i],
                           g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
  for (int i = 0; self->subscriptions && self->subscriptions[i]; i++)
    g_variant_builder_add (&b, "{sv}", self->subscriptions[i],
                           g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
  return g_variant_builder_end (&b);
}

/* register, then declareMetadata, setXmlrpcCallback, declareSubscriptions.
 * Each call holds its own reference to the task. */
static void
connect_next (GTask *task)
{
  SkySampClient *self = g_task_get_source_object (task);
  ConnectData *c = g_task_get_task_data (task);
  GCancellable *cancellable = g_task_get_cancellable (task);
  GError *error = NULL;

  switch (c->step)
    {
    case 1:
      hub_call_async (self, c->hub_url, "samp.hub.declareMetadata",
                      g_variant_new ("(s@a{sv})", c->private_key, self->metadata),
                      cancellable, on_connect_step, g_object_ref (task));
      return;
    case 2:
      if (!start_server (self, c, &error))
        {
          connect_done (task, error);
          return;
        }
      hub_call_async (self, c->hub_url, "samp.hub.setXmlrpcCallback",
                      g_variant_new ("(ss)", c->private_key, c->callback_url),
                      cancellable, on_connect_step, g_object_ref (task));
      return;
    case 3:
      /* Registered from here on: the hub may call back at once. */
      self->hub_url = g_steal_pointer (&c->hub_url);
      self->private_key = g_steal_pointer (&c->private_key);
      self->self_id = g_steal_pointer (&c->self_id);
      self->server = g_steal_pointer (&c->server);
      self->callback_url = g_steal_pointer (&c->callback_url);
      hub_call_async (self, self->hub_url, "samp.hub.declareSubscriptions",
                      g_variant_new ("(s@a{sv})", self->private_key, subscriptions_map (self)),
                      cancellable, on_connect_step, g_object_ref (task));
      return;
    default:
      connect_done (task, NULL);
    }
}

static void
on_lockfile_read (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GTask) task = data;
  SkySampClient *self = g_task_get_source_object (task);
  ConnectData *c = g_task_get_task_data (task);
  g_autofree char *text = NULL, *secret = NULL, *where = g_file_get_parse_name (G_FILE (source));
  g_autoptr (GError) cause = NULL;
  GError *error = NULL;
  gsize length;

  if (!g_file_load_contents_finish (G_FILE (source), result, &text, &length, NULL, &cause))
    {
      connect_done (task, g_error_new (SKY_UI_ERROR, SKY_UI_ERROR_SAMP_NO_HUB,
                                         "No SAMP hub is running: there is no lockfile at %s "
                                         "(%s). Start a hub first (TOPCAT, DS9, or samp_hub "
                                         "from astropy).", where, cause->message));
      return;
    }
  if (!sky_samp_lockfile_parse (text, where, &secret, &c->hub_url, &error))
    {
      connect_done (task, error);
      return;
    }
  hub_call_async (self, c->hub_url, "samp.hub.register", g_variant_new ("(s)", secret),
                  g_task_get_cancellable (task), on_connect_step, g_object_ref (task));
}

void
sky_samp_client_connect_async (SkySampClient *self, GCancellable *cancellable,
                               GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_autoptr (GFile) lockfile = NULL;
  g_autofree char *url = NULL;
  GError *error = NULL;

  g_task_set_source_tag (task, sky_samp_client_connect_async);
  if (self->private_key != NULL)
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  if (self->connecting)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_PENDING,
                               "skysift is already connecting to the SAMP hub");
      return;
    }
  g_task_set_task_data (task, g_new0 (ConnectData, 1), (GDestroyNotify) connect_data_free);
  url = sky_samp_lockfile_url (&error);
  if (url == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  if (!g_str_has_prefix (url, "file:"))
    {
      g_task_return_new_error (task, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_NO_HUB,
                               "The SAMP lockfile's URL %s is not a file: URL", url);
      return;
    }
  self->connecting = TRUE;
  lockfile = g_file_new_for_uri (url);
  g_file_load_contents_async (lockfile, cancellable, on_lockfile_read, g_steal_pointer (&task));
}

gboolean
sky_samp_client_connect_finish (SkySampClient *self, GAsyncResult *result, GError **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* --------------------------------------------------------- disconnect */

static void
on_unregistered (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GTask) task = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) value = hub_call_finish (result, NULL, &error);

  /* A hub that is gone has forgotten us already. */
  if (value == NULL)
    g_debug ("SAMP: samp.hub.unregister: %s", error->message);
  g_task_return_boolean (task, TRUE);
}

void
sky_samp_client_disconnect_async (SkySampClient *self, GAsyncReadyCallback callback,
                                  gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (self, NULL, callback, user_data);
  g_autofree char *url = g_strdup (self->hub_url);
  g_autofree char *key = g_strdup (self->private_key);

  if (key == NULL)
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  /* Disconnected at once: messages arriving meanwhile are refused. */
  forget_registration (self);
  hub_call_async (self, url, "samp.hub.unregister", g_variant_new ("(s)", key), NULL,
                  on_unregistered, g_steal_pointer (&task));
}

gboolean
sky_samp_client_disconnect_finish (SkySampClient *self, GAsyncResult *result, GError **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

void
sky_samp_client_unregister_now (SkySampClient *self, guint timeout_s)
{
  g_autofree char *xml = NULL;
  g_autoptr (SoupMessage) msg = NULL;
  g_autoptr (GBytes) body = NULL, answer = NULL;
  g_autoptr (GError) error = NULL;

  if (self->private_key == NULL)
    return;
  xml = sky_xmlrpc_write_call ("samp.hub.unregister", g_variant_new ("(s)", self->private_key));
  body = g_bytes_new (xml, strlen (xml));
  msg = soup_message_new ("POST", self->hub_url);
  if (msg != NULL)
    {
      soup_message_set_request_body_from_bytes (msg, "text/xml", body);
      soup_session_set_timeout (self->session, timeout_s);
      answer = soup_session_send_and_read (self->session, msg, NULL, &error);
      if (answer == NULL)
        g_debug ("SAMP: samp.hub.unregister: %s", error->message);
    }
  forget_registration (self);
}

/* ------------------------------------------------------------- notify */

static void
on_notified (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GTask) task = data;
  SkySampClient *self = g_task_get_source_object (task);
  GError *error = NULL;
  gboolean gone = FALSE;
  g_autoptr (GVariant) value = hub_call_finish (result, &gone, &error);

  if (value == NULL)
    {
      if (gone)
        lose_hub (self, error->message);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_int (task, g_variant_is_container (value) ? (gssize) g_variant_n_children (value)
                                                          : 0);
}

void
sky_samp_client_notify_all_async (SkySampClient *self, const char *mtype, GVariant *params,
                                  GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (self, NULL, callback, user_data);
  GVariantDict message;

  g_variant_ref_sink (params);
  if (self->private_key == NULL)
    {
      g_variant_unref (params);
      g_task_return_new_error (task, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_NO_HUB,
                               "skysift is not connected to a SAMP hub");
      return;
    }
  g_variant_dict_init (&message, NULL);
  g_variant_dict_insert (&message, "samp.mtype", "s", mtype);
  g_variant_dict_insert_value (&message, "samp.params", params);
  g_variant_unref (params);
  hub_call_async (self, self->hub_url, "samp.hub.notifyAll",
                  g_variant_new ("(s@a{sv})", self->private_key, g_variant_dict_end (&message)),
                  NULL, on_notified, g_steal_pointer (&task));
}

gint64
sky_samp_client_notify_all_finish (SkySampClient *self, GAsyncResult *result, GError **error)
{
  return g_task_propagate_int (G_TASK (result), error);
}

/* ------------------------------------------------------------ getters */

gboolean
sky_samp_client_is_connected (SkySampClient *self)
{
  return self->private_key != NULL;
}

const char *
sky_samp_client_get_id (SkySampClient *self)
{
  return self->self_id ? self->self_id : "";
}

const char *
sky_samp_client_get_hub_url (SkySampClient *self)
{
  return self->hub_url ? self->hub_url : "";
}

const char *
sky_samp_client_get_callback_url (SkySampClient *self)
{
  return self->callback_url ? self->callback_url : "";
}

/* -------------------------------------------------------------- class */

SkySampClient *
sky_samp_client_new (GVariant *metadata, const char *const *subscriptions)
{
  SkySampClient *self = g_object_new (SKY_TYPE_SAMP_CLIENT, NULL);

  self->metadata = g_variant_ref_sink (metadata);
  self->subscriptions = g_strdupv ((char **) subscriptions);
  return self;
}

static void
sky_samp_client_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  SkySampClient *self = SKY_SAMP_CLIENT (object);

  switch (id)
    {
    case PROP_CONNECTED:
      g_value_set_boolean (value, self->private_key != NULL);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
sky_samp_client_dispose (GObject *object)
{
  SkySampClient *self = SKY_SAMP_CLIENT (object);

  if (self->server)
    {
      soup_server_disconnect (self->server);
      g_clear_object (&self->server);
    }
  g_clear_object (&self->session);
  G_OBJECT_CLASS (sky_samp_client_parent_class)->dispose (object);
}

static void
sky_samp_client_finalize (GObject *object)
{
  SkySampClient *self = SKY_SAMP_CLIENT (object);

  g_clear_pointer (&self->metadata, g_variant_unref);
  g_strfreev (self->subscriptions);
  g_free (self->hub_url);
  g_free (self->private_key);
  g_free (self->self_id);
  g_free (self->callback_url);
  G_OBJECT_CLASS (sky_samp_client_parent_class)->finalize (object);
}

static void
sky_samp_client_class_init (SkySampClientClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = sky_samp_client_get_property;
  object_class->dispose = sky_samp_client_dispose;
  object_class->finalize = sky_samp_client_finalize;

  properties[PROP_CONNECTED] =
    g_param_spec_boolean ("connected", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  signals[SIGNAL_MESSAGE] =
    sky_ui_signal_new (klass, "message", 3, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_VARIANT);
  signals[SIGNAL_DISCONNECTED] = sky_ui_signal_new (klass, "disconnected", 1, G_TYPE_STRING);
}

static void
sky_samp_client_init (SkySampClient *self)
{
  g_autoptr (GProxyResolver) direct = g_simple_proxy_resolver_new (NULL, NULL);

  /* The hub is on the loopback: never through a proxy from the
   * environment. */
  self->session = soup_session_new_with_options ("proxy-resolver", direct,
                                                 "timeout", SAMP_CALL_TIMEOUT_S,
                                                 "user-agent", "skysift-samp ",
                                                 NULL);
}
