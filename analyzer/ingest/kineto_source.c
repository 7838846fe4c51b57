/*
 * kineto_source.c: the babeltrace2 glue of source.profopt.kineto. The component makes
 * profopt's classes (one stream class with the vpid, vtid and procname context, a
 * nanosecond clock); its iterator reads and maps the file (kineto_map.c) when it starts,
 * then hands the events over in time order, a batch per call.
 */
#define _GNU_SOURCE
#include <stdio.h>
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "kineto_map.h"
#include "kineto_source.h"

static const char *const event_names[PO_EV_COUNT] = {
#define PO_X(name, trace_name) [PO_EV_##name] = trace_name,
    PO_EVENT_KINDS(PO_X)
#undef PO_X
};

/* The component: its classes and the file it reads. */
struct kineto_component {
	char *path;			      /* owned */
	char *trace_name;		      /* owned; NULL */
	bt_trace_class *trace_class;	      /* owned */
	bt_stream_class *stream_class;	      /* weak: belongs to trace_class */
	bt_event_class *classes[PO_EV_COUNT]; /* weak: belong to stream_class; NULL: not made */
	const struct po_kineto_class *layouts[PO_EV_COUNT]; /* weak: static */
	struct po_kineto_counts *counts;		    /* weak: the caller's; NULL */
};

struct kineto_iterator {
	struct kineto_component *component; /* weak */
	struct po_kineto_map *map;	    /* owned */
	bt_trace *trace;		    /* owned */
	bt_stream *stream;		    /* owned */
	struct po_kineto_event next;	    /* the next event to hand on */
	bool ended;
	int state; /* 0: stream beginning next, 1: events, 2: stream end next, 3: ended */
};

static bt_field_class *context_class(bt_trace_class *tc)
{
	bt_field_class *context = bt_field_class_structure_create(tc);
	const char *const names[] = {"vpid", "vtid"};

	for (int i = 0; context && i < 2; i++) {
		bt_field_class *member = bt_field_class_integer_signed_create(tc);

		if (!member || bt_field_class_structure_append_member(context, names[i], member)) {
			bt_field_class_put_ref(member);
			bt_field_class_put_ref(context);
			return NULL;
		}
		bt_field_class_put_ref(member);
	}
	if (context) {
		bt_field_class *procname = bt_field_class_string_create(tc);

		if (!procname ||
		    bt_field_class_structure_append_member(context, "procname", procname)) {
			bt_field_class_put_ref(context);
			context = NULL;
		}
		bt_field_class_put_ref(procname);
	}
	return context;
}

static bt_field_class *member_class(bt_trace_class *tc, enum po_kineto_member_type type)
{
	if (type == PO_KINETO_CODE_IDS || type == PO_KINETO_LINES) {
		bt_field_class *element = bt_field_class_integer_unsigned_create(tc);
		bt_field_class *array =
		    element ? bt_field_class_array_dynamic_create(tc, element, NULL) : NULL;

		if (element)
			bt_field_class_integer_set_field_value_range(element, 32);
		bt_field_class_put_ref(element);
		return array;
	}
	if (type == PO_KINETO_TEXT)
		return bt_field_class_string_create(tc);
	if (type == PO_KINETO_UINT)
		return bt_field_class_integer_unsigned_create(tc);
	return bt_field_class_integer_signed_create(tc);
}

static bool event_class_make(struct kineto_component *c, const struct po_kineto_class *layout)
{
	bt_event_class *ec = bt_event_class_create(c->stream_class);
	bt_field_class *payload = ec ? bt_field_class_structure_create(c->trace_class) : NULL;
	bool ok = payload && bt_event_class_set_name(ec, event_names[layout->kind]) == 0;

	for (size_t i = 0; ok && i < layout->member_count; i++) {
		bt_field_class *member = member_class(c->trace_class, layout->members[i].type);

		ok = member && bt_field_class_structure_append_member(
				   payload, layout->members[i].name, member) == 0;
		bt_field_class_put_ref(member);
	}
	ok = ok && bt_event_class_set_payload_field_class(ec, payload) == 0;
	bt_field_class_put_ref(payload);
	c->classes[layout->kind] = ec;
	c->layouts[layout->kind] = layout;
	bt_event_class_put_ref(ec); /* the stream class holds it */
	return ok;
}

