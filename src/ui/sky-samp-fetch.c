/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fetching a URL into a file: GET, then the body spliced into the file as
 * it comes. */
#include "sky-samp-fetch.h"
#include "sky-ui-error.h"

#include <libsoup/soup.h>

typedef struct {
  char *url;
  SoupSession *session;      /* held until the body is in the file */
  GFile *file;
  GInputStream *in;          /* the body, as it comes */
} Fetch;

static void
fetch_free (Fetch *fetch)
{
  g_free (fetch->url);
  g_clear_object (&fetch->file);
  g_clear_object (&fetch->session);
  g_clear_object (&fetch->in);
  g_free (fetch);
}

static void
fail (GTask *task, const GError *error)
{
  Fetch *fetch = g_task_get_task_data (task);

  g_task_return_new_error (task, error->domain, error->code, "%s: %s", fetch->url,
                           error->message);
}

static void
on_spliced (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GTask) task = data;
  g_autoptr (GError) error = NULL;

  if (g_output_stream_splice_finish (G_OUTPUT_STREAM (source), result, &error) < 0)
    {
      fail (task, error);
      return;
    }
  g_task_return_boolean (task, TRUE);
}

static void
on_file_ready (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GTask) task = data;
  Fetch *fetch = g_task_get_task_data (task);
  g_autoptr (GError) error = NULL;
  g_autoptr (GFileOutputStream) out = g_file_replace_finish (G_FILE (source), result, &error);

  if (out == NULL)
    {
      fail (task, error);
      return;
    }
  g_output_stream_splice_async (G_OUTPUT_STREAM (out), fetch->in,
                                G_OUTPUT_STREAM_SPLICE_CLOSE_SOURCE
                                | G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, G_PRIORITY_DEFAULT,
                                g_task_get_cancellable (task), on_spliced, g_object_ref (task));
}

static void
on_answered (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GTask) task = data;
  Fetch *fetch = g_task_get_task_data (task);
  g_autoptr (GError) error = NULL;
  SoupMessage *msg = soup_session_get_async_result_message (SOUP_SESSION (source), result);

  fetch->in = soup_session_send_finish (SOUP_SESSION (source), result, &error);
  if (fetch->in == NULL)
    {
      fail (task, error);
      return;
    }
  if (!SOUP_STATUS_IS_SUCCESSFUL (soup_message_get_status (msg)))
    {
      g_autoptr (GError) status = g_error_new (SKY_UI_ERROR, SKY_UI_ERROR_IO, "HTTP %u %s",
                                               soup_message_get_status (msg),
                                               soup_message_get_reason_phrase (msg));
      fail (task, status);
      return;
    }
  g_file_replace_async (fetch->file, NULL, FALSE, G_FILE_CREATE_PRIVATE, G_PRIORITY_DEFAULT,
                        g_task_get_cancellable (task), on_file_ready, g_object_ref (task));
}

void
sky_samp_fetch_async (const char *url, const char *path, GCancellable *cancellable,
                      GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_autoptr (SoupMessage) msg = NULL;
  Fetch *fetch = g_new0 (Fetch, 1);

  g_task_set_source_tag (task, sky_samp_fetch_async);
  fetch->url = g_strdup (url);
  fetch->file = g_file_new_for_path (path);
  fetch->session = soup_session_new ();
  g_task_set_task_data (task, fetch, (GDestroyNotify) fetch_free);
  if (!g_str_has_prefix (url, "http://") && !g_str_has_prefix (url, "https://"))
    msg = NULL;
  else
    msg = soup_message_new ("GET", url);
  if (msg == NULL)
    {
      g_task_return_new_error (task, SKY_UI_ERROR, SKY_UI_ERROR_ARGUMENT,
                               "“%s” is not an http: or https: URL", url);
      return;
    }
  soup_session_send_async (fetch->session, msg, G_PRIORITY_DEFAULT, cancellable, on_answered,
                           g_steal_pointer (&task));
}

gboolean
sky_samp_fetch_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}
