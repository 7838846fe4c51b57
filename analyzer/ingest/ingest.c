/*
 * ingest.c: po_ingest_run(): lanes of babeltrace2 graphs, each with one src.ctf.fs
 * component per trace directory (of which it connects its share of the streams), a
 * flt.utils.muxer, and a simple sink that hands message batches to decode.c; the lanes'
 * typed events are merged in time order on the calling thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/arena.h"
#include "../common/isolate.h"
#include "decode.h"
#include "ingest_internal.h"
#include "kineto_source.h"

/* The component classes a graph is made of; each lane loads its own. */
struct po_classes {
	const bt_plugin *ctf;			 /* owned */
	const bt_plugin *utils;			 /* owned */
	const bt_component_class_source *source; /* weak: belongs to ctf */
	const bt_component_class_filter *muxer;	 /* weak: belongs to utils */
	bt_component_class_source *kineto;	 /* owned: source.profopt.kineto */
};

/* What a babeltrace2 failure says: the root cause and the trace it came from (-1: none). */
struct po_bt_failure {
	char cause[PO_ERROR_MAX];
	long trace_index;
};

#define PO_LANES_MAX 4 /* decoding threads at most */

struct po_run;

/*
 * A lane: one babeltrace2 graph on its own thread, decoding a share of the streams (or,
 * with salvage or many traces, of the traces) into its queue. The lanes read every trace directory
 * and number the units (streams, or traces) the same way; lane L of K connects units L, L+K, ...
 */
struct po_lane {
	struct po_run *run; /* weak */
	size_t index;
	struct po_classes classes;
	struct po_decoder decoder;
	struct po_ingest_stats stats; /* this lane's counts */

	struct po_kineto_counts kineto; /* what its torch.profiler sources left out */
	struct po_pipe pipe;
	pthread_t thread;
	long only_trace; /* >= 0: the graph reads this trace alone (a probe) */
	size_t units;	 /* units this lane connected */
	/* Known once its queue is done: */
	bool failed;
	struct po_bt_failure failure;
};

/* One po_ingest_run(). */
struct po_run {
	const char *trace_dir;		    /* weak */
	const struct po_trace_list *traces; /* weak */
	bool *excluded;			    /* owned: traces->count flags (salvage) */
	int64_t *delivered;		    /* owned: events of each trace handed to the callback */
	bool salvage;
	/*
	 * Lanes take whole traces, not streams: with salvage (each trace's events keep one
	 * order across restarts), and with many traces (a process directory each), where
	 * every lane opening every trace for its share of the streams would parse each
	 * trace's metadata once per lane.
	 */
	bool whole_traces;
	bool inline_decoding;  /* no lane threads could be started: one lane, callback inline */
	size_t lane_count;     /* lanes in use: 1 once decoding fell back to this thread */
	size_t lanes_made;     /* lanes allocated and set up */
	struct po_lane *lanes; /* owned: lanes_made */
	po_event_fn callback;
	void *callback_ctx;	       /* weak */
	struct po_ingest_stats *stats; /* weak */
};

/*
 * libbabeltrace2 counts references without atomics: what plugins and component classes
 * share between lanes (the plugin's shared object and its registry) is only touched with
 * this lock held, when plugins are found or released and graphs are built or destroyed.
 */