static bool classes_make(struct kineto_component *c, bt_self_component *self)
{
	bt_clock_class *clock = bt_clock_class_create(self);
	bt_field_class *context;
	const struct po_kineto_class *layouts;
	size_t layout_count;
	bool ok;

	c->trace_class = bt_trace_class_create(self);
	c->stream_class = c->trace_class ? bt_stream_class_create(c->trace_class) : NULL;
	ok = clock && c->stream_class && bt_clock_class_set_name(clock, "kineto") == 0;
	if (ok) {
		bt_clock_class_set_frequency(clock, 1000000000);
		ok = bt_stream_class_set_default_clock_class(c->stream_class, clock) == 0;
	}
	bt_clock_class_put_ref(clock);
	context = ok ? context_class(c->trace_class) : NULL;
	ok = context &&
	     bt_stream_class_set_event_common_context_field_class(c->stream_class, context) == 0;
	bt_field_class_put_ref(context);
	bt_stream_class_put_ref(c->stream_class); /* the trace class holds it */
	layouts = po_kineto_classes(&layout_count);
	for (size_t i = 0; ok && i < layout_count; i++)
		ok = event_class_make(c, &layouts[i]);
	return ok;
}

/* The parameters: inputs (an array of one string) and trace-name (a string). */
static bool params_read(struct kineto_component *c, const bt_value *params)
{
	const bt_value *inputs = params && bt_value_is_map(params)
				     ? bt_value_map_borrow_entry_value_const(params, "inputs")
				     : NULL;
	const bt_value *name = params && bt_value_is_map(params)
				   ? bt_value_map_borrow_entry_value_const(params, "trace-name")
				   : NULL;
	const bt_value *path;

	if (!inputs || !bt_value_is_array(inputs) || bt_value_array_get_length(inputs) != 1)
		return false;
	path = bt_value_array_borrow_element_by_index_const(inputs, 0);
	if (!bt_value_is_string(path))
		return false;
	c->path = strdup(bt_value_string_get(path));
	if (name && bt_value_is_string(name))
		c->trace_name = strdup(bt_value_string_get(name));
	return c->path != NULL;
}

