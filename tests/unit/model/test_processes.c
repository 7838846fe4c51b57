/*
 * test_processes.c: the process tracker alone, with a memory tracker beside it: processes
 * and threads from events, the live processes' RSS sum (a worker that ends or falls
 * silent leaves it, one that speaks again rejoins), GPU memory per device, the memory sets
 * and the machine's memory, counters no machine could produce refused, and two trackers side
 * by side.
 */
#include <string.h>

#include "check.h"
#include "processes.h"

#define MS 1000000LL
#define MIB (1024LL * 1024LL)

struct fixture {
	struct po_arena *arena;
	struct po_strtab *strings;
	struct po_memory_tracker memory;
	struct po_process_tracker tracker;
};

static void setup(struct fixture *f)
{
	f->arena = po_arena_create();
	f->strings = f->arena ? po_strtab_create(f->arena) : NULL;
	CHECK(f->strings != NULL);
	memory_tracker_init(&f->memory, 64, "(other sites)", f->strings);
	process_tracker_init(&f->tracker, f->strings, &f->memory);
}

static void teardown(struct fixture *f)
{
	process_tracker_fini(&f->tracker);
	memory_tracker_fini(&f->memory);
	po_strtab_destroy(f->strings);
	po_arena_destroy(f->arena);
}

static struct po_event event_at(int32_t pid, int32_t tid, int64_t time_ns)
{
	return (struct po_event){.kind = PO_EV_STEP_BEGIN,
				 .time_ns = time_ns,
				 .pid = pid,
				 .tid = tid,
				 .procname = {"python3", 7}};
}

static struct process *note(struct fixture *f, int32_t pid, int32_t tid, int64_t time_ns)
{
	struct po_event event = event_at(pid, tid, time_ns);
	struct process *process = NULL;
	struct thread *thread = NULL;

	CHECK(process_tracker_consume(&f->tracker, &event, &process, &thread) == PO_STATUS_OK);
	CHECK(process && thread && thread->pid == pid && thread->tid == tid);
	return process;
}

static bool sample(struct fixture *f, int32_t pid, enum po_counter kind, int32_t device,
		   int64_t value, int64_t time_ns)
{
	struct po_event event = event_at(pid, pid, time_ns);
	struct process *process = note(f, pid, pid, time_ns);

	event.kind = PO_EV_COUNTER;
	event.u.counter.kind = kind;
	event.u.counter.device = device;
	event.u.counter.value = value;
	return process_tracker_counter(&f->tracker, process, &event, 2);
}

/* A sample taken by the sampler's own thread (tid), as libprofopt's sampler does. */
static bool sample_by(struct fixture *f, int32_t pid, int32_t tid, enum po_counter kind,
		      int64_t value, int64_t time_ns)
{
	struct po_event event = event_at(pid, tid, time_ns);
	struct process *process = note(f, pid, tid, time_ns);

	event.kind = PO_EV_COUNTER;
	event.u.counter.kind = kind;
	event.u.counter.device = -1;
	event.u.counter.value = value;
	return process_tracker_counter(&f->tracker, process, &event, 2);
}

static void test_processes_and_threads(void)
{
	struct fixture f;
	struct process *main_process;

	setup(&f);
	main_process = note(&f, 100, 100, 10 * MS);
	CHECK(note(&f, 100, 100, 20 * MS) == main_process); /* the cached thread */
	CHECK(note(&f, 100, 101, 30 * MS) == main_process); /* another thread */
	note(&f, 200, 200, 15 * MS);
	main_process = process_tracker_find(&f.tracker, 100);
	CHECK(f.tracker.process_count == 2 && f.tracker.thread_count == 3);
	CHECK(main_process && main_process->event_count == 3);
	CHECK_INT_EQ(main_process->first_ns, 10 * MS);
	CHECK_INT_EQ(main_process->last_ns, 30 * MS);
	CHECK_STR_EQ(main_process->name, "python3");
	CHECK(process_tracker_find(&f.tracker, 300) == NULL);
	teardown(&f);
}

