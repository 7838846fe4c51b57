/*
 * json_writer.h: a small streaming JSON writer. It escapes every string so that the output
 * is always valid UTF-8 JSON, prints numbers deterministically, and remembers the first
 * write error so that a full disk is reported once, when the file is closed.
 *
 * The writer does not check the grammar beyond separators: callers open and close
 * containers in pairs and give a key before each value inside an object (asserted).
 */
#ifndef PO_JSON_WRITER_H
#define PO_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/status.h"

#define PO_JSON_MAX_DEPTH 32

struct po_json_writer {
	FILE *file;	  /* owned when owns_file */
	bool owns_file;	  /* opened by po_json_writer_open(), closed by the writer */
	const char *path; /* weak: the caller's path, for error messages */
	int depth;	  /* open containers */
	int inline_depth; /* deeper values go on the same line; INT_MAX: pretty everywhere */
	int inline_owner; /* depth of the container that set inline_depth; 0: none */
	bool first[PO_JSON_MAX_DEPTH + 1]; /* no item yet in the container at this depth */
	bool is_object[PO_JSON_MAX_DEPTH + 1];
	bool after_key;	 /* a key was written, its value comes next */
	int write_errno; /* first failure of the stream; 0 while all writes succeeded */
	/*
	 * The first misuse by the caller (a key outside an object, a container closed that
	 * is not open, nesting deeper than PO_JSON_MAX_DEPTH); NULL when none. Checked in
	 * every build, not only with assertions: close then fails with PO_STATUS_INTERNAL.
	 */
	const char *misuse;
};

/* Creates or truncates path and starts a document. */
enum po_status po_json_writer_open(struct po_json_writer *writer, const char *path,
				   struct po_error *err) PO_NODISCARD;
/* Writes to an existing stream (not closed by the writer); for tests and stdout. */
void po_json_writer_init_stream(struct po_json_writer *writer, FILE *file, const char *name);
/*
 * Ends the document and closes the file. Reports any failed write or close as
 * PO_STATUS_OUTPUT: "Failed to write <path>: <strerror>".
 */
enum po_status po_json_writer_close(struct po_json_writer *writer,
				    struct po_error *err) PO_NODISCARD;
/* Closes without reporting, after another error. */
void po_json_writer_abandon(struct po_json_writer *writer);

void po_json_write_begin_object(struct po_json_writer *writer);
void po_json_write_end_object(struct po_json_writer *writer);
void po_json_write_begin_array(struct po_json_writer *writer);
void po_json_write_end_array(struct po_json_writer *writer);
/* Every item of the container just opened goes on its own line, its contents inline. */
void po_json_write_inline_items(struct po_json_writer *writer);
/* The container just opened is written on one line. */
void po_json_write_inline(struct po_json_writer *writer);

void po_json_write_key(struct po_json_writer *writer, const char *key);
/* NULL writes null. Invalid UTF-8 bytes become U+FFFD. */
void po_json_write_string(struct po_json_writer *writer, const char *text);
void po_json_write_string_len(struct po_json_writer *writer, const char *text, size_t len);
void po_json_write_int(struct po_json_writer *writer, int64_t value);
/* A negative value (the result's "unknown") writes null. */
void po_json_write_int_or_null(struct po_json_writer *writer, int64_t value);
/* Fixed decimals; NaN and infinities write null; "-0.000" is written "0.000". */
void po_json_write_double(struct po_json_writer *writer, double value, int decimals);
void po_json_write_bool(struct po_json_writer *writer, bool value);
void po_json_write_null(struct po_json_writer *writer);
/* Nanoseconds as milliseconds with 3 decimals, rounded to the microsecond, exactly. */
void po_json_write_ms(struct po_json_writer *writer, int64_t ns);
/* Microseconds as milliseconds with 3 decimals: 1234567 -> 1234.567. */
void po_json_write_us_as_ms(struct po_json_writer *writer, int64_t us);
/* Thousandths of a unit with 3 decimals, exactly: nanoseconds as microseconds, say. */
void po_json_write_thousandths(struct po_json_writer *writer, int64_t thousandths);

/* Key and value in one call. */
void po_json_write_kv_string(struct po_json_writer *writer, const char *key, const char *text);
void po_json_write_kv_int(struct po_json_writer *writer, const char *key, int64_t value);
void po_json_write_kv_int_or_null(struct po_json_writer *writer, const char *key, int64_t value);
void po_json_write_kv_double(struct po_json_writer *writer, const char *key, double value,
			     int decimals);
void po_json_write_kv_bool(struct po_json_writer *writer, const char *key, bool value);
void po_json_write_kv_ms(struct po_json_writer *writer, const char *key, int64_t ns);
/* ns < 0 (unknown) writes null. */
void po_json_write_kv_ms_or_null(struct po_json_writer *writer, const char *key, int64_t ns);

/*
 * Length of the valid UTF-8 sequence (RFC 3629) at text, or 0 when the byte there does not
 * start one; left > 0 bytes are readable.
 */
size_t po_json_utf8_length(const unsigned char *text, size_t left);

/*
 * Writes len bytes of text from a trace or a program to a terminal, at most max_chars
 * characters: control characters (C0, DEL, C1) and the U+2028/U+2029 line separators are
 * shown as '?', so that the text cannot move the cursor or end a line, and bytes that are
 * not UTF-8 as U+FFFD. Returns the characters written.
 */
size_t po_json_put_terminal_text(FILE *out, const char *text, size_t len, size_t max_chars);

/* Rounds nanoseconds to the nearest microsecond, halves away from zero. */
int64_t po_json_ns_to_us(int64_t ns);
/* Formats microseconds as "M.UUU" milliseconds into buf (at least 32 bytes). */
void po_json_format_us_as_ms(char *buf, size_t size, int64_t us);

#endif /* PO_JSON_WRITER_H */
