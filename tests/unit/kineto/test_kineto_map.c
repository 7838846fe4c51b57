/*
 * test_kineto_map.c FILE...: what the torch.profiler mapping makes of a small trace holding
 * every kind of record it reads (tests/fuzz/corpus-kineto/steps.json, plain and gzip):
 * the step and its four stages on the training thread, the GPU records and their launch,
 * the sync, memory, the collective with its Seq and bytes, the device and the rank, in
 * time order, with the process's name. With --python FILE, what it makes of the
 * python_function calls of a hand-made trace (tests/data/kineto/python-stacks): the code
 * objects, and one stack sample per stretch between two boundaries, with its wall time.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kineto_map.h"

static const struct po_kineto_map *map_read; /* weak: the file being checked */

/* The n-th event of kind (from 0); NULL when there are fewer. */
static const struct po_kineto_event *nth(const struct po_kineto_event *events, size_t count,
					 enum po_event_kind kind, int n)
{
	for (size_t i = 0; i < count; i++)
		if (events[i].kind == kind && n-- == 0)
			return &events[i];
	return NULL;
}

static const char *text_of(uint32_t id)
{
	size_t len;

	return po_kineto_map_text(map_read, id, &len);
}

/* The first event of kind whose stage is `stage`; NULL when there is none. */
static const struct po_kineto_event *stage_event(const struct po_kineto_event *events, size_t count,
						 enum po_event_kind kind, enum po_stage stage)
{
	for (size_t i = 0; i < count; i++)
		if (events[i].kind == kind && events[i].values[0] == stage)
			return &events[i];
	return NULL;
}

/* Stage `stage`'s begin and end on the training thread (7). */
static void check_stage(const struct po_kineto_event *events, size_t count, enum po_stage stage,
			int64_t begin_ns, int64_t end_ns)
{
	const struct po_kineto_event *begin = stage_event(events, count, PO_EV_STAGE_BEGIN, stage);
	const struct po_kineto_event *end = stage_event(events, count, PO_EV_STAGE_END, stage);

	CHECK(begin && end);
	if (!begin || !end)
		return;
	CHECK_INT_EQ(begin->time_ns, begin_ns);
	CHECK_INT_EQ(end->time_ns, end_ns);
	CHECK_INT_EQ(begin->tid, 7);
	CHECK_INT_EQ(end->tid, 7);
}

static void check_steps(const struct po_kineto_event *events, size_t count)
{
	const struct po_kineto_event *begin = nth(events, count, PO_EV_STEP_BEGIN, 0);
	const struct po_kineto_event *end = nth(events, count, PO_EV_STEP_END, 0);

	CHECK(begin && end);
	if (!begin || !end)
		return;
	CHECK_INT_EQ(begin->values[0], 3);
	CHECK_INT_EQ(begin->time_ns, 1000500); /* 1000.5 us, exactly */
	CHECK_INT_EQ(end->time_ns, 1900500);
	CHECK_INT_EQ(begin->pid, 7);
	CHECK_STR_EQ(text_of(begin->procname), "python");
	check_stage(events, count, PO_STAGE_DATA_WAIT, 1001000, 1101000);
	/* num_workers=0: the main process loads inside its wait, the load ends first */
	check_stage(events, count, PO_STAGE_LOAD, 1001000, 1101000);
	CHECK(stage_event(events, count, PO_EV_STAGE_BEGIN, PO_STAGE_DATA_WAIT) <
	      stage_event(events, count, PO_EV_STAGE_BEGIN, PO_STAGE_LOAD));
	CHECK(stage_event(events, count, PO_EV_STAGE_END, PO_STAGE_LOAD) <
	      stage_event(events, count, PO_EV_STAGE_END, PO_STAGE_DATA_WAIT));
	check_stage(events, count, PO_STAGE_FORWARD, 1101000, 1400000);
	/* autograd's own thread (9), moved to the training thread */
	check_stage(events, count, PO_STAGE_BACKWARD, 1400000, 1600000);
	check_stage(events, count, PO_STAGE_OPTIMIZER, 1700000, 1800000);
	if (stage_event(events, count, PO_EV_STAGE_BEGIN, PO_STAGE_OPTIMIZER))
		CHECK_STR_EQ(
		    text_of(
			stage_event(events, count, PO_EV_STAGE_BEGIN, PO_STAGE_OPTIMIZER)->text),
		    "SGD.step");
	CHECK(nth(events, count, PO_EV_RUN_CONFIG, 0) != NULL);
}

