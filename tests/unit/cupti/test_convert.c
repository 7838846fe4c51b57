/*
 * test_convert.c: CUPTI activity records built by hand, as CUPTI 13 lays them out, through
 * the collector's conversion: kernels, copies in each direction (pageable or pinned),
 * memsets and device memory become the profopt records they should; impossible times are
 * counted and never emitted; kinds profopt does not keep are skipped; the clock offset
 * moves every time. The runtime and driver calls the collector's callbacks record as
 * launches and host waits.
 */
#include <string.h>

#include "check.h"
#include "cupti_convert.h"

#define MS 1000000ULL

static void test_kernel(void)
{
	CUpti_ActivityKernel10 kernel;
	struct po_cupti_event event;
	struct po_cupti_counts counts = {0};

	memset(&kernel, 0, sizeof(kernel));
	kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	kernel.start = 10 * MS;
	kernel.end = 12 * MS;
	kernel.deviceId = 1;
	kernel.streamId = 7;
	kernel.correlationId = 42;
	kernel.name = "volta_sgemm_128x64_nn";
	kernel.gridX = 132;
	kernel.gridY = 2;
	kernel.gridZ = 1;
	kernel.blockX = 256;
	kernel.blockY = 1;
	kernel.blockZ = 1;
	kernel.registersPerThread = 96;
	kernel.staticSharedMemory = 16384;
	kernel.dynamicSharedMemory = 32768;
	CHECK(po_cupti_convert((const CUpti_Activity *)&kernel, 0, &event, &counts) ==
	      PO_CUPTI_KERNEL);
	CHECK(event.activity.kind == PROFOPT_GPU_KERNEL);
	CHECK_INT_EQ(event.activity.device, 1);
	CHECK_INT_EQ(event.activity.stream, 7);
	CHECK_INT_EQ(event.activity.start_ns, 10 * MS);
	CHECK_INT_EQ(event.activity.end_ns, 12 * MS);
	CHECK_INT_EQ(event.activity.correlation_id, 42);
	CHECK_INT_EQ(event.activity.bytes, 0);
	CHECK_STR_EQ(event.activity.name, "volta_sgemm_128x64_nn");
	/* the launch shape: shared memory is the static and dynamic parts together */
	CHECK_INT_EQ(event.shape.grid_x, 132);
	CHECK_INT_EQ(event.shape.grid_y, 2);
	CHECK_INT_EQ(event.shape.grid_z, 1);
	CHECK_INT_EQ(event.shape.block_x, 256);
	CHECK_INT_EQ(event.shape.block_y, 1);
	CHECK_INT_EQ(event.shape.block_z, 1);
	CHECK_INT_EQ(event.shape.registers_per_thread, 96);
	CHECK_INT_EQ(event.shape.shared_bytes, 49152);
	/* an offset between the clocks moves both ends */
	kernel.gridY = -1; /* an impossible dimension is recorded as unknown */
	CHECK(po_cupti_convert((const CUpti_Activity *)&kernel, -4 * (int64_t)MS, &event,
			       &counts) == PO_CUPTI_KERNEL);
	CHECK_INT_EQ(event.shape.grid_y, 0);
	CHECK_INT_EQ(event.activity.start_ns, 6 * MS);
	CHECK_INT_EQ(event.activity.end_ns, 8 * MS);
	CHECK_INT_EQ(counts.kernels, 2);
}

static enum po_cupti_out copy(uint8_t kind, uint8_t source, uint8_t destination,
			      struct po_cupti_event *event, struct po_cupti_counts *counts)
{
	CUpti_ActivityMemcpy6 copy;

	memset(&copy, 0, sizeof(copy));
	copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	copy.copyKind = kind;
	copy.srcKind = source;
	copy.dstKind = destination;
	copy.bytes = 1 << 20;
	copy.start = 20 * MS;
	copy.end = 21 * MS;
	copy.streamId = 3;
	return po_cupti_convert((const CUpti_Activity *)&copy, 0, event, counts);
}

