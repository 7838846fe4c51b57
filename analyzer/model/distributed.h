/*
 * distributed.h: the ranks of a distributed job in the analysis result (result.h includes
 * it): each rank's own training loop summed up, and per step when each rank arrived at the
 * collectives that synchronise them. The model fills it (ranks.c); the straggler detector
 * (detect/straggler.c) fills its straggler; renderers only read it.
 */
#ifndef PO_DISTRIBUTED_H
#define PO_DISTRIBUTED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

/*
 * What makes the straggler late, from the category of its own breakdown that exceeds the
 * other ranks' most: X(NAME, json name)
 */
#define PO_STRAGGLER_CAUSES(X)                                                                     \
	X(NONE, "")                                                                                \
	X(INPUT, "input")	    /* data wait, loading, hand-off, host-to-device copy */        \
	X(COMPUTE, "compute")	    /* forward, backward, optimizer */                             \
	X(GPU, "gpu")		    /* waiting for its GPU */                                      \
	X(CHECKPOINT, "checkpoint") /* saving checkpoints */                                       \
	X(EVAL, "eval")		    /* evaluation */                                               \
	X(OTHER, "other")	    /* custom spans or time in no span */

enum po_straggler_cause {
#define PO_X(name, json) PO_STRAGGLER_CAUSE_##name,
	PO_STRAGGLER_CAUSES(PO_X)
#undef PO_X
	    PO_STRAGGLER_CAUSE_COUNT
};

const char *po_straggler_cause_name(enum po_straggler_cause cause);

/* One rank: its place in the job and its own training loop. */
/* The most columns of the ranks' step-time heatmap. */
#define PO_RANK_HEAT_BINS 200

struct po_rank_summary {
	int32_t rank;
	/*
	 * -1 when unknown. A launcher that sets none (torch.multiprocessing.spawn sets no
	 * LOCAL_RANK): the rank's place among the ranks of its host and recording, in rank
	 * order, with local_rank_inferred set.
	 */
	int32_t local_rank;
	bool local_rank_inferred;
	int32_t world_size; /* as this rank reported it; -1 */
	int32_t pid;	    /* the process that recorded the rank event, as its host knew it */
	const char *host;   /* weak: in the analysis arena; NULL when unknown */
	/*
	 * Its clock: the recording it was recorded in (0, or its index when the trace
	 * directory holds several); after a merge, one per recording of each partial summary.
	 */
	int32_t recording;
	int64_t steps; /* the steps of its training loop */
	/*
	 * Its steady steps: not lossy, past each epoch's first max(1, workers) steps (as the
	 * detectors' steady steps); the means below are over them.
	 */
	int64_t steady_steps;
	double mean_step_ns; /* NaN without steady steps */
	int64_t p50_step_ns; /* over its clean steps; -1 without */
	/* Its breakdown: mean time per steady step in each category (sums to mean_step_ns). */
	double category_mean_ns[PO_CATEGORY_COUNT];
	int64_t collectives; /* collectives it began and ended */
	/* Per matched step: from entering the step's collectives to their results, summed. */
	double collective_ns_per_step;
	/* Per matched step: of that, the time it waited beyond the rank that waited least. */
	double wait_ns_per_step;
	double last_pct; /* share of the matched steps in which it arrived last */
};

/*
 * A steady step of the lowest rank whose collectives every rank began and ended (matched
 * by group and sequence number); the per-step means above are over these.
 */
struct po_rank_step {
	int64_t step;	     /* the step number, the lowest rank's */
	int32_t last_rank;   /* arrived last: the rank that waited least in the collectives */
	int64_t lost_ns;     /* sum over its collectives of the longest less the shortest wait */
	int64_t collectives; /* collectives of the step */
};

