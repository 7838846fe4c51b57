/* fixture.c: deterministic synthetic analyses: fixed seeds, fixed times, no clock. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "step_store.h"

#define MS 1000000LL
#define MAIN_PID 1000
#define STEP_COUNT 60
#define WORKER_COUNT 2
#define T0 (5000 * MS)

struct builder {
	struct po_arena *arena;	      /* weak: the analysis owns it */
	struct po_analysis *analysis; /* weak */
	bool hostile;
	uint32_t seed;
	struct po_step *steps; /* weak: in the arena; the analysis keeps copies in its store */
};

static double noise(struct builder *b)
{
	b->seed = b->seed * 1103515245u + 12345u;
	return ((b->seed >> 8) & 0xffff) / 65535.0;
}

#define NEW_ARRAY(b, type, count) ((type *)po_arena_alloc((b)->arena, sizeof(type) * ((count) + 1)))

static const char *text(struct builder *b, const char *normal, const char *hostile)
{
	return po_arena_strdup(b->arena, b->hostile ? hostile : normal);
}

static void build_run(struct builder *b)
{
	static const char *const keys[] = {"batch_size", "model", "num_workers", "pin_memory",
					   "prefetch_factor"};
	static const char *const values[] = {"64", "resnet50", "2", "false", "2"};
	struct po_analysis *a = b->analysis;

	a->framework = text(b, "pytorch 2.1.2", "</script><script>alert(1)</script>");
	a->cpu_count = 8;
	a->config_count = 5;
	a->config = NEW_ARRAY(b, struct po_kv, 5);
	for (size_t i = 0; i < 5; i++) {
		a->config[i].key = text(b, keys[i], i == 1 ? "model\x01\x1b[31m" : keys[i]);
		a->config[i].value = text(b, values[i],
					  i == 1   ? "\"'><svg onload=alert(2)>"
					  : i == 3 ? "\xff\xfe bad \xc3("
						   : values[i]);
	}
}

static void build_processes(struct builder *b)
{
	struct po_analysis *a = b->analysis;

	a->main_pid = MAIN_PID;
	a->process_count = 1 + WORKER_COUNT;
	a->processes = NEW_ARRAY(b, struct po_process, a->process_count);
	for (size_t i = 0; i < a->process_count; i++) {
		struct po_process *p = &a->processes[i];

		p->pid = MAIN_PID + (i ? 100 + (int32_t)i : 0);
		p->name = text(b, i ? "pt_data_worker" : "python",
			       i ? "<img src=x onerror=alert(3)>" : "python");
		p->role = i ? PO_ROLE_WORKER : PO_ROLE_MAIN;
		p->worker_id = i ? (int64_t)i - 1 : -1;
		p->parent_pid = i ? MAIN_PID : -1;
		p->first_ns = T0;
		p->event_count = i ? 1200 : 5400;
		p->rss_peak_bytes = (i ? 900LL : 4200LL) << 20;
	}
	a->thread_count = 2;
	a->threads = NEW_ARRAY(b, struct po_thread, 2);
	a->threads[0] =
	    (struct po_thread){MAIN_PID, MAIN_PID, text(b, "python", "py\x07thon\xe2\x80"), true};
	a->threads[1] = (struct po_thread){
	    MAIN_PID, MAIN_PID + 10, text(b, "pin_memory", "</svg><script>x</script>"), false};
}

