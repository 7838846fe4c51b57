/*
 * check_events.c: decodes the trace that record.sh made of emitter.c and checks the typed
 * events: counts per kind, fields, strings (an empty one after a non-empty one), times on
 * the CLOCK_MONOTONIC base and in order, and the pids of the parent and its forked child,
 * on 1, 2 and 4 decoding lanes; a failing callback stops every lane.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ingest/ingest.h"

#define MAX_EVENTS 4096

/* A copy of one event, with its strings kept (they are weak in struct po_event). */
struct kept_event {
	struct po_event event;
	char text[2][64]; /* the event's first two strings, NUL-terminated */
	char procname[32];
};

static struct kept_event kept[MAX_EVENTS];
static size_t kept_count;
static int64_t kind_counts[PO_EV_COUNT];
static int64_t previous_ns = INT64_MIN;
static int64_t order_errors;

static void keep_str(char *out, size_t size, struct po_str text)
{
	size_t len = text.len < size - 1 ? text.len : size - 1;

	if (len)
		memcpy(out, text.ptr, len);
	out[len] = '\0';
}

static void keep_strings(struct kept_event *k)
{
	const struct po_event *e = &k->event;

	switch (e->kind) {
	case PO_EV_RUN_BEGIN:
		keep_str(k->text[0], sizeof(k->text[0]), e->u.run_begin.framework);
		break;
	case PO_EV_RUN_CONFIG:
		keep_str(k->text[0], sizeof(k->text[0]), e->u.run_config.key);
		keep_str(k->text[1], sizeof(k->text[1]), e->u.run_config.value);
		break;
	case PO_EV_STAGE_BEGIN:
	case PO_EV_STAGE_END:
		keep_str(k->text[0], sizeof(k->text[0]), e->u.stage.label);
		break;
	case PO_EV_MEM_ALLOC:
	case PO_EV_MEM_FREE:
		keep_str(k->text[0], sizeof(k->text[0]), e->u.mem.label);
		break;
	case PO_EV_GPU_LAUNCH:
		keep_str(k->text[0], sizeof(k->text[0]), e->u.gpu_launch.name);
		break;
	case PO_EV_GPU_ACTIVITY:
		keep_str(k->text[0], sizeof(k->text[0]), e->u.gpu_activity.name);
		break;
	case PO_EV_PROCESS:
		keep_str(k->text[0], sizeof(k->text[0]), e->u.process.recording);
		break;
	default:
		break;
	}
}

static enum po_status on_event(void *ctx, const struct po_event *event)
{
	(void)ctx;
	if ((unsigned)event->kind >= PO_EV_COUNT || kept_count == MAX_EVENTS)
		return PO_STATUS_INTERNAL;
	kind_counts[event->kind]++;
	if (event->time_ns < previous_ns)
		order_errors++;
	previous_ns = event->time_ns;
	kept[kept_count].event = *event;
	keep_strings(&kept[kept_count]);
	keep_str(kept[kept_count].procname, sizeof(kept[kept_count].procname), event->procname);
	kept_count++;
	return PO_STATUS_OK;
}

/* The n-th (from 0) kept event of a kind, or NULL. */
static const struct kept_event *find(enum po_event_kind kind, int nth)
{
	for (size_t i = 0; i < kept_count; i++) {
		if (kept[i].event.kind == kind && nth-- == 0)
			return &kept[i];
	}
	return NULL;
}

/* record.sh sets PO_EXPECT_LIBC=0 when it could not preload the libc wrapper. */
static bool expect_libc(void)
{
	const char *value = getenv("PO_EXPECT_LIBC");

	return !value || strcmp(value, "0") != 0;
}

