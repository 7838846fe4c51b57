/*
 * gpu_work.c: the GPU work of the steady steps (analysis->diagnosis.gpu_work) and the two findings
 * that read it: gpu-bound (the device is busy most of the step: what its time goes to and
 * what would shorten it) and launch-bound (the device idles because the training thread
 * launches short kernels more slowly than they run). Their what-ifs share one model of a
 * step (predicted_step_ns); docs/rules.md states it and its sources.
 */
#include <math.h>
#include <string.h>

#include "detect_internal.h"

#define DET_NS_PER_US 1e3

/* ---- the steady steps' GPU work ---- */

struct work_sums {
	double class_ns[PO_KERNEL_CLASS_COUNT];
	double class_count[PO_KERNEL_CLASS_COUNT];
	double matrix_ns[PO_PRECISION_COUNT];
	double small_ns, short_count, graph_count, busy_ns;
};

static void add_step(struct work_sums *sums, const struct po_step *step)
{
	for (int c = 0; c < PO_KERNEL_CLASS_COUNT; c++) {
		sums->class_ns[c] += (double)step->gpu_class_ns[c];
		sums->class_count[c] += step->gpu_class_count[c];
	}
	for (int p = 0; p < PO_PRECISION_COUNT; p++)
		sums->matrix_ns[p] += (double)step->gpu_matrix_ns[p];
	sums->small_ns += (double)step->gpu_small_kernel_ns;
	sums->short_count += step->gpu_short_kernels;
	sums->graph_count += step->gpu_graph_kernels;
	sums->busy_ns += (double)step->gpu_busy_ns;
}

/* Whether any device of the run has a known size (multiprocessors) for small kernels. */
static bool sizes_known(const struct po_analysis *analysis)
{
	for (size_t i = 0; i < analysis->gpu_count; i++)
		if (analysis->gpus[i].multiprocessors > 0)
			return true;
	return false;
}

static void fill_from_sums(struct det_ctx *ctx, const struct work_sums *sums)
{
	struct po_gpu_work *work = &ctx->diagnosis->gpu_work;
	const double *mean = ctx->category_mean_ns, steps = (double)ctx->clean_count;
	double kernel_ns = 0, kernels = 0, matrix_ns = 0;

	for (int c = 0; c < PO_KERNEL_CLASS_COUNT; c++) {
		work->class_ms[c] = sums->class_ns[c] / steps / DET_NS_PER_MS;
		work->class_count[c] = sums->class_count[c] / steps;
		work->work_ms += work->class_ms[c];
		if (c != PO_KERNEL_COPY && c != PO_KERNEL_MEMSET) {
			kernel_ns += sums->class_ns[c];
			kernels += sums->class_count[c];
		}
	}
	for (int p = 0; p < PO_PRECISION_COUNT; p++) {
		work->matrix_ms[p] = sums->matrix_ns[p] / steps / DET_NS_PER_MS;
		matrix_ns += sums->matrix_ns[p];
	}
	for (int p = 0; p < PO_PRECISION_COUNT; p++)
		work->matrix_pct[p] = matrix_ns > 0 ? 100.0 * sums->matrix_ns[p] / matrix_ns : 0;
	for (int c = 0; c < PO_KERNEL_CLASS_COUNT; c++)
		work->class_pct[c] =
		    work->work_ms > 0 ? 100.0 * work->class_ms[c] / work->work_ms : 0;
	work->kernel_ms = kernel_ns / steps / DET_NS_PER_MS;
	work->kernels = kernels / steps;
	work->small_kernel_pct =
	    sizes_known(ctx->analysis) && kernel_ns > 0 ? 100.0 * sums->small_ns / kernel_ns : NAN;
	work->short_kernel_pct = kernels > 0 ? 100.0 * sums->short_count / kernels : NAN;
	work->graph_kernel_pct = kernels > 0 ? 100.0 * sums->graph_count / kernels : NAN;
	work->mean_kernel_us = kernels > 0 ? kernel_ns / kernels / DET_NS_PER_US : NAN;
	work->busy_ms = sums->busy_ns / steps / DET_NS_PER_MS;
	work->host_ms = (ctx->mean_step_ns - mean[PO_CAT_GPU_SYNC]) / DET_NS_PER_MS;
	work->launch_host_ms =
	    (mean[PO_CAT_FORWARD] + mean[PO_CAT_BACKWARD] + mean[PO_CAT_OPTIMIZER]) / DET_NS_PER_MS;
	work->host_us_per_kernel =
	    work->kernels > 0 ? work->launch_host_ms * 1e3 / work->kernels : NAN;
	work->input_ms = (mean[PO_CAT_DATA_WAIT] + mean[PO_CAT_LOAD] + mean[PO_CAT_PREPROCESS] +
			  mean[PO_CAT_COLLATE] + mean[PO_CAT_HANDOFF]) /
			 DET_NS_PER_MS;
}

