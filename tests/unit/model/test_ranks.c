/*
 * test_ranks.c: a distributed job in one trace: processes to ranks (workers inherit their
 * parent's), each rank's own loop, collectives matched across ranks by group and sequence
 * number, and the straggler finding from arrival times and the straggler's own breakdown.
 */
#include <math.h>
#include <string.h>

#include "builder.h"
#include "detect.h"
#include "rules.h"

enum { RANK0 = 100, WORKER0 = 101, RANK1 = 200, WORKER1 = 201 };

#define STEPS 20
#define STEP_PERIOD (50 * MS)

/*
 * Gradient accumulation: the steps per synchronising step (the others run under DDP's
 * no_sync(), without collectives), and the steps run_job runs.
 */
static int64_t accumulation = 1;
static int64_t step_total = STEPS;

/* The world size the rank events report: 3 leaves rank 2 out of the trace. */
static int32_t reported_world_size = 2;

static void rank_event(struct po_model *model, int64_t t, int32_t pid, int32_t rank,
		       const char *host)
{
	struct po_event event = event_at(PO_EV_RANK, t, pid, pid);

	event.u.rank.rank = rank;
	event.u.rank.local_rank = -1; /* as under torch.multiprocessing.spawn */
	event.u.rank.world_size = reported_world_size;
	event.u.rank.host = str_of(host);
	feed(model, &event);
}

static void collective(struct po_model *model, enum po_event_kind kind, int64_t t, int32_t pid,
		       int32_t tid, int64_t seq)
{
	struct po_event event = event_at(kind, t, pid, tid);

	event.u.collective.group = 0;
	event.u.collective.op = PO_COLLECTIVE_ALL_REDUCE;
	event.u.collective.bytes = 4096;
	event.u.collective.seq = seq;
	event.u.collective.device = -1;
	feed(model, &event);
}

/* One rank's step: data wait of wait_ns, 5 ms forward, backward holding the all-reduce. */
struct rank_step {
	int32_t pid;
	int32_t worker;
	int64_t wait_ns;
	int64_t arrive_ns; /* collective begin, from the step's begin */
	int64_t clock_ns;  /* how far its host's clock is ahead */
};

/*
 * The events of both ranks' step k, in time order: each rank's spans are fed by time, the
 * two ranks interleaved by sorting on the times of their events.
 */
struct timed {
	int64_t t;
	int what;
	int rank;
};

static int compare_timed(const void *left, const void *right)
{
	const struct timed *a = left, *b = right;

	if (a->t != b->t)
		return (a->t > b->t) - (a->t < b->t);
	if (a->rank != b->rank)
		return a->rank - b->rank;
	return a->what - b->what;
}

enum {
	STEP_BEGIN,
	WAIT_BEGIN,
	LOAD_BEGIN,
	LOAD_END,
	WAIT_END,
	FORWARD_BEGIN,
	FORWARD_END,
	BACKWARD_BEGIN,
	COLL_BEGIN,
	COLL_END,
	BACKWARD_END,
	STEP_END,
	WHAT_COUNT
};

static void emit(struct po_model *model, const struct rank_step *r, int what, int64_t t,
		 int64_t step)
{
	switch (what) {
	case STEP_BEGIN:
		step_begin(model, t, r->pid, r->pid, step);
		break;
	case WAIT_BEGIN:
		stage_begin(model, t, r->pid, r->pid, PO_STAGE_DATA_WAIT, "next", step);
		break;
	case LOAD_BEGIN:
		stage_begin(model, t, r->worker, r->worker, PO_STAGE_LOAD, "read", step);
		break;
	case LOAD_END:
		stage_end(model, t, r->worker, r->worker, PO_STAGE_LOAD, step);
		break;
	case WAIT_END:
		stage_end(model, t, r->pid, r->pid, PO_STAGE_DATA_WAIT, step);
		break;
	case FORWARD_BEGIN:
		stage_begin(model, t, r->pid, r->pid, PO_STAGE_FORWARD, "net", -1);
		break;
	case FORWARD_END:
		stage_end(model, t, r->pid, r->pid, PO_STAGE_FORWARD, -1);
		break;
	case BACKWARD_BEGIN:
		stage_begin(model, t, r->pid, r->pid, PO_STAGE_BACKWARD, "net", -1);
		break;
	case COLL_BEGIN:
		collective(model, PO_EV_COLLECTIVE_BEGIN, t, r->pid, r->pid, step);
		break;
	case COLL_END: /* from the communication library's own thread */
		collective(model, PO_EV_COLLECTIVE_END, t, r->pid, r->pid + 50, step);
		break;
	case BACKWARD_END:
		stage_end(model, t, r->pid, r->pid, PO_STAGE_BACKWARD, -1);
		break;
	default:
		step_end_sized(model, t, r->pid, r->pid, step, 8);
		break;
	}
}