static void check_gpu(const struct po_kineto_event *events, size_t count)
{
	const struct po_kineto_event *kernel = nth(events, count, PO_EV_GPU_KERNEL, 0);
	const struct po_kineto_event *copy = nth(events, count, PO_EV_GPU_ACTIVITY, 0);
	const struct po_kineto_event *launch = nth(events, count, PO_EV_GPU_LAUNCH, 0);

	CHECK(kernel && copy && launch);
	if (!kernel || !copy || !launch)
		return;
	CHECK_STR_EQ(text_of(kernel->text), "sm90_xmma_gemm_bf16");
	CHECK_INT_EQ(kernel->time_ns, 1260000); /* written when it ended */
	CHECK_INT_EQ(kernel->values[3], 1210000);
	CHECK_INT_EQ(kernel->values[5], 11);
	CHECK_INT_EQ(kernel->values[7], 2);   /* grid y */
	CHECK_INT_EQ(kernel->values[9], 128); /* block x */
	CHECK_INT_EQ(kernel->pid, 7);	      /* the process that launched it */
	CHECK_INT_EQ(copy->values[2], PO_GPU_MEMCPY_H2D);
	CHECK_INT_EQ(copy->values[4], 4096);
	CHECK_INT_EQ(launch->values[2], 10 + 1);
	CHECK(nth(events, count, PO_EV_GPU_SYNC_BEGIN, 0) &&
	      nth(events, count, PO_EV_GPU_SYNC_END, 0));
}

static void check_memory_and_job(const struct po_kineto_event *events, size_t count)
{
	const struct po_kineto_event *alloc = nth(events, count, PO_EV_MEM_ALLOC, 0);
	const struct po_kineto_event *freed = nth(events, count, PO_EV_MEM_FREE, 0);
	const struct po_kineto_event *used = nth(events, count, PO_EV_COUNTER, 0);
	const struct po_kineto_event *call = nth(events, count, PO_EV_COLLECTIVE_BEGIN, 0);
	const struct po_kineto_event *done = nth(events, count, PO_EV_COLLECTIVE_END, 0);
	const struct po_kineto_event *rank = nth(events, count, PO_EV_RANK, 0);

	CHECK(alloc && freed && used && call && done && rank);
	if (!alloc || !freed || !used || !call || !done || !rank)
		return;
	CHECK_INT_EQ(alloc->values[0], 4096);
	CHECK_INT_EQ(alloc->values[1], 512);
	CHECK_INT_EQ(alloc->values[2], 0);
	CHECK_INT_EQ(freed->values[1], 512);
	CHECK_INT_EQ(used->values[0], PO_COUNTER_GPU_MEM_USED);
	CHECK_INT_EQ(used->values[2], 512);
	CHECK_INT_EQ(call->time_ns, 1650000);
	CHECK_INT_EQ(done->time_ns, 1690000); /* its ncclDevKernel's end */
	CHECK_INT_EQ(call->values[1], PO_COLLECTIVE_ALL_REDUCE);
	CHECK_INT_EQ(call->values[2], 64); /* 16 Float elements */
	CHECK_INT_EQ(call->values[3], 4);  /* Seq */
	CHECK_INT_EQ(rank->values[0], 1);
	CHECK_INT_EQ(rank->values[2], 2);
	CHECK_STR_EQ(text_of(rank->text), ""); /* "steps.json" names no host */
	CHECK(nth(events, count, PO_EV_COLLECTIVE_BEGIN, 1) == NULL); /* the nccl: annotation */
}

static void check_file(const char *path)
{
	struct po_kineto_map *map = NULL;
	struct po_kineto_event *events = calloc(1024, sizeof(*events));
	struct po_error err = {{0}};
	size_t count = 0;
	bool ended = false;

	CHECK_INT_EQ(po_kineto_map_create(&map), PO_STATUS_OK);
	CHECK_INT_EQ(po_kineto_map_read(map, path, &err), PO_STATUS_OK);
	CHECK_INT_EQ(po_kineto_map_finish(map), PO_STATUS_OK);
	while (count < 1024 && po_kineto_map_next(map, &events[count], &ended) == PO_STATUS_OK &&
	       !ended)
		count++;
	CHECK(ended);
	map_read = map;
	for (size_t i = 1; i < count; i++)
		CHECK(events[i - 1].time_ns <= events[i].time_ns);
	CHECK(nth(events, count, PO_EV_RUN_BEGIN, 0) == &events[0]);
	check_steps(events, count);
	check_gpu(events, count);
	check_memory_and_job(events, count);
	CHECK_INT_EQ(po_kineto_map_borrow_stats(map)->impossible_times, 0);
	/* the GPU-side range of ProfilerStep#3 is left out, counted: no event of its own */
	CHECK_INT_EQ(po_kineto_map_borrow_stats(map)->gpu_annotations, 1);
	CHECK(nth(events, count, PO_EV_GPU_ACTIVITY, 1) == NULL);
	CHECK(nth(events, count, PO_EV_GPU_KERNEL, 2) == NULL);
	po_kineto_map_destroy(map);
	free(events);
}

