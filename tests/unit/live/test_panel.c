/*
 * test_panel.c: the live view's output: the JSON line of a window (one valid line, every
 * key, null for what is not a number, any text escaped), the terminal panel (cut to the
 * width, redrawn in place, "-" for what is not a number, GPU only with a GPU, the open
 * alerts) and the end-of-run alerts section.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "check.h"
#include "panel.h"

/* Output written to memory; capture_end() returns the text, to free. */
struct capture {
	char *text;
	size_t size;
	FILE *file;
};

static FILE *capture_begin(struct capture *capture)
{
	capture->text = NULL;
	capture->size = 0;
	capture->file = open_memstream(&capture->text, &capture->size);
	return capture->file;
}

static char *capture_end(struct capture *capture)
{
	fclose(capture->file);
	return capture->text;
}

/* A window of a run in its stride: a GPU, growing host memory, a silent worker. */
static struct po_live_window window_full(void)
{
	struct po_live_window window = {
	    .seq = 12,
	    .now_ns = 5000000000000,
	    .begin_ns = 4990000000000,
	    .elapsed_s = 3723.4,
	    .steps = 4810,
	    .window_steps = 520,
	    .step_rate = 52.1,
	    .step_rate_all = 49.8,
	    .p50_ms = 18.2,
	    .p50_all_ms = 18.0,
	    .baseline_p50_ms = 17.9,
	    .baseline_end_ns = 4000000000000,
	    .data_wait_pct = 40.7,
	    .waiting_steps_pct = 96.15,
	    .workers_seen = 4,
	    .workers_alive = 2,
	    .workers_busy_pct = 98.0,
	    .silent_worker_pid = 1234,
	    .silent_worker_s = 31.0,
	    .has_gpu = true,
	    .gpu_busy_pct = 55.2,
	    .host_bytes = 3LL << 30,
	    .host_slope_bps = 12.0 * 1024 * 1024 / 60,
	    .host_limit_bytes = 64LL << 30,
	    .host_oom_s = 18000,
	    .gpu_bytes = 10LL << 30,
	    .gpu_slope_bps = 0,
	    .gpu_limit_bytes = 80LL << 30,
	    .gpu_oom_s = NAN,
	    .events = 1234567,
	    .snapshot_ms = 4.25,
	    .discarded_events = 0,
	    .discard_windows = 0,
	    .ended = false,
	};

	for (int i = 0; i < PO_CATEGORY_COUNT; i++)
		window.category_pct[i] = 0;
	window.category_pct[PO_CAT_DATA_WAIT] = 40.7;
	window.category_pct[PO_CAT_BACKWARD] = 25.5;
	window.category_pct[PO_CAT_FORWARD] = 19.4;
	window.category_pct[PO_CAT_OPTIMIZER] = 9.4;
	window.category_pct[PO_CAT_OTHER] = 5.0;
	snprintf(window.verdict, sizeof(window.verdict), "input-bound");
	snprintf(window.verdict_reason, sizeof(window.verdict_reason), "2 worker(s) busy 100%%");
	return window;
}

/* A window before any step, without memory samples: every number unknown. */
static struct po_live_window window_empty(void)
{
	struct po_live_window window = {
	    .seq = 1,
	    .step_rate = NAN,
	    .step_rate_all = NAN,
	    .p50_ms = NAN,
	    .p50_all_ms = NAN,
	    .baseline_p50_ms = NAN,
	    .baseline_end_ns = -1,
	    .data_wait_pct = NAN,
	    .waiting_steps_pct = NAN,
	    .workers_busy_pct = NAN,
	    .silent_worker_pid = -1,
	    .gpu_busy_pct = NAN,
	    .host_bytes = -1,
	    .host_slope_bps = NAN,
	    .host_limit_bytes = -1,
	    .host_oom_s = INFINITY,
	    .gpu_bytes = -1,
	    .gpu_slope_bps = NAN,
	    .gpu_limit_bytes = -1,
	    .gpu_oom_s = NAN,
	};