static void job_step(struct po_model *model, const struct rank_step ranks[2], int64_t step)
{
	int64_t base = 10 * MS + step * STEP_PERIOD, done = 0;
	struct timed events[2 * WHAT_COUNT];
	size_t count = 0;

	for (int r = 0; r < 2; r++)
		done = ranks[r].arrive_ns > done ? ranks[r].arrive_ns : done;
	for (int r = 0; r < 2; r++) {
		int64_t wait = ranks[r].wait_ns, arrive = ranks[r].arrive_ns;
		const int64_t at[WHAT_COUNT] = {0,
						0,
						0,
						wait - MS / 2,
						wait,
						wait,
						wait + 5 * MS,
						wait + 5 * MS,
						arrive,
						done + 2 * MS,
						done + 3 * MS,
						done + 5 * MS};

		for (int what = 0; what < WHAT_COUNT; what++)
			events[count++] =
			    (struct timed){base + at[what] + ranks[r].clock_ns, what, r};
	}
	qsort(events, count, sizeof(*events), compare_timed);
	for (size_t i = 0; i < count; i++) {
		bool collective = events[i].what == COLL_BEGIN || events[i].what == COLL_END;

		if (collective && step % accumulation != accumulation - 1)
			continue; /* a micro-step under no_sync(): no all-reduce */
		emit(model, &ranks[events[i].rank], events[i].what, events[i].t, step);
	}
}

/* run_job records CPU counters (cpu_samples) when set. */
static bool with_cpu;
/*
 * Shared cores' jitter between balanced ranks when not 0: in each step one rank arrives
 * this much later (times 0.75 to 1.5 by turns), rank 0 in 3 of every 5 steps.
 */
static int64_t shared_jitter_ns;

/*
 * The processes' CPU and the machine's busy CPU at t (before step k's events): each rank's
 * main process uses 0.25 cores, each worker 0.1 (counted from its first sample), other
 * programs 0.1; the machine counter is sampled by both ranks' main processes, after the
 * processes' own samples of the same moment.
 */
static void cpu_samples(struct po_model *model, int64_t t, bool workers)
{
	const int32_t mains[2] = {RANK0, RANK1}, workers_of[2] = {WORKER0, WORKER1};

	for (int r = 0; r < 2; r++) {
		counter(model, t, mains[r], PO_COUNTER_PROCESS_CPU, -1, 2000 * MS + t / 4);
		if (workers)
			counter(model, t, workers_of[r], PO_COUNTER_PROCESS_CPU, -1,
				5000 * MS + t / 10);
	}
	for (int r = 0; r < 2; r++)
		counter(model, t + 1, mains[r], PO_COUNTER_MACHINE_CPU, -1,
			90000 * MS + t * 8 / 10);
}

