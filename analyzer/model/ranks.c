/*
 * ranks.c: the rank tracker (ranks.h): processes to ranks, a model per rank, the
 * collectives of each rank, and at the end the ranks' summaries and the steps that every
 * rank's collectives match.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "model_internal.h"
#include "ranks.h"
#include "saturate.h"
#include "stats/stats.h"

void rank_tracker_init(struct po_rank_tracker *tracker, const struct po_model_config *config,
		       struct po_strtab *strings, struct po_process_tracker *owner_procs)
{
	memset(tracker, 0, sizeof(*tracker));
	tracker->config = config;
	tracker->owner_procs = owner_procs;
	tracker->strings = strings;
	tracker->primary_rank = -1;
}

void rank_tracker_fini(struct po_rank_tracker *tracker)
{
	for (size_t i = 0; i < tracker->lane_count; i++)
		po_model_destroy(tracker->lanes[i].model);
	free(tracker->lanes);
	free(tracker->records);
	po_map_free(&tracker->pids);
	po_map_free(&tracker->open);
	tracker->lanes = NULL;
	tracker->records = NULL;
	tracker->lane_count = 0;
}

size_t rank_tracker_bytes(const struct po_rank_tracker *tracker)
{
	size_t bytes = tracker->lane_capacity * sizeof(*tracker->lanes) +
		       tracker->record_capacity * sizeof(*tracker->records) +
		       po_map_bytes(&tracker->pids) + po_map_bytes(&tracker->open);

	for (size_t i = 0; i < tracker->lane_count; i++)
		bytes += po_model_bytes(tracker->lanes[i].model);
	return bytes;
}

/* The pids map's entries: pid -> lane index + 1, read and written only through these. */
static int64_t lane_of_pid(const struct po_rank_tracker *tracker, int32_t pid)
{
	const struct po_map_entry *entry = po_map_find(&tracker->pids, (uint32_t)pid, 0);

	return entry ? (int64_t)entry->value - 1 : -1;
}

static enum po_status set_lane_of_pid(struct po_rank_tracker *tracker, int32_t pid, size_t lane)
{
	struct po_map_entry *entry = po_map_upsert(&tracker->pids, (uint32_t)pid, 0, NULL);

	if (!entry)
		return PO_STATUS_NOMEM;
	entry->value = lane + 1;
	return PO_STATUS_OK;
}

/* A rank's model: the owning model's settings, every process admitted (the owner checked). */
static enum po_status lane_create(struct po_rank_tracker *tracker, int32_t rank, size_t *out)
{
	struct po_model_config config = *tracker->config;
	struct po_error err = {0};
	struct rank_lane *lane;
	enum po_status status;

	config.recording_id[0] = '\0';
	config.command_pid = -1;
	config.recordings = NULL;
	config.recording_count = 0;
	config.keep_unannounced = false;
	status = po_array_reserve((void **)&tracker->lanes, &tracker->lane_capacity,
				  tracker->lane_count + 1, sizeof(*tracker->lanes));
	if (status != PO_STATUS_OK)
		return status;
	lane = &tracker->lanes[tracker->lane_count];
	memset(lane, 0, sizeof(*lane));
	lane->rank = rank;
	status = po_model_create(&config, &lane->model, &err);
	if (status != PO_STATUS_OK)
		return status;
	lane->model->rank_lane = true;
	*out = tracker->lane_count++;
	return PO_STATUS_OK;
}

static int64_t lane_of_rank(const struct po_rank_tracker *tracker, int32_t rank)
{
	for (size_t i = 0; i < tracker->lane_count; i++) {
		if (tracker->lanes[i].rank == rank)
			return (int64_t)i;
	}
	return -1;
}

static enum po_status on_rank(struct po_rank_tracker *tracker, const struct po_event *event,
			      bool owner_has_steps)
{
	int32_t rank = event->u.rank.rank;
	int64_t found = lane_of_rank(tracker, rank);
	struct rank_lane *lane;
	size_t index;
	enum po_status status;

	if (rank < 0)
		return PO_STATUS_OK; /* no rank: the process is analysed as one of no rank */
	if (found < 0 && tracker->lane_count >= PO_RANK_CAP) {
		tracker->ranks_not_kept++;
		return PO_STATUS_OK;
	}
	if (found >= 0) {
		index = (size_t)found;
	} else {
		status = lane_create(tracker, rank, &index);
		if (status != PO_STATUS_OK)
			return status;
	}
	lane = &tracker->lanes[index];
	lane->pid = event->pid;
	lane->recording = event->pid >> PO_RECORDING_PID_SHIFT;
	lane->local_rank = event->u.rank.local_rank;
	lane->world_size = event->u.rank.world_size;
	if (event->u.rank.host.len) {
		lane->host = po_strtab_intern(tracker->strings, event->u.rank.host.ptr,
					      event->u.rank.host.len);
		if (!lane->host)
			return PO_STATUS_NOMEM;
	}
	if (tracker->primary_rank < 0 || (rank < tracker->primary_rank && !owner_has_steps))
		tracker->primary_rank = rank;
	return set_lane_of_pid(tracker, event->pid, index);
}

/* A process forked by a rank's process (a loader worker) belongs to the same rank. */
static enum po_status inherit(struct po_rank_tracker *tracker, const struct po_event *event)
{
	int32_t parent =
	    event->kind == PO_EV_PROCESS ? event->u.process.parent_pid : event->u.worker.parent_pid;
	int64_t lane = parent >= 0 ? lane_of_pid(tracker, parent) : -1;

	if (lane < 0 || lane_of_pid(tracker, event->pid) >= 0)
		return PO_STATUS_OK;
	return set_lane_of_pid(tracker, event->pid, (size_t)lane);
}

static uint64_t open_key(size_t lane, int32_t group)
{
	return ((uint64_t)lane << 32) | (uint32_t)group;
}

