/* html_data.c: the report's measured sections: charts with the tables behind them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "report_file.h"

enum po_status po_html_fill_data(struct po_html *html, struct po_error *err) PO_NODISCARD;

static enum po_status embed_named(struct po_html *html, xmlNodePtr parent, const char *file_name,
				  struct po_error *err)
{
	const struct po_chart *chart = po_html_chart(html, file_name);

	return chart ? po_html_embed_chart(html, parent, chart, err) : PO_STATUS_OK;
}

static void category_table(struct po_html *html, xmlNodePtr parent)
{
	static const char *const headers[] = {"Category", "Mean per step", "Share"};
	const struct po_step_stats *stats = &html->analysis->step_stats;
	xmlNodePtr body = po_html_table(html, parent, "data", headers, 3, PO_HTML_NUMERIC_TAIL);

	for (int rank = 0; rank < PO_CATEGORY_COUNT; rank++) {
		enum po_category cat = po_report_category_order[rank];
		char mean[32], share[16];
		const char *cells[3] = {po_report_category_title(cat), mean, share};
		xmlNodePtr row;

		if (!(stats->category_mean_ns[cat] > 0))
			continue;
		po_report_fmt_ms(stats->category_mean_ns[cat], mean, sizeof(mean));
		po_report_fmt_pct(stats->mean_ns > 0 ? stats->category_mean_ns[cat] / stats->mean_ns
						     : -1,
				  share, sizeof(share));
		row = po_html_row(html, body, cells, 3, PO_HTML_NUMERIC_TAIL);
		po_html_swatch(html, row->children, po_report_category_color(cat));
	}
}

static const char *role_key(enum po_role role)
{
	static const char *const keys[PO_ROLE_COUNT] = {
#define PO_X(name, json) [PO_ROLE_##name] = json,
	    PO_ROLES(PO_X)
#undef PO_X
	};

	return (unsigned)role < PO_ROLE_COUNT ? keys[role] : "?";
}

static void label_row(struct po_html *html, xmlNodePtr body, const char *role, const char *stage,
		      const char *label, int64_t count, int64_t total_ns)
{
	char count_text[24], total[32], mean[32];
	const char *cells[6] = {role, stage, label, count_text, total, mean};

	snprintf(count_text, sizeof(count_text), "%lld", (long long)count);
	po_report_fmt_ns(total_ns, total, sizeof(total));
	po_report_fmt_ms(count > 0 ? (double)total_ns / count : -1, mean, sizeof(mean));
	po_html_row(html, body, cells, 6, 0x38);
}

/* The labels that take the most time; the long tail folds into one row. */
static void label_table(struct po_html *html, xmlNodePtr parent)
{
	static const char *const headers[] = {"Role", "Stage", "Label", "Count", "Total", "Mean"};
	const struct po_analysis *analysis = html->analysis;
	int64_t other_count = 0, other_ns = 0;
	xmlNodePtr body;

	if (analysis->label_stat_count == 0)
		return;
	po_html_el(html, parent, "h3", NULL, "Where the time goes, by stage label");
	body = po_html_table(html, parent, "data labels", headers, 6, 0x38);
	for (size_t i = 0; i < analysis->label_stat_count; i++) {
		const struct po_label_stat *stat = &analysis->label_stats[i];

		if (i >= PO_REPORT_TABLE_ROWS) {
			other_count += stat->count;
			other_ns += stat->total_ns;
			continue;
		}
		label_row(html, body, role_key(stat->role), po_report_stage_title(stat->stage),
			  stat->label ? stat->label : "(no label)", stat->count, stat->total_ns);
	}
	if (analysis->label_stat_count > PO_REPORT_TABLE_ROWS) {
		char label[64];

		snprintf(label, sizeof(label), "other labels (%zu)",
			 analysis->label_stat_count - PO_REPORT_TABLE_ROWS);
		label_row(html, body, "", "", label, other_count, other_ns);
	}
}

static enum po_status fill_breakdown(struct po_html *html, struct po_error *err)
{
	xmlNodePtr parent = po_html_find(html, "breakdown");
	enum po_status status;