/* Rank 1 on another host whose clock is clock_ns ahead when clock_ns is not 0. */
static struct po_analysis *run_job(int64_t slow_wait_ns, bool jitter, int64_t clock_ns)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;
	struct po_rules rules;
	struct po_error err = {{0}};
	struct rank_step ranks[2] = {{RANK0, WORKER0, MS, 0, 0}, {RANK1, WORKER1, MS, 0, clock_ns}};

	if (with_cpu) {
		struct po_event begin = event_at(PO_EV_RUN_BEGIN, 0, RANK0, RANK0);

		begin.u.run_begin.framework = str_of("pytorch");
		begin.u.run_begin.cpu_count = 2;
		feed(model, &begin);
		cpu_samples(model, MS / 4, false); /* before the rank events: the owner's */
	}
	/* samples before the rank events: rank 1's must leave the primary loop's memory sums */
	counter(model, MS / 2, RANK1, PO_COUNTER_HOST_RSS, -1, 300 << 20);
	counter(model, MS / 2 + 1, RANK0, PO_COUNTER_HOST_RSS, -1, 100 << 20);
	/* rank 1 first: the primary is still rank 0 */
	rank_event(model, 1 * MS, RANK1, 1, clock_ns ? "node2" : "node1");
	rank_event(model, 2 * MS, RANK0, 0, "node1");
	worker_begin(model, 3 * MS, WORKER0, 0, RANK0);
	worker_begin(model, 4 * MS, WORKER1, 0, RANK1);
	for (int64_t step = 0; step < step_total; step++) {
		ranks[1].wait_ns = slow_wait_ns;
		for (int r = 0; r < 2; r++)
			ranks[r].arrive_ns = ranks[r].wait_ns + 7 * MS;
		if (jitter)
			ranks[step % 2].arrive_ns += MS / 5;
		if (shared_jitter_ns)
			ranks[step % 5 < 3 ? 0 : 1].arrive_ns +=
			    shared_jitter_ns * (3 + step % 4) / 4;
		if (with_cpu)
			cpu_samples(model, step * STEP_PERIOD + 5 * MS, true);
		job_step(model, ranks, step);
	}
	analysis = model_done(model);
	po_rules_init(&rules);
	CHECK(po_detect_run(analysis, &rules, &err) == PO_STATUS_OK);
	return analysis;
}

static const struct po_finding *find_finding(const struct po_analysis *analysis,
					     enum po_finding_id id)
{
	for (size_t i = 0; i < analysis->diagnosis.finding_count; i++) {
		if (analysis->diagnosis.findings[i].id == id)
			return &analysis->diagnosis.findings[i];
	}
	return NULL;
}

static void slow_input_rank(void)
{
	struct po_analysis *analysis = run_job(31 * MS, false, 0);
	const struct po_distributed *d = analysis->distributed;

	CHECK(d != NULL);
	/* the primary rank's loop is the report's: its steps alone, no steps dropped */
	CHECK_INT_EQ(analysis->step_count, STEPS);
	CHECK_INT_EQ(analysis->main_pid, RANK0);
	CHECK_INT_EQ(analysis->worker_count, 1);
	CHECK_INT_EQ(analysis->workers[0].pid, WORKER0);
	CHECK(find_warning(analysis, "steps-on-several-threads") == NULL);
	CHECK_INT_EQ(po_analysis_step(analysis, 5).rss_bytes, 100 << 20);
	CHECK_INT_EQ(d->rank_count, 2);
	CHECK_INT_EQ(d->world_size, 2);
	CHECK_INT_EQ(d->ranks[0].rank, 0);
	CHECK_INT_EQ(d->ranks[1].rank, 1);
	CHECK_INT_EQ(d->ranks[1].pid, RANK1);
	CHECK_STR_EQ(d->ranks[1].host, "node1");
	/* no local rank given: each rank's place on its host, in rank order, inferred */
	CHECK_INT_EQ(d->ranks[0].local_rank, 0);
	CHECK_INT_EQ(d->ranks[1].local_rank, 1);
	CHECK(d->ranks[1].local_rank_inferred);
	CHECK_INT_EQ(d->ranks[1].steps, STEPS);
	/* a rank's steady steps are the detectors' (po_metric_steady_walk) */
	CHECK_INT_EQ(d->ranks[0].steady_steps, analysis->diagnosis.steady.count);
	CHECK_INT_EQ(d->ranks[1].steady_steps, STEPS - 1);
	CHECK_INT_EQ(d->collectives, STEPS);
	CHECK_INT_EQ(d->unmatched_collectives, 0);
	CHECK_INT_EQ(d->host_count, 1); /* one host: no clock to align */
	CHECK(isnan(d->clock_residual_ns));
	CHECK_INT_EQ(d->step_count, STEPS - 1); /* past the start-up step */
	/* rank 0 arrives 30 ms before rank 1 at every all-reduce */
	CHECK(fabs(d->ranks[0].wait_ns_per_step - 30.0 * MS) < 1);
	CHECK(fabs(d->ranks[1].wait_ns_per_step) < 1);
	CHECK(fabs(d->lost_ns_per_step - 30.0 * MS) < 1);
	CHECK_INT_EQ(d->steps[3].last_rank, 1);
	CHECK_INT_EQ(d->arrival_ns[3 * 2 + 1] - d->arrival_ns[3 * 2], 30 * MS);
	/* the all-reduce makes both steps as long; rank 0 waited 30 ms of its own for rank 1 */
	CHECK_INT_EQ(d->step_ns[3 * 2], d->step_ns[3 * 2 + 1]);
	CHECK_INT_EQ(d->waited_ns[3 * 2], 30 * MS);
	CHECK_INT_EQ(d->waited_ns[3 * 2 + 1], 0);
	/* the heatmap: one column per matched step here, rank 1's own time 30 ms longer */
	CHECK_INT_EQ(d->heat_bins, STEPS - 1);
	CHECK_INT_EQ(d->heat_ns[3 * 2 + 1] - d->heat_ns[3 * 2], 30 * MS);
	CHECK_INT_EQ(d->heat_low_ns, d->heat_ns[3 * 2]);
	CHECK_INT_EQ(d->heat_high_ns, d->heat_ns[3 * 2 + 1]);
	/* rank 1 waits 30 ms more for its data: the straggler, chronic, cause input */
	CHECK(d->straggler.present);
	CHECK_INT_EQ(d->straggler.rank, 1);
	CHECK(d->straggler.chronic);
	CHECK_INT_EQ(d->straggler.cause, PO_STRAGGLER_CAUSE_INPUT);
	CHECK_INT_EQ(d->straggler.cause_category, PO_CAT_DATA_WAIT);
	CHECK(fabs(d->straggler.others_wait_ns_per_step - 30.0 * MS) < 1);
	CHECK(find_finding(analysis, PO_FINDING_STRAGGLER) != NULL);
	po_analysis_destroy(analysis);
}

