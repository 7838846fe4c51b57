/* report_file.h: files written through stdio with every failure caught, for cairo and the rest. */
#ifndef PO_REPORT_FILE_H
#define PO_REPORT_FILE_H

#include <stdio.h>

#include <cairo.h>

#include "common/status.h"

struct po_report_file {
	FILE *file;	  /* owned */
	const char *path; /* weak */
	int write_errno;  /* first failed write's errno, 0 when none */
};

enum po_status po_report_file_open(struct po_report_file *out, const char *path,
				   struct po_error *err) PO_NODISCARD;
/* The cairo write callback; closure is a struct po_report_file. */
cairo_status_t po_report_file_cairo_write(void *closure, const unsigned char *data,
					  unsigned int length);
enum po_status po_report_file_write(struct po_report_file *out, const void *data, size_t size,
				    struct po_error *err) PO_NODISCARD;
/* Closes the file; fails when any write or the final flush failed. */
enum po_status po_report_file_close(struct po_report_file *out, struct po_error *err) PO_NODISCARD;
/* Finishes a cairo surface writing to out, then closes out; checks both. */
enum po_status po_report_file_finish_surface(cairo_surface_t *surface, struct po_report_file *out,
					     struct po_error *err) PO_NODISCARD;
/* Destroys cr, finishes its surface writing to out, then closes out; checks all three. */
enum po_status po_report_file_finish_drawing(cairo_t *cr, cairo_surface_t *surface,
					     struct po_report_file *out,
					     struct po_error *err) PO_NODISCARD;
/* Joins dir and name into a malloc'ed path; NULL on allocation failure. */
char *po_report_file_path(const char *dir, const char *name);

#endif /* PO_REPORT_FILE_H */