/*
 * More events than one run holds, written in reverse time order: they come back merged
 * from the spilled runs, each once, in time order.
 */
static void check_runs(void)
{
	enum { KERNELS = 150000 };
	char path[] = "/tmp/profopt-kineto-runs.XXXXXX";
	int fd = mkstemp(path);
	FILE *file = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct po_kineto_map *map = NULL;
	struct po_kineto_event event;
	struct po_error err = {{0}};
	int64_t previous_ns = -1, count = 0, correlation_sum = 0;
	bool ended = false;

	CHECK(file != NULL);
	if (!file)
		return;
	fprintf(file, "{\"traceEvents\":[");
	for (int i = KERNELS; i > 0; i--)
		fprintf(file,
			"%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
			"\"tid\":7,\"ts\":%d,\"dur\":1,\"args\":{\"device\":0,\"stream\":7,"
			"\"correlation\":%d}}",
			i == KERNELS ? "" : ",", 1000 + 2 * i, i);
	fprintf(file, "]}\n");
	fclose(file);
	CHECK_INT_EQ(po_kineto_map_create(&map), PO_STATUS_OK);
	CHECK_INT_EQ(po_kineto_map_read(map, path, &err), PO_STATUS_OK);
	CHECK_INT_EQ(po_kineto_map_finish(map), PO_STATUS_OK);
	while (po_kineto_map_next(map, &event, &ended) == PO_STATUS_OK && !ended) {
		if (event.kind != PO_EV_GPU_KERNEL)
			continue;
		CHECK(event.time_ns > previous_ns);
		previous_ns = event.time_ns;
		correlation_sum += event.values[5];
		count++;
	}
	CHECK(ended);
	CHECK_INT_EQ(count, KERNELS);
	CHECK(po_kineto_map_borrow_stats(map)->runs_spilled >= 2);
	CHECK_INT_EQ(correlation_sum, (int64_t)KERNELS * (KERNELS + 1) / 2);
	po_kineto_map_destroy(map);
	unlink(path);
}

/* The event of kind whose text is text; NULL when there is none. */
static const struct po_kineto_event *with_text(const struct po_kineto_event *events, size_t count,
					       enum po_event_kind kind, const char *text)
{
	for (size_t i = 0; i < count; i++)
		if (events[i].kind == kind && strcmp(text_of(events[i].text), text) == 0)
			return &events[i];
	return NULL;
}

/* The code objects: "FILE(LINE): FUNCTION" split, other names whole. */
static void check_codes(const struct po_kineto_event *events, size_t count)
{
	const struct po_kineto_event *forward = with_text(events, count, PO_EV_CODE, "forward");
	const struct po_kineto_event *conv = with_text(
	    events, count, PO_EV_CODE, "<built-in method conv2d of type object at 0x7f3a2c>");
	const struct po_kineto_event *config =
	    with_text(events, count, PO_EV_RUN_CONFIG, "stacks_clock");
	int codes = 0;

	for (size_t i = 0; i < count; i++)
		codes += events[i].kind == PO_EV_CODE;
	CHECK_INT_EQ(codes, 7); /* the call of no duration ("log") is left out */
	CHECK(forward && conv && config);
	if (!forward || !conv || !config)
		return;
	CHECK_STR_EQ(text_of(forward->text2), "model.py");
	CHECK_INT_EQ(forward->values[3], 30);
	CHECK_INT_EQ(forward->time_ns, 900000); /* the trace's first time */
	CHECK_STR_EQ(text_of(conv->text2), "");
	CHECK_INT_EQ(conv->values[3], 0);
	CHECK_STR_EQ(text_of(config->text2), "wall");
}

/*
 * The samples of thread 100: <module> from 900 us to 3100 us holds two steps of train_step,
 * each __next__, forward (conv2d inside it from +200 to +450 us), backward and the
 * optimizer's step; the stages' boundaries fall on the calls' own.
 */