static pthread_mutex_t po_bt_shared_lock = PTHREAD_MUTEX_INITIALIZER;

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
	classes->kineto = po_kineto_class_create();
	if (!classes->source || !classes->muxer || !classes->kineto) {
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
	bt_component_class_source_put_ref(classes->kineto);
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

static bool add_source(struct po_lane *lane, bt_graph *graph, size_t index,
		       const bt_component_source **source)
{
	const char *path = lane->run->traces->paths[index];
	bt_value *params = source_params(path, index); /* owned */
	char name[32];
	bool ok;

	if (!params)
		return false;
	snprintf(name, sizeof(name), "src-%zu", index);
	po_isolate_progress("decoding", path);
	if (po_trace_is_kineto(path))
		ok = bt_graph_add_source_component_with_initialize_method_data(
			 graph, lane->classes.kineto, name, params, &lane->kineto,
			 BT_LOGGING_LEVEL_NONE, source) == BT_GRAPH_ADD_COMPONENT_STATUS_OK;
	else
		ok = bt_graph_add_source_component(graph, lane->classes.source, name, params,
						   BT_LOGGING_LEVEL_NONE,
						   source) == BT_GRAPH_ADD_COMPONENT_STATUS_OK;
	bt_value_put_ref(params);
	return ok;
}

/* Whether the lane reads the unit numbered `unit`; a probe reads everything it adds. */
static bool lane_owns(const struct po_lane *lane, size_t unit)
{
	return lane->only_trace >= 0 || unit % lane->run->lane_count == lane->index;
}

/*
 * The muxers of a lane. babeltrace2 2.0's flt.utils.muxer looks at every input for each
 * message it forwards, so one muxer over N streams costs N per event, and a trace of
 * thousands of process directories was quadratic. Streams go to muxers of at most
 * MUX_FAN_IN inputs, whose outputs are merged again by muxers of MUX_FAN_IN, up to one:
 * about MUX_FAN_IN per level and log(N) levels. A lane of up to MUX_FAN_IN streams has one
 * muxer, as before.
 */
#define MUX_FAN_IN 32

/* From this many traces, lanes take whole traces (po_run.whole_traces). */
#define PO_WHOLE_TRACES_FROM 16

struct mux_level {
	const bt_port_output **outputs; /* owned array; the ports belong to the graph */
	size_t count;
	size_t capacity;
	const bt_component_filter *open; /* the muxer taking inputs now; NULL */
	size_t open_inputs;
	size_t muxers; /* for the muxers' names */
};

/* Connects out to the level's open muxer, adding a muxer when it is full. */
static bool mux_connect(bt_graph *graph, const struct po_lane *lane, struct mux_level *level,
			int depth, const bt_port_output *out)
{
	const bt_port_input *in;
	char name[48];

	if (!level->open || level->open_inputs == MUX_FAN_IN) {
		const bt_component_filter *muxer;

		snprintf(name, sizeof(name), "muxer-%d-%zu", depth, level->muxers++);
		if (bt_graph_add_filter_component(graph, lane->classes.muxer, name, NULL,
						  BT_LOGGING_LEVEL_NONE, &muxer) ||
		    po_array_reserve((void **)&level->outputs, &level->capacity, level->count + 1,
				     sizeof(*level->outputs)) != PO_STATUS_OK)
			return false;
		level->outputs[level->count++] =
		    bt_component_filter_borrow_output_port_by_name_const(muxer, "out");
		level->open = muxer;
		level->open_inputs = 0;
	}
	in = bt_component_filter_borrow_input_port_by_index_const(
	    level->open, bt_component_filter_get_input_port_count(level->open) - 1);
	level->open_inputs++;
	return bt_graph_connect_ports(graph, out, in, NULL) == BT_GRAPH_CONNECT_PORTS_STATUS_OK;
}

/*
 * Merges the muxers of the first level until one is left and connects it to the sink;
 * frees the levels' arrays.
 */
static bool mux_finish(bt_graph *graph, const struct po_lane *lane, struct mux_level *level,
		       const bt_component_sink *sink)
{
	int depth = 1;
	bool ok = level->count > 0;

	while (ok && level->count > 1) {
		struct mux_level next = {0};

		for (size_t i = 0; ok && i < level->count; i++)
			ok = mux_connect(graph, lane, &next, depth, level->outputs[i]);
		free(level->outputs);
		*level = next;
		depth++;
	}
	ok = ok &&
	     bt_graph_connect_ports(graph, level->outputs[0],
				    bt_component_sink_borrow_input_port_by_name_const(sink, "in"),
				    NULL) == BT_GRAPH_CONNECT_PORTS_STATUS_OK;
	free(level->outputs);
	level->outputs = NULL;
	return ok;
}

/* Connects the source's streams this lane owns to the muxers; *unit counts every stream. */
static bool connect_source(struct po_lane *lane, bt_graph *graph, const bt_component_source *source,
			   struct mux_level *level, size_t *unit)
{
	uint64_t count = bt_component_source_get_output_port_count(source);

	for (uint64_t i = 0; i < count; i++) {
		if (!lane->run->whole_traces && !lane_owns(lane, (*unit)++))
			continue;
		if (!mux_connect(graph, lane, level, 0,
				 bt_component_source_borrow_output_port_by_index_const(source, i)))
			return false;
		lane->units++;
	}
	return true;
}

/*
 * Builds the lane's graph over the traces not excluded; false with a babeltrace2 error
 * pending. Units are streams, numbered in trace order then port order, which every lane
 * sees alike; with salvage they are whole traces, so that each trace's events keep one
 * order across restarts.
 */
static bool build_graph(struct po_lane *lane, bt_graph *graph)
{
	const struct po_run *run = lane->run;
	const bt_component_sink *sink;
	struct mux_level level = {0};
	size_t unit = 0;
	bool ok;

	lane->units = 0;
	if (bt_graph_add_simple_sink_component(graph, "sink", NULL, po_decoder_consume, NULL,
					       &lane->decoder, &sink))
		return false;
	ok = true;
	for (size_t i = 0; ok && i < run->traces->count; i++) {
		const bt_component_source *source;

		if (run->excluded[i] || (lane->only_trace >= 0 && (size_t)lane->only_trace != i))
			continue;
		if (run->whole_traces && !lane_owns(lane, unit++))
			continue;
		ok = add_source(lane, graph, i, &source) &&
		     connect_source(lane, graph, source, &level, &unit);
	}
	if (ok && level.count == 0) {
		/* nothing for this lane: a muxer with no input ends at once */
		const bt_component_filter *muxer;

		ok = bt_graph_add_filter_component(graph, lane->classes.muxer, "muxer", NULL,
						   BT_LOGGING_LEVEL_NONE, &muxer) == 0 &&
		     po_array_reserve((void **)&level.outputs, &level.capacity, 1,
				      sizeof(*level.outputs)) == PO_STATUS_OK;
		if (ok)
			level.outputs[level.count++] =
			    bt_component_filter_borrow_output_port_by_name_const(muxer, "out");
	}
	if (!ok) {
		free(level.outputs);
		return false;
	}
	return mux_finish(graph, lane, &level, sink);
}

/* Builds and runs the lane's graph; false with a babeltrace2 error pending. */
static bool run_graph(struct po_lane *lane)
{
	bt_graph *graph; /* owned */
	bt_graph_run_status status = BT_GRAPH_RUN_STATUS_ERROR;
	bool built;

	pthread_mutex_lock(&po_bt_shared_lock);
	graph = bt_graph_create(0);
	built = graph && build_graph(lane, graph);
	pthread_mutex_unlock(&po_bt_shared_lock);
	if (built && lane->units == 0)
		status = BT_GRAPH_RUN_STATUS_OK; /* nothing of the trace is this lane's */
	else if (built) {
		do {
			status = bt_graph_run(graph);
		} while (status == BT_GRAPH_RUN_STATUS_AGAIN);
	}
	pthread_mutex_lock(&po_bt_shared_lock);
	bt_graph_put_ref(graph);
	pthread_mutex_unlock(&po_bt_shared_lock);
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
	stats->unknown_profopt_events = 0;
	stats->discarded_messages = 0;
	stats->kineto_traces = 0;
	stats->kineto_records_left_out = 0;
	stats->kineto_names_cut = 0;
	stats->kineto_python_calls_left_out = 0;
	stats->kineto_collectives_without_kernel = 0;
}

static void stats_add_kineto(struct po_ingest_stats *to, const struct po_kineto_counts *from)
{
	to->kineto_traces += from->traces;
	to->kineto_records_left_out += from->records_left_out;
	to->kineto_names_cut += from->names_cut;
	to->kineto_python_calls_left_out += from->python_calls_left_out;
	to->kineto_collectives_without_kernel += from->collectives_without_kernel;
}

static void stats_add_counts(struct po_ingest_stats *to, const struct po_ingest_stats *from)
{
	to->events += from->events;
	to->profopt_events += from->profopt_events;
	to->streams += from->streams;
	to->no_clock_events += from->no_clock_events;
	to->malformed_events += from->malformed_events;
	to->foreign_events += from->foreign_events;
	to->unknown_profopt_events += from->unknown_profopt_events;
	if (!to->unknown_profopt_name[0])
		memcpy(to->unknown_profopt_name, from->unknown_profopt_name,
		       sizeof(to->unknown_profopt_name));
	to->discarded_messages += from->discarded_messages;
}

/* Copies text with every "ROOT/" in it removed: babeltrace2's causes name files by path. */
static void strip_root(char *out, size_t size, const char *text, const char *root)
{
	size_t root_len = strlen(root), used = 0;

	while (root_len > 1 && root[root_len - 1] == '/')
		root_len--;
	while (*text && used + 1 < size) {
		if (root_len && strncmp(text, root, root_len) == 0 && text[root_len] == '/') {
			text += root_len + 1;
			continue;
		}
		out[used++] = *text++;
	}
	out[used] = '\0';
}

/*
 * The note goes into the report, which names traces relative to the trace directory
 * (reports are published; the machine's paths are not theirs to show).
 */
static void note_skipped(struct po_run *run, size_t index, const char *cause)
{
	struct po_ingest_stats *stats = run->stats;
	size_t used = strlen(stats->skipped_note);
	char relative_cause[PO_ERROR_MAX];

	strip_root(relative_cause, sizeof(relative_cause), cause, run->trace_dir);
	snprintf(stats->skipped_note + used, sizeof(stats->skipped_note) - used,
		 "%sskipped trace path=%s: %s", used ? "; " : "",
		 po_trace_relative_path(run->traces->paths[index], run->trace_dir), relative_cause);
	stats->skipped_traces++;
	stats->partial = true;
}

/*
 * When the causes do not name the trace (the muxer may report a source's failure as its
 * own), reads each remaining trace alone, decoding nothing, until one fails.
 */
static void identify_failure(struct po_lane *lane, struct po_bt_failure *failure)
{
	const struct po_run *run = lane->run;
	struct po_bt_failure probe;

	if (failure->trace_index >= 0)
		return;
	lane->decoder.probing = true;
	for (size_t i = 0; i < run->traces->count && failure->trace_index < 0; i++) {
		if (run->excluded[i])
			continue;
		lane->only_trace = (long)i;
		if (run_graph(lane))
			continue;
		take_failure(&probe);
		failure->trace_index = (long)i;
		if (probe.trace_index == (long)i)
			memcpy(failure->cause, probe.cause, sizeof(failure->cause));
	}
	lane->decoder.probing = false;
	lane->only_trace = -1;
}

/* Runs the lane's graph; a failure that is not a cancellation is kept in lane->failure. */
static void lane_decode(struct po_lane *lane)
{
	if (run_graph(lane))
		return;
	if (lane->decoder.nomem || lane->decoder.callback_status != PO_STATUS_OK ||
	    (lane->decoder.pipe && po_pipe_cancelled(lane->decoder.pipe))) {
		bt_current_thread_clear_error();
		return;
	}
	take_failure(&lane->failure);
	identify_failure(lane, &lane->failure);
	lane->failed = true;
}

static void *lane_main(void *data)
{
	struct po_lane *lane = data;

	lane_decode(lane);
	po_pipe_finish(&lane->pipe);
	return NULL;
}

/* ---- merging the lanes ---- */

/* Where the merge is in one lane's queue. */
struct po_cursor {
	struct po_pipe_batch *batch; /* weak: taken from the lane's queue; NULL: none */
	size_t next;
	bool ended;
};

/* Points the cursor at its lane's next event, waiting for one; false once the lane ended. */
static bool cursor_ready(struct po_cursor *cursor, struct po_pipe *pipe)
{
	if (cursor->ended)
		return false;
	if (cursor->batch && cursor->next == cursor->batch->count) {
		po_pipe_release(pipe);
		cursor->batch = NULL;
	}
	if (!cursor->batch) {
		cursor->batch = po_pipe_take(pipe);
		cursor->next = 0;
		cursor->ended = !cursor->batch;
	}
	return !cursor->ended;
}

/* Whether a's next event comes before b's: by merge key, then by trace. */
static bool cursor_before(const struct po_cursor *a, const struct po_cursor *b)
{
	int64_t a_key = a->batch->keys[a->next], b_key = b->batch->keys[b->next];

	if (a_key != b_key)
		return a_key < b_key;
	return a->batch->events[a->next].trace_id < b->batch->events[b->next].trace_id;
}

/*
 * The lane whose next event comes first; -1 once every lane ended, or once a lane that
 * failed has handed over all it decoded (the others are then stopped).
 */
static long merge_pick(struct po_run *run, struct po_cursor *cursors)
{
	long best = -1;

	for (size_t l = 0; l < run->lane_count; l++) {
		const struct po_lane *lane = &run->lanes[l];

		if (!cursor_ready(&cursors[l], &run->lanes[l].pipe)) {
			if (lane->failed || lane->decoder.nomem)
				return -1;
			continue;
		}
		if (best < 0 || cursor_before(&cursors[l], &cursors[best]))
			best = (long)l;
	}
	return best;
}

/*
 * Hands the lanes' events to the callback in key order until every lane ended, one
 * failed, or the callback failed; then cancels the lanes still decoding.
 */
static enum po_status merge_lanes(struct po_run *run)
{
	struct po_cursor cursors[PO_LANES_MAX] = {0};
	enum po_status status = PO_STATUS_OK;
	long lane;

	while (status == PO_STATUS_OK && (lane = merge_pick(run, cursors)) >= 0) {
		struct po_cursor *cursor = &cursors[lane];
		const struct po_event *event = &cursor->batch->events[cursor->next++];

		run->delivered[event->trace_id]++;
		status = run->callback(run->callback_ctx, event);
	}
	for (size_t l = 0; l < run->lane_count; l++)
		po_pipe_cancel(&run->lanes[l].pipe);
	return status;
}

/* ---- attempts: every lane over the traces not excluded ---- */

static void lane_reset(struct po_lane *lane)
{
	po_decoder_reset_classes(&lane->decoder);
	memset(&lane->stats, 0, sizeof(lane->stats));
	memset(&lane->kineto, 0, sizeof(lane->kineto));
	lane->failed = false;
	lane->only_trace = -1;
	lane->decoder.callback_status = PO_STATUS_OK;
	lane->decoder.nomem = false;
}

/* Starts every lane's thread, or none; false when out of memory or threads. */
static bool lanes_start(struct po_run *run)
{
	size_t started = 0;

	for (; started < run->lane_count; started++) {
		struct po_lane *lane = &run->lanes[started];

		if (!po_pipe_init(&lane->pipe))
			break;
		lane->decoder.pipe = &lane->pipe;
		if (pthread_create(&lane->thread, NULL, lane_main, lane) != 0) {
			po_pipe_fini(&lane->pipe);
			break;
		}
	}
	if (started == run->lane_count)
		return true;
	for (size_t l = 0; l < started; l++) {
		po_pipe_cancel(&run->lanes[l].pipe);
		pthread_join(run->lanes[l].thread, NULL);
		po_pipe_fini(&run->lanes[l].pipe);
	}
	for (size_t l = 0; l < run->lane_count; l++) {
		run->lanes[l].decoder.pipe = NULL;
		lane_reset(&run->lanes[l]);
	}
	return false;
}

/* One attempt; PO_STATUS_DECODE with *failure set when a trace failed to decode. */
static enum po_status run_attempt(struct po_run *run, struct po_bt_failure *failure)
{
	enum po_status status = PO_STATUS_OK;
	const struct po_lane *failed = NULL;

	for (size_t l = 0; l < run->lane_count; l++)
		lane_reset(&run->lanes[l]);
	if (!run->inline_decoding) {
		if (lanes_start(run)) {
			status = merge_lanes(run);
			for (size_t l = 0; l < run->lane_count; l++) {
				pthread_join(run->lanes[l].thread, NULL);
				po_pipe_fini(&run->lanes[l].pipe);
				run->lanes[l].decoder.pipe = NULL;
			}
		} else {
			run->lane_count = 1; /* no threads: decode and call back on this one */
			run->inline_decoding = true;
		}
	}
	if (run->inline_decoding) {
		lane_decode(&run->lanes[0]);
		status = run->lanes[0].decoder.callback_status;
	}
	stats_reset_counts(run->stats);
	for (size_t l = 0; l < run->lane_count; l++) {
		stats_add_counts(run->stats, &run->lanes[l].stats);
		stats_add_kineto(run->stats, &run->lanes[l].kineto);
		if (run->lanes[l].decoder.nomem && status == PO_STATUS_OK)
			status = PO_STATUS_NOMEM;
		if (run->lanes[l].failed && !failed)
			failed = &run->lanes[l];
	}
	if (status == PO_STATUS_OK && failed) {
		*failure = failed->failure;
		status = PO_STATUS_DECODE;
	}
	return status;
}

/* Salvage: leaves the failed trace out; the others replay what they already delivered. */
static bool salvage_exclude(struct po_run *run, const struct po_bt_failure *failure)
{
	size_t remaining = 0;

	if (!run->salvage || failure->trace_index < 0 ||
	    (size_t)failure->trace_index >= run->traces->count)
		return false;
	run->excluded[failure->trace_index] = true;
	note_skipped(run, (size_t)failure->trace_index, failure->cause);
	for (size_t i = 0; i < run->traces->count; i++)
		remaining += !run->excluded[i];
	for (size_t l = 0; l < run->lane_count; l++) {
		for (size_t i = 0; i < run->traces->count; i++) {
			struct po_trace_state *state = &run->lanes[l].decoder.traces[i];

			if (run->inline_decoding)
				run->delivered[i] = state->delivered;
			state->to_skip = run->delivered[i];
			state->delivered = run->delivered[i];
		}
	}
	return remaining > 0;
}

/* The whole of what babeltrace2 says when its source cannot read a trace's metadata. */
#define CANNOT_CREATE "Cannot create trace for `"

static enum po_status run_all(struct po_run *run, struct po_error *err)
{
	struct po_bt_failure failure;
	enum po_status status;
	const char *path;

	for (;;) {
		status = run_attempt(run, &failure);
		if (status == PO_STATUS_NOMEM) {
			po_error_set(err, "Failed to decode trace: out of memory");
			return status;
		}
		if (status != PO_STATUS_DECODE)
			return status;
		if (!salvage_exclude(run, &failure))
			break;
	}
	path = failure.trace_index >= 0 && (size_t)failure.trace_index < run->traces->count
		   ? run->traces->paths[failure.trace_index]
		   : run->trace_dir;
	/* babeltrace2 2.0.4 says no more, and names the directory by its absolute path. */
	if (strncmp(failure.cause, CANNOT_CREATE, sizeof(CANNOT_CREATE) - 1) == 0)
		po_error_set(err,
			     "Failed to decode trace: path=%s: %s/metadata cannot be parsed, or "
			     "does not declare what the first packet of a stream file names: the "
			     "metadata is damaged or incomplete",
			     path, path);
	else
		po_error_set(err, "Failed to decode trace: path=%s: %s", path, failure.cause);
	return PO_STATUS_DECODE;
}

/* How many lanes: asked for, else one per online CPU, at most PO_LANES_MAX. */
static size_t lane_count_for(const struct po_ingest_options *options, size_t trace_count,
			     bool whole_traces)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t count = options && options->decode_threads > 0 ? (size_t)options->decode_threads
		       : cpus > 0			      ? (size_t)cpus
							      : 1;

	if (count > PO_LANES_MAX)
		count = PO_LANES_MAX;
	if (whole_traces && count > trace_count)
		count = trace_count; /* lanes take whole traces */
	return count ? count : 1;
}

