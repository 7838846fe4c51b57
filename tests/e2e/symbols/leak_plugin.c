/* leak_plugin.c: a shared library, opened with dlopen by leak_host, that leaks on purpose. */
#include <stdlib.h>
#include <string.h>

/* Keeps what it allocates and never frees it: run.sh expects the malloc line named. */
void *plugin_keep_buffer(size_t bytes)
{
	void *buffer = malloc(bytes);

	if (buffer)
		memset(buffer, 1, bytes);
	return buffer;
}
