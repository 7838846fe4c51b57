/*
 * processes.h: the process tracker, one of the model's trackers. It owns the run's
 * processes and threads: when each was first and last heard of, its name, its samples
 * (resident memory and memory sets, CPU time, run-queue wait, GPU memory per device), the
 * machine's physical memory, and its life as a
 * loader worker (announced, ended, or silent long enough to be taken as gone), and the
 * sum of the live processes' resident memory. It tells the memory tracker what that sum
 * and the processes' GPU memory become. Each thread carries the stack of its open spans,
 * which spans.c pushes and pops, and each process the producer statistics spans.c adds.
 *
 * Life: init, note each event's process and thread, give it the process's counter
 * samples and worker events, fini. No global state: several trackers live side by side.
 */
#ifndef PO_MODEL_PROCESSES_H
#define PO_MODEL_PROCESSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/arena.h"
#include "event.h"
#include "map.h"
#include "memory.h"

#define PO_SPAN_STACK_CAP 256 /* open spans per thread */
#define PO_DEVICE_SLOTS 16    /* GPU devices whose memory counter is summed */
/*
 * A process that sampled its memory and then went silent this long has exited (its
 * sampler would speak every PROFOPT_SAMPLE_MS): forked workers that never announce
 * themselves end without worker_end. Silent processes are looked for this often.
 */
#define PO_SILENT_NS 1000000000LL
#define PO_SILENT_SCAN_NS 250000000LL

#define OPEN_STAGE 0
#define OPEN_SYNC 1

/* A span begun and not yet ended on a thread. */
struct open_span {
	int kind; /* OPEN_STAGE or OPEN_SYNC */
	enum po_stage stage;
	int64_t begin_ns;
	const char *label;  /* weak: interned (or the fold label) */
	size_t label_index; /* the label tracker's entry */
	int64_t batch;
	int32_t device;
	int32_t stream;
	bool same_below; /* a span of the same stage is open below this one */
};

struct thread {
	int32_t pid;
	int32_t tid;
	size_t process; /* index into the tracker's processes */
	int64_t last_ns;
	struct open_span *stack; /* owned */
	size_t depth;
	size_t capacity;
	int64_t step_count;
};

/*
 * A process's series of the machine's busy CPU time (MACHINE_CPU samples, every program
 * counted) with the recorded processes' CPU time summed at the same moments: what other
 * programs used is the growth of the one less the growth of the other.
 */
struct machine_series {
	int64_t samples;
	int64_t first_at_ns, last_at_ns;	 /* stamps of the first and last accepted sample */
	int64_t first_ns, last_ns;		 /* their values; -1 before the first */
	int64_t traced_first_ns, traced_last_ns; /* the tracker's traced_cpu_ns at them */
};

struct process {
	int32_t pid;
	const char *name; /* weak: interned; NULL until seen */
	size_t name_len;  /* its length: compared on every event of the main thread */
	int64_t worker_id;
	int32_t parent_pid;
	int64_t first_ns;
	int64_t last_ns;
	int64_t event_count;
	int64_t rss_first_bytes;
	int64_t rss_last_bytes;
	int64_t rss_peak_bytes;
	int64_t cpu_first_ns;
	int64_t cpu_last_ns;
	int64_t runq_first_ns; /* PROCESS_RUNQ_WAIT counter, first and last; -1 */
	int64_t runq_last_ns;
	struct po_memory_sets sets; /* HOST_PSS and HOST_USS counters */
	/*
	 * A sample's value is read before its event is stamped, and on a crowded machine the
	 * sampler can wait for a core in between: a stamp bounds when its own value was read
	 * only from above. The sampler reads a value after it stamped the previous sample, so
	 * the last accepted value was read after the stamp of the sample before it; growth
	 * since that value is bounded from there. cpu_since_ns: that stamp, for the last
	 * accepted PROCESS_CPU value (the process's first event for the first); cpu_prev_ns:
	 * the stamp of the latest PROCESS_CPU sample, accepted or not; -1 before the first.
	 */
	int64_t cpu_since_ns;
	int64_t cpu_prev_ns;
	/*
	 * The earliest moment a wait credited after the last accepted PROCESS_RUNQ_WAIT value
	 * can have begun: the main thread's latest event before the stamp of the sample before
	 * it (the thread was running then, and the value was read after that stamp), or the
	 * process's first event; -1 before the first sample. The kernel credits a wait to
	 * schedstat only when it ends, so one sample can grow by more than the time since the
	 * previous sample (by 18x on a crowded machine), never by more than this allows.
	 * runq_prev_ns: that moment as of the latest sample, accepted or not.
	 */
	int64_t runq_since_ns;
	int64_t runq_prev_ns;
	int64_t main_last_ns; /* the latest event of the thread whose tid is the pid; -1 */
	struct machine_series machine;
	/*
	 * Its CPU time counts from 0: announced as a forked child (its clock started at the
	 * fork), or started by a process recorded before it announced itself (a spawned loader
	 * worker, a fresh interpreter that imports its libraries, 1.7 s of CPU under torch,
	 * before it announces itself: all of it while its parent was recorded).
	 */
	bool cpu_from_zero;
	int64_t gpu_used_bytes[PO_DEVICE_SLOTS]; /* latest GPU_MEM_USED per device; -1 */
	bool worker_begin;
	bool ended;  /* worker_end seen: the process no longer holds memory or cores */
	bool silent; /* no event for PO_SILENT_NS: left the memory sums until it speaks again */
	bool loader_spans;
	int64_t step_count;
	/* producer statistics, reported for worker processes */
	int64_t batches;
	int64_t stage_ns[PO_STAGE_COUNT];
	int64_t stage_cpu_ns[PO_STAGE_COUNT];
	int64_t busy_ns;
	/* Its garbage collections (gc_collected counters) and the objects they freed. */
	int64_t gc_collections;
	int64_t gc_collected;
	int64_t gc_uncollectable;
	int64_t self_cost_ns[PO_COST_SOURCE_COUNT]; /* latest SELF_COST report; -1 none */
};

