/*
 * memory.c: the memory tracker (memory.h). Allocations from profopt mem_alloc/mem_free and
 * lttng_ust_libc events; live allocations are keyed by (pid, device, address, source) and
 * grouped into sites by (pid, device, stage open on the allocating thread, label or ip);
 * past max_sites, new sites fold into one "(other sites)" site per process and device. A
 * libc site's ip is placed in the object mapped there when the site is first seen
 * (binmap.c), or when a result is built, when the process's map arrived after its first
 * allocations.
 */
#include <stdlib.h>
#include <string.h>

#include "memory.h"

#define SITE_FOLD_BIT 0x80u
#define SITE_LABEL_BIT 0x2u
#define SITE_PINNED_BIT 0x4u
#define SOURCE_PROFOPT 0
#define SOURCE_LIBC 1

struct alloc_call {
	int source;  /* SOURCE_PROFOPT or SOURCE_LIBC */
	bool pinned; /* host memory pinned for the devices (PROFOPT_DEVICE_PINNED) */
	int64_t time_ns;
	int32_t device;
	uint64_t addr;
	uint64_t bytes;
	const char *label; /* weak: interned; NULL for libc */
	uint64_t ip;
};

/* A live allocation: what the live map's entries hold, read and written only here. */
struct live_alloc {
	uint64_t bytes;
	size_t site;	     /* index into the tracker's sites */
	int64_t step_number; /* the step it was made in; -1 */
};

static struct live_alloc live_get(const struct po_map_entry *entry)
{
	return (struct live_alloc){entry->value, (size_t)entry->aux1, entry->aux2};
}

static void live_set(struct po_map_entry *entry, struct live_alloc alloc)
{
	entry->value = alloc.bytes;
	entry->aux1 = (int64_t)alloc.site;
	entry->aux2 = alloc.step_number;
}

static uint64_t live_key(int32_t pid, int32_t device, int source)
{
	return ((uint64_t)(uint32_t)pid << 32) |
	       (((uint64_t)(uint32_t)(device + 1) & 0x7fffffffu) << 1) | (uint64_t)source;
}

static struct alloc_totals *totals_of(struct po_memory_tracker *t, int source, int32_t device)
{
	if (device >= 0)
		return &t->gpu_events;
	return source == SOURCE_LIBC ? &t->host_libc : &t->host_profopt;
}

static uint64_t site_b(int32_t pid, int32_t device, int stage, uint32_t bits)
{
	return ((uint64_t)(uint32_t)pid << 32) |
	       (((uint64_t)(uint32_t)(device + 1) & 0xffffu) << 16) |
	       (((uint64_t)(uint32_t)(stage + 1) & 0xffu) << 8) | bits;
}

/* Places a libc site's ip in the object mapped there at time_ns, when one is known. */
static void site_locate(const struct po_memory_tracker *t, struct po_mem_site *site,
			int64_t time_ns)
{
	struct po_binmap_hit hit;

	if (site->object || !site->ip ||
	    !po_binmap_lookup(t->binmap, site->pid, site->ip, time_ns, &hit))
		return;
	site->object = hit.path;
	site->offset = hit.offset;
	site->build_id = hit.build_id;
}

/* The site of an allocation, created (or folded) when new; SIZE_MAX when out of memory. */
static size_t site_resolve(struct po_memory_tracker *t, int32_t pid, int stage,
			   const struct alloc_call *call)
{
	uint64_t a = call->label ? (uint64_t)(uintptr_t)call->label : call->ip;
	uint64_t b = site_b(pid, call->device, stage,
			    (call->label ? SITE_LABEL_BIT : 0) |
				(call->pinned ? SITE_PINNED_BIT : 0) | (uint32_t)call->source);
	struct po_map_entry *entry = po_map_find(&t->site_index, a, b);
	struct po_mem_site *site;
	bool created;

	if (entry)
		return entry->value;
	if (t->site_count >= t->max_sites) {
		a = 0;
		b = site_b(pid, call->device, -1, SITE_FOLD_BIT);
	}
	entry = po_map_upsert(&t->site_index, a, b, &created);
	if (!entry)
		return SIZE_MAX;
	if (!created)
		return entry->value;
	if (po_array_reserve((void **)&t->sites, &t->site_capacity, t->site_count + 1,
			     sizeof(struct po_mem_site)) != PO_STATUS_OK) {
		po_map_remove(&t->site_index, entry);
		return SIZE_MAX;
	}
	entry->value = t->site_count;
	site = &t->sites[t->site_count];
	*site = (struct po_mem_site){.pid = pid,
				     .device = call->device,
				     .pinned = call->pinned,
				     .stage = stage,
				     .label = call->label,
				     .ip = call->ip,
				     .source_line = -1,
				     .first_live_step = -1,
				     .last_live_step = -1};
	if (b & SITE_FOLD_BIT) {
		site->stage = -1;
		site->label = t->fold_label;
		site->ip = 0;
	}
	site_locate(t, site, call->time_ns);
	return t->site_count++;
}

