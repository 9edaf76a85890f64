/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SAMP's pieces that need no hub: XML-RPC written and read (as Python's
 * xmlrpc, JSAMP and DS9 write it), faults, bad input, the lockfile and
 * where the standard profile looks for it. The app on a real hub is
 * test-ui-samp.py. */
#include <glib/gstdio.h>
#include <libsoup/soup.h>
#include <string.h>

#include "sky-samp-client.h"
#include "sky-samp-fetch.h"
#include "sky-samp-xmlrpc.h"
#include "sky-ui-error.h"

static char *
printed (GVariant *v)
{
  return g_variant_print (v, TRUE);
}

static void
test_round_trip (void)
{
  g_autoptr (GVariant) message = NULL, params = NULL, back = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *xml = NULL, *method = NULL, *want = NULL, *got = NULL;
  GVariantBuilder inner, map;

  g_variant_builder_init (&inner, G_VARIANT_TYPE ("a{sv}"));
  g_variant_builder_add (&inner, "{sv}", "url", g_variant_new_string ("file:///tmp/a&b<c>.xml"));
  g_variant_builder_add (&inner, "{sv}", "row", g_variant_new_string ("41"));
  g_variant_builder_init (&map, G_VARIANT_TYPE ("a{sv}"));
  g_variant_builder_add (&map, "{sv}", "samp.mtype", g_variant_new_string ("table.highlight.row"));
  g_variant_builder_add (&map, "{sv}", "samp.params", g_variant_builder_end (&inner));
  message = g_variant_ref_sink (g_variant_builder_end (&map));
  xml = sky_xmlrpc_write_call ("samp.hub.notifyAll",
                               g_variant_new ("(s@a{sv})", "key \"1\" 'x'", message));
  g_assert_nonnull (strstr (xml, "<methodName>samp.hub.notifyAll</methodName>"));
  g_assert_nonnull (strstr (xml, "a&amp;b&lt;c&gt;.xml"));
  g_assert_true (sky_xmlrpc_read_call (xml, strlen (xml), &method, &params, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (method, ==, "samp.hub.notifyAll");
  g_assert_cmpuint (g_variant_n_children (params), ==, 2);
  {
    g_autoptr (GVariant) key = g_variant_get_child_value (params, 0);
    g_autoptr (GVariant) key_s = g_variant_get_variant (key);
    g_autoptr (GVariant) msg = g_variant_get_child_value (params, 1);
    g_autoptr (GVariant) msg_map = g_variant_get_variant (msg);
    g_autoptr (GVariant) p = g_variant_lookup_value (msg_map, "samp.params", NULL);

    g_assert_cmpstr (g_variant_get_string (key_s, NULL), ==, "key \"1\" 'x'");
    g_assert_cmpstr (sky_samp_map_string (msg_map, "samp.mtype"), ==, "table.highlight.row");
    g_assert_cmpstr (sky_samp_map_string (p, "url"), ==, "file:///tmp/a&b<c>.xml");
    g_assert_cmpstr (sky_samp_map_string (p, "row"), ==, "41");
    g_assert_null (sky_samp_map_string (p, "missing"));
    want = printed (message);
    got = printed (msg_map);
    g_assert_cmpstr (got, ==, want);
  }
}

/* A call as Python's xmlrpc.client writes it (astropy's hub), with the
 * types SAMP does not use, whitespace between elements and a bare value. */
static void
test_read_python_call (void)
{
  static const char xml[] =
    "<?xml version='1.0'?>\n<methodCall>\n<methodName>samp.client.receiveCall</methodName>\n"
    "<params>\n<param>\n<value><string>k</string></value>\n</param>\n"
    "<param>\n<value>hub</value>\n</param>\n"
    "<param>\n<value><i4>-12</i4></value>\n</param>\n"
    "<param>\n<value><struct>\n<member>\n<name>samp.mtype</name>\n"
    "<value><string>coord.pointAt.sky</string></value>\n</member>\n"
    "<member>\n<name>list</name>\n<value><array><data>\n<value><boolean>1</boolean></value>\n"
    "<value><double>2.5</double></value>\n<value><nil/></value>\n"
    "<value>  spaced  </value>\n</data></array></value>\n</member>\n"
    "</struct></value>\n</param>\n</params>\n</methodCall>\n";
  g_autoptr (GVariant) params = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *method = NULL, *text = NULL;

  g_assert_true (sky_xmlrpc_read_call (xml, strlen (xml), &method, &params, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (method, ==, "samp.client.receiveCall");
  text = printed (params);
  g_assert_cmpstr (text, ==, "[<'k'>, <'hub'>, <int64 -12>, <{'samp.mtype': <'coord.pointAt.sky'>, "
                             "'list': <[<true>, <2.5>, <''>, <'  spaced  '>]>}>]");
}

static void
test_response_and_fault (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *ok = sky_xmlrpc_write_response (g_variant_new_string (""));
  g_autofree char *fault = sky_xmlrpc_write_fault (1, "no such <client>");
  g_autoptr (GVariant) value = sky_xmlrpc_read_response (ok, strlen (ok), &error);
  GVariant *none;

  g_assert_no_error (error);
  g_assert_cmpstr (g_variant_get_string (value, NULL), ==, "");
  none = sky_xmlrpc_read_response (fault, strlen (fault), &error);
  g_assert_null (none);
  g_assert_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_HUB);
  g_assert_cmpstr (error->message, ==, "no such <client>");
}

static void
test_bad_input (void)
{
  static const char *const bad[] = {
    "",
    "not xml at all",
    "<methodResponse><params><param><value><int>x1</int></value></param></params>"
      "</methodResponse>",
    "<methodResponse><params><param><value><base64>AA==</base64></value></param></params>"
      "</methodResponse>",
    "<methodResponse><params><param><value><struct><member><value>v</value></member>"
      "</struct></value></param></params></methodResponse>",
    "<methodCall><params/></methodCall>",
    "<other/>",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GVariant) params = NULL;
      g_autofree char *method = NULL;
      GVariant *value = sky_xmlrpc_read_response (bad[i], strlen (bad[i]), &error);

      g_assert_null (value);
      g_assert_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_PROTOCOL);
      g_clear_error (&error);
      g_assert_false (sky_xmlrpc_read_call (bad[i], strlen (bad[i]), &method, &params, &error));
      g_assert_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_PROTOCOL);
      g_assert_null (method);
      g_assert_null (params);
    }
}