struct po_process_tracker {
	struct process *processes; /* owned */
	size_t process_count;
	size_t process_capacity;
	struct po_map process_index; /* pid -> index */
	struct thread *threads;	     /* owned */
	size_t thread_count;
	size_t thread_capacity;
	struct po_map thread_index; /* (pid, tid) -> index */
	/* The last event's thread: consecutive events mostly share one (no map lookup). */
	bool last_valid;
	int32_t last_pid, last_tid;
	size_t last_process, last_thread; /* indexes into processes and threads */
	int64_t rss_sum_bytes;		  /* sum of the latest RSS of every live process; -1 */
	/*
	 * The recorded processes' CPU time so far: every accepted PROCESS_CPU sample adds its
	 * growth (a forked or spawned child's first sample from 0, another process's from that
	 * sample).
	 */
	int64_t traced_cpu_ns;
	/*
	 * The CPU time of recorded processes whose events another model tracks (the other
	 * ranks' processes and their workers, ranks.h), kept current by the owning model: the
	 * machine series counts it as the recorded program's, not as other programs'.
	 */
	int64_t elsewhere_cpu_ns;
	int64_t silent_scan_ns;		  /* when silent processes were last looked for */
	int64_t machine_memory_bytes;	  /* the largest MACHINE_MEMORY sample; -1 */
	struct po_strtab *strings;	  /* weak: the model's, for process names */
	struct po_memory_tracker *memory; /* weak: told of the sums */
};

void process_tracker_init(struct po_process_tracker *tracker, struct po_strtab *strings,
			  struct po_memory_tracker *memory);
void process_tracker_fini(struct po_process_tracker *tracker);
size_t process_tracker_bytes(const struct po_process_tracker *tracker);

/*
 * The event's process and thread, created on first sight; the process's first and last
 * times, name and event count follow the event, and a silent process rejoins the sums.
 */
enum po_status process_tracker_consume(struct po_process_tracker *tracker,
				       const struct po_event *event, struct process **process,
				       struct thread **thread) PO_NODISCARD;

/* The process of pid, or NULL. */
struct process *process_tracker_find(const struct po_process_tracker *tracker, int32_t pid);
/* The thread tid of process pid, or NULL when it has not been seen. */
const struct thread *process_tracker_find_thread(const struct po_process_tracker *tracker,
						 int32_t pid, int32_t tid);

/*
 * A PO_EV_COUNTER sample of the process: false, and nothing changes, when no machine of
 * cpu_count cores (<= 0: unknown) could produce it.
 */
bool process_tracker_counter(struct po_process_tracker *tracker, struct process *process,
			     const struct po_event *event, int32_t cpu_count);

void process_tracker_worker_begin(struct process *process, const struct po_event *event);
/* The process announced itself (PO_EV_PROCESS): after a fork, or at its start. */
void process_tracker_announced(const struct po_process_tracker *tracker, struct process *process,
			       const struct po_event *event);

/* A SELF_COST report: the process's own cost so far, by source (cumulative, never less). */
void process_tracker_self_cost(struct process *process, const struct po_event *event);
/*
 * A worker ends (a DataLoader worker exits at the end of every epoch unless its workers
 * are persistent): its resident and device memory leave the sums, so the memory of a run
 * is that of the processes alive, not of every process ever started.
 */
void process_tracker_worker_end(struct po_process_tracker *tracker, struct process *process);

/* Takes processes silent since before time_ns - PO_SILENT_NS out of the sums. */
void process_tracker_expire_silent(struct po_process_tracker *tracker, int64_t time_ns);

/*
 * A process whose events go to tracker `t` from now on (another rank's model) keeps its CPU
 * clock there: t's entry for it (created when t has none) continues from where `from` left
 * it, so its CPU time is neither lost between the two nor counted twice. An entry with CPU
 * samples of its own already (it was fed the same events) is left as it is.
 */
enum po_status process_tracker_continue_cpu(struct po_process_tracker *t,
					    const struct process *from) PO_NODISCARD;

/* The live processes' resident memory now; -1 before a sample. */
int64_t process_tracker_rss_sum(const struct po_process_tracker *tracker);

#endif /* PO_MODEL_PROCESSES_H */
