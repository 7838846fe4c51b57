/*
 * test_render_json.c: summary.json, timeline.json and the text summary of a fixed synthetic
 * analysis. "test_render_json" runs the checks made in C; "test_render_json write DIR"
 * writes the three outputs for check_outputs.py and the golden comparison.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "render_json.h"

static char temp_dir[] = "/tmp/po-render-json-XXXXXX";

/* The whole file (owned by the caller), or NULL. */
static char *read_file(const char *path, size_t *size)
{
	FILE *file = fopen(path, "rb");
	char *bytes;
	long length;

	if (!file)
		return NULL;
	fseek(file, 0, SEEK_END);
	length = ftell(file);
	rewind(file);
	bytes = malloc((size_t)length + 1);
	if (bytes && fread(bytes, 1, (size_t)length, file) != (size_t)length) {
		free(bytes);
		bytes = NULL;
	}
	if (bytes)
		bytes[length] = '\0';
	*size = (size_t)length;
	fclose(file);
	return bytes;
}

typedef enum po_status (*render_fn)(const struct po_analysis *, const char *, struct po_error *);

/* Two analyses built apart (other addresses) must give the same bytes. */
static void check_deterministic(render_fn render, const char *name)
{
	struct po_analysis *first = fixture_create(), *second = fixture_create();
	struct po_error err = {{0}};
	char path_a[128], path_b[128];
	char *bytes_a, *bytes_b;
	size_t size_a = 0, size_b = 0;

	snprintf(path_a, sizeof(path_a), "%s/a-%s", temp_dir, name);
	snprintf(path_b, sizeof(path_b), "%s/b-%s", temp_dir, name);
	CHECK(first && second);
	CHECK_INT_EQ(render(first, path_a, &err), PO_STATUS_OK);
	CHECK_INT_EQ(render(second, path_b, &err), PO_STATUS_OK);
	bytes_a = read_file(path_a, &size_a);
	bytes_b = read_file(path_b, &size_b);
	CHECK(bytes_a && bytes_b && size_a > 100);
	CHECK(size_a == size_b && bytes_a && bytes_b && memcmp(bytes_a, bytes_b, size_a) == 0);
	/* No absolute clock value: the first event's time must not appear. */
	CHECK(bytes_a && !strstr(bytes_a, "1700000000"));
	CHECK(bytes_a && !strstr(bytes_a, "</"));
	free(bytes_a);
	free(bytes_b);
	unlink(path_a);
	unlink(path_b);
	fixture_destroy(first);
	fixture_destroy(second);
}

static void test_summary_deterministic(void)
{
	check_deterministic(po_render_summary_json, "summary.json");
}

static void test_timeline_deterministic(void)
{
	check_deterministic(po_render_timeline_json, "timeline.json");
}

static void check_write_failure(render_fn render, const char *path, const char *expected)
{
	struct po_analysis *analysis = fixture_create();
	struct po_error err = {{0}};

	CHECK_INT_EQ(render(analysis, path, &err), PO_STATUS_OUTPUT);
	CHECK(strstr(err.message, path) != NULL);
	CHECK(strstr(err.message, expected) != NULL);
	if (!strstr(err.message, expected))
		fprintf(stderr, "message: %s\n", err.message);
	fixture_destroy(analysis);
}

static void test_full_disk(void)
{
	check_write_failure(po_render_summary_json, "/dev/full",
			    "Failed to write /dev/full: No space left on device");
	check_write_failure(po_render_timeline_json, "/dev/full",
			    "Failed to write /dev/full: No space left on device");
}

static void test_unwritable_path(void)
{
	check_write_failure(po_render_summary_json, "/nonexistent-profopt-dir/summary.json",
			    "No such file or directory");
	check_write_failure(po_render_timeline_json, "/nonexistent-profopt-dir/timeline.json",
			    "No such file or directory");
}