/* One step: the categories sum to the duration; steps 17 and 41 wait much longer. */
static void build_step(struct builder *b, size_t i, int64_t begin_ns)
{
	struct po_step *s = &b->steps[i];
	int64_t *cat = s->category_ns;

	cat[PO_CAT_DATA_WAIT] =
	    (int64_t)((38 + 14 * noise(b)) * MS) + (i == 17 || i == 41 ? 160 * MS : 0);
	cat[PO_CAT_H2D_COPY] = (int64_t)((4 + noise(b)) * MS);
	cat[PO_CAT_FORWARD] = (int64_t)((24 + 2 * noise(b)) * MS);
	cat[PO_CAT_BACKWARD] = (int64_t)((30 + 3 * noise(b)) * MS);
	cat[PO_CAT_OPTIMIZER] = 6 * MS;
	cat[PO_CAT_GPU_SYNC] = 2 * MS;
	cat[PO_CAT_OTHER] = 3 * MS;
	s->index = (int64_t)i;
	s->epoch = 0;
	s->batch_size = 64;
	s->begin_ns = begin_ns;
	s->end_ns = begin_ns;
	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		s->end_ns += cat[c];
	s->batch = (int64_t)i;
	s->worker_pid = MAIN_PID + 101 + (int32_t)(i % WORKER_COUNT);
	s->ready_ns = begin_ns + cat[PO_CAT_DATA_WAIT];
	s->queue_depth = i % 3 == 0 ? 1 : 0;
	s->load_ns = 62 * MS;
	s->preprocess_ns = 36 * MS;
	s->collate_ns = 5 * MS;
	s->gpu_busy_ns =
	    (int64_t)((cat[PO_CAT_FORWARD] + cat[PO_CAT_BACKWARD]) * 0.92 + cat[PO_CAT_H2D_COPY]);
	s->host_live_bytes =
	    (1200LL << 20) + (int64_t)i * (3LL << 20) + (int64_t)(noise(b) * (1 << 20));
	s->rss_bytes = (4096LL << 20) + (int64_t)i * (4LL << 20);
	s->gpu_live_bytes = (6144LL << 20) + (int64_t)(noise(b) * (64 << 20));
}

static int compare_int64(const void *x, const void *y)
{
	int64_t l = *(const int64_t *)x, r = *(const int64_t *)y;

	return (l > r) - (l < r);
}

/* The steady statistics as the detectors define them: every fixture step is steady. */
static void build_steady(struct builder *b, int64_t total_ns)
{
	struct po_analysis *a = b->analysis;
	const double *mean = a->step_stats.category_mean_ns;
	double busy = 0;

	for (size_t i = 0; i < a->step_count; i++)
		busy += (double)b->steps[i].gpu_busy_ns;
	a->diagnosis.steady = (struct po_steady_stats){
	    .count = (int64_t)a->step_count,
	    .startup_steps = 1,
	    .mean_ns = a->step_stats.mean_ns,
	    .gpu_busy_pct = 100.0 * busy / (double)total_ns,
	    .input_wait_pct = 100.0 *
			      (mean[PO_CAT_DATA_WAIT] + mean[PO_CAT_LOAD] +
			       mean[PO_CAT_PREPROCESS] + mean[PO_CAT_COLLATE]) /
			      a->step_stats.mean_ns,
	    .workers_busy_pct = NAN};
}

static void build_stats(struct builder *b)
{
	struct po_analysis *a = b->analysis;
	struct po_step_stats *st = &a->step_stats;
	int64_t durations[STEP_COUNT], total = 0;

	st->count = st->clean_count = (int64_t)a->step_count;
	for (size_t i = 0; i < a->step_count; i++) {
		durations[i] = b->steps[i].end_ns - b->steps[i].begin_ns;
		total += durations[i];
		for (int c = 0; c < PO_CATEGORY_COUNT; c++)
			st->category_mean_ns[c] +=
			    (double)b->steps[i].category_ns[c] / a->step_count;
	}
	qsort(durations, a->step_count, sizeof(int64_t), compare_int64);
	st->mean_ns = (double)total / a->step_count;
	st->min_ns = durations[0];
	st->p50_ns = durations[a->step_count / 2];
	st->p90_ns = durations[a->step_count * 90 / 100];
	st->p95_ns = durations[a->step_count * 95 / 100];
	st->p99_ns = durations[a->step_count - 1];
	st->max_ns = durations[a->step_count - 1];
	st->steps_per_s = a->step_count / (total / 1e9);
	build_steady(b, total);
	st->samples_per_s = st->steps_per_s * 64;
	st->coverage_pct = 100;
	if (po_stats_histogram_axis(&st->histogram, PO_STEP_HISTOGRAM_BINS, (double)durations[0],
				    (double)durations[a->step_count - 1]))
		for (size_t i = 0; i < a->step_count; i++)
			po_stats_histogram_add(&st->histogram, &(double){(double)durations[i]}, 1);
}

static void build_steps(struct builder *b)
{
	struct po_analysis *a = b->analysis;
	int64_t t = T0;

	b->steps = NEW_ARRAY(b, struct po_step, STEP_COUNT);
	for (size_t i = 0; i < STEP_COUNT; i++) {
		build_step(b, i, t);
		t = b->steps[i].end_ns;
	}
	if (po_analysis_set_steps(a, b->steps, STEP_COUNT) != PO_STATUS_OK)
		abort(); /* the tests cannot go on without their steps */
	build_stats(b);
	for (size_t i = 0; i < a->process_count; i++)
		a->processes[i].last_ns = t;
}

