/* Loads libzerocode.so (tests/e2e/zerocode/src/lib.rs) with dlopen and runs
 * its Tokio runtime: a Tokio d9prof cannot read from outside.
 *   host LIB SECS   prints "pid N", "ready" once loaded, then runs */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	void *h;
	void (*run)(double);

	if (argc < 3)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "host: %s\n", dlerror());
		return 1;
	}
	run = (void (*)(double))dlsym(h, "zc_lib_run");
	if (!run)
		return 1;
	printf("pid %d\nready\n", (int)getpid());
	fflush(stdout);
	run(atof(argv[2]));
	return 0;
}
