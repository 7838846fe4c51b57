/*
 * memory.c: allocations from profopt mem_alloc/mem_free and lttng_ust_libc events. Live
 * allocations are keyed by (pid, device, address, source) and grouped into sites by
 * (pid, device, stage open on the allocating thread, label or ip); past max_sites, new
 * sites fold into one "(other sites)" site per process and device. A libc site's ip is
 * placed in the object mapped there when the site is first seen (binmap.c), or at the end
 * when the process's map arrived after its first allocations.
 */
#include <stdlib.h>
#include <string.h>

#include "binmap.h"
#include "model_internal.h"

#define NAME_SPACE_MEM_LABEL 2
#define SITE_FOLD_BIT 0x80u
#define SITE_LABEL_BIT 0x2u

struct alloc_call {
	int source; /* SOURCE_PROFOPT or SOURCE_LIBC */
	int64_t time_ns;
	int32_t device;
	uint64_t addr;
	uint64_t bytes;
	const char *label; /* weak: interned; NULL for libc */
	uint64_t ip;
};

static uint64_t live_key(int32_t pid, int32_t device, int source)
{
	return ((uint64_t)(uint32_t)pid << 32) |
	       (((uint64_t)(uint32_t)(device + 1) & 0x7fffffffu) << 1) | (uint64_t)source;
}

static struct alloc_totals *totals_of(struct po_model *model, int source, int32_t device)
{
	if (device >= 0)
		return &model->gpu_events;
	return source == SOURCE_LIBC ? &model->host_libc : &model->host_profopt;
}

static uint64_t site_b(int32_t pid, int32_t device, int stage, uint32_t bits)
{
	return ((uint64_t)(uint32_t)pid << 32) |
	       (((uint64_t)(uint32_t)(device + 1) & 0xffffu) << 16) |
	       (((uint64_t)(uint32_t)(stage + 1) & 0xffu) << 8) | bits;
}

/* Places a libc site's ip in the object mapped there at time_ns, when one is known. */
static void site_locate(const struct po_model *model, struct po_mem_site *site, int64_t time_ns)
{
	struct po_binmap_hit hit;

	if (site->object || !site->ip ||
	    !po_binmap_lookup(model->binmap, site->pid, site->ip, time_ns, &hit))
		return;
	site->object = hit.path;
	site->offset = hit.offset;
	site->build_id = hit.build_id;
}

/* The site of an allocation, created (or folded) when new; SIZE_MAX when out of memory. */
static size_t site_resolve(struct po_model *model, int32_t pid, int stage,
			   const struct alloc_call *call)
{
	uint64_t a = call->label ? (uint64_t)(uintptr_t)call->label : call->ip;
	uint64_t b = site_b(pid, call->device, stage,
			    (call->label ? SITE_LABEL_BIT : 0) | (uint32_t)call->source);
	struct po_map_entry *entry = po_map_find(&model->site_index, a, b);
	struct po_mem_site *site;
	bool created;

	if (entry)
		return entry->value;
	if (model->site_count >= model->config.max_sites) {
		a = 0;
		b = site_b(pid, call->device, -1, SITE_FOLD_BIT);
	}
	entry = po_map_upsert(&model->site_index, a, b, &created);
	if (!entry)
		return SIZE_MAX;
	if (!created)
		return entry->value;
	if (po_array_reserve((void **)&model->sites, &model->site_capacity, model->site_count + 1,
			     sizeof(struct po_mem_site)) != PO_STATUS_OK) {
		po_map_remove(&model->site_index, entry);
		return SIZE_MAX;
	}
	entry->value = model->site_count;
	site = &model->sites[model->site_count];
	*site = (struct po_mem_site){.pid = pid,
				     .device = call->device,
				     .stage = stage,
				     .label = call->label,
				     .ip = call->ip,
				     .source_line = -1,
				     .first_live_step = -1,
				     .last_live_step = -1};
	if (b & SITE_FOLD_BIT) {
		site->stage = -1;
		site->label = model->fold_site_label;
		site->ip = 0;
	}
	site_locate(model, site, call->time_ns);
	return model->site_count++;
}