static const char *label_name(struct builder *b, size_t i)
{
	if (!b->hostile)
		return po_arena_printf(b->arena, "imagenet/train/shard-%03zu.tar", i);
	if (i == 0)
		return "</script><script>alert(1)</script>";
	if (i == 1)
		return "\"'><svg onload=alert(2)>";
	if (i == 2)
		return "bad\xff\xc0utf8\x01\x02\x7f ctl";
	return po_arena_printf(b->arena, "flood-%zu-%0300zu", i, i);
}

static void build_workers(struct builder *b)
{
	struct po_analysis *a = b->analysis;
	size_t label_count = b->hostile ? 200 : 16;

	a->worker_count = WORKER_COUNT;
	a->workers = NEW_ARRAY(b, struct po_worker, WORKER_COUNT);
	for (size_t i = 0; i < WORKER_COUNT; i++) {
		struct po_worker *w = &a->workers[i];

		w->pid = MAIN_PID + 101 + (int32_t)i;
		w->worker_id = (int64_t)i;
		w->batches = STEP_COUNT / WORKER_COUNT;
		w->stage_ns[PO_STAGE_LOAD] = w->batches * 62 * MS;
		w->stage_ns[PO_STAGE_PREPROCESS] = w->batches * 36 * MS;
		w->stage_ns[PO_STAGE_COLLATE] = w->batches * 5 * MS;
		w->busy_ns = w->batches * 103 * MS;
		w->first_ns = T0;
		w->last_ns = b->steps[STEP_COUNT - 1].end_ns;
		for (int s = 0; s < PO_STAGE_COUNT; s++)
			w->stage_cpu_ns[s] = -1;
	}
	a->label_stat_count = label_count;
	a->label_stats = NEW_ARRAY(b, struct po_label_stat, label_count);
	for (size_t i = 0; i < label_count; i++) {
		struct po_label_stat *l = &a->label_stats[i];

		l->role = PO_ROLE_WORKER;
		l->stage = PO_STAGE_LOAD;
		l->label = label_name(b, i);
		l->count = 40 - (int64_t)(i % 40);
		l->total_ns = (int64_t)(label_count - i) * 9 * MS;
		l->cpu_ns = -1;
	}
}

static void build_gpu(struct builder *b)
{
	struct po_analysis *a = b->analysis;
	struct po_gpu_device *g;
	int64_t busy = 0;

	a->gpu_count = 1;
	a->gpus = g = NEW_ARRAY(b, struct po_gpu_device, 1);
	a->gap_count = STEP_COUNT;
	a->gaps = NEW_ARRAY(b, struct po_gpu_gap, STEP_COUNT);
	for (size_t i = 0; i < STEP_COUNT; i++) {
		const struct po_step *s = &b->steps[i];
		struct po_gpu_gap *gap = &a->gaps[i];

		busy += s->gpu_busy_ns;
		gap->device = 0;
		gap->begin_ns = s->begin_ns;
		gap->end_ns = s->begin_ns + s->category_ns[PO_CAT_DATA_WAIT];
		gap->step_index = (int64_t)i;
		gap->cause = i % 10 == 9 ? PO_CAT_H2D_COPY : PO_CAT_DATA_WAIT;
		gap->cause_ns = gap->end_ns - gap->begin_ns;
		g->gap_ns_by_cause[gap->cause] += gap->cause_ns;
	}
	g->device = 0;
	g->first_ns = b->steps[0].begin_ns;
	g->last_ns = b->steps[STEP_COUNT - 1].end_ns;
	g->activity_count = STEP_COUNT * 120;
	g->busy_ns = busy;
	g->window_ns = g->last_ns - g->first_ns;
	g->idle_ns = g->window_ns - busy;
	g->window_busy_pct = 100.0 * (double)busy / (double)g->window_ns;
	g->gap_count = STEP_COUNT;
	a->stream_count = 2;
	a->streams = NEW_ARRAY(b, struct po_gpu_stream, 2);
	a->streams[0] = (struct po_gpu_stream){0, 7, busy * 95 / 100, STEP_COUNT * 118, {0}, 0};
	a->streams[0].kind_ns[PO_GPU_KERNEL] = busy * 95 / 100;
	a->streams[1] = (struct po_gpu_stream){0, 13, busy * 5 / 100, STEP_COUNT * 2, {0}, 0};
	a->streams[1].kind_ns[PO_GPU_MEMCPY_H2D] = busy * 5 / 100;
}