static enum po_status collective_begin(struct po_rank_tracker *tracker, size_t lane,
				       const struct po_event *event)
{
	const struct po_step_tracker *loop = &tracker->lanes[lane].model->loop;
	struct po_map_entry *entry;
	enum po_status status;

	status = po_array_reserve((void **)&tracker->records, &tracker->record_capacity,
				  tracker->record_count + 1, sizeof(*tracker->records));
	if (status != PO_STATUS_OK)
		return status;
	entry = po_map_upsert(&tracker->open, open_key(lane, event->u.collective.group),
			      (uint64_t)event->u.collective.seq, NULL);
	if (!entry)
		return PO_STATUS_NOMEM;
	entry->value = tracker->record_count + 1;
	tracker->records[tracker->record_count++] =
	    (struct rank_collective){.lane = (uint32_t)lane,
				     .group = event->u.collective.group,
				     .seq = event->u.collective.seq,
				     .step = loop->step_open ? loop->current_step_number : -1,
				     .begin_ns = event->time_ns,
				     .end_ns = -1};
	return PO_STATUS_OK;
}

static void collective_end(struct po_rank_tracker *tracker, size_t lane,
			   const struct po_event *event)
{
	struct po_map_entry *entry =
	    po_map_find(&tracker->open, open_key(lane, event->u.collective.group),
			(uint64_t)event->u.collective.seq);

	if (!entry) {
		tracker->unpaired_ends++;
		return;
	}
	tracker->records[entry->value - 1].end_ns = event->time_ns;
	po_map_remove(&tracker->open, entry);
}

/*
 * Whether this is the first event of pid that the owning model does not get: the pids map's
 * aux1 marks a process whose events go to its rank's model alone.
 */
static bool note_left(struct po_rank_tracker *tracker, int32_t pid)
{
	struct po_map_entry *entry = po_map_find(&tracker->pids, (uint32_t)pid, 0);

	if (!entry || entry->aux1)
		return false;
	entry->aux1 = 1;
	return true;
}

/*
 * An event of a rank the owning model does not analyse: its rank's model takes it, and
 * whatever CPU time that model's processes add is counted as the other ranks'.
 */
static enum po_status consume_elsewhere(struct po_rank_tracker *tracker, struct rank_lane *lane,
					const struct po_event *event)
{
	int64_t before_ns = lane->model->procs.traced_cpu_ns;
	enum po_status status = po_model_consume(lane->model, event);

	tracker->other_ranks_cpu_ns =
	    po_add_sat(tracker->other_ranks_cpu_ns, lane->model->procs.traced_cpu_ns - before_ns);
	return status;
}

/*
 * A process the owning model saw leaves it for its rank's model, before that model takes
 * the event: its CPU clock continues there from the owner's last sample.
 */
static enum po_status hand_over(struct po_rank_tracker *tracker, struct rank_lane *lane,
				int32_t pid)
{
	const struct process *seen = process_tracker_find(tracker->owner_procs, pid);

	return seen ? process_tracker_continue_cpu(&lane->model->procs, seen) : PO_STATUS_OK;
}

enum po_status rank_tracker_consume(struct po_rank_tracker *tracker, const struct po_event *event,
				    bool owner_has_steps, bool *to_owner, bool *leaves_owner)
{
	enum po_status status = PO_STATUS_OK;
	int64_t lane;

	*to_owner = true;
	*leaves_owner = false;
	if (event->kind == PO_EV_RANK)
		status = on_rank(tracker, event, owner_has_steps);
	else if (event->kind == PO_EV_PROCESS || event->kind == PO_EV_WORKER_BEGIN)
		status = inherit(tracker, event);
	if (status != PO_STATUS_OK || event->pid < 0)
		return status;
	lane = lane_of_pid(tracker, event->pid);
	if (lane < 0)
		return PO_STATUS_OK;
	if (event->kind == PO_EV_COLLECTIVE_BEGIN)
		status = collective_begin(tracker, (size_t)lane, event);
	else if (event->kind == PO_EV_COLLECTIVE_END)
		collective_end(tracker, (size_t)lane, event);
	if (status != PO_STATUS_OK)
		return status;
	*to_owner = tracker->lanes[lane].rank == tracker->primary_rank;
	if (*to_owner)
		return po_model_consume(tracker->lanes[lane].model, event);
	*leaves_owner = note_left(tracker, event->pid);
	if (*leaves_owner)
		status = hand_over(tracker, &tracker->lanes[lane], event->pid);
	if (status != PO_STATUS_OK)
		return status;
	return consume_elsewhere(tracker, &tracker->lanes[lane], event);
}

struct po_model *rank_tracker_borrow_model(const struct po_rank_tracker *tracker, int32_t pid,
					   int32_t *rank, bool *primary)
{
	int64_t lane = lane_of_pid(tracker, pid);

	*rank = lane >= 0 ? tracker->lanes[lane].rank : -1;
	*primary = lane >= 0 && tracker->lanes[lane].rank == tracker->primary_rank;
	return lane >= 0 ? tracker->lanes[lane].model : NULL;
}

/* ---- the result ---- */

/* The lanes' positions in rank order: order[i] is the lane of the i-th rank. */
static int compare_lane_rank(const void *left, const void *right)
{
	const struct rank_lane *a = *(const struct rank_lane *const *)left;
	const struct rank_lane *b = *(const struct rank_lane *const *)right;

	return (a->rank > b->rank) - (a->rank < b->rank);
}

/* walls: step number -> its wall time + 1 (0 is an empty value). */
static bool wall_note(struct po_map *walls, int64_t step, int64_t wall_ns)
{
	struct po_map_entry *entry = po_map_upsert(walls, (uint64_t)step, 0, NULL);

	if (!entry)
		return false;
	entry->value = (uint64_t)(wall_ns > 0 ? wall_ns : 0) + 1;
	return true;
}

/*
 * A rank's own loop over its steady steps, from the analysis of its model: the steps the
 * detectors measure (po_metric_steady_walk: not lossy, past each epoch's start-up); their
 * step numbers go to steady when it is given.
 */
static enum po_status steady_means(const struct po_analysis *own, struct po_rank_summary *summary,
				   struct po_map *steady, struct po_map *walls)
{
	struct po_metric_steady_walk walk;
	struct po_step step;
	size_t index;
	bool is_steady;
	double wall_ns = 0, count = 0;

