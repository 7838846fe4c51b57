/*
 * ingest.c: po_ingest_run(), the babeltrace2 graph: one src.ctf.fs component per trace
 * directory, a flt.utils.muxer, and a simple sink that hands message batches to decode.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/isolate.h"
#include "decode.h"
#include "ingest_internal.h"

/* The component classes the graph is made of. */
struct po_classes {
	const bt_plugin *ctf;			 /* owned */
	const bt_plugin *utils;			 /* owned */
	const bt_component_class_source *source; /* weak: belongs to ctf */
	const bt_component_class_filter *muxer;	 /* weak: belongs to utils */
};

/* One po_ingest_run(). */
struct po_run {
	const char *trace_dir;		    /* weak */
	const struct po_trace_list *traces; /* weak */
	bool *excluded;			    /* owned: traces->count flags (salvage) */
	bool salvage;
	long only_trace; /* >= 0: the graph reads this trace alone */
	struct po_classes classes;
	struct po_decoder decoder;
};

/* What a babeltrace2 failure says: the root cause and the trace it came from (-1: none). */
struct po_bt_failure {
	char cause[PO_ERROR_MAX];
	long trace_index;
};

static void flatten(char *text)
{
	for (; *text; text++) {
		if (*text == '\n' || *text == '\r' || *text == '\t')
			*text = ' ';
	}
}

/* The length of a "key=0x1234" or "key=(nil)" field at text (babeltrace2 object addresses). */
static size_t address_field_len(const char *text)
{
	size_t len = strspn(text, "abcdefghijklmnopqrstuvwxyz0123456789-_");

	if (len == 0 || text[len] != '=')
		return 0;
	if (strncmp(text + len + 1, "(nil)", 5) == 0)
		return len + 6;
	if (strncmp(text + len + 1, "0x", 2) != 0)
		return 0;
	return len + 3 + strspn(text + len + 3, "0123456789abcdefABCDEF");
}

/*
 * Removes babeltrace2's object addresses ("msg-it-addr=0x55d0..., ") from a cause: they
 * mean nothing to the user and make messages differ from run to run.
 */
static void strip_addresses(char *text)
{
	char *at = text;

	while (*at) {
		size_t field = (at == text || at[-1] == ' ') ? address_field_len(at) : 0;

		if (field == 0) {
			at++;
			continue;
		}
		if (strncmp(at + field, ", ", 2) == 0)
			field += 2;
		else if (at - text >= 2 && (at[-2] == ',' || at[-2] == ':'))
			at -= 2, field += 2; /* the last field: drop the separator before it */
		memmove(at, at + field, strlen(at + field) + 1);
	}
}

static const char *cause_component_name(const bt_error_cause *cause)
{
	switch (bt_error_cause_get_actor_type(cause)) {
	case BT_ERROR_CAUSE_ACTOR_TYPE_COMPONENT:
		return bt_error_cause_component_actor_get_component_name(cause);
	case BT_ERROR_CAUSE_ACTOR_TYPE_MESSAGE_ITERATOR:
		return bt_error_cause_message_iterator_actor_get_component_name(cause);
	default:
		return NULL;
	}
}

/* Takes the current thread's babeltrace2 error; the root cause is its first cause. */
static void take_failure(struct po_bt_failure *failure)
{
	const bt_error *error = bt_current_thread_take_error(); /* owned */
	uint64_t count = error ? bt_error_get_cause_count(error) : 0;

	failure->trace_index = -1;
	snprintf(failure->cause, sizeof(failure->cause), "unknown babeltrace2 error");
	for (uint64_t i = 0; i < count; i++) {
		const bt_error_cause *cause = bt_error_borrow_cause_by_index(error, i);
		const char *component = cause_component_name(cause);
		long index;

		if (failure->trace_index < 0 && component &&
		    sscanf(component, "src-%ld", &index) == 1)
			failure->trace_index = index;
		if (i == 0)
			snprintf(failure->cause, sizeof(failure->cause), "%s",
				 bt_error_cause_get_message(cause));
	}
	flatten(failure->cause);
	strip_addresses(failure->cause);
	if (error)
		bt_error_release(error);
}

