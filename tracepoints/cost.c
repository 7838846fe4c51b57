/* cost.c: the CPU time of libprofopt's own threads in this process (cost.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

#include "cost.h"

static int64_t cost_slots_ns[PO_COST_SLOT_COUNT];

static int64_t own_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A forked child has none of its parent's threads: its own cost starts at zero. */
static void cost_forget(void)
{
	for (int i = 0; i < PO_COST_SLOT_COUNT; i++)
		__atomic_store_n(&cost_slots_ns[i], 0, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void cost_init(void)
{
	pthread_atfork(NULL, NULL, cost_forget);
}

struct po_cost_meter po_cost_meter_start(enum po_cost_slot slot)
{
	return (struct po_cost_meter){
	    .slot = slot,
	    .base_ns = __atomic_load_n(&cost_slots_ns[slot], __ATOMIC_RELAXED),
	};
}

void po_cost_meter_note(const struct po_cost_meter *meter)
{
	__atomic_store_n(&cost_slots_ns[meter->slot], meter->base_ns + own_thread_cpu_ns(),
			 __ATOMIC_RELAXED);
}

int64_t po_cost_library_threads_ns(void)
{
	int64_t total_ns = 0;

	for (int i = 0; i < PO_COST_SLOT_COUNT; i++)
		total_ns += __atomic_load_n(&cost_slots_ns[i], __ATOMIC_RELAXED);
	return total_ns;
}
