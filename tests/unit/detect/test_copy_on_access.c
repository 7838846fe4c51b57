/*
 * test_copy_on_access.c: worker-copy-on-access on synthetic analyses. Workers whose unique
 * sets grow while their resident sets stay flat copy what they read of their parent: the
 * finding states the growth of the workers alive together, per worker and against the
 * machine's memory, graded by that share. Workers that allocate what they grow by (a cache,
 * a leak), workers that un-share a few MiB by themselves, non-persistent workers of
 * different epochs (never alive together) and workers without memory-set samples do not
 * add up to one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "synth.h"

static struct po_rules rules;

static const struct synth_breakdown loop = {
    .ms = {[PO_CAT_FORWARD] = 4, [PO_CAT_BACKWARD] = 6, [PO_CAT_DATA_WAIT] = 1}};

static void run_detect(struct po_analysis *analysis)
{
	struct po_error err = {{0}};

	CHECK_INT_EQ(po_detect_run(analysis, &rules, &err), PO_STATUS_OK);
}

/* A 200-step run whose training process maps 800 MiB, 600 MiB of it proportionally. */
static struct po_analysis *run_create(int64_t machine_mib)
{
	struct po_analysis *analysis = synth_create(200, &loop, 2);
	struct po_process *main = &analysis->processes[0];

	analysis->main_pid = main->pid;
	main->last_ns = po_analysis_step(analysis, 199).end_ns;
	main->sets = PO_MEMORY_SETS_UNKNOWN;
	main->sets.pss_peak_bytes = 600 * SYNTH_MIB;
	analysis->memory.machine_bytes = machine_mib > 0 ? machine_mib * SYNTH_MIB : -1;
	return analysis;
}

/*
 * A worker alive over [first_ms, last_ms] of the run whose unique set grows from 4 MiB by
 * private_mib while its resident set grows from 700 MiB by rss_mib.
 */
static void add_worker(struct po_analysis *analysis, int64_t first_ms, int64_t last_ms,
		       int64_t private_mib, int64_t rss_mib)
{
	int64_t begin_ns = analysis->processes[0].first_ns;
	struct po_process *worker = &analysis->processes[analysis->process_count];

	*worker =
	    (struct po_process){.pid = 200 + (int32_t)analysis->process_count,
				.role = PO_ROLE_WORKER,
				.worker_id = (int64_t)analysis->process_count - 1,
				.parent_pid = 100,
				.first_ns = begin_ns + first_ms * SYNTH_MS,
				.last_ns = begin_ns + last_ms * SYNTH_MS,
				.sets = {.pss_first_bytes = 150 * SYNTH_MIB,
					 .pss_last_bytes = 300 * SYNTH_MIB,
					 .pss_peak_bytes = 300 * SYNTH_MIB,
					 .uss_first_bytes = 4 * SYNTH_MIB,
					 .uss_last_bytes = (4 + private_mib) * SYNTH_MIB,
					 .uss_peak_bytes = (4 + private_mib) * SYNTH_MIB,
					 .rss_at_uss_first_bytes = 700 * SYNTH_MIB,
					 .rss_at_uss_peak_bytes = (700 + rss_mib) * SYNTH_MIB}};
	analysis->process_count++;
}

static void add_workers(struct po_analysis *analysis, int count, int64_t private_mib,
			int64_t rss_mib)
{
	for (int i = 0; i < count; i++)
		add_worker(analysis, 10, 2000, private_mib, rss_mib);
}

/* Four workers copy 160 MiB each of a list of Python objects; 24 GiB of memory: info. */
static void test_list_of_objects(void)
{
	struct po_analysis *analysis = run_create(24 * 1024);
	const struct po_finding *finding;
	const struct po_recommendation *stopgap;

	add_workers(analysis, 4, 160, 5);
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_WORKER_COPY_ON_ACCESS);
	CHECK(finding != NULL);
	if (!finding)
		goto end;
	CHECK_INT_EQ(finding->severity, PO_SEVERITY_INFO);
	CHECK_INT_EQ(synth_evidence(finding, "private_growth_bytes")->integer, 640 * SYNTH_MIB);
	CHECK_INT_EQ(synth_evidence(finding, "num_workers")->integer, 4);
	CHECK_NEAR(synth_number(finding, "private_growth_per_worker_mib"), 160, 1e-9);
	CHECK_NEAR(synth_number(finding, "largest_worker_growth_mib"), 160, 1e-9);
	CHECK_NEAR(synth_number(finding, "unshared_pct"), 100.0 * 155 / 160, 1e-9);
	CHECK_NEAR(synth_number(finding, "worker_rss_growth_mib"), 20, 1e-9);
	CHECK_NEAR(synth_number(finding, "machine_pct"), 100.0 * 640 / (24 * 1024), 1e-9);
	CHECK_NEAR(synth_number(finding, "job_pss_mib"), 600 + 4 * 300, 1e-9);
	CHECK(synth_rec(finding, "dataset_storage") != NULL);
	stopgap = synth_rec(finding, "num_workers");
	CHECK(stopgap != NULL && strstr(stopgap->action, "num_workers=3") != NULL);
	CHECK(synth_finding(analysis, PO_FINDING_HOST_MEMORY_GROWTH) == NULL);
