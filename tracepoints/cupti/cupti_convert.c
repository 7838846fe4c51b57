/* cupti_convert.c: CUPTI activity records to profopt events (cupti_convert.h). */
#include <stdbool.h>

#include "cupti_convert.h"

/* CUPTI's time (ns) on the trace's clock; false when it cannot be a time. */
static bool trace_time(uint64_t time, int64_t offset_ns, int64_t *out)
{
	int64_t value;

	if (time == 0 || time > (uint64_t)INT64_MAX)
		return false;
	if (__builtin_add_overflow((int64_t)time, offset_ns, &value) || value < 0)
		return false;
	*out = value;
	return true;
}

static uint32_t dimension(int32_t value)
{
	return value > 0 ? (uint32_t)value : 0;
}

/* A kernel's launch shape; its activity part is filled by activity(). */
static void kernel_shape(const CUpti_ActivityKernel10 *kernel,
			 struct profopt_gpu_kernel_shape *shape)
{
	uint64_t shared = (uint64_t)dimension(kernel->staticSharedMemory) +
			  dimension(kernel->dynamicSharedMemory);

	*shape = (struct profopt_gpu_kernel_shape){
	    .grid_x = dimension(kernel->gridX),
	    .grid_y = dimension(kernel->gridY),
	    .grid_z = dimension(kernel->gridZ),
	    .block_x = dimension(kernel->blockX),
	    .block_y = dimension(kernel->blockY),
	    .block_z = dimension(kernel->blockZ),
	    .registers_per_thread = kernel->registersPerThread,
	    .shared_bytes = shared > UINT32_MAX ? UINT32_MAX : (uint32_t)shared};
}

static enum po_cupti_out activity(struct po_cupti_event *event, enum profopt_gpu_kind kind,
				  const char *name, uint32_t device, uint32_t stream,
				  uint64_t bytes, uint64_t start, uint64_t end,
				  uint32_t correlation, int64_t offset_ns,
				  struct po_cupti_counts *counts)
{
	struct profopt_gpu_record *record = &event->activity;

	if (start == 0 || end == 0) { /* a forced flush's record of work not finished */
		counts->incomplete++;
		return PO_CUPTI_INCOMPLETE;
	}
	*record = (struct profopt_gpu_record){.device = (int32_t)device,
					      .stream = (int32_t)stream,
					      .kind = kind,
					      .name = name,
					      .bytes = bytes,
					      .correlation_id = correlation};
	if (!trace_time(start, offset_ns, &record->start_ns) ||
	    !trace_time(end, offset_ns, &record->end_ns) || record->end_ns < record->start_ns ||
	    device > INT32_MAX || stream > INT32_MAX) {
		counts->bad_times++;
		return PO_CUPTI_BAD_TIME;
	}
	switch (kind) {
	case PROFOPT_GPU_KERNEL:
		counts->kernels++;
		break;
	case PROFOPT_GPU_MEMSET:
		counts->memsets++;
		break;
	default:
		counts->copies++;
		break;
	}
	return PO_CUPTI_ACTIVITY;
}

/* The copy's direction as profopt names it, and a name that says where the host side was. */
static bool copy_kind(const CUpti_ActivityMemcpy6 *copy, enum profopt_gpu_kind *kind,
		      const char **name)
{
	bool pageable = copy->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
			copy->dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;

	switch (copy->copyKind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		*kind = PROFOPT_GPU_MEMCPY_H2D;
		*name = pageable ? "memcpy HtoD (pageable)" : "memcpy HtoD (pinned)";
		return true;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		*kind = PROFOPT_GPU_MEMCPY_D2H;
		*name = pageable ? "memcpy DtoH (pageable)" : "memcpy DtoH (pinned)";
		return true;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
		*kind = PROFOPT_GPU_MEMCPY_D2D;
		*name = "memcpy DtoD";
		return true;
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		*kind = PROFOPT_GPU_MEMCPY_D2D;
		*name = "memcpy PtoP";
		return true;
	default:
		return false; /* host to host, unknown: no GPU engine profopt can name */
	}
}

static const char *memory_label(uint32_t kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
		return "cuda device memory";
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
		return "cuda managed memory";
	case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
		return "cuda pinned host memory";
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
		return "cuda static memory";
	default:
		return "cuda memory";
	}
}

