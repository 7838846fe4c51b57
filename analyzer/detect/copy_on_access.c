/*
 * copy_on_access.c: worker-copy-on-access. Loader workers forked from the training process
 * share its pages until they write them; reading a Python object writes its reference
 * count, so workers that read a dataset held as Python objects (a list of str or dict) copy
 * every page they read (PyTorch issue 13246): each one's unique set grows toward the
 * dataset's size while its resident set, which counted the shared pages from the fork, stays
 * flat. The finding states what that costs: the private growth of the workers alive
 * together, per worker, and as a share of the machine's memory. Growth that the resident
 * sets show as well is memory the workers allocated (a cache, a leak): memory-growth's.
 */
#include <math.h>

#include "detect_internal.h"

/*
 * What the unique sets of a set of workers alive together did: their growth from the first
 * sample to the largest, summed; the part of it their resident sets did not grow by over
 * the same samples (pages that were resident and shared, now private); their proportional
 * sets at their peaks, summed.
 */
struct private_growth {
	int64_t workers;
	int64_t growth_bytes;
	int64_t unshared_bytes;
	int64_t rss_growth_bytes;
	int64_t largest_bytes; /* the largest growth of one worker */
	int64_t pss_bytes;
};

static bool sampled(const struct po_process *process)
{
	const struct po_memory_sets *sets = &process->sets;

	/* the analysed loop's workers: another rank's are its own rank's copies */
	return process->role == PO_ROLE_WORKER && !process->other_rank &&
	       sets->uss_first_bytes >= 0 && sets->uss_peak_bytes >= sets->uss_first_bytes;
}

static void add_worker(struct private_growth *sum, const struct po_process *process)
{
	const struct po_memory_sets *sets = &process->sets;
	int64_t growth = sets->uss_peak_bytes - sets->uss_first_bytes;
	int64_t rss_growth = sets->rss_at_uss_first_bytes >= 0 && sets->rss_at_uss_peak_bytes >= 0
				 ? sets->rss_at_uss_peak_bytes - sets->rss_at_uss_first_bytes
				 : 0;

	if (rss_growth < 0)
		rss_growth = 0; /* pages given back are not pages un-shared */
	sum->workers++;
	sum->growth_bytes += growth;
	sum->rss_growth_bytes += rss_growth;
	sum->unshared_bytes += growth > rss_growth ? growth - rss_growth : 0;
	if (growth > sum->largest_bytes)
		sum->largest_bytes = growth;
	if (sets->pss_peak_bytes > 0)
		sum->pss_bytes += sets->pss_peak_bytes;
}

/*
 * The workers alive when `at` started, its own growth included: non-persistent workers of
 * different epochs never hold their copies at once, so they never add up.
 */
static struct private_growth alive_with(const struct po_analysis *analysis,
					const struct po_process *at)
{
	struct private_growth sum = {0};

	for (size_t i = 0; i < analysis->process_count; i++) {
		const struct po_process *process = &analysis->processes[i];

		if (sampled(process) && process->first_ns <= at->first_ns &&
		    process->last_ns >= at->first_ns)
			add_worker(&sum, process);
	}
	return sum;
}

/* The set of workers alive together whose private growth adds up to the most. */
static struct private_growth largest_growth(const struct po_analysis *analysis)
{
	struct private_growth best = {0};

	for (size_t i = 0; i < analysis->process_count; i++) {
		struct private_growth sum;

		if (!sampled(&analysis->processes[i]))
			continue;
		sum = alive_with(analysis, &analysis->processes[i]);
		if (sum.growth_bytes > best.growth_bytes)
			best = sum;
	}
	return best;
}

/* The training process's proportional set at its peak; 0 when not sampled. */
static int64_t main_pss(const struct po_analysis *analysis)
{
	const struct po_process *main = det_main_process(analysis);

	return main && main->sets.pss_peak_bytes > 0 ? main->sets.pss_peak_bytes : 0;
}

static double machine_pct(const struct po_analysis *analysis, int64_t bytes)
{
	int64_t machine = analysis->memory.machine_bytes;

	return machine > 0 ? 100.0 * (double)bytes / (double)machine : NAN;
}

static enum po_severity severity_of(const struct det_ctx *ctx, double share_pct)
{
	if (isnan(share_pct) || share_pct >= ctx->rules->copy_on_access_warning_machine_pct)
		return share_pct >= ctx->rules->copy_on_access_critical_machine_pct
			   ? PO_SEVERITY_CRITICAL
			   : PO_SEVERITY_WARNING;
	return PO_SEVERITY_INFO;
}

