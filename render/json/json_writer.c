/* json_writer.c: the streaming JSON writer of json_writer.h. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "json_writer.h"

static void emit(struct po_json_writer *writer, const char *bytes, size_t len)
{
	if (writer->write_errno || !len)
		return;
	if (fwrite(bytes, 1, len, writer->file) != len)
		writer->write_errno = errno ? errno : EIO;
}

static void emit_str(struct po_json_writer *writer, const char *text)
{
	emit(writer, text, strlen(text));
}

static void emit_indent(struct po_json_writer *writer)
{
	static const char spaces[] =
	    "                                                                ";
	size_t width = (size_t)writer->depth * 2;

	emit(writer, "\n", 1);
	while (width) {
		size_t chunk = width < sizeof(spaces) - 1 ? width : sizeof(spaces) - 1;

		emit(writer, spaces, chunk);
		width -= chunk;
	}
}

/* Records the caller's first misuse; returns true, for `if (misused(...)) return;`. */
static bool misused(struct po_json_writer *writer, const char *what)
{
	if (!writer->misuse)
		writer->misuse = what;
	return true;
}

/*
 * The separator and line break before an item (a key in an object, a value in an array);
 * nothing before the value that follows a key. Values deeper than inline_depth share a line.
 */
static void begin_item(struct po_json_writer *writer, bool is_key)
{
	bool first;

	if (writer->after_key) {
		if (is_key)
			misused(writer, "a key where a value was due");
		writer->after_key = false;
		return;
	}
	if (writer->depth == 0)
		return;
	if (writer->is_object[writer->depth] != is_key)
		misused(writer,
			is_key ? "a key in an array" : "a value without a key in an object");
	first = writer->first[writer->depth];
	if (!first)
		emit(writer, ",", 1);
	writer->first[writer->depth] = false;
	if (writer->depth <= writer->inline_depth)
		emit_indent(writer);
}

static void writer_reset(struct po_json_writer *writer, FILE *file, const char *path)
{
	memset(writer, 0, sizeof(*writer));
	writer->file = file;
	writer->path = path;
	writer->inline_depth = INT_MAX;
}

enum po_status po_json_writer_open(struct po_json_writer *writer, const char *path,
				   struct po_error *err)
{
	FILE *file = fopen(path, "w");