/* An external entity is neither fetched nor expanded. */
static void
test_no_entities (void)
{
  static const char xml[] =
    "<?xml version='1.0'?><!DOCTYPE m [<!ENTITY e SYSTEM \"file:///etc/hostname\">]>"
    "<methodResponse><params><param><value><string>[&e;]</string></value></param></params>"
    "</methodResponse>";
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) value = sky_xmlrpc_read_response (xml, strlen (xml), &error);

  g_assert_no_error (error);
  g_assert_cmpstr (g_variant_get_string (value, NULL), ==, "[]");
}

static void
test_lockfile (void)
{
  static const char text[] =
    "# SAMP Standard Profile lockfile written 2026-11-24T08:00:00\n"
    "# Note contact info may be stale\n"
    "samp.secret=abc=def\n"
    "samp.hub.xmlrpc.url=http://127.0.0.1:41377/xmlrpc\n"
    "samp.profile.version=1.3\n";
  g_autofree char *secret = NULL, *url = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_true (sky_samp_lockfile_parse (text, "/x/.samp", &secret, &url, &error));
  g_assert_cmpstr (secret, ==, "abc=def");
  g_assert_cmpstr (url, ==, "http://127.0.0.1:41377/xmlrpc");
  g_clear_pointer (&secret, g_free);
  g_clear_pointer (&url, g_free);
  g_assert_false (sky_samp_lockfile_parse ("samp.hub.xmlrpc.url=http://h/\n", "/x/.samp",
                                           &secret, &url, &error));
  g_assert_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_NO_HUB);
  g_assert_nonnull (strstr (error->message, "/x/.samp"));
  g_assert_nonnull (strstr (error->message, "samp.secret"));
  g_assert_null (secret);
  g_assert_null (url);
}