static void balanced_ranks(void)
{
	struct po_analysis *analysis = run_job(MS, true, 0);
	const struct po_distributed *d = analysis->distributed;

	CHECK(d != NULL);
	CHECK_INT_EQ(d->step_count, STEPS - 1); /* past the start-up step */
	CHECK(!d->straggler.present);
	CHECK(find_finding(analysis, PO_FINDING_STRAGGLER) == NULL);
	CHECK(d->ranks[0].last_pct > 40 && d->ranks[0].last_pct < 60);
	po_analysis_destroy(analysis);
}

/*
 * Balanced ranks on shared cores: one rank or the other arrives 3.4 to 6.8 ms late at every
 * all-reduce, rank 0 in 60% of the steps, and the job loses 4-5 ms of a 17 ms step to the
 * spread, 2.6 ms of it in the steps rank 0 was last (15%, above straggler.min_lost_pct). Rank
 * 0's mean lateness is 0.9 ms (5%), within 3 standard errors of the run's jitter of it: no
 * straggler. Rank 1 slower by 5 ms on top of the same jitter stands out.
 */
static void balanced_on_shared_cores(void)
{
	struct po_analysis *analysis;
	const struct po_distributed *d;

	shared_jitter_ns = 9 * MS / 2;
	analysis = run_job(MS, false, 0);
	d = analysis->distributed;
	CHECK(d != NULL);
	CHECK(d->lost_ns_per_step > 4.0 * MS && d->lost_ns_per_step < 5.5 * MS);
	CHECK(d->ranks[0].last_pct > 55 && d->ranks[0].last_pct < 65);
	CHECK(!d->straggler.present);
	CHECK(find_finding(analysis, PO_FINDING_STRAGGLER) == NULL);
	CHECK(d->straggler.lateness_ns_per_step > 0 && d->straggler.lateness_ns_per_step < 2 * MS);
	CHECK(d->straggler.jitter_ns > 4 * MS);
	po_analysis_destroy(analysis);
	analysis = run_job(6 * MS, false, 0); /* rank 1 waits 5 ms more for its data */
	shared_jitter_ns = 0;
	d = analysis->distributed;
	CHECK(d != NULL);
	CHECK(d->straggler.present);
	CHECK_INT_EQ(d->straggler.rank, 1);
	CHECK_INT_EQ(d->straggler.cause, PO_STRAGGLER_CAUSE_INPUT);
	CHECK(fabs(d->straggler.lateness_ns_per_step - 5.0 * MS) < 1.5 * MS);
	po_analysis_destroy(analysis);
}

