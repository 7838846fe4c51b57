/*
 * test_rules.c: the rules table, --set assignments and rules files, with errors naming
 * the rule, the file and the line.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "rules.h"

/* A thread's first use of the table: every rule's range holds its default. */
static void *first_use(void *arg)
{
	struct po_rules rules;
	size_t count, bad = 0;
	const struct po_rule_info *infos;

	po_rules_init(&rules);
	infos = po_rule_infos(&count);
	for (size_t i = 0; i < count; i++)
		bad += !(infos[i].lowest <= infos[i].default_value &&
			 infos[i].default_value <= infos[i].highest);
	*(size_t *)arg = bad;
	return NULL;
}

/*
 * Threads that use the rules for the first time at once see the table filled once and
 * whole (run first, before anything else fills it; PROFOPT_SANITIZE=thread reports a race).
 */
static void test_first_use_in_threads(void)
{
	pthread_t threads[8];
	size_t bad[8] = {0};

	for (int i = 0; i < 8; i++)
		CHECK_INT_EQ(pthread_create(&threads[i], NULL, first_use, &bad[i]), 0);
	for (int i = 0; i < 8; i++) {
		CHECK_INT_EQ(pthread_join(threads[i], NULL), 0);
		CHECK_INT_EQ(bad[i], 0);
	}
}

static void test_defaults(void)
{
	struct po_rules rules;

	po_rules_init(&rules);
	CHECK_NEAR(rules.input_bound_warning_pct, 5, 0);
	CHECK_NEAR(rules.input_bound_critical_pct, 20, 0);
	CHECK_NEAR(rules.input_bound_min_steps, 20, 0);
	CHECK_NEAR(rules.gpu_idle_min_gap_ms, 1, 0);
	CHECK_NEAR(rules.verdict_gpu_bound_pct, 80, 0);
}

static void test_table_unique(void)
{
	size_t count, duplicates = 0;
	const struct po_rule_info *infos = po_rule_infos(&count);

	CHECK(count > 20);
	for (size_t i = 0; i < count; i++) {
		for (size_t j = i + 1; j < count; j++) {
			if (strcmp(infos[i].rule, infos[j].rule) == 0 &&
			    strcmp(infos[i].key, infos[j].key) == 0)
				duplicates++;
		}
		CHECK(infos[i].doc[0] && infos[i].source[0] && infos[i].unit[0]);
	}
	CHECK_INT_EQ(duplicates, 0);
}

static void test_set(void)
{
	struct po_rules rules, before;
	struct po_error err = {{0}};

	po_rules_init(&rules);
	CHECK_INT_EQ(po_rules_set(&rules, "input-bound.warning_pct=10", &err), PO_STATUS_OK);
	CHECK_NEAR(rules.input_bound_warning_pct, 10, 0);
	CHECK_INT_EQ(po_rules_set(&rules, " gpu-idle.min_gap_ms = 2.5 ", &err), PO_STATUS_OK);
	CHECK_NEAR(rules.gpu_idle_min_gap_ms, 2.5, 0);
	before = rules;
	CHECK_INT_EQ(po_rules_set(&rules, "input-bound.nope=1", &err), PO_STATUS_USAGE);
	CHECK(strstr(err.message, "input-bound.nope") != NULL);
	CHECK_INT_EQ(po_rules_set(&rules, "input-bound.warning_pct=abc", &err), PO_STATUS_USAGE);
	CHECK(strstr(err.message, "input-bound.warning_pct") && strstr(err.message, "abc"));
	CHECK_INT_EQ(po_rules_set(&rules, "input-bound.warning_pct=-1", &err), PO_STATUS_USAGE);
	CHECK_INT_EQ(po_rules_set(&rules, "input-bound.warning_pct=nan", &err), PO_STATUS_USAGE);
	CHECK_INT_EQ(po_rules_set(&rules, "input-bound.warning_pct", &err), PO_STATUS_USAGE);
	CHECK_INT_EQ(po_rules_set(&rules, "input-bound.warning_pctx=1", &err), PO_STATUS_USAGE);
	CHECK_INT_EQ(po_rules_set(&rules, "input-bound=1", &err), PO_STATUS_USAGE);
	CHECK_INT_EQ(po_rules_set(&rules, "=1", &err), PO_STATUS_USAGE);
	CHECK(memcmp(&before, &rules, sizeof(rules)) == 0);
}