void det_fill_gpu_work(struct det_ctx *ctx)
{
	struct work_sums sums;

	memset(&sums, 0, sizeof(sums));

	ctx->diagnosis->gpu_work = (struct po_gpu_work){.small_kernel_pct = NAN,
							.short_kernel_pct = NAN,
							.graph_kernel_pct = NAN,
							.mean_kernel_us = NAN,
							.host_us_per_kernel = NAN};
	if (!ctx->clean_count || !ctx->analysis->gpu_count)
		return;
	for (size_t i = 0; i < ctx->clean_count; i++) {
		struct po_step step = det_clean_step(ctx, i);

		add_step(&sums, &step);
	}
	fill_from_sums(ctx, &sums);
	ctx->diagnosis->gpu_work.present = ctx->diagnosis->gpu_work.work_ms > 0;
}

/* ---- the step what-if ---- */

/*
 * A step is as long as the slower of its two sides: the training thread's own time (the
 * step less its waits for the device) and the device's busy time, plus the slack the two
 * leave between them (the device waiting for the host while the host waits for it). A
 * change shortens either side; the slack stays with the device side.
 */
static double predicted_step_ns(const struct det_ctx *ctx, double saved_host_ns,
				double saved_gpu_ns)
{
	const struct po_gpu_work *work = &ctx->diagnosis->gpu_work;
	double host = work->host_ms * DET_NS_PER_MS, device = work->busy_ms * DET_NS_PER_MS;
	double slack = fmax(0, ctx->mean_step_ns - fmax(host, device));

	return fmax(fmax(host - saved_host_ns, 0), fmax(device - saved_gpu_ns, 0) + slack);
}

/* Work summed over records, as busy (union) time: records that overlap count once. */
static double as_busy_ns(const struct det_ctx *ctx, double work_ms)
{
	const struct po_gpu_work *work = &ctx->diagnosis->gpu_work;

	return work->work_ms > 0 ? work_ms * DET_NS_PER_MS * fmin(1, work->busy_ms / work->work_ms)
				 : 0;
}

static void recommend_predicted(struct det_ctx *ctx, struct po_finding *finding, enum po_knob knob,
				const char *action, const char *why, double step_ns)
{
	double speedup = step_ns > 0 ? ctx->mean_step_ns / step_ns : NAN;

	det_recommend(ctx, finding, knob, action, why,
		      det_printf(ctx, "step %.2f ms -> %.2f ms", ctx->mean_step_ns / DET_NS_PER_MS,
				 step_ns / DET_NS_PER_MS),
		      step_ns / DET_NS_PER_MS, speedup);
}

/* ---- advice ---- */