	if (!file) {
		po_error_set(err, "Failed to open %s for writing: %s", path, strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	writer_reset(writer, file, path);
	writer->owns_file = true;
	return PO_STATUS_OK;
}

void po_json_writer_init_stream(struct po_json_writer *writer, FILE *file, const char *name)
{
	writer_reset(writer, file, name);
}

enum po_status po_json_writer_close(struct po_json_writer *writer, struct po_error *err)
{
	if (writer->depth != 0)
		misused(writer, "the document ended with containers open");
	emit(writer, "\n", 1);
	errno = 0;
	if (!writer->write_errno && (fflush(writer->file) != 0 || ferror(writer->file)))
		writer->write_errno = errno ? errno : EIO;
	errno = 0;
	if (writer->owns_file && fclose(writer->file) != 0 && !writer->write_errno)
		writer->write_errno = errno ? errno : EIO;
	writer->file = NULL;
	if (writer->misuse) {
		po_error_set(err, "Failed to write %s: internal error: %s", writer->path,
			     writer->misuse);
		return PO_STATUS_INTERNAL;
	}
	if (!writer->write_errno)
		return PO_STATUS_OK;
	po_error_set(err, "Failed to write %s: %s", writer->path, strerror(writer->write_errno));
	return PO_STATUS_OUTPUT;
}

void po_json_writer_abandon(struct po_json_writer *writer)
{
	if (writer->file && writer->owns_file)
		fclose(writer->file);
	writer->file = NULL;
}

static void open_container(struct po_json_writer *writer, bool is_object)
{
	if (writer->depth >= PO_JSON_MAX_DEPTH && misused(writer, "containers nested too deep"))
		return;
	begin_item(writer, false);
	emit(writer, is_object ? "{" : "[", 1);
	writer->depth++;
	writer->first[writer->depth] = true;
	writer->is_object[writer->depth] = is_object;
}

static void close_container(struct po_json_writer *writer, bool is_object)
{
	bool was_empty;

	if (writer->depth == 0 && misused(writer, "a container closed that is not open"))
		return;
	if (writer->is_object[writer->depth] != is_object)
		misused(writer, "an object closed as an array, or an array as an object");
	if (writer->after_key)
		misused(writer, "an object closed after a key without its value");
	was_empty = writer->first[writer->depth];
	if (!was_empty && writer->depth <= writer->inline_depth) {
		writer->depth--;
		emit_indent(writer);
	} else {
		writer->depth--;
	}
	if (writer->depth + 1 == writer->inline_owner) {
		writer->inline_depth = INT_MAX; /* the inline container has ended */
		writer->inline_owner = 0;
	}
	emit(writer, is_object ? "}" : "]", 1);
}

void po_json_write_begin_object(struct po_json_writer *writer)
{
	open_container(writer, true);
}

void po_json_write_end_object(struct po_json_writer *writer)
{
	close_container(writer, true);
}

void po_json_write_begin_array(struct po_json_writer *writer)
{
	open_container(writer, false);
}

void po_json_write_end_array(struct po_json_writer *writer)
{
	close_container(writer, false);
}

void po_json_write_inline_items(struct po_json_writer *writer)
{
	if (writer->inline_owner)
		return; /* already inside an inline container */
	writer->inline_depth = writer->depth;
	writer->inline_owner = writer->depth;
}

void po_json_write_inline(struct po_json_writer *writer)
{
	if (writer->inline_owner)
		return;
	writer->inline_depth = writer->depth - 1;
	writer->inline_owner = writer->depth;
}

/* RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF. */
size_t po_json_put_terminal_text(FILE *out, const char *text, size_t len, size_t max_chars)
{
	const unsigned char *c = (const unsigned char *)text;
	size_t chars = 0, seq;

	while (len && chars < max_chars) {
		seq = po_json_utf8_length(c, len);
		if ((seq == 1 && (*c < 0x20 || *c == 0x7f)) ||
		    (seq == 2 && c[0] == 0xc2 && c[1] < 0xa0) ||
		    (seq == 3 && c[0] == 0xe2 && c[1] == 0x80 && (c[2] == 0xa8 || c[2] == 0xa9)))
			fputc('?', out);
		else if (seq)
			fwrite(c, 1, seq, out);
		else
			fputs("\xef\xbf\xbd", out);
		seq = seq ? seq : 1;
		c += seq;
		len -= seq;
		chars++;
	}
	return chars;
}

size_t po_json_utf8_length(const unsigned char *text, size_t left)
{
	unsigned char lead = text[0];
	unsigned char low = 0x80, high = 0xbf;
	size_t len, i;

	if (lead < 0x80)
		return 1;
	if (lead >= 0xc2 && lead <= 0xdf)
		len = 2;
	else if (lead >= 0xe0 && lead <= 0xef)
		len = 3;
	else if (lead >= 0xf0 && lead <= 0xf4)
		len = 4;
	else
		return 0;
	if (lead == 0xe0)
		low = 0xa0;
	else if (lead == 0xed)
		high = 0x9f;
	else if (lead == 0xf0)
		low = 0x90;
	else if (lead == 0xf4)
		high = 0x8f;
	if (left < len || text[1] < low || text[1] > high)
		return 0;
	for (i = 2; i < len; i++) {
		if (text[i] < 0x80 || text[i] > 0xbf)
			return 0;
	}
	return len;
}

/* Writes bytes that need no escaping, then the escape of the byte that stopped the run. */
static void emit_escaped_byte(struct po_json_writer *writer, unsigned char byte,
			      unsigned char previous)
{
	char buf[8];

	if (byte == '"') {
		emit(writer, "\\\"", 2);
	} else if (byte == '\\') {
		emit(writer, "\\\\", 2);
	} else if (byte == '/' && previous == '<') {
		/* "</" becomes "<\/" so that the text can sit inside an HTML <script> element. */
		emit(writer, "\\/", 2);
	} else if (byte < 0x20 || byte == 0x7f) {
		snprintf(buf, sizeof(buf), "\\u%04x", byte);
		emit(writer, buf, 6);
	} else {
		emit(writer, (const char *)&byte, 1);
	}
}

static bool needs_escape(unsigned char byte, unsigned char previous)
{
	return byte == '"' || byte == '\\' || byte < 0x20 || byte == 0x7f ||
	       (byte == '/' && previous == '<');
}

/*
 * The string body: ASCII escaped where JSON or HTML needs it, valid UTF-8 kept, U+2028 and
 * U+2029 escaped (JavaScript line terminators), any other byte replaced by U+FFFD.
 */
static void emit_string_body(struct po_json_writer *writer, const unsigned char *text, size_t len)
{
	unsigned char previous = 0;
	size_t i = 0, seq;

	while (i < len) {
		size_t run = i;

		/* Plain ASCII is written in one piece. */
		while (run < len && text[run] < 0x80 && !needs_escape(text[run], previous))
			previous = text[run++];
		emit(writer, (const char *)text + i, run - i);
		i = run;
		if (i == len)
			break;
		if (text[i] < 0x80) {
			emit_escaped_byte(writer, text[i], previous);
			previous = text[i++];
			continue;
		}
		seq = po_json_utf8_length(text + i, len - i);
		if (seq == 3 && text[i] == 0xe2 && text[i + 1] == 0x80 &&
		    (text[i + 2] == 0xa8 || text[i + 2] == 0xa9))
			emit(writer, text[i + 2] == 0xa8 ? "\\u2028" : "\\u2029", 6);
		else if (seq)
			emit(writer, (const char *)text + i, seq);
		else
			emit(writer, "\xef\xbf\xbd", 3);
		i += seq ? seq : 1;
		previous = 0;
	}
}

static void emit_string(struct po_json_writer *writer, const char *text, size_t len)
{
	emit(writer, "\"", 1);
	emit_string_body(writer, (const unsigned char *)text, len);
	emit(writer, "\"", 1);
}

void po_json_write_key(struct po_json_writer *writer, const char *key)
{
	if (writer->depth == 0 || !writer->is_object[writer->depth] || writer->after_key)
		misused(writer, "a key outside an object, or after a key");
	begin_item(writer, true);
	emit_string(writer, key, strlen(key));
	emit(writer, ": ", writer->depth <= writer->inline_depth ? 2 : 1);
	writer->after_key = true;
}

void po_json_write_string_len(struct po_json_writer *writer, const char *text, size_t len)
{
	begin_item(writer, false);
	if (text)
		emit_string(writer, text, len);
	else
		emit_str(writer, "null");
}

void po_json_write_string(struct po_json_writer *writer, const char *text)
{
	po_json_write_string_len(writer, text, text ? strlen(text) : 0);
}

void po_json_write_int(struct po_json_writer *writer, int64_t value)
{
	char buf[32];

	begin_item(writer, false);
	snprintf(buf, sizeof(buf), "%" PRId64, value);
	emit_str(writer, buf);
}

void po_json_write_int_or_null(struct po_json_writer *writer, int64_t value)
{
	if (value < 0)
		po_json_write_null(writer);
	else
		po_json_write_int(writer, value);
}

/* printf's %f, made independent of the locale and of the sign of zero. */
static void format_double(char *buf, size_t size, double value, int decimals)
{
	char *c;

	snprintf(buf, size, "%.*f", decimals, value);
	for (c = buf; *c; c++) {
		if (*c == ',')
			*c = '.';
	}
	if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
		memmove(buf, buf + 1, strlen(buf));
}

void po_json_write_double(struct po_json_writer *writer, double value, int decimals)
{
	char buf[352];

	if (!isfinite(value)) {
		po_json_write_null(writer);
		return;
	}
	begin_item(writer, false);
	format_double(buf, sizeof(buf), value, decimals);
	emit_str(writer, buf);
}

void po_json_write_bool(struct po_json_writer *writer, bool value)
{
	begin_item(writer, false);
	emit_str(writer, value ? "true" : "false");
}

void po_json_write_null(struct po_json_writer *writer)
{
	begin_item(writer, false);
	emit_str(writer, "null");
}

int64_t po_json_ns_to_us(int64_t ns)
{
	if (ns == INT64_MIN)
		return INT64_MIN / 1000;
	if (ns < 0)
		return -po_json_ns_to_us(-ns);
	return ns / 1000 + (ns % 1000 >= 500);
}

void po_json_format_us_as_ms(char *buf, size_t size, int64_t us)
{
	uint64_t magnitude = us < 0 ? (uint64_t)(-(us + 1)) + 1 : (uint64_t)us;

	snprintf(buf, size, "%s%" PRIu64 ".%03" PRIu64, us < 0 ? "-" : "", magnitude / 1000,
		 magnitude % 1000);
}

void po_json_write_thousandths(struct po_json_writer *writer, int64_t thousandths)
{
	char buf[32];

	begin_item(writer, false);
	po_json_format_us_as_ms(buf, sizeof(buf), thousandths);
	emit_str(writer, buf);
}

void po_json_write_us_as_ms(struct po_json_writer *writer, int64_t us)
{
	po_json_write_thousandths(writer, us);
}

void po_json_write_ms(struct po_json_writer *writer, int64_t ns)
{
	po_json_write_us_as_ms(writer, po_json_ns_to_us(ns));
}

void po_json_write_kv_string(struct po_json_writer *writer, const char *key, const char *text)
{
	po_json_write_key(writer, key);
	po_json_write_string(writer, text);
}

void po_json_write_kv_int(struct po_json_writer *writer, const char *key, int64_t value)
{
	po_json_write_key(writer, key);
	po_json_write_int(writer, value);
}

void po_json_write_kv_int_or_null(struct po_json_writer *writer, const char *key, int64_t value)
{
	po_json_write_key(writer, key);
	po_json_write_int_or_null(writer, value);
}

void po_json_write_kv_double(struct po_json_writer *writer, const char *key, double value,
			     int decimals)
{
	po_json_write_key(writer, key);
	po_json_write_double(writer, value, decimals);
}

void po_json_write_kv_bool(struct po_json_writer *writer, const char *key, bool value)
{
	po_json_write_key(writer, key);
	po_json_write_bool(writer, value);
}

void po_json_write_kv_ms(struct po_json_writer *writer, const char *key, int64_t ns)
{
	po_json_write_key(writer, key);
	po_json_write_ms(writer, ns);
}

void po_json_write_kv_ms_or_null(struct po_json_writer *writer, const char *key, int64_t ns)
{
	po_json_write_key(writer, key);
	if (ns < 0)
		po_json_write_null(writer);
	else
		po_json_write_ms(writer, ns);
}
