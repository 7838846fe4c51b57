/*
 * test_labels.c: the label tracker alone: one entry per (process, stage, label), times
 * added and CPU time unknown until measured; past max_labels a process's new labels fold
 * into "(other labels)"; the result merges processes of one role and folds again per
 * role, largest totals kept; building twice gives the same result; two trackers side by
 * side.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "labels.h"

#define MS 1000000LL

static struct po_str text(const char *s)
{
	return (struct po_str){s, strlen(s)};
}

/* pid 100 is the main process, every other pid a worker. */
static enum po_role role_of(const struct po_analysis *analysis, int32_t pid)
{
	(void)analysis;
	return pid == 100 ? PO_ROLE_MAIN : PO_ROLE_WORKER;
}

struct fixture {
	struct po_arena *arena;
	struct po_strtab *strings;
	const char *fold;
	struct po_label_tracker tracker;
};

static void setup(struct fixture *f, size_t max_labels)
{
	f->arena = po_arena_create();
	f->strings = f->arena ? po_strtab_create(f->arena) : NULL;
	CHECK(f->strings != NULL);
	f->fold = po_strtab_intern(f->strings, "(other labels)", 14);
	label_tracker_init(&f->tracker, max_labels, f->fold, f->strings);
}

static void teardown(struct fixture *f)
{
	label_tracker_fini(&f->tracker);
	po_strtab_destroy(f->strings);
	po_arena_destroy(f->arena);
}

static size_t span(struct fixture *f, int32_t pid, enum po_stage stage, const char *label,
		   int64_t wall_ns, int64_t cpu_ns)
{
	size_t index = (size_t)-1;

	CHECK(label_tracker_resolve(&f->tracker, pid, stage, text(label), &index) == PO_STATUS_OK);
	label_tracker_consume(&f->tracker, index, wall_ns, cpu_ns);
	return index;
}

static const struct po_label_stat *find(const struct po_analysis *analysis, enum po_role role,
					enum po_stage stage, const char *label)
{
	for (size_t i = 0; i < analysis->label_stat_count; i++) {
		const struct po_label_stat *stat = &analysis->label_stats[i];

		if (stat->role == role && stat->stage == stage && strcmp(stat->label, label) == 0)
			return stat;
	}
	return NULL;
}

static void test_entries(void)
{
	struct fixture f;
	size_t a, b;

	setup(&f, 8);
	a = span(&f, 200, PO_STAGE_LOAD, "a.jpg", 2 * MS, -1);
	CHECK(span(&f, 200, PO_STAGE_LOAD, "a.jpg", 3 * MS, 1 * MS) == a);
	b = span(&f, 200, PO_STAGE_PREPROCESS, "a.jpg", 1 * MS, -1); /* another stage */
	CHECK(b != a);
	CHECK(span(&f, 201, PO_STAGE_LOAD, "a.jpg", 1 * MS, -1) != a); /* another process */
	CHECK_STR_EQ(label_tracker_text(&f.tracker, a), "a.jpg");
	CHECK_INT_EQ(f.tracker.entries[a].count, 2);
	CHECK_INT_EQ(f.tracker.entries[a].total_ns, 5 * MS);
	CHECK_INT_EQ(f.tracker.entries[a].cpu_ns, 1 * MS);
	CHECK_INT_EQ(f.tracker.entries[b].cpu_ns, -1);		  /* never measured */
	CHECK(span(&f, 200, PO_STAGE_LOAD, "", 1 * MS, -1) != a); /* the empty label */
	teardown(&f);
}