/* Mixed precision: fp32 matrix work on tensor cores in bf16, tf32 work twice as fast. */
static void advise_precision(struct det_ctx *ctx, struct po_finding *finding)
{
	const struct po_rules *rules = ctx->rules;
	const struct po_gpu_work *work = &ctx->diagnosis->gpu_work;
	double fp32 = work->matrix_ms[PO_PRECISION_FP32], tf32 = work->matrix_ms[PO_PRECISION_TF32];
	double saved_bf16, saved_tf32;

	if (100.0 * (fp32 + tf32) / work->work_ms < rules->gpu_bound_low_precision_pct)
		return;
	saved_bf16 = as_busy_ns(ctx, fp32 * (1 - 1 / rules->gpu_bound_fp32_speedup) +
					 tf32 * (1 - 1 / rules->gpu_bound_tf32_speedup));
	/*
	 * autocast launches casts too (24% more kernels for a transformer on an H100), but
	 * from C++, not Python: the training thread's time stayed the same there (14.7 and
	 * 14.2 ms per step in forward, backward and optimizer), so the host side is kept
	 */
	recommend_predicted(
	    ctx, finding, PO_KNOB_PRECISION,
	    "train in mixed precision: torch.autocast(\"cuda\", dtype=torch.bfloat16) around the "
	    "forward pass and the loss (fp16 also needs torch.amp.GradScaler)",
	    det_printf(ctx,
		       "%.0f%% of the GPU's work is matrix kernels in fp32 or tf32 (%.2f ms per "
		       "step), which tensor cores run %.3gx and %.3gx faster in bf16",
		       100.0 * (fp32 + tf32) / work->work_ms, fp32 + tf32,
		       rules->gpu_bound_fp32_speedup, rules->gpu_bound_tf32_speedup),
	    predicted_step_ns(ctx, 0, saved_bf16));
	if (100.0 * fp32 / work->work_ms < rules->gpu_bound_low_precision_pct)
		return;
	saved_tf32 = as_busy_ns(ctx, fp32 * (1 - 1 / rules->gpu_bound_fp32_to_tf32_speedup));
	recommend_predicted(
	    ctx, finding, PO_KNOB_TF32,
	    "let float32 matrix products use TF32 on tensor cores, a smaller change than mixed "
	    "precision: torch.backends.cuda.matmul.allow_tf32 = True (or "
	    "torch.set_float32_matmul_precision(\"high\"))",
	    det_printf(ctx,
		       "%.2f ms per step of fp32 matrix kernels run on CUDA cores, without tensor "
		       "cores; in TF32 they run about %.3gx faster",
		       fp32, rules->gpu_bound_fp32_to_tf32_speedup),
	    predicted_step_ns(ctx, 0, saved_tf32));
}

/* channels_last: no conversions between NCHW and NHWC around each convolution. */
static void advise_layout(struct det_ctx *ctx, struct po_finding *finding)
{
	const struct po_gpu_work *work = &ctx->diagnosis->gpu_work;
	double layout_ms = work->class_ms[PO_KERNEL_LAYOUT];
	double layout_kernels = work->class_count[PO_KERNEL_LAYOUT];
	double share = 100.0 * layout_ms / work->work_ms;
	double launches = work->kernels > 0 ? 100.0 * layout_kernels / work->kernels : 0;
	double host_us = isnan(work->host_us_per_kernel) ? 0 : work->host_us_per_kernel;

	if (work->class_count[PO_KERNEL_CONVOLUTION] <= 0 ||
	    (share < ctx->rules->gpu_bound_layout_pct &&
	     launches < ctx->rules->gpu_bound_layout_pct))
		return;
	recommend_predicted(
	    ctx, finding, PO_KNOB_CHANNELS_LAST,
	    "use the channels_last memory format: model.to(memory_format=torch.channels_last) "
	    "and the same for the input batch",
	    det_printf(ctx,
		       "%.0f layout conversions per step (%.0f%% of the kernels, %.2f ms of GPU "
		       "time) turn NCHW tensors into the NHWC the convolution kernels use and back",
		       layout_kernels, launches, layout_ms),
	    predicted_step_ns(ctx,
			      layout_kernels * host_us * DET_NS_PER_US *
				  ctx->rules->gpu_bound_layout_host_pct / 100,
			      as_busy_ns(ctx, layout_ms)));
}

