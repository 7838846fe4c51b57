/*
 * no_driver.c LIBRARY: loads the GPU collector as the CUDA driver would (dlopen, then
 * InitializeInjection) on a machine without a GPU driver, then does the work of a program
 * and exits. The collector must say once why it records nothing and leave the program
 * alone: this prints "program done" and exits 0; no_driver.sh checks stderr.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *library;
	int (*initialize)(void);
	int (*start)(void);
	double sum = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: no_driver LIBRARY\n");
		return 2;
	}
	library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!library) {
		fprintf(stderr, "no_driver: %s\n", dlerror());
		return 1;
	}
	*(void **)&initialize = dlsym(library, "InitializeInjection");
	*(void **)&start = dlsym(library, "profopt_cupti_start");
	if (!initialize || !start) {
		fprintf(stderr, "no_driver: the collector lacks its entry points\n");
		return 1;
	}
	if (initialize() != 1) {
		fprintf(stderr, "no_driver: InitializeInjection did not return 1\n");
		return 1;
	}
	if (start() != -1) { /* a second start says again that nothing is recorded */
		fprintf(stderr, "no_driver: the collector claims to record without a driver\n");
		return 1;
	}
	for (int i = 1; i <= 1000; i++)
		sum += 1.0 / i;
	printf("program done %.3f\n", sum);
	return 0;
}
