/*
 * test_report.c: unit tests of the report renderer, and the renderer of the synthetic
 * analyses for the output checks: test_report render normal|hostile|empty OUT_DIR.
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "render_report.h"
#include "report_priv.h"

static char work_dir[256];

static void clean_cases(void)
{
	char out[PO_REPORT_TEXT_MAX];

	po_report_clean("plain text", out, sizeof(out), 120);
	CHECK_STR_EQ(out, "plain text");
	po_report_clean("a\xff"
			"b",
			out, sizeof(out), 120);
	CHECK_STR_EQ(out, "a\xef\xbf\xbd"
			  "b");
	po_report_clean("x\xc3", out, sizeof(out), 120); /* truncated sequence */
	CHECK_STR_EQ(out, "x\xef\xbf\xbd");
	po_report_clean("\xc0\xaf", out, sizeof(out), 120); /* overlong '/' */
	CHECK_STR_EQ(out, "\xef\xbf\xbd\xef\xbf\xbd");
	po_report_clean("\xed\xa0\x80", out, sizeof(out), 120); /* surrogate */
	CHECK(strstr(out, "\xed\xa0") == NULL);
	po_report_clean("a\x01\x1b[31mb\x7f\xc2\x85"
			"c\n",
			out, sizeof(out), 120);
	CHECK_STR_EQ(out, "a[31mbc");
	po_report_clean("h\xc3\xa9llo \xe2\x9c\x93", out, sizeof(out), 120);
	CHECK_STR_EQ(out, "h\xc3\xa9llo \xe2\x9c\x93");
	po_report_clean("abcdefghij", out, sizeof(out), 4);
	CHECK_STR_EQ(out, "abcd\xe2\x80\xa6");
	po_report_clean("abcd", out, sizeof(out), 4);
	CHECK_STR_EQ(out, "abcd");
	po_report_clean(NULL, out, sizeof(out), 4);
	CHECK_STR_EQ(out, "");
	po_report_clean("0123456789", out, 8, 120); /* the buffer bounds it too */
	CHECK(strlen(out) < 8);
}

static void format_cases(void)
{
	char out[32];

	po_report_fmt_ns(12345678, out, sizeof(out));
	CHECK_STR_EQ(out, "12.3 ms");
	po_report_fmt_ns(1520000000, out, sizeof(out));
	CHECK_STR_EQ(out, "1.52 s");
	po_report_fmt_ns(830000, out, sizeof(out));
	CHECK_STR_EQ(out, "830 \xc2\xb5s");
	po_report_fmt_ns(-1, out, sizeof(out));
	CHECK_STR_EQ(out, "n/a");
	po_report_fmt_bytes(3LL << 30, out, sizeof(out));
	CHECK_STR_EQ(out, "3 GiB");
	po_report_fmt_bytes(1536LL << 20, out, sizeof(out));
	CHECK_STR_EQ(out, "1.5 GiB");
	po_report_fmt_bytes(512, out, sizeof(out));
	CHECK_STR_EQ(out, "512 B");
	po_report_fmt_pct(0.4134, out, sizeof(out));
	CHECK_STR_EQ(out, "41.3%");
	CHECK_STR_EQ(po_report_category_key(PO_CAT_DATA_WAIT), "data_wait");
	CHECK_STR_EQ(po_report_finding_key(PO_FINDING_GPU_IDLE), "gpu-idle");
	CHECK_STR_EQ(po_report_verdict_key(PO_VERDICT_INPUT_BOUND), "input-bound");
}

static bool exists(const char *dir, const char *name)
{
	char path[512];
	struct stat info;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0;
}

static void make_dir(char *out, size_t out_size, const char *name)
{
	snprintf(out, out_size, "%s/%s", work_dir, name);
	mkdir(out, 0755);
}

static void render_normal_case(void)
{
	struct po_analysis *analysis = fixture_create(FIXTURE_NORMAL);
	struct po_error err = {{0}};
	char dir[320];

	make_dir(dir, sizeof(dir), "normal");
	CHECK_INT_EQ(po_render_report(analysis, dir, &err), PO_STATUS_OK);
	CHECK_STR_EQ(err.message, "");
	CHECK(exists(dir, "index.html"));
	CHECK(exists(dir, "report.pdf"));
	CHECK(exists(dir, "pipeline.svg"));
	CHECK(exists(dir, "charts/breakdown.svg"));
	CHECK(exists(dir, "charts/timeline-1.svg"));
	CHECK(exists(dir, "charts/timeline-3.svg"));
	CHECK(exists(dir, "charts/histogram.svg"));
	CHECK(exists(dir, "charts/gpu.svg"));
	CHECK(exists(dir, "charts/memory.svg"));
	CHECK(exists(dir, "charts/workers.svg"));
	fixture_destroy(analysis);
}

