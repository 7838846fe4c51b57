/* text.c: cleaning of trace-provided text, number formatting and display names. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_priv.h"
#include "common/text.h"

void po_report_clean(const char *text, char *out, size_t out_size, size_t max_chars)
{
	static const char replacement[] = "\xef\xbf\xbd";
	static const char ellipsis[] = "\xe2\x80\xa6";
	const unsigned char *cursor = (const unsigned char *)(text ? text : "");
	size_t avail = strlen((const char *)cursor);
	size_t used = 0, chars = 0;

	if (out_size < sizeof(ellipsis) + 1) { /* no room for any character and the ellipsis */
		if (out_size)
			out[0] = '\0';
		return;
	}
	while (avail > 0) {
		uint32_t code_point = 0;
		size_t len = po_text_decode(cursor, avail, &code_point);
		const char *bytes = len ? (const char *)cursor : replacement;
		size_t byte_count = len ? len : 3;

		cursor += len ? len : 1;
		avail -= len ? len : 1;
		if (len && !po_text_is_shown(code_point))
			continue; /* controls and noncharacters: not shown */
		if (chars == max_chars || used + byte_count + sizeof(ellipsis) > out_size) {
			memcpy(out + used, ellipsis, sizeof(ellipsis) - 1);
			used += sizeof(ellipsis) - 1;
			break;
		}
		memcpy(out + used, bytes, byte_count);
		used += byte_count;
		chars++;
	}
	out[used] = '\0';
}

void po_report_fmt_ms(double ns, char *out, size_t out_size)
{
	double abs_ns = fabs(ns);

	if (ns < 0 || isnan(ns))
		snprintf(out, out_size, "n/a");
	else if (abs_ns >= 10e9)
		snprintf(out, out_size, "%.1f s", ns / 1e9);
	else if (abs_ns >= 1e9)
		snprintf(out, out_size, "%.2f s", ns / 1e9);
	else if (abs_ns >= 100e6)
		snprintf(out, out_size, "%.0f ms", ns / 1e6);
	else if (abs_ns >= 1e6)
		snprintf(out, out_size, "%.1f ms", ns / 1e6);
	else if (abs_ns >= 1e3)
		snprintf(out, out_size, "%.0f \xc2\xb5s", ns / 1e3);
	else
		snprintf(out, out_size, "%.0f ns", ns);
}

void po_report_fmt_ns(int64_t ns, char *out, size_t out_size)
{
	po_report_fmt_ms((double)ns, out, out_size);
}

void po_report_fmt_bytes(int64_t bytes, char *out, size_t out_size)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double value = (double)bytes;
	size_t unit = 0;

	if (bytes < 0) {
		snprintf(out, out_size, "n/a");
		return;
	}
	while (value >= 1024 && unit + 1 < sizeof(units) / sizeof(units[0])) {
		value /= 1024;
		unit++;
	}
	snprintf(out, out_size, unit == 0 ? "%.0f %s" : "%.3g %s", value, units[unit]);
}

void po_report_fmt_pct(double share, char *out, size_t out_size)
{
	if (share < 0 || isnan(share))
		snprintf(out, out_size, "n/a");
	else
		snprintf(out, out_size, "%.1f%%", share * 100);
}

bool po_report_self_cost_text(const struct po_analysis *analysis, char *out, size_t out_size)
{
	const struct po_self_cost *cost = &analysis->self_cost;
	double share_pct = analysis->diagnosis.self_cost_pct;
	char share[48] = "", recorder[48] = "";

	out[0] = '\0';
	if (!cost->known || isnan(cost->per_step_ns))
		return false;
	if (!isnan(share_pct))
		snprintf(share, sizeof(share), " (%.1f%% of the mean step)", share_pct);
	if (!isnan(cost->recorder_per_step_ns))
		snprintf(recorder, sizeof(recorder), "; recorder %.3f ms",
			 cost->recorder_per_step_ns / 1e6);
	snprintf(out, out_size, "%.3f ms per step%s: processes %.3f ms%s", cost->per_step_ns / 1e6,
		 share,
		 isnan(cost->processes_per_step_ns) ? 0.0 : cost->processes_per_step_ns / 1e6,
		 recorder);
	return true;
}

static const struct {
	const char *key;
	const char *title;
} category_names[PO_CATEGORY_COUNT] = {
#define PO_X(name, json) [PO_CAT_##name] = {json, NULL},
    PO_CATEGORIES(PO_X)
#undef PO_X
};

