/* test_json_checks.c: the JSON reader refuses numbers a summary.json may not hold. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "compare/json_read.h"

static enum po_status parse(const char *text, struct po_error *err)
{
	struct po_arena *arena = po_arena_create();
	struct po_json_value *root = NULL;
	enum po_status status;

	memset(err, 0, sizeof(*err));
	status = po_json_parse(text, strlen(text), arena, &root, err);
	po_arena_destroy(arena);
	return status;
}

/* text fails, and the message holds each of the given fragments. */
static void expect_refused(const char *text, const char *member, const char *why)
{
	struct po_error err;

	CHECK_INT_EQ(parse(text, &err), PO_STATUS_INPUT);
	CHECK(strstr(err.message, member) != NULL);
	CHECK(strstr(err.message, why) != NULL);
	CHECK(strchr(err.message, '\n') == NULL);
	fprintf(stderr, "  %s\n", err.message);
}

static void expect_accepted(const char *text)
{
	struct po_error err;

	CHECK_INT_EQ(parse(text, &err), PO_STATUS_OK);
	CHECK_STR_EQ(err.message, "");
}

static void test_not_finite(void)
{
	/* Anywhere, under any name: profopt writes null for a number that is not finite. */
	expect_refused("{\"steps\": {\"p50_ms\": 1e999}}", "steps.p50_ms is 1e999",
		       "not a finite number");
	expect_refused("{\"comparison\": {\"metrics\": [{\"delta\": -1e400}]}}",
		       "comparison.metrics[0].delta is -1e400", "not a finite number");
	expect_refused("[1, 2, 1e999]", "[2] is 1e999", "not a finite number");
	expect_refused("1e999", "the value is 1e999", "not a finite number");
}

static void test_ranges(void)
{
	expect_refused("{\"step_series\": [{\"wall_ms\": 1}, {\"wall_ms\": -0.5}]}",
		       "step_series[1].wall_ms is -0.5", "not a time in ms");
	expect_refused("{\"step_series\": [{\"categories_ms\": {\"load\": -2}}]}",
		       "step_series[0].categories_ms.load is -2", "not a time in ms");
	expect_refused("{\"breakdown_ms\": {\"forward\": 2e12}}", "breakdown_ms.forward is 2e12",
		       "0 to 1e12");
	expect_refused("{\"workers\": [{\"busy_pct\": 100.5}]}", "workers[0].busy_pct is 100.5",
		       "not a share in percent");
	expect_refused("{\"gpu\": [{\"window_busy_pct\": -1}]}", "gpu[0].window_busy_pct is -1",
		       "0 to 100");
	expect_refused("{\"steps\": {\"count\": 3.5}}", "steps.count is 3.5", "not a count");
	expect_refused("{\"steps\": {\"count\": 1e17}}", "steps.count is 1e17", "2^53");
	expect_refused("{\"findings\": [{\"confidence\": 1.5}]}", "findings[0].confidence is 1.5",
		       "not a fraction");
	expect_refused("{\"step_series\": [{\"rss_bytes\": -4096}]}",
		       "step_series[0].rss_bytes is -4096", "not a size in bytes");
}

static void test_valid_values(void)
{
	/* The limits themselves, -0, and numbers whose meaning allows any sign. */
	expect_accepted("{\"steps\": {\"p50_ms\": 0, \"count\": 9007199254740992, "
			"\"steps_per_s\": 1e12}, \"workers\": [{\"busy_pct\": 100}], "
			"\"step_series\": [{\"wall_ms\": -0, \"index\": -3, \"flags\": []}], "
			"\"comparison\": {\"metrics\": [{\"delta\": -12.5, \"delta_pct\": -40}]}, "
			"\"memory\": {\"growth_bytes_per_step\": -100}, \"findings\": "
			"[{\"confidence\": 1, \"evidence\": {\"slope_ms\": -3}}]}");
	/* The same member names elsewhere are not the rules' members. */
	expect_accepted("{\"other\": {\"steps\": {\"p50_ms\": -1}}, \"wall_ms\": -1}");
}

static void test_deep_nesting(void)
{
	char text[1024];
	size_t used = 0;

	/* Below a rule's last member (categories_ms.*), no rule applies. */
	expect_accepted(
	    "{\"step_series\": [{\"categories_ms\": {\"load\": {\"x\": [{\"y\": -1}]}}}]}");
	/* Deep, and within the reader's limit of 64 levels. */
	for (int i = 0; i < 30; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "{\"step_series\":[");
	used += (size_t)snprintf(text + used, sizeof(text) - used, "-1");
	for (int i = 0; i < 30; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "]}");
	expect_accepted(text);
}

int main(void)
{
	RUN(test_not_finite);
	RUN(test_ranges);
	RUN(test_valid_values);
	RUN(test_deep_nesting);
	return CHECK_SUMMARY();
}