/* Every rule has a valid range from its unit; values outside, or fractions of a count, fail. */
static void test_ranges(void)
{
	struct po_rules rules, before;
	struct po_error err = {{0}};
	size_t count;
	const struct po_rule_info *infos = po_rule_infos(&count);

	po_rules_init(&rules);
	before = rules;
	CHECK_INT_EQ(po_rules_set(&rules, "input-bound.max_workers=1e12", &err), PO_STATUS_USAGE);
	CHECK(strstr(err.message, "input-bound.max_workers") && strstr(err.message, "1024"));
	CHECK_INT_EQ(po_rules_set(&rules, "input-bound.max_workers=2.5", &err), PO_STATUS_USAGE);
	CHECK_INT_EQ(po_rules_set(&rules, "input-bound.max_workers=0", &err), PO_STATUS_USAGE);
	CHECK_INT_EQ(po_rules_set(&rules, "input-bound.warning_pct=101", &err), PO_STATUS_USAGE);
	CHECK_INT_EQ(po_rules_set(&rules, "memory-growth.projection_steps=1e300", &err),
		     PO_STATUS_USAGE);
	CHECK(memcmp(&before, &rules, sizeof(rules)) == 0);
	CHECK_INT_EQ(po_rules_set(&rules, "input-bound.max_workers=1024", &err), PO_STATUS_OK);
	CHECK_INT_EQ(po_rules_set(&rules, "step-outliers.min_excess_pct=250", &err), PO_STATUS_OK);
	/* the range the error states is exact: its maximum is accepted as printed */
	CHECK_INT_EQ(po_rules_set(&rules, "unfreed-allocations.min_mib=2e6", &err),
		     PO_STATUS_USAGE);
	CHECK(strstr(err.message, "from 0 to 1048576 (MiB)") != NULL);
	CHECK_INT_EQ(po_rules_set(&rules, "unfreed-allocations.min_mib=1048576", &err),
		     PO_STATUS_OK);
	for (size_t i = 0; i < count; i++) {
		CHECK(infos[i].lowest <= infos[i].default_value &&
		      infos[i].default_value <= infos[i].highest);
		CHECK(!infos[i].whole ||
		      infos[i].default_value == (double)(int64_t)infos[i].default_value);
	}
}

static char *write_file(const char *text)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/po-rules-test.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return NULL;
	}
	close(fd);
	return path;
}

static void test_load(void)
{
	struct po_rules rules;
	struct po_error err = {{0}};
	char expected[128];
	char *path = write_file("# thresholds for CI\n\n  input-bound.warning_pct = 12 # stricter\n"
				"memory-growth.min_r2=0.5\n");

	CHECK(path != NULL);
	if (!path)
		return;
	po_rules_init(&rules);
	CHECK_INT_EQ(po_rules_load(&rules, path, &err), PO_STATUS_OK);
	CHECK_NEAR(rules.input_bound_warning_pct, 12, 0);
	CHECK_NEAR(rules.memory_growth_min_r2, 0.5, 0);
	unlink(path);

	path = write_file("input-bound.warning_pct=7\n# ok\nstep-outliers.mad_k=x\n");
	po_rules_init(&rules);
	CHECK_INT_EQ(po_rules_load(&rules, path, &err), PO_STATUS_USAGE);
	snprintf(expected, sizeof(expected), "%s:3: ", path);
	CHECK(strncmp(err.message, expected, strlen(expected)) == 0);
	CHECK(strstr(err.message, "step-outliers.mad_k") != NULL);
	CHECK_NEAR(rules.input_bound_warning_pct, 5, 0); /* unchanged on failure */
	unlink(path);

	path = write_file("bogus line\n");
	CHECK_INT_EQ(po_rules_load(&rules, path, &err), PO_STATUS_USAGE);
	snprintf(expected, sizeof(expected), "%s:1: ", path);
	CHECK(strncmp(err.message, expected, strlen(expected)) == 0);
	unlink(path);

	CHECK_INT_EQ(po_rules_load(&rules, "/nonexistent/rules.conf", &err), PO_STATUS_USAGE);
	CHECK(strstr(err.message, "/nonexistent/rules.conf") != NULL);
}

int main(void)
{
	RUN(test_first_use_in_threads); /* first: nothing has filled the table yet */
	RUN(test_defaults);
	RUN(test_table_unique);
	RUN(test_set);
	RUN(test_ranges);
	RUN(test_load);
	return CHECK_SUMMARY();
}