	for (int i = 0; i < PO_CATEGORY_COUNT; i++)
		window.category_pct[i] = NAN;
	return window;
}

static struct po_live_alert alert_make(enum po_live_alert_kind kind, bool raised, int64_t at_ns,
				       const char *evidence)
{
	struct po_live_alert alert = {
	    .kind = kind,
	    .raised = raised,
	    .seq = 1,
	    .at_ns = at_ns,
	    .since_ns = at_ns,
	    .value = 40.7,
	    .threshold = 20,
	    .unit = "%",
	};

	snprintf(alert.evidence, sizeof(alert.evidence), "%s", evidence);
	return alert;
}

/*
 * A small JSON checker: each parse_ function returns the text after the value it read, or
 * NULL when the text is not JSON there. Strings must have no raw control character and
 * only valid escapes.
 */
static const char *parse_value(const char *c, int depth);

static const char *skip_space(const char *c)
{
	while (*c == ' ' || *c == '\t' || *c == '\r' || *c == '\n')
		c++;
	return c;
}

static const char *parse_string(const char *c)
{
	if (*c++ != '"')
		return NULL;
	while (*c != '"') {
		if ((unsigned char)*c < 0x20)
			return NULL;
		if (*c == '\\') {
			c++;
			if (*c == 'u') {
				for (int i = 1; i <= 4; i++) {
					if (!strchr("0123456789abcdefABCDEF", c[i]) || !c[i])
						return NULL;
				}
				c += 4;
			} else if (!*c || !strchr("\"\\/bfnrt", *c)) {
				return NULL;
			}
		}
		c++;
	}
	return c + 1;
}

static const char *parse_digits(const char *c)
{
	const char *start = c;

	while (*c >= '0' && *c <= '9')
		c++;
	return c > start ? c : NULL;
}

static const char *parse_number(const char *c)
{
	if (*c == '-')
		c++;
	if (*c == '0')
		c++;
	else if (!(c = parse_digits(c)))
		return NULL;
	if (*c == '.' && !(c = parse_digits(c + 1)))
		return NULL;
	if (*c == 'e' || *c == 'E') {
		c++;
		if (*c == '+' || *c == '-')
			c++;
		c = parse_digits(c);
	}
	return c;
}

static const char *parse_items(const char *c, char close, bool object, int depth)
{
	c = skip_space(c + 1);
	if (*c == close)
		return c + 1;
	for (;;) {
		if (object) {
			if (!(c = parse_string(skip_space(c))))
				return NULL;
			c = skip_space(c);
			if (*c++ != ':')
				return NULL;
		}
		if (!(c = parse_value(c, depth + 1)))
			return NULL;
		c = skip_space(c);
		if (*c == close)
			return c + 1;
		if (*c++ != ',')
			return NULL;
	}
}

static const char *parse_value(const char *c, int depth)
{
	c = skip_space(c);
	if (depth > 16)
		return NULL;
	if (*c == '{')
		return parse_items(c, '}', true, depth);
	if (*c == '[')
		return parse_items(c, ']', false, depth);
	if (*c == '"')
		return parse_string(c);
	if (strncmp(c, "true", 4) == 0 || strncmp(c, "null", 4) == 0)
		return c + 4;
	if (strncmp(c, "false", 5) == 0)
		return c + 5;
	return parse_number(c);
}

/* The text is exactly one JSON object on one line, ended by its newline. */
static bool is_json_line(const char *text)
{
	const char *end;

	if (*text != '{' || !(end = parse_value(text, 0)))
		return false;
	return strcmp(end, "\n") == 0 && strchr(text, '\n') == end;
}