/*
 * A process is named by its main thread as of its latest event: a launcher that execs the
 * program renames it (bash, then python3), and lttng-ust's own thread, named after the
 * launcher (bash-ust), does not name it once the main thread has spoken.
 */
static void test_named_by_main_thread(void)
{
	struct fixture f;
	struct po_event event = event_at(100, 101, 10 * MS);
	struct process *process = NULL;
	struct thread *thread = NULL;

	setup(&f);
	event.procname = (struct po_str){"bash-ust", 8};
	CHECK(process_tracker_consume(&f.tracker, &event, &process, &thread) == PO_STATUS_OK);
	CHECK(process && strcmp(process->name, "bash-ust") == 0); /* the only name seen */
	event = event_at(100, 100, 20 * MS);
	event.procname = (struct po_str){"bash", 4};
	CHECK(process_tracker_consume(&f.tracker, &event, &process, &thread) == PO_STATUS_OK);
	CHECK_STR_EQ(process->name, "bash");
	note(&f, 100, 100, 30 * MS); /* after the exec: python3 */
	CHECK_STR_EQ(process->name, "python3");
	event = event_at(100, 101, 40 * MS);
	event.procname = (struct po_str){"bash-ust", 8};
	CHECK(process_tracker_consume(&f.tracker, &event, &process, &thread) == PO_STATUS_OK);
	CHECK_STR_EQ(process->name, "python3");
	teardown(&f);
}

/* The RSS sum is that of the processes alive: ended and silent workers leave it. */
static void test_rss_sum(void)
{
	struct fixture f;

	setup(&f);
	CHECK_INT_EQ(process_tracker_rss_sum(&f.tracker), -1);
	CHECK(sample(&f, 100, PO_COUNTER_HOST_RSS, -1, 500 * MIB, 10 * MS));
	CHECK(sample(&f, 200, PO_COUNTER_HOST_RSS, -1, 100 * MIB, 20 * MS));
	CHECK(sample(&f, 201, PO_COUNTER_HOST_RSS, -1, 100 * MIB, 20 * MS));
	CHECK(sample(&f, 200, PO_COUNTER_HOST_RSS, -1, 150 * MIB, 30 * MS));
	CHECK_INT_EQ(process_tracker_rss_sum(&f.tracker), 750 * MIB);
	CHECK_INT_EQ(f.memory.out.rss_peak_bytes, 750 * MIB);

	process_tracker_worker_end(&f.tracker, process_tracker_find(&f.tracker, 200));
	CHECK_INT_EQ(process_tracker_rss_sum(&f.tracker), 600 * MIB);
	/* a sample from the ended worker's exit path changes nothing */
	CHECK(sample(&f, 200, PO_COUNTER_HOST_RSS, -1, 900 * MIB, 40 * MS));
	CHECK_INT_EQ(process_tracker_rss_sum(&f.tracker), 600 * MIB);

	/* worker 201 falls silent for over a second: it leaves the sum, then speaks again */
	CHECK(sample(&f, 100, PO_COUNTER_HOST_RSS, -1, 500 * MIB, 1500 * MS));
	process_tracker_expire_silent(&f.tracker, 1500 * MS);
	CHECK_INT_EQ(process_tracker_rss_sum(&f.tracker), 500 * MIB);
	CHECK(process_tracker_find(&f.tracker, 201)->silent);
	note(&f, 201, 201, 1600 * MS);
	CHECK_INT_EQ(process_tracker_rss_sum(&f.tracker), 600 * MIB);
	CHECK_INT_EQ(f.memory.out.rss_peak_bytes, 750 * MIB);
	teardown(&f);
}