static void release(struct po_model *model, struct po_map_entry *entry, int source, int32_t device)
{
	struct po_mem_site *site = &model->sites[entry->aux1];
	struct alloc_totals *totals = totals_of(model, source, device);

	site->free_count++;
	site->free_bytes += (int64_t)entry->value;
	totals->live_bytes -= (int64_t)entry->value;
	po_map_remove(&model->live, entry);
}

static void do_free(struct po_model *model, int32_t pid, int source, int32_t device, uint64_t addr)
{
	struct po_map_entry *entry = po_map_find(&model->live, addr, live_key(pid, device, source));

	if (!entry) {
		model->memory.unmatched_frees++;
		if (source == SOURCE_PROFOPT)
			model->quality.unmatched_mem_frees++;
		return;
	}
	release(model, entry, source, device);
}

static enum po_status do_alloc(struct po_model *model, struct thread *thread,
			       const struct alloc_call *call)
{
	uint64_t key = live_key(thread->pid, call->device, call->source);
	struct po_map_entry *entry = po_map_find(&model->live, call->addr, key);
	struct alloc_totals *totals = totals_of(model, call->source, call->device);
	size_t site;

	if (entry) /* the address is live again: the old allocation ended unseen */
		release(model, entry, call->source, call->device);
	site = site_resolve(model, thread->pid, spans_innermost_stage(thread), call);
	if (site == SIZE_MAX)
		return PO_STATUS_NOMEM;
	entry = po_map_upsert(&model->live, call->addr, key, NULL);
	if (!entry)
		return PO_STATUS_NOMEM;
	entry->value = call->bytes;
	entry->aux1 = (int64_t)site;
	entry->aux2 = model->current_step_number;
	model->sites[site].alloc_count++;
	model->sites[site].alloc_bytes += (int64_t)call->bytes;
	totals->live_bytes += (int64_t)call->bytes;
	if (totals->live_bytes > totals->peak_bytes)
		totals->peak_bytes = totals->live_bytes;
	return PO_STATUS_OK;
}

static enum po_status profopt_event(struct po_model *model, struct thread *thread,
				    const struct po_event *event)
{
	struct alloc_call call = {.source = SOURCE_PROFOPT,
				  .device = event->u.mem.device,
				  .addr = event->u.mem.addr,
				  .bytes = event->u.mem.bytes};

	model->memory.has_alloc_events = true;
	if (call.device < 0) {
		call.device = -1;
		model->has_profopt_host = true;
	} else {
		model->has_profopt_gpu = true;
	}
	if (event->kind == PO_EV_MEM_FREE) {
		do_free(model, thread->pid, SOURCE_PROFOPT, call.device, call.addr);
		return PO_STATUS_OK;
	}
	call.label =
	    model_intern_capped(model, NAME_SPACE_MEM_LABEL, event->u.mem.label,
				&model->mem_label_count, PO_NAME_CAP, model->fold_site_label);
	if (!call.label)
		return PO_STATUS_NOMEM;
	return do_alloc(model, thread, &call);
}

/*
 * libc: malloc, calloc and memalign allocate ptr when it is not 0; posix_memalign only
 * when it returned 0. realloc frees in_ptr (unless it failed, returning 0 for a non-zero
 * size, which leaves the block allocated) and allocates ptr when size > 0; realloc(p, 0)
 * is a free. free(0) does nothing.
 */
static enum po_status libc_event(struct po_model *model, struct thread *thread,
				 const struct po_event *event)
{
	struct alloc_call call = {.source = SOURCE_LIBC,
				  .time_ns = event->time_ns,
				  .device = -1,
				  .addr = event->u.libc.ptr,
				  .bytes = event->u.libc.size,
				  .ip = event->ip};
	bool allocates = call.addr != 0;

	model->memory.has_libc_events = true;
	switch (event->kind) {
	case PO_EV_LIBC_FREE:
		if (call.addr)
			do_free(model, thread->pid, SOURCE_LIBC, -1, call.addr);
		return PO_STATUS_OK;
	case PO_EV_LIBC_REALLOC:
		if (event->u.libc.in_ptr && (call.addr || call.bytes == 0))
			do_free(model, thread->pid, SOURCE_LIBC, -1, event->u.libc.in_ptr);
		allocates = allocates && call.bytes > 0;
		break;
	case PO_EV_LIBC_POSIX_MEMALIGN:
		allocates = allocates && event->u.libc.result == 0;
		break;
	default:
		break;
	}
	return allocates ? do_alloc(model, thread, &call) : PO_STATUS_OK;
}