/* Decodes the string member key of a JSON line into buf (\u escapes below U+0080 only). */
static bool json_string_member(const char *json, const char *key, char *buf, size_t size)
{
	char pattern[64];
	const char *c;
	size_t len = 0;

	snprintf(pattern, sizeof(pattern), "\"%s\":\"", key);
	if (!(c = strstr(json, pattern)))
		return false;
	for (c += strlen(pattern); *c != '"' && len + 1 < size; c++) {
		if (*c != '\\') {
			buf[len++] = *c;
			continue;
		}
		c++;
		if (*c == 'u') {
			buf[len++] = (char)strtol((char[]){c[1], c[2], c[3], c[4], 0}, NULL, 16);
			c += 4;
		} else {
			buf[len++] = *c == 'n' ? '\n' : *c == 't' ? '\t' : *c == 'r' ? '\r' : *c;
		}
	}
	buf[len] = '\0';
	return *c == '"';
}

static char *window_json(const struct po_live_window *window, const struct po_live_alert *open,
			 size_t open_count)
{
	struct capture capture;

	CHECK(po_live_window_write_json(capture_begin(&capture), window, open, open_count));
	return capture_end(&capture);
}

static void test_json_keys(void)
{
	static const char *const keys[] = {
	    "schema",
	    "seq",
	    "now_ns",
	    "begin_ns",
	    "elapsed_s",
	    "steps",
	    "window_steps",
	    "step_rate",
	    "step_rate_all",
	    "p50_ms",
	    "p50_all_ms",
	    "baseline_p50_ms",
	    "baseline_end_ns",
	    "category_pct",
	    "data_wait_pct",
	    "waiting_steps_pct",
	    "workers_seen",
	    "workers_alive",
	    "workers_busy_pct",
	    "silent_worker_pid",
	    "silent_worker_s",
	    "loop_wait_s",
	    "has_gpu",
	    "gpu_busy_pct",
	    "host_bytes",
	    "host_slope_bps",
	    "host_limit_bytes",
	    "host_oom_s",
	    "gpu_bytes",
	    "gpu_slope_bps",
	    "gpu_limit_bytes",
	    "gpu_oom_s",
	    "events",
	    "snapshot_ms",
	    "discarded_events",
	    "discard_windows",
	    "ended",
	    "ending",
	    "ending_detail",
	    "verdict",
	    "verdict_reason",
	    "alerts",
	};
	struct po_live_window window = window_full();
	struct po_live_alert open[2] = {
	    alert_make(PO_LIVE_ALERT_INPUT_BOUND, true, 0, "waits"),
	    alert_make(PO_LIVE_ALERT_GPU_IDLE, true, 0, "idles"),
	};
	char pattern[64], *json = window_json(&window, open, 2);

	CHECK(is_json_line(json));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(pattern, sizeof(pattern), "\"%s\":", keys[i]);
		CHECK(strstr(json, pattern) != NULL);
	}
	for (int i = 0; i < PO_CATEGORY_COUNT; i++) {
		snprintf(pattern, sizeof(pattern),
			 "\"%s\":", po_category_name((enum po_category)i));
		CHECK(strstr(strstr(json, "\"category_pct\":{"), pattern) != NULL);
	}
	CHECK(strncmp(json, "{\"schema\":\"profopt-live/1\",\"seq\":12,", 36) == 0);
	CHECK(strstr(json, "\"data_wait\":40.70,") != NULL);
	CHECK(strstr(json, "\"p50_ms\":18.200,") != NULL);
	CHECK(strstr(json, "\"host_bytes\":3221225472,") != NULL);
	CHECK(strstr(json, "\"silent_worker_pid\":1234,") != NULL);
	CHECK(strstr(json, "\"has_gpu\":true,") != NULL);
	CHECK(strstr(json, "\"ending\":null,") != NULL);
	CHECK(strstr(json, "\"verdict\":\"input-bound\",") != NULL);
	CHECK(strstr(json, "\"alerts\":[\"input-bound\",\"gpu-idle\"]}\n") != NULL);
	free(json);
}

