/*
 * test_memory_tracker.c: the memory tracker alone, without a model: it consumes
 * allocation events with their context, and building its part of a result changes nothing
 * in it, so a result can be built at any moment and consuming goes on.
 */
#include <stdio.h>
#include <stdlib.h>

#include "builder.h"
#include "memory.h"

static struct po_event alloc_event(enum po_event_kind kind, int64_t t, uint64_t addr,
				   uint64_t bytes)
{
	struct po_event event = event_at(kind, t, 100, 100);

	event.u.mem.addr = addr;
	event.u.mem.bytes = bytes;
	event.u.mem.device = -1;
	return event;
}

static void consume(struct po_memory_tracker *tracker, const struct po_event *event,
		    const char *label, int64_t step)
{
	struct po_alloc_context context = {
	    .pid = 100, .stage = 6, .step_number = step, .label = label};

	CHECK(memory_tracker_consume(tracker, event, &context) == PO_STATUS_OK);
}

static enum po_role role_of(const struct po_analysis *analysis, int32_t pid)
{
	(void)analysis;
	(void)pid;
	return PO_ROLE_MAIN;
}

static struct po_analysis build(const struct po_memory_tracker *tracker)
{
	struct po_analysis analysis = {0};

	CHECK(memory_tracker_build(tracker, &analysis, role_of, (struct po_native_namer){0}) ==
	      PO_STATUS_OK);
	return analysis;
}

static void test_build_changes_nothing(void)
{
	static const char leak[] = "leak", scratch[] = "scratch";
	struct po_memory_tracker tracker;
	struct po_analysis first, second, later;
	struct po_event event;

	memory_tracker_init(&tracker, 16, "(other sites)", NULL);
	for (int64_t step = 0; step < 10; step++) {
		event = alloc_event(PO_EV_MEM_ALLOC, step * 10, 0x1000 + (uint64_t)step, 4096);
		consume(&tracker, &event, leak, step);
		event = alloc_event(PO_EV_MEM_ALLOC, step * 10 + 1, 0x9000, 512);
		consume(&tracker, &event, scratch, step);
		event = alloc_event(PO_EV_MEM_FREE, step * 10 + 2, 0x9000, 0);
		consume(&tracker, &event, NULL, step);
	}
	event = alloc_event(PO_EV_MEM_FREE, 200, 0xdead, 0); /* never allocated */
	consume(&tracker, &event, NULL, 10);
	CHECK_INT_EQ(memory_tracker_host_live(&tracker), 10 * 4096);
	CHECK_INT_EQ(tracker.unmatched_profopt_frees, 1);

	first = build(&tracker);
	second = build(&tracker);
	CHECK_INT_EQ(first.mem_site_count, 2);
	CHECK_INT_EQ(second.mem_site_count, 2);
	CHECK(memcmp(first.mem_sites, second.mem_sites, 2 * sizeof(*first.mem_sites)) == 0);
	CHECK(memcmp(&first.memory, &second.memory, sizeof(first.memory)) == 0);
	CHECK(first.mem_sites[0].label == leak); /* sorted by live bytes */
	CHECK_INT_EQ(first.mem_sites[0].live_count, 10);
	CHECK_INT_EQ(first.mem_sites[0].first_live_step, 0);
	CHECK_INT_EQ(first.mem_sites[0].last_live_step, 9);
	CHECK_INT_EQ(first.mem_sites[1].live_count, 0);
	CHECK_INT_EQ(first.memory.host_peak_bytes, 10 * 4096 + 512);
	CHECK_INT_EQ(first.memory.unmatched_frees, 1);

	/* consuming goes on after a build, and the next build sees it */
	event = alloc_event(PO_EV_MEM_FREE, 300, 0x1000, 0);
	consume(&tracker, &event, NULL, 11);
	later = build(&tracker);
	CHECK_INT_EQ(later.mem_sites[0].live_count, 9);
	CHECK_INT_EQ(later.mem_sites[0].first_live_step, 1);
	CHECK_INT_EQ(memory_tracker_host_live(&tracker), 9 * 4096);

	free(first.mem_sites);
	free(second.mem_sites);
	free(later.mem_sites);
	memory_tracker_fini(&tracker);
}

/* Two trackers side by side share nothing. */
static void test_two_trackers(void)
{
	struct po_memory_tracker a, b;
	struct po_event event = alloc_event(PO_EV_MEM_ALLOC, 1, 0x1000, 100);

	memory_tracker_init(&a, 16, "(other sites)", NULL);
	memory_tracker_init(&b, 16, "(other sites)", NULL);
	consume(&a, &event, "x", 0);
	CHECK_INT_EQ(memory_tracker_host_live(&a), 100);
	CHECK_INT_EQ(memory_tracker_host_live(&b), -1);
	memory_tracker_fini(&a);
	memory_tracker_fini(&b);
}

int main(void)
{
	RUN(test_build_changes_nothing);
	RUN(test_two_trackers);
	return CHECK_SUMMARY();
}