/* The objects mapped in a process: kept only when they can place allocation sites. */
static enum po_status object_event(struct po_model *model, const struct po_event *event)
{
	if (!model->binmap && !(model->binmap = po_binmap_create(model->strings)))
		return PO_STATUS_NOMEM;
	return po_binmap_consume(model->binmap, event);
}

enum po_status memory_event(struct po_model *model, struct thread *thread,
			    const struct po_event *event)
{
	switch (event->kind) {
	case PO_EV_MEM_ALLOC:
	case PO_EV_MEM_FREE:
		return profopt_event(model, thread, event);
	case PO_EV_LIBC_MALLOC:
	case PO_EV_LIBC_CALLOC:
	case PO_EV_LIBC_REALLOC:
	case PO_EV_LIBC_MEMALIGN:
	case PO_EV_LIBC_POSIX_MEMALIGN:
	case PO_EV_LIBC_FREE:
		return libc_event(model, thread, event);
	default:
		return object_event(model, event);
	}
}

int64_t memory_host_live(const struct po_model *model)
{
	if (model->has_profopt_host)
		return model->host_profopt.live_bytes;
	if (model->memory.has_libc_events)
		return model->host_libc.live_bytes;
	return -1;
}

int64_t memory_gpu_live(const struct po_model *model)
{
	if (model->has_profopt_gpu)
		return model->gpu_events.live_bytes;
	return model->memory.has_gpu_counter ? model->gpu_counter_sum_bytes : -1;
}

static void count_live(struct po_model *model)
{
	for (size_t i = 0; i < model->live.capacity; i++) {
		const struct po_map_entry *entry = &model->live.slots[i];
		struct po_mem_site *site;

		if (!entry->used)
			continue;
		site = &model->sites[entry->aux1];
		site->live_count++;
		site->live_bytes += (int64_t)entry->value;
		if (entry->aux2 < 0)
			continue;
		if (site->first_live_step < 0 || entry->aux2 < site->first_live_step)
			site->first_live_step = entry->aux2;
		if (entry->aux2 > site->last_live_step)
			site->last_live_step = entry->aux2;
	}
}

static int compare_strings(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static int compare_sites(const void *left, const void *right)
{
	const struct po_mem_site *a = left, *b = right;

	if (a->live_bytes != b->live_bytes)
		return a->live_bytes > b->live_bytes ? -1 : 1;
	if (a->alloc_bytes != b->alloc_bytes)
		return a->alloc_bytes > b->alloc_bytes ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->stage != b->stage)
		return a->stage < b->stage ? -1 : 1;
	if (a->ip != b->ip)
		return a->ip < b->ip ? -1 : 1;
	return compare_strings(a->label, b->label);
}

static void summarize(struct po_model *model)
{
	struct po_memory *memory = &model->memory;

	if (model->has_profopt_host)
		memory->host_peak_bytes = model->host_profopt.peak_bytes;
	else if (memory->has_libc_events)
		memory->host_peak_bytes = model->host_libc.peak_bytes;
	else
		memory->host_peak_bytes = memory->rss_peak_bytes;
	if (model->has_profopt_gpu)
		memory->gpu_peak_bytes = model->gpu_events.peak_bytes;
	else if (memory->has_gpu_counter)
		memory->gpu_peak_bytes = model->gpu_counter_peak_bytes;
}

enum po_status memory_build(struct po_model *model, struct po_analysis *analysis)
{
	count_live(model);
	summarize(model);
	analysis->memory = model->memory;
	analysis->mem_sites = calloc(model->site_count + 1, sizeof(*analysis->mem_sites));
	if (!analysis->mem_sites)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < model->site_count; i++) {
		site_locate(model, &model->sites[i], INT64_MAX);
		analysis->mem_sites[i] = model->sites[i];
		analysis->mem_sites[i].role = finish_role_of(analysis, model->sites[i].pid);
	}
	analysis->mem_site_count = model->site_count;
	po_sort(analysis->mem_sites, analysis->mem_site_count, sizeof(*analysis->mem_sites),
		compare_sites);
	return PO_STATUS_OK;
}