/* NaN, infinities and the window's -1 are null; a value rounding to zero is not "-0". */
static void test_json_null(void)
{
	struct po_live_window window = window_empty();
	char *json;

	window.host_slope_bps = -0.01;
	json = window_json(&window, NULL, 0);
	CHECK(is_json_line(json));
	CHECK(strstr(json, "\"step_rate\":null,") != NULL);
	CHECK(strstr(json, "\"p50_ms\":null,") != NULL);
	CHECK(strstr(json, "\"baseline_end_ns\":null,") != NULL);
	CHECK(strstr(json, "\"category_pct\":{\"load\":null,") != NULL);
	CHECK(strstr(json, "\"gc\":null,\"other\":null}") != NULL);
	CHECK(strstr(json, "\"silent_worker_pid\":null,") != NULL);
	CHECK(strstr(json, "\"host_bytes\":null,") != NULL);
	CHECK(strstr(json, "\"host_slope_bps\":0.0,") != NULL);
	CHECK(strstr(json, "\"host_oom_s\":null,") != NULL);
	CHECK(strstr(json, "\"gpu_limit_bytes\":null,") != NULL);
	CHECK(strstr(json, "\"verdict\":null,\"verdict_reason\":null,\"alerts\":[]}") != NULL);
	CHECK(strstr(json, "nan") == NULL && strstr(json, "inf") == NULL);
	free(json);
}

/* Text from the program, whatever it holds, stays one valid string of the one line. */
static void test_json_hostile_text(void)
{
	static const char reason[] = "say \"hi\" \\ back\nline\r\t\x01\x1b[2J\x7f end";
	struct po_live_window window = window_full();
	char decoded[256], *json;

	snprintf(window.verdict_reason, sizeof(window.verdict_reason), "%s", reason);
	memset(window.verdict, 'x', sizeof(window.verdict)); /* no NUL: came by pipe */
	snprintf(window.ending, sizeof(window.ending),
		 "a\xff"
		 "b\xe2\x80\xa8");
	json = window_json(&window, NULL, 0);
	CHECK(is_json_line(json));
	CHECK(json_string_member(json, "verdict_reason", decoded, sizeof(decoded)));
	CHECK_STR_EQ(decoded, reason);
	CHECK(json_string_member(json, "verdict", decoded, sizeof(decoded)));
	CHECK_INT_EQ(strlen(decoded), sizeof(window.verdict));
	/* The byte that is not UTF-8 becomes U+FFFD itself, U+2028 its escape. */
	CHECK(strstr(json, "\"ending\":\"a\xef\xbf\xbd"
			   "b\\u2028\"") != NULL);
	free(json);
}

static void test_json_write_error(void)
{
	struct po_live_window window = window_full();
	FILE *full = fopen("/dev/full", "w");

	if (!full)
		return;
	CHECK(!po_live_window_write_json(full, &window, NULL, 0));
	fclose(full);
}

/*
 * Columns a terminal shows for the line at text (up to its newline): escape sequences
 * take none, a UTF-8 character one. A control character other than the escapes' ESC and
 * the carriage return that starts each line counts as a failure (-1).
 */
static int visible_width(const char *text)
{
	const unsigned char *c = (const unsigned char *)text;
	int width = 0;

	for (; *c && *c != '\n'; c++) {
		if (*c == 0x1b && c[1] == '[') {
			for (c += 2; *c && !(*c >= 0x40 && *c <= 0x7e); c++)
				;
			if (!*c)
				return -1;
		} else if (*c == '\r') {
			continue;
		} else if (*c < 0x20 || *c == 0x7f) {
			return -1;
		} else if ((*c & 0xc0) != 0x80) {
			width++;
		}
	}
	return width;
}

/* Checks every line of a panel against columns; returns the number of lines. */
static int check_panel_lines(const char *text, int columns)
{
	int lines = 0, width;

	for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
		if (!strchr(line, '\n')) {
			/* What follows the last line may only be the erase below. */
			CHECK_STR_EQ(line, "\033[J");
			break;
		}
		width = visible_width(line);
		CHECK(width >= 0 && width <= columns);
		if (width < 0 || width > columns)
			fprintf(stderr, "  line of %d columns for %d: %.*s\n", width, columns,
				(int)(strchr(line, '\n') - line), line);
		lines++;
	}
	return lines;
}