static void test_copies(void)
{
	struct po_cupti_event event;
	struct po_cupti_counts counts = {0};

	CHECK(copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
		   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, &event, &counts) == PO_CUPTI_ACTIVITY);
	CHECK(event.activity.kind == PROFOPT_GPU_MEMCPY_H2D);
	CHECK_STR_EQ(event.activity.name, "memcpy HtoD (pageable)");
	CHECK_INT_EQ(event.activity.bytes, 1 << 20);
	CHECK(copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
		   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, &event, &counts) == PO_CUPTI_ACTIVITY);
	CHECK_STR_EQ(event.activity.name, "memcpy HtoD (pinned)");
	CHECK(copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
		   CUPTI_ACTIVITY_MEMORY_KIND_PINNED, &event, &counts) == PO_CUPTI_ACTIVITY);
	CHECK(event.activity.kind == PROFOPT_GPU_MEMCPY_D2H);
	CHECK(copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
		   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, &event, &counts) == PO_CUPTI_ACTIVITY);
	CHECK(event.activity.kind == PROFOPT_GPU_MEMCPY_D2D);
	CHECK(copy(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
		   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, &event, &counts) == PO_CUPTI_ACTIVITY);
	CHECK_STR_EQ(event.activity.name, "memcpy PtoP");
	/* host to host moves no GPU work profopt can name: skipped and counted */
	CHECK(copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
		   CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, &event, &counts) == PO_CUPTI_SKIP);
	CHECK_INT_EQ(counts.copies, 5);
	CHECK_INT_EQ(counts.skipped, 1);
}

static void test_memset_and_memory(void)
{
	CUpti_ActivityMemset4 set;
	CUpti_ActivityMemory4 memory;
	struct po_cupti_event event;
	struct po_cupti_counts counts = {0};

	memset(&set, 0, sizeof(set));
	set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	set.bytes = 4096;
	set.start = 5 * MS;
	set.end = 5 * MS + 1000;
	CHECK(po_cupti_convert((const CUpti_Activity *)&set, 0, &event, &counts) ==
	      PO_CUPTI_ACTIVITY);
	CHECK(event.activity.kind == PROFOPT_GPU_MEMSET && event.activity.bytes == 4096);

	memset(&memory, 0, sizeof(memory));
	memory.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	memory.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	memory.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	memory.address = 0x7f0000000000ULL;
	memory.bytes = 2 << 20;
	memory.deviceId = 2;
	memory.timestamp = 9 * MS;
	CHECK(po_cupti_convert((const CUpti_Activity *)&memory, 0, &event, &counts) ==
	      PO_CUPTI_ALLOC);
	CHECK(event.address == 0x7f0000000000ULL && event.bytes == 2 << 20 && event.device == 2);
	CHECK_STR_EQ(event.label, "cuda device memory");
	memory.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	CHECK(po_cupti_convert((const CUpti_Activity *)&memory, 0, &event, &counts) ==
	      PO_CUPTI_FREE);
	/* pinned host memory is the host's, not a device's */
	memory.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	memory.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	CHECK(po_cupti_convert((const CUpti_Activity *)&memory, 0, &event, &counts) ==
	      PO_CUPTI_ALLOC);
	CHECK_INT_EQ(event.device, PROFOPT_DEVICE_PINNED);
	CHECK(counts.memsets == 1 && counts.allocations == 2 && counts.releases == 1);
}

/* Times that run backwards or that the offset would make negative. */
static void test_bad_times(void)
{
	CUpti_ActivityKernel10 kernel;
	struct po_cupti_event event;
	struct po_cupti_counts counts = {0};
	const uint64_t starts[] = {12 * MS, 1 * MS, UINT64_MAX};
	const uint64_t ends[] = {10 * MS, 2 * MS, UINT64_MAX};
	const int64_t offsets[] = {0, -2 * (int64_t)MS, 0};

	memset(&kernel, 0, sizeof(kernel));
	kernel.kind = CUPTI_ACTIVITY_KIND_KERNEL;
	kernel.name = "k";
	for (size_t i = 0; i < 3; i++) {
		kernel.start = starts[i];
		kernel.end = ends[i];
		CHECK(po_cupti_convert((const CUpti_Activity *)&kernel, offsets[i], &event,
				       &counts) == PO_CUPTI_BAD_TIME);
	}
	CHECK_INT_EQ(counts.bad_times, 3);
	CHECK_INT_EQ(counts.kernels, 0);
}

/*
 * A forced flush returns the records of work still running with a start or an end of 0
 * (seen on an H100: about one 1 ms kernel in twelve at each flush): counted apart, lost.
 */
