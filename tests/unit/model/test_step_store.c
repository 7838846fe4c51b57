/* test_step_store.c: the step store (cached chunks over a temporary file), alone and in the model.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "builder.h"
#include "step_store.h"

#define MAIN_PID 100
#define MANY_STEPS (20 * PO_STEP_CHUNK_STEPS + 17) /* far more than the cache holds */
#define CACHE_BYTES ((size_t)PO_STEP_CACHE_CHUNKS * PO_STEP_CHUNK_STEPS * sizeof(struct po_step))

/* A step whose every field follows from its index; begin_ns repeats in pairs. */
static struct po_step step_of(size_t i)
{
	struct po_step step = {.index = (int64_t)i,
			       .epoch = (int64_t)(i / 1000),
			       .batch_size = 32,
			       .begin_ns = (int64_t)(i / 2) * 10,
			       .end_ns = (int64_t)(i / 2) * 10 + 10,
			       .worker_pid = (int32_t)(i % 7),
			       .gpu_busy_ns = (int64_t)i * 3,
			       .rss_bytes = (int64_t)i << 20,
			       .flags = (uint32_t)(i % 3)};

	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		step.category_ns[c] = (int64_t)(i * 13 + (size_t)c);
	return step;
}

static bool same_step(const struct po_step *a, const struct po_step *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

static struct po_step_store *filled_store(size_t count)
{
	struct po_step_store *store = NULL;

	CHECK(po_step_store_create(&store) == PO_STATUS_OK);
	for (size_t i = 0; store && i < count; i++) {
		struct po_step step = step_of(i);

		CHECK(po_step_store_append(store, &step) == PO_STATUS_OK);
	}
	return store;
}

static void sequential_and_random_reads(void)
{
	struct po_step_store *store = filled_store(MANY_STEPS);
	struct po_error err = {{0}};
	uint64_t state = 12345;
	size_t wrong = 0;

	CHECK_INT_EQ(po_step_store_count(store), MANY_STEPS);
	for (size_t i = 0; i < MANY_STEPS; i++) {
		struct po_step expected = step_of(i), actual = po_step_store_get(store, i);

		wrong += !same_step(&expected, &actual);
	}
	for (int k = 0; k < 5000; k++) {
		size_t i;
		struct po_step expected, actual;

		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		i = (size_t)(state >> 33) % MANY_STEPS;
		expected = step_of(i);
		actual = po_step_store_get(store, i);
		wrong += !same_step(&expected, &actual);
	}
	CHECK_INT_EQ(wrong, 0);
	/* memory stays at the cache, whatever the count */
	CHECK(po_step_store_bytes(store) < CACHE_BYTES + 16384);
	CHECK(po_step_store_check(store, &err) == PO_STATUS_OK);
	po_step_store_destroy(store);
}

static void edits_of_evicted_steps(void)
{
	struct po_step_store *store = filled_store(MANY_STEPS);
	const size_t edited[] = {0,
				 5,
				 PO_STEP_CHUNK_STEPS - 1,
				 PO_STEP_CHUNK_STEPS,
				 7 * PO_STEP_CHUNK_STEPS + 3,
				 MANY_STEPS - 1};
	size_t count = sizeof(edited) / sizeof(edited[0]);
	struct po_step step;

	for (size_t k = 0; k < count; k++) {
		po_step_store_edit(store, edited[k])->gpu_busy_ns = -7 - (int64_t)k;
		/* evict everything by reading the far end, then edit again */
		for (size_t i = 0; i < MANY_STEPS; i += PO_STEP_CHUNK_STEPS)
			(void)po_step_store_get(store, (edited[k] + i) % MANY_STEPS);
		po_step_store_edit(store, edited[k])->flags |= 0x40u;
	}
	for (size_t i = 0; i < MANY_STEPS; i += PO_STEP_CHUNK_STEPS / 2)
		(void)po_step_store_get(store, i);
	for (size_t k = 0; k < count; k++) {
		step = po_step_store_get(store, edited[k]);
		CHECK_INT_EQ(step.gpu_busy_ns, -7 - (int64_t)k);
		CHECK_INT_EQ(step.flags, (edited[k] % 3) | 0x40u);
		CHECK_INT_EQ(step.index, (int64_t)edited[k]);
	}
	step = po_step_store_get(store, 6);
	CHECK_INT_EQ(step.gpu_busy_ns, 18); /* untouched neighbour */
	po_step_store_destroy(store);
}

static void upper_bound_matches_a_scan(void)
{
	struct po_step_store *store = filled_store(MANY_STEPS);
	size_t wrong = 0;

	for (int64_t time_ns = -5; time_ns < (int64_t)MANY_STEPS * 5 + 20; time_ns += 7) {
		size_t expected = 0;

		while (expected < MANY_STEPS && step_of(expected).begin_ns <= time_ns)
			expected++;
		wrong += po_step_store_upper_bound(store, time_ns) != expected;
	}
	CHECK_INT_EQ(wrong, 0);
	po_step_store_destroy(store);
}

static void truncate_then_append(void)
{
	struct po_step_store *store = filled_store(3 * PO_STEP_CHUNK_STEPS + 10);
	struct po_step step = step_of(999999);

	po_step_store_truncate(store, 2 * PO_STEP_CHUNK_STEPS + 1);
	CHECK_INT_EQ(po_step_store_count(store), 2 * PO_STEP_CHUNK_STEPS + 1);
	CHECK(po_step_store_append(store, &step) == PO_STATUS_OK);
	step = po_step_store_get(store, 2 * PO_STEP_CHUNK_STEPS + 1);
	CHECK_INT_EQ(step.index, 999999);
	step = po_step_store_get(store, 2 * PO_STEP_CHUNK_STEPS);
	CHECK_INT_EQ(step.index, 2 * PO_STEP_CHUNK_STEPS);
	po_step_store_destroy(store);
}

/* A temporary directory that cannot be used: a clean status with its cause, no crash. */
static void failing_temporary_directory(void)
{
	struct po_step_store *store;
	struct po_error err = {{0}};
	const char *saved = getenv("TMPDIR");
	char *old = saved ? strdup(saved) : NULL;

	setenv("TMPDIR", "/nonexistent/profopt-steps", 1);
	/* as many steps as the cache holds: the file is never needed */
	store = filled_store((size_t)PO_STEP_CACHE_CHUNKS * PO_STEP_CHUNK_STEPS);
	CHECK(po_step_store_check(store, &err) == PO_STATUS_OK);
	po_step_store_destroy(store);

	store = filled_store(MANY_STEPS);
	CHECK(po_step_store_check(store, &err) == PO_STATUS_OUTPUT);
	CHECK_STR_EQ(err.message, "Failed to keep steps in a temporary file: "
				  "path=/nonexistent/profopt-steps: No such file or directory");
	(void)po_step_store_get(store, 3); /* lost steps read as zeros, without a crash */
	po_step_store_edit(store, 4)->gpu_busy_ns = 1;
	CHECK(po_step_store_check(store, &err) == PO_STATUS_OUTPUT);
	po_step_store_destroy(store);
	if (old)
		setenv("TMPDIR", old, 1);
	else
		unsetenv("TMPDIR");
	free(old);
}

/* Steps of 1 ms; GPU activity inside step 2 is reported after every chunk was evicted. */
static struct po_model *model_with_late_gpu(size_t step_count)
{
	struct po_model *model = model_new(NULL);

	for (size_t i = 0; i < step_count; i++) {
		step_begin(model, (int64_t)i * MS, MAIN_PID, MAIN_PID, (int64_t)i);
		step_end(model, (int64_t)i * MS + MS, MAIN_PID, MAIN_PID, (int64_t)i);
	}
	gpu_record(model, (int64_t)step_count * MS, MAIN_PID, 0, 0, 2 * MS + 100000,
		   2 * MS + 600000);
	return model;
}

static void model_edits_an_evicted_step(void)
{
	size_t step_count = MANY_STEPS / 2;
	struct po_analysis *analysis = model_done(model_with_late_gpu(step_count));
	struct po_error err = {{0}};
	size_t wrong = 0;

	CHECK_INT_EQ(analysis->step_count, step_count);
	CHECK_INT_EQ(po_analysis_step(analysis, 2).gpu_busy_ns, 500000);
	CHECK_INT_EQ(po_analysis_step(analysis, 1).gpu_busy_ns, 0);
	CHECK_INT_EQ(po_analysis_step(analysis, 3).gpu_busy_ns, 0);
	for (size_t i = 0; i < step_count; i++)
		wrong += po_analysis_step(analysis, i).index != (int64_t)i;
	CHECK_INT_EQ(wrong, 0);
	CHECK(po_analysis_steps_check(analysis, &err) == PO_STATUS_OK);
	po_analysis_destroy(analysis);
}

static void model_reports_a_failing_directory(void)
{
	struct po_model *model;
	struct po_analysis *analysis = NULL;
	struct po_error err = {{0}};

	setenv("TMPDIR", "/nonexistent/profopt-steps", 1);
	model = model_with_late_gpu(MANY_STEPS / 2);
	CHECK(po_model_finish(model, &analysis, &err) == PO_STATUS_OUTPUT);
	CHECK(analysis == NULL);
	CHECK_STR_EQ(err.message, "Failed to keep steps in a temporary file: "
				  "path=/nonexistent/profopt-steps: No such file or directory");
	po_model_destroy(model);
	unsetenv("TMPDIR");
}

/*
 * A forked copy that privatizes its store reads the shared steps and changes its own,
 * last chunks first (its file gets holes below them), and the parent's steps stay as they
 * were: what a model snapshot relies on.
 */
static void privatized_copy(void)
{
	struct po_step_store *store = filled_store(MANY_STEPS);
	int status = -1;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		int bad = 0;

		po_step_store_privatize(store);
		for (size_t i = MANY_STEPS; i-- > 0;) {
			struct po_step expected = step_of(i);

			bad += !same_step(po_step_store_borrow(store, i), &expected);
			po_step_store_edit(store, i)->gpu_busy_ns = -1;
		}
		for (size_t i = 0; i < MANY_STEPS; i += 97)
			bad += po_step_store_get(store, i).gpu_busy_ns != -1;
		bad += po_step_store_check(store, NULL) != PO_STATUS_OK;
		_exit(bad ? 1 : 0);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (size_t i = 0; i < MANY_STEPS; i++) {
		struct po_step expected = step_of(i);
		struct po_step got = po_step_store_get(store, i);

		if (!same_step(&got, &expected)) {
			CHECK(same_step(&got, &expected));
			break;
		}
	}
	po_step_store_destroy(store);
}

int main(void)
{
	RUN(sequential_and_random_reads);
	RUN(edits_of_evicted_steps);
	RUN(upper_bound_matches_a_scan);
	RUN(truncate_then_append);
	RUN(failing_temporary_directory);
	RUN(model_edits_an_evicted_step);
	RUN(model_reports_a_failing_directory);
	RUN(privatized_copy);
	return CHECK_SUMMARY();
}
