/*
 * live.c: a session that LTTng streams through lttng-relayd, read while it records with
 * babeltrace2's src.ctf.lttng-live, into the same decoder as a trace directory
 * (po_ingest_live_run(), ingest.h).
 *
 * The source gives one time-ordered stream of messages for the whole session. Its graph
 * returns AGAIN whenever the relay has nothing new (most of the time, between live timer
 * flushes), so it is run one step at a time in this loop, which sleeps briefly on AGAIN
 * and calls the caller's tick between steps. A message iterator that was interrupted
 * cannot be resumed, so the graph is only ever interrupted to stop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <babeltrace2/babeltrace.h>

#include "common/isolate.h"
#include "decode.h"
#include "ingest.h"
#include "ingest_internal.h"

/* How long to sleep when the relay has nothing: well under the live timer's period. */
#define LIVE_IDLE_SLEEP_NS 5000000L

static int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The babeltrace2 error's causes in one line, without the pending error. */
static void take_cause(char *text, size_t size)
{
	const bt_error *error = bt_current_thread_take_error(); /* owned */
	uint64_t count = error ? bt_error_get_cause_count(error) : 0;
	size_t used = 0;

	text[0] = '\0';
	for (uint64_t i = 0; i < count && used + 1 < size; i++) {
		const char *message =
		    bt_error_cause_get_message(bt_error_borrow_cause_by_index(error, i));
		int n = snprintf(text + used, size - used, "%s%s", used ? ": " : "", message);

		if (n < 0)
			break;
		used += (size_t)n < size - used ? (size_t)n : size - used - 1;
	}
	for (char *c = text; *c; c++)
		if (*c == '\n' || *c == '\t')
			*c = ' ';
	if (error)
		bt_error_release(error);
}

static bt_graph *build_live_graph(const char *url, struct po_decoder *decoder, struct po_error *err)
{
	const bt_plugin *ctf = NULL; /* owned */
	const bt_component_class_source *source_class;
	const bt_component_source *source;
	const bt_component_sink *sink;
	bt_value *params = NULL, *inputs = NULL; /* owned, weak */
	bt_graph *graph = bt_graph_create(0);	 /* owned, returned */
	bool ok = graph != NULL;

	ok = ok && bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &ctf) ==
		       BT_PLUGIN_FIND_STATUS_OK;
	source_class =
	    ok ? bt_plugin_borrow_source_component_class_by_name_const(ctf, "lttng-live") : NULL;
	params = bt_value_map_create();
	/* Without it the source waits forever for a session that is not there yet. */
	ok = ok && source_class && params &&
	     bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) ==
		 BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK &&
	     bt_value_array_append_string_element(inputs, url) ==
		 BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK &&
	     bt_value_map_insert_string_entry(params, "session-not-found-action", "end") ==
		 BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK;
	ok = ok && bt_graph_add_source_component(graph, source_class, "live", params,
						 BT_LOGGING_LEVEL_NONE,
						 &source) == BT_GRAPH_ADD_COMPONENT_STATUS_OK;
	ok = ok &&
	     bt_graph_add_simple_sink_component(graph, "sink", NULL, po_decoder_consume, NULL,
						decoder, &sink) == BT_GRAPH_ADD_COMPONENT_STATUS_OK;
	ok = ok && bt_component_source_get_output_port_count(source) == 1 &&
	     bt_graph_connect_ports(
		 graph, bt_component_source_borrow_output_port_by_index_const(source, 0),
		 bt_component_sink_borrow_input_port_by_name_const(sink, "in"),
		 NULL) == BT_GRAPH_CONNECT_PORTS_STATUS_OK;
	bt_value_put_ref(params);
	bt_plugin_put_ref(ctf);
	if (ok)
		return graph;
	{
		char cause[PO_ERROR_MAX / 2];

		take_cause(cause, sizeof(cause));
		po_error_set(err, "%s: cannot set up the live reader%s%s", url,
			     cause[0] ? ": " : "",
			     cause[0] ? cause : " (is babeltrace2's ctf plugin installed?)");
	}
	bt_graph_put_ref(graph);
	return NULL;
}

enum po_status po_ingest_live_run(const struct po_ingest_live_options *options,
				  po_event_fn callback, void *ctx, struct po_ingest_stats *stats,
				  struct po_error *err)
{
	struct po_decoder decoder;
	bt_graph *graph;
	enum po_status status;
	int64_t next_tick;
	int ready_fd = options->ready_fd;
	bool ended = false;

	memset(stats, 0, sizeof(*stats));
	status = po_decoder_init(&decoder, 1, err);
	if (status != PO_STATUS_OK)
		return status;
	decoder.callback = callback;
	decoder.callback_ctx = ctx;
	decoder.stats = stats;
	decoder.callback_status = PO_STATUS_OK;
	graph = build_live_graph(options->url, &decoder, err);
	if (!graph) {
		if (options->ready_fd >= 0)
			close(options->ready_fd);
		po_decoder_fini(&decoder);
		return PO_STATUS_INPUT;
	}
	stats->trace_count = 1;
	next_tick = monotonic_ns() + options->tick_ns;
	while (status == PO_STATUS_OK && !ended) {
		bt_graph_run_once_status run = bt_graph_run_once(graph);

		if (ready_fd >= 0 &&
		    (run == BT_GRAPH_RUN_ONCE_STATUS_OK || run == BT_GRAPH_RUN_ONCE_STATUS_AGAIN)) {
			ssize_t written;

			do
				written = write(ready_fd, "\n", 1);
			while (written < 0 && errno == EINTR);
			close(ready_fd);
			ready_fd = -1;
		}
		if (run == BT_GRAPH_RUN_ONCE_STATUS_END) {
			ended = true;
		} else if (run == BT_GRAPH_RUN_ONCE_STATUS_AGAIN) {
			struct timespec pause = {0, LIVE_IDLE_SLEEP_NS};

			nanosleep(&pause, NULL);
		} else if (run != BT_GRAPH_RUN_ONCE_STATUS_OK) {
			if (decoder.nomem) {
				bt_current_thread_clear_error();
				po_error_set(err, "out of memory");
				status = PO_STATUS_NOMEM;
			} else if (decoder.callback_status != PO_STATUS_OK) {
				bt_current_thread_clear_error();
				status = decoder.callback_status;
				po_error_set(err, "%s: the analysis stopped", options->url);
			} else {
				char cause[PO_ERROR_MAX / 2];

				take_cause(cause, sizeof(cause));
				po_error_set(err, "%s: the live stream failed: %s", options->url,
					     cause[0] ? cause : "babeltrace2 gave no cause");
				status = PO_STATUS_DECODE;
			}
			break;
		}
		if (po_signals_caught()) {
			status = PO_STATUS_INTERRUPTED;
			po_error_set(err, "interrupted by %s", po_signal_name(po_signals_caught()));
			break;
		}
		if (options->tick && (ended || monotonic_ns() >= next_tick)) {
			status = options->tick(options->tick_ctx, ended, err);
			next_tick = monotonic_ns() + options->tick_ns;
		}
	}
	if (ready_fd >= 0)
		close(ready_fd); /* never attached: the reader sees the end of the file */
	bt_graph_put_ref(graph);
	po_decoder_fini(&decoder);
	return status;
}