static void release(struct po_memory_tracker *t, struct po_map_entry *entry, int source,
		    int32_t device)
{
	struct live_alloc alloc = live_get(entry);
	struct po_mem_site *site = &t->sites[alloc.site];
	struct alloc_totals *totals = totals_of(t, source, device);

	site->free_count++;
	site->free_bytes += (int64_t)alloc.bytes;
	totals->live_bytes -= (int64_t)alloc.bytes;
	po_map_remove(&t->live, entry);
}

static void do_free(struct po_memory_tracker *t, int32_t pid, int source, int32_t device,
		    uint64_t addr)
{
	struct po_map_entry *entry = po_map_find(&t->live, addr, live_key(pid, device, source));

	if (!entry) {
		t->out.unmatched_frees++;
		if (source == SOURCE_PROFOPT)
			t->unmatched_profopt_frees++;
		return;
	}
	release(t, entry, source, device);
}

static enum po_status do_alloc(struct po_memory_tracker *t, const struct po_alloc_context *context,
			       const struct alloc_call *call)
{
	uint64_t key = live_key(context->pid, call->device, call->source);
	struct po_map_entry *entry = po_map_find(&t->live, call->addr, key);
	struct alloc_totals *totals = totals_of(t, call->source, call->device);
	uint64_t bytes = call->bytes;
	size_t site;

	if (bytes > PO_ALLOC_LIMIT_BYTES) { /* kept, so that its free matches, with no size */
		t->implausible_sizes++;
		bytes = 0;
	}
	if (entry) /* the address is live again: the old allocation ended unseen */
		release(t, entry, call->source, call->device);
	site = site_resolve(t, context->pid, context->stage, call);
	if (site == SIZE_MAX)
		return PO_STATUS_NOMEM;
	entry = po_map_upsert(&t->live, call->addr, key, NULL);
	if (!entry)
		return PO_STATUS_NOMEM;
	live_set(entry, (struct live_alloc){bytes, site, context->step_number});
	t->sites[site].alloc_count++;
	t->sites[site].alloc_bytes += (int64_t)bytes;
	totals->live_bytes += (int64_t)bytes;
	if (totals->live_bytes > totals->peak_bytes)
		totals->peak_bytes = totals->live_bytes;
	return PO_STATUS_OK;
}

static enum po_status profopt_event(struct po_memory_tracker *t, const struct po_event *event,
				    const struct po_alloc_context *context)
{
	struct alloc_call call = {.source = SOURCE_PROFOPT,
				  .device = event->u.mem.device,
				  .addr = event->u.mem.addr,
				  .bytes = event->u.mem.bytes,
				  .label = context->label};

	t->out.has_alloc_events = true;
	if (call.device < 0) {
		call.pinned = call.device == -2; /* PROFOPT_DEVICE_PINNED */
		call.device = -1;
		t->has_profopt_host = true;
	} else {
		t->has_profopt_gpu = true;
	}
	if (event->kind == PO_EV_MEM_FREE) {
		do_free(t, context->pid, SOURCE_PROFOPT, call.device, call.addr);
		return PO_STATUS_OK;
	}
	return do_alloc(t, context, &call);
}

/*
 * libc: malloc, calloc and memalign allocate ptr when it is not 0; posix_memalign only
 * when it returned 0. realloc frees in_ptr (unless it failed, returning 0 for a non-zero
 * size, which leaves the block allocated) and allocates ptr when size > 0; realloc(p, 0)
 * is a free. free(0) does nothing.
 */