	po_metric_steady_walk_init(&walk, own);
	while (po_metric_steady_walk_next(&walk, &step, &index, &is_steady)) {
		if (!is_steady)
			continue;
		if (steady && !po_map_upsert(steady, (uint64_t)step.index, 0, NULL))
			return PO_STATUS_NOMEM;
		if (!wall_note(walls, step.index, step.end_ns - step.begin_ns))
			return PO_STATUS_NOMEM;
		wall_ns += (double)(step.end_ns - step.begin_ns);
		for (int c = 0; c < PO_CATEGORY_COUNT; c++)
			summary->category_mean_ns[c] += (double)step.category_ns[c];
		count++;
	}
	summary->steady_steps = (int64_t)count;
	if (count > 0) {
		summary->mean_step_ns = wall_ns / count;
		for (int c = 0; c < PO_CATEGORY_COUNT; c++)
			summary->category_mean_ns[c] /= count;
	}
	return PO_STATUS_OK;
}

/* A rank's own loop, from the analysis of its model. */
static enum po_status summarize_loop(struct rank_lane *lane, struct po_rank_summary *summary,
				     struct po_map *steady, struct po_map *walls)
{
	struct po_analysis *own = NULL;
	struct po_error err = {0};
	enum po_status status;

	*summary = (struct po_rank_summary){.rank = lane->rank,
					    .local_rank = lane->local_rank,
					    .world_size = lane->world_size,
					    .pid = lane->pid & ((1 << PO_RECORDING_PID_SHIFT) - 1),
					    .host = lane->host,
					    .recording = lane->recording,
					    .mean_step_ns = NAN,
					    .p50_step_ns = -1,
					    .collective_ns_per_step = NAN,
					    .wait_ns_per_step = NAN,
					    .last_pct = NAN};
	if (po_model_finish(lane->model, &own, &err) != PO_STATUS_OK || !own)
		return PO_STATUS_OK; /* no step of its own: an empty summary */
	summary->steps = (int64_t)own->step_count;
	summary->p50_step_ns = own->step_stats.clean_count > 0 ? own->step_stats.p50_ns : -1;
	status = steady_means(own, summary, steady, walls);
	if (status == PO_STATUS_OK)
		status = po_analysis_steps_check(own, &err);
	po_analysis_destroy(own);
	return status;
}

