/* test_memory.c: libc and profopt allocations, sites, leaks and per-step live bytes. */
#include "builder.h"

enum { MAIN = 100, WORKER = 200 };

static void libc(struct po_model *model, enum po_event_kind kind, int64_t t, uint64_t ptr,
		 uint64_t in_ptr, uint64_t size, int32_t result, uint64_t ip)
{
	libc_call(model, kind, t, MAIN, ptr, in_ptr, size, result, ip);
}

static const struct po_mem_site *site_with_ip(const struct po_analysis *analysis, uint64_t ip,
					      int stage)
{
	for (size_t i = 0; i < analysis->mem_site_count; i++)
		if (analysis->mem_sites[i].ip == ip && analysis->mem_sites[i].stage == stage)
			return &analysis->mem_sites[i];
	return NULL;
}

static void libc_semantics(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	const struct po_mem_site *site;

	step_begin(model, 0, MAIN, MAIN, 0);
	libc(model, PO_EV_LIBC_MALLOC, 1, 0x1000, 0, 100, 0, 0xAA);
	libc(model, PO_EV_LIBC_CALLOC, 2, 0x2000, 0, 50, 0, 0xBB);
	libc(model, PO_EV_LIBC_FREE, 3, 0, 0, 0, 0, 0x11);
	libc(model, PO_EV_LIBC_FREE, 4, 0x1000, 0, 0, 0, 0x11);
	libc(model, PO_EV_LIBC_REALLOC, 5, 0x3000, 0x2000, 80, 0, 0xCC);
	libc(model, PO_EV_LIBC_REALLOC, 6, 0, 0x3000, 0, 0, 0xCC); /* realloc(p, 0) frees */
	libc(model, PO_EV_LIBC_POSIX_MEMALIGN, 7, 0x4000, 0, 64, 12, 0xDD); /* failed */
	libc(model, PO_EV_LIBC_POSIX_MEMALIGN, 8, 0x5000, 0, 64, 0, 0xEE);
	libc(model, PO_EV_LIBC_FREE, 9, 0x9999, 0, 0, 0, 0x11); /* never allocated */
	libc(model, PO_EV_LIBC_MEMALIGN, 10, 0x6000, 0, 32, 0, 0xFF);
	step_end(model, 20, MAIN, MAIN, 0);
	step_begin(model, 20, MAIN, MAIN, 1);
	stage_begin(model, 21, MAIN, MAIN, PO_STAGE_FORWARD, "", -1);
	libc(model, PO_EV_LIBC_MALLOC, 22, 0x7000, 0, 1000, 0, 0xAA);
	stage_end(model, 23, MAIN, MAIN, PO_STAGE_FORWARD, -1);
	step_end(model, 30, MAIN, MAIN, 1);
	analysis = model_done(model);

	CHECK_INT_EQ(po_analysis_step(analysis, 0).host_live_bytes, 96);
	CHECK_INT_EQ(po_analysis_step(analysis, 1).host_live_bytes, 1096);
	CHECK_INT_EQ(po_analysis_step(analysis, 0).gpu_live_bytes, -1);
	CHECK_INT_EQ(po_analysis_step(analysis, 0).rss_bytes, -1);
	CHECK(analysis->memory.has_libc_events);
	CHECK(!analysis->memory.has_alloc_events);
	CHECK_INT_EQ(analysis->memory.unmatched_frees, 1);
	CHECK_INT_EQ(analysis->memory.host_peak_bytes, 1096);
	CHECK_INT_EQ(analysis->mem_site_count, 6);
	CHECK(site_with_ip(analysis, 0xDD, -1) == NULL);
	/* the leak: allocated inside forward in step 1, sorted first */
	site = &analysis->mem_sites[0];
	CHECK_INT_EQ(site->ip, 0xAA);
	CHECK_INT_EQ(site->stage, PO_STAGE_FORWARD);
	CHECK_INT_EQ(site->role, PO_ROLE_MAIN);
	CHECK_INT_EQ(site->live_bytes, 1000);
	CHECK_INT_EQ(site->live_count, 1);
	CHECK_INT_EQ(site->first_live_step, 1);
	CHECK_INT_EQ(site->last_live_step, 1);
	site = site_with_ip(analysis, 0xAA, -1);
	CHECK(site && site->alloc_count == 1 && site->free_count == 1 && site->live_bytes == 0);
	site = site_with_ip(analysis, 0xCC, -1);
	CHECK(site && site->alloc_bytes == 80 && site->free_bytes == 80 && site->live_count == 0);
	site = site_with_ip(analysis, 0xBB, -1);
	CHECK(site && site->free_count == 1);
	site = site_with_ip(analysis, 0xEE, -1);
	CHECK(site && site->live_bytes == 64 && site->first_live_step == 0);
	po_analysis_destroy(analysis);
}