static char *text_summary(const struct po_analysis *analysis)
{
	char *text = NULL;
	size_t size = 0;
	FILE *stream = open_memstream(&text, &size);

	if (!stream)
		return NULL;
	po_render_text_summary(analysis, stream);
	fclose(stream);
	return text;
}

static void test_text_summary(void)
{
	struct po_analysis *analysis = fixture_create();
	char *text = text_summary(analysis);
	const char *quality, *verdict, *c;

	CHECK(text != NULL);
	if (!text)
		return;
	quality = strstr(text, "Trace quality:");
	verdict = strstr(text, "Verdict: input-bound");
	CHECK(quality != NULL && verdict != NULL && quality < verdict);
	CHECK(strstr(text, "Steps: 4 (3 clean): mean 100.000 ms") != NULL);
	CHECK(strstr(text, "  profopt's own CPU time: 1.000 ms per step (1.0% of the mean steady "
			   "step); 0.200 ms in 1 recorded processes; 0.800 ms in the recorder\n") !=
	      NULL);
	CHECK(strstr(text, "  data_wait") != NULL);
	CHECK(strstr(text, "critical input-bound (confidence 0.90)") != NULL);
	CHECK(strstr(text, "-> set num_workers=6 (predicted 40.000 ms/step, 2.50x)") != NULL);
	/* Every recommendation of a finding, in order. */
	CHECK(strstr(text, "pin_memory") != NULL &&
	      strstr(text, "pin_memory") > strstr(text, "-> set num_workers=6"));
	for (c = text; *c; c++) {
		if ((unsigned char)*c < 0x20 && *c != '\n')
			break;
	}
	CHECK(*c == '\0');
	free(text);
	fixture_destroy(analysis);
}

static void test_text_summary_without_steps(void)
{
	struct po_analysis *analysis = fixture_create();
	char *text;

	analysis->step_stats.clean_count = 0;
	analysis->warning_count = 0;
	analysis->diagnosis.finding_count = 0;
	analysis->diagnosis.verdict = PO_VERDICT_UNKNOWN;
	analysis->self_cost.per_step_ns = NAN; /* no step to spread it over */
	text = text_summary(analysis);
	CHECK(text && strncmp(text, "Verdict: unknown\n", 17) == 0);
	CHECK(text && strstr(text, "no clean step") != NULL);
	CHECK(text && strstr(text, "Findings: none") != NULL);
	free(text);
	fixture_destroy(analysis);
}

static void check_parts_sum(const double *parts_ns, double total_ns)
{
	int64_t parts_us[PO_CATEGORY_COUNT], total_us, sum_us = 0;
	int category;

	po_render_round_parts_us(parts_ns, total_ns, parts_us, &total_us);
	for (category = 0; category < PO_CATEGORY_COUNT; category++)
		sum_us += parts_us[category];
	CHECK_INT_EQ(sum_us, total_us);
}

static void test_breakdown_rounding(void)
{
	double parts_ns[PO_CATEGORY_COUNT] = {0};
	int64_t parts_us[PO_CATEGORY_COUNT], total_us;
	int category;

	/* A part of 0.6 us per category: each rounds up, the total (0.6 us each) less. */
	for (category = 0; category < PO_CATEGORY_COUNT; category++)
		parts_ns[category] = 600;
	check_parts_sum(parts_ns, 600.0 * PO_CATEGORY_COUNT);
	po_render_round_parts_us(parts_ns, 600.0 * PO_CATEGORY_COUNT, parts_us, &total_us);
	CHECK_INT_EQ(total_us, (600 * PO_CATEGORY_COUNT + 500) / 1000);
	/* The first total_us in category order get the microsecond; none goes negative. */
	CHECK_INT_EQ(parts_us[0], 1);
	CHECK_INT_EQ(parts_us[total_us - 1], 1);
	CHECK_INT_EQ(parts_us[total_us], 0);
	memset(parts_ns, 0, sizeof(parts_ns));
	parts_ns[PO_CAT_DATA_WAIT] = 3333400;
	parts_ns[PO_CAT_FORWARD] = 3333500;
	parts_ns[PO_CAT_BACKWARD] = 3333500;
	check_parts_sum(parts_ns, 10000400);
	po_render_round_parts_us(parts_ns, 10000400, parts_us, &total_us);
	/* Equal remainders: the first in category order is rounded up. */
	CHECK_INT_EQ(parts_us[PO_CAT_DATA_WAIT], 3333);
	CHECK_INT_EQ(parts_us[PO_CAT_BACKWARD], 3334);
	CHECK_INT_EQ(parts_us[PO_CAT_FORWARD], 3333);
}

