/* labels.c: the label tracker (labels.h). */
#include <stdlib.h>
#include <string.h>

#include "labels.h"
#include "saturate.h"

/* Set in an index key once a (pid, stage) has max_labels labels: the fold entry. */
#define LABEL_FOLD_BIT (1ULL << 40)

static uint64_t group_key(int32_t pid, enum po_stage stage)
{
	return (uint32_t)pid | ((uint64_t)stage << 32);
}

void label_tracker_init(struct po_label_tracker *t, size_t max_labels, const char *fold_label,
			struct po_strtab *strings)
{
	*t = (struct po_label_tracker){
	    .max_labels = max_labels, .fold_label = fold_label, .strings = strings};
}

void label_tracker_fini(struct po_label_tracker *t)
{
	free(t->entries);
	po_map_free(&t->index);
	po_map_free(&t->distinct);
}

size_t label_tracker_bytes(const struct po_label_tracker *t)
{
	return t->capacity * sizeof(struct label_entry) + po_map_bytes(&t->index) +
	       po_map_bytes(&t->distinct);
}

/* How many labels (pid, stage) keeps unfolded: the distinct map's value. */
static struct po_map_entry *distinct_of(struct po_label_tracker *t, uint64_t group)
{
	bool created;

	return po_map_upsert(&t->distinct, group, 0, &created); /* a new entry's value is 0 */
}

enum po_status label_tracker_resolve(struct po_label_tracker *t, int32_t pid, enum po_stage stage,
				     struct po_str label, size_t *out)
{
	uint64_t key = group_key(pid, stage);
	uint64_t hash = po_hash_bytes(label.ptr, label.len);
	struct po_map_entry *entry = po_map_find(&t->index, key, hash);
	struct po_map_entry *distinct;
	const char *text;
	bool created;

	if (entry) {
		*out = entry->value;
		return PO_STATUS_OK;
	}
	distinct = distinct_of(t, key);
	if (!distinct)
		return PO_STATUS_NOMEM;
	if ((size_t)distinct->value >= t->max_labels) {
		key |= LABEL_FOLD_BIT;
		hash = 0;
		text = t->fold_label;
	} else {
		text = po_strtab_intern(t->strings, label.len ? label.ptr : "", label.len);
		if (!text)
			return PO_STATUS_NOMEM;
	}
	entry = po_map_upsert(&t->index, key, hash, &created);
	if (!entry)
		return PO_STATUS_NOMEM;
	if (created) {
		if (po_array_reserve((void **)&t->entries, &t->capacity, t->count + 1,
				     sizeof(struct label_entry)) != PO_STATUS_OK) {
			po_map_remove(&t->index, entry);
			return PO_STATUS_NOMEM;
		}
		if (!(key & LABEL_FOLD_BIT))
			distinct->value++;
		entry->value = (int64_t)t->count;
		t->entries[t->count++] =
		    (struct label_entry){.pid = pid, .stage = stage, .label = text, .cpu_ns = -1};
	}
	*out = (size_t)entry->value;
	return PO_STATUS_OK;
}

const char *label_tracker_text(const struct po_label_tracker *t, size_t index)
{
	return t->entries[index].label;
}

void label_tracker_consume(struct po_label_tracker *t, size_t index, int64_t wall_ns,
			   int64_t cpu_ns)
{
	struct label_entry *entry = &t->entries[index];

	entry->count++;
	entry->total_ns = po_add_sat(entry->total_ns, wall_ns);
	if (cpu_ns >= 0)
		entry->cpu_ns = po_add_sat(entry->cpu_ns < 0 ? 0 : entry->cpu_ns, cpu_ns);
}

static int compare_strings(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static int compare_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

static int compare_label_keys(const void *left, const void *right)
{
	const struct po_label_stat *a = left, *b = right;

	if (a->role != b->role)
		return compare_i64(a->role, b->role);
	if (a->stage != b->stage)
		return compare_i64(a->stage, b->stage);
	return compare_strings(a->label, b->label);
}

/* Within a (role, stage): largest total first, so that folding keeps the largest labels. */
static int compare_label_groups(const void *left, const void *right)
{
	const struct po_label_stat *a = left, *b = right;

	if (a->role != b->role)
		return compare_i64(a->role, b->role);
	if (a->stage != b->stage)
		return compare_i64(a->stage, b->stage);
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return compare_strings(a->label, b->label);
}

static int compare_label_totals(const void *left, const void *right)
{
	const struct po_label_stat *a = left, *b = right;

	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return compare_label_keys(left, right);
}

static void label_merge(struct po_label_stat *into, const struct po_label_stat *from)
{
	into->count += from->count;
	into->total_ns += from->total_ns;
	if (from->cpu_ns >= 0)
		into->cpu_ns = (into->cpu_ns < 0 ? 0 : into->cpu_ns) + from->cpu_ns;
}

/* Merges adjacent equal keys (the array is sorted by key); returns the new count. */
static size_t merge_labels(struct po_label_stat *stats, size_t count)
{
	size_t out = 0;

	for (size_t i = 0; i < count; i++) {
		if (out && compare_label_keys(&stats[out - 1], &stats[i]) == 0)
			label_merge(&stats[out - 1], &stats[i]);
		else
			stats[out++] = stats[i];
	}
	return out;
}

/* Past max_labels in a (role, stage), labels become "(other labels)". */
static size_t fold_labels(const struct po_label_tracker *t, struct po_label_stat *stats,
			  size_t count)
{
	size_t in_group = 0;

	po_sort(stats, count, sizeof(*stats), compare_label_groups);
	for (size_t i = 0; i < count; i++) {
		bool new_group = i == 0 || stats[i].role != stats[i - 1].role ||
				 stats[i].stage != stats[i - 1].stage;

		if (new_group)
			in_group = 0;
		if (stats[i].label == t->fold_label)
			continue; /* already folded in a process: not one of the kept labels */
		if (++in_group > t->max_labels)
			stats[i].label = t->fold_label;
	}
	po_sort(stats, count, sizeof(*stats), compare_label_keys);
	return merge_labels(stats, count);
}

enum po_status label_tracker_build(const struct po_label_tracker *t, struct po_analysis *analysis,
				   enum po_role (*role_of)(const struct po_analysis *, int32_t))
{
	struct po_label_stat *stats = calloc(t->count + 1, sizeof(*stats));

	if (!stats)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < t->count; i++) {
		const struct label_entry *entry = &t->entries[i];

		stats[i] = (struct po_label_stat){.role = role_of(analysis, entry->pid),
						  .stage = entry->stage,
						  .label = entry->label,
						  .count = entry->count,
						  .total_ns = entry->total_ns,
						  .cpu_ns = entry->cpu_ns};
	}
	po_sort(stats, t->count, sizeof(*stats), compare_label_keys);
	analysis->label_stat_count = fold_labels(t, stats, merge_labels(stats, t->count));
	po_sort(stats, analysis->label_stat_count, sizeof(*stats), compare_label_totals);
	analysis->label_stats = stats;
	return PO_STATUS_OK;
}
