/*
 * emitter.c: emits every profopt event kind once or more from a parent and one forked
 * child, for the ingest end-to-end test. Writes "parent_pid child_pid" and the GPU record's
 * start time to the file given as argv[1], so the test can check what it decodes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profopt.h"

/* The child; PO_EMIT_CHILD_EXTRA=N adds N counter events (many packets, for salvage). */
static void emit_child(void)
{
	const char *extra = getenv("PO_EMIT_CHILD_EXTRA");
	long extra_count = extra ? atol(extra) : 0;

	profopt_worker_begin(3);
	profopt_stage_begin(PROFOPT_STAGE_LOAD, "child-load", 8, 80);
	profopt_stage_end(PROFOPT_STAGE_LOAD, "child-load", 8, 80);
	profopt_batch_ready(8, 1);
	for (long i = 0; i < extra_count; i++)
		profopt_counter(PROFOPT_COUNTER_QUEUE_DEPTH, -1, i);
	profopt_worker_end(3);
}

static void emit_step(int64_t gpu_start_ns)
{
	struct profopt_gpu_record record = {
	    .device = 0,
	    .stream = 7,
	    .kind = PROFOPT_GPU_MEMCPY_H2D,
	    .name = "copy batch",
	    .bytes = 1 << 20,
	    .start_ns = gpu_start_ns,
	    .end_ns = gpu_start_ns + 5000,
	    .correlation_id = 99,
	};

	profopt_step_begin(1, 0, 32);
	profopt_stage_begin(PROFOPT_STAGE_DATA_WAIT, "wait-label", 8, -1);
	/* An empty label right after a non-empty one (babeltrace2 2.0.4's stale string). */
	profopt_stage_end(PROFOPT_STAGE_DATA_WAIT, "", 8, -1);
	profopt_stage_begin(PROFOPT_STAGE_FORWARD, "fwd", 8, -1);
	profopt_gpu_launch(0, 7, 99, "kernel_a");
	profopt_gpu_activity(&record);
	profopt_gpu_sync_begin(0, -1);
	profopt_gpu_sync_end(0, -1);
	profopt_stage_end(PROFOPT_STAGE_FORWARD, "fwd", 8, -1);
	profopt_counter(PROFOPT_COUNTER_HOST_RSS, -1, 123456789);
	profopt_mem_alloc(0x1000, 4096, PROFOPT_DEVICE_HOST, "buffer");
	profopt_mem_free(0x1000, 4096, PROFOPT_DEVICE_HOST, "");
	profopt_step_end(1, 0, 32);
}

int main(int argc, char **argv)
{
	int64_t gpu_start_ns = profopt_now_ns();
	volatile char *block;
	FILE *facts;
	pid_t child;

	if (argc != 2)
		return 2;
	profopt_run_begin("e2e");
	profopt_run_config("batch_size", "32");
	profopt_run_config("empty", "");
	profopt_epoch_begin(0);
	emit_step(gpu_start_ns);
	block = malloc(12345);
	block[0] = 1;
	free((void *)block);
	child = fork();
	if (child == 0) {
		emit_child();
		_exit(0);
	}
	waitpid(child, NULL, 0);
	profopt_epoch_end(0);
	profopt_run_end();
	facts = fopen(argv[1], "w");
	if (!facts)
		return 1;
	fprintf(facts, "%d %d %" PRId64 "\n", (int)getpid(), (int)child, gpu_start_ns);
	return fclose(facts) == 0 ? 0 : 1;
}