/* Host names: interned in one analysis (pointers compare), or read from several partials. */
static bool same_name(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Whether two ranks ran on one host: the same host name, in the same recording. */
static bool same_host(const struct rank_lane *a, const struct rank_lane *b)
{
	return same_name(a->host, b->host) && a->recording == b->recording;
}

/* The local ranks a launcher did not give, from the ranks' places on their host. */
static void infer_local_ranks(struct rank_lane *const *sorted, struct po_rank_summary *ranks,
			      size_t count)
{
	for (size_t i = 0; i < count; i++) {
		int32_t place = 0;

		if (ranks[i].local_rank >= 0)
			continue;
		for (size_t j = 0; j < i; j++)
			place += same_host(sorted[j], sorted[i]);
		ranks[i].local_rank = place;
		ranks[i].local_rank_inferred = true;
	}
}

static int compare_record(const void *left, const void *right)
{
	const struct rank_collective *a = left, *b = right;

	if (a->group != b->group)
		return (a->group > b->group) - (a->group < b->group);
	if (a->seq != b->seq)
		return (a->seq > b->seq) - (a->seq < b->seq);
	return (a->lane > b->lane) - (a->lane < b->lane);
}

/* The steps being matched: per step, the sums of each rank's waits and its arrival. */
struct step_builder {
	size_t rank_count;
	const size_t *position;	     /* weak: lane -> rank position */
	const struct po_map *steady; /* weak: the lowest rank's steady step numbers */
	const struct po_map *walls;  /* weak: per rank position, step number -> wall_ns + 1 */
	struct po_map slots;	     /* step number -> slot + 1 */
	struct po_rank_step *steps;
	size_t step_count;
	size_t step_capacity;
	int64_t *wait_ns; /* slot * rank_count + position: summed waits */
	size_t wait_capacity;
	int64_t *arrival_ns; /* likewise: the earliest begin */
	size_t arrival_capacity;
};

static enum po_status builder_slot(struct step_builder *builder, int64_t step, size_t *out)
{
	struct po_map_entry *entry = po_map_upsert(&builder->slots, (uint64_t)step, 0, NULL);
	size_t ranks = builder->rank_count, slot;

	if (!entry)
		return PO_STATUS_NOMEM;
	if (entry->value) {
		*out = entry->value - 1;
		return PO_STATUS_OK;
	}
	slot = builder->step_count;
	if (po_array_reserve((void **)&builder->steps, &builder->step_capacity, slot + 1,
			     sizeof(*builder->steps)) != PO_STATUS_OK ||
	    po_array_reserve((void **)&builder->wait_ns, &builder->wait_capacity,
			     (slot + 1) * ranks, sizeof(int64_t)) != PO_STATUS_OK ||
	    po_array_reserve((void **)&builder->arrival_ns, &builder->arrival_capacity,
			     (slot + 1) * ranks, sizeof(int64_t)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	entry->value = slot + 1;
	builder->steps[slot] = (struct po_rank_step){.step = step, .last_rank = -1};
	for (size_t r = 0; r < ranks; r++) {
		builder->wait_ns[slot * ranks + r] = 0;
		builder->arrival_ns[slot * ranks + r] = -1;
	}
	builder->step_count++;
	*out = slot;
	return PO_STATUS_OK;
}

/* Whether records [from, to) are one collective seen begun and ended by every rank once. */
static bool collective_complete(const struct rank_collective *records, size_t from, size_t to,
				size_t rank_count)
{
	if (to - from != rank_count)
		return false;
	for (size_t i = from; i < to; i++) {
		if (records[i].end_ns < records[i].begin_ns ||
		    (i > from && records[i].lane == records[i - 1].lane))
			return false;
	}
	return true;
}

/* One complete collective: its ranks' waits and arrivals go to its step. */
static enum po_status match_collective(struct step_builder *builder,
				       const struct rank_collective *records, size_t from,
				       size_t to, struct po_rank_summary *ranks)
{
	int64_t longest = INT64_MIN, shortest = INT64_MAX, step = -1;
	size_t slot, count = builder->rank_count;
	enum po_status status;

	for (size_t i = from; i < to; i++) {
		int64_t wait = records[i].end_ns - records[i].begin_ns;

		longest = wait > longest ? wait : longest;
		shortest = wait < shortest ? wait : shortest;
		ranks[builder->position[records[i].lane]].collectives++;
		if (builder->position[records[i].lane] == 0)
			step = records[i].step;
	}
	if (step < 0 || !po_map_find(builder->steady, (uint64_t)step, 0))
		return PO_STATUS_OK; /* outside the lowest rank's steady steps */
	status = builder_slot(builder, step, &slot);
	if (status != PO_STATUS_OK)
		return status;
	builder->steps[slot].lost_ns = po_add_sat(builder->steps[slot].lost_ns, longest - shortest);
	builder->steps[slot].collectives++;
	for (size_t i = from; i < to; i++) {
		size_t cell = slot * count + builder->position[records[i].lane];

		builder->wait_ns[cell] =
		    po_add_sat(builder->wait_ns[cell], records[i].end_ns - records[i].begin_ns);
		if (builder->arrival_ns[cell] < 0 ||
		    records[i].begin_ns < builder->arrival_ns[cell])
			builder->arrival_ns[cell] = records[i].begin_ns;
	}
	return PO_STATUS_OK;
}

/* The rank that waited least in a step (the others waited for it); ties: the latest. */
static size_t last_position(const struct step_builder *builder, size_t slot)
{
	const int64_t *wait = &builder->wait_ns[slot * builder->rank_count];
	const int64_t *arrival = &builder->arrival_ns[slot * builder->rank_count];
	size_t best = 0;

	for (size_t r = 1; r < builder->rank_count; r++) {
		if (wait[r] < wait[best] || (wait[r] == wait[best] && arrival[r] > arrival[best]))
			best = r;
	}
	return best;
}

/*
 * The ranks' collective times, waits and last shares over the matched steps, and the time
 * in the collectives that every rank spends (the least of any rank's).
 */
static enum po_status rank_step_means(const struct step_builder *builder,
				      struct po_distributed *out)
{
	struct po_rank_summary *ranks = out->ranks;
	size_t count = builder->rank_count, steps = builder->step_count;
	double *sums = calloc(3 * count, sizeof(double)); /* total, waited, last */
	double shared_ns = 0, collectives = 0;

	if (!sums)
		return PO_STATUS_NOMEM;
	for (size_t s = 0; s < steps; s++) {
		const int64_t *wait = &builder->wait_ns[s * count];
		int64_t least = wait[0];

		for (size_t q = 1; q < count; q++)
			least = wait[q] < least ? wait[q] : least;
		shared_ns += (double)least;
		collectives += (double)builder->steps[s].collectives;
		for (size_t r = 0; r < count; r++) {
			sums[r] += (double)wait[r];
			sums[count + r] += (double)(wait[r] - least);
			sums[2 * count + r] += builder->steps[s].last_rank == ranks[r].rank;
		}
	}
	for (size_t r = 0; steps && r < count; r++) {
		ranks[r].collective_ns_per_step = sums[r] / (double)steps;
		ranks[r].wait_ns_per_step = sums[count + r] / (double)steps;
		ranks[r].last_pct = 100.0 * sums[2 * count + r] / (double)steps;
	}
	out->shared_collective_ns_per_step = steps ? shared_ns / (double)steps : NAN;
	out->shared_collective_ns_per_collective = collectives > 0 ? shared_ns / collectives : NAN;
	free(sums);
	return PO_STATUS_OK;
}

/* A matched step's number and its slot in the builder, to put the steps in order. */
struct step_order {
	int64_t step;
	size_t slot;
};

static int compare_step_order(const void *left, const void *right)
{
	const struct step_order *a = left, *b = right;

	return (a->step > b->step) - (a->step < b->step);
}

/* The heatmap: each rank's mean step time over runs of consecutive matched steps. */
static enum po_status heat_bins(struct po_distributed *out, struct po_arena *arena)
{
	size_t count = out->rank_count, steps = out->step_count;
	size_t bins = steps < PO_RANK_HEAT_BINS ? steps : PO_RANK_HEAT_BINS;

	out->heat_bins = bins;
	out->heat_low_ns = -1;
	out->heat_high_ns = -1;
	if (!bins)
		return PO_STATUS_OK;
	out->heat_ns = po_arena_alloc(arena, bins * count * sizeof(int64_t));
	if (!out->heat_ns)
		return PO_STATUS_NOMEM;
	for (size_t b = 0; b < bins; b++) {
		size_t first = b * steps / bins, last = (b + 1) * steps / bins;

		for (size_t r = 0; r < count; r++) {
			int64_t sum = 0, n = 0, *cell = &out->heat_ns[b * count + r];

			for (size_t s = first; s < last; s++) {
				int64_t wall = out->step_ns[s * count + r];

				if (wall >= 0) {
					sum = po_add_sat(sum, wall - out->waited_ns[s * count + r]);
					n++;
				}
			}
			*cell = n ? sum / n : -1;
			if (*cell < 0)
				continue;
			if (out->heat_low_ns < 0 || *cell < out->heat_low_ns)
				out->heat_low_ns = *cell;
			if (*cell > out->heat_high_ns)
				out->heat_high_ns = *cell;
		}
	}
	return PO_STATUS_OK;
}

/* Copies the matched steps into the arena in step order. */
static enum po_status emit_steps(const struct step_builder *builder, struct po_arena *arena,
				 struct po_distributed *out)
{
	size_t count = builder->rank_count, steps = builder->step_count;
	struct step_order *order = malloc((steps ? steps : 1) * sizeof(*order));
	double lost = 0;

	out->steps = po_arena_alloc(arena, (steps ? steps : 1) * sizeof(*out->steps));
	out->arrival_ns = po_arena_alloc(arena, (steps ? steps : 1) * count * sizeof(int64_t));
	out->step_ns = po_arena_alloc(arena, (steps ? steps : 1) * count * sizeof(int64_t));
	out->waited_ns = po_arena_alloc(arena, (steps ? steps : 1) * count * sizeof(int64_t));
	if (!order || !out->steps || !out->arrival_ns || !out->step_ns || !out->waited_ns) {
		free(order);
		return PO_STATUS_NOMEM;
	}
	for (size_t s = 0; s < steps; s++)
		order[s] = (struct step_order){builder->steps[s].step, s};
	po_sort(order, steps, sizeof(*order), compare_step_order);
	for (size_t s = 0; s < steps; s++) {
		out->steps[s] = builder->steps[order[s].slot];
		memcpy(&out->arrival_ns[s * count], &builder->arrival_ns[order[s].slot * count],
		       count * sizeof(int64_t));
		const int64_t *wait = &builder->wait_ns[order[s].slot * count];
		int64_t least = wait[0];

		for (size_t r = 1; r < count; r++)
			least = wait[r] < least ? wait[r] : least;
		for (size_t r = 0; r < count; r++) {
			const struct po_map_entry *wall =
			    po_map_find(&builder->walls[r], (uint64_t)out->steps[s].step, 0);

			out->step_ns[s * count + r] = wall ? (int64_t)(wall->value - 1) : -1;
			out->waited_ns[s * count + r] = wait[r] - least;
		}
		lost += (double)out->steps[s].lost_ns;
	}
	out->step_count = steps;
	out->lost_ns_per_step = steps ? lost / (double)steps : NAN;
	free(order);
	return heat_bins(out, arena);
}

/* ---- the hosts' clocks ---- */

/* The end of lane's record among records [from, to), or -1 when it has none. */
static int64_t end_of_lane(const struct rank_collective *records, size_t from, size_t to,
			   size_t lane)
{
	for (size_t i = from; i < to; i++) {
		if (records[i].lane == lane)
			return records[i].end_ns;
	}
	return -1;
}

/*
 * The hosts (in the order of their lowest rank) and each lane's host; hosts are told apart
 * by the rank events' interned names (pointers compare) and by the recording their pid
 * says (lane->recording): two recordings are two clocks, whatever the names.
 */
static enum po_status find_hosts(struct rank_lane *const *sorted, size_t count,
				 size_t *host_of_lane, const struct rank_lane *lanes,
				 struct po_distributed *out, struct po_arena *arena)
{
	out->hosts = po_arena_alloc(arena, count * sizeof(*out->hosts));
	if (!out->hosts)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < count; i++) {
		size_t h = 0;
		int32_t recording = sorted[i]->recording;

		while (h < out->host_count && (!same_name(out->hosts[h].host, sorted[i]->host) ||
					       out->hosts[h].recording != recording))
			h++;
		if (h == out->host_count)
			out->hosts[out->host_count++] =
			    (struct po_host_clock){.host = sorted[i]->host,
						   .recording = recording,
						   .offset_ns = 0,
						   .residual_ns = NAN};
		out->hosts[h].ranks++;
		host_of_lane[sorted[i] - lanes] = h;
	}
	return PO_STATUS_OK;
}

/* The number of collectives (runs of one group and sequence number) among sorted records. */
static size_t collective_count(const struct rank_collective *records, size_t record_count)
{
	size_t count = 0;

	for (size_t i = 0; i < record_count; i++)
		count += i == 0 || records[i].group != records[i - 1].group ||
			 records[i].seq != records[i - 1].seq;
	return count;
}

/*
 * For each host but the reference, the differences of its lowest rank's ends from the
 * reference rank's over the collectives every rank completed, in one pass over the
 * records: differences[h * collectives + i], samples[h] of them.
 */
static void end_differences(const struct po_rank_tracker *tracker, const size_t *host_of_first,
			    size_t reference, size_t collectives, double *differences,
			    size_t *samples)
{
	const struct rank_collective *records = tracker->records;
	size_t from = 0, count = tracker->lane_count;

	while (from < tracker->record_count) {
		size_t to = from + 1;

		while (to < tracker->record_count && records[to].group == records[from].group &&
		       records[to].seq == records[from].seq)
			to++;
		if (collective_complete(records, from, to, count)) {
			int64_t reference_end = end_of_lane(records, from, to, reference);

			for (size_t i = from; i < to; i++) {
				size_t h = host_of_first[records[i].lane];

				if (h)
					differences[h * collectives + samples[h]++] =
					    (double)(records[i].end_ns - reference_end);
			}
		}
		from = to;
	}
}

/*
 * Each host's clock offset from the reference host (the lowest rank's), from the ends of
 * the collectives; the records of its ranks are moved by it. Records sorted by collective.
 */
static enum po_status align_clocks(struct po_rank_tracker *tracker, struct rank_lane *const *sorted,
				   struct po_distributed *out, struct po_arena *arena)
{
	size_t count = tracker->lane_count, *host_of_lane = malloc(count * sizeof(size_t));
	size_t *host_of_first = calloc(count, sizeof(size_t)), *samples = NULL;
	size_t collectives = collective_count(tracker->records, tracker->record_count);
	double *differences = NULL, *offsets = NULL;
	enum po_status status = host_of_lane && host_of_first ? PO_STATUS_OK : PO_STATUS_NOMEM;

	if (status == PO_STATUS_OK)
		status = find_hosts(sorted, count, host_of_lane, tracker->lanes, out, arena);
	if (status == PO_STATUS_OK && out->host_count > 1) {
		differences = malloc((out->host_count * collectives + 1) * sizeof(double));
		samples = calloc(out->host_count, sizeof(size_t));
		offsets = calloc(out->host_count, sizeof(double));
		status = differences && samples && offsets ? PO_STATUS_OK : PO_STATUS_NOMEM;
	}
	if (status != PO_STATUS_OK || out->host_count < 2)
		goto done;
	/* A host's lowest rank is its first in rank order (samples[] marks hosts seen). */
	for (size_t i = 0; i < count; i++) {
		size_t lane = (size_t)(sorted[i] - tracker->lanes), h = host_of_lane[lane];

		if (h && !samples[h])
			host_of_first[lane] = h;
		samples[h] = 1;
	}
	memset(samples, 0, out->host_count * sizeof(size_t));
	end_differences(tracker, host_of_first, (size_t)(sorted[0] - tracker->lanes), collectives,
			differences, samples);
	for (size_t h = 1; h < out->host_count; h++) {
		struct po_host_clock *clock = &out->hosts[h];
		double *mine = &differences[h * collectives];

		clock->samples = (int64_t)samples[h];
		if (!samples[h])
			continue;
		clock->offset_ns = po_stats_median(mine, samples[h]);
		offsets[h] = clock->offset_ns;
		for (size_t i = 0; i < samples[h]; i++)
			mine[i] = fabs(mine[i] - clock->offset_ns);
		clock->residual_ns = po_stats_median(mine, samples[h]);
		if (isnan(out->clock_residual_ns) || clock->residual_ns > out->clock_residual_ns)
			out->clock_residual_ns = clock->residual_ns;
	}
	for (size_t i = 0; i < tracker->record_count; i++) {
		struct rank_collective *record = &tracker->records[i];
		int64_t offset = llround(offsets[host_of_lane[record->lane]]);

		record->begin_ns = po_add_sat(record->begin_ns, -offset);
		if (record->end_ns >= 0)
			record->end_ns = po_add_sat(record->end_ns, -offset);
	}
done:
	free(host_of_lane);
	free(host_of_first);
	free(differences);
	free(samples);
	free(offsets);
	return status;
}

/* Matches the collectives across ranks, by (group, seq), into steps. */
static enum po_status match_steps(struct po_rank_tracker *tracker, const size_t *position,
				  const struct po_map *steady, const struct po_map *walls,
				  struct po_distributed *out, struct po_arena *arena)
{
	struct step_builder builder = {
	    .rank_count = out->rank_count, .position = position, .steady = steady, .walls = walls};
	struct rank_collective *records = tracker->records;
	enum po_status status = PO_STATUS_OK;
	size_t from = 0;

	while (from < tracker->record_count && status == PO_STATUS_OK) {
		size_t to = from + 1;

		while (to < tracker->record_count && records[to].group == records[from].group &&
		       records[to].seq == records[from].seq)
			to++;
		if (collective_complete(records, from, to, out->rank_count)) {
			out->collectives++;
			status = match_collective(&builder, records, from, to, out->ranks);
		} else {
			out->unmatched_collectives++;
		}
		from = to;
	}
	for (size_t s = 0; status == PO_STATUS_OK && s < builder.step_count; s++)
		builder.steps[s].last_rank = out->ranks[last_position(&builder, s)].rank;
	if (status == PO_STATUS_OK)
		status = rank_step_means(&builder, out);
	if (status == PO_STATUS_OK)
		status = emit_steps(&builder, arena, out);
	po_map_free(&builder.slots);
	free(builder.steps);
	free(builder.wait_ns);
	free(builder.arrival_ns);
	return status;
}

/* ---- what a partial summary keeps ---- */

static int compare_wall(const void *left, const void *right)
{
	const struct po_rank_wall *a = left, *b = right;

	if (a->rank != b->rank)
		return (a->rank > b->rank) - (a->rank < b->rank);
	return (a->step > b->step) - (a->step < b->step);
}

/*
 * The sampled steps' records (before the clocks are aligned) and steady wall times, in the
 * arena: step numbers that are multiples of the least power of two that keeps at most
 * PO_PARTIAL_STEPS of the lowest rank's steady steps.
 */
static enum po_status keep_samples(const struct po_rank_tracker *tracker,
				   struct rank_lane *const *sorted, const struct po_map *walls,
				   struct po_distributed *out, struct po_arena *arena)
{
	size_t count = tracker->lane_count, kept = 0, walls_kept = 0;
	int64_t stride = 1;

	while (out->ranks[0].steady_steps / stride > PO_PARTIAL_STEPS)
		stride *= 2;
	out->sample_stride = stride;
	for (size_t i = 0; i < tracker->record_count; i++) {
		const struct rank_collective *record = &tracker->records[i];

		kept += record->step >= 0 && record->step % stride == 0;
	}
	for (size_t r = 0; r < count; r++) {
		for (size_t e = 0; e < walls[r].capacity; e++)
			walls_kept +=
			    walls[r].slots[e].used && (int64_t)walls[r].slots[e].a % stride == 0;
	}
	out->records = po_arena_alloc(arena, (kept ? kept : 1) * sizeof(*out->records));
	out->walls = po_arena_alloc(arena, (walls_kept ? walls_kept : 1) * sizeof(*out->walls));
	if (!out->records || !out->walls)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < tracker->record_count; i++) {
		const struct rank_collective *record = &tracker->records[i];

		if (record->step < 0 || record->step % stride != 0)
			continue;
		out->records[out->record_count++] =
		    (struct po_rank_record){.rank = tracker->lanes[record->lane].rank,
					    .group = record->group,
					    .seq = record->seq,
					    .step = record->step,
					    .begin_ns = record->begin_ns,
					    .end_ns = record->end_ns};
	}
	for (size_t r = 0; r < count; r++) {
		for (size_t e = 0; e < walls[r].capacity; e++) {
			const struct po_map_entry *entry = &walls[r].slots[e];

			if (!entry->used || (int64_t)entry->a % stride != 0)
				continue;
			out->walls[out->wall_count++] =
			    (struct po_rank_wall){.rank = sorted[r]->rank,
						  .step = (int64_t)entry->a,
						  .wall_ns = (int64_t)entry->value - 1};
		}
	}
	po_sort(out->walls, out->wall_count, sizeof(*out->walls), compare_wall);
	return PO_STATUS_OK;
}

/*
 * The ranks below the job's size (the largest world size reported, or the highest rank
 * present + 1 where that is larger) that no lane holds: counted, the lowest listed. Ranks
 * are distinct and at least 0 (on_rank, merge_lanes).
 */
static void find_missing(struct rank_lane *const *sorted, size_t count, struct po_distributed *out)
{
	int64_t size = count ? (int64_t)sorted[count - 1]->rank + 1 : 0;
	size_t next = 0;

	if (out->world_size > size)
		size = out->world_size;
	out->missing_rank_count = size - (int64_t)count;
	out->missing_listed = 0;
	/* Each turn passes a present rank or lists a missing one: count + 64 turns at most. */
	for (int64_t rank = 0; rank < size && out->missing_listed < PO_MISSING_RANKS_LISTED &&
			       out->missing_rank_count > 0;
	     rank++) {
		while (next < count && sorted[next]->rank < rank)
			next++;
		if (next < count && sorted[next]->rank == rank)
			continue;
		out->missing_ranks[out->missing_listed++] = (int32_t)rank;
	}
}

/*
 * From the ranks' summaries (out->ranks, in rank order: sorted) on, what an analysis and
 * a merge share: the local ranks, the clocks, the matched steps and the heatmap.
 */
static enum po_status assemble(struct po_rank_tracker *tracker, struct rank_lane *const *sorted,
			       const size_t *position, const struct po_map *steady,
			       const struct po_map *walls, struct po_distributed *out,
			       struct po_arena *arena)
{
	enum po_status status;

	infer_local_ranks(sorted, out->ranks, tracker->lane_count);
	find_missing(sorted, tracker->lane_count, out);
	po_sort(tracker->records, tracker->record_count, sizeof(*tracker->records), compare_record);
	status = align_clocks(tracker, sorted, out, arena);
	if (status == PO_STATUS_OK)
		status = match_steps(tracker, position, steady, walls, out, arena);
	out->unmatched_collectives += tracker->unpaired_ends;
	out->unpaired_ends = tracker->unpaired_ends;
	return status;
}

/* The lanes in rank order and each lane's position in it; the largest world size. */
static enum po_status order_lanes(struct po_rank_tracker *tracker, struct rank_lane ***sorted,
				  size_t **position, struct po_distributed *out)
{
	size_t count = tracker->lane_count;

	*sorted = malloc(count * sizeof(**sorted));
	*position = malloc(count * sizeof(**position));
	if (!*sorted || !*position)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < count; i++)
		(*sorted)[i] = &tracker->lanes[i];
	qsort(*sorted, count, sizeof(**sorted), compare_lane_rank);
	for (size_t i = 0; i < count; i++) {
		(*position)[(*sorted)[i] - tracker->lanes] = i;
		if ((*sorted)[i]->world_size > out->world_size)
			out->world_size = (*sorted)[i]->world_size;
	}
	return PO_STATUS_OK;
}