static enum po_status classes_find(struct po_classes *classes, struct po_error *err)
{
	if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &classes->ctf) !=
		BT_PLUGIN_FIND_STATUS_OK ||
	    bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE,
			   &classes->utils) != BT_PLUGIN_FIND_STATUS_OK) {
		bt_current_thread_clear_error();
		po_error_set(err, "Failed to load the babeltrace2 plugins \"ctf\" and \"utils\" "
				  "(is babeltrace2 installed?)");
		return PO_STATUS_INTERNAL;
	}
	classes->source = bt_plugin_borrow_source_component_class_by_name_const(classes->ctf, "fs");
	classes->muxer =
	    bt_plugin_borrow_filter_component_class_by_name_const(classes->utils, "muxer");
	if (!classes->source || !classes->muxer) {
		po_error_set(err, "Failed to find the babeltrace2 components src.ctf.fs and "
				  "flt.utils.muxer");
		return PO_STATUS_INTERNAL;
	}
	return PO_STATUS_OK;
}

static void classes_fini(struct po_classes *classes)
{
	bt_plugin_put_ref(classes->ctf);
	bt_plugin_put_ref(classes->utils);
}

/* The sink's consuming function: one batch of messages per call. */
static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *iterator,
								  void *data)
{
	struct po_decoder *decoder = data;
	bt_message_array_const messages;
	uint64_t count;
	bool go_on = true;

	switch (bt_message_iterator_next(iterator, &messages, &count)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		break;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
	default:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
	for (uint64_t i = 0; i < count; i++) {
		if (go_on)
			go_on = po_decoder_handle(decoder, messages[i]);
		bt_message_put_ref(messages[i]);
	}
	return go_on ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK
		     : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
}

/* The parameters of src.ctf.fs: the directory, and the trace named after its index. */
static bt_value *source_params(const char *path, size_t index)
{
	bt_value *params = bt_value_map_create(); /* owned, returned */
	bt_value *inputs = NULL;		  /* weak: belongs to params */
	char name[32];

	snprintf(name, sizeof(name), "%zu", index);
	if (!params || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) ||
	    bt_value_array_append_string_element(inputs, path) ||
	    bt_value_map_insert_string_entry(params, "trace-name", name)) {
		bt_value_put_ref(params);
		return NULL;
	}
	return params;
}

static bool add_source(struct po_run *run, bt_graph *graph, size_t index,
		       const bt_component_source **source)
{
	bt_value *params = source_params(run->traces->paths[index], index); /* owned */
	char name[32];
	bool ok;

	if (!params)
		return false;
	snprintf(name, sizeof(name), "src-%zu", index);
	po_isolate_progress("decoding", run->traces->paths[index]);
	ok = bt_graph_add_source_component(graph, run->classes.source, name, params,
					   BT_LOGGING_LEVEL_NONE,
					   source) == BT_GRAPH_ADD_COMPONENT_STATUS_OK;
	bt_value_put_ref(params);
	return ok;
}

static bool connect_source(bt_graph *graph, const bt_component_source *source,
			   const bt_component_filter *muxer)
{
	uint64_t count = bt_component_source_get_output_port_count(source);

	for (uint64_t i = 0; i < count; i++) {
		uint64_t free_port = bt_component_filter_get_input_port_count(muxer) - 1;

		const bt_port_output *out =
		    bt_component_source_borrow_output_port_by_index_const(source, i);
		const bt_port_input *in =
		    bt_component_filter_borrow_input_port_by_index_const(muxer, free_port);

		if (bt_graph_connect_ports(graph, out, in, NULL))
			return false;
	}
	return true;
}

