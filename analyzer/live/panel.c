/*
 * panel.c: the live view's output. The panel redraws itself in place with a few ANSI
 * escapes (cursor up, erase line, erase below), the JSON lines follow docs/live.md, and
 * the alerts section closes the run's text output. Everything here formats the numbers of
 * window.h and alerts.h; the only arithmetic is unit conversion and fitting to the width.
 */
#define _DEFAULT_SOURCE /* strnlen */
#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "json_writer.h"
#include "panel.h"

#define PANEL_DEFAULT_COLUMNS 80
#define PANEL_LABEL "%-10s"
#define PANEL_INDENT "          "
#define PANEL_BAR_CELLS_MAX 40
#define PANEL_LEGEND_MAX 6
#define LINE_BYTES 1024
#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)

#define ESC_BOLD "\033[1m"
#define ESC_RESET "\033[0m"

/*
 * One character per category in the breakdown bar, by category so that a new category
 * cannot shift the others; the assertion makes whoever adds one choose its character.
 */
_Static_assert(PO_CATEGORY_COUNT == 15, "give the new category a character in the bar");
static const char category_chars[PO_CATEGORY_COUNT] = {
    [PO_CAT_LOAD] = 'L',     [PO_CAT_PREPROCESS] = 'P', [PO_CAT_COLLATE] = 'C',
    [PO_CAT_GPU_SYNC] = 'S', [PO_CAT_H2D_COPY] = 'D',	[PO_CAT_OPTIMIZER] = 'O',
    [PO_CAT_BACKWARD] = 'B', [PO_CAT_FORWARD] = 'F',	[PO_CAT_CHECKPOINT] = 'K',
    [PO_CAT_EVAL] = 'E',     [PO_CAT_CUSTOM] = 'U',	[PO_CAT_DATA_WAIT] = 'W',
    [PO_CAT_HANDOFF] = 'H',  [PO_CAT_GC] = 'G',		[PO_CAT_OTHER] = '.',
};

/* The panel's lines are built as text first, then cut to the width as they are written. */
struct line {
	char text[LINE_BYTES];
	size_t len;
};

