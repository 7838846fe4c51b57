/* test_json_writer.c: escaping, number formatting, layout and write errors of json_writer. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "json_writer.h"

/* Runs write(writer) on a memory stream and returns what it wrote (owned by the caller). */
static char *render(void (*write)(struct po_json_writer *writer))
{
	struct po_json_writer writer;
	struct po_error err = {{0}};
	char *text = NULL;
	size_t size = 0;
	FILE *stream = open_memstream(&text, &size);

	if (!stream)
		return NULL;
	po_json_writer_init_stream(&writer, stream, "memory");
	write(&writer);
	CHECK(po_json_writer_close(&writer, &err) == PO_STATUS_OK);
	fclose(stream);
	return text;
}

static const char *current_input;

static void write_current_string(struct po_json_writer *writer)
{
	po_json_write_string(writer, current_input);
}

static void check_string(const char *input, const char *expected)
{
	char *text;

	current_input = input;
	text = render(write_current_string);
	CHECK_STR_EQ(text, expected);
	free(text);
}

static void test_escapes(void)
{
	check_string("plain", "\"plain\"\n");
	check_string("a\"b\\c", "\"a\\\"b\\\\c\"\n");
	check_string("\x01\n\t\x1f\x7f", "\"\\u0001\\u000a\\u0009\\u001f\\u007f\"\n");
	check_string("</script><b>/x", "\"<\\/script><b>/x\"\n");
	check_string("\xe2\x80\xa8\xe2\x80\xa9", "\"\\u2028\\u2029\"\n");
	check_string(NULL, "null\n");
}

