/* SPDX-License-Identifier: GPL-3.0-or-later */
/* XML-RPC for SAMP: writing with GString, reading with libxml2 (no network
 * access and no entity expansion, so a message cannot make the parser
 * fetch or grow anything). */
#include "sky-samp-xmlrpc.h"
#include "sky-ui-error.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <string.h>

/* ------------------------------------------------------------- writing */

static void
append_escaped (GString *out, const char *text)
{
  g_autofree char *escaped = g_markup_escape_text (text, -1);
  g_string_append (out, escaped);
}

static void
write_value (GString *out, GVariant *value)
{
  g_string_append (out, "<value>");
  switch (g_variant_classify (value))
    {
    case G_VARIANT_CLASS_STRING:
      g_string_append (out, "<string>");
      append_escaped (out, g_variant_get_string (value, NULL));
      g_string_append (out, "</string>");
      break;
    case G_VARIANT_CLASS_BOOLEAN:
      g_string_append_printf (out, "<boolean>%d</boolean>", g_variant_get_boolean (value) ? 1 : 0);
      break;
    case G_VARIANT_CLASS_INT32:
      g_string_append_printf (out, "<int>%d</int>", g_variant_get_int32 (value));
      break;
    case G_VARIANT_CLASS_INT64:
      g_string_append_printf (out, "<int>%" G_GINT64_FORMAT "</int>", g_variant_get_int64 (value));
      break;
    case G_VARIANT_CLASS_DOUBLE:
      {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        g_string_append_printf (out, "<double>%s</double>",
                                g_ascii_dtostr (buf, sizeof buf, g_variant_get_double (value)));
      }
      break;
    case G_VARIANT_CLASS_VARIANT:
      {
        g_autoptr (GVariant) inner = g_variant_get_variant (value);
        /* The <value> already opened holds the inner one's content. */
        g_string_truncate (out, out->len - strlen ("<value>"));
        write_value (out, inner);
        return;
      }
    case G_VARIANT_CLASS_ARRAY:
      if (g_variant_type_is_dict_entry (g_variant_type_element (g_variant_get_type (value))))
        {
          GVariantIter iter;
          GVariant *entry;

          g_string_append (out, "<struct>");
          g_variant_iter_init (&iter, value);
          while ((entry = g_variant_iter_next_value (&iter)))
            {
              g_autoptr (GVariant) key = g_variant_get_child_value (entry, 0);
              g_autoptr (GVariant) member = g_variant_get_child_value (entry, 1);

              g_string_append (out, "<member><name>");
              append_escaped (out, g_variant_get_string (key, NULL));
              g_string_append (out, "</name>");
              write_value (out, member);
              g_string_append (out, "</member>");
              g_variant_unref (entry);
            }
          g_string_append (out, "</struct>");
          break;
        }
      /* An array of anything else is an XML-RPC array. */
      G_GNUC_FALLTHROUGH;
    case G_VARIANT_CLASS_TUPLE:
      {
        GVariantIter iter;
        GVariant *child;

        g_string_append (out, "<array><data>");
        g_variant_iter_init (&iter, value);
        while ((child = g_variant_iter_next_value (&iter)))
          {
            write_value (out, child);
            g_variant_unref (child);
          }
        g_string_append (out, "</data></array>");
      }
      break;
    default:
      /* SAMP has no other types; nothing in the app makes them. */
      g_return_if_reached ();
    }
  g_string_append (out, "</value>");
}

char *
sky_xmlrpc_write_call (const char *method, GVariant *params)
{
  g_autoptr (GVariant) sunk = g_variant_ref_sink (params);
  GString *out = g_string_new ("<?xml version=\"1.0\"?>\n<methodCall><methodName>");
  GVariantIter iter;
  GVariant *child;

  append_escaped (out, method);
  g_string_append (out, "</methodName><params>");
  g_variant_iter_init (&iter, sunk);
  while ((child = g_variant_iter_next_value (&iter)))
    {
      g_string_append (out, "<param>");
      write_value (out, child);
      g_string_append (out, "</param>");
      g_variant_unref (child);
    }
  g_string_append (out, "</params></methodCall>\n");
  return g_string_free (out, FALSE);
}

