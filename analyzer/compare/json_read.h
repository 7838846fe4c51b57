/*
 * json_read.h: a small JSON reader for profopt's own summary.json (the baseline of a
 * comparison). It builds a read-only tree in an arena; errors give the byte offset.
 *
 * Every number is checked as it is read: it must be finite (profopt writes null for a
 * number that is not), and the members a comparison reads (steps.*_ms, step_series[].wall_ms,
 * categories, busy shares, ...) must lie in the range of their meaning: times and counts
 * at least 0, shares 0 to 100, counts whole and below 2^53. A number that is not fails the
 * parse with PO_STATUS_INPUT and names the member: "step_series[3].wall_ms is -1, not a time
 * in ms, 0 to 1e12 at byte 812".
 */
#ifndef PO_JSON_READ_H
#define PO_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "common/arena.h"
#include "common/status.h"

enum po_json_type {
	PO_JSON_NULL,
	PO_JSON_BOOL,
	PO_JSON_NUMBER,
	PO_JSON_STRING,
	PO_JSON_ARRAY,
	PO_JSON_OBJECT,
};

struct po_json_value {
	enum po_json_type type;
	bool boolean;
	double number;
	const char *string;	      /* weak: arena; NUL-terminated */
	size_t count;		      /* members of an object or items of an array */
	const char **keys;	      /* weak: arena; object member names */
	struct po_json_value **items; /* weak: arena; members or items */
};

/* Parses and checks text (len bytes) into *out; the tree lives in arena. */
enum po_status po_json_parse(const char *text, size_t len, struct po_arena *arena,
			     struct po_json_value **out, struct po_error *err) PO_NODISCARD;

/*
 * The items of one array member of the root object (summary.json's step_series), handed
 * over one at a time as they are read instead of kept in the tree: item (and what it
 * holds) lives until the call returns; the array in the tree is left empty. A status other
 * than PO_STATUS_OK ends the parse with it.
 */
struct po_json_stream {
	const char *member;
	enum po_status (*item)(void *context, const struct po_json_value *item, size_t index,
			       struct po_error *err);
	void *context;
};

/* po_json_parse, with stream's items handed over instead of kept. */
enum po_status po_json_parse_stream(const char *text, size_t len,
				    const struct po_json_stream *stream, struct po_arena *arena,
				    struct po_json_value **out, struct po_error *err) PO_NODISCARD;
/*
 * The same from a file, read through a window that holds the bytes being parsed, not the
 * file (fd stays open; error offsets count from the file's start).
 */
enum po_status po_json_parse_file(int fd, const struct po_json_stream *stream,
				  struct po_arena *arena, struct po_json_value **out,
				  struct po_error *err) PO_NODISCARD;

/* Member of an object by name, or NULL (also when value is not an object). */
const struct po_json_value *po_json_get(const struct po_json_value *value, const char *key);
/* value's number, or fallback when it is missing or not a number. */
double po_json_number(const struct po_json_value *value, double fallback);
const char *po_json_string(const struct po_json_value *value, const char *fallback);

#endif /* PO_JSON_READ_H */
