/*
 * pipeline.c: pipeline.svg, the data path from loader stages through the queue to the GPU,
 * with measured time per batch and throughput, and the bottleneck stage highlighted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <graphviz/gvc.h>

#include "pipeline_draw.h"
#include "report_file.h"
#include "report_priv.h"

/* Stages of the path, in order. Each counts the time of one category. */
#define PIPELINE_NODES(X)                                                                          \
	X(LOAD, "load", PO_CAT_LOAD)                                                               \
	X(PREPROCESS, "preprocess", PO_CAT_PREPROCESS)                                             \
	X(COLLATE, "collate", PO_CAT_COLLATE)                                                      \
	X(QUEUE, "queue", PO_CAT_DATA_WAIT)                                                        \
	X(H2D, "h2d", PO_CAT_H2D_COPY)                                                             \
	X(FORWARD, "forward", PO_CAT_FORWARD)                                                      \
	X(BACKWARD, "backward", PO_CAT_BACKWARD)                                                   \
	X(OPTIMIZER, "optimizer", PO_CAT_OPTIMIZER)

enum pipeline_node {
#define PO_X(name, id, category) NODE_##name,
	PIPELINE_NODES(PO_X)
#undef PO_X
	    NODE_COUNT
};

static const struct {
	const char *id;
	enum po_category category;
} node_table[NODE_COUNT] = {
#define PO_X(name, id, category) [NODE_##name] = {id, category},
    PIPELINE_NODES(PO_X)
#undef PO_X
};

/* Graphviz reports errors through a global hook; the last one names the cause. */
static char graphviz_error[256];

static int keep_graphviz_error(char *message)
{
	snprintf(graphviz_error, sizeof(graphviz_error), "%s", message);
	return 0;
}

/* Graphviz reads backslash escapes in labels; doubling backslashes keeps them literal. */
static void escape_label(const char *text, char *out, size_t out_size)
{
	size_t used = 0;

	for (; *text && used + 3 < out_size; text++) {
		if (*text == '\\' || *text == '"')
			out[used++] = '\\';
		out[used++] = *text;
	}
	out[used] = '\0';
}

static void set_attr(void *object, const char *name, const char *value)
{
	agsafeset(object, (char *)name, (char *)value, "");
}

static bool loader_in_workers(const struct po_analysis *analysis)
{
	return analysis->worker_count > 0;
}

static double node_mean_ns(const struct po_analysis *analysis, enum pipeline_node node)
{
	if (node <= NODE_COLLATE && loader_in_workers(analysis))
		return analysis->pipeline.loader_stage_mean_ns[node];
	return analysis->step_stats.category_mean_ns[node_table[node].category];
}

/* The bottleneck the input-bound finding names (analysis->diagnosis.bottleneck), else the node with
 * the most time. */
static int bottleneck_node(const struct po_analysis *analysis)
{
	int best = -1;

	for (int node = 0; analysis->diagnosis.has_bottleneck && node < NODE_COUNT; node++)
		if (node_table[node].category == analysis->diagnosis.bottleneck)
			return node;
	for (int node = 0; node < NODE_COUNT; node++) {
		double mean = node_mean_ns(analysis, node);

		if (node == NODE_QUEUE && loader_in_workers(analysis))
			continue; /* waiting is a symptom; the slowest producer stage is the cause
				   */
		if (mean > 0 && (best < 0 || mean > node_mean_ns(analysis, best)))
			best = node;
	}
	return best;
}

static void node_label(const struct po_analysis *analysis, enum pipeline_node node, char *out,
		       size_t out_size)
{
	char mean[32];

	po_report_fmt_ms(node_mean_ns(analysis, node), mean, sizeof(mean));
	if (node == NODE_QUEUE) {
		double depth = analysis->pipeline.mean_queue_depth;

		if (depth >= 0)
			snprintf(out, out_size,
				 "batch queue\nwait %s per step\nmean depth %.1f\n%.2f steps/s",
				 mean, depth, analysis->step_stats.steps_per_s);
		else
			snprintf(out, out_size, "batch queue\nwait %s per step\n%.2f steps/s", mean,
				 analysis->step_stats.steps_per_s);
		return;
	}
	snprintf(out, out_size, "%s\n%s per batch",
		 po_report_category_title(node_table[node].category), mean);
}

static Agnode_t *add_node(Agraph_t *graph, const char *id, const char *label, uint32_t color,
			  bool bottleneck)
{
	Agnode_t *node = agnode(graph, (char *)id, 1);
	char hex[16], escaped[512];

	escape_label(label, escaped, sizeof(escaped));
	set_attr(node, "label", escaped);
	po_report_color_hex(color, hex, sizeof(hex));
	set_attr(node, "color", hex);
	if (bottleneck) {
		set_attr(node, "penwidth", "3");
		set_attr(node, "color", "#c0392b");
		set_attr(node, "fillcolor", "#fdecea");
		set_attr(node, "xlabel", "bottleneck");
		set_attr(node, "fontcolor", "#7f1d1d");
	}
	return node;
}