static void build_memory(struct builder *b)
{
	struct po_analysis *a = b->analysis;

	a->memory = (struct po_memory){true,	     false,	   true, true, 1400LL << 20,
				       6200LL << 20, 4400LL << 20, 0,	 -1};
	a->mem_site_count = 3;
	a->mem_sites = NEW_ARRAY(b, struct po_mem_site, 3);
	for (size_t i = 0; i < 3; i++) {
		struct po_mem_site *m = &a->mem_sites[i];

		m->pid = MAIN_PID;
		m->role = PO_ROLE_MAIN;
		m->device = i == 2 ? 0 : -1;
		m->stage = PO_STAGE_FORWARD;
		m->label = i == 1 ? NULL
				  : text(b, i ? "activations" : "metrics_history",
					 "<b>\x1b]0;title\x07</b>");
		m->ip = 0x7f00dead0000ULL + i * 0x40;
		m->alloc_count = 600 - (int64_t)i * 100;
		m->alloc_bytes = (int64_t)(180 - i * 50) << 20;
		m->live_count = 60 - (int64_t)i * 20;
		m->live_bytes = (int64_t)(180 - i * 60) << 20;
		m->first_live_step = 0;
		m->last_live_step = 59;
	}
}

static struct po_span *add_span(struct po_span *spans, size_t *count, int kind, int sub,
				int32_t pid, int32_t tid, int32_t device, int32_t stream,
				int64_t begin_ns, int64_t end_ns)
{
	struct po_span *s = &spans[(*count)++];

	*s = (struct po_span){kind, sub, pid, tid, device, stream, NULL, begin_ns, end_ns, -1};
	return s;
}

/* Main-thread stages in the order they run, then worker stages and GPU activity under them. */
static void build_detail_spans(struct builder *b, struct po_step_detail *d, const struct po_step *s)
{
	static const struct {
		enum po_category category;
		enum po_stage stage;
	} order[] = {{PO_CAT_DATA_WAIT, PO_STAGE_DATA_WAIT},
		     {PO_CAT_H2D_COPY, PO_STAGE_H2D_COPY},
		     {PO_CAT_FORWARD, PO_STAGE_FORWARD},
		     {PO_CAT_BACKWARD, PO_STAGE_BACKWARD},
		     {PO_CAT_OPTIMIZER, PO_STAGE_OPTIMIZER}};
	int64_t t = s->begin_ns;

	d->spans = NEW_ARRAY(b, struct po_span, 64);
	add_span(d->spans, &d->span_count, PO_SPAN_STEP, 0, MAIN_PID, MAIN_PID, -1, -1, s->begin_ns,
		 s->end_ns);
	for (size_t i = 0; i < 5; i++) {
		int64_t end = t + s->category_ns[order[i].category];

		add_span(d->spans, &d->span_count, PO_SPAN_STAGE, order[i].stage, MAIN_PID,
			 MAIN_PID, -1, -1, t, end)
		    ->label = text(b, "train", "<i>x</i>");
		if (order[i].category == PO_CAT_H2D_COPY) {
			add_span(d->spans, &d->span_count, PO_SPAN_GPU, PO_GPU_MEMCPY_H2D, MAIN_PID,
				 -1, 0, 13, t + MS / 2, end);
			add_span(d->spans, &d->span_count, PO_SPAN_STAGE, PO_STAGE_H2D_COPY,
				 MAIN_PID, MAIN_PID + 10, -1, -1, t, end);
		}
		if (order[i].category == PO_CAT_FORWARD || order[i].category == PO_CAT_BACKWARD) {
			for (int k = 0; k < 6; k++)
				add_span(d->spans, &d->span_count, PO_SPAN_GPU, PO_GPU_KERNEL,
					 MAIN_PID, -1, 0, 7, t + (end - t) * k / 6 + MS,
					 t + (end - t) * (k + 1) / 6);
		}
		t = end;
	}
	add_span(d->spans, &d->span_count, PO_SPAN_SYNC, 0, MAIN_PID, MAIN_PID, 0, 7, t,
		 t + 2 * MS);
	for (int w = 0; w < WORKER_COUNT; w++) {
		int64_t wt = s->begin_ns - (w ? 40 : 10) * MS;

		for (int k = 0; k < 2; k++) {
			add_span(d->spans, &d->span_count, PO_SPAN_STAGE, PO_STAGE_LOAD,
				 MAIN_PID + 101 + w, MAIN_PID + 101 + w, -1, -1, wt, wt + 62 * MS);
			add_span(d->spans, &d->span_count, PO_SPAN_STAGE, PO_STAGE_PREPROCESS,
				 MAIN_PID + 101 + w, MAIN_PID + 101 + w, -1, -1, wt + 62 * MS,
				 wt + 98 * MS);
			add_span(d->spans, &d->span_count, PO_SPAN_STAGE, PO_STAGE_COLLATE,
				 MAIN_PID + 101 + w, MAIN_PID + 101 + w, -1, -1, wt + 98 * MS,
				 wt + 103 * MS);
			wt += 110 * MS;
		}
	}
}