static void add_evidence(struct det_ctx *ctx, struct po_finding *finding,
			 const struct private_growth *sum)
{
	const struct po_analysis *analysis = ctx->analysis;
	int64_t job_pss = sum->pss_bytes + main_pss(analysis);

	det_ev_int(ctx, finding, PO_EVIDENCE_PRIVATE_GROWTH_BYTES, sum->growth_bytes);
	det_ev_int(ctx, finding, PO_EVIDENCE_NUM_WORKERS, sum->workers);
	det_ev_number(ctx, finding, PO_EVIDENCE_PRIVATE_GROWTH_PER_WORKER_MIB,
		      (double)sum->growth_bytes / (double)sum->workers / DET_MIB);
	det_ev_number(ctx, finding, PO_EVIDENCE_LARGEST_WORKER_GROWTH_MIB,
		      (double)sum->largest_bytes / DET_MIB);
	det_ev_number(ctx, finding, PO_EVIDENCE_UNSHARED_PCT,
		      100.0 * (double)sum->unshared_bytes / (double)sum->growth_bytes);
	det_ev_number(ctx, finding, PO_EVIDENCE_WORKER_RSS_GROWTH_MIB,
		      (double)sum->rss_growth_bytes / DET_MIB);
	det_ev_number(ctx, finding, PO_EVIDENCE_MACHINE_MEMORY_MIB,
		      analysis->memory.machine_bytes > 0
			  ? (double)analysis->memory.machine_bytes / DET_MIB
			  : NAN);
	det_ev_number(ctx, finding, PO_EVIDENCE_MACHINE_PCT,
		      machine_pct(analysis, sum->growth_bytes));
	det_ev_number(ctx, finding, PO_EVIDENCE_JOB_PSS_MIB,
		      job_pss > 0 ? (double)job_pss / DET_MIB : NAN);
	det_ev_number(ctx, finding, PO_EVIDENCE_JOB_MACHINE_PCT,
		      job_pss > 0 ? machine_pct(analysis, job_pss) : NAN);
}

static void recommend(struct det_ctx *ctx, struct po_finding *finding,
		      const struct private_growth *sum)
{
	double total_mib = (double)sum->growth_bytes / DET_MIB;
	double each_mib = total_mib / (double)sum->workers;

	det_recommend(
	    ctx, finding, PO_KNOB_DATASET_STORAGE,
	    "hold the dataset in numpy or Arrow arrays, or in tensors, instead of Python objects "
	    "(a list of str, dicts, tuples): index into one array per field, or encode strings "
	    "as one byte array with offsets",
	    det_printf(ctx,
		       "reading a Python object writes its reference count, so each worker "
		       "copies every page of objects it reads from the training process: "
		       "%.0f MiB per worker, %.0f MiB in all",
		       each_mib, total_mib),
	    det_printf(ctx,
		       "about %.0f MiB less memory: an array's pages are read without being "
		       "written and stay shared; the step time does not change",
		       total_mib),
	    NAN, NAN);
	if (sum->workers < 2)
		return;
	det_recommend(
	    ctx, finding, PO_KNOB_NUM_WORKERS,
	    det_printf(ctx, "as a stopgap, fewer workers: num_workers=%lld",
		       (long long)sum->workers - 1),
	    "each worker holds its own copy of what it read of the dataset",
	    det_printf(ctx,
		       "about %.0f MiB less memory per worker removed; loading may slow down, "
		       "the copies remain",
		       each_mib),
	    NAN, NAN);
}

enum po_status det_copy_on_access(struct det_ctx *ctx)
{
	const struct po_rules *rules = ctx->rules;
	struct private_growth sum = largest_growth(ctx->analysis);
	struct po_finding *finding;
	double share_pct, unshared_pct;

	if (!sum.workers || !sum.growth_bytes ||
	    (double)sum.growth_bytes / (double)sum.workers <
		rules->copy_on_access_min_mib * DET_MIB)
		return PO_STATUS_OK;
	unshared_pct = 100.0 * (double)sum.unshared_bytes / (double)sum.growth_bytes;
	if (unshared_pct < rules->copy_on_access_unshared_pct)
		return PO_STATUS_OK;
	share_pct = machine_pct(ctx->analysis, sum.growth_bytes);
	finding =
	    det_finding_add(ctx, PO_FINDING_WORKER_COPY_ON_ACCESS, severity_of(ctx, share_pct),
			    det_clamp(unshared_pct / 100.0, 0.5, 0.95));
	if (!finding)
		return PO_STATUS_NOMEM;
	det_summary(ctx, finding,
		    "The %lld loader workers' private memory grew by %.0f MiB in all (%.0f MiB "
		    "each)%s while their resident sets grew by %.0f MiB: they copy the pages of "
		    "the dataset they read from the training process (copy-on-access: reading a "
		    "Python object writes its reference count); it stops at what each worker read "
		    "of the dataset: not a leak.",
		    (long long)sum.workers, (double)sum.growth_bytes / DET_MIB,
		    (double)sum.growth_bytes / (double)sum.workers / DET_MIB,
		    isnan(share_pct)
			? ","
			: det_printf(ctx, ", %.1f%% of the machine's memory,", share_pct),
		    (double)sum.rss_growth_bytes / DET_MIB);
	add_evidence(ctx, finding, &sum);
	recommend(ctx, finding, &sum);
	return PO_STATUS_OK;
}