static void test_gpu_memory(void)
{
	struct fixture f;

	setup(&f);
	CHECK(sample(&f, 100, PO_COUNTER_GPU_MEM_USED, 0, 2000 * MIB, 10 * MS));
	CHECK(sample(&f, 100, PO_COUNTER_GPU_MEM_USED, 1, 1000 * MIB, 10 * MS));
	CHECK(sample(&f, 200, PO_COUNTER_GPU_MEM_USED, 0, 500 * MIB, 10 * MS));
	CHECK(sample(&f, 100, PO_COUNTER_GPU_MEM_USED, 0, 2500 * MIB, 20 * MS));
	CHECK_INT_EQ(memory_tracker_gpu_live(&f.memory), 4000 * MIB);
	process_tracker_worker_end(&f.tracker, process_tracker_find(&f.tracker, 200));
	CHECK_INT_EQ(memory_tracker_gpu_live(&f.memory), 3500 * MIB);
	CHECK(sample(&f, 100, PO_COUNTER_GPU_MEM_USED, PO_DEVICE_SLOTS, MIB, 30 * MS));
	CHECK_INT_EQ(memory_tracker_gpu_live(&f.memory), 3500 * MIB); /* no such slot */
	teardown(&f);
}

/*
 * On 2 cores CPU time grows by at most 2 s per second; it never goes down. A value is read
 * before its stamp, after the previous sample's: the growth since the value of the sample
 * at 1 s is bounded over the 2 s since the sample at 0.
 */
static void test_implausible_counters(void)
{
	struct fixture f;
	struct process *process;

	setup(&f);
	CHECK(sample(&f, 100, PO_COUNTER_PROCESS_CPU, -1, 0, 0));
	CHECK(sample(&f, 100, PO_COUNTER_PROCESS_CPU, -1, 1500 * MS, 1000 * MS));
	CHECK(!sample(&f, 100, PO_COUNTER_PROCESS_CPU, -1, 6000 * MS, 2000 * MS)); /* 2.25 cores */
	CHECK(!sample(&f, 100, PO_COUNTER_PROCESS_CPU, -1, 1000 * MS, 2000 * MS)); /* went down */
	CHECK(sample(&f, 100, PO_COUNTER_PROCESS_CPU, -1, 4500 * MS, 2000 * MS));
	process = process_tracker_find(&f.tracker, 100);
	CHECK_INT_EQ(process->cpu_first_ns, 0);
	CHECK_INT_EQ(process->cpu_last_ns, 4500 * MS);
	/* one thread waits for a core at most as long as the time that passed */
	CHECK(sample(&f, 100, PO_COUNTER_PROCESS_RUNQ_WAIT, -1, 0, 0));
	CHECK(!sample(&f, 100, PO_COUNTER_PROCESS_RUNQ_WAIT, -1, 1500 * MS, 1000 * MS));
	CHECK(!sample(&f, 100, PO_COUNTER_HOST_RSS, -1, -1, 10 * MS));
	CHECK(!sample(&f, 100, PO_COUNTER_HOST_RSS, -1, INT64_C(1) << 51, 10 * MS));
	CHECK_INT_EQ(process_tracker_rss_sum(&f.tracker), -1);
	teardown(&f);
}

/*
 * The kernel credits a run-queue wait to schedstat when it ends. A main thread last seen
 * running at 12 ms waits for a core until 200 ms: the samples every 10 ms read nothing,
 * then one reads 187.5 ms at once, 18.75 times the time since the previous sample and no
 * more than the time since the thread last ran. A value beyond that is still refused (the
 * thread's event at 205 ms may have come after the value of 210 ms was read: the bound of
 * the next is from 12 ms). Without any event of the main thread, the bound is the time
 * since the process's first.
 */