static enum po_status distributed_new(size_t count, struct po_arena *arena,
				      struct po_distributed **out)
{
	*out = po_arena_alloc(arena, sizeof(**out));
	if (!*out)
		return PO_STATUS_NOMEM;
	**out = (struct po_distributed){
	    .world_size = -1,
	    .rank_count = count,
	    .lost_ns_per_step = NAN,
	    .shared_collective_ns_per_step = NAN,
	    .shared_collective_ns_per_collective = NAN,
	    .clock_residual_ns = NAN,
	    .step_stride = 1,
	    .sample_stride = 1,
	    .straggler = {.rank = -1, .lateness_ns_per_step = NAN, .jitter_ns = NAN}};
	(*out)->ranks = po_arena_alloc(arena, count * sizeof(*(*out)->ranks));
	return (*out)->ranks ? PO_STATUS_OK : PO_STATUS_NOMEM;
}

enum po_status rank_tracker_build(struct po_rank_tracker *tracker, struct po_analysis *analysis)
{
	size_t count = tracker->lane_count, *position = NULL;
	struct po_map steady = {0}; /* the lowest rank's steady step numbers */
	struct po_map *walls;	    /* per rank position: its steady steps' wall times */
	struct rank_lane **sorted = NULL;
	struct po_distributed *out;
	enum po_status status;