/*
 * The largest power of two, up to the rule's maximum, by which the batch can grow and still
 * fit the device's memory: each step then needs that many times its own memory. 0 when the
 * memory is not known or not even twice fits.
 */
static int batch_factor(const struct det_ctx *ctx, int64_t *step_bytes, int64_t *headroom_bytes)
{
	int factor = 0;

	for (size_t i = 0; i < ctx->analysis->gpu_count; i++) {
		const struct po_gpu_memory *memory = &ctx->analysis->gpus[i].memory;
		int fits = 1;

		if (memory->step_bytes <= 0 || memory->headroom_bytes < 0)
			continue;
		while (2 * fits <= ctx->rules->batch_max_factor &&
		       (double)(2 * fits - 1) * (double)memory->step_bytes <=
			   (double)memory->headroom_bytes)
			fits *= 2;
		if (!factor || fits < factor) {
			factor = fits;
			*step_bytes = memory->step_bytes;
			*headroom_bytes = memory->headroom_bytes;
		}
	}
	return factor >= 2 ? factor : 0;
}

/*
 * A batch factor times larger: the launches stay as many, the input work grows with the
 * batch, small kernels (under-filling the device) take as long, the rest factor times as
 * long. Per sample, the step is that over factor.
 */
static double batch_step_ns(const struct det_ctx *ctx, int factor)
{
	const struct po_gpu_work *work = &ctx->diagnosis->gpu_work;
	double host = work->host_ms * DET_NS_PER_MS, device = work->busy_ms * DET_NS_PER_MS;
	double slack = fmax(0, ctx->mean_step_ns - fmax(host, device));
	double input = work->input_ms * DET_NS_PER_MS;
	double small = isnan(work->small_kernel_pct) ? 0 : device * work->small_kernel_pct / 100;

	return fmax(host + (factor - 1) * input, small + factor * (device - small) + slack);
}

static void advise_batch(struct det_ctx *ctx, struct po_finding *finding, const char *why)
{
	int64_t step_bytes = 0, headroom_bytes = 0;
	int factor = batch_factor(ctx, &step_bytes, &headroom_bytes);
	double per_sample_ns, gain;

	if (!factor)
		return;
	per_sample_ns = batch_step_ns(ctx, factor) / factor;
	gain = ctx->mean_step_ns / per_sample_ns;
	if (100 * (gain - 1) < ctx->rules->batch_min_gain_pct)
		return;
	det_recommend(
	    ctx, finding, PO_KNOB_BATCH_SIZE,
	    det_printf(ctx, "use a %dx larger batch (and scale the learning rate with it)", factor),
	    det_printf(ctx,
		       "%s; a step needs %.0f MiB beyond what stays between steps and the GPU has "
		       "%.0f MiB to spare",
		       why, (double)step_bytes / DET_MIB, (double)headroom_bytes / DET_MIB),
	    det_printf(ctx,
		       "%.3gx the samples per second: the time of today's batch %.2f ms -> "
		       "%.2f ms",
		       gain, ctx->mean_step_ns / DET_NS_PER_MS, per_sample_ns / DET_NS_PER_MS),
	    per_sample_ns / DET_NS_PER_MS, gain);
}

/* ---- gpu-bound ---- */

/* The largest class of the GPU's work, and the share of matrix work in each precision. */
static enum po_kernel_class largest_class(const struct po_gpu_work *work)
{
	enum po_kernel_class largest = PO_KERNEL_OTHER;

	for (int c = 0; c < PO_KERNEL_CLASS_COUNT; c++)
		if (work->class_ms[c] > work->class_ms[largest])
			largest = (enum po_kernel_class)c;
	return largest;
}

static enum po_precision main_precision(const struct po_gpu_work *work)
{
	enum po_precision main = PO_PRECISION_UNKNOWN;

	for (int p = 0; p < PO_PRECISION_COUNT; p++)
		if (work->matrix_ms[p] > work->matrix_ms[main])
			main = (enum po_precision)p;
	return main;
}

