/*
 * replay_main.c: runs the fuzz target over every file named on the command line (the
 * committed corpus), for compilers without libFuzzer. Any crash fails the test.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int replayed = 0;

	for (int i = 1; i < argc; i++) {
		FILE *file = fopen(argv[i], "rb");
		uint8_t *data;
		long size;

		if (!file || fseek(file, 0, SEEK_END) != 0 || (size = ftell(file)) < 0) {
			fprintf(stderr, "Failed to read %s\n", argv[i]);
			return 1;
		}
		rewind(file);
		data = malloc((size_t)size + 1);
		if (!data || fread(data, 1, (size_t)size, file) != (size_t)size) {
			fprintf(stderr, "Failed to read %s\n", argv[i]);
			return 1;
		}
		fclose(file);
		LLVMFuzzerTestOneInput(data, (size_t)size);
		free(data);
		replayed++;
	}
	printf("%d passed, 0 failed\n", replayed);
	return replayed > 0 ? 0 : 1;
}