static void line_add(struct line *line, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void line_add(struct line *line, const char *format, ...)
{
	size_t room = sizeof(line->text) - line->len;
	va_list args;
	int written;

	if (room <= 1)
		return;
	va_start(args, format);
	written = vsnprintf(line->text + line->len, room, format, args);
	va_end(args);
	if (written > 0)
		line->len += (size_t)written < room ? (size_t)written : room - 1;
}

/* A fixed-size text field of the window: it need not end with a NUL (it came by pipe). */
static void line_add_field(struct line *line, const char *field, size_t size)
{
	line_add(line, "%.*s", (int)strnlen(field, size), field);
}

/* value with decimals and its unit, or "-" when it is not a number. */
static void line_add_number(struct line *line, double value, int decimals, const char *unit)
{
	if (isfinite(value))
		line_add(line, "%.*f%s", decimals, value, unit);
	else
		line_add(line, "-");
}

/* A length of time as people read a clock: 45s, 12m30s, 5h02m03s, 3d04h. */
static void line_add_duration(struct line *line, double seconds)
{
	int64_t s;

	if (!isfinite(seconds) || seconds < 0) {
		line_add(line, "-");
		return;
	}
	if (seconds >= 1000.0 * 86400) {
		line_add(line, ">1000d");
		return;
	}
	s = (int64_t)(seconds + 0.5);
	if (s < 60)
		line_add(line, "%" PRId64 "s", s);
	else if (s < 3600)
		line_add(line, "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
	else if (s < 86400)
		line_add(line, "%" PRId64 "h%02" PRId64 "m%02" PRId64 "s", s / 3600, s / 60 % 60,
			 s % 60);
	else
		line_add(line, "%" PRId64 "d%02" PRId64 "h", s / 86400, s / 3600 % 24);
}

/* Bytes in MiB below a GiB, else in GiB; "-" for the window's -1 (unknown). */
static void line_add_bytes(struct line *line, int64_t bytes)
{
	if (bytes < 0)
		line_add(line, "-");
	else if (bytes < GIB)
		line_add(line, "%.1f MiB", (double)bytes / MIB);
	else
		line_add(line, "%.2f GiB", (double)bytes / GIB);
}

/* "3.21 GiB of 64.00 GiB  +12.0 MiB/min  OOM in 5h02m03s": a memory and its trend. */
static void line_add_memory(struct line *line, int64_t bytes, int64_t limit_bytes, double slope_bps,
			    double oom_s)
{
	line_add_bytes(line, bytes);
	if (limit_bytes >= 0) {
		line_add(line, " of ");
		line_add_bytes(line, limit_bytes);
	}
	line_add(line, "  ");
	if (isfinite(slope_bps))
		line_add(line, "%+.1f MiB/min", slope_bps * 60 / MIB);
	else
		line_add(line, "- MiB/min");
	line_add(line, "  OOM in ");
	line_add_duration(line, oom_s);
}

struct panel_out {
	FILE *tty;	   /* weak */
	size_t width;	   /* characters per line */
	int lines;	   /* lines written so far */
	int max_lines;	   /* PO_LIVE_PANEL_MAX_LINES */
	const char *style; /* escape that starts the next line's style, or NULL */
};

/*
 * Writes one line over the one on screen: cut to the width, then erased to its end so
 * that a shorter line leaves nothing of the previous panel's.
 */
static void panel_emit(struct panel_out *out, const struct line *line)
{
	if (out->lines >= out->max_lines)
		return;
	fputc('\r', out->tty);
	if (out->style)
		fputs(out->style, out->tty);
	po_json_put_terminal_text(out->tty, line->text, line->len, out->width);
	if (out->style)
		fputs(ESC_RESET, out->tty);
	fputs("\033[K\n", out->tty);
	out->lines++;
	out->style = NULL;
}

static void panel_header(struct panel_out *out, const struct po_live_window *window)
{
	struct line line = {.len = 0};

	line_add(&line, "profopt live  run ");
	line_add_duration(&line, window->elapsed_s);
	line_add(&line, "  steps %" PRId64 " (+%" PRId64 ")  window #%" PRId64, window->steps,
		 window->window_steps, window->seq);
	if (window->ended) {
		line_add(&line, "  ended: ");
		line_add_field(&line, window->ending, sizeof(window->ending));
	}
	out->style = ESC_BOLD;
	panel_emit(out, &line);
}

static void panel_steps(struct panel_out *out, const struct po_live_window *window)
{
	struct line line = {.len = 0};

	line_add(&line, PANEL_LABEL, "rate");
	line_add_number(&line, window->step_rate, 1, " steps/s");
	line_add(&line, " (all ");
	line_add_number(&line, window->step_rate_all, 1, "");
	line_add(&line, ")  p50 ");
	line_add_number(&line, window->p50_ms, 2, " ms");
	line_add(&line, " (all ");
	line_add_number(&line, window->p50_all_ms, 2, "");
	if (isfinite(window->baseline_p50_ms)) {
		line_add(&line, ", baseline ");
		line_add_number(&line, window->baseline_p50_ms, 2, "");
	}
	line_add(&line, ")");
	panel_emit(out, &line);
}

/*
 * Splits cells among the categories in proportion to their shares, by largest
 * remainder, so that the bar always has exactly cells cells. Returns false when there is
 * no share to show (a window without steps).
 */
static bool bar_cells(const struct po_live_window *window, int cells, int *counts)
{
	double total = 0, exact[PO_CATEGORY_COUNT];
	int given = 0, i, best;

	for (i = 0; i < PO_CATEGORY_COUNT; i++) {
		double pct = window->category_pct[i];

		exact[i] = isfinite(pct) && pct > 0 ? pct : 0;
		total += exact[i];
	}
	if (!(total > 0))
		return false;
	for (i = 0; i < PO_CATEGORY_COUNT; i++) {
		exact[i] = exact[i] / total * cells;
		counts[i] = (int)exact[i];
		exact[i] -= counts[i];
		given += counts[i];
	}
	for (; given < cells; given++) {
		best = 0;
		for (i = 1; i < PO_CATEGORY_COUNT; i++) {
			if (exact[i] > exact[best])
				best = i;
		}
		counts[best]++;
		exact[best] = -1;
	}
	return true;
}

/* The bar keeps the categories' order, so a category stays in its place between redraws. */
static void panel_bar(struct panel_out *out, const struct po_live_window *window)
{
	struct line line = {.len = 0};
	int counts[PO_CATEGORY_COUNT], cells, i, c;

	cells = (int)out->width - (int)strlen(PANEL_INDENT) - 2;
	cells = cells > PANEL_BAR_CELLS_MAX ? PANEL_BAR_CELLS_MAX : cells < 10 ? 10 : cells;
	line_add(&line, PANEL_LABEL, "time");
	if (!bar_cells(window, cells, counts)) {
		line_add(&line, "-");
		panel_emit(out, &line);
		return;
	}
	line_add(&line, "[");
	for (i = 0; i < PO_CATEGORY_COUNT; i++) {
		for (c = 0; c < counts[i]; c++)
			line_add(&line, "%c", category_chars[i]);
	}
	line_add(&line, "]");
	panel_emit(out, &line);
}

/* Orders categories by share, largest first; equal shares keep the category order. */
static void sort_by_share(const double *pct, int *order)
{
	int i, j, category;

	for (i = 0; i < PO_CATEGORY_COUNT; i++)
		order[i] = i;
	for (i = 1; i < PO_CATEGORY_COUNT; i++) {
		category = order[i];
		for (j = i; j > 0 && pct[order[j - 1]] < pct[category]; j--)
			order[j] = order[j - 1];
		order[j] = category;
	}
}

static void panel_legend(struct panel_out *out, const struct po_live_window *window)
{
	struct line line = {.len = 0};
	double pct[PO_CATEGORY_COUNT];
	int order[PO_CATEGORY_COUNT], i, shown = 0;

	for (i = 0; i < PO_CATEGORY_COUNT; i++)
		pct[i] = isfinite(window->category_pct[i]) ? window->category_pct[i] : 0;
	sort_by_share(pct, order);
	line_add(&line, PANEL_INDENT);
	for (i = 0; i < PO_CATEGORY_COUNT && shown < PANEL_LEGEND_MAX; i++) {
		if (!(pct[order[i]] > 0))
			break;
		line_add(&line, "%s%c %s %.1f%%", shown ? "  " : "", category_chars[order[i]],
			 po_category_name((enum po_category)order[i]), pct[order[i]]);
		shown++;
	}
	if (shown)
		panel_emit(out, &line);
}

static void panel_loader(struct panel_out *out, const struct po_live_window *window)
{
	struct line line = {.len = 0};

	line_add(&line, PANEL_LABEL "data wait ", "loader");
	line_add_number(&line, window->data_wait_pct, 1, "%");
	if (window->workers_seen <= 0) {
		line_add(&line, "  no workers");
	} else {
		line_add(&line, "  workers %d/%d alive, busy ", (int)window->workers_alive,
			 (int)window->workers_seen);
		line_add_number(&line, window->workers_busy_pct, 1, "%");
	}
	if (window->silent_worker_pid >= 0) {
		line_add(&line, "  worker %d silent for ", (int)window->silent_worker_pid);
		line_add_duration(&line, window->silent_worker_s);
	}
	panel_emit(out, &line);
}

/* Only for a run that uses a GPU or reports GPU memory: nothing to show otherwise. */
static void panel_gpu(struct panel_out *out, const struct po_live_window *window)
{
	struct line line = {.len = 0};

	if (!window->has_gpu && window->gpu_bytes < 0)
		return;
	line_add(&line, PANEL_LABEL, "gpu");
	if (window->has_gpu) {
		line_add(&line, "busy ");
		line_add_number(&line, window->gpu_busy_pct, 1, "%");
	}
	if (window->gpu_bytes >= 0) {
		line_add(&line, "%smem ", window->has_gpu ? "  " : "");
		line_add_memory(&line, window->gpu_bytes, window->gpu_limit_bytes,
				window->gpu_slope_bps, window->gpu_oom_s);
	}
	panel_emit(out, &line);
}

static void panel_host(struct panel_out *out, const struct po_live_window *window)
{
	struct line line = {.len = 0};

	line_add(&line, PANEL_LABEL, "host mem");
	line_add_memory(&line, window->host_bytes, window->host_limit_bytes, window->host_slope_bps,
			window->host_oom_s);
	panel_emit(out, &line);
}

static void panel_trace(struct panel_out *out, const struct po_live_window *window)
{
	struct line line = {.len = 0};

	line_add(&line, PANEL_LABEL "%" PRId64 "  discarded %" PRId64, "events", window->events,
		 window->discarded_events);
	if (window->discard_windows > 0)
		line_add(&line, " in %" PRId64 " window(s)", window->discard_windows);
	panel_emit(out, &line);
}

static void panel_verdict(struct panel_out *out, const struct po_live_window *window)
{
	struct line line = {.len = 0};

	line_add(&line, PANEL_LABEL, "verdict");
	if (strnlen(window->verdict, sizeof(window->verdict)))
		line_add_field(&line, window->verdict, sizeof(window->verdict));
	else
		line_add(&line, "-");
	if (strnlen(window->verdict_reason, sizeof(window->verdict_reason))) {
		line_add(&line, ": ");
		line_add_field(&line, window->verdict_reason, sizeof(window->verdict_reason));
	}
	panel_emit(out, &line);
}

/* The kind's name, or "unknown" for a kind outside the table (a corrupt alert). */
static const char *kind_name(enum po_live_alert_kind kind)
{
	const char *name = NULL;

	if ((int)kind >= 0 && (int)kind < PO_LIVE_ALERT_KIND_COUNT)
		name = po_live_alert_kind_name(kind);
	return name ? name : "unknown";
}

/*
 * The open alerts take the lines left; when they are more than the lines, the last line
 * names the ones that did not fit.
 */
static void panel_alerts(struct panel_out *out, const struct po_live_alert *open, size_t open_count)
{
	struct line line = {.len = 0};
	size_t room = (size_t)(out->max_lines - out->lines), shown, i;

	if (!room)
		return;
	if (!open_count) {
		line_add(&line, PANEL_LABEL "none", "alerts");
		panel_emit(out, &line);
		return;
	}
	shown = open_count <= room ? open_count : room - 1;
	for (i = 0; i < shown; i++) {
		line.len = 0;
		line_add(&line, PANEL_LABEL "%s: ", i ? "" : "alerts", kind_name(open[i].kind));
		line_add_field(&line, open[i].evidence, sizeof(open[i].evidence));
		out->style = ESC_BOLD;
		panel_emit(out, &line);
	}
	if (shown == open_count)
		return;
	line.len = 0;
	line_add(&line, PANEL_INDENT "+%zu more:", open_count - shown);
	for (i = shown; i < open_count; i++)
		line_add(&line, "%s %s", i > shown ? "," : "", kind_name(open[i].kind));
	out->style = ESC_BOLD;
	panel_emit(out, &line);
}

void po_live_panel_draw(struct po_live_panel *panel, FILE *tty, const struct po_live_window *window,
			const struct po_live_alert *open, size_t open_count, int columns)
{
	struct panel_out out = {.tty = tty, .max_lines = PO_LIVE_PANEL_MAX_LINES};

	assert(panel && tty && window && (open || !open_count));
	if (columns <= 0)
		columns = PANEL_DEFAULT_COLUMNS;
	/*
	 * One column stays free: on some terminals a line as wide as the screen wraps at
	 * once, and the newline after it then adds a line the cursor-up count misses.
	 */
	out.width = columns > 1 ? (size_t)columns - 1 : 1;
	if (panel->drawn_lines > 0)
		fprintf(tty, "\033[%dA", panel->drawn_lines);
	panel_header(&out, window);
	panel_steps(&out, window);
	panel_bar(&out, window);
	panel_legend(&out, window);
	panel_loader(&out, window);
	panel_gpu(&out, window);
	panel_host(&out, window);
	panel_trace(&out, window);
	panel_verdict(&out, window);
	panel_alerts(&out, open, open_count);
	/* Erases what is left of a longer previous panel. */
	fputs("\033[J", tty);
	panel->drawn_lines = out.lines;
	fflush(tty);
}

void po_live_panel_keep(struct po_live_panel *panel)
{
	panel->drawn_lines = 0;
}

/* A text field of the window (at most size bytes, maybe without a NUL); "" is null ("none"). */
static void json_kv_field(struct po_json_writer *json, const char *key, const char *field,
			  size_t size)
{
	size_t len = strnlen(field, size);

	po_json_write_key(json, key);
	if (len)
		po_json_write_string_len(json, field, len);
	else
		po_json_write_null(json);
}

static void json_steps(struct po_json_writer *json, const struct po_live_window *window)
{
	po_json_write_kv_int(json, "steps", window->steps);
	po_json_write_kv_int(json, "window_steps", window->window_steps);
	po_json_write_kv_double(json, "step_rate", window->step_rate, 3);
	po_json_write_kv_double(json, "step_rate_all", window->step_rate_all, 3);
	po_json_write_kv_double(json, "p50_ms", window->p50_ms, 3);
	po_json_write_kv_double(json, "p50_all_ms", window->p50_all_ms, 3);
	po_json_write_kv_double(json, "baseline_p50_ms", window->baseline_p50_ms, 3);
	po_json_write_kv_int_or_null(json, "baseline_end_ns", window->baseline_end_ns);
	po_json_write_key(json, "category_pct");
	po_json_write_begin_object(json);
	for (int i = 0; i < PO_CATEGORY_COUNT; i++)
		po_json_write_kv_double(json, po_category_name((enum po_category)i),
					window->category_pct[i], 2);
	po_json_write_end_object(json);
	po_json_write_kv_double(json, "data_wait_pct", window->data_wait_pct, 2);
	po_json_write_kv_bool(json, "data_wait_includes_handoff", window->handoff_is_input);
	po_json_write_kv_double(json, "waiting_steps_pct", window->waiting_steps_pct, 2);
}

/* The members of one memory (host or GPU), spelled out so that each key can be found. */
struct json_memory_keys {
	const char *bytes;
	const char *slope_bps;
	const char *limit_bytes;
	const char *oom_s;
};

static const struct json_memory_keys host_memory_keys = {"host_bytes", "host_slope_bps",
							 "host_limit_bytes", "host_oom_s"};
static const struct json_memory_keys gpu_memory_keys = {"gpu_bytes", "gpu_slope_bps",
							"gpu_limit_bytes", "gpu_oom_s"};

static void json_memory(struct po_json_writer *json, const struct json_memory_keys *keys,
			int64_t bytes, double slope_bps, int64_t limit_bytes, double oom_s)
{
	po_json_write_kv_int_or_null(json, keys->bytes, bytes);
	po_json_write_kv_double(json, keys->slope_bps, slope_bps, 1);
	po_json_write_kv_int_or_null(json, keys->limit_bytes, limit_bytes);
	po_json_write_kv_double(json, keys->oom_s, oom_s, 1);
}

static void json_resources(struct po_json_writer *json, const struct po_live_window *window)
{
	po_json_write_kv_int(json, "workers_seen", window->workers_seen);
	po_json_write_kv_int(json, "workers_alive", window->workers_alive);
	po_json_write_kv_double(json, "workers_busy_pct", window->workers_busy_pct, 2);
	po_json_write_kv_int_or_null(json, "silent_worker_pid", window->silent_worker_pid);
	po_json_write_kv_double(json, "silent_worker_s", window->silent_worker_s, 3);
	po_json_write_kv_double(json, "loop_wait_s", window->loop_wait_s, 3);
	po_json_write_kv_bool(json, "has_gpu", window->has_gpu);
	po_json_write_kv_double(json, "gpu_busy_pct", window->gpu_busy_pct, 2);
	json_memory(json, &host_memory_keys, window->host_bytes, window->host_slope_bps,
		    window->host_limit_bytes, window->host_oom_s);
	json_memory(json, &gpu_memory_keys, window->gpu_bytes, window->gpu_slope_bps,
		    window->gpu_limit_bytes, window->gpu_oom_s);
}

static void json_run(struct po_json_writer *json, const struct po_live_window *window)
{
	po_json_write_kv_int(json, "events", window->events);
	po_json_write_kv_double(json, "snapshot_ms", window->snapshot_ms, 3);
	po_json_write_kv_int(json, "discarded_events", window->discarded_events);
	po_json_write_kv_int(json, "discard_windows", window->discard_windows);
	po_json_write_kv_bool(json, "ended", window->ended);
	json_kv_field(json, "ending", window->ending, sizeof(window->ending));
	json_kv_field(json, "ending_detail", window->ending_detail, sizeof(window->ending_detail));
	json_kv_field(json, "verdict", window->verdict, sizeof(window->verdict));
	json_kv_field(json, "verdict_reason", window->verdict_reason,
		      sizeof(window->verdict_reason));
}

bool po_live_window_write_json(FILE *out, const struct po_live_window *window,
			       const struct po_live_alert *open, size_t open_count)
{
	struct po_json_writer json;
	struct po_error err; /* unused: callers report a false result in their own words */

	assert(out && window && (open || !open_count));
	po_json_writer_init_stream(&json, out, "the window's JSON line");
	po_json_write_begin_object(&json);
	/* The object on one line; closing the writer adds its newline and flushes. */
	po_json_write_inline(&json);
	po_json_write_kv_string(&json, "schema", "profopt-live/1");
	po_json_write_kv_int(&json, "seq", window->seq);
	po_json_write_kv_int(&json, "now_ns", window->now_ns);
	po_json_write_kv_int(&json, "begin_ns", window->begin_ns);
	po_json_write_kv_double(&json, "elapsed_s", window->elapsed_s, 3);
	json_steps(&json, window);
	json_resources(&json, window);
	json_run(&json, window);
	po_json_write_key(&json, "alerts");
	po_json_write_begin_array(&json);
	for (size_t i = 0; i < open_count; i++)
		po_json_write_string(&json, kind_name(open[i].kind));
	po_json_write_end_array(&json);
	po_json_write_end_object(&json);
	return po_json_writer_close(&json, &err) == PO_STATUS_OK;
}

/* Seconds from start_ns to at_ns with one decimal and a sign: "+12.4". */
static void format_offset(char *buf, size_t size, int64_t at_ns, int64_t start_ns)
{
	snprintf(buf, size, "%+.1f", (double)(at_ns - start_ns) / 1e9);
}

void po_live_alerts_section(FILE *out, const struct po_live_alert *history, size_t count,
			    int64_t start_ns)
{
	char offset[48];
	int width = 0;
	size_t i;

	assert(out && (history || !count));
	if (!count) {
		fputs("Alerts: none\n", out);
		return;
	}
	/* The offsets are right-aligned, so the widest sets the column. */
	for (i = 0; i < count; i++) {
		format_offset(offset, sizeof(offset), history[i].at_ns, start_ns);
		width = (int)strlen(offset) > width ? (int)strlen(offset) : width;
	}
	fprintf(out, "Alerts (%zu):\n", count);
	for (i = 0; i < count; i++) {
		const struct po_live_alert *alert = &history[i];

		format_offset(offset, sizeof(offset), alert->at_ns, start_ns);
		fprintf(out, "  %*s s  %-7s  %s", width, offset,
			alert->raised ? "raised" : "cleared", kind_name(alert->kind));
		if (!alert->raised && alert->since_ns <= alert->at_ns)
			fprintf(out, " after %.1f s",
				(double)(alert->at_ns - alert->since_ns) / 1e9);
		fputs(": ", out);
		po_json_put_terminal_text(out, alert->evidence,
					  strnlen(alert->evidence, sizeof(alert->evidence)),
					  SIZE_MAX);
		fputc('\n', out);
	}
}