static double matrix_ms(const struct po_gpu_work *work)
{
	return work->class_ms[PO_KERNEL_MATMUL] + work->class_ms[PO_KERNEL_CONVOLUTION] +
	       work->class_ms[PO_KERNEL_ATTENTION];
}

static void add_work_evidence(struct det_ctx *ctx, struct po_finding *finding)
{
	const struct po_gpu_work *work = &ctx->diagnosis->gpu_work;

	det_ev_int(ctx, finding, PO_EVIDENCE_STEPS, (int64_t)ctx->clean_count);
	det_ev_number(ctx, finding, PO_EVIDENCE_STEP_MS, ctx->mean_step_ns / DET_NS_PER_MS);
	det_ev_number(ctx, finding, PO_EVIDENCE_GPU_BUSY_PCT, ctx->diagnosis->steady.gpu_busy_pct);
	det_ev_number(ctx, finding, PO_EVIDENCE_GPU_WORK_MS, work->work_ms);
	det_ev_number(ctx, finding, PO_EVIDENCE_KERNELS_PER_STEP, work->kernels);
	det_ev_number(ctx, finding, PO_EVIDENCE_MEAN_KERNEL_US, work->mean_kernel_us);
	det_ev_text(ctx, finding, PO_EVIDENCE_LARGEST_CLASS,
		    po_kernel_class_name(largest_class(work)));
	det_ev_number(ctx, finding, PO_EVIDENCE_LARGEST_CLASS_PCT,
		      100.0 * work->class_ms[largest_class(work)] / work->work_ms);
	det_ev_number(ctx, finding, PO_EVIDENCE_MATRIX_PCT,
		      100.0 * matrix_ms(work) / work->work_ms);
	if (matrix_ms(work) > 0)
		det_ev_text(ctx, finding, PO_EVIDENCE_MATRIX_PRECISION,
			    po_precision_name(main_precision(work)));
	det_ev_number(
	    ctx, finding, PO_EVIDENCE_LOW_PRECISION_MATRIX_PCT,
	    100.0 * (work->matrix_ms[PO_PRECISION_FP32] + work->matrix_ms[PO_PRECISION_TF32]) /
		work->work_ms);
	det_ev_number(ctx, finding, PO_EVIDENCE_LAYOUT_PCT,
		      100.0 * work->class_ms[PO_KERNEL_LAYOUT] / work->work_ms);
	if (!isnan(work->small_kernel_pct))
		det_ev_number(ctx, finding, PO_EVIDENCE_SMALL_KERNEL_PCT, work->small_kernel_pct);
}

enum po_status det_gpu_bound(struct det_ctx *ctx)
{
	const struct po_gpu_work *work = &ctx->diagnosis->gpu_work;
	double busy = ctx->diagnosis->steady.gpu_busy_pct;
	enum po_kernel_class largest;
	struct po_finding *finding;

	if (!work->present || isnan(busy) || busy < ctx->rules->verdict_gpu_bound_pct)
		return PO_STATUS_OK;
	largest = largest_class(work);
	finding = det_finding_add(ctx, PO_FINDING_GPU_BOUND, PO_SEVERITY_INFO, 0.9);
	if (!finding)
		return PO_STATUS_NOMEM;
	det_summary(
	    ctx, finding,
	    "The GPU is busy %.1f%% of each steady step (%.2f ms of %.2f ms): %.0f%% of its "
	    "work is %s%s%s, in %.0f kernels per step of %.1f us on average.",
	    busy, work->busy_ms, ctx->mean_step_ns / DET_NS_PER_MS,
	    100.0 * work->class_ms[largest] / work->work_ms, po_kernel_class_name(largest),
	    po_kernel_class_is_matrix(largest) && main_precision(work) != PO_PRECISION_UNKNOWN
		? " in "
		: "",
	    po_kernel_class_is_matrix(largest) && main_precision(work) != PO_PRECISION_UNKNOWN
		? po_precision_name(main_precision(work))
		: "",
	    work->kernels, work->mean_kernel_us);
	add_work_evidence(ctx, finding);
	advise_precision(ctx, finding);
	advise_layout(ctx, finding);
	if (!isnan(work->small_kernel_pct) &&
	    work->small_kernel_pct >= ctx->rules->gpu_bound_small_kernel_pct)
		advise_batch(ctx, finding,
			     det_printf(ctx,
					"%.0f%% of the kernel time is in kernels of fewer blocks "
					"than the GPU has multiprocessors: they leave it part idle",
					work->small_kernel_pct));
	if (finding->recommendation_count)
		finding->severity = PO_SEVERITY_WARNING;
	return PO_STATUS_OK;
}