static enum po_status lanes_init(struct po_run *run, struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;

	run->lanes = calloc(run->lane_count, sizeof(*run->lanes));
	run->lanes_made = run->lanes ? run->lane_count : 0;
	if (!run->lanes) {
		po_error_set(err, "Failed to decode trace: out of memory");
		return PO_STATUS_NOMEM;
	}
	for (size_t l = 0; l < run->lane_count && status == PO_STATUS_OK; l++) {
		struct po_lane *lane = &run->lanes[l];

		lane->run = run;
		lane->index = l;
		lane->only_trace = -1;
		status = po_decoder_init(&lane->decoder, run->traces->count, err);
		if (status != PO_STATUS_OK)
			break;
		lane->decoder.callback = run->callback;
		lane->decoder.callback_ctx = run->callback_ctx;
		lane->decoder.stats = &lane->stats;
		pthread_mutex_lock(&po_bt_shared_lock);
		status = classes_find(&lane->classes, err);
		pthread_mutex_unlock(&po_bt_shared_lock);
	}
	return status;
}

static void lanes_fini(struct po_run *run)
{
	if (!run->lanes)
		return;
	pthread_mutex_lock(&po_bt_shared_lock);
	for (size_t l = 0; l < run->lanes_made; l++) {
		po_decoder_fini(&run->lanes[l].decoder);
		classes_fini(&run->lanes[l].classes);
	}
	pthread_mutex_unlock(&po_bt_shared_lock);
	free(run->lanes);
}