char *
sky_xmlrpc_write_response (GVariant *value)
{
  g_autoptr (GVariant) sunk = g_variant_ref_sink (value);
  GString *out = g_string_new ("<?xml version=\"1.0\"?>\n<methodResponse><params><param>");

  write_value (out, sunk);
  g_string_append (out, "</param></params></methodResponse>\n");
  return g_string_free (out, FALSE);
}

char *
sky_xmlrpc_write_fault (int code, const char *message)
{
  GString *out = g_string_new ("<?xml version=\"1.0\"?>\n<methodResponse><fault><value><struct>");

  g_string_append_printf (out, "<member><name>faultCode</name><value><int>%d</int></value>"
                          "</member><member><name>faultString</name><value><string>", code);
  append_escaped (out, message);
  g_string_append (out, "</string></value></member></struct></value></fault></methodResponse>\n");
  return g_string_free (out, FALSE);
}

/* ------------------------------------------------------------- reading */

static gboolean
protocol_error (GError **error, const char *what)
{
  g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_PROTOCOL,
               "Not a SAMP XML-RPC message: %s", what);
  return FALSE;
}

static gboolean
is_element (xmlNode *node, const char *name)
{
  return node && node->type == XML_ELEMENT_NODE && strcmp ((const char *) node->name, name) == 0;
}

/* The first element child (text and comments between elements skipped). */
static xmlNode *
first_element (xmlNode *node)
{
  for (xmlNode *c = node ? node->children : NULL; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE)
      return c;
  return NULL;
}

static xmlNode *
next_element (xmlNode *node)
{
  for (xmlNode *c = node->next; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE)
      return c;
  return NULL;
}

static char *
node_text (xmlNode *node)
{
  xmlChar *content = xmlNodeGetContent (node);
  char *text = g_strdup (content ? (const char *) content : "");

  xmlFree (content);
  return text;
}

static GVariant *read_value (xmlNode *value, GError **error);

static GVariant *
read_array (xmlNode *array, GError **error)
{
  xmlNode *data = first_element (array);
  g_autoptr (GVariantBuilder) builder = g_variant_builder_new (G_VARIANT_TYPE ("av"));

  if (!is_element (data, "data"))
    return protocol_error (error, "an <array> without <data>"), NULL;
  for (xmlNode *v = first_element (data); v; v = next_element (v))
    {
      GVariant *child = read_value (v, error);
      if (child == NULL)
        return NULL;
      g_variant_builder_add (builder, "v", child);
    }
  return g_variant_builder_end (builder);
}

static GVariant *
read_struct (xmlNode *st, GError **error)
{
  g_autoptr (GVariantBuilder) builder = g_variant_builder_new (G_VARIANT_TYPE ("a{sv}"));

  for (xmlNode *m = first_element (st); m; m = next_element (m))
    {
      xmlNode *name = first_element (m), *v = name ? next_element (name) : NULL;
      g_autofree char *key = NULL;
      GVariant *child;

      if (!is_element (m, "member") || !is_element (name, "name") || v == NULL)
        return protocol_error (error, "a <struct> member without <name> and <value>"), NULL;
      child = read_value (v, error);
      if (child == NULL)
        return NULL;
      key = node_text (name);
      g_variant_builder_add (builder, "{sv}", key, child);
    }
  return g_variant_builder_end (builder);
}

static GVariant *
read_value (xmlNode *value, GError **error)
{
  xmlNode *typed = first_element (value);
  g_autofree char *text = NULL;
  const char *type;

  if (!is_element (value, "value"))
    return protocol_error (error, "a parameter that is not a <value>"), NULL;
  if (typed == NULL)
    return g_variant_new_take_string (node_text (value));   /* untyped: a string */
  type = (const char *) typed->name;
  if (strcmp (type, "array") == 0)
    return read_array (typed, error);
  if (strcmp (type, "struct") == 0)
    return read_struct (typed, error);
  text = node_text (typed);
  if (strcmp (type, "string") == 0)
    return g_variant_new_string (text);
  if (strcmp (type, "nil") == 0)
    return g_variant_new_string ("");
  if (strcmp (type, "int") == 0 || strcmp (type, "i4") == 0 || strcmp (type, "i8") == 0)
    {
      gint64 n;
      if (!g_ascii_string_to_signed (g_strstrip (text), 10, G_MININT64, G_MAXINT64, &n, NULL))
        return protocol_error (error, "an <int> that is not an integer"), NULL;
      return g_variant_new_int64 (n);
    }
  if (strcmp (type, "boolean") == 0)
    return g_variant_new_boolean (g_str_equal (g_strstrip (text), "1"));
  if (strcmp (type, "double") == 0)
    {
      char *end;
      double d = g_ascii_strtod (g_strstrip (text), &end);
      if (*end != '\0' || end == text)
        return protocol_error (error, "a <double> that is not a number"), NULL;
      return g_variant_new_double (d);
    }
  {
    g_autofree char *what = g_strdup_printf ("a value of type <%s>", type);
    return protocol_error (error, what), NULL;
  }
}