	if (!count)
		return PO_STATUS_OK;
	status = distributed_new(count, analysis->arena, &out);
	walls = calloc(count, sizeof(*walls));
	if (status == PO_STATUS_OK && !walls)
		status = PO_STATUS_NOMEM;
	if (status == PO_STATUS_OK)
		status = order_lanes(tracker, &sorted, &position, out);
	for (size_t i = 0; i < count && status == PO_STATUS_OK; i++)
		status =
		    summarize_loop(sorted[i], &out->ranks[i], i == 0 ? &steady : NULL, &walls[i]);
	if (status == PO_STATUS_OK) {
		po_sort(tracker->records, tracker->record_count, sizeof(*tracker->records),
			compare_record);
		status = keep_samples(tracker, sorted, walls, out, analysis->arena);
	}
	if (status == PO_STATUS_OK)
		status = assemble(tracker, sorted, position, &steady, walls, out, analysis->arena);
	po_map_free(&steady);
	for (size_t i = 0; walls && i < count; i++)
		po_map_free(&walls[i]);
	free(walls);
	free(sorted);
	free(position);
	if (status == PO_STATUS_OK) {
		analysis->distributed = out;
		status = po_distributed_warn_missing(analysis);
	}
	return status;
}

/* ---- the job's completeness ---- */

