/*
 * test_comparison.c: unit tests of the report's comparison section: the words and numbers
 * of a comparison, its charts and files, and its absence without a baseline.
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "comparison.h"
#include "fixture.h"
#include "render_report.h"

static char work_dir[256];

static struct po_metric_change metric(const char *name, double old_value, double new_value,
				      int judgement, bool lower_is_better)
{
	struct po_metric_change m = {(enum po_cmp_metric)po_cmp_metric_by_name(name),
				     old_value,
				     new_value,
				     new_value - old_value,
				     old_value != 0 ? 100 * (new_value - old_value) / old_value
						    : NAN,
				     judgement,
				     NAN,
				     NAN,
				     NAN};

	/* The metric by its name; the direction the test expects is the table's. */
	CHECK(po_cmp_metric_by_name(name) >= 0);
	CHECK(po_cmp_metric_lower_is_better(m.metric) == lower_is_better);
	return m;
}

static void badge_cases(void)
{
	struct po_metric_change faster =
	    metric("steps.p50_ms", 100, 80, PO_CHANGE_SIGNIFICANT, true);
	struct po_metric_change slower =
	    metric("steps.p50_ms", 100, 120, PO_CHANGE_SIGNIFICANT, true);
	struct po_metric_change busier =
	    metric("gpu.busy_pct", 50, 80, PO_CHANGE_SIGNIFICANT, false);
	struct po_metric_change noise = metric("steps.p50_ms", 100, 101, PO_CHANGE_NOISE, true);
	struct po_metric_change single =
	    metric("workers.busy_pct", 50, 60, PO_CHANGE_UNTESTED, false);

	CHECK_INT_EQ(po_cmp_badge_of(&faster), PO_CMP_BETTER);
	CHECK_INT_EQ(po_cmp_badge_of(&slower), PO_CMP_WORSE);
	CHECK_INT_EQ(po_cmp_badge_of(&busier), PO_CMP_BETTER);
	CHECK_INT_EQ(po_cmp_badge_of(&noise), PO_CMP_NOISE);
	CHECK_INT_EQ(po_cmp_badge_of(&single), PO_CMP_UNTESTED);
	CHECK_STR_EQ(po_cmp_badge_key(PO_CMP_WORSE), "worse");
	CHECK_INT_EQ(po_cmp_badge_color(PO_CMP_WORSE), PO_COLOR_WARNING);
}

static void format_cases(void)
{
	struct po_metric_change slower =
	    metric("steps.p50_ms", 100, 120, PO_CHANGE_SIGNIFICANT, true);
	struct po_metric_change from_zero =
	    metric("memory.growth_bytes_per_step", 0, 1048576, PO_CHANGE_UNTESTED, true);
	char out[128];

	/* The names are the table's, read both ways. */
	CHECK_INT_EQ(po_cmp_metric_by_name("breakdown.data_wait_ms"),
		     PO_CMP_BREAKDOWN + PO_CAT_DATA_WAIT);
	CHECK_INT_EQ(po_cmp_metric_by_name("breakdown.nothing_ms"), -1);
	CHECK_INT_EQ(po_cmp_metric_by_name("steps.p50_ms"), PO_CMP_STEPS_P50);
	for (int m = 0; m < PO_CMP_METRIC_COUNT; m++)
		CHECK_INT_EQ(po_cmp_metric_by_name(po_cmp_metric_name(m)), m);
	CHECK_INT_EQ(po_cmp_metric_category(PO_CMP_BREAKDOWN + PO_CAT_H2D_COPY), PO_CAT_H2D_COPY);
	CHECK_INT_EQ(po_cmp_metric_category(PO_CMP_STEPS_P50), -1);
	po_cmp_metric_title(PO_CMP_STEPS_P50, out, sizeof(out));
	CHECK_STR_EQ(out, "Median step time");
	po_cmp_metric_title(PO_CMP_BREAKDOWN + PO_CAT_DATA_WAIT, out, sizeof(out));
	CHECK_STR_EQ(out, "Data wait per step");
	po_cmp_fmt_value(PO_CMP_STEPS_P50, 12.345, out, sizeof(out));
	CHECK_STR_EQ(out, "12.35 ms");
	po_cmp_fmt_value(PO_CMP_GPU_BUSY, 81.25, out, sizeof(out));
	CHECK_STR_EQ(out, "81.2%");
	po_cmp_fmt_value(PO_CMP_STEPS_PER_S, 4.2, out, sizeof(out));
	CHECK_STR_EQ(out, "4.20/s");
	po_cmp_fmt_value(PO_CMP_MEMORY_GROWTH, -1048576, out, sizeof(out));
	CHECK_STR_EQ(out, "-1 MiB/step");
	po_cmp_fmt_value(PO_CMP_STEPS_P50, NAN, out, sizeof(out));
	CHECK_STR_EQ(out, "n/a");
	po_cmp_fmt_change(&slower, out, sizeof(out));
	CHECK_STR_EQ(out, "+20.0%");
	po_cmp_fmt_change(&from_zero, out, sizeof(out));
	CHECK_STR_EQ(out, "n/a");
	po_cmp_fmt_interval(&slower, out, sizeof(out));
	CHECK_STR_EQ(out, "\xe2\x80\x94");
	slower.ci_low = 18.5;
	slower.ci_high = 21.25;
	po_cmp_fmt_interval(&slower, out, sizeof(out));
	CHECK_STR_EQ(out, "+18.50 to +21.25 ms");
	po_cmp_verdict_title("gpu-bound", out, sizeof(out));
	CHECK_STR_EQ(out, "GPU-bound");
	po_cmp_finding_title("input-bound", out, sizeof(out));
	CHECK_STR_EQ(out, "The training loop waits for input data");
}

