/* html.c: index.html from the embedded template, filled with libxml2 and saved checked. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/xmlsave.h>

#include "html.h"
#include "report_file.h"

xmlNodePtr po_html_el(struct po_html *html, xmlNodePtr parent, const char *tag,
		      const char *class_name, const char *text)
{
	xmlNodePtr node = xmlNewChild(parent, NULL, BAD_CAST tag, NULL);

	if (!node) {
		html->failed = true;
		return parent; /* keeps callers simple; the failure is reported at the end */
	}
	if (class_name)
		po_html_attr(html, node, "class", class_name);
	if (text)
		xmlNodeAddContent(node, BAD_CAST text);
	return node;
}

xmlNodePtr po_html_label(struct po_html *html, xmlNodePtr parent, const char *tag,
			 const char *class_name, const char *text, size_t max_chars)
{
	char clean[PO_REPORT_TEXT_MAX * 8];

	po_report_clean(text, clean, sizeof(clean), max_chars);
	return po_html_el(html, parent, tag, class_name, clean);
}

void po_html_attr(struct po_html *html, xmlNodePtr node, const char *name, const char *value)
{
	if (!xmlSetProp(node, BAD_CAST name, BAD_CAST value))
		html->failed = true;
}

static xmlNodePtr find_id(xmlNodePtr node, const char *id)
{
	for (; node; node = node->next) {
		xmlChar *value;
		xmlNodePtr found;

		if (node->type != XML_ELEMENT_NODE)
			continue;
		value = xmlGetProp(node, BAD_CAST "id");
		if (value && strcmp((const char *)value, id) == 0) {
			xmlFree(value);
			return node;
		}
		xmlFree(value);
		found = find_id(node->children, id);
		if (found)
			return found;
	}
	return NULL;
}

xmlNodePtr po_html_find(struct po_html *html, const char *id)
{
	return find_id(xmlDocGetRootElement(html->doc), id);
}

void po_html_remove(struct po_html *html, const char *id)
{
	xmlNodePtr node = po_html_find(html, id);
	xmlNodePtr next = node ? node->next : NULL;

	if (!node)
		return;
	if (next && xmlIsBlankNode(next)) {
		xmlUnlinkNode(next);
		xmlFreeNode(next);
	}
	xmlUnlinkNode(node);
	xmlFreeNode(node);
}

xmlNodePtr po_html_table(struct po_html *html, xmlNodePtr parent, const char *class_name,
			 const char *const *headers, size_t column_count, uint32_t numeric)
{
	xmlNodePtr table = po_html_el(html, parent, "table", class_name, NULL);
	xmlNodePtr row =
	    po_html_el(html, po_html_el(html, table, "thead", NULL, NULL), "tr", NULL, NULL);

	for (size_t i = 0; i < column_count; i++)
		po_html_el(html, row, "th", numeric & PO_HTML_COLUMN(i) ? "num" : NULL, headers[i]);
	return po_html_el(html, table, "tbody", NULL, NULL);
}

xmlNodePtr po_html_row(struct po_html *html, xmlNodePtr body, const char *const *cells,
		       size_t column_count, uint32_t numeric)
{
	xmlNodePtr row = po_html_el(html, body, "tr", NULL, NULL);

	for (size_t i = 0; i < column_count; i++)
		po_html_label(html, row, "td", numeric & PO_HTML_COLUMN(i) ? "num" : NULL, cells[i],
			      PO_REPORT_LABEL_CHARS);
	return row;
}

void po_html_swatch(struct po_html *html, xmlNodePtr parent, uint32_t color)
{
	char style[48], hex[16];
	xmlNodePtr swatch = xmlNewNode(NULL, BAD_CAST "span");

	if (!swatch || !(parent->children ? xmlAddPrevSibling(parent->children, swatch)
					  : xmlAddChild(parent, swatch))) {
		xmlFreeNode(swatch);
		html->failed = true;
		return;
	}
	po_html_attr(html, swatch, "class", "swatch");

	po_report_color_hex(color, hex, sizeof(hex));
	snprintf(style, sizeof(style), "background:%s", hex);
	po_html_attr(html, swatch, "style", style);
}