	if (!parent)
		return PO_STATUS_OK;
	status = embed_named(html, parent, "breakdown.svg", err);
	if (status != PO_STATUS_OK)
		return status;
	if (html->analysis->step_stats.mean_ns > 0)
		category_table(html, parent);
	label_table(html, parent);
	return PO_STATUS_OK;
}

static enum po_status fill_timelines(struct po_html *html, struct po_error *err)
{
	xmlNodePtr parent = po_html_find(html, "timelines");

	if (!parent)
		return PO_STATUS_OK;
	if (html->analysis->detail_count == 0)
		po_html_el(html, parent, "p", "empty", "No step timeline was kept for this trace.");
	for (size_t i = 0; i < html->charts->count; i++) {
		const struct po_chart *chart = &html->charts->charts[i];
		enum po_status status;

		if (!chart->detail)
			continue;
		po_html_el(html, parent, "h3", NULL, chart->title);
		if (chart->detail->truncated)
			po_html_el(html, parent, "p", "note",
				   "More spans happened in this step than were kept; some are not "
				   "drawn.");
		status = po_html_embed_chart(html, parent, chart, err);
		if (status != PO_STATUS_OK)
			return status;
	}
	return PO_STATUS_OK;
}

static enum po_status fill_latency(struct po_html *html, struct po_error *err)
{
	static const char *const headers[] = {"Steps", "Mean", "Min", "p50",
					      "p90",   "p95",  "p99", "Max"};
	const struct po_step_stats *stats = &html->analysis->step_stats;
	xmlNodePtr parent = po_html_find(html, "latency");
	int64_t values[7] = {
	    -1,		  stats->min_ns, stats->p50_ns, stats->p90_ns, stats->p95_ns, stats->p99_ns,
	    stats->max_ns};
	char text[8][32];
	const char *cells[8];
	enum po_status status;

	if (!parent)
		return PO_STATUS_OK;
	status = embed_named(html, parent, "histogram.svg", err);
	if (status != PO_STATUS_OK)
		return status;
	if (stats->clean_count == 0)
		return PO_STATUS_OK;
	snprintf(text[0], sizeof(text[0]), "%lld of %lld", (long long)stats->clean_count,
		 (long long)stats->count);
	po_report_fmt_ms(stats->mean_ns, text[1], sizeof(text[1]));
	for (int i = 0; i < 8; i++) {
		if (i >= 2)
			po_report_fmt_ns(values[i - 1], text[i], sizeof(text[i]));
		cells[i] = text[i];
	}
	po_html_row(html, po_html_table(html, parent, "data", headers, 8, PO_HTML_NUMERIC_TAIL),
		    cells, 8, PO_HTML_NUMERIC_TAIL);
	return PO_STATUS_OK;
}

static void gpu_table(struct po_html *html, xmlNodePtr parent)
{
	static const char *const headers[] = {
	    "Device", "Busy", "Idle", "Busy over the window", "Gaps", "Main cause of idle gaps"};
	xmlNodePtr body = po_html_table(html, parent, "data", headers, 6, 0x1e);

	for (size_t i = 0; i < html->analysis->gpu_count; i++) {
		const struct po_gpu_device *gpu = &html->analysis->gpus[i];
		char text[5][48];
		const char *cells[6] = {text[0], text[1], text[2], text[3], text[4], "none"};
		int top = -1;

		for (int cat = 0; cat < PO_CATEGORY_COUNT; cat++) {
			if (gpu->gap_ns_by_cause[cat] > 0 &&
			    (top < 0 || gpu->gap_ns_by_cause[cat] > gpu->gap_ns_by_cause[top]))
				top = cat;
		}
		if (top >= 0)
			cells[5] = po_report_category_title(top);
		snprintf(text[0], sizeof(text[0]), "GPU %d", gpu->device);
		po_report_fmt_ns(gpu->busy_ns, text[1], sizeof(text[1]));
		po_report_fmt_ns(gpu->idle_ns, text[2], sizeof(text[2]));
		po_report_fmt_pct(isnan(gpu->window_busy_pct) ? -1 : gpu->window_busy_pct / 100,
				  text[3], sizeof(text[3]));
		snprintf(text[4], sizeof(text[4]), "%lld",
			 (long long)gpu->gap_count + gpu->gaps_not_kept);
		po_html_row(html, body, cells, 6, 0x1e);
	}
}