static void build_details(struct builder *b)
{
	static const size_t steps[] = {17, 30, 41};
	static const uint32_t reasons[] = {PO_DETAIL_SLOWEST | PO_DETAIL_STALL, PO_DETAIL_MEDIAN,
					   PO_DETAIL_STALL};
	struct po_analysis *a = b->analysis;

	a->detail_count = 3;
	a->details = NEW_ARRAY(b, struct po_step_detail, 3);
	for (size_t i = 0; i < 3; i++) {
		struct po_step_detail *d = &a->details[i];

		d->step_index = steps[i];
		d->reasons = reasons[i];
		d->begin_ns = b->steps[steps[i]].begin_ns;
		d->end_ns = b->steps[steps[i]].end_ns;
		build_detail_spans(b, d, &b->steps[steps[i]]);
	}
}

static struct po_evidence evidence_number(enum po_evidence_key key, double number)
{
	return (struct po_evidence){key, PO_EVIDENCE_NUMBER, number, 0, NULL, {0}};
}

static struct po_evidence evidence_text(enum po_evidence_key key, const char *value)
{
	return (struct po_evidence){key, PO_EVIDENCE_TEXT, 0, 0, value, {0}};
}

static void build_input_bound(struct builder *b, struct po_finding *f)
{
	f->id = PO_FINDING_INPUT_BOUND;
	f->severity = PO_SEVERITY_CRITICAL;
	f->confidence = 0.92;
	f->summary = text(b,
			  "The training loop waits 41% of every step for the next batch; the "
			  "two workers need 103 ms per batch while a step consumes one every "
			  "118 ms of compute.",
			  "Waiting on </script><script>alert(1)</script> \xff\x01 for batches.");
	f->evidence_count = 4;
	f->evidence = NEW_ARRAY(b, struct po_evidence, 4);
	f->evidence[0] = evidence_number(PO_EVIDENCE_WAIT_SHARE_PCT, 41.3);
	f->evidence[1] = evidence_number(PO_EVIDENCE_WAIT_MS_PER_STEP, 47.8);
	f->evidence[2] = evidence_text(PO_EVIDENCE_STAGE, "load");
	f->evidence[3] =
	    (struct po_evidence){PO_EVIDENCE_NUM_WORKERS, PO_EVIDENCE_INTEGER, 0, 2, NULL, {0}};
	f->recommendation_count = 2;
	f->recommendations = NEW_ARRAY(b, struct po_recommendation, 2);
	f->recommendations[0] = (struct po_recommendation){
	    PO_KNOB_NUM_WORKERS,
	    text(b, "Set num_workers=6", "Set <b onclick=alert(4)>x</b>"),
	    "Loading takes 62 ms per batch in each worker; six workers produce a batch every "
	    "17 ms, faster than a step consumes one.",
	    "The data wait disappears and the step time falls to the compute time.",
	    72.0,
	    1.64};
	f->recommendations[1] = (struct po_recommendation){
	    PO_KNOB_PREFETCH_FACTOR,
	    "Raise prefetch_factor to 4",
	    "Deeper prefetching absorbs the slow batches behind the two outlier steps.",
	    NULL,
	    NAN,
	    NAN};
}

