// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include <perfmon/pfmlib_perf_event.h>

#include "record/pfm_event.h"

int pfm_event_encode(const char *name, struct event_spec *out)
{
	static int initialised;
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	char *fstr = NULL;
	int ret;

	if (!initialised) {
		if (pfm_initialize() != PFM_SUCCESS)
			return -EIO;
		initialised = 1;
	}
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	arg.fstr = &fstr;
	ret = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT,
					&arg);
	if (ret != PFM_SUCCESS)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->type = attr.type;
	out->config = attr.config;
	out->config1 = attr.config1;
	out->config2 = attr.config2;
	/* libpfm4 spells a generic event "perf::cpu-clock:u=1:k=1..."; keep
	 * the user's name, it is the one they will recognise. */
	snprintf(out->name, sizeof(out->name), "%s", name);
	free(fstr);
	return 0;
}
