/*
 * whatif.h: the data-loader what-if model (docs/rules.md, "Predicted effect"). Given a
 * batch's service time in a worker, the CPU part of it, the main loop's own time per step,
 * the cores and a handoff overhead, it predicts the step time for any num_workers.
 */
#ifndef PO_DETECT_WHATIF_H
#define PO_DETECT_WHATIF_H

#include <stdbool.h>
#include <stdint.h>

#include "detect_internal.h"

struct det_whatif {
	double service_ns;  /* S: load + preprocess + collate wall time per batch */
	double cpu_ns;	    /* C: the CPU part of S */
	double main_ns;	    /* M: the main loop's own time per step (no data wait) */
	double main_cpu_ns; /* the CPU part of M; M when unknown */
	double handoff_ns;  /* measured cost of taking a ready batch; 0 when unknown */
	double cores;	    /* K: the cores other programs left; <= 0 when unknown */
	bool cpu_bound;	    /* C >= S - C: more workers than cores cannot help */
};

/* Predicted step time with workers processes (0: loading on the training thread). */
double det_whatif_step_ns(const struct det_whatif *model, int64_t workers);
/*
 * The smallest num_workers whose predicted step is within within_pct of the best over
 * 1..max_workers (capped by the cores for CPU-bound loading), raised until one batch per
 * worker takes at most (1 - headroom_pct) of the loop's own step.
 */
int64_t det_whatif_best_workers(const struct det_whatif *model, int64_t max_workers,
				double within_pct, double headroom_pct);

/*
 * A DataLoader's queue, batch by batch: batch i goes to worker i mod workers, which makes
 * its batches in turn; workers x prefetch batches are in flight, and each batch the loop
 * takes lets the next one be asked for (PyTorch's _try_put_index); the loop takes the
 * batches in order, each after its own time and the hand-off. What a mean cannot show:
 * a slow batch holds the loop up unless the queue is deep enough to cover it, and one
 * slow worker paces the loop whatever the others do.
 */
struct det_queue {
	const double *service_ns; /* weak: each batch's making time, in delivery order */
	size_t batch_count;
	double main_ns;	   /* the loop's own time per step */
	double handoff_ns; /* taking a ready batch */
};

/*
 * The mean step over the batches after the queue first filled (the first 2 x workers x
 * prefetch, at most a quarter of them); NaN without batches, workers or prefetch, or when
 * memory runs out.
 */
double det_queue_step_ns(const struct det_queue *queue, int64_t workers, int64_t prefetch);

#endif /* PO_DETECT_WHATIF_H */