void po_distributed_missing_words(const struct po_distributed *d, char *text, size_t size)
{
	size_t used, shown = d->missing_listed < 8 ? d->missing_listed : 8;
	int written = snprintf(text, size, "%s ", d->missing_rank_count == 1 ? "rank" : "ranks");

	used = written > 0 ? (size_t)written : 0;
	for (size_t i = 0; i < shown && used < size; i++) {
		const char *separator = i == 0 ? "" : i + 1 < shown ? ", " : " and ";

		if ((int64_t)shown < d->missing_rank_count && i > 0)
			separator = ", ";
		written =
		    snprintf(text + used, size - used, "%s%d", separator, (int)d->missing_ranks[i]);
		used += written > 0 ? (size_t)written : 0;
	}
	if ((int64_t)shown < d->missing_rank_count && used < size)
		snprintf(text + used, size - used, " and %lld more",
			 (long long)(d->missing_rank_count - (int64_t)shown));
	used = strlen(text);
	if (used < size)
		snprintf(text + used, size - used, " missing (%zu of world size %lld in the data)",
			 d->rank_count,
			 (long long)(d->missing_rank_count + (int64_t)d->rank_count));
}

void po_distributed_missing_sentence(const struct po_distributed *d, char *text, size_t size)
{
	char missing[256];

	po_distributed_missing_words(d, missing, sizeof(missing));
	if (isnan(d->shared_collective_ns_per_collective))
		snprintf(text, size,
			 "No straggler can be ruled out: %s; no collective was matched across the "
			 "present ranks (%zu steps matched).",
			 missing, d->step_count);
	else
		snprintf(text, size,
			 "No straggler can be ruled out: %s; every present rank waits %.3f ms per "
			 "collective (%.3f ms per step) for a rank not in the data or the transfer "
			 "(%zu steps matched).",
			 missing, d->shared_collective_ns_per_collective / 1e6,
			 d->shared_collective_ns_per_step / 1e6, d->step_count);
}

enum po_status po_distributed_warn_missing(struct po_analysis *analysis)
{
	const struct po_distributed *d = analysis->distributed;
	char missing[256], text[512];