static const char *const category_titles[PO_CATEGORY_COUNT] = {
    [PO_CAT_LOAD] = "Load",
    [PO_CAT_PREPROCESS] = "Preprocess",
    [PO_CAT_COLLATE] = "Collate",
    [PO_CAT_GPU_SYNC] = "GPU sync",
    [PO_CAT_H2D_COPY] = "Host-to-device copy",
    [PO_CAT_OPTIMIZER] = "Optimizer",
    [PO_CAT_BACKWARD] = "Backward",
    [PO_CAT_FORWARD] = "Forward",
    [PO_CAT_CHECKPOINT] = "Checkpoint",
    [PO_CAT_EVAL] = "Evaluation",
    [PO_CAT_CUSTOM] = "Custom",
    [PO_CAT_GC] = "Garbage collection",
    [PO_CAT_DATA_WAIT] = "Data wait",
    [PO_CAT_HANDOFF] = "Batch hand-off",
    [PO_CAT_OTHER] = "Other",
};

const char *po_report_category_key(enum po_category category)
{
	return (unsigned)category < PO_CATEGORY_COUNT ? category_names[category].key : "?";
}

const char *po_report_category_title(enum po_category category)
{
	return (unsigned)category < PO_CATEGORY_COUNT ? category_titles[category] : "?";
}

const char *po_report_stage_title(enum po_stage stage)
{
	return po_report_category_title(po_category_of_stage(stage));
}

static const char *const finding_keys[PO_FINDING_ID_COUNT] = {
#define PO_X(name, json) [PO_FINDING_##name] = json,
    PO_FINDING_IDS(PO_X)
#undef PO_X
};

static const char *const finding_titles[PO_FINDING_ID_COUNT] = {
    [PO_FINDING_INPUT_BOUND] = "The training loop waits for input data",
    [PO_FINDING_GPU_IDLE] = "The GPU sits idle",
    [PO_FINDING_HOST_MEMORY_GROWTH] = "Host memory grows step over step",
    [PO_FINDING_GPU_MEMORY_GROWTH] = "GPU memory grows step over step",
    [PO_FINDING_UNFREED_ALLOCATIONS] = "Allocations are never freed",
    [PO_FINDING_WORKER_COPY_ON_ACCESS] = "The loader workers copy the dataset they read",
    [PO_FINDING_STEP_OUTLIERS] = "Some steps are much slower than the rest",
    [PO_FINDING_LEVEL_SHIFT] = "The step time moved to a new level during the run",
    [PO_FINDING_TRACE_DATA_LOSS] = "The trace lost data",
    [PO_FINDING_CPU_CONTENTION] = "The training loop waits for CPU held by the loader workers",
    [PO_FINDING_LOADER_HANDOFF] = "Receiving ready batches from the workers costs the loop time",
    [PO_FINDING_WORKER_RESTART] = "The data-loader workers start again at every epoch",
    [PO_FINDING_GPU_BOUND] = "The GPU is busy most of each step",
    [PO_FINDING_LAUNCH_BOUND] = "The GPU waits for the training thread to launch its kernels",
};

const char *po_report_finding_key(enum po_finding_id id)
{
	return (unsigned)id < PO_FINDING_ID_COUNT ? finding_keys[id] : "?";
}

const char *po_report_finding_title(enum po_finding_id id)
{
	if ((unsigned)id >= PO_FINDING_ID_COUNT)
		return "Finding";
	return finding_titles[id] ? finding_titles[id] : finding_keys[id];
}

const char *po_report_severity_key(enum po_severity severity)
{
	static const char *const keys[PO_SEVERITY_COUNT] = {
#define PO_X(name, json) [PO_SEVERITY_##name] = json,
	    PO_SEVERITIES(PO_X)
#undef PO_X
	};

	return (unsigned)severity < PO_SEVERITY_COUNT ? keys[severity] : "?";
}

static const struct {
	const char *key;
	const char *title;
	const char *sentence;
} verdicts[PO_VERDICT_COUNT] = {
    [PO_VERDICT_INPUT_BOUND] = {"input-bound", "Input-bound",
				"The training loop spends its time waiting for batches: "
				"the data pipeline limits throughput, not the GPU."},
    [PO_VERDICT_HOST_BOUND] = {"host-bound", "Host-bound",
			       "Host-side work in the training loop (copies, "
			       "synchronization, Python) limits throughput."},
    [PO_VERDICT_GPU_BOUND] = {"gpu-bound", "GPU-bound",
			      "The GPU is busy most of each step: faster kernels or a "
			      "larger GPU would raise throughput."},
    [PO_VERDICT_BALANCED] = {"balanced", "Balanced", "No single stage dominates the step time."},
    [PO_VERDICT_UNKNOWN] = {"unknown", "Undetermined",
			    "The trace does not hold enough clean steps to name a bottleneck."},
};

