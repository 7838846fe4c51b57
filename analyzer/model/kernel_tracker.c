/* kernel_tracker.c: the kernels of a run (kernel_tracker.h). */
#include <stdlib.h>
#include <string.h>

#include "../common/arena.h"
#include "kernel_tracker.h"

#define SHORT_NAME_CHARS 160

void kernel_tracker_init(struct po_kernel_tracker *t)
{
	*t = (struct po_kernel_tracker){0};
}

void kernel_tracker_fini(struct po_kernel_tracker *t)
{
	po_map_free(&t->kinds);
	po_map_free(&t->by_name);
	free(t->stats);
	*t = (struct po_kernel_tracker){0};
}

size_t kernel_tracker_bytes(const struct po_kernel_tracker *t)
{
	return po_map_bytes(&t->kinds) + po_map_bytes(&t->by_name) +
	       t->stat_capacity * sizeof(struct kernel_stat);
}

enum po_status kernel_tracker_kind(struct po_kernel_tracker *t, const struct po_event *event,
				   struct po_kernel_kind *kind)
{
	const struct po_str *name = &event->u.gpu_activity.name;
	uint64_t hash = po_hash_bytes(name->ptr, name->len);
	/* the activity kind is part of the key: a copy and a kernel may share a name */
	uint64_t key_b = (uint64_t)name->len << 8 | (uint64_t)event->u.gpu_activity.kind;
	struct po_map_entry *entry = po_map_find(&t->kinds, hash, key_b);

	if (!entry) {
		*kind = po_kernel_classify(event->u.gpu_activity.kind, name->len ? name->ptr : "",
					   name->len);
		if (t->kinds.count >= PO_KERNEL_KINDS_CACHED)
			return PO_STATUS_OK; /* a program of that many names: classified each time
					      */
		entry = po_map_upsert(&t->kinds, hash, key_b, NULL);
		if (!entry)
			return PO_STATUS_NOMEM;
		entry->value = ((uint64_t)kind->cls | (uint64_t)kind->precision << 8) + 1;
		return PO_STATUS_OK;
	}
	kind->cls = (enum po_kernel_class)((entry->value - 1) & 0xff);
	kind->precision = (enum po_precision)((entry->value - 1) >> 8 & 0xff);
	return PO_STATUS_OK;
}

enum po_status kernel_tracker_consume(struct po_kernel_tracker *t, const char *name,
				      struct po_kernel_kind kind, const struct po_event *event)
{
	struct po_map_entry *entry;
	struct kernel_stat *stat;
	bool created;

	entry = po_map_upsert(&t->by_name, (uint64_t)(uintptr_t)name, 0, &created);
	if (!entry)
		return PO_STATUS_NOMEM;
	if (created) {
		if (po_array_reserve((void **)&t->stats, &t->stat_capacity, t->stat_count + 1,
				     sizeof(*t->stats)) != PO_STATUS_OK) {
			po_map_remove(&t->by_name, entry);
			return PO_STATUS_NOMEM;
		}
		entry->value = t->stat_count;
		t->stats[t->stat_count++] = (struct kernel_stat){.name = name, .kind = kind};
	}
	stat = &t->stats[entry->value];
	stat->count++;
	stat->total_ns += event->u.gpu_activity.end_ns - event->u.gpu_activity.start_ns;
	if (event->u.gpu_activity.grid_blocks) {
		stat->grid_blocks = (int64_t)event->u.gpu_activity.grid_blocks;
		stat->block_threads = event->u.gpu_activity.block_threads;
	}
	return PO_STATUS_OK;
}

/* Longest first; equal times by name, so the list is the same run after run. */
static int compare_stats(const void *left, const void *right)
{
	const struct kernel_stat *a = *(const struct kernel_stat *const *)left;
	const struct kernel_stat *b = *(const struct kernel_stat *const *)right;

	if (a->total_ns != b->total_ns)
		return a->total_ns < b->total_ns ? 1 : -1;
	return strcmp(a->name, b->name);
}

enum po_status kernel_tracker_build(const struct po_kernel_tracker *t, struct po_analysis *analysis)
{
	const struct kernel_stat **order;
	size_t count = t->stat_count < PO_TOP_KERNELS ? t->stat_count : PO_TOP_KERNELS;
	char short_name[SHORT_NAME_CHARS];

	analysis->kernels = NULL;
	analysis->kernel_count = 0;
	if (!t->stat_count)
		return PO_STATUS_OK;
	order = malloc(t->stat_count * sizeof(*order));
	analysis->kernels = calloc(count, sizeof(*analysis->kernels));
	if (!order || !analysis->kernels) {
		free(order);
		return PO_STATUS_NOMEM;
	}
	for (size_t i = 0; i < t->stat_count; i++)
		order[i] = &t->stats[i];
	po_sort(order, t->stat_count, sizeof(*order), compare_stats);
	for (size_t i = 0; i < count; i++) {
		const struct kernel_stat *stat = order[i];

		po_kernel_short_name(stat->name, short_name, sizeof(short_name));
		analysis->kernels[i] = (struct po_gpu_kernel){
		    .name = stat->name,
		    .short_name = po_arena_strdup(analysis->arena, short_name),
		    .cls = stat->kind.cls,
		    .precision = stat->kind.precision,
		    .count = stat->count,
		    .total_ns = stat->total_ns,
		    .mean_ns = stat->count ? stat->total_ns / stat->count : 0,
		    .grid_blocks = stat->grid_blocks,
		    .block_threads = stat->block_threads};
		if (!analysis->kernels[i].short_name) {
			free(order);
			return PO_STATUS_NOMEM;
		}
	}
	analysis->kernel_count = count;
	free(order);
	return PO_STATUS_OK;
}