static char *panel_text(struct po_live_panel *panel, const struct po_live_window *window,
			const struct po_live_alert *open, size_t open_count, int columns)
{
	struct capture capture;

	po_live_panel_draw(panel, capture_begin(&capture), window, open, open_count, columns);
	return capture_end(&capture);
}

static void test_panel_fits(void)
{
	static const int columns[] = {2, 10, 40, 80, 132, 300};
	struct po_live_window window = window_full();
	struct po_live_alert open[PO_LIVE_ALERT_KIND_COUNT];
	char evidence[400];
	int lines;

	memset(evidence, 'e', sizeof(evidence) - 1);
	evidence[sizeof(evidence) - 1] = '\0';
	for (int i = 0; i < PO_LIVE_ALERT_KIND_COUNT; i++)
		open[i] = alert_make((enum po_live_alert_kind)i, true, 0, evidence);
	snprintf(window.verdict_reason, sizeof(window.verdict_reason),
		 "\xc3\xa9t\xc3\xa9 \x1b[2J\n\xc2\x9b"
		 "31m %.140s",
		 evidence);
	window.ended = true;
	snprintf(window.ending, sizeof(window.ending), "clean");
	for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++) {
		struct po_live_panel panel = {0};
		char *text =
		    panel_text(&panel, &window, open, PO_LIVE_ALERT_KIND_COUNT, columns[i]);

		lines = check_panel_lines(text, columns[i]);
		CHECK(strstr(text, "\xc2\x9b") == NULL && strstr(text, "\033[2J") == NULL);
		CHECK_INT_EQ(lines, PO_LIVE_PANEL_MAX_LINES);
		CHECK_INT_EQ(panel.drawn_lines, lines);
		free(text);
	}
}

static void test_panel_content(void)
{
	struct po_live_panel panel = {0};
	struct po_live_window window = window_full();
	char *text = panel_text(&panel, &window, NULL, 0, 120);

	CHECK(strstr(text, "run 1h02m03s  steps 4810 (+520)  window #12") != NULL);
	CHECK(strstr(text, "rate      52.1 steps/s (all 49.8)  p50 18.20 ms (all 18.00, "
			   "baseline 17.90)") != NULL);
	CHECK(strstr(text, "time      [") != NULL);
	CHECK(strstr(text, "W data_wait 40.7%  B backward 25.5%  F forward 19.4%  O optimizer "
			   "9.4%  . other 5.0%") != NULL);
	CHECK(strstr(text, "loader    data wait 40.7%  workers 2/4 alive, busy 98.0%  worker "
			   "1234 silent for 31s") != NULL);
	CHECK(strstr(text, "gpu       busy 55.2%  mem 10.00 GiB of 80.00 GiB  +0.0 MiB/min  "
			   "OOM in -") != NULL);
	CHECK(strstr(text, "host mem  3.00 GiB of 64.00 GiB  +12.0 MiB/min  OOM in 5h00m00s") !=
	      NULL);
	CHECK(strstr(text, "events    1234567  discarded 0") != NULL);
	CHECK(strstr(text, "verdict   input-bound: 2 worker(s) busy 100%") != NULL);
	CHECK(strstr(text, "alerts    none") != NULL);
	CHECK(strstr(text, "nan") == NULL);
	free(text);
}

/* The bar's cells, in the categories' order; sets the shares of window first. */
static void bar_of(struct po_live_window *window, const double *pct, char *bar, size_t size)
{
	struct po_live_panel panel = {0};
	char *text, *start;

	for (int i = 0; i < PO_CATEGORY_COUNT; i++)
		window->category_pct[i] = pct[i];
	text = panel_text(&panel, window, NULL, 0, 80);
	start = strstr(text, "time      [");
	bar[0] = '\0';
	if (start) {
		start += strlen("time      [");
		snprintf(bar, size, "%.*s", (int)strcspn(start, "]"), start);
	}
	free(text);
}