static void check_counts(void)
{
	static const int64_t expected[PO_EV_COUNT] = {
	    [PO_EV_RUN_BEGIN] = 1,    [PO_EV_RUN_CONFIG] = 2,	[PO_EV_RUN_END] = 1,
	    [PO_EV_WORKER_BEGIN] = 1, [PO_EV_WORKER_END] = 1,	[PO_EV_EPOCH_BEGIN] = 1,
	    [PO_EV_EPOCH_END] = 1,    [PO_EV_STEP_BEGIN] = 1,	[PO_EV_STEP_END] = 1,
	    [PO_EV_STAGE_BEGIN] = 3,  [PO_EV_STAGE_END] = 3,	[PO_EV_BATCH_READY] = 1,
	    [PO_EV_COUNTER] = 1,      [PO_EV_MEM_ALLOC] = 1,	[PO_EV_MEM_FREE] = 1,
	    [PO_EV_GPU_LAUNCH] = 1,   [PO_EV_GPU_ACTIVITY] = 1, [PO_EV_GPU_SYNC_BEGIN] = 1,
	    [PO_EV_GPU_SYNC_END] = 1, [PO_EV_PROCESS] = 2,
	};

	for (int kind = 0; kind < PO_EV_LIBC_MALLOC; kind++) {
		if (kind_counts[kind] != expected[kind])
			fprintf(stderr, "event kind number %d:\n", kind);
		CHECK_INT_EQ(kind_counts[kind], expected[kind]);
	}
	if (expect_libc()) {
		CHECK(kind_counts[PO_EV_LIBC_MALLOC] >= 1);
		CHECK(kind_counts[PO_EV_LIBC_FREE] >= 1);
	}
	CHECK_INT_EQ(kind_counts[PO_EV_DISCARDED_EVENTS], 0);
	CHECK_INT_EQ(order_errors, 0);
}

static void check_strings(void)
{
	const struct kept_event *k;

	CHECK((k = find(PO_EV_RUN_BEGIN, 0)) && strcmp(k->text[0], "e2e") == 0);
	CHECK(k && k->event.u.run_begin.cpu_count >= 1);
	CHECK((k = find(PO_EV_RUN_CONFIG, 0)) && strcmp(k->text[0], "batch_size") == 0 &&
	      strcmp(k->text[1], "32") == 0);
	CHECK((k = find(PO_EV_RUN_CONFIG, 1)) && strcmp(k->text[0], "empty") == 0 &&
	      k->event.u.run_config.value.len == 0);
	CHECK((k = find(PO_EV_STAGE_BEGIN, 0)) && strcmp(k->text[0], "wait-label") == 0 &&
	      k->event.u.stage.stage == PO_STAGE_DATA_WAIT);
	CHECK((k = find(PO_EV_STAGE_END, 0)) && k->event.u.stage.label.len == 0 &&
	      k->event.u.stage.stage == PO_STAGE_DATA_WAIT && k->event.u.stage.batch == 8);
	CHECK((k = find(PO_EV_MEM_ALLOC, 0)) && strcmp(k->text[0], "buffer") == 0 &&
	      k->event.u.mem.addr == 0x1000 && k->event.u.mem.bytes == 4096 &&
	      k->event.u.mem.device == -1);
	CHECK((k = find(PO_EV_MEM_FREE, 0)) && k->event.u.mem.label.len == 0);
	CHECK((k = find(PO_EV_GPU_LAUNCH, 0)) && strcmp(k->text[0], "kernel_a") == 0 &&
	      k->event.u.gpu_launch.correlation_id == 99 && k->event.u.gpu_launch.stream == 7);
	CHECK((k = find(PO_EV_COUNTER, 0)) && k->event.u.counter.kind == PO_COUNTER_HOST_RSS &&
	      k->event.u.counter.value == 123456789 && k->event.u.counter.device == -1);
}

static void check_gpu_and_times(int64_t gpu_start_ns)
{
	const struct kept_event *k = find(PO_EV_GPU_ACTIVITY, 0);

	CHECK(k && strcmp(k->text[0], "copy batch") == 0);
	if (!k)
		return;
	CHECK_INT_EQ(k->event.u.gpu_activity.kind, PO_GPU_MEMCPY_H2D);
	CHECK_INT_EQ(k->event.u.gpu_activity.bytes, 1 << 20);
	CHECK_INT_EQ(k->event.u.gpu_activity.start_ns, gpu_start_ns);
	CHECK_INT_EQ(k->event.u.gpu_activity.end_ns, gpu_start_ns + 5000);
	/* Event times and GPU times share the CLOCK_MONOTONIC base: a few seconds apart at most. */
	CHECK_NEAR((double)(k->event.time_ns - gpu_start_ns), 0.0, 10e9);
	CHECK(k->event.time_ns >= gpu_start_ns);
}

