// SPDX-License-Identifier: MIT
/* d9prof ls: what a store of segments holds, from its keys (store/catalog.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/views.h"
#include "analysis/window.h"
#include "cli/cli.h"
#include "store/catalog.h"
#include "store/s3.h"

/* segments whose index is asked for, at most: the latest of each run */
#define META_MAX 2000

enum { LS_FROM = 256, LS_TO, LS_SERVICE, LS_HOST, LS_FORMAT, LS_ENDPOINT };

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof ls s3://BUCKET[/PREFIX] | DIR [options]\n\n"
		"What a store of recordings holds, from the names of its files alone\n"
		"(the layout 'record --upload' and '--key-prefix' write, PREFIX/DATE/\n"
		"HHMM/SERVICE/HOST/BOOT/): the time range, how many hosts and services,\n"
		"each service's hosts and boots with their segments and dumps, how many\n"
		"segments and hosts each period holds (quiet and busy times), and the\n"
		"latest 1000 dumps with their reasons. No segment is downloaded, and\n"
		"the keys are read page by page, never all held. In s3:// stores that\n"
		"'record --upload' filled, each segment's index (polls, the longest\n"
		"poll and wake-to-poll delay, red flags as report's) and each dump's\n"
		"reason are in its metadata, one HEAD request each, 8 at once: up to\n"
		"2000 segments, the latest of each service/host/boot in equal shares\n"
		"(how many were left out is said).\n\n"
		"options:\n"
		"      --from T, --to T  only [T, T): YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS]\n"
		"                        (UTC), or a duration before now (-90s, -15m,\n"
		"                        -2h, -1d); the segment running into --from is\n"
		"                        kept\n"
		"      --service NAME    only this service\n"
		"      --host NAME       only this host\n"
		"      --format F        text (default) or json\n"
		"      --endpoint-url URL  an S3-compatible store (as for record)\n"
		"  -h, --help            this help\n\n"
		"S3 credentials, region and endpoint are found as the AWS CLI finds them\n"
		"(man d9prof, FLEET).\n\n"
		"examples:\n"
		"  d9prof ls s3://traces/prod --from -2h\n"
		"  d9prof ls /var/tmp/d9 --service api --format json\n");
}

/* The catalog of @store (s3://... or a directory) for @f into *@c. EXIT_*
 * after saying why, or -1. */
static int read_store(const char *store, const char *endpoint,
		      const struct catalog_filter *f, struct catalog **c)
{
	char bucket[64], prefix[512], why[400] = "";
	struct catalog_opts o = {.f = *f, .index_max = META_MAX};
	struct s3_config cfg = {0};
	struct s3 *s = NULL;
	size_t failed;
	int err, remote = strncmp(store, "s3://", 5) == 0;

	if (!remote && endpoint)
		return usage_error("ls ", "--endpoint-url is for s3:// stores");
	if (remote && s3_parse_url(store, bucket, sizeof(bucket), prefix, sizeof(prefix)))
		return usage_error("ls ",
				   "bad store '%s': want s3://BUCKET[/PREFIX] or "
				   "a directory",
				   store);
	if (remote) {
		o.flag_poll_ns = ANALYSIS_FLAG_LONG_POLL_NS;
		o.flag_delay_ns = ANALYSIS_FLAG_DELAY_NS;
	}
	if (catalog__new(&o, c)) {
		error("out of memory");
		return EXIT_FAIL;
	}
	if (!remote) {
		err = catalog__add_dir(*c, store);
		if (!err)
			err = catalog__finish(*c);
		if (err) {
			error("cannot read '%s': %s", store, strerror(-err));
			return EXIT_FAIL;
		}
		return -1;
	}
	err = s3_config__load(&cfg, endpoint, why, sizeof(why));
	if (!err)
		err = s3__new(&cfg, bucket, 0, &s);
	if (!err)
		err = catalog__add_s3(*c, s, prefix, why, sizeof(why));
	s3__free(s);
	if (!err && (err = catalog__finish(*c)))
		why[0] = '\0';
	if (err) {
		error("cannot list %s: %s", store, why[0] ? why : s3_strerror(err));
		s3_config__clear(&cfg);
		return EXIT_FAIL;
	}
	err = catalog__meta(*c, &cfg, bucket, prefix, &failed, why, sizeof(why));
	if (err)
		warning("no index or reason read: %s", why[0] ? why : strerror(-err));
	else if (failed)
		warning("the index or reason of %zu object%s is unknown: %s", failed,
			failed == 1 ? "" : "s", why);
	s3_config__clear(&cfg);
	return -1;
}

int cmd_ls(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"from", required_argument, NULL, LS_FROM},
		{"to", required_argument, NULL, LS_TO},
		{"service", required_argument, NULL, LS_SERVICE},
		{"host", required_argument, NULL, LS_HOST},
		{"format", required_argument, NULL, LS_FORMAT},
		{"endpoint-url", required_argument, NULL, LS_ENDPOINT},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	static const char *const formats[] = {"text", "json"};
	struct catalog_filter f = {0};
	struct time_spec ts;
	struct catalog *c = NULL;
	const char *endpoint = NULL;
	int json = 0, ret, opt;
	time_t now = time(NULL);

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (opt) {
		case LS_FROM:
		case LS_TO:
			if (time_spec_parse_at(optarg, now, &ts) || ts.kind != TIME_WALL)
				return usage_error(
					"ls ",
					"bad --%s '%s': want a UTC date and time "
					"YYYY-MM-DD[THH:MM[:SS]] or a duration "
					"before now (-15m, -2h, -1d)",
					opt == LS_FROM ? "from" : "to", optarg);
			*(opt == LS_FROM ? &f.from : &f.to) =
				(time_t)(ts.ns / 1000000000ULL);
			break;
		case LS_SERVICE:
			f.service = optarg;
			break;
		case LS_HOST:
			f.host = optarg;
			break;
		case LS_FORMAT:
			ret = WORD_OPTION("ls ", "format", optarg, formats, &json);
			if (ret)
				return ret;
			break;
		case LS_ENDPOINT:
			endpoint = optarg;
			break;
		case 'h':
			help(stdout);
			return EXIT_OK;
		default:
			return usage_error(
				"ls ", "bad option '%s' (unknown, or it needs a value)",
				argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error("ls ",
				   "want one store: s3://BUCKET[/PREFIX] or a directory");
	if (f.from && f.to && f.to <= f.from)
		return usage_error("ls ", "--to must be after --from");
	ret = read_store(argv[optind], endpoint, &f, &c);
	if (ret < 0) {
		ret = catalog__print(c, argv[optind], json, stdout) ? EXIT_FAIL : EXIT_OK;
		if (ret)
			error("cannot write the listing: %s", strerror(errno));
	}
	catalog__free(c);
	return ret;
}