static void profopt_events_and_rss(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	const struct po_mem_site *site;

	counter(model, 0, WORKER, PO_COUNTER_HOST_RSS, -1, 500);
	for (int step = 0; step < 3; step++) {
		int64_t t = step * 100;

		step_begin(model, t, MAIN, MAIN, step);
		counter(model, t + 1, MAIN, PO_COUNTER_HOST_RSS, -1, 1000 * (step + 1));
		mem_event(model, PO_EV_MEM_ALLOC, t + 2, MAIN, 0x100 + step, 1000, -1, "cache");
		libc_call(model, PO_EV_LIBC_MALLOC, t + 3, MAIN, 0x900 + step, 0, 7, 0, 0x1);
		if (step == 0)
			mem_event(model, PO_EV_MEM_ALLOC, t + 4, MAIN, 0x10, 5000, 0, "act");
		if (step == 1)
			mem_event(model, PO_EV_MEM_FREE, t + 4, MAIN, 0x10, 0, 0, "act");
		step_end(model, t + 50, MAIN, MAIN, step);
	}
	/* a second allocation at a live address replaces it */
	mem_event(model, PO_EV_MEM_ALLOC, 400, MAIN, 0x500, 10, -1, "tmp");
	mem_event(model, PO_EV_MEM_ALLOC, 401, MAIN, 0x500, 20, -1, "tmp");
	analysis = model_done(model);

	CHECK_INT_EQ(po_analysis_step(analysis, 0).host_live_bytes, 1000);
	CHECK_INT_EQ(po_analysis_step(analysis, 2).host_live_bytes, 3000);
	CHECK_INT_EQ(po_analysis_step(analysis, 0).gpu_live_bytes, 5000);
	CHECK_INT_EQ(po_analysis_step(analysis, 1).gpu_live_bytes, 0);
	CHECK_INT_EQ(po_analysis_step(analysis, 0).rss_bytes, 1500);
	CHECK_INT_EQ(po_analysis_step(analysis, 2).rss_bytes, 3500);
	CHECK_INT_EQ(analysis->memory.rss_peak_bytes, 3500);
	CHECK_INT_EQ(analysis->memory.host_peak_bytes, 3020);
	CHECK_INT_EQ(analysis->memory.gpu_peak_bytes, 5000);
	CHECK(analysis->memory.has_alloc_events && analysis->memory.has_rss);
	site = &analysis->mem_sites[0];
	CHECK_STR_EQ(site->label, "cache");
	CHECK_INT_EQ(site->device, -1);
	CHECK_INT_EQ(site->live_count, 3);
	CHECK_INT_EQ(site->live_bytes, 3000);
	CHECK_INT_EQ(site->first_live_step, 0);
	CHECK_INT_EQ(site->last_live_step, 2);
	for (size_t i = 0; i < analysis->mem_site_count; i++) {
		site = &analysis->mem_sites[i];
		if (site->label && strcmp(site->label, "tmp") == 0)
			CHECK(site->live_bytes == 20 && site->alloc_count == 2);
		if (site->label && strcmp(site->label, "act") == 0)
			CHECK(site->device == 0 && site->live_bytes == 0);
	}
	CHECK_INT_EQ(analysis->processes[1].rss_first_bytes, 500);
	po_analysis_destroy(analysis);
}

/*
 * An allocation claimed larger than 1 PiB is a damaged size (one flipped bit in a size
 * field would make a leak of petabytes): it is kept with no size, so that its free still
 * matches, and counted as an implausible value.
 */