static int compare_path_pointers(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Leaves out the traces the caller named (copies of another trace). */
static void exclude_skipped(struct po_run *run, const struct po_ingest_options *options)
{
	for (size_t i = 0; i < options->skip_trace_count; i++) {
		const char *const *found =
		    bsearch(&options->skip_traces[i], run->traces->paths, run->traces->count,
			    sizeof(*run->traces->paths), compare_path_pointers);

		if (found)
			run->excluded[found - (const char *const *)run->traces->paths] = true;
	}
}

/* Each trace's pid space, in every lane's decoder (pid_spaces.c). */
static enum po_status set_pid_spaces(struct po_run *run, struct po_error *err)
{
	int32_t *bases = calloc(run->traces->count, sizeof(*bases));
	enum po_status status;

	if (!bases) {
		po_error_set(err, "Failed to decode trace: out of memory");
		return PO_STATUS_NOMEM;
	}
	status = po_trace_list_pid_bases(run->trace_dir, run->traces, bases, err);
	for (size_t l = 0; status == PO_STATUS_OK && l < run->lanes_made; l++) {
		for (size_t i = 0; i < run->traces->count; i++)
			run->lanes[l].decoder.traces[i].pid_base = bases[i];
	}
	free(bases);
	return status;
}

enum po_status po_ingest_run(const char *trace_dir, const struct po_ingest_options *options,
			     po_event_fn callback, void *ctx, struct po_ingest_stats *stats,
			     struct po_error *err)
{
	struct po_trace_list traces = {0};
	struct po_run run = {.trace_dir = trace_dir,
			     .traces = &traces,
			     .callback = callback,
			     .callback_ctx = ctx,
			     .stats = stats};
	enum po_status status;

	memset(stats, 0, sizeof(*stats));
	run.salvage = options && options->salvage;
	status = po_trace_list_find(trace_dir, &traces, err);
	if (status == PO_STATUS_OK && traces.count == 0) {
		po_error_set(err, "%s: not a trace (no CTF \"metadata\" file below it)", trace_dir);
		status = PO_STATUS_INPUT;
	}
	stats->trace_count = (int64_t)traces.count;
	if (status == PO_STATUS_OK) {
		run.whole_traces = run.salvage || traces.count >= PO_WHOLE_TRACES_FROM;
		run.lane_count = lane_count_for(options, traces.count, run.whole_traces);
		run.excluded = calloc(traces.count, sizeof(bool));
		run.delivered = calloc(traces.count, sizeof(int64_t));
		if (!run.excluded || !run.delivered) {
			po_error_set(err, "Failed to decode trace: out of memory");
			status = PO_STATUS_NOMEM;
		}
	}
	if (status == PO_STATUS_OK && options)
		exclude_skipped(&run, options);
	if (status == PO_STATUS_OK)
		status = lanes_init(&run, err);
	if (status == PO_STATUS_OK)
		status = set_pid_spaces(&run, err);
	if (status == PO_STATUS_OK) {
		/*
		 * torch.profiler traces are in no packet: their stack samples, made by
		 * source.profopt.kineto, hold at most PO_STACK_DEPTH_MAX code ids of 32 bits.
		 */
		uint64_t bound = po_trace_packet_bytes_max(&traces);

		if (bound < PO_STACK_DEPTH_MAX * sizeof(uint32_t))
			bound = PO_STACK_DEPTH_MAX * sizeof(uint32_t);
		po_sequence_bound_set(bound);
		status = run_all(&run, err);
		po_sequence_bound_set(UINT64_MAX);
	}
	lanes_fini(&run);
	free(run.excluded);
	free(run.delivered);
	po_trace_list_fini(&traces);
	return status;
}