static void test_incomplete(void)
{
	CUpti_ActivityKernel10 kernel;
	CUpti_ActivityMemset4 set;
	struct po_cupti_event event;
	struct po_cupti_counts counts = {0};

	memset(&kernel, 0, sizeof(kernel));
	kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	kernel.name = "k";
	kernel.start = 5 * MS;
	CHECK(po_cupti_convert((const CUpti_Activity *)&kernel, 0, &event, &counts) ==
	      PO_CUPTI_INCOMPLETE);
	kernel.start = 0;
	kernel.end = 0;
	CHECK(po_cupti_convert((const CUpti_Activity *)&kernel, 0, &event, &counts) ==
	      PO_CUPTI_INCOMPLETE);
	memset(&set, 0, sizeof(set));
	set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	set.start = 7 * MS;
	CHECK(po_cupti_convert((const CUpti_Activity *)&set, 0, &event, &counts) ==
	      PO_CUPTI_INCOMPLETE);
	CHECK_INT_EQ(counts.incomplete, 3);
	CHECK_INT_EQ(counts.bad_times, 0);
	CHECK_INT_EQ(counts.kernels + counts.memsets, 0);
}

/* The callbacks the collector enables are the launches and waits, nothing else. */
static void test_enabled_calls(void)
{
	size_t count = 0, launches = 0, waits = 0;
	const struct po_cupti_api_call *calls = po_cupti_api_calls(&count);

	for (size_t i = 0; i < count; i++) {
		CHECK(po_cupti_api_of(calls[i].domain, calls[i].id) == calls[i].api);
		launches += calls[i].api == PO_CUPTI_API_LAUNCH;
		waits += calls[i].api == PO_CUPTI_API_SYNC;
	}
	CHECK_INT_EQ(launches + waits, count);
	CHECK(launches >= 10 && waits >= 6);
	CHECK(po_cupti_api_of(CUPTI_CB_DOMAIN_RUNTIME_API,
			      CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020) == PO_CUPTI_API_OTHER);
}

static void test_other_kinds(void)
{
	CUpti_ActivityAPI api;
	struct po_cupti_event event;
	struct po_cupti_counts counts = {0};

	memset(&api, 0, sizeof(api));
	api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	CHECK(po_cupti_convert((const CUpti_Activity *)&api, 0, &event, &counts) == PO_CUPTI_SKIP);
	CHECK_INT_EQ(counts.skipped, 1);
}

/* The callbacks the collector turns into launches and host waits, in both APIs. */
static void test_api_calls(void)
{
	CHECK(po_cupti_api_of(CUPTI_CB_DOMAIN_RUNTIME_API,
			      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) ==
	      PO_CUPTI_API_LAUNCH);
	CHECK(po_cupti_api_of(CUPTI_CB_DOMAIN_RUNTIME_API,
			      CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000) ==
	      PO_CUPTI_API_LAUNCH);
	CHECK(po_cupti_api_of(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) ==
	      PO_CUPTI_API_LAUNCH);
	CHECK(po_cupti_api_of(CUPTI_CB_DOMAIN_RUNTIME_API,
			      CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020) ==
	      PO_CUPTI_API_SYNC);
	CHECK(po_cupti_api_of(CUPTI_CB_DOMAIN_RUNTIME_API,
			      CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000) ==
	      PO_CUPTI_API_SYNC);
	CHECK(po_cupti_api_of(CUPTI_CB_DOMAIN_DRIVER_API,
			      CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize) == PO_CUPTI_API_SYNC);
	/* a copy blocks too, but it is GPU work of its own, not a wait */
	CHECK(po_cupti_api_of(CUPTI_CB_DOMAIN_RUNTIME_API,
			      CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020) == PO_CUPTI_API_OTHER);
	/* the same number in another domain means another call */
	CHECK(po_cupti_api_of(CUPTI_CB_DOMAIN_RESOURCE,
			      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) ==
	      PO_CUPTI_API_OTHER);
}

int main(void)
{
	RUN(test_api_calls);
	RUN(test_kernel);
	RUN(test_incomplete);
	RUN(test_enabled_calls);
	RUN(test_copies);
	RUN(test_memset_and_memory);
	RUN(test_bad_times);
	RUN(test_other_kinds);
	return CHECK_SUMMARY();
}