static void test_runq_credited_late(void)
{
	struct fixture f;
	struct process *process;

	setup(&f);
	note(&f, 200, 200, 0);
	CHECK(sample_by(&f, 200, 201, PO_COUNTER_PROCESS_RUNQ_WAIT, 0, 10 * MS));
	note(&f, 200, 200, 12 * MS);
	for (int64_t t = 20; t <= 200; t += 10)
		CHECK(sample_by(&f, 200, 201, PO_COUNTER_PROCESS_RUNQ_WAIT, 0, t * MS));
	note(&f, 200, 200, 205 * MS);
	CHECK(sample_by(&f, 200, 201, PO_COUNTER_PROCESS_RUNQ_WAIT, 187 * MS + MS / 2, 210 * MS));
	CHECK(!sample_by(&f, 200, 201, PO_COUNTER_PROCESS_RUNQ_WAIT, INT64_C(1) << 40, 220 * MS));
	CHECK(!sample_by(&f, 200, 201, PO_COUNTER_PROCESS_RUNQ_WAIT, 450 * MS, 230 * MS));
	process = process_tracker_find(&f.tracker, 200);
	CHECK_INT_EQ(process->runq_last_ns, 187 * MS + MS / 2);

	note(&f, 300, 301, 100 * MS);
	CHECK(sample_by(&f, 300, 302, PO_COUNTER_PROCESS_RUNQ_WAIT, 0, 110 * MS));
	CHECK(sample_by(&f, 300, 302, PO_COUNTER_PROCESS_RUNQ_WAIT, 120 * MS, 200 * MS));
	CHECK(!sample_by(&f, 300, 302, PO_COUNTER_PROCESS_RUNQ_WAIT, 400 * MS, 300 * MS));
	teardown(&f);
}

/*
 * A sample is read before it is stamped, and on a crowded machine the sampler may wait for
 * a core in between. Samples every 20 ms; the main thread last ran at 45 ms and waits for
 * a core. The sampler reads 0 at 85 ms and waits; the main thread runs at 95 ms (its wait
 * of 50 ms credited; its event at 96 ms); the sample is stamped at 100 ms. The next reads
 * the 50 ms: more than the 24 ms since the event at 96 ms plus the slack, but within the
 * time since the main thread's last event before the sample at 80 ms, which is all the
 * stamps bound. Process CPU time likewise: the sampler reads 40 ms of CPU at 40 ms and is
 * stamped at 75 ms; the next reads 90 ms more by 100 ms (1.5 cores since the read, 3.6
 * since the stamp).
 */
static void test_sample_stamped_late(void)
{
	struct fixture f;

	setup(&f);
	note(&f, 400, 400, 0);
	CHECK(sample_by(&f, 400, 401, PO_COUNTER_PROCESS_RUNQ_WAIT, 0, 20 * MS));
	CHECK(sample_by(&f, 400, 401, PO_COUNTER_PROCESS_RUNQ_WAIT, 0, 40 * MS));
	note(&f, 400, 400, 45 * MS);
	CHECK(sample_by(&f, 400, 401, PO_COUNTER_PROCESS_RUNQ_WAIT, 0, 60 * MS));
	CHECK(sample_by(&f, 400, 401, PO_COUNTER_PROCESS_RUNQ_WAIT, 0, 80 * MS));
	note(&f, 400, 400, 96 * MS);
	CHECK(sample_by(&f, 400, 401, PO_COUNTER_PROCESS_RUNQ_WAIT, 0, 100 * MS));
	CHECK(sample_by(&f, 400, 401, PO_COUNTER_PROCESS_RUNQ_WAIT, 50 * MS, 120 * MS));
	CHECK(!sample_by(&f, 400, 401, PO_COUNTER_PROCESS_RUNQ_WAIT, 200 * MS, 140 * MS));
	CHECK_INT_EQ(process_tracker_find(&f.tracker, 400)->runq_last_ns, 50 * MS);

	CHECK(sample_by(&f, 400, 401, PO_COUNTER_PROCESS_CPU, 0, 20 * MS));
	CHECK(sample_by(&f, 400, 401, PO_COUNTER_PROCESS_CPU, 40 * MS, 75 * MS));
	CHECK(sample_by(&f, 400, 401, PO_COUNTER_PROCESS_CPU, 130 * MS, 100 * MS));
	CHECK(!sample_by(&f, 400, 401, PO_COUNTER_PROCESS_CPU, 400 * MS, 120 * MS));
	teardown(&f);
}

