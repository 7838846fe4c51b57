/*
 * hotspots_json.c: the function-level samples of the result (analysis->hotspot_groups) as
 * summary.json's "hotspots" member and as the stdout summary's hotspots table. Both print
 * the result's fields; nothing is computed here.
 */
#include <stdio.h>

#include "json_names.h"
#include "json_writer.h"
#include "render_json.h"

static const char *stage_text(int stage)
{
	return stage < 0 ? "none" : po_json_stage_name(stage);
}

static void write_function(struct po_json_writer *writer, const struct po_hotspot *hotspot)
{
	po_json_write_begin_object(writer);
	po_json_write_kv_string(writer, "file", hotspot->file);
	po_json_write_kv_string(writer, "function", hotspot->function);
	po_json_write_kv_int(writer, "line", hotspot->line);
	po_json_write_kv_int(writer, "samples", hotspot->samples);
	po_json_write_kv_double(writer, "self_pct", hotspot->self_pct, 1);
	po_json_write_kv_double(writer, "total_pct", hotspot->total_pct, 1);
	po_json_write_kv_int(writer, "total_samples", hotspot->total_samples);
	po_json_write_end_object(writer);
}

static void write_group(struct po_json_writer *writer, const struct po_hotspot_group *group)
{
	po_json_write_begin_object(writer);
	po_json_write_kv_ms(writer, "cpu_ms", group->cpu_ns);
	po_json_write_key(writer, "functions");
	po_json_write_begin_array(writer);
	po_json_write_inline_items(writer);
	for (size_t i = 0; i < group->hotspot_count; i++)
		write_function(writer, &group->hotspots[i]);
	po_json_write_end_array(writer);
	po_json_write_key(writer, "labels");
	po_json_write_begin_array(writer);
	po_json_write_inline_items(writer);
	for (size_t i = 0; i < group->label_count; i++) {
		po_json_write_begin_object(writer);
		po_json_write_kv_string(writer, "label", group->labels[i].label);
		po_json_write_kv_double(writer, "pct", group->labels[i].pct, 1);
		po_json_write_kv_int(writer, "samples", group->labels[i].samples);
		po_json_write_end_object(writer);
	}
	po_json_write_end_array(writer);
	po_json_write_kv_string(writer, "role", po_json_role_name(group->role));
	po_json_write_kv_int(writer, "samples", group->samples);
	po_json_write_kv_string(writer, "stage", stage_text(group->stage));
	po_json_write_end_object(writer);
}

void po_render_hotspots_json(struct po_json_writer *writer, const struct po_analysis *analysis)
{
	if (!analysis->hotspot_group_count)
		return;
	po_json_write_key(writer, "hotspots");
	po_json_write_begin_array(writer);
	for (size_t i = 0; i < analysis->hotspot_group_count; i++)
		write_group(writer, &analysis->hotspot_groups[i]);
	po_json_write_end_array(writer);
}

/* Rows per (role, stage) in the stdout summary; summary.json has up to PO_HOTSPOTS_TOP. */
#define TEXT_ROWS 3

void po_render_hotspots_text(const struct po_analysis *analysis, FILE *out)
{
	if (!analysis->hotspot_group_count)
		return;
	fprintf(out, "\nHotspots (function samples, share of each stage's sampled %s time):\n",
		analysis->stacks_wall ? "wall" : "CPU");
	fprintf(out, "  %-8s %-11s %7s %6s %6s  %s\n", "role", "stage", "samples", "self%",
		"total%", "function (file:line)");
	for (size_t i = 0; i < analysis->hotspot_group_count; i++) {
		const struct po_hotspot_group *group = &analysis->hotspot_groups[i];

		for (size_t k = 0; k < group->hotspot_count && k < TEXT_ROWS; k++) {
			const struct po_hotspot *hotspot = &group->hotspots[k];
			char line[16] = ""; /* none for a native frame: its file is its object */

			if (hotspot->line > 0)
				snprintf(line, sizeof(line), ":%d", (int)hotspot->line);
			fprintf(out, "  %-8s %-11s %7lld %6.1f %6.1f  %s (%s%s)\n",
				k ? "" : po_json_role_name(group->role),
				k ? "" : stage_text(group->stage), (long long)hotspot->samples,
				hotspot->self_pct, hotspot->total_pct, hotspot->function,
				hotspot->file, line);
		}
	}
}
