/* metrics.c: the shared figures of a step (metrics.h). */
#include <math.h>

#include "metrics.h"

int64_t po_metric_input_wait_ns(const int64_t category_ns[PO_CATEGORY_COUNT])
{
	return category_ns[PO_CAT_DATA_WAIT] + category_ns[PO_CAT_LOAD] +
	       category_ns[PO_CAT_PREPROCESS] + category_ns[PO_CAT_COLLATE];
}

bool po_metric_step_waits(const struct po_step *step, double warning_pct, bool with_handoff)
{
	int64_t input = po_metric_input_wait_ns(step->category_ns) +
			(with_handoff ? step->category_ns[PO_CAT_HANDOFF] : 0);

	return (double)input > warning_pct / 200.0 * (double)(step->end_ns - step->begin_ns);
}

int64_t po_metric_series_bytes(const struct po_step *step, enum po_growth_series series)
{
	switch (series) {
	case PO_GROWTH_HOST_ALLOCS:
		return step->host_live_bytes;
	case PO_GROWTH_RSS_ALL:
		return step->rss_bytes;
	case PO_GROWTH_RSS_MAIN:
		return step->main_rss_bytes;
	case PO_GROWTH_RSS_WORKERS:
		return step->rss_bytes >= 0 && step->main_rss_bytes >= 0
			   ? step->rss_bytes - step->main_rss_bytes
			   : -1;
	case PO_GROWTH_GPU_ALLOCS:
		return step->gpu_live_bytes;
	}
	return -1;
}

enum po_growth_series po_metric_host_series(const struct po_analysis *analysis)
{
	return analysis->memory.has_alloc_events ? PO_GROWTH_HOST_ALLOCS : PO_GROWTH_RSS_ALL;
}

int64_t po_metric_host_bytes(const struct po_analysis *analysis, const struct po_step *step)
{
	return po_metric_series_bytes(step, po_metric_host_series(analysis));
}

int64_t po_metric_live_workers(const struct po_analysis *analysis)
{
	return analysis->concurrent_workers > 0 ? analysis->concurrent_workers
						: (int64_t)analysis->worker_count;
}

size_t po_metric_startup_steps(const struct po_analysis *analysis)
{
	int64_t live = po_metric_live_workers(analysis);
	int64_t workers =
	    analysis->settings.num_workers >= 0 ? analysis->settings.num_workers : live;

	if (workers < live)
		workers = live;
	return workers > 1 ? (size_t)workers : 1;
}

void po_metric_steady_walk_init(struct po_metric_steady_walk *walk,
				const struct po_analysis *analysis)
{
	size_t first = analysis->step_first;

	*walk = (struct po_metric_steady_walk){.analysis = analysis,
					       .next = first,
					       .end = analysis->step_end,
					       .startup = po_metric_startup_steps(analysis),
					       .persistent =
						   analysis->settings.persistent_workers == 1};
	if (first >= walk->end || !first)
		return;
	/* The step before the range, and where it stands in its epoch (up to the start-up). */
	walk->previous_epoch = po_analysis_step(analysis, first - 1).epoch;
	while (walk->in_epoch < walk->startup && walk->in_epoch + 1 < first &&
	       po_analysis_step(analysis, first - 2 - walk->in_epoch).epoch == walk->previous_epoch)
		walk->in_epoch++;
}

bool po_metric_steady_walk_next(struct po_metric_steady_walk *walk, struct po_step *step,
				size_t *index, bool *steady)
{
	size_t i = walk->next;

	if (i >= walk->end)
		return false;
	*step = po_analysis_step(walk->analysis, i);
	/* The first step of the run, or of a new epoch, is its epoch's first. */
	walk->in_epoch = i && walk->previous_epoch == step->epoch ? walk->in_epoch + 1 : 0;
	walk->previous_epoch = step->epoch;
	*steady = !(step->flags & PO_STEP_LOSSY) &&
		  (walk->in_epoch >= walk->startup ||
		   (walk->persistent && i >= walk->analysis->first_epoch_steps));
	*index = i;
	walk->next = i + 1;
	return true;
}

double po_metric_self_cost_pct(const struct po_self_cost *cost, double mean_step_ns)
{
	if (!cost->known || isnan(cost->per_step_ns) || !(mean_step_ns > 0))
		return NAN;
	return 100.0 * cost->per_step_ns / mean_step_ns;
}