static enum po_cupti_out memory(const CUpti_ActivityMemory4 *memory, struct po_cupti_event *event,
				struct po_cupti_counts *counts)
{
	bool allocation =
	    memory->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;

	if (!allocation &&
	    memory->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
		counts->skipped++;
		return PO_CUPTI_SKIP;
	}
	/* Pinned host memory is the host's (in the process's RSS), marked as pinned. */
	*event = (struct po_cupti_event){
	    .address = memory->address,
	    .bytes = memory->bytes,
	    .device = memory->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED
			  ? PROFOPT_DEVICE_PINNED
			  : (int32_t)(memory->deviceId > INT32_MAX ? INT32_MAX : memory->deviceId),
	    .label = memory_label(memory->memoryKind)};
	if (allocation) {
		counts->allocations++;
		return PO_CUPTI_ALLOC;
	}
	counts->releases++;
	return PO_CUPTI_FREE;
}

enum po_cupti_out po_cupti_convert(const CUpti_Activity *record, int64_t offset_ns,
				   struct po_cupti_event *event, struct po_cupti_counts *counts)
{
	switch (record->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *kernel = (const CUpti_ActivityKernel10 *)record;
		enum po_cupti_out out = activity(
		    event, PROFOPT_GPU_KERNEL, kernel->name, kernel->deviceId, kernel->streamId, 0,
		    kernel->start, kernel->end, kernel->correlationId, offset_ns, counts);

		if (out != PO_CUPTI_ACTIVITY)
			return out;
		kernel_shape(kernel, &event->shape);
		return PO_CUPTI_KERNEL;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *copy = (const CUpti_ActivityMemcpy6 *)record;
		enum profopt_gpu_kind kind;
		const char *name;

		if (!copy_kind(copy, &kind, &name)) {
			counts->skipped++;
			return PO_CUPTI_SKIP;
		}
		return activity(event, kind, name, copy->deviceId, copy->streamId, copy->bytes,
				copy->start, copy->end, copy->correlationId, offset_ns, counts);
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *set = (const CUpti_ActivityMemset4 *)record;

		return activity(event, PROFOPT_GPU_MEMSET, "memset", set->deviceId, set->streamId,
				set->bytes, set->start, set->end, set->correlationId, offset_ns,
				counts);
	}
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return memory((const CUpti_ActivityMemory4 *)record, event, counts);
	default:
		counts->skipped++;
		return PO_CUPTI_SKIP;
	}
}

/* The API calls the collector's callbacks watch: kernel launches and host waits. */
static const struct po_cupti_api_call api_calls[] = {
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
     PO_CUPTI_API_LAUNCH},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
     PO_CUPTI_API_LAUNCH},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
     PO_CUPTI_API_LAUNCH},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
     PO_CUPTI_API_LAUNCH},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
     PO_CUPTI_API_LAUNCH},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
     PO_CUPTI_API_LAUNCH},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
     PO_CUPTI_API_LAUNCH},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
     PO_CUPTI_API_LAUNCH},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
     PO_CUPTI_API_LAUNCH},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
     PO_CUPTI_API_LAUNCH},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, PO_CUPTI_API_LAUNCH},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, PO_CUPTI_API_LAUNCH},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, PO_CUPTI_API_LAUNCH},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, PO_CUPTI_API_LAUNCH},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
     PO_CUPTI_API_SYNC},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
     PO_CUPTI_API_SYNC},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000,
     PO_CUPTI_API_SYNC},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
     PO_CUPTI_API_SYNC},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, PO_CUPTI_API_SYNC},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, PO_CUPTI_API_SYNC},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, PO_CUPTI_API_SYNC},
};

const struct po_cupti_api_call *po_cupti_api_calls(size_t *count)
{
	*count = sizeof(api_calls) / sizeof(api_calls[0]);
	return api_calls;
}

enum po_cupti_api po_cupti_api_of(CUpti_CallbackDomain domain, CUpti_CallbackId id)
{
	for (size_t i = 0; i < sizeof(api_calls) / sizeof(api_calls[0]); i++)
		if (api_calls[i].domain == domain && api_calls[i].id == id)
			return api_calls[i].api;
	return PO_CUPTI_API_OTHER;
}