/*
 * Memory sets: first, latest and largest of each, with the resident set sampled just before
 * the unique set's first and largest samples; the machine's memory, the largest sample;
 * negative sets refused.
 */
static void test_memory_sets(void)
{
	struct fixture f;
	const struct po_memory_sets *sets;

	setup(&f);
	CHECK(sample(&f, 300, PO_COUNTER_HOST_RSS, -1, 700 * MIB, 1 * MS));
	CHECK(sample(&f, 300, PO_COUNTER_HOST_PSS, -1, 150 * MIB, 1 * MS));
	CHECK(sample(&f, 300, PO_COUNTER_HOST_USS, -1, 4 * MIB, 1 * MS));
	CHECK(sample(&f, 300, PO_COUNTER_MACHINE_MEMORY, -1, 2048 * MIB, 1 * MS));
	CHECK(sample(&f, 300, PO_COUNTER_HOST_RSS, -1, 710 * MIB, 1000 * MS));
	CHECK(sample(&f, 300, PO_COUNTER_HOST_PSS, -1, 300 * MIB, 1000 * MS));
	CHECK(sample(&f, 300, PO_COUNTER_HOST_USS, -1, 164 * MIB, 1000 * MS));
	CHECK(sample(&f, 300, PO_COUNTER_HOST_RSS, -1, 705 * MIB, 2000 * MS));
	CHECK(sample(&f, 300, PO_COUNTER_HOST_USS, -1, 160 * MIB, 2000 * MS));
	CHECK(!sample(&f, 300, PO_COUNTER_HOST_USS, -1, -1, 2100 * MS));
	CHECK(!sample(&f, 300, PO_COUNTER_HOST_PSS, -1, INT64_MAX, 2100 * MS));
	sets = &process_tracker_find(&f.tracker, 300)->sets;
	CHECK_INT_EQ(sets->pss_first_bytes, 150 * MIB);
	CHECK_INT_EQ(sets->pss_peak_bytes, 300 * MIB);
	CHECK_INT_EQ(sets->uss_first_bytes, 4 * MIB);
	CHECK_INT_EQ(sets->uss_peak_bytes, 164 * MIB);
	CHECK_INT_EQ(sets->uss_last_bytes, 160 * MIB);
	CHECK_INT_EQ(sets->rss_at_uss_first_bytes, 700 * MIB);
	CHECK_INT_EQ(sets->rss_at_uss_peak_bytes, 710 * MIB);
	CHECK_INT_EQ(f.tracker.machine_memory_bytes, 2048 * MIB);
	CHECK_INT_EQ(process_tracker_rss_sum(&f.tracker), 705 * MIB);
	teardown(&f);
}

static void test_side_by_side(void)
{
	struct fixture one, two;

	setup(&one);
	setup(&two);
	CHECK(sample(&one, 100, PO_COUNTER_HOST_RSS, -1, 10 * MIB, 10 * MS));
	CHECK(sample(&two, 100, PO_COUNTER_HOST_RSS, -1, 20 * MIB, 10 * MS));
	note(&two, 100, 102, 20 * MS);
	CHECK_INT_EQ(process_tracker_rss_sum(&one.tracker), 10 * MIB);
	CHECK_INT_EQ(process_tracker_rss_sum(&two.tracker), 20 * MIB);
	CHECK(one.tracker.thread_count == 1 && two.tracker.thread_count == 2);
	teardown(&one);
	teardown(&two);
}

int main(void)
{
	RUN(test_processes_and_threads);
	RUN(test_named_by_main_thread);
	RUN(test_rss_sum);
	RUN(test_gpu_memory);
	RUN(test_implausible_counters);
	RUN(test_runq_credited_late);
	RUN(test_sample_stamped_late);
	RUN(test_memory_sets);
	RUN(test_side_by_side);
	return CHECK_SUMMARY();
}
