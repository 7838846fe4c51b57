/*
 * cupti_replay.c MODE: a training loop whose GPU activity arrives as CUPTI records built
 * by hand (as CUPTI 13 lays them out) and goes through the collector's own conversion and
 * emission (cupti_convert.h), so that a recording of it tests, without a GPU, what the
 * analysis makes of the collector's events. A step's records are emitted when it ends,
 * after the work they describe, as the collector's flush delivers them.
 *
 *   gpu-bound    each step's kernels keep the GPU busy for about 9 of its 9.5 ms, a copy
 *                on a second stream overlaps the first kernel, every other step's records
 *                arrive in reverse order, and at the end the collector reports 17 records
 *                CUPTI dropped
 *   input-bound  each step waits 12 ms for data with the GPU idle, then 3 ms of kernels
 *   leak         as gpu-bound, and each step allocates 4 MiB of device memory it never
 *                frees (CUPTI memory records)
 *
 * Prints the GPU records it emitted ("records N") for the test to compare.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cupti_convert.h"
#include "profopt.h"

#define MS 1000000LL
#define STEPS 60
#define MAX_PENDING 64

static CUpti_ActivityKernel10 pending[MAX_PENDING];
static size_t pending_count;
static CUpti_ActivityMemcpy6 copies[MAX_PENDING];
static size_t copy_count;
static uint64_t records_emitted;

static void pause_ms(double ms)
{
	struct timespec wait = {(time_t)(ms / 1000),
				(long)((ms - (time_t)(ms / 1000) * 1000) * 1e6)};

	nanosleep(&wait, NULL);
}

static void kernel(int64_t start_ns, int64_t end_ns, uint32_t correlation)
{
	CUpti_ActivityKernel10 *record = &pending[pending_count++];

	memset(record, 0, sizeof(*record));
	record->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	record->start = (uint64_t)start_ns;
	record->end = (uint64_t)end_ns;
	record->streamId = 7;
	record->correlationId = correlation;
	record->name = correlation % 2 ? "ampere_sgemm_128x64_tn" : "vectorized_elementwise_kernel";
	record->gridX = 264; /* two blocks per multiprocessor of an H100 */
	record->gridY = record->gridZ = 1;
	record->blockX = 256;
	record->blockY = record->blockZ = 1;
}

/* A host-to-device copy on stream 13, beside the kernels of stream 7. */
static void copy(int64_t start_ns, int64_t end_ns, uint32_t correlation)
{
	CUpti_ActivityMemcpy6 *record = &copies[copy_count++];

	memset(record, 0, sizeof(*record));
	record->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	record->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	record->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	record->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	record->bytes = 1 << 20;
	record->start = (uint64_t)start_ns;
	record->end = (uint64_t)end_ns;
	record->streamId = 13;
	record->correlationId = correlation;
}

static void emit(const CUpti_Activity *record, struct po_cupti_counts *counts)
{
	struct po_cupti_event event;

	po_cupti_emit(po_cupti_convert(record, 0, &event, counts), &event);
}

/* What the collector's flush does with a buffer of records, in order or not. */
static void flush(struct po_cupti_counts *counts, bool reversed)
{
	for (size_t i = 0; i < copy_count; i++)
		emit((const CUpti_Activity *)&copies[i], counts);
	for (size_t i = 0; i < pending_count; i++)
		emit((const CUpti_Activity *)&pending[reversed ? pending_count - 1 - i : i],
		     counts);
	records_emitted = counts->kernels + counts->copies;
	pending_count = copy_count = 0;
}

static void device_allocation(uint64_t address, uint64_t bytes)
{
	CUpti_ActivityMemory4 record;
	struct po_cupti_event event;
	struct po_cupti_counts counts = {0};

	memset(&record, 0, sizeof(record));
	record.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	record.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	record.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	record.address = address;
	record.bytes = bytes;
	record.timestamp = (uint64_t)profopt_now_ns();
	po_cupti_emit(po_cupti_convert((const CUpti_Activity *)&record, 0, &event, &counts),
		      &event);
}

/*
 * The host launches 4 kernels over 1 ms, then waits for them: they run back to back from
 * the first launch until the wait ends, as they would on a device that the host waits for
 * (their times come from the clock, so a loaded machine stretches both alike).
 */
static void compute(int64_t step, double gpu_ms, bool overlap, uint32_t *correlation)
{
	int64_t begin = profopt_now_ns(), end, span;
	uint32_t first = *correlation;

	profopt_stage_begin(PROFOPT_STAGE_FORWARD, "model", step, -1);
	for (int k = 0; k < 4; k++) {
		profopt_gpu_launch(-1, -1, *correlation,
				   *correlation % 2 ? "ampere_sgemm_128x64_tn"
						    : "vectorized_elementwise_kernel");
		(*correlation)++;
		pause_ms(0.25);
	}
	profopt_stage_end(PROFOPT_STAGE_FORWARD, "model", step, -1);
	profopt_gpu_sync_begin(-1, -1);
	pause_ms(gpu_ms - 1);
	end = profopt_now_ns();
	profopt_gpu_sync_end(-1, -1);
	span = (end - begin - 100000) / 4;
	for (int k = 0; k < 4; k++)
		kernel(begin + 100000 + k * span, begin + 100000 + (k + 1) * span - 10000,
		       first + (uint32_t)k);
	if (overlap)
		copy(begin + 150000, begin + 100000 + span / 2, (*correlation)++);
	profopt_stage_begin(PROFOPT_STAGE_OPTIMIZER, "sgd", step, -1);
	pause_ms(0.4);
	profopt_stage_end(PROFOPT_STAGE_OPTIMIZER, "sgd", step, -1);
}

int main(int argc, char **argv)
{
	const char *mode = argc == 2 ? argv[1] : "";
	bool input = strcmp(mode, "input-bound") == 0, leak = strcmp(mode, "leak") == 0;
	bool busy = strcmp(mode, "gpu-bound") == 0;
	struct po_cupti_counts counts = {0};
	uint32_t correlation = 1;

	if (!input && !leak && !busy) {
		fprintf(stderr, "usage: cupti_replay gpu-bound|input-bound|leak\n");
		return 2;
	}
	profopt_run_begin("cupti-replay");
	profopt_run_config("device", "cuda:0");
	for (int64_t step = 0; step < STEPS; step++) {
		profopt_step_begin(step, 0, 32);
		profopt_stage_begin(PROFOPT_STAGE_DATA_WAIT, "", step, -1);
		if (input) /* else the batch is ready: the wait ends at once */
			pause_ms(12);
		profopt_stage_end(PROFOPT_STAGE_DATA_WAIT, "", step, -1);
		compute(step, input ? 3 : 9, busy, &correlation);
		if (leak)
			device_allocation(0x7f0000000000ULL + (uint64_t)step * (8 << 20), 4 << 20);
		profopt_step_end(step, 0, 32);
		flush(&counts, busy && step % 2);
	}
	if (busy) /* what the collector records when CUPTI says it dropped records */
		profopt_counter(PROFOPT_COUNTER_GPU_RECORDS_DROPPED, -1, 17);
	profopt_run_end();
	printf("records %llu\n", (unsigned long long)records_emitted);
	return 0;
}