const char *po_report_kernel_class_title(enum po_kernel_class cls)
{
	static const char *const titles[PO_KERNEL_CLASS_COUNT] = {
	    [PO_KERNEL_MATMUL] = "Matrix multiplication",
	    [PO_KERNEL_CONVOLUTION] = "Convolution",
	    [PO_KERNEL_ATTENTION] = "Attention",
	    [PO_KERNEL_NORMALIZATION] = "Normalization",
	    [PO_KERNEL_ELEMENTWISE] = "Elementwise",
	    [PO_KERNEL_REDUCTION] = "Reduction",
	    [PO_KERNEL_LAYOUT] = "Layout conversion",
	    [PO_KERNEL_OTHER] = "Other kernels",
	    [PO_KERNEL_COPY] = "Copies",
	    [PO_KERNEL_MEMSET] = "Memsets",
	};

	return (unsigned)cls < PO_KERNEL_CLASS_COUNT ? titles[cls] : "?";
}

/* The JSON spelling of an enum value, from its X-macro table; "unknown" out of range. */
#define PO_KEY_FN(fn, type, table_macro, count)                                                    \
	const char *fn(type value)                                                                 \
	{                                                                                          \
		static const char *const keys[] = {table_macro(PO_KEY_X)};                         \
		_Static_assert(sizeof(keys) / sizeof(keys[0]) == (count),                          \
			       #table_macro " and its enum differ");                               \
		return (unsigned)value < (unsigned)(count) ? keys[value] : "unknown";              \
	}
#define PO_KEY_X(name, json) json,
PO_KEY_FN(po_report_precision_key, enum po_precision, PO_PRECISIONS, PO_PRECISION_COUNT)
PO_KEY_FN(po_report_run_ending_key, enum po_run_ending, PO_RUN_ENDINGS, PO_RUN_ENDING_COUNT)
#undef PO_KEY_X

const char *po_report_verdict_key(enum po_verdict verdict)
{
	return (unsigned)verdict < PO_VERDICT_COUNT ? verdicts[verdict].key : "unknown";
}

const char *po_report_verdict_title(enum po_verdict verdict)
{
	return (unsigned)verdict < PO_VERDICT_COUNT ? verdicts[verdict].title : "Undetermined";
}

const char *po_report_verdict_sentence(enum po_verdict verdict)
{
	return (unsigned)verdict < PO_VERDICT_COUNT ? verdicts[verdict].sentence
						    : verdicts[PO_VERDICT_UNKNOWN].sentence;
}

const char *po_report_gpu_kind_title(enum po_gpu_kind kind)
{
	static const char *const titles[PO_GPU_KIND_COUNT] = {
	    [PO_GPU_KERNEL] = "Kernel",	      [PO_GPU_MEMCPY_H2D] = "Copy H2D",
	    [PO_GPU_MEMCPY_D2H] = "Copy D2H", [PO_GPU_MEMCPY_D2D] = "Copy D2D",
	    [PO_GPU_MEMSET] = "Memset",
	};

	return (unsigned)kind < PO_GPU_KIND_COUNT ? titles[kind] : "GPU";
}

void po_report_detail_reasons(uint32_t reasons, char *out, size_t out_size)
{
	static const struct {
		uint32_t flag;
		const char *text;
	} names[] = {
	    {PO_DETAIL_SLOWEST, "slowest"},	{PO_DETAIL_MEDIAN, "median"},
	    {PO_DETAIL_STALL, "stall"},		{PO_DETAIL_NEIGHBOR, "neighbor of a slow step"},
	    {PO_DETAIL_REQUESTED, "requested"},
	};
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(reasons & names[i].flag) || used >= out_size)
			continue;
		used += (size_t)snprintf(out + used, out_size - used, "%s%s", used ? ", " : "",
					 names[i].text);
	}
}

const struct po_finding *po_report_find(const struct po_analysis *analysis, enum po_finding_id id)
{
	for (size_t i = 0; i < analysis->diagnosis.finding_count; i++) {
		if (analysis->diagnosis.findings[i].id == id)
			return &analysis->diagnosis.findings[i];
	}
	return NULL;
}

void po_report_fmt_evidence(const struct po_evidence *evidence, char *out, size_t out_size)
{
	switch (evidence->type) {
	case PO_EVIDENCE_NUMBER:
		snprintf(out, out_size, "%.4g", evidence->number);
		break;
	case PO_EVIDENCE_INTEGER:
		snprintf(out, out_size, "%lld", (long long)evidence->integer);
		break;
	default:
		po_report_clean(evidence->text, out, out_size, PO_REPORT_LABEL_CHARS);
		break;
	}
}

double po_report_steady_share(double pct)
{
	return isnan(pct) ? -1 : pct / 100.0;
}

void po_report_population(const struct po_analysis *analysis, enum po_report_population which,
			  char *out, size_t out_size)
{
	const struct po_step_stats *stats = &analysis->step_stats;
	long long count = which == PO_REPORT_STEADY ? (long long)analysis->diagnosis.steady.count
						    : (long long)stats->clean_count;
	const char *kind = which == PO_REPORT_STEADY	       ? "steady "
			   : stats->clean_count < stats->count ? "clean "
							       : "";

	if (snprintf(out, out_size, "of %lld %sstep%s", count, kind, count == 1 ? "" : "s") < 0)
		out[0] = '\0';
}