/* ---- launch-bound ---- */

static void advise_graphs(struct det_ctx *ctx, struct po_finding *finding)
{
	const double *mean = ctx->category_mean_ns;
	double graphed = mean[PO_CAT_FORWARD] + mean[PO_CAT_BACKWARD];
	double saved = graphed * (1 - ctx->rules->launch_bound_graph_residual_pct / 100);

	recommend_predicted(
	    ctx, finding, PO_KNOB_CUDA_GRAPHS,
	    "replay the forward and backward passes as CUDA graphs: torch.compile(model, "
	    "mode=\"reduce-overhead\"), or torch.cuda.make_graphed_callables for static shapes",
	    det_printf(
		ctx,
		"a graph launches all its kernels at once: forward and backward take %.2f ms "
		"of the training thread per step, of which graphs leave about %.0f%%",
		graphed / DET_NS_PER_MS, ctx->rules->launch_bound_graph_residual_pct),
	    predicted_step_ns(ctx, saved, 0));
}

enum po_status det_launch_bound(struct det_ctx *ctx)
{
	const struct po_rules *rules = ctx->rules;
	const struct po_gpu_work *work = &ctx->diagnosis->gpu_work;
	double busy = ctx->diagnosis->steady.gpu_busy_pct;
	double host_pct = 100.0 * work->launch_host_ms * DET_NS_PER_MS / ctx->mean_step_ns;
	struct po_finding *finding;

	/* kernels mostly replayed from CUDA graphs: the host's time goes elsewhere */
	if (!work->present || isnan(busy) || busy >= rules->verdict_host_gpu_pct ||
	    host_pct < rules->launch_bound_host_pct ||
	    work->kernels < rules->launch_bound_min_kernels ||
	    !(work->host_us_per_kernel >= rules->launch_bound_ratio * work->mean_kernel_us) ||
	    work->graph_kernel_pct >= 50)
		return PO_STATUS_OK;
	finding = det_finding_add(ctx, PO_FINDING_LAUNCH_BOUND,
				  busy < rules->verdict_host_gpu_pct / 2 ? PO_SEVERITY_CRITICAL
									 : PO_SEVERITY_WARNING,
				  0.8);
	if (!finding)
		return PO_STATUS_NOMEM;
	det_summary(
	    ctx, finding,
	    "The training thread launches %.0f kernels per step and spends %.1f us per "
	    "kernel launching them (forward, backward and optimizer: %.0f%% of the step), "
	    "while a kernel runs %.1f us on average: the GPU is busy only %.1f%% of the step, "
	    "waiting for launches.",
	    work->kernels, work->host_us_per_kernel, host_pct, work->mean_kernel_us, busy);
	add_work_evidence(ctx, finding);
	det_ev_number(ctx, finding, PO_EVIDENCE_HOST_US_PER_KERNEL, work->host_us_per_kernel);
	det_ev_number(ctx, finding, PO_EVIDENCE_LAUNCH_HOST_PCT, host_pct);
	advise_graphs(ctx, finding);
	advise_layout(ctx, finding);
	advise_batch(ctx, finding,
		     "as many launches move a larger batch: the kernels grow, their number does "
		     "not");
	return PO_STATUS_OK;
}