static const struct po_recommendation *first_advice(const struct po_finding *finding)
{
	return finding && finding->recommendation_count ? &finding->recommendations[0] : NULL;
}

/*
 * Gradient accumulation, 4 steps per all-reduce, 48 steps: rank 1 waits 30 ms longer for
 * its data in each 43 ms step, and the all-reduce of every 4th step is matched. The loss
 * per matched step is judged against the job's synchronising step (4 x 43 ms), not one
 * step: a warning at 17%, not a critical 70%, and the job's step at the others' pace is
 * 172 - 30 = 142 ms, never less than the 4 steps of work the others still do (before: 43 -
 * 30 = 13 ms per step, 3.3x; with a larger straggler, a negative step).
 */
static void accumulated_gradients(void)
{
	const struct po_finding *finding;
	const struct po_recommendation *advice;
	struct po_analysis *analysis;
	const struct po_distributed *d;

	accumulation = 4;
	step_total = 48;
	analysis = run_job(31 * MS, false, 0);
	accumulation = 1;
	step_total = STEPS;
	d = analysis->distributed;
	CHECK(d != NULL);
	CHECK_INT_EQ(d->step_count, 12);
	CHECK_INT_EQ(d->steps[1].step - d->steps[0].step, 4);
	CHECK(d->straggler.present);
	CHECK_INT_EQ(d->straggler.rank, 1);
	finding = find_finding(analysis, PO_FINDING_STRAGGLER);
	CHECK(finding != NULL);
	CHECK(finding && finding->severity == PO_SEVERITY_WARNING);
	CHECK(finding && strstr(finding->summary, "of each 172.0 ms synchronising step (4 steps)"));
	advice = first_advice(finding);
	CHECK(advice != NULL);
	CHECK(advice && fabs(advice->predicted_step_ms - 142.0) < 0.5);
	CHECK(advice && advice->predicted_step_ms >= 3 * 43.0);
	po_analysis_destroy(analysis);
}

/* Rank 1's host clock runs 50 ms ahead: the offset comes from the collectives' ends. */
static void two_hosts(void)
{
	struct po_analysis *analysis = run_job(31 * MS, false, 50 * MS);
	const struct po_distributed *d = analysis->distributed;

	CHECK(d != NULL);
	CHECK_INT_EQ(d->host_count, 2);
	CHECK_STR_EQ(d->hosts[0].host, "node1");
	CHECK_STR_EQ(d->hosts[1].host, "node2");
	CHECK_INT_EQ(d->ranks[1].local_rank, 0); /* alone on node2 */
	CHECK(fabs(d->hosts[1].offset_ns - 50.0 * MS) < 1);
	CHECK_INT_EQ(d->hosts[1].samples, STEPS);
	CHECK(d->clock_residual_ns < 1);
	/* aligned: rank 1 arrives 30 ms after rank 0, not 80 */
	CHECK_INT_EQ(d->arrival_ns[3 * 2 + 1] - d->arrival_ns[3 * 2], 30 * MS);
	CHECK(d->straggler.present);
	CHECK_INT_EQ(d->straggler.rank, 1);
	CHECK_INT_EQ(d->straggler.cause, PO_STRAGGLER_CAUSE_INPUT);
	po_analysis_destroy(analysis);
}

/*
 * World size 3, ranks 0 and 1 in the trace: rank 2 is missing. Neither present rank makes
 * the other wait, but the job is incomplete: no "no straggler", a warning that names rank 2
 * and the time both present ranks spend in each all-reduce (2 ms from the last arrival to
 * its end here, which would include a wait for rank 2 in a real job).
 */
