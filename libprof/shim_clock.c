// SPDX-License-Identifier: MIT
/*
 * Choosing the shim's clock. rdtsc costs about half a clock_gettime() in a
 * VM (where the vDSO must also read the pvclock page), and the markers'
 * attached cost is mostly their clock read. Raw ticks are only usable if
 * they mean the same thing on every CPU and the kernel's CLOCK_MONOTONIC is
 * derived from them, so that the recorder's linear conversion is exact up
 * to NTP's slew: an invariant TSC and clocksource "tsc".
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "libprof/d9_segment.h"
#include "libprof/shim_clock.h"

int d9__clock_tsc;

static int clocksource_is_tsc(void)
{
	char buf[32];
	ssize_t n;
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		      O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return !strcmp(buf, "tsc\n") || !strcmp(buf, "tsc");
}

static int tsc_invariant(void)
{
#if D9_HAVE_TSC
	unsigned int a, b, c, d;

	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
		return 0;
	__get_cpuid(0x80000007, &a, &b, &c, &d);
	return !!(d & (1u << 8));
#else
	return 0;
#endif
}

uint32_t d9__clock_setup(void)
{
	const char *force = getenv("D9PROF_CLOCK");

	d9__clock_tsc = D9_HAVE_TSC && !(force && !strcmp(force, "monotonic")) &&
			tsc_invariant() && clocksource_is_tsc();
	return d9__clock_tsc ? D9_CLOCK_TSC : CLOCK_MONOTONIC;
}
