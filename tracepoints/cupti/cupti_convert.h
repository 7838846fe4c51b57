/*
 * cupti_convert.h: CUPTI activity records to profopt events. Plain C over CUPTI's own
 * record types (cupti_activity.h): it calls nothing in libcupti, so it is tested with
 * records built by hand, without a GPU or a driver.
 *
 * It also says which runtime and driver API calls launch kernels or wait for the device,
 * for the collector's callbacks.
 *
 * Kernels become profopt_gpu_kernel() records (with their grid, block, registers and
 * shared memory), copies and memsets profopt_gpu_activity() records (times moved onto
 * the trace's clock by offset_ns, which is 0 when CUPTI stamps with CLOCK_MONOTONIC through
 * the timestamp callback); device memory allocations and releases become
 * profopt_mem_alloc()/profopt_mem_free() on the record's device. Records whose times are
 * impossible (an end before the start, a start of 0) are counted, never emitted.
 */
#ifndef PO_CUPTI_CONVERT_H
#define PO_CUPTI_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "profopt.h"

enum po_cupti_out {
	PO_CUPTI_SKIP = 0, /* not a record profopt keeps */
	PO_CUPTI_ACTIVITY, /* event.activity: a copy or memset */
	PO_CUPTI_KERNEL,   /* event.activity and event.shape */
	PO_CUPTI_ALLOC,	   /* event.address, bytes, device */
	PO_CUPTI_FREE,
	PO_CUPTI_BAD_TIME,   /* a kept kind with impossible times: counted */
	PO_CUPTI_INCOMPLETE, /* work not finished when a forced flush returned it (a start or
				end of 0): counted, and lost */
};

struct po_cupti_event {
	struct profopt_gpu_record activity;
	struct profopt_gpu_kernel_shape shape; /* kernels only */
	uint64_t address;
	uint64_t bytes;
	int32_t device;
	const char *label; /* static: what allocated */
};

struct po_cupti_counts {
	uint64_t kernels;
	uint64_t copies;
	uint64_t memsets;
	uint64_t allocations;
	uint64_t releases;
	uint64_t bad_times;
	uint64_t incomplete; /* returned unfinished by a forced flush */
	uint64_t skipped;    /* other kinds, or copies profopt has no kind for (host to host) */
};

/* Converts one record; event is filled for ACTIVITY, ALLOC and FREE. */
enum po_cupti_out po_cupti_convert(const CUpti_Activity *record, int64_t offset_ns,
				   struct po_cupti_event *event, struct po_cupti_counts *counts);

/* What a runtime or driver API call is to the collector, from its callback id. */
enum po_cupti_api {
	PO_CUPTI_API_OTHER = 0,
	PO_CUPTI_API_LAUNCH, /* launches kernels: gpu_launch with its correlation id */
	PO_CUPTI_API_SYNC,   /* the host waits for the device: gpu_sync_begin/end */
};

enum po_cupti_api po_cupti_api_of(CUpti_CallbackDomain domain, CUpti_CallbackId id);

/*
 * The calls the collector subscribes to, one callback each: enabling whole domains would
 * call back on every CUDA call a framework makes (several per kernel in PyTorch).
 */
struct po_cupti_api_call {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId id;
	enum po_cupti_api api;
};

const struct po_cupti_api_call *po_cupti_api_calls(size_t *count);

/* Records a converted event with libprofopt (cupti_emit.c); SKIP and BAD_TIME do nothing. */
void po_cupti_emit(enum po_cupti_out out, const struct po_cupti_event *event);

#endif /* PO_CUPTI_CONVERT_H */