static void summary_cases(void)
{
	struct po_metric_change metrics[1] = {
	    metric("steps.p50_ms", 100, 80, PO_CHANGE_SIGNIFICANT, true)};
	struct po_comparison comparison = {0};
	char out[1024];

	comparison.baseline = "base\x01<b>";
	comparison.old_verdict = "input-bound";
	comparison.new_verdict = "gpu-bound";
	comparison.metrics = metrics;
	comparison.metric_count = 1;
	po_cmp_summary(&comparison, out, sizeof(out));
	CHECK(strstr(out, "20.0% shorter (a 1.25\xc3\x97 speed-up)") != NULL);
	CHECK(strstr(out, "beyond run-to-run noise") != NULL);
	CHECK(strstr(out, "Input-bound \xe2\x86\x92 GPU-bound") != NULL);
	CHECK(strstr(out, "base<b>") != NULL);
	CHECK(strchr(out, '\x01') == NULL);
	po_cmp_headline(&comparison, out, sizeof(out));
	CHECK_STR_EQ(out, "20.0% faster than the baseline");
	metrics[0] = metric("steps.p50_ms", 100, 250, PO_CHANGE_SIGNIFICANT, true);
	po_cmp_headline(&comparison, out, sizeof(out));
	CHECK_STR_EQ(out, "2.50\xc3\x97 slower than the baseline");
	metrics[0].judgement = PO_CHANGE_NOISE;
	po_cmp_summary(&comparison, out, sizeof(out));
	CHECK(strstr(out, "within run-to-run noise") != NULL);
	comparison.metric_count = 0;
	po_cmp_summary(&comparison, out, sizeof(out));
	CHECK(strstr(out, "could not be compared") != NULL);
}

static bool exists(const char *dir, const char *name)
{
	char path[512];
	struct stat info;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0;
}

static bool file_contains(const char *dir, const char *name, const char *needle)
{
	char path[512], *data;
	FILE *file;
	long size;
	bool found = false;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	file = fopen(path, "rb");
	if (!file)
		return false;
	fseek(file, 0, SEEK_END);
	size = ftell(file);
	rewind(file);
	data = calloc((size_t)size + 1, 1);
	if (data && fread(data, 1, (size_t)size, file) == (size_t)size)
		found = strstr(data, needle) != NULL;
	free(data);
	fclose(file);
	return found;
}

static void render(enum fixture_kind kind, const char *name, char *dir, size_t dir_size)
{
	struct po_analysis *analysis = fixture_create(kind);
	struct po_error err = {{0}};

	snprintf(dir, dir_size, "%s/%s", work_dir, name);
	mkdir(dir, 0755);
	CHECK_INT_EQ(po_render_report(analysis, dir, &err), PO_STATUS_OK);
	CHECK_STR_EQ(err.message, "");
	fixture_destroy(analysis);
}

static void render_cases(void)
{
	char dir[320];

	render(FIXTURE_COMPARISON, "comparison", dir, sizeof(dir));
	CHECK(exists(dir, "charts/comparison-breakdown.svg"));
	CHECK(exists(dir, "charts/comparison-latency.svg"));
	CHECK(file_contains(dir, "index.html", "id=\"comparison-section\""));
	CHECK(file_contains(dir, "index.html", "cmp-badge cmp-worse"));
	CHECK(file_contains(dir, "charts/comparison-latency.svg", "<svg"));
	render(FIXTURE_NORMAL, "normal", dir, sizeof(dir));
	CHECK(!exists(dir, "charts/comparison-breakdown.svg"));
	CHECK(!file_contains(dir, "index.html", "comparison"));
	CHECK(!file_contains(dir, "index.html", "cmp-"));
	render(FIXTURE_COMPARISON_HOSTILE, "hostile", dir, sizeof(dir));
	CHECK(exists(dir, "index.html"));
	CHECK(!file_contains(dir, "index.html", "<img"));
	CHECK(!file_contains(dir, "index.html", "<script>alert(3)"));
}

int main(void)
{
	char command[300];

	snprintf(work_dir, sizeof(work_dir), "%s/po-comparison-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(work_dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(badge_cases);
	RUN(format_cases);
	RUN(summary_cases);
	RUN(render_cases);
	snprintf(command, sizeof(command), "rm -rf '%s'", work_dir);
	if (po_check_failures == 0 && system(command) != 0)
		fprintf(stderr, "could not remove %s\n", work_dir);
	return CHECK_SUMMARY();
}