static void render_empty_case(void)
{
	struct po_analysis *analysis = fixture_create(FIXTURE_EMPTY);
	struct po_error err = {{0}};
	char dir[320];

	make_dir(dir, sizeof(dir), "empty");
	CHECK_INT_EQ(po_render_report(analysis, dir, &err), PO_STATUS_OK);
	CHECK(exists(dir, "index.html"));
	CHECK(exists(dir, "report.pdf"));
	/* No GPU activity: no GPU panel. */
	CHECK(!exists(dir, "charts/gpu.svg"));
	fixture_destroy(analysis);
}

static char *slurp(const char *dir, const char *name, size_t *size)
{
	char path[512];
	FILE *file;
	char *data;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	file = fopen(path, "rb");
	if (!file)
		return NULL;
	fseek(file, 0, SEEK_END);
	*size = (size_t)ftell(file);
	rewind(file);
	data = malloc(*size + 1);
	if (data && fread(data, 1, *size, file) != *size) {
		free(data);
		data = NULL;
	}
	fclose(file);
	return data;
}

static bool same_file(const char *dir_a, const char *dir_b, const char *name)
{
	size_t size_a = 0, size_b = 0;
	char *a = slurp(dir_a, name, &size_a), *b = slurp(dir_b, name, &size_b);
	bool same = a && b && size_a == size_b && memcmp(a, b, size_a) == 0;

	free(a);
	free(b);
	return same;
}

/* Two renders of one analysis are byte for byte the same. */
static void deterministic_case(void)
{
	static const char *const names[] = {"index.html", "pipeline.svg", "charts/breakdown.svg",
					    "charts/timeline-2.svg", "charts/memory.svg"};
	struct po_analysis *analysis = fixture_create(FIXTURE_NORMAL);
	struct po_error err = {{0}};
	char first[320], second[320];

	make_dir(first, sizeof(first), "first");
	make_dir(second, sizeof(second), "second");
	CHECK_INT_EQ(po_render_report(analysis, first, &err), PO_STATUS_OK);
	CHECK_INT_EQ(po_render_report(analysis, second, &err), PO_STATUS_OK);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!same_file(first, second, names[i]))
			fprintf(stderr, "differs between renders: %s\n", names[i]);
		CHECK(same_file(first, second, names[i]));
	}
	fixture_destroy(analysis);
}

static void write_error_case(void)
{
	struct po_analysis *analysis = fixture_create(FIXTURE_NORMAL);
	struct po_chart_list charts;
	struct po_error err = {{0}};
	char dir[320];

	snprintf(dir, sizeof(dir), "%s/missing/dir", work_dir);
	CHECK_INT_EQ(po_render_report(analysis, dir, &err), PO_STATUS_OUTPUT);
	CHECK(strstr(err.message, "Failed to write") != NULL);
	CHECK(strstr(err.message, "Failed to render the report") == err.message);
	/* /dev/full accepts the open and fails the writes: the flush failure must surface. */
	po_error_clear(&err);
	CHECK_INT_EQ(po_report_charts_create(analysis, &charts, &err), PO_STATUS_OK);
	CHECK_INT_EQ(po_report_write_pdf(analysis, &charts, "/dev/full", &err), PO_STATUS_OUTPUT);
	CHECK(strstr(err.message, "Failed to write /dev/full: ") != NULL);
	po_error_clear(&err);
	CHECK_INT_EQ(po_report_write_pipeline(analysis, "/dev/full", &err), PO_STATUS_OUTPUT);
	CHECK(strstr(err.message, "Failed to write /dev/full: ") != NULL);
	po_report_charts_destroy(&charts);
	fixture_destroy(analysis);
}

static int render_main(const char *kind_name, const char *out_dir)
{
	enum fixture_kind kind = strcmp(kind_name, "hostile") == 0	? FIXTURE_HOSTILE
				 : strcmp(kind_name, "empty") == 0	? FIXTURE_EMPTY
				 : strcmp(kind_name, "comparison") == 0 ? FIXTURE_COMPARISON
				 : strcmp(kind_name, "comparison-hostile") == 0
				     ? FIXTURE_COMPARISON_HOSTILE
				     : FIXTURE_NORMAL;
	struct po_analysis *analysis = fixture_create(kind);
	struct po_error err = {{0}};
	enum po_status status = po_render_report(analysis, out_dir, &err);

	if (status != PO_STATUS_OK)
		fprintf(stderr, "test_report: %s\n", err.message);
	fixture_destroy(analysis);
	return status == PO_STATUS_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
	char command[300];

	if (argc == 4 && strcmp(argv[1], "render") == 0)
		return render_main(argv[2], argv[3]);
	snprintf(work_dir, sizeof(work_dir), "%s/po-report-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(work_dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(clean_cases);
	RUN(format_cases);
	RUN(render_normal_case);
	RUN(render_empty_case);
	RUN(deterministic_case);
	RUN(write_error_case);
	snprintf(command, sizeof(command), "rm -rf '%s'", work_dir);
	if (po_check_failures == 0 && system(command) != 0)
		fprintf(stderr, "could not remove %s\n", work_dir);
	return CHECK_SUMMARY();
}