/* The bar has 40 cells whatever the shares, split by largest remainder. */
static void test_panel_bar(void)
{
	struct po_live_window window = window_full();
	double pct[PO_CATEGORY_COUNT] = {0};
	char bar[128];

	pct[PO_CAT_DATA_WAIT] = 50;
	pct[PO_CAT_BACKWARD] = 25;
	pct[PO_CAT_FORWARD] = 12.5;
	pct[PO_CAT_OTHER] = 12.5;
	bar_of(&window, pct, bar, sizeof(bar));
	CHECK_STR_EQ(bar, "BBBBBBBBBBFFFFFWWWWWWWWWWWWWWWWWWWW.....");
	/* 13.6 and 13.2 cells: the largest remainder gets the 40th. */
	memset(pct, 0, sizeof(pct));
	pct[PO_CAT_LOAD] = 34;
	pct[PO_CAT_FORWARD] = 33;
	pct[PO_CAT_EVAL] = 33;
	bar_of(&window, pct, bar, sizeof(bar));
	CHECK_STR_EQ(bar, "LLLLLLLLLLLLLLFFFFFFFFFFFFFEEEEEEEEEEEEE");
	/* A share too small for a cell gets none; every cell is still drawn. */
	memset(pct, 0, sizeof(pct));
	pct[PO_CAT_HANDOFF] = 0.1;
	pct[PO_CAT_H2D_COPY] = 99.9;
	bar_of(&window, pct, bar, sizeof(bar));
	CHECK_STR_EQ(bar, "DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD");
}

static void test_panel_unknown(void)
{
	struct po_live_panel panel = {0};
	struct po_live_window window = window_empty();
	char *text = panel_text(&panel, &window, NULL, 0, 80);

	CHECK(strstr(text, "rate      - (all -)  p50 - (all -)") != NULL);
	CHECK(strstr(text, "time      -") != NULL);
	CHECK(strstr(text, "loader    data wait -  no workers") != NULL);
	CHECK(strstr(text, "host mem  -  - MiB/min  OOM in -") != NULL);
	CHECK(strstr(text, "verdict   -") != NULL);
	CHECK(strstr(text, "nan") == NULL && strstr(text, "inf") == NULL);
	CHECK(strstr(text, "gpu ") == NULL);
	free(text);
}

static void test_panel_gpu(void)
{
	struct po_live_panel panel = {0};
	struct po_live_window window = window_full();
	char *text;

	window.has_gpu = false;
	window.gpu_bytes = -1;
	text = panel_text(&panel, &window, NULL, 0, 120);
	CHECK(strstr(text, "gpu ") == NULL && strstr(text, "GPU") == NULL);
	free(text);
	/* Memory reported without device activity: the memory, no busy share. */
	window.gpu_bytes = 512LL << 20;
	window.gpu_limit_bytes = -1;
	text = panel_text(&panel, &window, NULL, 0, 120);
	CHECK(strstr(text, "gpu       mem 512.0 MiB  +0.0 MiB/min") != NULL);
	CHECK(strstr(text, "busy 55.2%") == NULL);
	free(text);
}