static void build_findings(struct builder *b)
{
	struct po_analysis *a = b->analysis;
	struct po_finding *f;

	a->diagnosis.finding_count = 3;
	a->diagnosis.findings = f = NEW_ARRAY(b, struct po_finding, 3);
	build_input_bound(b, &f[0]);
	f[1].id = PO_FINDING_HOST_MEMORY_GROWTH;
	a->diagnosis.growth_lines[0] =
	    (struct po_growth_line){true,
				    PO_GROWTH_HOST_ALLOCS,
				    2,
				    a->step_count - 1,
				    6.0 * 1048576,
				    3.0 * 1048576 * (double)(a->step_count + 1)};
	f[1].severity = PO_SEVERITY_WARNING;
	f[1].confidence = 0.8;
	f[1].summary = "Live host memory grows by 3.0 MiB per step (180 MiB over the run), "
		       "mostly from the allocation site metrics_history.";
	f[1].evidence_count = 2;
	f[1].evidence = NEW_ARRAY(b, struct po_evidence, 2);
	f[1].evidence[0] = evidence_number(PO_EVIDENCE_GROWTH_OVER_RUN_MIB, 180.0);
	f[1].evidence[1] =
	    evidence_text(PO_EVIDENCE_LABEL, text(b, "metrics_history", "\x1b[2J<script>"));
	f[1].recommendation_count = 1;
	f[1].recommendations = NEW_ARRAY(b, struct po_recommendation, 1);
	f[1].recommendations[0] = (struct po_recommendation){
	    PO_KNOB_ALLOCATION,
	    "Detach tensors before keeping them across steps (loss.item())",
	    "Keeping graph-attached tensors keeps their activations alive.",
	    NULL,
	    NAN,
	    NAN};
	f[2].id = PO_FINDING_STEP_OUTLIERS;
	f[2].severity = PO_SEVERITY_INFO;
	f[2].confidence = 0.7;
	f[2].summary = "Steps 17 and 41 took more than twice the median, both waiting for data.";
	f[2].step_count = 2;
	f[2].steps = NEW_ARRAY(b, int64_t, 2);
	f[2].steps[0] = 17;
	f[2].steps[1] = 41;
	a->diagnosis.verdict = PO_VERDICT_INPUT_BOUND;
}

static void build_quality(struct builder *b)
{
	struct po_analysis *a = b->analysis;

	a->quality.events = 7800;
	a->quality.profopt_events = 7800;
	a->quality.trace_count = 3;
	a->quality.first_ns = T0;
	a->quality.last_ns = b->steps[STEP_COUNT - 1].end_ns;
	if (!b->hostile)
		return;
	a->quality.discarded_events = 12;
	a->warning_count = 1;
	a->warnings = NEW_ARRAY(b, struct po_warning, 1);
	a->warnings[0] = (struct po_warning){"unmatched-spans",
					     "Span <script>alert(5)</script> \xc3 never ended"};
}

struct po_analysis *fixture_create(enum fixture_kind kind)
{
	struct po_arena *arena = po_arena_create();
	bool hostile = kind == FIXTURE_HOSTILE || kind == FIXTURE_COMPARISON_HOSTILE;
	struct builder b = {arena, NULL, hostile, 12345, NULL};

	if (!arena)
		return NULL;
	b.analysis = po_arena_alloc(arena, sizeof(*b.analysis));
	b.analysis->arena = arena;
	b.analysis->main_pid = -1;
	b.analysis->cpu_count = -1;
	b.analysis->diagnosis.verdict = PO_VERDICT_UNKNOWN;
	b.analysis->memory = (struct po_memory){false, false, false, false, -1, -1, -1, 0, -1};
	b.analysis->step_stats.samples_per_s = -1;
	b.analysis->diagnosis.steady = (struct po_steady_stats){0, 1, NAN, NAN, NAN, NAN, false};
	if (kind == FIXTURE_EMPTY)
		return b.analysis;
	build_run(&b);
	build_processes(&b);
	build_steps(&b);
	build_workers(&b);
	po_analysis_build_pipeline(b.analysis);
	build_gpu(&b);
	build_memory(&b);
	build_details(&b);
	build_findings(&b);
	build_quality(&b);
	if (kind == FIXTURE_COMPARISON || kind == FIXTURE_COMPARISON_HOSTILE)
		fixture_add_comparison(b.analysis, hostile);
	return b.analysis;
}

void fixture_destroy(struct po_analysis *analysis)
{
	if (analysis) {
		po_step_store_destroy(analysis->step_store);
		po_arena_destroy(analysis->arena);
	}
}
