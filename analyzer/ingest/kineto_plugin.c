/*
 * kineto_plugin.c: the babeltrace2 plugin "profopt", for the babeltrace2 command line:
 *   babeltrace2 --plugin-path=DIR -c source.profopt.kineto -p 'inputs=["rank0.pt.trace.json.gz"]'
 * profopt-analyze does not load it: it makes the same class itself (kineto_source.h).
 */
#include <babeltrace2/babeltrace.h>

#include "kineto_source.h"

BT_PLUGIN_MODULE();
BT_PLUGIN(profopt);
BT_PLUGIN_DESCRIPTION("profopt: torch.profiler (Kineto) JSON traces as profopt's events");
BT_PLUGIN_LICENSE("MIT");

BT_PLUGIN_SOURCE_COMPONENT_CLASS(kineto, po_kineto_iterator_next);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_DESCRIPTION(kineto, "Read a torch.profiler (Kineto) JSON trace");
BT_PLUGIN_SOURCE_COMPONENT_CLASS_INITIALIZE_METHOD(kineto, po_kineto_init);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_FINALIZE_METHOD(kineto, po_kineto_finalize);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD(kineto,
									  po_kineto_iterator_init);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_MESSAGE_ITERATOR_CLASS_FINALIZE_METHOD(
    kineto, po_kineto_iterator_finalize);