static void implausible_allocation_size(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	step_begin(model, 0, MAIN, MAIN, 0);
	mem_event(model, PO_EV_MEM_ALLOC, 10, MAIN, 0x100, 1000, -1, "cache");
	mem_event(model, PO_EV_MEM_ALLOC, 20, MAIN, 0x200, UINT64_C(1000) | (UINT64_C(1) << 55), -1,
		  "cache");
	libc_call(model, PO_EV_LIBC_MALLOC, 30, MAIN, 0x900, 0, UINT64_C(1) << 62, 0, 0x1);
	step_end(model, 50, MAIN, MAIN, 0);
	step_begin(model, 100, MAIN, MAIN, 1);
	mem_event(model, PO_EV_MEM_FREE, 110, MAIN, 0x200, 0, -1, "cache");
	libc_call(model, PO_EV_LIBC_FREE, 120, MAIN, 0x900, 0, 0, 0, 0x1);
	step_end(model, 150, MAIN, MAIN, 1);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->quality.implausible_values, 2);
	CHECK_INT_EQ(analysis->quality.unmatched_mem_frees, 0);
	CHECK_INT_EQ(analysis->memory.unmatched_frees, 0);
	CHECK_INT_EQ(analysis->memory.host_peak_bytes, 1000);
	CHECK_INT_EQ(po_analysis_step(analysis, 0).host_live_bytes, 1000);
	CHECK(analysis->quality.partial);
	po_analysis_destroy(analysis);
}

static void gpu_counter_fallback(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	step_begin(model, 0, MAIN, MAIN, 0);
	counter(model, 1, MAIN, PO_COUNTER_GPU_MEM_USED, 0, 700);
	counter(model, 2, MAIN, PO_COUNTER_GPU_MEM_USED, 1, 77);
	counter(model, 3, MAIN, PO_COUNTER_GPU_MEM_USED, 0, 600);
	step_end(model, 10, MAIN, MAIN, 0);
	analysis = model_done(model);
	CHECK_INT_EQ(po_analysis_step(analysis, 0).gpu_live_bytes, 677);
	CHECK_INT_EQ(analysis->memory.gpu_peak_bytes, 777);
	CHECK_INT_EQ(po_analysis_step(analysis, 0).host_live_bytes, -1);
	CHECK(analysis->memory.has_gpu_counter);
	po_analysis_destroy(analysis);
}

/* Past max_sites, new sites fold into one per process and device. */
static void site_folding(void)
{
	struct po_model_config config;
	struct po_model *model;
	struct po_analysis *analysis;

	po_model_config_init(&config);
	config.max_sites = 3;
	model = model_new(&config);
	for (int i = 0; i < 10; i++)
		libc_call(model, PO_EV_LIBC_MALLOC, i, MAIN, 0x1000 + (uint64_t)i, 0, 10, 0,
			  0x100 + (uint64_t)i);
	mem_event(model, PO_EV_MEM_ALLOC, 20, MAIN, 0x1, 1, -1, "x");
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->mem_site_count, 4);
	CHECK_STR_EQ(analysis->mem_sites[0].label, "(other sites)");
	/* seven libc sites and the profopt one past the cap */
	CHECK_INT_EQ(analysis->mem_sites[0].live_bytes, 71);
	CHECK_INT_EQ(analysis->mem_sites[0].alloc_count, 8);
	po_analysis_destroy(analysis);
}

/*
 * Non-persistent workers: each epoch starts two new worker processes and ends them. The
 * summed RSS holds the workers alive at each step, never the ones that exited; the main
 * process's own RSS is kept apart; the lifetimes give 2 workers at once in 3 generations.
 */
static void worker_lifetimes(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	int step = 0;

	counter(model, 0, MAIN, PO_COUNTER_HOST_RSS, -1, 1000);
	for (int epoch = 0; epoch < 3; epoch++) {
		int32_t first = WORKER + 10 * epoch;
		int64_t t = epoch * 1000;

		for (int w = 0; w < 2; w++) {
			worker_begin(model, t + 1, first + w, w, MAIN);
			counter(model, t + 2, first + w, PO_COUNTER_HOST_RSS, -1, 300);
		}
		for (int i = 0; i < 3; i++, step++) {
			step_begin(model, t + 10 + 100 * i, MAIN, MAIN, step);
			step_end(model, t + 60 + 100 * i, MAIN, MAIN, step);
		}
		for (int w = 0; w < 2; w++) {
			worker_end(model, t + 400, first + w, w);
			counter(model, t + 401, first + w, PO_COUNTER_HOST_RSS, -1, 900);
		}
	}
	analysis = model_done(model);

	CHECK_INT_EQ(analysis->step_count, 9);
	for (size_t i = 0; i < analysis->step_count; i++) {
		CHECK_INT_EQ(po_analysis_step(analysis, i).rss_bytes, 1600);
		CHECK_INT_EQ(po_analysis_step(analysis, i).main_rss_bytes, 1000);
	}
	CHECK_INT_EQ(analysis->memory.rss_peak_bytes, 1600);
	CHECK_INT_EQ(analysis->worker_count, 6);
	CHECK_INT_EQ(analysis->concurrent_workers, 2);
	CHECK_INT_EQ(analysis->worker_generations, 3);
	CHECK_INT_EQ(analysis->worker_alive_ns, 3 * 400);
	po_analysis_destroy(analysis);
}