/* Builds the graph of the traces not excluded; false with a babeltrace2 error pending. */
static bool build_graph(struct po_run *run, bt_graph *graph)
{
	const bt_component_filter *muxer;
	const bt_component_sink *sink;

	if (bt_graph_add_filter_component(graph, run->classes.muxer, "muxer", NULL,
					  BT_LOGGING_LEVEL_NONE, &muxer) ||
	    bt_graph_add_simple_sink_component(graph, "sink", NULL, consume, NULL, &run->decoder,
					       &sink))
		return false;
	for (size_t i = 0; i < run->traces->count; i++) {
		const bt_component_source *source;

		if (run->excluded[i] || (run->only_trace >= 0 && (size_t)run->only_trace != i))
			continue;
		if (!add_source(run, graph, i, &source) || !connect_source(graph, source, muxer))
			return false;
	}
	return bt_graph_connect_ports(
		   graph, bt_component_filter_borrow_output_port_by_name_const(muxer, "out"),
		   bt_component_sink_borrow_input_port_by_name_const(sink, "in"),
		   NULL) == BT_GRAPH_CONNECT_PORTS_STATUS_OK;
}

/* Builds and runs one graph; false with a babeltrace2 error pending. */
static bool run_graph(struct po_run *run)
{
	bt_graph *graph = bt_graph_create(0); /* owned */
	bt_graph_run_status status = BT_GRAPH_RUN_STATUS_ERROR;

	if (graph && build_graph(run, graph)) {
		do {
			status = bt_graph_run(graph);
		} while (status == BT_GRAPH_RUN_STATUS_AGAIN);
	}
	bt_graph_put_ref(graph);
	return status == BT_GRAPH_RUN_STATUS_OK;
}

static void stats_reset_counts(struct po_ingest_stats *stats)
{
	stats->events = 0;
	stats->profopt_events = 0;
	stats->streams = 0;
	stats->no_clock_events = 0;
	stats->malformed_events = 0;
	stats->foreign_events = 0;
	stats->discarded_messages = 0;
}

static void note_skipped(struct po_ingest_stats *stats, const char *path, const char *cause)
{
	size_t used = strlen(stats->skipped_note);

	snprintf(stats->skipped_note + used, sizeof(stats->skipped_note) - used,
		 "%sskipped trace path=%s: %s", used ? "; " : "", path, cause);
	stats->skipped_traces++;
	stats->partial = true;
}

/*
 * When the causes do not name the trace (the muxer may report a source's failure as its
 * own), reads each remaining trace alone, decoding nothing, until one fails.
 */
static void identify_failure(struct po_run *run, struct po_bt_failure *failure)
{
	struct po_bt_failure probe;

	if (failure->trace_index >= 0)
		return;
	run->decoder.probing = true;
	for (size_t i = 0; i < run->traces->count && failure->trace_index < 0; i++) {
		if (run->excluded[i])
			continue;
		run->only_trace = (long)i;
		if (run_graph(run))
			continue;
		take_failure(&probe);
		failure->trace_index = (long)i;
		if (probe.trace_index == (long)i)
			memcpy(failure->cause, probe.cause, sizeof(failure->cause));
	}
	run->decoder.probing = false;
	run->only_trace = -1;
}

/* Salvage: leaves the failed trace out; the others replay what they already delivered. */
static bool salvage_exclude(struct po_run *run, const struct po_bt_failure *failure)
{
	size_t remaining = 0;

	if (!run->salvage || failure->trace_index < 0 ||
	    (size_t)failure->trace_index >= run->traces->count)
		return false;
	run->excluded[failure->trace_index] = true;
	note_skipped(run->decoder.stats, run->traces->paths[failure->trace_index], failure->cause);
	for (size_t i = 0; i < run->traces->count; i++) {
		run->decoder.traces[i].to_skip = run->decoder.traces[i].delivered;
		remaining += !run->excluded[i];
	}
	po_decoder_reset_classes(&run->decoder);
	stats_reset_counts(run->decoder.stats);
	return remaining > 0;
}