bt_component_class_initialize_method_status
po_kineto_init(bt_self_component_source *self, bt_self_component_source_configuration *config,
	       const bt_value *params, void *init_data)
{
	bt_self_component *self_component = bt_self_component_source_as_self_component(self);
	struct kineto_component *c = calloc(1, sizeof(*c)); /* owned by the component */

	(void)config;
	if (!c)
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	c->counts = init_data;
	bt_self_component_set_data(self_component, c);
	if (!params_read(c, params)) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(
		    self_component, "source.profopt.kineto needs inputs=[\"FILE.json[.gz]\"]");
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
	}
	if (!classes_make(c, self_component) ||
	    bt_self_component_source_add_output_port(self, "out", NULL, NULL) !=
		BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

void po_kineto_finalize(bt_self_component_source *self)
{
	struct kineto_component *c =
	    bt_self_component_get_data(bt_self_component_source_as_self_component(self));

	if (!c)
		return;
	bt_trace_class_put_ref(c->trace_class);
	free(c->path);
	free(c->trace_name);
	free(c);
}

static void iterator_destroy(struct kineto_iterator *it)
{
	if (!it)
		return;
	bt_stream_put_ref(it->stream);
	bt_trace_put_ref(it->trace);
	po_kineto_map_destroy(it->map);
	free(it);
}

bt_message_iterator_class_initialize_method_status
po_kineto_iterator_init(bt_self_message_iterator *self,
			bt_self_message_iterator_configuration *config,
			bt_self_component_port_output *port)
{
	struct kineto_component *c =
	    bt_self_component_get_data(bt_self_message_iterator_borrow_component(self));
	struct kineto_iterator *it = calloc(1, sizeof(*it)); /* owned by the iterator */
	struct po_error err = {{0}};
	enum po_status status;

	(void)config;
	(void)port;
	if (!it || po_kineto_map_create(&it->map) != PO_STATUS_OK) {
		iterator_destroy(it);
		return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	}
	it->component = c;
	status = po_kineto_map_read(it->map, c->path, &err);
	if (status == PO_STATUS_OK)
		status = po_kineto_map_finish(it->map);
	if (status == PO_STATUS_OK)
		status = po_kineto_map_next(it->map, &it->next, &it->ended);
	if (status == PO_STATUS_INTERNAL)
		po_error_set(&err,
			     "Failed to read %s: its events could not be kept in a "
			     "temporary file (TMPDIR full?)",
			     c->path);
	if (status != PO_STATUS_OK) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_MESSAGE_ITERATOR(
		    self, "%s", err.message[0] ? err.message : "out of memory");
		iterator_destroy(it);
		return status == PO_STATUS_NOMEM
			   ? BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR
			   : BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
	}
	if (c->counts) {
		const struct po_kineto_map_stats *stats = po_kineto_map_borrow_stats(it->map);

		c->counts->traces++;
		c->counts->records_left_out += stats->impossible_times;
		c->counts->names_cut += stats->names_cut;
		c->counts->collectives_without_kernel += stats->collectives_without_kernel;
	}
	it->trace = bt_trace_create(c->trace_class);
	it->stream = it->trace ? bt_stream_create(c->stream_class, it->trace) : NULL;
	if (!it->stream || (c->trace_name && bt_trace_set_name(it->trace, c->trace_name))) {
		iterator_destroy(it);
		return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	}
	bt_self_message_iterator_set_data(self, it);
	return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

void po_kineto_iterator_finalize(bt_self_message_iterator *self)
{
	iterator_destroy(bt_self_message_iterator_get_data(self));
}

/*
 * A stack sample's frames: the code ids of the map's latest sample, or as many lines, 0
 * (the trace says which function was called, not which line ran). false: out of memory.
 */
static bool frames_set(const struct kineto_iterator *it, bt_field *field, bool lines)
{
	size_t depth;
	const uint32_t *frames = po_kineto_map_borrow_frames(it->map, &depth);

	if (bt_field_array_dynamic_set_length(field, depth) !=
	    BT_FIELD_DYNAMIC_ARRAY_SET_LENGTH_STATUS_OK)
		return false;
	for (size_t i = 0; i < depth; i++)
		bt_field_integer_unsigned_set_value(
		    bt_field_array_borrow_element_field_by_index(field, i), lines ? 0 : frames[i]);
	return true;
}

/* Sets one member from the event's values; false: out of memory. */
static bool member_set(const struct kineto_iterator *it, bt_field *field,
		       enum po_kineto_member_type type, const struct po_kineto_event *ev,
		       size_t member, int *texts)
{
	size_t len;

	if (type == PO_KINETO_CODE_IDS || type == PO_KINETO_LINES)
		return frames_set(it, field, type == PO_KINETO_LINES);
	if (type == PO_KINETO_TEXT)
		bt_field_string_set_value(
		    field, po_kineto_map_text(it->map, (*texts)++ ? ev->text2 : ev->text, &len));
	else if (type == PO_KINETO_UINT)
		bt_field_integer_unsigned_set_value(field, (uint64_t)ev->values[member]);
	else
		bt_field_integer_signed_set_value(field, ev->values[member]);
	return true;
}

static const bt_message *event_message(bt_self_message_iterator *self,
				       const struct kineto_iterator *it,
				       const struct po_kineto_event *ev)
{
	const struct kineto_component *c = it->component;
	const struct po_kineto_class *layout = c->layouts[ev->kind];
	bt_message *message = bt_message_event_create_with_default_clock_snapshot(
	    self, c->classes[ev->kind], it->stream, (uint64_t)ev->time_ns);
	bt_event *event;
	bt_field *payload, *context;
	int texts = 0;
	size_t len;

	if (!message)
		return NULL;
	event = bt_message_event_borrow_event(message);
	context = bt_event_borrow_common_context_field(event);
	bt_field_integer_signed_set_value(
	    bt_field_structure_borrow_member_field_by_index(context, 0), ev->pid);
	bt_field_integer_signed_set_value(
	    bt_field_structure_borrow_member_field_by_index(context, 1), ev->tid);
	bt_field_string_set_value(bt_field_structure_borrow_member_field_by_index(context, 2),
				  po_kineto_map_text(it->map, ev->procname, &len));
	payload = bt_event_borrow_payload_field(event);
	for (size_t i = 0; i < layout->member_count; i++) {
		if (!member_set(it, bt_field_structure_borrow_member_field_by_index(payload, i),
				layout->members[i].type, ev, i, &texts)) {
			bt_message_put_ref(message);
			return NULL;
		}
	}
	return message;
}

bt_message_iterator_class_next_method_status
po_kineto_iterator_next(bt_self_message_iterator *self, bt_message_array_const messages,
			uint64_t capacity, uint64_t *count)
{
	struct kineto_iterator *it = bt_self_message_iterator_get_data(self);
	enum po_status status;
	uint64_t made = 0;

	if (it->state == 3)
		return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_END;
	if (it->state == 0) {
		messages[made] = bt_message_stream_beginning_create(self, it->stream);
		if (!messages[made])
			return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_MEMORY_ERROR;
		made++;
		it->state = 1;
	}
	while (it->state == 1 && made < capacity && !it->ended) {
		messages[made] = event_message(self, it, &it->next);
		if (!messages[made])
			break;
		made++;
		status = po_kineto_map_next(it->map, &it->next, &it->ended);
		if (status != PO_STATUS_OK) {
			BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_MESSAGE_ITERATOR(
			    self, "%s: %s", it->component->path,
			    status == PO_STATUS_NOMEM
				? "out of memory while nesting its Python calls"
				: "its events could not be read back from a temporary file");
			for (uint64_t i = 0; i < made; i++)
				bt_message_put_ref(messages[i]);
			return status == PO_STATUS_NOMEM
				   ? BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_MEMORY_ERROR
				   : BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_ERROR;
		}
	}
	if (it->state == 1 && it->ended) {
		/* known only now: calls are nested as the events come back in time order */
		if (it->component->counts)
			it->component->counts->python_calls_left_out +=
			    po_kineto_map_borrow_stats(it->map)->python_calls_too_deep;
		it->state = 2;
	}
	if (it->state == 2 && made < capacity) {
		messages[made] = bt_message_stream_end_create(self, it->stream);
		if (messages[made]) {
			made++;
			it->state = 3;
		}
	}
	*count = made;
	if (made == 0)
		return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_MEMORY_ERROR;
	return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_OK;
}

bt_component_class_source *po_kineto_class_create(void)
{
	bt_message_iterator_class *iterator_class =
	    bt_message_iterator_class_create(po_kineto_iterator_next);
	bt_component_class_source *source = NULL;

	if (!iterator_class)
		return NULL;
	if (bt_message_iterator_class_set_initialize_method(iterator_class,
							    po_kineto_iterator_init) ||
	    bt_message_iterator_class_set_finalize_method(iterator_class,
							  po_kineto_iterator_finalize))
		goto end;
	source = bt_component_class_source_create("kineto", iterator_class);
	if (source && (bt_component_class_source_set_initialize_method(source, po_kineto_init) ||
		       bt_component_class_source_set_finalize_method(source, po_kineto_finalize))) {
		bt_component_class_source_put_ref(source);
		source = NULL;
	}
end:
	bt_message_iterator_class_put_ref(iterator_class);
	return source;
}