static void add_edge(Agraph_t *graph, Agnode_t *from, Agnode_t *to, const char *label)
{
	Agedge_t *edge = agedge(graph, from, to, NULL, 1);

	if (label && label[0])
		set_attr(edge, "label", label);
}

static void loader_edge_label(const struct po_analysis *analysis, char *out, size_t out_size)
{
	const struct po_pipeline_stats *pipeline = &analysis->pipeline;

	if (loader_in_workers(analysis) && pipeline->window_s > 0)
		snprintf(out, out_size, "%.1f batches/s from %zu workers",
			 pipeline->worker_batches / pipeline->window_s, analysis->worker_count);
	else
		out[0] = '\0';
}

static void add_streams(Agraph_t *graph, const struct po_analysis *analysis, Agnode_t *forward,
			Agnode_t *backward)
{
	Agraph_t *row = agsubg(graph, "gpu_row", 1);

	set_attr(row, "rank", "same");
	for (size_t i = 0; i < analysis->stream_count && i < 16; i++) {
		const struct po_gpu_stream *stream = &analysis->streams[i];
		char id[64], label[128], busy[32];
		Agnode_t *node;

		snprintf(id, sizeof(id), "gpu%d_stream%d", stream->device, stream->stream);
		po_report_fmt_ns(stream->busy_ns, busy, sizeof(busy));
		snprintf(label, sizeof(label), "GPU %d stream %d\nbusy %s\n%lld activities",
			 stream->device, stream->stream, busy, (long long)stream->activity_count);
		node = add_node(row, id, label, PO_COLOR_GPU, false);
		set_attr(node, "shape", "box");
		set_attr(node, "style", "filled");
		set_attr(node, "fillcolor", "#eef5f5");
		add_edge(graph, forward, node, NULL);
	}
}

/* Three rows: loader stages, the training loop from the queue on, the GPU streams. */
static Agraph_t *row_of(Agraph_t *loader, Agraph_t *loop, enum pipeline_node node)
{
	return node <= NODE_COLLATE ? loader : loop;
}

static void build_graph(Agraph_t *graph, const struct po_analysis *analysis)
{
	Agnode_t *nodes[NODE_COUNT];
	Agraph_t *loader = agsubg(graph, "cluster_loader", 1);
	Agraph_t *loop = agsubg(graph, "cluster_loop", 1);
	int bottleneck = bottleneck_node(analysis);
	char label[256], rate[96];

	set_attr(loader, "label",
		 loader_in_workers(analysis) ? "data-loader workers"
					     : "data loading in the training process");
	set_attr(loop, "label", "training loop");
	set_attr(loader, "rank", "same");
	set_attr(loop, "rank", "same");
	for (int node = 0; node < NODE_COUNT; node++) {
		node_label(analysis, node, label, sizeof(label));
		nodes[node] = add_node(row_of(loader, loop, node), node_table[node].id, label,
				       po_report_category_color(node_table[node].category),
				       node == bottleneck);
	}
	loader_edge_label(analysis, rate, sizeof(rate));
	for (int node = 0; node + 1 < NODE_COUNT; node++)
		add_edge(graph, nodes[node], nodes[node + 1], node == NODE_COLLATE ? rate : NULL);
	add_streams(graph, analysis, nodes[NODE_FORWARD], nodes[NODE_BACKWARD]);
}

/*
 * Object ids for Graphviz in order of creation. The default discipline uses string
 * addresses as ids, and cgraph orders subgraphs by id, so clusters would come out in an
 * order that changes from run to run.
 */
#define MAX_GRAPH_NAMES 128

struct graph_ids {
	char *names[MAX_GRAPH_NAMES]; /* owned; id of names[i] is 2 * i + 2 */
	size_t name_count;
	IDTYPE anonymous; /* next odd id */
};

static void *ids_open(Agraph_t *graph, Agdisc_t *disc)
{
	struct graph_ids *ids = calloc(1, sizeof(*ids));

	if (ids)
		ids->anonymous = 1;
	return ids;
}

static long ids_map(void *state, int objtype, char *name, IDTYPE *id, int create)
{
	struct graph_ids *ids = state;

	if (!name) {
		*id = ids->anonymous;
		ids->anonymous += 2;
		return 1;
	}
	for (size_t i = 0; i < ids->name_count; i++) {
		if (strcmp(ids->names[i], name) == 0) {
			*id = 2 * i + 2;
			return 1;
		}
	}
	if (!create || ids->name_count == MAX_GRAPH_NAMES)
		return 0;
	ids->names[ids->name_count] = malloc(strlen(name) + 1);
	if (!ids->names[ids->name_count])
		return 0;
	strcpy(ids->names[ids->name_count], name);
	*id = 2 * ids->name_count++ + 2;
	return 1;
}

static long ids_alloc(void *state, int objtype, IDTYPE id)
{
	return 0; /* ids are only handed out by ids_map */
}

static void ids_free(void *state, int objtype, IDTYPE id)
{
}

static char *ids_print(void *state, int objtype, IDTYPE id)
{
	struct graph_ids *ids = state;

	return id % 2 == 0 && id / 2 - 1 < ids->name_count ? ids->names[id / 2 - 1] : NULL;
}