/*
 * Runs the graph, then waits until the callback has had every event queued so far: a
 * failure of the callback counts as the graph's. False with a babeltrace2 error pending
 * unless the callback failed.
 */
static bool run_graph_drained(struct po_run *run)
{
	bool ok = run_graph(run);

	if (run->decoder.pipe) {
		enum po_status status = po_pipe_drain(run->decoder.pipe);

		if (status != PO_STATUS_OK && run->decoder.callback_status == PO_STATUS_OK)
			run->decoder.callback_status = status;
	}
	return ok && run->decoder.callback_status == PO_STATUS_OK;
}

static enum po_status run_all(struct po_run *run, struct po_error *err)
{
	struct po_bt_failure failure;

	for (;;) {
		if (run_graph_drained(run))
			return PO_STATUS_OK;
		if (run->decoder.callback_status != PO_STATUS_OK || run->decoder.nomem) {
			bt_current_thread_clear_error();
			if (run->decoder.nomem) {
				po_error_set(err, "Failed to decode trace: out of memory");
				return PO_STATUS_NOMEM;
			}
			return run->decoder.callback_status;
		}
		take_failure(&failure);
		identify_failure(run, &failure);
		if (!salvage_exclude(run, &failure))
			break;
	}
	po_error_set(err, "Failed to decode trace: path=%s: %s",
		     failure.trace_index >= 0 && (size_t)failure.trace_index < run->traces->count
			 ? run->traces->paths[failure.trace_index]
			 : run->trace_dir,
		     failure.cause);
	return PO_STATUS_DECODE;
}

static enum po_status run_setup(struct po_run *run, po_event_fn callback, void *ctx,
				struct po_ingest_stats *stats, struct po_error *err)
{
	enum po_status status;

	run->excluded = calloc(run->traces->count ? run->traces->count : 1, sizeof(bool));
	if (!run->excluded) {
		po_error_set(err, "Failed to decode trace: out of memory");
		return PO_STATUS_NOMEM;
	}
	status = po_decoder_init(&run->decoder, run->traces->count, err);
	if (status != PO_STATUS_OK)
		return status;
	run->decoder.callback = callback;
	run->decoder.callback_ctx = ctx;
	run->decoder.stats = stats;
	return classes_find(&run->classes, err);
}

/*
 * run_all() with the callback on a second thread, so that decoding and the callback's work
 * (the model) overlap; on one thread when the second cannot be started.
 */
static enum po_status run_piped(struct po_run *run, struct po_error *err)
{
	struct po_pipe pipe;
	enum po_status status;

	if (!po_pipe_start(&pipe, run->decoder.callback, run->decoder.callback_ctx))
		return run_all(run, err);
	run->decoder.pipe = &pipe;
	status = run_all(run, err);
	po_pipe_stop(&pipe);
	run->decoder.pipe = NULL;
	return status;
}

enum po_status po_ingest_run(const char *trace_dir, const struct po_ingest_options *options,
			     po_event_fn callback, void *ctx, struct po_ingest_stats *stats,
			     struct po_error *err)
{
	struct po_trace_list traces = {0};
	struct po_run run = {.trace_dir = trace_dir, .traces = &traces, .only_trace = -1};
	enum po_status status;

	memset(stats, 0, sizeof(*stats));
	run.salvage = options && options->salvage;
	status = po_trace_list_find(trace_dir, &traces, err);
	if (status == PO_STATUS_OK && traces.count == 0) {
		po_error_set(err, "%s: not a trace (no CTF \"metadata\" file below it)", trace_dir);
		status = PO_STATUS_INPUT;
	}
	stats->trace_count = (int64_t)traces.count;
	if (status == PO_STATUS_OK)
		status = run_setup(&run, callback, ctx, stats, err);
	if (status == PO_STATUS_OK)
		status = run_piped(&run, err);
	po_decoder_fini(&run.decoder);
	classes_fini(&run.classes);
	free(run.excluded);
	po_trace_list_fini(&traces);
	return status;
}