static void check_pids(int parent_pid, int child_pid)
{
	const struct kept_event *k;

	CHECK((k = find(PO_EV_RUN_BEGIN, 0)) && k->event.pid == parent_pid &&
	      k->event.tid == parent_pid && strcmp(k->procname, "po_ingest_emit") == 0);
	CHECK((k = find(PO_EV_WORKER_BEGIN, 0)) && k->event.pid == child_pid &&
	      k->event.u.worker.parent_pid == parent_pid && k->event.u.worker.worker_id == 3);
	CHECK((k = find(PO_EV_STAGE_BEGIN, 2)) && k->event.pid == child_pid &&
	      strcmp(k->text[0], "child-load") == 0);
	CHECK((k = find(PO_EV_STAGE_END, 2)) && k->event.u.stage.cpu_ns >= 0);
	CHECK((k = find(PO_EV_RUN_END, 0)) && k->event.pid == parent_pid);
	/* Each process announces itself first: the parent at start, the child after fork. */
	CHECK((k = find(PO_EV_PROCESS, 0)) && k->event.pid == parent_pid &&
	      k->event.u.process.reason == 0 && strcmp(k->text[0], "0123456789abcdef") == 0);
	CHECK(k && find(PO_EV_RUN_BEGIN, 0) &&
	      k->event.time_ns <= find(PO_EV_RUN_BEGIN, 0)->event.time_ns);
	CHECK((k = find(PO_EV_PROCESS, 1)) && k->event.pid == child_pid &&
	      k->event.u.process.reason == 1 && k->event.u.process.parent_pid == parent_pid &&
	      strcmp(k->text[0], "0123456789abcdef") == 0);
	CHECK(k && find(PO_EV_WORKER_BEGIN, 0) &&
	      k->event.time_ns <= find(PO_EV_WORKER_BEGIN, 0)->event.time_ns);
	CHECK(find(PO_EV_RUN_BEGIN, 0) && find(PO_EV_WORKER_BEGIN, 0) &&
	      find(PO_EV_RUN_BEGIN, 0)->event.trace_id !=
		  find(PO_EV_WORKER_BEGIN, 0)->event.trace_id);
	if (!expect_libc())
		return;
	for (int i = 0; (k = find(PO_EV_LIBC_MALLOC, i)); i++) {
		if (k->event.u.libc.size == 12345)
			break;
	}
	CHECK(k && k->event.u.libc.ptr != 0 && k->event.ip != 0 && k->event.pid == parent_pid);
}

/*
 * --salvage: the child's trace was corrupted in the middle. Without salvage the run fails
 * naming the child's trace; with it, every event of the parent comes exactly once although
 * the graph ran again after the failure.
 */
/* Forgets the events kept by an earlier run. */
static void forget_events(void)
{
	kept_count = 0;
	previous_ns = INT64_MIN;
	order_errors = 0;
	memset(kind_counts, 0, sizeof(kind_counts));
}

/*
 * One salvage run on `threads` decoding lanes: the failing child trace is named, the
 * parent's events are all there; returns how many of the child's events were kept.
 */
static int64_t salvage_once(const char *trace_dir, int parent_pid, int child_pid, int threads)
{
	static const int64_t parent_expected[PO_EV_COUNT] = {
	    [PO_EV_RUN_BEGIN] = 1,    [PO_EV_RUN_CONFIG] = 2,	[PO_EV_RUN_END] = 1,
	    [PO_EV_EPOCH_BEGIN] = 1,  [PO_EV_EPOCH_END] = 1,	[PO_EV_STEP_BEGIN] = 1,
	    [PO_EV_STEP_END] = 1,     [PO_EV_STAGE_BEGIN] = 2,	[PO_EV_STAGE_END] = 2,
	    [PO_EV_COUNTER] = 1,      [PO_EV_MEM_ALLOC] = 1,	[PO_EV_MEM_FREE] = 1,
	    [PO_EV_GPU_LAUNCH] = 1,   [PO_EV_GPU_ACTIVITY] = 1, [PO_EV_GPU_SYNC_BEGIN] = 1,
	    [PO_EV_GPU_SYNC_END] = 1, [PO_EV_PROCESS] = 1,
	};
	struct po_ingest_options options = {.salvage = false, .decode_threads = threads};
	struct po_ingest_stats stats;
	struct po_error err = {{0}};
	int64_t parent_counts[PO_EV_COUNT] = {0};
	int64_t child_events = 0;
	char child_name[64];

	snprintf(child_name, sizeof(child_name), "-%d-", child_pid);
	forget_events();
	CHECK_INT_EQ(po_ingest_run(trace_dir, &options, on_event, NULL, &stats, &err),
		     PO_STATUS_DECODE);
	CHECK(strstr(err.message, child_name) != NULL);
	fprintf(stderr, "without salvage: %s\n", err.message);
	forget_events();
	options.salvage = true;
	memset(&err, 0, sizeof(err));
	CHECK_INT_EQ(po_ingest_run(trace_dir, &options, on_event, NULL, &stats, &err),
		     PO_STATUS_OK);
	CHECK(stats.partial);
	CHECK_INT_EQ(stats.skipped_traces, 1);
	CHECK(strstr(stats.skipped_note, child_name) != NULL);
	CHECK_INT_EQ(order_errors, 0);
	fprintf(stderr, "with salvage: %s\n", stats.skipped_note);
	for (size_t i = 0; i < kept_count; i++) {
		if (kept[i].event.pid == parent_pid)
			parent_counts[kept[i].event.kind]++;
		else if (kept[i].event.pid == child_pid)
			child_events++;
	}
	for (int kind = 0; kind < PO_EV_COUNT; kind++) {
		if (parent_counts[kind] != parent_expected[kind])
			fprintf(stderr, "event kind number %d:\n", kind);
		CHECK_INT_EQ(parent_counts[kind], parent_expected[kind]);
	}
	/* The child's events before the corruption are kept, the rest are lost. */
	CHECK(child_events > 100);
	CHECK(child_events < 5000);
	return child_events;
}