static void ids_close(void *state)
{
	struct graph_ids *ids = state;

	for (size_t i = 0; i < ids->name_count; i++)
		free(ids->names[i]);
	free(ids);
}

static void ids_register(void *state, int objtype, void *object)
{
}

static Agiddisc_t graph_id_disc = {ids_open,  ids_map,	 ids_alloc,   ids_free,
				   ids_print, ids_close, ids_register};
static Agdisc_t graph_disc = {&AgMemDisc, &graph_id_disc, &AgIoDisc};

static Agraph_t *graph_create(void)
{
	Agraph_t *graph = agopen("pipeline", Agdirected, &graph_disc);

	if (!graph)
		return NULL;
	set_attr(graph, "rankdir", "TB");
	set_attr(graph, "newrank", "true");
	set_attr(graph, "ordering", "out");
	set_attr(graph, "ranksep", "0.35");
	set_attr(graph, "fontname", "DejaVu Sans");
	set_attr(graph, "fontsize", "11");
	set_attr(graph, "nodesep", "0.3");
	set_attr(graph, "bgcolor", "transparent");
	agattr(graph, AGRAPH, "style", "rounded,dashed");
	agattr(graph, AGRAPH, "color", "#9aa5b1");
	agattr(graph, AGRAPH, "fontcolor", "#616e7c");
	agattr(graph, AGNODE, "shape", "box");
	agattr(graph, AGNODE, "style", "rounded,filled");
	agattr(graph, AGNODE, "fillcolor", "#ffffff");
	agattr(graph, AGNODE, "fontname", "DejaVu Sans");
	agattr(graph, AGNODE, "fontsize", "10");
	agattr(graph, AGNODE, "penwidth", "1.6");
	agattr(graph, AGEDGE, "fontname", "DejaVu Sans");
	agattr(graph, AGEDGE, "fontsize", "9");
	agattr(graph, AGEDGE, "color", "#616e7c");
	agattr(graph, AGEDGE, "fontcolor", "#616e7c");
	return graph;
}

static enum po_status write_svg(GVC_t *gvc, Agraph_t *graph, const char *path, struct po_error *err)
{
	struct po_report_file out;
	char *data = NULL;
	unsigned int length = 0;
	enum po_status status;

	if (gvRenderData(gvc, graph, "svg", &data, &length) != 0 || !data) {
		po_error_set(err, "Failed to render the pipeline graph: %s", graphviz_error);
		return PO_STATUS_INTERNAL;
	}
	status = po_report_file_open(&out, path, err);
	if (status == PO_STATUS_OK) {
		status = po_report_file_write(&out, data, length, err);
		if (status != PO_STATUS_OK)
			fclose(out.file);
		else
			status = po_report_file_close(&out, err);
	}
	gvFreeRenderData(data);
	return status;
}

/*
 * One Graphviz context for the process, never freed: Graphviz's Pango plugin remembers the
 * last font name by pointer into the context, so laying out a graph after an earlier
 * context was freed reads freed memory.
 */
static GVC_t *shared_context(void)
{
	static GVC_t *context; /* owned by the process */

	if (!context)
		context = gvContext();
	return context;
}

/* The laid-out graph (owned by the caller: gvFreeLayout, then agclose), or NULL. */
static Agraph_t *graph_layout(GVC_t *gvc, const struct po_analysis *analysis, struct po_error *err)
{
	Agraph_t *graph;

	graphviz_error[0] = '\0';
	agseterr(AGERR);
	agseterrf(keep_graphviz_error);
	graph = gvc ? graph_create() : NULL;
	if (!graph) {
		po_error_set(err, "Failed to create the pipeline graph");
		return NULL;
	}
	build_graph(graph, analysis);
	if (gvLayout(gvc, graph, "dot") != 0) {
		po_error_set(err, "Failed to lay out the pipeline graph: %s", graphviz_error);
		agclose(graph);
		return NULL;
	}
	return graph;
}

enum po_status po_report_write_pipeline(const struct po_analysis *analysis, const char *path,
					struct po_error *err)
{
	GVC_t *gvc = shared_context();
	Agraph_t *graph = graph_layout(gvc, analysis, err);
	enum po_status status;

	if (!graph)
		return PO_STATUS_INTERNAL;
	status = write_svg(gvc, graph, path, err);
	gvFreeLayout(gvc, graph);
	agclose(graph);
	return status;
}

enum po_status po_report_draw_pipeline(const struct po_analysis *analysis, cairo_t *cr, double x,
				       double y, double max_width, double *height,
				       struct po_error *err)
{
	GVC_t *gvc = shared_context();
	Agraph_t *graph = graph_layout(gvc, analysis, err);
	double width, scale;

	*height = 0;
	if (!graph)
		return PO_STATUS_INTERNAL;
	po_pipeline_size(graph, &width, height);
	scale = width > max_width ? max_width / width : 1;
	*height *= scale;
	po_pipeline_draw(cr, graph, x, y, scale);
	gvFreeLayout(gvc, graph);
	agclose(graph);
	return PO_STATUS_OK;
}