	if (!d || d->missing_rank_count <= 0)
		return PO_STATUS_OK;
	po_distributed_missing_words(d, missing, sizeof(missing));
	if (isnan(d->shared_collective_ns_per_collective))
		snprintf(text, sizeof(text),
			 "%s: no collective was matched across the present ranks; no straggler "
			 "can be ruled out",
			 missing);
	else
		snprintf(text, sizeof(text),
			 "%s: every present rank spends at least %.1f ms in each collective "
			 "(%.1f ms per step), waiting for ranks not in the data or for the "
			 "transfer; no straggler can be ruled out",
			 missing, d->shared_collective_ns_per_collective / 1e6,
			 d->shared_collective_ns_per_step / 1e6);
	return po_analysis_add_warning(analysis, "ranks-missing", text);
}

/* ---- a merge of partial summaries ---- */

/* The lane of each rank number, in a map: rank -> lane + 1. */
static int64_t merge_lane(const struct po_map *lanes, int32_t rank)
{
	const struct po_map_entry *entry = po_map_find(lanes, (uint32_t)rank, 0);

	return entry ? (int64_t)entry->value - 1 : -1;
}

/* The parts as lanes without models, their records and their walls by lane. */
static enum po_status merge_lanes(struct po_rank_tracker *tracker, struct po_map *by_rank,
				  const struct po_rank_part *parts, size_t part_count,
				  const struct po_rank_record *records, size_t record_count,
				  const struct po_rank_wall *walls, size_t wall_count,
				  struct po_map *lane_walls)
{
	tracker->lanes = calloc(part_count, sizeof(*tracker->lanes));
	tracker->records = malloc((record_count ? record_count : 1) * sizeof(*tracker->records));
	if (!tracker->lanes || !tracker->records)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < part_count; i++) {
		const struct po_rank_summary *summary = &parts[i].summary;
		struct po_map_entry *entry =
		    po_map_upsert(by_rank, (uint32_t)summary->rank, 0, NULL);

		if (!entry)
			return PO_STATUS_NOMEM;
		if (entry->value)
			return PO_STATUS_INPUT; /* a rank twice: the caller refuses it first */
		entry->value = i + 1;
		tracker->lanes[i] = (struct rank_lane){.rank = summary->rank,
						       .local_rank = summary->local_rank,
						       .world_size = summary->world_size,
						       .pid = summary->pid,
						       .recording = summary->recording,
						       .host = summary->host};
	}
	tracker->lane_count = part_count;
	for (size_t i = 0; i < record_count; i++) {
		int64_t lane = merge_lane(by_rank, records[i].rank);

		if (lane < 0) {
			tracker->unpaired_ends++; /* a rank the merge was not given */
			continue;
		}
		tracker->records[tracker->record_count++] =
		    (struct rank_collective){.lane = (uint32_t)lane,
					     .group = records[i].group,
					     .seq = records[i].seq,
					     .step = records[i].step,
					     .begin_ns = records[i].begin_ns,
					     .end_ns = records[i].end_ns};
	}
	for (size_t i = 0; i < wall_count; i++) {
		int64_t lane = merge_lane(by_rank, walls[i].rank);

		if (lane >= 0 && !wall_note(&lane_walls[lane], walls[i].step, walls[i].wall_ns))
			return PO_STATUS_NOMEM;
	}
	return PO_STATUS_OK;
}

enum po_status po_distributed_merge(const struct po_rank_part *parts, size_t part_count,
				    const struct po_rank_record *records, size_t record_count,
				    const struct po_rank_wall *walls, size_t wall_count,
				    int64_t unpaired_ends, int64_t stride, struct po_arena *arena,
				    struct po_distributed **result)
{
	struct po_rank_tracker tracker = {.primary_rank = -1, .unpaired_ends = unpaired_ends};
	struct po_map by_rank = {0}, steady = {0};
	struct po_map *lane_walls = calloc(part_count ? part_count : 1, sizeof(*lane_walls));
	struct po_map *walls_in_order = calloc(part_count ? part_count : 1, sizeof(*lane_walls));
	struct rank_lane **sorted = NULL;
	size_t *position = NULL;
	struct po_distributed *out = NULL;
	enum po_status status = lane_walls && walls_in_order ? PO_STATUS_OK : PO_STATUS_NOMEM;

	*result = NULL;
	if (status == PO_STATUS_OK && !part_count)
		status = PO_STATUS_INPUT;
	if (status == PO_STATUS_OK)
		status = distributed_new(part_count, arena, &out);
	if (status == PO_STATUS_OK)
		status = merge_lanes(&tracker, &by_rank, parts, part_count, records, record_count,
				     walls, wall_count, lane_walls);
	if (status == PO_STATUS_OK)
		status = order_lanes(&tracker, &sorted, &position, out);
	for (size_t i = 0; status == PO_STATUS_OK && i < part_count; i++) {
		size_t lane = (size_t)(sorted[i] - tracker.lanes);
		struct po_rank_summary *summary = &out->ranks[i];

		*summary = parts[lane].summary;
		summary->collectives = 0;
		summary->collective_ns_per_step = NAN;
		summary->wait_ns_per_step = NAN;
		summary->last_pct = NAN;
		walls_in_order[i] = lane_walls[lane]; /* moved: freed once, below */
		lane_walls[lane] = (struct po_map){0};
	}
	/* The lowest rank's steady steps: those of its walls. */
	for (size_t e = 0; status == PO_STATUS_OK && e < walls_in_order[0].capacity; e++) {
		if (walls_in_order[0].slots[e].used &&
		    !po_map_upsert(&steady, walls_in_order[0].slots[e].a, 0, NULL))
			status = PO_STATUS_NOMEM;
	}
	if (status == PO_STATUS_OK) {
		out->step_stride = stride;
		out->sample_stride = stride;
		status = assemble(&tracker, sorted, position, &steady, walls_in_order, out, arena);
	}
	for (size_t i = 0; lane_walls && walls_in_order && i < part_count; i++) {
		po_map_free(&lane_walls[i]);
		po_map_free(&walls_in_order[i]);
	}
	free(lane_walls);
	free(walls_in_order);
	po_map_free(&by_rank);
	po_map_free(&steady);
	free(tracker.lanes);
	free(tracker.records);
	free(sorted);
	free(position);
	if (status == PO_STATUS_OK)
		*result = out;
	return status;
}