static void
test_lockfile_url (void)
{
  g_autofree char *home = g_strdup (g_getenv ("HOME"));
  g_autofree char *url = NULL;
  g_autoptr (GError) error = NULL;

  g_setenv ("SAMP_HUB", "std-lockurl:file:///tmp/hub/lock", TRUE);
  url = sky_samp_lockfile_url (&error);
  g_assert_cmpstr (url, ==, "file:///tmp/hub/lock");
  g_clear_pointer (&url, g_free);
  g_setenv ("SAMP_HUB", "web-profile:x", TRUE);
  g_assert_null (sky_samp_lockfile_url (&error));
  g_assert_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_NO_HUB);
  g_clear_error (&error);
  g_unsetenv ("SAMP_HUB");
  url = sky_samp_lockfile_url (&error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (url, "file:///"));
  g_assert_true (g_str_has_suffix (url, "/.samp"));
  if (home)
    g_setenv ("HOME", home, TRUE);
}

static void
on_result (GObject *source, GAsyncResult *result, gpointer data)
{
  *(GAsyncResult **) data = g_object_ref (result);
}

/* Connecting with no lockfile fails with the place it looked, and leaves
 * the client as it was. */
static void
test_connect_without_hub (void)
{
  g_autofree char *dir = g_dir_make_tmp ("skysift-samp-test-XXXXXX", NULL);
  g_autofree char *lock = g_build_filename (dir, "lock", NULL);
  g_autofree char *env = g_strdup_printf ("std-lockurl:file://%s", lock);
  g_autoptr (SkySampClient) client = NULL;
  g_autoptr (GAsyncResult) result = NULL;
  g_autoptr (GError) error = NULL;
  const char *subs[] = { "table.highlight.row", NULL };

  g_setenv ("SAMP_HUB", env, TRUE);
  client = sky_samp_client_new (g_variant_new_parsed ("{'samp.name': <'test'>}"), subs);
  sky_samp_client_connect_async (client, NULL, on_result, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_rmdir (dir);
  g_assert_false (sky_samp_client_connect_finish (client, result, &error));
  g_assert_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_NO_HUB);
  g_assert_nonnull (strstr (error->message, lock));
  g_assert_false (sky_samp_client_is_connected (client));
  g_assert_cmpstr (sky_samp_client_get_id (client), ==, "");
}

/* A lockfile left by a hub that is gone (nothing listens at its URL): the
 * message says so, names the URL, and suggests what to do. */
static void
test_connect_stale_lockfile (void)
{
  g_autofree char *dir = g_dir_make_tmp ("skysift-samp-test-XXXXXX", NULL);
  g_autofree char *lock = g_build_filename (dir, "lock", NULL);
  g_autofree char *env = g_strdup_printf ("std-lockurl:file://%s", lock);
  g_autoptr (GSocketListener) listener = g_socket_listener_new ();
  g_autoptr (SkySampClient) client = NULL;
  g_autoptr (GAsyncResult) result = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL, *url = NULL;
  guint16 port;

  /* A port that was free a moment ago and is closed again. */
  port = g_socket_listener_add_any_inet_port (listener, NULL, &error);
  g_assert_no_error (error);
  g_socket_listener_close (listener);
  url = g_strdup_printf ("http://127.0.0.1:%u/xmlrpc", port);
  text = g_strdup_printf ("samp.secret=s3cr3t\nsamp.hub.xmlrpc.url=%s\n", url);
  g_assert_true (g_file_set_contents (lock, text, -1, NULL));
  g_setenv ("SAMP_HUB", env, TRUE);
  client = sky_samp_client_new (g_variant_new_parsed ("{'samp.name': <'test'>}"), NULL);
  sky_samp_client_connect_async (client, NULL, on_result, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_unlink (lock);
  g_rmdir (dir);
  g_assert_false (sky_samp_client_connect_finish (client, result, &error));
  g_assert_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_NO_HUB);
  g_assert_nonnull (strstr (error->message, url));
  g_assert_nonnull (strstr (error->message, "stale lockfile"));
  g_assert_false (sky_samp_client_is_connected (client));
}