/* Rewrites "#id" and "url(#id)" references so several SVGs can share one page. */
static xmlChar *prefixed_reference(const xmlChar *value, const char *prefix, bool href)
{
	const char *text = (const char *)value;
	const char *marker = strstr(text, "url(#");
	size_t prefix_len = strlen(prefix), text_len = strlen(text);
	char *result;
	size_t at;

	if (text[0] == '#' && href)
		at = 1;
	else if (marker)
		at = (size_t)(marker - text) + 5;
	else
		return NULL;
	result = xmlMalloc(text_len + prefix_len + 1);
	if (!result)
		return NULL;
	memcpy(result, text, at);
	memcpy(result + at, prefix, prefix_len);
	memcpy(result + at + prefix_len, text + at, text_len - at + 1);
	return BAD_CAST result;
}

static void rewrite_attributes(xmlNodePtr node, const char *prefix)
{
	xmlAttrPtr attr = node->properties;

	while (attr) {
		xmlAttrPtr next = attr->next;
		xmlChar *value = xmlNodeListGetString(node->doc, attr->children, 1);
		xmlChar *rewritten = NULL;

		if (strncasecmp((const char *)attr->name, "on", 2) == 0) {
			xmlRemoveProp(attr); /* event handlers never belong in a report */
		} else if (value && strcmp((const char *)attr->name, "id") == 0) {
			char *with_prefix = malloc(strlen(prefix) + xmlStrlen(value) + 1);

			if (with_prefix) {
				sprintf(with_prefix, "%s%s", prefix, (const char *)value);
				xmlSetNsProp(node, attr->ns, attr->name, BAD_CAST with_prefix);
				free(with_prefix);
			}
		} else if (value &&
			   (rewritten = prefixed_reference(
				value, prefix, strcmp((const char *)attr->name, "href") == 0))) {
			xmlSetNsProp(node, attr->ns, attr->name, rewritten);
			xmlFree(rewritten);
		}
		xmlFree(value);
		attr = next;
	}
}

static bool is_active_element(xmlNodePtr node)
{
	return strcasecmp((const char *)node->name, "script") == 0 ||
	       strcasecmp((const char *)node->name, "foreignObject") == 0;
}

static void clean_svg_tree(xmlNodePtr node, const char *prefix)
{
	while (node) {
		xmlNodePtr next = node->next;

		if (node->type == XML_ELEMENT_NODE && is_active_element(node)) {
			xmlUnlinkNode(node);
			xmlFreeNode(node);
		} else if (node->type == XML_ELEMENT_NODE) {
			rewrite_attributes(node, prefix);
			clean_svg_tree(node->children, prefix);
		}
		node = next;
	}
}

enum po_status po_html_embed_svg(struct po_html *html, xmlNodePtr parent, const char *path,
				 const char *title, struct po_error *err)
{
	xmlDocPtr svg =
	    xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	xmlNodePtr root = svg ? xmlDocGetRootElement(svg) : NULL;
	xmlNodePtr copy;
	char prefix[24];

	if (!root) {
		xmlFreeDoc(svg);
		po_error_set(err, "Failed to read back %s", path);
		return PO_STATUS_OUTPUT;
	}
	snprintf(prefix, sizeof(prefix), "s%d-", ++html->svg_count);
	clean_svg_tree(root, prefix);
	copy = xmlDocCopyNode(root, html->doc, 1);
	xmlFreeDoc(svg);
	if (!copy || !xmlAddChild(parent, copy)) {
		xmlFreeNode(copy);
		po_error_set(err, "Failed to embed %s", path);
		return PO_STATUS_NOMEM;
	}
	po_html_attr(html, copy, "role", "img");
	po_html_attr(html, copy, "aria-label", title);
	po_html_attr(html, copy, "class", "chart");
	return PO_STATUS_OK;
}

const struct po_chart *po_html_chart(struct po_html *html, const char *file_name)
{
	for (size_t i = 0; i < html->charts->count; i++) {
		if (strcmp(html->charts->charts[i].file_name, file_name) == 0)
			return &html->charts->charts[i];
	}
	return NULL;
}