static void test_panel_alerts(void)
{
	struct po_live_panel panel = {0};
	struct po_live_window window = window_full();
	struct po_live_alert open[PO_LIVE_ALERT_KIND_COUNT];
	char *text;

	open[0] = alert_make(PO_LIVE_ALERT_INPUT_BOUND, true, 0, "The loop waits 40.7%.");
	open[1] = alert_make(PO_LIVE_ALERT_WORKER_STOPPED, true, 0, "Worker 1234 silent.");
	text = panel_text(&panel, &window, open, 2, 120);
	CHECK(strstr(text, "\033[1malerts    input-bound: The loop waits 40.7%.\033[0m") != NULL);
	CHECK(strstr(text, "\033[1m          worker-stopped: Worker 1234 silent.\033[0m") != NULL);
	CHECK(strstr(text, "none") == NULL);
	free(text);
	/* Every kind open: as many as fit, and the others named on the last line. */
	for (int i = 0; i < PO_LIVE_ALERT_KIND_COUNT; i++)
		open[i] = alert_make((enum po_live_alert_kind)i, true, 0, "evidence");
	text = panel_text(&panel, &window, open, PO_LIVE_ALERT_KIND_COUNT, 200);
	CHECK_INT_EQ(check_panel_lines(strstr(text, "\r"), 200), PO_LIVE_PANEL_MAX_LINES);
	CHECK(strstr(text, "gpu-idle: evidence") != NULL);
	CHECK(strstr(text,
		     "          +6 more: host-memory-growth, gpu-memory-growth, "
		     "step-regression, worker-stopped, events-discarded, program-ended") != NULL);
	free(text);
}

/* Each draw goes back over the previous one; after keep, the next starts below it. */
static void test_panel_redraw(void)
{
	struct po_live_panel panel = {0};
	struct po_live_window full = window_full(), empty = window_empty();
	char expected[16], *text;
	int first_lines;

	text = panel_text(&panel, &full, NULL, 0, 80);
	CHECK(text[0] == '\r');
	first_lines = panel.drawn_lines;
	CHECK_INT_EQ(first_lines, 10);
	free(text);
	text = panel_text(&panel, &empty, NULL, 0, 80);
	snprintf(expected, sizeof(expected), "\033[%dA\r", first_lines);
	CHECK(strncmp(text, expected, strlen(expected)) == 0);
	/* A shorter panel (no legend, no GPU) erases the rest of the longer one. */
	CHECK_INT_EQ(panel.drawn_lines, 8);
	CHECK(strlen(text) > 3 && strcmp(text + strlen(text) - 4, "\n\033[J") == 0);
	free(text);
	po_live_panel_keep(&panel);
	text = panel_text(&panel, &empty, NULL, 0, 80);
	CHECK(text[0] == '\r');
	free(text);
}

static void test_alerts_section(void)
{
	const int64_t start_ns = 1000000000000;
	struct po_live_alert history[3] = {
	    alert_make(PO_LIVE_ALERT_INPUT_BOUND, true, start_ns + 12400000000,
		       "The loop waits 40.7%\nof each step."),
	    alert_make(PO_LIVE_ALERT_INPUT_BOUND, false, start_ns + 102400000000, "Back to 3%."),
	    alert_make(PO_LIVE_ALERT_PROGRAM_ENDED, true, start_ns + 110000000000, "Ended."),
	};
	struct capture capture;
	char *text;

	po_live_alerts_section(capture_begin(&capture), history, 0, start_ns);
	text = capture_end(&capture);
	CHECK_STR_EQ(text, "Alerts: none\n");
	free(text);
	history[1].since_ns = history[0].at_ns;
	po_live_alerts_section(capture_begin(&capture), history, 3, start_ns);
	text = capture_end(&capture);
	CHECK_STR_EQ(text, "Alerts (3):\n"
			   "   +12.4 s  raised   input-bound: The loop waits 40.7%?of each step.\n"
			   "  +102.4 s  cleared  input-bound after 90.0 s: Back to 3%.\n"
			   "  +110.0 s  raised   program-ended: Ended.\n");
	free(text);
}

int main(void)
{
	RUN(test_json_keys);
	RUN(test_json_null);
	RUN(test_json_hostile_text);
	RUN(test_json_write_error);
	RUN(test_panel_fits);
	RUN(test_panel_content);
	RUN(test_panel_bar);
	RUN(test_panel_unknown);
	RUN(test_panel_gpu);
	RUN(test_panel_alerts);
	RUN(test_panel_redraw);
	RUN(test_alerts_section);
	return CHECK_SUMMARY();
}
