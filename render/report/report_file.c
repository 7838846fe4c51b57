/* report_file.c: checked file output; a report that was only partly written is an error. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report_file.h"

enum po_status po_report_file_open(struct po_report_file *out, const char *path,
				   struct po_error *err)
{
	out->path = path;
	out->write_errno = 0;
	out->file = fopen(path, "wb");
	if (!out->file) {
		po_error_set(err, "Failed to write %s: %s", path, strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	return PO_STATUS_OK;
}

cairo_status_t po_report_file_cairo_write(void *closure, const unsigned char *data,
					  unsigned int length)
{
	struct po_report_file *out = closure;

	if (out->write_errno)
		return CAIRO_STATUS_WRITE_ERROR;
	if (fwrite(data, 1, length, out->file) != length) {
		out->write_errno = errno ? errno : EIO;
		return CAIRO_STATUS_WRITE_ERROR;
	}
	return CAIRO_STATUS_SUCCESS;
}

enum po_status po_report_file_write(struct po_report_file *out, const void *data, size_t size,
				    struct po_error *err)
{
	if (!out->write_errno && fwrite(data, 1, size, out->file) != size)
		out->write_errno = errno ? errno : EIO;
	if (out->write_errno) {
		po_error_set(err, "Failed to write %s: %s", out->path, strerror(out->write_errno));
		return PO_STATUS_OUTPUT;
	}
	return PO_STATUS_OK;
}

enum po_status po_report_file_close(struct po_report_file *out, struct po_error *err)
{
	int close_failed;

	if (!out->file)
		return PO_STATUS_OK;
	errno = 0;
	close_failed = fclose(out->file) != 0;
	out->file = NULL;
	if (close_failed && !out->write_errno)
		out->write_errno = errno ? errno : EIO;
	if (out->write_errno) {
		po_error_set(err, "Failed to write %s: %s", out->path, strerror(out->write_errno));
		return PO_STATUS_OUTPUT;
	}
	return PO_STATUS_OK;
}

/* cairo may report success even when its final flush failed, so both are checked. */
enum po_status po_report_file_finish_surface(cairo_surface_t *surface, struct po_report_file *out,
					     struct po_error *err)
{
	cairo_status_t status;
	enum po_status close_status;

	cairo_surface_finish(surface);
	status = cairo_surface_status(surface);
	cairo_surface_destroy(surface);
	close_status = po_report_file_close(out, err);
	if (close_status != PO_STATUS_OK)
		return close_status;
	if (status != CAIRO_STATUS_SUCCESS) {
		po_error_set(err, "Failed to write %s: %s", out->path,
			     cairo_status_to_string(status));
		return PO_STATUS_OUTPUT;
	}
	return PO_STATUS_OK;
}

enum po_status po_report_file_finish_drawing(cairo_t *cr, cairo_surface_t *surface,
					     struct po_report_file *out, struct po_error *err)
{
	cairo_status_t draw_status = cairo_status(cr);
	enum po_status status;

	cairo_destroy(cr);
	status = po_report_file_finish_surface(surface, out, err);
	if (status == PO_STATUS_OK && draw_status != CAIRO_STATUS_SUCCESS) {
		po_error_set(err, "Failed to write %s: %s", out->path,
			     cairo_status_to_string(draw_status));
		status = PO_STATUS_OUTPUT;
	}
	return status;
}

char *po_report_file_path(const char *dir, const char *name)
{
	size_t dir_len = strlen(dir), name_len = strlen(name);
	char *path = malloc(dir_len + name_len + 2);

	if (!path)
		return NULL;
	memcpy(path, dir, dir_len);
	path[dir_len] = '/';
	memcpy(path + dir_len + 1, name, name_len + 1);
	return path;
}