/* Whether the trace says what a device is or how its memory was used. */
static bool devices_described(const struct po_analysis *analysis)
{
	for (size_t i = 0; i < analysis->gpu_count; i++)
		if (analysis->gpus[i].name || analysis->gpus[i].memory_bytes > 0 ||
		    analysis->gpus[i].memory.peak_allocated_bytes > 0)
			return true;
	return false;
}

/* What each device is and what the program used of its memory. */
static void device_table(struct po_html *html, xmlNodePtr parent)
{
	static const char *const headers[] = {"Device",		 "Name",	"Memory",
					      "Multiprocessors", "Peak in use", "Memory to spare"};
	xmlNodePtr body;

	po_html_el(html, parent, "h3", NULL, "Devices");
	body = po_html_table(html, parent, "data", headers, 6, 0x3c);
	for (size_t i = 0; i < html->analysis->gpu_count; i++) {
		const struct po_gpu_device *gpu = &html->analysis->gpus[i];
		char text[5][48], name[PO_REPORT_TEXT_MAX];
		const char *cells[6] = {text[0], name, text[1], text[2], text[3], text[4]};

		snprintf(text[0], sizeof(text[0]), "GPU %d", gpu->device);
		po_report_clean(gpu->name ? gpu->name : "unknown", name, sizeof(name), 60);
		po_report_fmt_bytes(gpu->memory_bytes, text[1], sizeof(text[1]));
		if (gpu->multiprocessors > 0)
			snprintf(text[2], sizeof(text[2]), "%d", gpu->multiprocessors);
		else
			snprintf(text[2], sizeof(text[2]), "unknown");
		po_report_fmt_bytes(gpu->memory.peak_allocated_bytes, text[3], sizeof(text[3]));
		po_report_fmt_bytes(gpu->memory.headroom_bytes, text[4], sizeof(text[4]));
		po_html_row(html, body, cells, 6, 0x3c);
	}
}

/* The steady steps' GPU work by class, and how the kernels are launched. */
static void work_table(struct po_html *html, xmlNodePtr parent)
{
	static const char *const headers[] = {"Class of work", "Time per step", "Share",
					      "Count per step"};
	const struct po_gpu_work *work = &html->analysis->diagnosis.gpu_work;
	xmlNodePtr body;
	char line[512], precisions[256] = "";
	size_t used = 0;

	po_html_el(html, parent, "h3", NULL, "What the GPU works on (steady steps)");
	body = po_html_table(html, parent, "data", headers, 4, 0xe);
	for (int c = 0; c < PO_KERNEL_CLASS_COUNT; c++) {
		char text[3][32];
		const char *cells[4] = {po_report_kernel_class_title(c), text[0], text[1], text[2]};

		if (work->class_ms[c] <= 0)
			continue;
		po_report_fmt_ms(work->class_ms[c] * 1e6, text[0], sizeof(text[0]));
		po_report_fmt_pct(work->class_pct[c] / 100, text[1], sizeof(text[1]));
		snprintf(text[2], sizeof(text[2]), "%.1f", work->class_count[c]);
		po_html_row(html, body, cells, 4, 0xe);
	}
	for (int p = 0; p < PO_PRECISION_COUNT && used < sizeof(precisions); p++)
		if (work->matrix_pct[p] >= 0.5) /* what rounds to 0% is left out */
			used += (size_t)snprintf(precisions + used, sizeof(precisions) - used,
						 "%s%s %.0f%%", used ? ", " : "",
						 po_report_precision_key(p), work->matrix_pct[p]);
	snprintf(line, sizeof(line),
		 "%.0f kernels per step, %.1f us each on average, %.0f%% shorter than 10 us; the "
		 "training thread spends %.1f us per kernel in forward, backward and the "
		 "optimizer.%s%s",
		 work->kernels, work->mean_kernel_us, work->short_kernel_pct,
		 work->host_us_per_kernel, used ? " Matrix work by precision: " : "", precisions);
	po_html_el(html, parent, "p", "note", line);
}