/* A body of a few megabytes, as an image would be: every byte its index. */
#define FETCH_BYTES (3 * 1024 * 1024 + 17)

static void
on_get (SoupServer *server, SoupServerMessage *msg, const char *path, GHashTable *query,
        gpointer data)
{
  if (!g_str_equal (path, "/table.xml"))
    {
      soup_server_message_set_status (msg, SOUP_STATUS_NOT_FOUND, NULL);
      return;
    }
  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  soup_server_message_set_response (msg, "application/x-votable+xml", SOUP_MEMORY_COPY, data,
                                    FETCH_BYTES);
}

/* What another application serves over HTTP lands in the file whole; a
 * missing one and a URL that is not http: are refused naming the URL. */
static void
test_fetch (void)
{
  g_autoptr (SoupServer) server = soup_server_new (NULL, NULL);
  g_autofree char *dir = g_dir_make_tmp ("skysift-samp-test-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "got.xml", NULL);
  g_autofree guint8 *body = g_malloc (FETCH_BYTES);
  g_autofree char *url = NULL, *missing = NULL, *got = NULL;
  g_autoptr (GError) error = NULL;
  GSList *uris;
  gsize length;
  int port;

  for (gsize i = 0; i < FETCH_BYTES; i++)
    body[i] = (guint8) i;
  soup_server_add_handler (server, NULL, on_get, body, NULL);
  g_assert_true (soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error));
  uris = soup_server_get_uris (server);
  port = g_uri_get_port (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  url = g_strdup_printf ("http://127.0.0.1:%d/table.xml", port);
  missing = g_strdup_printf ("http://127.0.0.1:%d/missing.xml", port);

  {
    g_autoptr (GAsyncResult) result = NULL;
    sky_samp_fetch_async (url, path, NULL, on_result, &result);
    while (result == NULL)
      g_main_context_iteration (NULL, TRUE);
    g_assert_true (sky_samp_fetch_finish (result, &error));
    g_assert_no_error (error);
    g_assert_true (g_file_get_contents (path, &got, &length, NULL));
    g_assert_cmpuint (length, ==, FETCH_BYTES);
    g_assert_cmpmem (got, length, body, FETCH_BYTES);
  }
  {
    g_autoptr (GAsyncResult) result = NULL;
    sky_samp_fetch_async (missing, path, NULL, on_result, &result);
    while (result == NULL)
      g_main_context_iteration (NULL, TRUE);
    g_assert_false (sky_samp_fetch_finish (result, &error));
    g_assert_nonnull (error);
    g_assert_nonnull (strstr (error->message, missing));
    g_assert_nonnull (strstr (error->message, "404"));
    g_clear_error (&error);
  }
  {
    g_autoptr (GAsyncResult) result = NULL;
    sky_samp_fetch_async ("ftp://127.0.0.1/t.xml", path, NULL, on_result, &result);
    while (result == NULL)
      g_main_context_iteration (NULL, TRUE);
    g_assert_false (sky_samp_fetch_finish (result, &error));
    g_assert_error (error, SKY_UI_ERROR, SKY_UI_ERROR_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "ftp://127.0.0.1/t.xml"));
  }
  soup_server_disconnect (server);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/samp/xmlrpc/round-trip", test_round_trip);
  g_test_add_func ("/samp/xmlrpc/python-call", test_read_python_call);
  g_test_add_func ("/samp/xmlrpc/response-and-fault", test_response_and_fault);
  g_test_add_func ("/samp/xmlrpc/bad-input", test_bad_input);
  g_test_add_func ("/samp/xmlrpc/no-entities", test_no_entities);
  g_test_add_func ("/samp/lockfile/parse", test_lockfile);
  g_test_add_func ("/samp/lockfile/url", test_lockfile_url);
  g_test_add_func ("/samp/client/no-hub", test_connect_without_hub);
  g_test_add_func ("/samp/client/stale-lockfile", test_connect_stale_lockfile);
  g_test_add_func ("/samp/fetch", test_fetch);
  return g_test_run ();
}
