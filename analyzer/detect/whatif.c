/*
 * whatif.c: the data-loader what-if model. With n workers the producer delivers
 * min(n / S, (K - u_main) / C) batches per second; charging the main loop's CPU per step
 * instead of its share gives the CPU limit as (C + M_cpu) / K seconds per step. The step
 * cannot be shorter than the main loop's own time M, and the handoff is added on top.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "whatif.h"

double det_whatif_step_ns(const struct det_whatif *model, int64_t workers)
{
	double step_ns = model->main_ns;

	if (workers <= 0)
		return model->main_ns + model->service_ns;
	if (model->service_ns / (double)workers > step_ns)
		step_ns = model->service_ns / (double)workers;
	if (model->cores > 0) {
		double cpu_limit_ns = (model->cpu_ns + model->main_cpu_ns) / model->cores;

		if (cpu_limit_ns > step_ns)
			step_ns = cpu_limit_ns;
	}
	return step_ns + model->handoff_ns;
}

/*
 * The loader keeps ahead of the loop with headroom when one batch per worker takes at most
 * (1 - headroom) of the loop's own step: jitter in loading then does not stall the loop.
 */
static bool has_headroom(const struct det_whatif *model, int64_t workers, double headroom_pct)
{
	return model->service_ns / (double)workers <= model->main_ns * (1.0 - headroom_pct / 100.0);
}

int64_t det_whatif_best_workers(const struct det_whatif *model, int64_t max_workers,
				double within_pct, double headroom_pct)
{
	double best_ns = INFINITY;

	if (model->cpu_bound && model->cores > 0 && (double)max_workers > ceil(model->cores))
		max_workers = (int64_t)ceil(model->cores);
	if (max_workers < 1)
		max_workers = 1;
	for (int64_t n = 1; n <= max_workers; n++) {
		double step_ns = det_whatif_step_ns(model, n);

		if (step_ns < best_ns)
			best_ns = step_ns;
	}
	for (int64_t n = 1; n <= max_workers; n++) {
		if (det_whatif_step_ns(model, n) > best_ns * (1.0 + within_pct / 100.0))
			continue;
		/* Add workers, without changing the prediction, until the loader has headroom. */
		while (n < max_workers && !model->cpu_bound &&
		       !has_headroom(model, n, headroom_pct))
			n++;
		return n;
	}
	return max_workers;
}

double det_queue_step_ns(const struct det_queue *queue, int64_t workers, int64_t prefetch)
{
	size_t depth = (size_t)(workers * prefetch), skip;
	double *taken_ns, *free_ns, done_ns = 0, sum_ns = 0;

	if (workers <= 0 || prefetch <= 0 || queue->batch_count < 2)
		return NAN;
	skip = 2 * depth < queue->batch_count / 4 ? 2 * depth : queue->batch_count / 4;
	taken_ns = malloc(queue->batch_count * sizeof(*taken_ns));
	free_ns = calloc((size_t)workers, sizeof(*free_ns));
	if (!taken_ns || !free_ns) {
		free(taken_ns);
		free(free_ns);
		return NAN;
	}
	for (size_t i = 0; i < queue->batch_count; i++) {
		size_t worker = i % (size_t)workers;
		double asked_ns = i < depth ? 0 : taken_ns[i - depth];
		double ready_ns = fmax(asked_ns, free_ns[worker]) + queue->service_ns[i];

		free_ns[worker] = ready_ns;
		taken_ns[i] = fmax(ready_ns, done_ns);
		done_ns = taken_ns[i] + queue->handoff_ns + queue->main_ns;
		if (i > skip)
			sum_ns += taken_ns[i] - taken_ns[i - 1];
	}
	free(taken_ns);
	free(free_ns);
	return sum_ns / (double)(queue->batch_count - 1 - skip);
}
