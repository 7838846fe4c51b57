/*
 * leak_host.c PLUGIN STEPS: a training loop of STEPS steps that opens PLUGIN with dlopen and
 * calls its plugin_keep_buffer() at every step, keeping 256 KiB per step.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "profopt.h"

int main(int argc, char **argv)
{
	void *(*keep)(size_t);
	void *plugin;
	long steps;

	if (argc != 3)
		return 2;
	steps = atol(argv[2]);
	plugin = dlopen(argv[1], RTLD_NOW);
	if (!plugin) {
		fprintf(stderr, "leak_host: %s\n", dlerror());
		return 1;
	}
	*(void **)&keep = dlsym(plugin, "plugin_keep_buffer");
	if (!keep)
		return 1;
	profopt_run_begin("c");
	for (long step = 0; step < steps; step++) {
		struct timespec pause = {0, 2000000};

		profopt_step_begin(step, 0, 1);
		profopt_stage_begin(PROFOPT_STAGE_FORWARD, NULL, step, -1);
		(void)keep(256 * 1024);
		nanosleep(&pause, NULL);
		profopt_stage_end(PROFOPT_STAGE_FORWARD, NULL, step, -1);
		profopt_step_end(step, 0, 1);
	}
	profopt_run_end();
	return 0;
}