enum po_status po_html_embed_chart(struct po_html *html, xmlNodePtr parent,
				   const struct po_chart *chart, struct po_error *err)
{
	char name[96];
	char *path;
	enum po_status status;
	xmlNodePtr figure = po_html_el(html, parent, "figure", "figure", NULL);

	snprintf(name, sizeof(name), "charts/%s", chart->file_name);
	path = po_report_file_path(html->out_dir, name);
	if (!path) {
		po_error_set(err, "Failed to allocate a path");
		return PO_STATUS_NOMEM;
	}
	status = po_html_embed_svg(html, figure, path, chart->title, err);
	free(path);
	return status;
}

static int save_write(void *context, const char *buffer, int length)
{
	struct po_report_file *out = context;

	return po_report_file_cairo_write(out, (const unsigned char *)buffer, (unsigned)length) ==
		       CAIRO_STATUS_SUCCESS
		   ? length
		   : -1;
}

static int save_close(void *context)
{
	return 0; /* closed and checked by po_report_file_close */
}

/*
 * libxml2's own messages while it saves ("I/O error : write error"), kept for the error
 * chain instead of being printed on stderr as they come.
 */
struct xml_messages {
	char text[256];
};

static void keep_xml_message(void *context, xmlErrorPtr error)
{
	struct xml_messages *messages = context;
	size_t used = strlen(messages->text);
	size_t len;

	if (!error || !error->message || used)
		return; /* the first message is the cause; the later ones follow from it */
	len = strcspn(error->message, "\n");
	snprintf(messages->text, sizeof(messages->text), "%.*s", (int)len, error->message);
}

static enum po_status save_document(xmlDocPtr doc, const char *path, struct po_error *err)
{
	struct po_report_file out;
	struct xml_messages messages = {""};
	xmlSaveCtxtPtr save;
	long saved;
	int closed;
	enum po_status status = po_report_file_open(&out, path, err);

	if (status != PO_STATUS_OK)
		return status;
	xmlSetStructuredErrorFunc(&messages, keep_xml_message);
	/* XHTML rules: well-formed XML that browsers also parse as HTML. */
	save = xmlSaveToIO(save_write, save_close, &out, "UTF-8",
			   XML_SAVE_NO_DECL | XML_SAVE_XHTML | XML_SAVE_NO_XHTML);
	saved = save ? xmlSaveDoc(save, doc) : -1;
	closed = save ? xmlSaveClose(save) : -1;
	xmlSetStructuredErrorFunc(NULL, NULL);
	status = po_report_file_close(&out, err);
	if (status == PO_STATUS_OK && (saved < 0 || closed < 0)) {
		/* The write's errno when the file refused the bytes; else libxml2's reason. */
		po_error_set(err, "Failed to write %s: %s", path,
			     out.write_errno	? strerror(out.write_errno)
			     : messages.text[0] ? messages.text
						: "serialization failed");
		status = PO_STATUS_OUTPUT;
	}
	return status;
}

enum po_status po_report_write_html(const struct po_analysis *analysis,
				    const struct po_chart_list *charts, const char *out_dir,
				    struct po_error *err)
{
	struct po_html html = {NULL, analysis, charts, out_dir, 0, false};
	char *path;
	enum po_status status;

	html.doc =
	    xmlReadMemory(po_report_template, (int)po_report_template_size, "report.html", "UTF-8",
			  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!html.doc) {
		po_error_set(err, "Failed to parse the embedded report template");
		return PO_STATUS_INTERNAL;
	}
	status = po_html_fill_sections(&html, err);
	if (status == PO_STATUS_OK && html.failed) {
		po_error_set(err, "Failed to build the report document: out of memory");
		status = PO_STATUS_NOMEM;
	}
	path = status == PO_STATUS_OK ? po_report_file_path(out_dir, "index.html") : NULL;
	if (status == PO_STATUS_OK && !path) {
		po_error_set(err, "Failed to allocate a path");
		status = PO_STATUS_NOMEM;
	}
	if (status == PO_STATUS_OK)
		status = save_document(html.doc, path, err);
	free(path);
	xmlFreeDoc(html.doc);
	return status;
}
