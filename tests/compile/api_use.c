/*
 * api_use.c: uses every declaration of profopt.h; compiled as C99, C11, C++11 and C++17
 * with warnings as errors, linked against libprofopt and run with no session recording.
 */
#include <profopt.h>

#include <stdio.h>
#include <string.h>

static int use_every_call(void)
{
	struct profopt_gpu_record record;
	enum profopt_stage stage = PROFOPT_STAGE_FORWARD;
	int64_t now = profopt_now_ns();

	memset(&record, 0, sizeof(record));
	record.device = 0;
	record.kind = PROFOPT_GPU_KERNEL;
	record.name = "kernel";
	record.start_ns = now;
	record.end_ns = now + 1;
	record.correlation_id = 1;
	profopt_run_begin("compile-test");
	profopt_run_config("num_workers", "0");
	profopt_worker_begin(0);
	profopt_epoch_begin(0);
	profopt_step_begin(0, 0, 1);
	profopt_stage_begin(stage, "label", 0, -1);
	profopt_stage_end(stage, NULL, 0, -1);
	profopt_batch_ready(0, 1);
	profopt_counter(PROFOPT_COUNTER_QUEUE_DEPTH, PROFOPT_DEVICE_HOST, 1);
	profopt_mem_alloc(0x1000, 64, PROFOPT_DEVICE_HOST, "activations");
	profopt_mem_free(0x1000, 64, PROFOPT_DEVICE_HOST, "activations");
	profopt_gpu_launch(0, 0, 1, "kernel");
	profopt_gpu_activity(&record);
	profopt_gpu_activity(NULL);
	profopt_gpu_sync_begin(0, -1);
	profopt_gpu_sync_end(0, -1);
	profopt_rank(0, 0, 1, NULL);
	profopt_collective_begin(0, PROFOPT_COLLECTIVE_ALL_REDUCE, 1024, 0, PROFOPT_DEVICE_HOST);
	profopt_collective_end(0, PROFOPT_COLLECTIVE_ALL_REDUCE, 1024, 0, PROFOPT_DEVICE_HOST);
	profopt_step_end(0, 0, 1);
	profopt_epoch_end(0);
	profopt_worker_end(0);
	profopt_run_end();
	if (profopt_sampler_start(1000) == 0)
		profopt_sampler_stop();
	return profopt_now_ns() >= now ? 0 : 1;
}

int main(void)
{
	if (strcmp(profopt_version(), PROFOPT_VERSION_STRING) != 0) {
		fprintf(stderr, "version %s != header %s\n", profopt_version(),
			PROFOPT_VERSION_STRING);
		return 1;
	}
	if (profopt_tracing_enabled()) {
		fprintf(stderr, "tracing reported enabled with no session\n");
		return 1;
	}
	return use_every_call();
}