static void missing_rank(void)
{
	struct po_analysis *analysis;
	const struct po_distributed *d;
	const struct po_warning *warning;

	reported_world_size = 3;
	analysis = run_job(MS, true, 0);
	reported_world_size = 2;
	d = analysis->distributed;
	CHECK(d != NULL);
	CHECK_INT_EQ(d->world_size, 3);
	CHECK_INT_EQ(d->rank_count, 2);
	CHECK_INT_EQ(d->missing_rank_count, 1);
	CHECK_INT_EQ(d->missing_listed, 1);
	CHECK_INT_EQ(d->missing_ranks[0], 2);
	CHECK(!d->straggler.present);
	CHECK(d->shared_collective_ns_per_step >= 2.0 * MS);
	CHECK(d->shared_collective_ns_per_step < 2.5 * MS);
	warning = find_warning(analysis, "ranks-missing");
	CHECK(warning != NULL);
	CHECK(warning && strstr(warning->text, "rank 2 missing (2 of world size 3 in the data)"));
	CHECK(warning && strstr(warning->text, "no straggler can be ruled out"));
	po_analysis_destroy(analysis);
	/* the whole job: nothing missing, no warning */
	analysis = run_job(MS, true, 0);
	CHECK_INT_EQ(analysis->distributed->missing_rank_count, 0);
	CHECK(find_warning(analysis, "ranks-missing") == NULL);
	po_analysis_destroy(analysis);
}

static const struct po_process *find_process(const struct po_analysis *analysis, int32_t pid)
{
	for (size_t i = 0; i < analysis->process_count; i++)
		if (analysis->processes[i].pid == pid)
			return &analysis->processes[i];
	return NULL;
}

static bool diagnosis_warns(const struct po_analysis *analysis, const char *code)
{
	for (size_t i = 0; i < analysis->diagnosis.warning_count; i++)
		if (strcmp(analysis->diagnosis.warnings[i].code, code) == 0)
			return true;
	return false;
}

/*
 * Two ranks on one host, each with a loader worker: every rank and its workers are the
 * recorded program. The machine's busy CPU less all four processes' is what other programs
 * used (0.1 of the cores, not the 0.45 left when rank 1 and its worker count as others), and
 * the process table lists rank 1 and its worker with their roles and CPU time, rank 1's
 * CPU clock continuing across its rank event.
 */
static void ranks_are_the_program(void)
{
	struct po_analysis *analysis;
	const struct po_process *rank1, *worker1;

	with_cpu = true;
	analysis = run_job(MS, true, 0);
	with_cpu = false;
	CHECK(analysis->machine.known);
	CHECK_INT_EQ(analysis->machine.pid, RANK0);
	CHECK_NEAR(analysis->machine.busy_cores, 0.8, 0.001);
	CHECK_NEAR(analysis->machine.traced_cores, 0.7, 0.001);
	CHECK_NEAR(analysis->machine.others_cores, 0.1, 0.001);
	CHECK(!diagnosis_warns(analysis, "busy-machine"));
	CHECK_INT_EQ(analysis->process_count, 4);
	rank1 = find_process(analysis, RANK1);
	worker1 = find_process(analysis, WORKER1);
	CHECK(rank1 && rank1->role == PO_ROLE_MAIN && rank1->rank == 1 && rank1->other_rank);
	CHECK(worker1 && worker1->role == PO_ROLE_WORKER && worker1->rank == 1 &&
	      worker1->other_rank && worker1->parent_pid == RANK1);
	/* from its first sample, before its rank event, to its last: 955 ms at 0.25 cores */
	CHECK(rank1 && rank1->cpu_last_ns - rank1->cpu_first_ns == (955 * MS - MS / 4) / 4);
	CHECK(find_process(analysis, RANK0)->rank == 0 &&
	      !find_process(analysis, RANK0)->other_rank);
	CHECK(find_process(analysis, WORKER0)->role == PO_ROLE_WORKER);
	po_analysis_destroy(analysis);
}

/* Without rank events nothing of this exists: the single-process result is unchanged. */
static void no_ranks(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	step_begin(model, 0, RANK0, RANK0, 0);
	step_end(model, 10 * MS, RANK0, RANK0, 0);
	analysis = model_done(model);
	CHECK(analysis->distributed == NULL);
	po_analysis_destroy(analysis);
}

int main(void)
{
	RUN(slow_input_rank);
	RUN(balanced_ranks);
	RUN(balanced_on_shared_cores);
	RUN(accumulated_gradients);
	RUN(two_hosts);
	RUN(missing_rank);
	RUN(no_ranks);
	RUN(ranks_are_the_program);
	return CHECK_SUMMARY();
}