end:
	synth_destroy(analysis);
}

/* The same copies on smaller machines: a warning at 31%, critical at 62%. */
static void test_graded_by_machine(void)
{
	static const struct {
		int64_t machine_mib;
		enum po_severity severity;
	} cases[] = {{2048, PO_SEVERITY_WARNING}, {1024, PO_SEVERITY_CRITICAL}};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct po_analysis *analysis = run_create(cases[i].machine_mib);
		const struct po_finding *finding;

		add_workers(analysis, 4, 160, 5);
		run_detect(analysis);
		finding = synth_finding(analysis, PO_FINDING_WORKER_COPY_ON_ACCESS);
		CHECK(finding != NULL && finding->severity == cases[i].severity);
		synth_destroy(analysis);
	}
}

/* Without the machine's memory (an older recording) the share is unknown: a warning. */
static void test_machine_unknown(void)
{
	struct po_analysis *analysis = run_create(-1);
	const struct po_finding *finding;

	add_workers(analysis, 2, 100, 0);
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_WORKER_COPY_ON_ACCESS);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_INT_EQ(finding->severity, PO_SEVERITY_WARNING);
		CHECK(isnan(synth_number(finding, "machine_pct")));
		CHECK(isnan(synth_number(finding, "machine_memory_mib")));
	}
	synth_destroy(analysis);
}

/* Four workers growing by private_mib while their resident sets grow by rss_mib: nothing. */
static void check_no_finding(int64_t private_mib, int64_t rss_mib)
{
	struct po_analysis *analysis = run_create(24 * 1024);

	add_workers(analysis, 4, private_mib, rss_mib);
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_WORKER_COPY_ON_ACCESS) == NULL);
	synth_destroy(analysis);
}

/*
 * Workers that allocate what they grow by (a cache of decoded samples) are memory-growth's;
 * workers reading a numpy array un-share a few MiB by themselves, below min_mib.
 */
static void test_not_copies(void)
{
	check_no_finding(160, 150);
	check_no_finding(5, 0);
}

/*
 * Non-persistent workers: three epochs of two workers, each copying 100 MiB and exiting at
 * the epoch's end. The sawtooth never holds more than one epoch's copies: 200 MiB, not 600.
 */
static void test_nonpersistent_sawtooth(void)
{
	struct po_analysis *analysis = run_create(24 * 1024);
	const struct po_finding *finding;

	for (int64_t epoch = 0; epoch < 3; epoch++) {
		add_worker(analysis, 10 + 700 * epoch, 600 + 700 * epoch, 100, 0);
		add_worker(analysis, 10 + 700 * epoch, 600 + 700 * epoch, 100, 0);
	}
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_WORKER_COPY_ON_ACCESS);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_INT_EQ(synth_evidence(finding, "private_growth_bytes")->integer,
			     200 * SYNTH_MIB);
		CHECK_INT_EQ(synth_evidence(finding, "num_workers")->integer, 2);
	}
	synth_destroy(analysis);
}

/* Workers without memory-set samples (a recording without them): nothing to say. */
static void test_not_sampled(void)
{
	struct po_analysis *analysis = run_create(24 * 1024);

	add_workers(analysis, 4, 160, 0);
	for (size_t i = 1; i < analysis->process_count; i++)
		analysis->processes[i].sets = PO_MEMORY_SETS_UNKNOWN;
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_WORKER_COPY_ON_ACCESS) == NULL);
	synth_destroy(analysis);
}

int main(void)
{
	po_rules_init(&rules);
	RUN(test_list_of_objects);
	RUN(test_graded_by_machine);
	RUN(test_machine_unknown);
	RUN(test_not_copies);
	RUN(test_nonpersistent_sawtooth);
	RUN(test_not_sampled);
	return CHECK_SUMMARY();
}