static enum po_status libc_event(struct po_memory_tracker *t, const struct po_event *event,
				 const struct po_alloc_context *context)
{
	struct alloc_call call = {.source = SOURCE_LIBC,
				  .time_ns = event->time_ns,
				  .device = -1,
				  .addr = event->u.libc.ptr,
				  .bytes = event->u.libc.size,
				  .ip = event->ip};
	bool allocates = call.addr != 0;

	t->out.has_libc_events = true;
	switch (event->kind) {
	case PO_EV_LIBC_FREE:
		if (call.addr)
			do_free(t, context->pid, SOURCE_LIBC, -1, call.addr);
		return PO_STATUS_OK;
	case PO_EV_LIBC_REALLOC:
		if (event->u.libc.in_ptr && (call.addr || call.bytes == 0))
			do_free(t, context->pid, SOURCE_LIBC, -1, event->u.libc.in_ptr);
		allocates = allocates && call.bytes > 0;
		break;
	case PO_EV_LIBC_POSIX_MEMALIGN:
		allocates = allocates && event->u.libc.result == 0;
		break;
	default:
		break;
	}
	return allocates ? do_alloc(t, context, &call) : PO_STATUS_OK;
}

/* The objects mapped in a process: kept only when they can place allocation sites. */
static enum po_status object_event(struct po_memory_tracker *t, const struct po_event *event)
{
	if (!t->binmap && !(t->binmap = po_binmap_create(t->strings)))
		return PO_STATUS_NOMEM;
	return po_binmap_consume(t->binmap, event);
}

void memory_tracker_init(struct po_memory_tracker *t, size_t max_sites, const char *fold_label,
			 struct po_strtab *strings)
{
	*t = (struct po_memory_tracker){.max_sites = max_sites,
					.fold_label = fold_label,
					.strings = strings,
					.gpu_counter_sum_bytes = -1,
					.gpu_counter_peak_bytes = -1};
	t->out.host_peak_bytes = -1;
	t->out.gpu_peak_bytes = -1;
	t->out.rss_peak_bytes = -1;
}

void memory_tracker_fini(struct po_memory_tracker *t)
{
	po_map_free(&t->live);
	po_map_free(&t->site_index);
	free(t->sites);
	po_binmap_destroy(t->binmap);
	t->sites = NULL;
	t->binmap = NULL;
}

size_t memory_tracker_bytes(const struct po_memory_tracker *t)
{
	return po_map_bytes(&t->live) + po_map_bytes(&t->site_index) +
	       t->site_capacity * sizeof(*t->sites) + po_binmap_bytes(t->binmap);
}

enum po_status memory_tracker_consume(struct po_memory_tracker *t, const struct po_event *event,
				      const struct po_alloc_context *context)
{
	switch (event->kind) {
	case PO_EV_MEM_ALLOC:
	case PO_EV_MEM_FREE:
		return profopt_event(t, event, context);
	case PO_EV_LIBC_MALLOC:
	case PO_EV_LIBC_CALLOC:
	case PO_EV_LIBC_REALLOC:
	case PO_EV_LIBC_MEMALIGN:
	case PO_EV_LIBC_POSIX_MEMALIGN:
	case PO_EV_LIBC_FREE:
		return libc_event(t, event, context);
	default:
		return object_event(t, event);
	}
}

void memory_tracker_rss_sum(struct po_memory_tracker *t, int64_t sum_bytes)
{
	t->out.has_rss = true;
	if (sum_bytes > t->out.rss_peak_bytes)
		t->out.rss_peak_bytes = sum_bytes;
}

void memory_tracker_gpu_sample(struct po_memory_tracker *t, int64_t bytes, int64_t old_bytes)
{
	t->out.has_gpu_counter = true;
	t->gpu_counter_sum_bytes = po_add_sat(
	    po_add_sat(t->gpu_counter_sum_bytes < 0 ? 0 : t->gpu_counter_sum_bytes, bytes),
	    old_bytes < 0 ? 0 : -old_bytes);
	if (t->gpu_counter_sum_bytes > t->gpu_counter_peak_bytes)
		t->gpu_counter_peak_bytes = t->gpu_counter_sum_bytes;
}

void memory_tracker_gpu_move(struct po_memory_tracker *t, int64_t bytes)
{
	if (t->gpu_counter_sum_bytes >= 0)
		t->gpu_counter_sum_bytes = po_add_sat(t->gpu_counter_sum_bytes, bytes);
}