/* What the straggler detector concludes (present false: "no straggler"). */
struct po_straggler {
	bool present;
	int32_t rank;
	bool chronic;		       /* last in at least straggler.chronic_pct of the steps */
	enum po_straggler_cause cause; /* NONE without a straggler */
	enum po_category cause_category;
	double cause_excess_ns;	 /* its cause category, per step, beyond the others' median */
	double lost_ns_per_step; /* the job's loss: the mean of po_rank_step.lost_ns */
	double others_wait_ns_per_step; /* the other ranks' mean wait for it, per step */
	double last_pct;		/* share of the matched steps in which it arrived last */
	/*
	 * The rank the most loss is owed to (the straggler when present, the candidate when
	 * not): its lateness per matched step is the other ranks' median wait in the step's
	 * collectives less its own. lateness_ns_per_step: its mean, what would go if it kept
	 * the others' pace; jitter_ns: the run's own spread of that lateness (its mean absolute
	 * deviation about its median, scaled to a normal sigma); NaN before the detector ran.
	 */
	double lateness_ns_per_step;
	double jitter_ns;
};

/*
 * A host's clock (the ranks of one host name and one recording) against the lowest rank's
 * host, estimated from the collectives' ends
 * (every rank leaves a collective within microseconds of the others): offset_ns is the
 * median of (this host's lowest rank's end - the reference rank's end) over the collectives
 * every rank completed, residual_ns the median distance of those differences from the
 * offset once it is applied. The reference host has offset 0 and residual NaN.
 */
struct po_host_clock {
	const char *host; /* weak: in the analysis arena; NULL when the ranks did not say */
	/*
	 * The recording its ranks were recorded in: 0, or its index when the trace directory
	 * holds several (one per host); a host of one name in two recordings is two clocks.
	 */
	int32_t recording;
	int64_t ranks;	 /* ranks on the host */
	int64_t samples; /* collectives the estimate used */
	double offset_ns;
	double residual_ns;
};

/*
 * A collective as one rank saw it (trace clock, before the hosts' clocks are aligned): what
 * a partial summary keeps of the sampled steps (profopt-analyze --partial) and a merge reads.
 */
struct po_rank_record {
	int32_t rank;
	int32_t group;
	int64_t seq;
	int64_t step; /* the rank's open step at the begin; -1 outside steps */
	int64_t begin_ns;
	int64_t end_ns; /* -1: never ended */
};

/* A rank's steady step and its wall time, for the sampled steps. */
struct po_rank_wall {
	int32_t rank;
	int64_t step;
	int64_t wall_ns;
};

/*
 * The sampled steps of a partial summary: step numbers that are multiples of step_stride,
 * the least power of two that keeps at most PO_PARTIAL_STEPS of the lowest rank's steady
 * steps, so that its size does not grow with the run. A merge samples every partial at
 * the largest stride among them (a multiple of every other).
 */
#define PO_PARTIAL_STEPS 1024

/* The missing ranks a result names; more are counted only. */
#define PO_MISSING_RANKS_LISTED 64