static int check_salvage(const char *trace_dir, int parent_pid, int child_pid)
{
	static const int threads[] = {1, 2, 4};
	int64_t child_events[3];

	for (int t = 0; t < 3; t++) {
		child_events[t] = salvage_once(trace_dir, parent_pid, child_pid, threads[t]);
		fprintf(stderr, "%d decoding thread(s): child events kept: %lld\n", threads[t],
			(long long)child_events[t]);
	}
	/* What salvage keeps does not depend on how many lanes decoded. */
	CHECK_INT_EQ(child_events[1], child_events[0]);
	CHECK_INT_EQ(child_events[2], child_events[0]);
	return CHECK_SUMMARY();
}

/* The callback fails at its fifth event: every lane stops and its status comes back. */
static int64_t calls_before_failure;

static enum po_status fail_fifth(void *ctx, const struct po_event *event)
{
	(void)ctx;
	(void)event;
	return ++calls_before_failure == 5 ? PO_STATUS_OUTPUT : PO_STATUS_OK;
}

static void check_callback_failure(const char *trace_dir, int threads)
{
	struct po_ingest_options options = {.decode_threads = threads};
	struct po_ingest_stats stats;
	struct po_error err = {{0}};

	calls_before_failure = 0;
	CHECK_INT_EQ(po_ingest_run(trace_dir, &options, fail_fifth, NULL, &stats, &err),
		     PO_STATUS_OUTPUT);
	CHECK_INT_EQ(calls_before_failure, 5);
}

/* Everything about the events, decoded on `threads` lanes. */
static void check_decoded(const char *trace_dir, int threads, int parent_pid, int child_pid,
			  int64_t gpu_start_ns)
{
	struct po_ingest_options options = {.decode_threads = threads};
	struct po_ingest_stats stats;
	struct po_error err = {{0}};

	fprintf(stderr, "%d decoding thread(s)\n", threads);
	forget_events();
	CHECK_INT_EQ(po_ingest_run(trace_dir, &options, on_event, NULL, &stats, &err),
		     PO_STATUS_OK);
	if (err.message[0])
		fprintf(stderr, "error: %s\n", err.message);
	CHECK_INT_EQ(stats.trace_count, 2);
	CHECK_INT_EQ(stats.profopt_events, 26);
	CHECK_INT_EQ(stats.malformed_events, 0);
	CHECK_INT_EQ(stats.no_clock_events, 0);
	CHECK(stats.streams >= 2);
	CHECK(!stats.partial);
	check_counts();
	check_strings();
	check_gpu_and_times(gpu_start_ns);
	check_pids(parent_pid, child_pid);
	check_callback_failure(trace_dir, threads);
}

int main(int argc, char **argv)
{
	bool salvage = argc == 4 && strcmp(argv[1], "--salvage") == 0;
	struct po_error err = {{0}};
	int parent_pid = 0, child_pid = 0;
	int64_t gpu_start_ns = 0;
	FILE *facts;

	if (salvage) {
		argv++;
		argc--;
	}
	if (argc != 3)
		return 2;
	facts = fopen(argv[2], "r");
	CHECK(facts &&
	      fscanf(facts, "%d %d %" SCNd64, &parent_pid, &child_pid, &gpu_start_ns) == 3);
	if (facts)
		fclose(facts);
	if (salvage)
		return check_salvage(argv[1], parent_pid, child_pid);
	CHECK_INT_EQ(po_ingest_check(argv[1], &err), PO_STATUS_OK);
	for (int threads = 1; threads <= 4; threads *= 2)
		check_decoded(argv[1], threads, parent_pid, child_pid, gpu_start_ns);
	return CHECK_SUMMARY();
}
