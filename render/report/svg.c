/* svg.c: each chart as its own SVG file under charts/. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cairo-svg.h>
#include <libxml/parser.h>

#include "report_file.h"
#include "charts_flame.h"
#include "report_priv.h"

/* An SVG document drawn in memory, so its ids can be made deterministic before writing. */
struct svg_buffer {
	char *data; /* owned */
	size_t size;
	size_t capacity;
};

static cairo_status_t buffer_write(void *closure, const unsigned char *data, unsigned int length)
{
	struct svg_buffer *buffer = closure;
	void *items = buffer->data;

	if (po_array_reserve(&items, &buffer->capacity, buffer->size + length + 1, 1) !=
	    PO_STATUS_OK)
		return CAIRO_STATUS_NO_MEMORY;
	buffer->data = items;
	memcpy(buffer->data + buffer->size, data, length);
	buffer->size += length;
	buffer->data[buffer->size] = '\0';
	return CAIRO_STATUS_SUCCESS;
}

/*
 * cairo names each surface's group with a process-wide counter ("surface94"), which would
 * make the output depend on what was drawn before. The counter is replaced by the group's
 * rank in this document; the replacement is never longer, so it is done in place.
 */
static void renumber_surfaces(struct svg_buffer *buffer)
{
	static const char marker[] = "surface";
	char *read = buffer->data, *write = buffer->data, *found;
	unsigned long seen[64];
	size_t seen_count = 0;

	while ((found = strstr(read, marker))) {
		char *digits = found + sizeof(marker) - 1, *end;
		unsigned long number = strtoul(digits, &end, 10);
		size_t rank = 0;

		memmove(write, read, (size_t)(digits - read));
		write += digits - read;
		read = end;
		if (end == digits)
			continue;
		while (rank < seen_count && seen[rank] != number)
			rank++;
		if (rank == seen_count && seen_count < 64)
			seen[seen_count++] = number;
		{
			char number_text[24];
			int length = snprintf(number_text, sizeof(number_text), "%zu", rank + 1);

			memcpy(write, number_text, (size_t)length); /* no NUL: read may be next */
			write += length;
		}
	}
	memmove(write, read, strlen(read) + 1);
	buffer->size = strlen(buffer->data);
}

static enum po_status draw_chart(const struct po_chart *chart, struct svg_buffer *buffer,
				 const char *path, struct po_error *err)
{
	cairo_surface_t *surface =
	    cairo_svg_surface_create_for_stream(buffer_write, buffer, chart->width, chart->height);
	cairo_t *cr;
	cairo_status_t status;

	cairo_svg_surface_set_document_unit(surface, CAIRO_SVG_UNIT_PT);
	cr = cairo_create(surface);
	po_draw_prepare(cr);
	chart->draw(cr, chart);
	status = cairo_status(cr);
	cairo_destroy(cr);
	cairo_surface_finish(surface);
	if (status == CAIRO_STATUS_SUCCESS)
		status = cairo_surface_status(surface);
	cairo_surface_destroy(surface);
	if (status != CAIRO_STATUS_SUCCESS || !buffer->data) {
		po_error_set(err, "Failed to draw %s: %s", path, cairo_status_to_string(status));
		return status == CAIRO_STATUS_NO_MEMORY ? PO_STATUS_NOMEM : PO_STATUS_INTERNAL;
	}
	return PO_STATUS_OK;
}

/* A flame graph's names as SVG text (po_chart_flame_svg_text), in the drawn document. */
static enum po_status add_flame_text(const struct po_chart *chart, struct svg_buffer *buffer,
				     const char *path, struct po_error *err)
{
	xmlDocPtr doc = xmlReadMemory(buffer->data, (int)buffer->size, NULL, NULL,
				      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
	xmlChar *text = NULL;
	int size = 0;
	enum po_status status;

	if (!root || buffer->size > INT_MAX) {
		xmlFreeDoc(doc);
		po_error_set(err, "Failed to read back the drawing of %s", path);
		return PO_STATUS_INTERNAL;
	}
	status = po_chart_flame_svg_text(chart, root, err);
	if (status == PO_STATUS_OK) {
		xmlDocDumpMemoryEnc(doc, &text, &size, "UTF-8");
		if (!text || size <= 0) {
			po_error_set(err, "Failed to write %s: out of memory", path);
			status = PO_STATUS_NOMEM;
		}
	}
	if (status == PO_STATUS_OK) {
		free(buffer->data);
		buffer->data = malloc((size_t)size + 1);
		buffer->size = buffer->data ? (size_t)size : 0;
		buffer->capacity = buffer->data ? (size_t)size + 1 : 0;
		if (buffer->data)
			memcpy(buffer->data, text, (size_t)size + 1);
		else {
			po_error_set(err, "Failed to write %s: out of memory", path);
			status = PO_STATUS_NOMEM;
		}
	}
	xmlFree(text);
	xmlFreeDoc(doc);
	return status;
}

static enum po_status write_chart(const struct po_chart *chart, const char *path,
				  struct po_error *err)
{
	struct svg_buffer buffer = {NULL, 0, 0};
	struct po_report_file out;
	enum po_status status = draw_chart(chart, &buffer, path, err);

	if (status == PO_STATUS_OK) {
		renumber_surfaces(&buffer);
		if (chart->flame)
			status = add_flame_text(chart, &buffer, path, err);
	}
	if (status == PO_STATUS_OK)
		status = po_report_file_open(&out, path, err);
	if (status == PO_STATUS_OK) {
		status = po_report_file_write(&out, buffer.data, buffer.size, err);
		if (status != PO_STATUS_OK)
			fclose(out.file);
		else
			status = po_report_file_close(&out, err);
	}
	free(buffer.data);
	return status;
}

enum po_status po_report_write_svgs(const struct po_chart_list *charts, const char *out_dir,
				    struct po_error *err)
{
	char *dir = po_report_file_path(out_dir, "charts");
	enum po_status status = PO_STATUS_OK;

	if (!dir) {
		po_error_set(err, "Failed to allocate a path");
		return PO_STATUS_NOMEM;
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		po_error_set(err, "Failed to write %s: %s", dir, strerror(errno));
		status = PO_STATUS_OUTPUT;
	}
	for (size_t i = 0; i < charts->count && status == PO_STATUS_OK; i++) {
		char *path = po_report_file_path(dir, charts->charts[i].file_name);

		if (!path) {
			po_error_set(err, "Failed to allocate a path");
			status = PO_STATUS_NOMEM;
			break;
		}
		status = write_chart(&charts->charts[i], path, err);
		if (status != PO_STATUS_OK)
			unlink(path); /* nothing half-written */
		free(path);
	}
	free(dir);
	return status;
}