int64_t memory_tracker_host_live(const struct po_memory_tracker *t)
{
	if (t->has_profopt_host)
		return t->host_profopt.live_bytes;
	if (t->out.has_libc_events)
		return t->host_libc.live_bytes;
	return -1;
}

/*
 * The device's live bytes: the gpu_mem_used counter when the program records one (what its
 * tensors hold: a caching allocator's program, PyTorch's), else the allocation events
 * (CUPTI's records of the allocator's own requests, which its cache makes grow by less
 * than the program keeps: 14.6 MiB a step for 16 MiB kept, seen on an H100).
 */
int64_t memory_tracker_gpu_live(const struct po_memory_tracker *t)
{
	if (t->out.has_gpu_counter)
		return t->gpu_counter_sum_bytes;
	return t->has_profopt_gpu ? t->gpu_events.live_bytes : -1;
}

/* Adds the live allocations to the copies of their sites (sites[i] is t->sites[i]'s). */
static void count_live(const struct po_memory_tracker *t, struct po_mem_site *sites)
{
	for (size_t i = 0; i < t->live.capacity; i++) {
		const struct po_map_entry *entry = &t->live.slots[i];
		struct live_alloc alloc;
		struct po_mem_site *site;

		if (!entry->used)
			continue;
		alloc = live_get(entry);
		site = &sites[alloc.site];
		site->live_count++;
		site->live_bytes += (int64_t)alloc.bytes;
		if (alloc.step_number < 0)
			continue;
		if (site->first_live_step < 0 || alloc.step_number < site->first_live_step)
			site->first_live_step = alloc.step_number;
		if (alloc.step_number > site->last_live_step)
			site->last_live_step = alloc.step_number;
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

/* The result's memory section: the peaks by the best source there is. */
static struct po_memory summarize(const struct po_memory_tracker *t)
{
	struct po_memory memory = t->out;

	if (t->has_profopt_host)
		memory.host_peak_bytes = t->host_profopt.peak_bytes;
	else if (memory.has_libc_events)
		memory.host_peak_bytes = t->host_libc.peak_bytes;
	else
		memory.host_peak_bytes = memory.rss_peak_bytes;
	if (memory.has_gpu_counter)
		memory.gpu_peak_bytes = t->gpu_counter_peak_bytes;
	else if (t->has_profopt_gpu)
		memory.gpu_peak_bytes = t->gpu_events.peak_bytes;
	return memory;
}

/* The call of a located site, named by the namer into the analysis arena. */
static enum po_status name_site(struct po_native_namer namer, struct po_arena *arena,
				struct po_mem_site *site)
{
	struct po_native_call call = {.line = -1};
	enum po_status status =
	    namer.name_call(namer.ctx, site->object, site->build_id, site->offset, &call);

	if (status != PO_STATUS_OK)
		return status;
	site->symbol = call.function ? po_arena_strdup(arena, call.function) : NULL;
	site->source_file = call.file ? po_arena_strdup(arena, call.file) : NULL;
	site->source_line = site->source_file ? call.line : -1;
	site->symbol_note = call.note;
	if ((call.function && !site->symbol) || (call.file && !site->source_file))
		return PO_STATUS_NOMEM;
	return PO_STATUS_OK;
}

enum po_status memory_tracker_build(const struct po_memory_tracker *t, struct po_analysis *analysis,
				    enum po_role (*role_of)(const struct po_analysis *, int32_t),
				    struct po_native_namer namer)
{
	enum po_status status = PO_STATUS_OK;

	struct po_mem_site *sites = calloc(t->site_count + 1, sizeof(*sites));

	if (!sites)
		return PO_STATUS_NOMEM;
	if (t->site_count) /* sites is NULL before the first */
		memcpy(sites, t->sites, t->site_count * sizeof(*sites));
	count_live(t, sites);
	for (size_t i = 0; i < t->site_count; i++) {
		site_locate(t, &sites[i], INT64_MAX);
		sites[i].role = role_of(analysis, sites[i].pid);
	}
	analysis->memory = summarize(t);
	analysis->mem_sites = sites;
	analysis->mem_site_count = t->site_count;
	po_sort(sites, t->site_count, sizeof(*sites), compare_sites);
	for (size_t i = 0; namer.name_call && status == PO_STATUS_OK && i < t->site_count; i++)
		if (sites[i].object)
			status = name_site(namer, analysis->arena, &sites[i]);
	return status;
}