static xmlDoc *
parse (const char *xml, gsize length, GError **error)
{
  xmlDoc *doc;

  if (length > G_MAXINT)
    return protocol_error (error, "too long"), NULL;
  doc = xmlReadMemory (xml, (int) length, "samp.xml", NULL,
                       XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (doc == NULL)
    protocol_error (error, "not well-formed XML");
  return doc;
}

gboolean
sky_xmlrpc_read_call (const char *xml, gsize length, char **method, GVariant **params,
                      GError **error)
{
  xmlDoc *doc = parse (xml, length, error);
  xmlNode *root, *name, *list;
  g_autoptr (GVariantBuilder) builder = NULL;
  gboolean ok = FALSE;

  *method = NULL;
  *params = NULL;
  if (doc == NULL)
    return FALSE;
  root = xmlDocGetRootElement (doc);
  name = first_element (root);
  if (!is_element (root, "methodCall") || !is_element (name, "methodName"))
    {
      protocol_error (error, "no <methodCall> with a <methodName>");
      goto exit;
    }
  builder = g_variant_builder_new (G_VARIANT_TYPE ("av"));
  list = next_element (name);
  if (list != NULL && !is_element (list, "params"))
    {
      protocol_error (error, "<params> expected after <methodName>");
      goto exit;
    }
  for (xmlNode *p = first_element (list); p; p = next_element (p))
    {
      GVariant *value;
      if (!is_element (p, "param"))
        {
          protocol_error (error, "<params> holds something other than <param>");
          goto exit;
        }
      value = read_value (first_element (p), error);
      if (value == NULL)
        goto exit;
      g_variant_builder_add (builder, "v", value);
    }
  *method = g_strstrip (node_text (name));
  *params = g_variant_ref_sink (g_variant_builder_end (builder));
  ok = TRUE;
exit:
  xmlFreeDoc (doc);
  return ok;
}

GVariant *
sky_xmlrpc_read_response (const char *xml, gsize length, GError **error)
{
  xmlDoc *doc = parse (xml, length, error);
  xmlNode *root, *body, *param;
  GVariant *value = NULL;

  if (doc == NULL)
    return NULL;
  root = xmlDocGetRootElement (doc);
  body = first_element (root);
  if (!is_element (root, "methodResponse") || body == NULL)
    {
      protocol_error (error, "no <methodResponse>");
      goto exit;
    }
  if (is_element (body, "fault"))
    {
      GVariant *read = read_value (first_element (body), error);
      g_autoptr (GVariant) fault = read ? g_variant_ref_sink (read) : NULL;
      const char *message = fault ? sky_samp_map_string (fault, "faultString") : NULL;

      if (fault != NULL)
        g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_SAMP_HUB, "%s",
                     message ? message : "a fault without a message");
      goto exit;
    }
  param = first_element (body);
  if (!is_element (body, "params") || !is_element (param, "param"))
    {
      protocol_error (error, "a <methodResponse> without <params><param>");
      goto exit;
    }
  value = read_value (first_element (param), error);
  if (value != NULL)
    g_variant_ref_sink (value);
exit:
  xmlFreeDoc (doc);
  return value;
}

const char *
sky_samp_map_string (GVariant *map, const char *key)
{
  g_autoptr (GVariant) value = NULL;

  if (map == NULL || !g_variant_is_of_type (map, G_VARIANT_TYPE ("a{sv}")))
    return NULL;
  value = g_variant_lookup_value (map, key, G_VARIANT_TYPE_STRING);
  /* The string lives as long as map does: value is a view into it. */
  return value ? g_variant_get_string (value, NULL) : NULL;
}