/* The longest kernels, by their names for people. */
static void kernels_table(struct po_html *html, xmlNodePtr parent)
{
	static const char *const headers[] = {"Kernel", "Class", "Precision", "Count",
					      "Total",	"Mean",	 "Grid"};
	const struct po_analysis *analysis = html->analysis;
	xmlNodePtr body;

	if (!analysis->kernel_count)
		return;
	po_html_el(html, parent, "h3", NULL, "Longest kernels");
	body = po_html_table(html, parent, "data labels", headers, 7, 0x78);
	for (size_t i = 0; i < analysis->kernel_count && i < PO_REPORT_TABLE_ROWS; i++) {
		const struct po_gpu_kernel *kernel = &analysis->kernels[i];
		char name[PO_REPORT_TEXT_MAX], text[4][32];
		const char *cells[7] = {name,
					po_report_kernel_class_title(kernel->cls),
					po_kernel_class_is_matrix(kernel->cls)
					    ? po_report_precision_key(kernel->precision)
					    : "",
					text[0],
					text[1],
					text[2],
					text[3]};

		po_report_clean(kernel->short_name, name, sizeof(name), PO_REPORT_LABEL_CHARS);
		snprintf(text[0], sizeof(text[0]), "%lld", (long long)kernel->count);
		po_report_fmt_ns(kernel->total_ns, text[1], sizeof(text[1]));
		po_report_fmt_ns(kernel->mean_ns, text[2], sizeof(text[2]));
		if (kernel->grid_blocks > 0)
			snprintf(text[3], sizeof(text[3]), "%lld x %lld",
				 (long long)kernel->grid_blocks, (long long)kernel->block_threads);
		else
			snprintf(text[3], sizeof(text[3]), "unknown");
		po_html_row(html, body, cells, 7, 0x78);
	}
}

static enum po_status fill_gpu(struct po_html *html, struct po_error *err)
{
	xmlNodePtr parent = po_html_find(html, "gpu");
	enum po_status status;

	if (!parent)
		return PO_STATUS_OK;
	status = embed_named(html, parent, "gpu.svg", err);
	if (status != PO_STATUS_OK || html->analysis->gpu_count == 0)
		return status;
	gpu_table(html, parent);
	if (devices_described(html->analysis))
		device_table(html, parent);
	if (html->analysis->diagnosis.gpu_work.present)
		work_table(html, parent);
	kernels_table(html, parent);
	return status;
}

static void memory_sites(struct po_html *html, xmlNodePtr parent)
{
	static const char *const headers[] = {"Site",	     "PID",	   "Where",
					      "Allocations", "Still live", "Live bytes"};
	xmlNodePtr body;

	if (html->analysis->mem_site_count == 0)
		return;
	po_html_el(html, parent, "h3", NULL, "Allocation sites with the most live memory");
	body = po_html_table(html, parent, "data labels", headers, 6, 0x3a);
	for (size_t i = 0; i < html->analysis->mem_site_count && i < PO_REPORT_TABLE_ROWS; i++) {
		const struct po_mem_site *site = &html->analysis->mem_sites[i];
		char name[PO_REPORT_TEXT_MAX], pid[16], where[32], allocs[24], live[24], bytes[24];
		const char *cells[6] = {name, pid, where, allocs, live, bytes};

		if (site->label)
			po_report_clean(site->label, name, sizeof(name), PO_REPORT_LABEL_CHARS);
		else
			snprintf(name, sizeof(name), "ip 0x%llx", (unsigned long long)site->ip);
		snprintf(pid, sizeof(pid), "%d", site->pid);
		if (site->device >= 0)
			snprintf(where, sizeof(where), "GPU %d", site->device);
		else
			snprintf(where, sizeof(where), "host");
		snprintf(allocs, sizeof(allocs), "%lld", (long long)site->alloc_count);
		snprintf(live, sizeof(live), "%lld", (long long)site->live_count);
		po_report_fmt_bytes(site->live_bytes, bytes, sizeof(bytes));
		po_html_row(html, body, cells, 6, 0x3a);
	}
}

static enum po_status fill_memory(struct po_html *html, struct po_error *err)
{
	static const char *const headers[] = {"Measure", "Peak"};
	const struct po_memory *memory = &html->analysis->memory;
	xmlNodePtr parent = po_html_find(html, "memory");
	xmlNodePtr body;
	char text[3][32];
	enum po_status status;

