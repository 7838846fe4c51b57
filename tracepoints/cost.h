/*
 * cost.h: the CPU time libprofopt's own threads (the sampler, the stacks watcher) have used
 * in this process, so that a recording can state its own cost (profopt_self_cost).
 *
 * Each thread reads its own CPU clock when it wakes anyway and stores its running total in
 * a slot; a slot keeps the total of the threads that ran in it before (a sampler restarted
 * by a forked child, a watcher started again), and a forked child starts from zero.
 */
#ifndef PO_COST_H
#define PO_COST_H

#include <stdint.h>

enum po_cost_slot {
	PO_COST_SLOT_SAMPLER,
	PO_COST_SLOT_STACKS_WATCHER,
	PO_COST_SLOT_COUNT,
};

/* One thread's meter: what its slot held when the thread started. */
struct po_cost_meter {
	enum po_cost_slot slot;
	int64_t base_ns;
};

/* Called by the thread itself when it starts. */
struct po_cost_meter po_cost_meter_start(enum po_cost_slot slot);

/* Called by the thread itself: its slot becomes the base plus the thread's CPU time. */
void po_cost_meter_note(const struct po_cost_meter *meter);

/* The CPU time of libprofopt's threads in this process so far, in nanoseconds. */
int64_t po_cost_library_threads_ns(void);

#endif /* PO_COST_H */