/* An analysis with nothing in it: no step, process, GPU or finding, times unknown. */
static struct po_analysis *empty_create(void)
{
	struct po_arena *arena = po_arena_create();
	struct po_analysis *analysis = arena ? po_arena_alloc(arena, sizeof(*analysis)) : NULL;

	if (!analysis) {
		po_arena_destroy(arena);
		return NULL;
	}
	analysis->arena = arena;
	analysis->cpu_count = -1;
	analysis->main_pid = -1;
	analysis->quality.first_ns = -1;
	analysis->quality.last_ns = -1;
	analysis->memory =
	    (struct po_memory){.host_peak_bytes = -1, .gpu_peak_bytes = -1, .rss_peak_bytes = -1};
	analysis->step_stats.samples_per_s = -1;
	analysis->diagnosis.verdict = PO_VERDICT_UNKNOWN;
	return analysis;
}

/* The empty analysis's outputs, for check_outputs.py. */
static int write_empty_outputs(const char *dir)
{
	struct po_analysis *analysis = empty_create();
	struct po_error err = {{0}};
	char path[4096];
	int failed = !analysis;

	snprintf(path, sizeof(path), "%s/empty-summary.json", dir);
	failed |= analysis && po_render_summary_json(analysis, path, &err) != PO_STATUS_OK;
	snprintf(path, sizeof(path), "%s/empty-timeline.json", dir);
	failed |= analysis && po_render_timeline_json(analysis, path, &err) != PO_STATUS_OK;
	if (analysis)
		po_arena_destroy(analysis->arena);
	if (failed)
		fprintf(stderr, "test_render_json: %s\n", err.message);
	return failed;
}

static int write_outputs(const char *dir)
{
	struct po_analysis *analysis = fixture_create();
	struct po_error err = {{0}};
	char path[4096];
	FILE *text;
	int failed = 0;

	snprintf(path, sizeof(path), "%s/summary.json", dir);
	failed |= po_render_summary_json(analysis, path, &err) != PO_STATUS_OK;
	snprintf(path, sizeof(path), "%s/timeline.json", dir);
	failed |= po_render_timeline_json(analysis, path, &err) != PO_STATUS_OK;
	snprintf(path, sizeof(path), "%s/summary.txt", dir);
	text = fopen(path, "w");
	if (text) {
		po_render_text_summary(analysis, text);
		failed |= fclose(text) != 0;
	}
	fixture_destroy(analysis);
	if (failed || !text)
		fprintf(stderr, "test_render_json: %s\n", err.message[0] ? err.message : path);
	return failed || !text;
}

int main(int argc, char **argv)
{
	int result;

	if (argc == 3 && strcmp(argv[1], "write") == 0)
		return write_outputs(argv[2]) | write_empty_outputs(argv[2]);
	if (!mkdtemp(temp_dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_summary_deterministic);
	RUN(test_timeline_deterministic);
	RUN(test_full_disk);
	RUN(test_unwritable_path);
	RUN(test_text_summary);
	RUN(test_text_summary_without_steps);
	RUN(test_breakdown_rounding);
	result = CHECK_SUMMARY();
	rmdir(temp_dir);
	return result;
}