	if (!parent)
		return PO_STATUS_OK;
	status = embed_named(html, parent, "memory.svg", err);
	if (status != PO_STATUS_OK)
		return status;
	body = po_html_table(html, parent, "kv", headers, 2, PO_HTML_NUMERIC_TAIL);
	po_report_fmt_bytes(memory->host_peak_bytes, text[0], sizeof(text[0]));
	po_report_fmt_bytes(memory->rss_peak_bytes, text[1], sizeof(text[1]));
	po_report_fmt_bytes(memory->gpu_peak_bytes, text[2], sizeof(text[2]));
	po_html_row(html, body, (const char *[]){"Live host memory", text[0]}, 2,
		    PO_HTML_NUMERIC_TAIL);
	po_html_row(html, body, (const char *[]){"Resident set size (all processes)", text[1]}, 2,
		    PO_HTML_NUMERIC_TAIL);
	po_html_row(html, body, (const char *[]){"Live GPU memory", text[2]}, 2,
		    PO_HTML_NUMERIC_TAIL);
	memory_sites(html, parent);
	return PO_STATUS_OK;
}

static void worker_table(struct po_html *html, xmlNodePtr parent)
{
	static const char *const headers[] = {
	    "Worker",		"PID", "Batches", "Busy", "Load per batch", "Preprocess per batch",
	    "Collate per batch"};
	static const enum po_stage stages[3] = {PO_STAGE_LOAD, PO_STAGE_PREPROCESS,
						PO_STAGE_COLLATE};
	xmlNodePtr body = po_html_table(html, parent, "data", headers, 7, PO_HTML_NUMERIC_TAIL);

	for (size_t i = 0; i < html->analysis->worker_count; i++) {
		const struct po_worker *worker = &html->analysis->workers[i];
		int64_t life = worker->last_ns - worker->first_ns;
		char text[7][32];
		const char *cells[7] = {text[0], text[1], text[2], text[3],
					text[4], text[5], text[6]};

		snprintf(text[0], sizeof(text[0]), "%lld", (long long)worker->worker_id);
		snprintf(text[1], sizeof(text[1]), "%d", worker->pid);
		snprintf(text[2], sizeof(text[2]), "%lld", (long long)worker->batches);
		po_report_fmt_pct(life > 0 ? (double)worker->busy_ns / life : -1, text[3],
				  sizeof(text[3]));
		for (int s = 0; s < 3; s++)
			po_report_fmt_ms(worker->batches > 0
					     ? (double)worker->stage_ns[stages[s]] / worker->batches
					     : -1,
					 text[4 + s], sizeof(text[4 + s]));
		po_html_row(html, body, cells, 7, PO_HTML_NUMERIC_TAIL);
	}
}

static enum po_status fill_workers(struct po_html *html, struct po_error *err)
{
	xmlNodePtr parent = po_html_find(html, "workers");
	enum po_status status;

	if (!parent)
		return PO_STATUS_OK;
	status = embed_named(html, parent, "workers.svg", err);
	if (status == PO_STATUS_OK && html->analysis->worker_count > 0)
		worker_table(html, parent);
	return status;
}

static enum po_status fill_pipeline(struct po_html *html, struct po_error *err)
{
	xmlNodePtr parent = po_html_find(html, "pipeline");
	xmlNodePtr figure;
	char *path;
	enum po_status status;

	if (!parent)
		return PO_STATUS_OK;
	path = po_report_file_path(html->out_dir, "pipeline.svg");
	if (!path) {
		po_error_set(err, "Failed to allocate a path");
		return PO_STATUS_NOMEM;
	}
	figure = po_html_el(html, parent, "figure", "figure pipeline", NULL);
	status = po_html_embed_svg(html, figure, path, "Pipeline graph", err);
	free(path);
	return status;
}

enum po_status po_html_fill_data(struct po_html *html, struct po_error *err)
{
	enum po_status (*const fillers[])(struct po_html *, struct po_error *) = {
	    fill_breakdown, fill_timelines, fill_latency,  fill_gpu,
	    fill_memory,    fill_workers,   fill_pipeline,
	};

	for (size_t i = 0; i < sizeof(fillers) / sizeof(fillers[0]); i++) {
		enum po_status status = fillers[i](html, err);

		if (status != PO_STATUS_OK)
			return status;
	}
	return PO_STATUS_OK;
}