/* A process keeps max_labels labels per stage; the rest share the fold entry. */
static void test_fold_per_process(void)
{
	struct fixture f;
	char name[32];
	size_t fold = (size_t)-1;

	setup(&f, 3);
	for (int i = 0; i < 10; i++) {
		size_t index;

		snprintf(name, sizeof(name), "sample-%d", i);
		index = span(&f, 200, PO_STAGE_LOAD, name, MS, -1);
		if (i < 3)
			CHECK_STR_EQ(label_tracker_text(&f.tracker, index), name);
		else if (fold == (size_t)-1)
			fold = index;
		else
			CHECK(index == fold);
	}
	CHECK(label_tracker_text(&f.tracker, fold) == f.fold);
	CHECK_INT_EQ(f.tracker.entries[fold].count, 7);
	/* an earlier label still finds its own entry; another stage has its own quota */
	CHECK_STR_EQ(
	    label_tracker_text(&f.tracker, span(&f, 200, PO_STAGE_LOAD, "sample-1", MS, -1)),
	    "sample-1");
	CHECK_STR_EQ(
	    label_tracker_text(&f.tracker, span(&f, 200, PO_STAGE_COLLATE, "sample-9", MS, -1)),
	    "sample-9");
	CHECK_INT_EQ(f.tracker.count, 5);
	teardown(&f);
}

/* Workers' labels merge into one role; past max_labels per role the smallest fold. */
static void test_build(void)
{
	struct fixture f;
	struct po_analysis first = {0}, again = {0};
	const struct po_label_stat *stat;

	setup(&f, 2);
	span(&f, 201, PO_STAGE_LOAD, "big", 10 * MS, 4 * MS);
	span(&f, 202, PO_STAGE_LOAD, "big", 10 * MS, -1);
	span(&f, 201, PO_STAGE_LOAD, "mid", 5 * MS, -1);
	span(&f, 202, PO_STAGE_LOAD, "small", 1 * MS, 1 * MS);
	span(&f, 100, PO_STAGE_LOAD, "small", 7 * MS, -1); /* the main process: its own role */
	CHECK(label_tracker_build(&f.tracker, &first, role_of) == PO_STATUS_OK);
	CHECK(label_tracker_build(&f.tracker, &again, role_of) == PO_STATUS_OK);

	CHECK_INT_EQ(first.label_stat_count, 4);
	stat = find(&first, PO_ROLE_WORKER, PO_STAGE_LOAD, "big");
	CHECK(stat && stat->count == 2 && stat->total_ns == 20 * MS && stat->cpu_ns == 4 * MS);
	stat = find(&first, PO_ROLE_WORKER, PO_STAGE_LOAD, "mid");
	CHECK(stat && stat->total_ns == 5 * MS && stat->cpu_ns == -1);
	CHECK(find(&first, PO_ROLE_WORKER, PO_STAGE_LOAD, "small") == NULL);
	stat = find(&first, PO_ROLE_WORKER, PO_STAGE_LOAD, "(other labels)");
	CHECK(stat && stat->total_ns == 1 * MS && stat->cpu_ns == 1 * MS);
	stat = find(&first, PO_ROLE_MAIN, PO_STAGE_LOAD, "small");
	CHECK(stat && stat->total_ns == 7 * MS);
	/* largest total first */
	CHECK_INT_EQ(first.label_stats[0].total_ns, 20 * MS);
	for (size_t i = 1; i < first.label_stat_count; i++)
		CHECK(first.label_stats[i - 1].total_ns >= first.label_stats[i].total_ns);
	/* the build changed nothing in the tracker */
	CHECK(again.label_stat_count == first.label_stat_count &&
	      memcmp(again.label_stats, first.label_stats,
		     first.label_stat_count * sizeof(*first.label_stats)) == 0);
	free(first.label_stats);
	free(again.label_stats);
	teardown(&f);
}

static void test_side_by_side(void)
{
	struct fixture one, two;

	setup(&one, 1);
	setup(&two, 1);
	span(&one, 200, PO_STAGE_LOAD, "x", MS, -1);
	span(&two, 200, PO_STAGE_LOAD, "y", 2 * MS, -1);
	span(&one, 200, PO_STAGE_LOAD, "z", MS, -1); /* folds in one only */
	CHECK_INT_EQ(one.tracker.count, 2);
	CHECK_INT_EQ(two.tracker.count, 1);
	CHECK_STR_EQ(label_tracker_text(&two.tracker, 0), "y");
	CHECK(label_tracker_text(&one.tracker, 1) == one.fold);
	teardown(&one);
	teardown(&two);
}

int main(void)
{
	RUN(test_entries);
	RUN(test_fold_per_process);
	RUN(test_build);
	RUN(test_side_by_side);
	return CHECK_SUMMARY();
}