struct po_distributed {
	int32_t world_size;	       /* the largest the ranks reported; -1 */
	struct po_rank_summary *ranks; /* sorted by rank; in the analysis arena */
	size_t rank_count;
	struct po_rank_step *steps; /* matched steps, by step number; in the arena */
	size_t step_count;
	/*
	 * When each rank entered each matched step's first collective (trace clock), row-major:
	 * arrival_ns[step * rank_count + rank index]; in the arena.
	 */
	int64_t *arrival_ns;
	/*
	 * Each rank's wall time of each matched step (its own step of that number, steady), laid
	 * out as arrival_ns; -1 where the rank has no steady step of that number. In the arena.
	 */
	int64_t *step_ns;
	/* Each rank's wait in each matched step's collectives beyond the rank that waited least. */
	int64_t *waited_ns;
	/*
	 * The heatmap of the report: the matched steps in heat_bins runs of consecutive steps
	 * (at most PO_RANK_HEAT_BINS, each of step_count / heat_bins steps or one more), and
	 * each rank's mean own time per step over a run (step_ns less waited_ns: the all-reduce
	 * makes every rank's wall time the same, the time it works is its own):
	 * heat_ns[bin * rank_count + rank index], -1 where it has none; heat_low_ns and
	 * heat_high_ns the least and the most of them.
	 */
	int64_t *heat_ns;
	size_t heat_bins;
	int64_t heat_low_ns;
	int64_t heat_high_ns;
	int64_t collectives;	       /* collectives every rank began and ended */
	int64_t unmatched_collectives; /* seen on some ranks only, or never ended */
	double lost_ns_per_step;       /* mean of the matched steps' lost_ns; NaN without */
	/*
	 * The hosts in order of their lowest rank, the first the reference; every collective
	 * time of another host's ranks is moved by its offset before the ranks are compared.
	 * clock_residual_ns: the largest residual; NaN with one host.
	 */
	struct po_host_clock *hosts; /* in the arena */
	size_t host_count;
	double clock_residual_ns;
	struct po_straggler straggler; /* filled by the detectors */
	/*
	 * The job's completeness: the ranks of the job that are not in the data, against the
	 * world size the ranks reported (or the highest rank present + 1 where that is larger,
	 * or where no rank reported one). missing_rank_count of them, the lowest
	 * missing_listed in missing_ranks. With ranks missing, the present ranks' collectives
	 * also wait for ranks not in the data: no straggler can be ruled out.
	 */
	int64_t missing_rank_count;
	int32_t missing_ranks[PO_MISSING_RANKS_LISTED];
	size_t missing_listed;
	/*
	 * Per matched step and per collective: the least time any present rank spent in the
	 * collectives (the transfer, and the wait every present rank shares: for a rank not in
	 * the data where ranks are missing); NaN without matched steps.
	 */
	double shared_collective_ns_per_step;
	double shared_collective_ns_per_collective;
	/*
	 * The sampled steps' collectives and steady wall times (see PO_PARTIAL_STEPS), in the
	 * trace's clocks, for a partial summary; in the arena. step_stride is 1 for an analysis
	 * of a trace (every matched step above), the merge's stride after a merge.
	 */
	int64_t step_stride;
	int64_t sample_stride; /* the stride of records and walls */
	struct po_rank_record *records;
	size_t record_count;
	struct po_rank_wall *walls;
	size_t wall_count;
	int64_t unpaired_ends; /* collective ends with no begin */
};

/* A rank read back from a partial summary, for po_distributed_merge. */
struct po_rank_part {
	/* Its place, clock and own loop: rank .. category_mean_ns; the rest is recomputed. */
	struct po_rank_summary summary;
};

struct po_arena;

/*
 * The ranks of several partial summaries as one job: the same clocks, matching, steps and
 * heatmap as an analysis of their traces together, over the steps sampled at stride (every
 * record and wall given has step % stride == 0). Host names are compared by content.
 * The result and what it points to are in arena; the straggler is left to the detectors.
 */
enum po_status po_distributed_merge(const struct po_rank_part *parts, size_t part_count,
				    const struct po_rank_record *records, size_t record_count,
				    const struct po_rank_wall *walls, size_t wall_count,
				    int64_t unpaired_ends, int64_t stride, struct po_arena *arena,
				    struct po_distributed **out) PO_NODISCARD;

struct po_analysis;

/*
 * Where ranks are missing (po_distributed.missing_rank_count), a trace-quality warning
 * (code "ranks-missing") naming them and the wait the present ranks share; nothing else.
 */
enum po_status po_distributed_warn_missing(struct po_analysis *analysis) PO_NODISCARD;
/* "ranks 6 and 7 missing (6 of world size 8 in the data)", cut to size. */
void po_distributed_missing_words(const struct po_distributed *d, char *text, size_t size);
/*
 * The one sentence every output gives a job with ranks missing where no present rank is a
 * straggler: "No straggler can be ruled out: ranks 6 and 7 missing (...); every present rank
 * waits 12.981 ms per collective (129.810 ms per step) for a rank not in the data or the
 * transfer (200 steps matched).", or, with no collective matched, that none was.
 */
void po_distributed_missing_sentence(const struct po_distributed *d, char *text, size_t size);

#endif /* PO_DISTRIBUTED_H */