/*
 * Children that never announce themselves (no worker_begin, no worker_end) and go silent
 * have exited: their RSS leaves the sum once they have been silent for a second, and comes
 * back if they speak again.
 */
static void silent_processes_leave(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	const int64_t s = 1000000000;

	counter(model, 0, MAIN, PO_COUNTER_HOST_RSS, -1, 1000);
	counter(model, 1, WORKER, PO_COUNTER_HOST_RSS, -1, 300);
	step_begin(model, 10, MAIN, MAIN, 0);
	step_end(model, 20, MAIN, MAIN, 0); /* the child spoke 19 ns ago: in the sum */
	step_begin(model, 2 * s, MAIN, MAIN, 1);
	step_end(model, 2 * s + 10, MAIN, MAIN, 1); /* silent for 2 s: gone */
	counter(model, 3 * s, WORKER, PO_COUNTER_HOST_RSS, -1, 400);
	step_begin(model, 3 * s + 5, MAIN, MAIN, 2);
	step_end(model, 3 * s + 10, MAIN, MAIN, 2); /* it spoke again */
	analysis = model_done(model);

	CHECK_INT_EQ(po_analysis_step(analysis, 0).rss_bytes, 1300);
	CHECK_INT_EQ(po_analysis_step(analysis, 1).rss_bytes, 1000);
	CHECK_INT_EQ(po_analysis_step(analysis, 2).rss_bytes, 1400);
	po_analysis_destroy(analysis);
}

/*
 * Garbage collections (gc_collected and gc_uncollectable counters, one pair per collection):
 * summed per role, each gc_collected a collection; a negative count is implausible.
 */
static void gc_counts(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	worker_begin(model, 1 * MS, 200, 0, 100);
	step_begin(model, 1 * MS, 100, 100, 0);
	counter(model, 2 * MS, 100, PO_COUNTER_GC_COLLECTED, 2, 120);
	counter(model, 2 * MS, 100, PO_COUNTER_GC_UNCOLLECTABLE, 2, 3);
	counter(model, 3 * MS, 100, PO_COUNTER_GC_COLLECTED, 1, 80);
	counter(model, 3 * MS, 100, PO_COUNTER_GC_UNCOLLECTABLE, 1, 0);
	counter(model, 4 * MS, 200, PO_COUNTER_GC_COLLECTED, 2, 7);
	counter(model, 4 * MS, 200, PO_COUNTER_GC_UNCOLLECTABLE, 2, 0);
	counter(model, 5 * MS, 100, PO_COUNTER_GC_COLLECTED, 2, -1);
	step_end_sized(model, 6 * MS, 100, 100, 0, 4);
	analysis = model_done(model);
	CHECK(analysis->gc[PO_ROLE_MAIN].collections == 2);
	CHECK(analysis->gc[PO_ROLE_MAIN].collected == 200);
	CHECK(analysis->gc[PO_ROLE_MAIN].uncollectable == 3);
	CHECK(analysis->gc[PO_ROLE_WORKER].collections == 1);
	CHECK(analysis->gc[PO_ROLE_WORKER].collected == 7);
	CHECK(analysis->quality.implausible_values == 1);
	po_analysis_destroy(analysis);
}

int main(void)
{
	RUN(libc_semantics);
	RUN(profopt_events_and_rss);
	RUN(gpu_counter_fallback);
	RUN(implausible_allocation_size);
	RUN(site_folding);
	RUN(worker_lifetimes);
	RUN(silent_processes_leave);
	RUN(gc_counts);
	return CHECK_SUMMARY();
}