static void test_utf8(void)
{
	/* Valid sequences of every length are kept. */
	check_string("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
		     "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"\n");
	/* A stray byte, an overlong '/', a surrogate, a truncated sequence, > U+10FFFF. */
	check_string("a\xff"
		     "b",
		     "\"a\xef\xbf\xbd"
		     "b\"\n");
	check_string("\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"\n");
	check_string("\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"\n");
	check_string("\xe2\x82", "\"\xef\xbf\xbd\xef\xbf\xbd\"\n");
	check_string("\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"\n");
	check_string("\xc3\x28", "\"\xef\xbf\xbd(\"\n");
}

static void write_numbers(struct po_json_writer *writer)
{
	po_json_write_begin_array(writer);
	po_json_write_inline_items(writer);
	po_json_write_int(writer, INT64_MIN);
	po_json_write_int(writer, INT64_MAX);
	po_json_write_double(writer, NAN, 3);
	po_json_write_double(writer, INFINITY, 3);
	po_json_write_double(writer, -INFINITY, 3);
	po_json_write_double(writer, -0.0001, 3);
	po_json_write_double(writer, 2.5, 3);
	po_json_write_double(writer, 66.66666, 1);
	po_json_write_ms(writer, 1499);
	po_json_write_ms(writer, 1500);
	po_json_write_ms(writer, -1500);
	po_json_write_ms(writer, 123456789012);
	po_json_write_us_as_ms(writer, -1);
	po_json_write_int_or_null(writer, -1);
	po_json_write_bool(writer, false);
	po_json_write_end_array(writer);
}

static void test_numbers(void)
{
	char *text = render(write_numbers);

	CHECK_STR_EQ(text, "[\n  -9223372036854775808,\n  9223372036854775807,\n  null,\n  null,\n"
			   "  null,\n  0.000,\n  2.500,\n  66.7,\n  0.001,\n  0.002,\n  -0.002,\n"
			   "  123456.789,\n  -0.001,\n  null,\n  false\n]\n");
	free(text);
	CHECK_INT_EQ(po_json_ns_to_us(499), 0);
	CHECK_INT_EQ(po_json_ns_to_us(500), 1);
	CHECK_INT_EQ(po_json_ns_to_us(-500), -1);
	CHECK_INT_EQ(po_json_ns_to_us(-499), 0);
}

static void write_layout(struct po_json_writer *writer)
{
	po_json_write_begin_object(writer);
	po_json_write_key(writer, "empty");
	po_json_write_begin_object(writer);
	po_json_write_end_object(writer);
	po_json_write_key(writer, "rows");
	po_json_write_begin_array(writer);
	po_json_write_inline_items(writer);
	po_json_write_begin_object(writer);
	po_json_write_kv_int(writer, "a", 1);
	po_json_write_key(writer, "b");
	po_json_write_begin_array(writer);
	po_json_write_int(writer, 2);
	po_json_write_int(writer, 3);
	po_json_write_end_array(writer);
	po_json_write_end_object(writer);
	po_json_write_int(writer, 4);
	po_json_write_end_array(writer);
	po_json_write_key(writer, "short");
	po_json_write_begin_array(writer);
	po_json_write_inline(writer);
	po_json_write_int(writer, 5);
	po_json_write_begin_object(writer);
	po_json_write_kv_int(writer, "c", 6);
	po_json_write_end_object(writer);
	po_json_write_end_array(writer);
	po_json_write_kv_string(writer, "z", "end");
	po_json_write_end_object(writer);
}

/* Pretty by default; the items of an inline container each on one line. */
static void test_layout(void)
{
	char *text = render(write_layout);

	CHECK_STR_EQ(text, "{\n  \"empty\": {},\n  \"rows\": [\n    {\"a\":1,\"b\":[2,3]},\n    4\n"
			   "  ],\n  \"short\": [5,{\"c\":6}],\n  \"z\": \"end\"\n}\n");
	free(text);
}

static void test_full_disk(void)
{
	struct po_json_writer writer;
	struct po_error err = {{0}};
	enum po_status status;
	int i;

	CHECK(po_json_writer_open(&writer, "/dev/full", &err) == PO_STATUS_OK);
	po_json_write_begin_array(&writer);
	for (i = 0; i < 100000; i++)
		po_json_write_string(&writer, "enough bytes to fill the stdio buffer");
	po_json_write_end_array(&writer);
	status = po_json_writer_close(&writer, &err);
	CHECK_INT_EQ(status, PO_STATUS_OUTPUT);
	CHECK_STR_EQ(err.message, "Failed to write /dev/full: No space left on device");
}

static void test_small_write_to_full_disk(void)
{
	struct po_json_writer writer;
	struct po_error err = {{0}};

	/* Buffered until the close: the failure shows only in fflush/fclose. */
	CHECK(po_json_writer_open(&writer, "/dev/full", &err) == PO_STATUS_OK);
	po_json_write_int(&writer, 1);
	CHECK_INT_EQ(po_json_writer_close(&writer, &err), PO_STATUS_OUTPUT);
	CHECK(strstr(err.message, "Failed to write /dev/full") != NULL);
}

static void test_open_failure(void)
{
	struct po_json_writer writer;
	struct po_error err = {{0}};

	CHECK_INT_EQ(po_json_writer_open(&writer, "/nonexistent-profopt-dir/x.json", &err),
		     PO_STATUS_OUTPUT);
	CHECK(strstr(err.message, "/nonexistent-profopt-dir/x.json") != NULL);
	CHECK(strstr(err.message, "No such file or directory") != NULL);
}

/* Runs write(writer) and returns close's status; its message in err. */
static enum po_status close_status(void (*write)(struct po_json_writer *writer),
				   struct po_error *err)
{
	struct po_json_writer writer;
	char *text = NULL;
	size_t size = 0;
	FILE *stream = open_memstream(&text, &size);
	enum po_status status;

	CHECK(stream != NULL);
	po_json_writer_init_stream(&writer, stream, "memory");
	write(&writer);
	status = po_json_writer_close(&writer, err);
	fclose(stream);
	free(text);
	return status;
}

static void write_too_deep(struct po_json_writer *writer)
{
	for (int i = 0; i < PO_JSON_MAX_DEPTH + 5; i++)
		po_json_write_begin_array(writer);
	for (int i = 0; i < PO_JSON_MAX_DEPTH + 5; i++)
		po_json_write_end_array(writer);
}

static void write_close_unopened(struct po_json_writer *writer)
{
	po_json_write_begin_object(writer);
	po_json_write_end_object(writer);
	po_json_write_end_array(writer);
}

static void write_key_in_array(struct po_json_writer *writer)
{
	po_json_write_begin_array(writer);
	po_json_write_key(writer, "k");
	po_json_write_int(writer, 1);
	po_json_write_end_array(writer);
}

static void write_left_open(struct po_json_writer *writer)
{
	po_json_write_begin_object(writer);
	po_json_write_key(writer, "k");
}

/*
 * A caller's misuse is checked in every build (not an assert that NDEBUG removes): the
 * writer never indexes past its arrays, and close fails instead of leaving bad JSON.
 */
static void test_misuse(void)
{
	struct po_error err = {{0}};

	CHECK_INT_EQ(close_status(write_too_deep, &err), PO_STATUS_INTERNAL);
	CHECK(strstr(err.message, "nested too deep") != NULL);
	CHECK_INT_EQ(close_status(write_close_unopened, &err), PO_STATUS_INTERNAL);
	CHECK(strstr(err.message, "closed that is not open") != NULL);
	CHECK_INT_EQ(close_status(write_key_in_array, &err), PO_STATUS_INTERNAL);
	CHECK(strstr(err.message, "a key") != NULL);
	CHECK_INT_EQ(close_status(write_left_open, &err), PO_STATUS_INTERNAL);
	CHECK(strstr(err.message, "memory") != NULL);
}

int main(void)
{
	RUN(test_escapes);
	RUN(test_utf8);
	RUN(test_numbers);
	RUN(test_layout);
	RUN(test_full_disk);
	RUN(test_small_write_to_full_disk);
	RUN(test_open_failure);
	RUN(test_misuse);
	return CHECK_SUMMARY();
}
