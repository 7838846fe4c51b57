/*
 * kineto_source.h: source.profopt.kineto, a babeltrace2 source component class that reads
 * one torch.profiler (Kineto) JSON trace and emits profopt's own event classes
 * (kineto_map.h). Parameters: `inputs`, an array of one path (.json or .json.gz), and
 * `trace-name`, the name of the trace object (what src.ctf.fs's parameter of that name
 * does). One output port, "out", one stream. profopt-analyze creates the class from these
 * methods (po_kineto_class_create()); the babeltrace2 plugin "profopt" (kineto_plugin.c)
 * declares the same methods for the babeltrace2 command line.
 */
#ifndef PO_KINETO_SOURCE_H
#define PO_KINETO_SOURCE_H

#include <babeltrace2/babeltrace.h>

/*
 * What the iterators of a component left out, added as each reads its file; the
 * component's initialize-method data when it is given (profopt-analyze gives a lane's),
 * else nothing is counted. A lane's graph runs on one thread: no lock.
 */
struct po_kineto_counts {
	int64_t traces;			    /* files read */
	int64_t records_left_out;	    /* impossible times, X records without a pid */
	int64_t names_cut;		    /* strings past the reader's limits */
	int64_t collectives_without_kernel; /* calls whose communication kernel is not in it */
	int64_t python_calls_left_out;	    /* nested too deep; counted once the file is read */
};

bt_component_class_initialize_method_status
po_kineto_init(bt_self_component_source *self, bt_self_component_source_configuration *config,
	       const bt_value *params, void *init_data);
void po_kineto_finalize(bt_self_component_source *self);
bt_message_iterator_class_initialize_method_status
po_kineto_iterator_init(bt_self_message_iterator *self,
			bt_self_message_iterator_configuration *config,
			bt_self_component_port_output *port);
void po_kineto_iterator_finalize(bt_self_message_iterator *self);
bt_message_iterator_class_next_method_status
po_kineto_iterator_next(bt_self_message_iterator *self, bt_message_array_const messages,
			uint64_t capacity, uint64_t *count);

/* The class, made from the methods above; owned by the caller (put its reference). */
bt_component_class_source *po_kineto_class_create(void);

#endif /* PO_KINETO_SOURCE_H */