static void check_python(const char *path)
{
	struct po_kineto_map *map = NULL;
	struct po_kineto_event *events = calloc(256, sizeof(*events));
	struct po_error err = {{0}};
	size_t count = 0, depth;
	bool ended = false;
	int samples = 0;
	int64_t weight_ns = 0;

	CHECK_INT_EQ(po_kineto_map_create(&map), PO_STATUS_OK);
	CHECK_INT_EQ(po_kineto_map_read(map, path, &err), PO_STATUS_OK);
	CHECK_INT_EQ(po_kineto_map_finish(map), PO_STATUS_OK);
	map_read = map;
	while (count < 256 && po_kineto_map_next(map, &events[count], &ended) == PO_STATUS_OK &&
	       !ended) {
		const struct po_kineto_event *ev = &events[count++];
		const uint32_t *frames = po_kineto_map_borrow_frames(map, &depth);

		if (ev->kind != PO_EV_STACK_SAMPLE)
			continue;
		samples++;
		weight_ns += ev->values[1];
		CHECK_INT_EQ(ev->values[0], 100);
		CHECK(depth >= 1 && depth <= 4);
		CHECK_STR_EQ(text_of(frames[depth - 1]), "train.py(10): <module>");
		if (ev->time_ns == 1450000) { /* conv2d's end: the stretch it ran in forward */
			CHECK_INT_EQ(ev->values[1], 250000);
			CHECK_INT_EQ(depth, 4);
			CHECK_STR_EQ(text_of(frames[0]),
				     "<built-in method conv2d of type object at 0x7f3a2c>");
			CHECK_STR_EQ(text_of(frames[1]), "model.py(30): forward");
		}
		if (ev->time_ns == 3100000) /* after the last step: <module> alone */
			CHECK_INT_EQ(depth, 1);
	}
	CHECK(ended);
	for (size_t i = 1; i < count; i++)
		CHECK(events[i - 1].time_ns <= events[i].time_ns);
	/* a stretch before each boundary at 1000, then 7 a step, then 3000 and 3100 us */
	CHECK_INT_EQ(samples, 16);
	CHECK_INT_EQ(weight_ns, 2200000); /* <module>'s 2,200 us, each nanosecond once */
	check_codes(events, count);
	CHECK_INT_EQ(po_kineto_map_borrow_stats(map)->python_calls, 13);
	po_kineto_map_destroy(map);
	free(events);
}

/* The host of a file named as tensorboard_trace_handler names them, else none. */
static void check_file_hosts(void)
{
	static const struct {
		const char *path, *host; /* NULL: no host */
	} cases[] = {
	    {"/runs/gpu-node-3_100.1733580000123.pt.trace.json", "gpu-node-3"},
	    {"node7.cluster.example.org_31337.1700000000123456789.pt.trace.json.gz",
	     "node7.cluster.example.org"},
	    {"a_b_12.5.pt.trace.json", "a_b"},		 /* the pid follows the last '_' */
	    {"rank0.1733580000123.pt.trace.json", NULL}, /* a worker_name of the user's */
	    {"host_12x.1733580000123.pt.trace.json", NULL},
	    {"host_12.17335a.pt.trace.json", NULL},
	    {"_12.1733580000123.pt.trace.json", NULL},
	    {"host_12.1733580000123.json", NULL},
	    {"host_12..pt.trace.json", NULL},
	    {"sampled_rank-0.json.gz", NULL},
	    {"host_.1.pt.trace.json", NULL},
	    {"dir_1.2.pt.trace.json/x.json", NULL},
	};
	char host[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool found = po_kineto_file_host(cases[i].path, host, sizeof(host));

		CHECK(found == (cases[i].host != NULL));
		if (found && cases[i].host)
			CHECK_STR_EQ(host, cases[i].host);
	}
	/* a host longer than the room is not cut: none */
	CHECK(!po_kineto_file_host("abcdefgh_1.2.pt.trace.json", host, 8));
}

/* A rank's host comes from its file's name (a copy of steps.json named the handler's way). */
static void check_rank_host(const char *steps_path)
{
	char dir[] = "/tmp/profopt-kineto-host.XXXXXX", path[256], command[1024];
	struct po_kineto_map *map = NULL;
	struct po_kineto_event event;
	struct po_error err = {{0}};
	bool ended = false, seen = false;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/gpu-node-3_7.1733580000123.pt.trace.json", dir);
	snprintf(command, sizeof(command), "cp '%s' '%s'", steps_path, path);
	CHECK_INT_EQ(system(command), 0);
	CHECK_INT_EQ(po_kineto_map_create(&map), PO_STATUS_OK);
	CHECK_INT_EQ(po_kineto_map_read(map, path, &err), PO_STATUS_OK);
	CHECK_INT_EQ(po_kineto_map_finish(map), PO_STATUS_OK);
	map_read = map;
	while (po_kineto_map_next(map, &event, &ended) == PO_STATUS_OK && !ended) {
		if (event.kind != PO_EV_RANK)
			continue;
		seen = true;
		CHECK_STR_EQ(text_of(event.text), "gpu-node-3");
	}
	CHECK(seen);
	po_kineto_map_destroy(map);
	unlink(path);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	check_file_hosts();
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--python") == 0 && i + 1 < argc)
			check_python(argv[++i]);
		else
			check_file(argv[i]);
		if (i == 1)
			check_rank_host(argv[i]);
	}
	check_runs();
	return CHECK_SUMMARY();
}
