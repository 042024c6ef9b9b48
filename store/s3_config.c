/* SPDX-License-Identifier: MIT */
/*
 * s3_config.c - s3_config__load() (store/s3.h): the AWS CLI's
 * configuration chain. The environment first, then the shared credentials
 * and config files, each checked before it is read (a regular file, not
 * followed through a symlink, its owner and mode), then the region and
 * the endpoint resolved and checked.
 *
 * Secrets: the key id, the secret and the session token pass through
 * here, as s3.c's do (they and no other file hold them). The files' text
 * and the values read from them are wiped before they are freed, and the
 * config's copies on any failure; no message quotes a secret, and an
 * endpoint with a user@ part is refused without being quoted.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/text.h"
#include "store/s3.h"
#include "store/s3_int.h"

#define CONFIG_FILE_MAX (1u << 20)

#define FIELD(f) offsetof(struct s3_profile, f), sizeof(((struct s3_profile *)0)->f)
static const struct {
	const char *name;
	size_t off, size;
} profile_keys[] = {
	{"aws_access_key_id", FIELD(key_id)},
	{"aws_secret_access_key", FIELD(secret)},
	{"aws_session_token", FIELD(token)},
	{"region", FIELD(region)},
	{"endpoint_url", FIELD(endpoint)},
	{"credential_process", FIELD(process)},
	{"role_arn", FIELD(role_arn)},
	{"web_identity_token_file", FIELD(token_file)},
	{"role_session_name", FIELD(session_name)},
	{"source_profile", FIELD(source_profile)},
	{"credential_source", FIELD(credential_source)},
	{"sso_session", FIELD(sso_session)},
	{"sso_start_url", FIELD(sso_start_url)},
};
#undef FIELD

static char *trim(char *s, char *end)
{
	while (s < end && isspace((unsigned char)*s))
		s++;
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	*end = '\0';
	return s;
}

/* Does section header @name (trimmed) name @profile? Credentials files
 * say "[NAME]"; config files "[profile NAME]" and "[default]", as
 * botocore reads them ("profile" and the name split on blanks, the name
 * possibly quoted). */
static bool section_is(char *name, const char *profile, bool config)
{
	size_t n;

	if (!config || !strcmp(name, "default"))
		return !strcmp(name, profile);
	if (strncmp(name, "profile", 7) || !isspace((unsigned char)name[7]))
		return false;
	name = trim(name + 7, name + strlen(name));
	n = strlen(name);
	if (n >= 2 && (name[0] == '"' || name[0] == '\'') && name[n - 1] == name[0]) {
		name[n - 1] = '\0';
		name++;
	}
	return !strcmp(name, profile);
}

/* Parse @text (@n bytes, NUL-terminated, modified) the way the AWS CLI
 * (configparser) does: "[section]" lines, "key = value" or "key: value"
 * lines (key case-insensitive, blanks around both trimmed), whole-line
 * comments starting with '#' or ';', indented lines continuing the value
 * before them (nested settings such as "s3 =\n  addressing_style = path",
 * never taken for the profile's own keys). */
static int parse_ini(char *text, size_t n, const char *path, const char *profile,
		     bool config, struct s3_profile *pv, char *why, size_t len)
{
	char *line = text, *end = text + n, *lend, pbuf[200];
	bool in_section = false, in_profile = false, have_key = false, ours = false;
	unsigned lineno = 0;

	if (n >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		line += 3;
	if (memchr(text, '\0', n)) {
		text_say(why, len, "%s: not a text file",
			 shown(path, pbuf, sizeof(pbuf)));
		return -EINVAL;
	}
	for (; line < end; line++) {
		char *eol = memchr(line, '\n', (size_t)(end - line)), *s, *delim, *key,
		     *val;
		size_t i;

		if (!eol)
			eol = end;
		lineno++;
		*eol = '\0';
		s = trim(line, eol);
		lend = s + strlen(s);
		if (!*s || *s == '#' || *s == ';')
			goto next;
		if (s != line && have_key) {
			/* a continuation of the value before */
			if (ours) {
				text_say(
					why, len,
					"%s:%u: a value of the profile continues on an indented line",
					shown(path, pbuf, sizeof(pbuf)), lineno);
				return -EINVAL;
			}
			goto next;
		}
		if (*s == '[') {
			char *close = strchr(s, ']'), *rest;

			if (!close || close == s + 1) {
				text_say(why, len,
					 "%s:%u: a section header without its ']'",
					 shown(path, pbuf, sizeof(pbuf)), lineno);
				return -EINVAL;
			}
			rest = close + 1;
			while (isspace((unsigned char)*rest))
				rest++;
			if (*rest && *rest != '#' && *rest != ';') {
				text_say(why, len, "%s:%u: text after a section header",
					 shown(path, pbuf, sizeof(pbuf)), lineno);
				return -EINVAL;
			}
			in_section = true;
			in_profile = section_is(trim(s + 1, close), profile, config);
			pv->section |= in_profile;
			have_key = ours = false;
			goto next;
		}
		delim = s + strcspn(s, "=:");
		if (!*delim) {
			text_say(why, len,
				 "%s:%u: neither a section, a comment nor key = value",
				 shown(path, pbuf, sizeof(pbuf)), lineno);
			return -EINVAL;
		}
		if (!in_section) {
			text_say(why, len, "%s:%u: a setting before any [section]",
				 shown(path, pbuf, sizeof(pbuf)), lineno);
			return -EINVAL;
		}
		key = trim(s, delim);
		val = trim(delim + 1, lend);
		have_key = true;
		ours = false;
		if (!in_profile)
			goto next;
		for (i = 0; i < sizeof(profile_keys) / sizeof(profile_keys[0]); i++) {
			if (strcasecmp(key, profile_keys[i].name))
				continue;
			ours = true;
			if (!copy((char *)pv + profile_keys[i].off, profile_keys[i].size,
				  val)) {
				text_say(why, len, "%s:%u: %s is longer than %zu bytes",
					 shown(path, pbuf, sizeof(pbuf)), lineno,
					 profile_keys[i].name, profile_keys[i].size - 1);
				return -EINVAL;
			}
		}
	next:
		line = eol;
	}
	return 0;
}

/* Read @path into *@out (NUL-terminated, *@n bytes; the caller wipes and
 * frees it). 0 with *@out NULL if there is no such file; -EPERM if it is
 * there but refused. @var names the variable that could point elsewhere. */
static int read_checked(const char *path, const char *var, char **out, size_t *n,
			char *why, size_t len)
{
	char pbuf[200], *buf = NULL;
	struct stat st;
	size_t got = 0;
	int fd, err;

	*out = NULL;
	*n = 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err = errno;
		if (err == ENOENT || err == ENOTDIR)
			return 0;
		shown(path, pbuf, sizeof(pbuf));
		if (err == ELOOP) {
			text_say(
				why, len,
				"%s is a symbolic link: not followed (set %s to the file itself)",
				pbuf, var);
			return -EPERM;
		}
		text_say(why, len, "cannot open %s: %s", pbuf, strerror(err));
		return err == EACCES ? -EPERM : -err;
	}
	shown(path, pbuf, sizeof(pbuf));
	if (fstat(fd, &st)) {
		err = -errno;
		text_say(why, len, "cannot stat %s: %s", pbuf, strerror(-err));
		goto out;
	}
	err = -EPERM;
	if (!S_ISREG(st.st_mode)) {
		text_say(why, len, "%s is not a regular file: not read", pbuf);
		goto out;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		text_say(
			why, len,
			"%s belongs to uid %u, neither to uid %u nor root: not read (chown it)",
			pbuf, (unsigned)st.st_uid, (unsigned)geteuid());
		goto out;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		text_say(why, len,
			 "%s is writable by group or others: not read (chmod go-w %s)",
			 pbuf, pbuf);
		goto out;
	}
	if (st.st_size > (off_t)CONFIG_FILE_MAX) {
		text_say(why, len, "%s is larger than 1 MiB: not read", pbuf);
		goto out;
	}
	err = -ENOMEM;
	buf = malloc(CONFIG_FILE_MAX + 2);
	if (!buf)
		goto out;
	for (;;) {
		ssize_t r = read(fd, buf + got, CONFIG_FILE_MAX + 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			text_say(why, len, "cannot read %s: %s", pbuf, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		got += (size_t)r;
		if (got > CONFIG_FILE_MAX) {
			err = -EPERM;
			text_say(why, len, "%s is larger than 1 MiB: not read", pbuf);
			goto out;
		}
	}
	buf[got] = '\0';
	*out = buf;
	*n = got;
	buf = NULL;
	err = 0;
out:
	if (buf) {
		explicit_bzero(buf, got);
		free(buf);
	}
	close(fd);
	return err;
}

/* The profile's values in the file @var names, else ~/.aws/@name.
 * @path receives the path (for messages); "" if none could be made. */
static int read_profile(const char *var, const char *name, const char *profile,
			bool config, struct s3_profile *pv, char *path, size_t plen,
			char *why, size_t len)
{
	const char *p = env(var), *home = env("HOME");
	char *text;
	size_t n;
	int err, w;

	if (!home) {
		struct passwd *pw = getpwuid(geteuid());

		home = pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : NULL;
	}
	if (p && p[0] == '~' && p[1] == '/')
		w = home ? snprintf(path, plen, "%s%s", home, p + 1) : -1;
	else if (p)
		w = snprintf(path, plen, "%s", p);
	else
		w = home ? snprintf(path, plen, "%s/.aws/%s", home, name) : -1;
	if (w < 0 || (size_t)w >= plen) {
		path[0] = '\0';
		if (w < 0 && !p)
			return 0; /* no home: no default file */
		text_say(why, len, "%s: the path is too long or has no home", var);
		return -EINVAL;
	}
	err = read_checked(path, var, &text, &n, why, len);
	if (err || !text)
		return err;
	err = parse_ini(text, n, path, profile, config, pv, why, len);
	explicit_bzero(text, n);
	free(text);
	return err;
}

static int check_region(const char *r, char *why, size_t len)
{
	char buf[80];
	size_t i, n = strlen(r);

	for (i = 0; i < n; i++)
		if (!lower_digit(r[i]) && r[i] != '-')
			break;
	if (n && n < 64 && i == n)
		return 0;
	text_say(why, len, "region '%s' is not a region name (a-z, 0-9 and '-')",
		 shown(r, buf, sizeof(buf)));
	return -EINVAL;
}

bool s3_loopback(const char *h, size_t n)
{
	size_t k = 0;

	while (k < n && h[k] != '/' && (h[k] != ':' || (k && h[0] == '[')) && h[k] != ']')
		k++;
	if (h[0] == '[')
		return k == 4 && !memcmp(h, "[::1", 4);
	return (k == 9 && !strncasecmp(h, "localhost", 9)) ||
	       (k >= 9 && !memcmp(h, "127.", 4) && strspn(h, "0123456789.") >= k);
}

int s3_check_endpoint(const char *url, const char *from, bool clear_ok, char *out,
		      size_t olen, char *why, size_t len)
{
	size_t n = strlen(url), scheme, i;

	if (!strncasecmp(url, "https://", 8))
		scheme = 8;
	else if (!strncasecmp(url, "http://", 7))
		scheme = 7;
	else {
		text_say(why, len, "the endpoint URL of %s is not http:// or https://",
			 from);
		return -EINVAL;
	}
	while (n > scheme && url[n - 1] == '/')
		n--;
	if (n == scheme || url[scheme] == '/' || url[scheme] == ':') {
		text_say(why, len, "the endpoint URL of %s has no host", from);
		return -EINVAL;
	}
	for (i = scheme; i < n; i++) {
		unsigned char ch = (unsigned char)url[i];

		if (ch <= ' ' || ch >= 0x7f || strchr("@?#\\\"<>`{}|^", ch)) {
			text_say(
				why, len,
				"the endpoint URL of %s is not scheme://host[:port] (a user@, a query or a "
				"character that needs escaping)",
				from);
			return -EINVAL;
		}
	}
	if (n >= olen) {
		text_say(why, len, "the endpoint URL of %s is longer than %zu bytes",
			 from, olen - 1);
		return -EINVAL;
	}
	/* in clear past this machine: its session token readable and its
	 * payloads (not signed) changeable by anyone on the path */
	if (scheme == 7 && !clear_ok && !s3_loopback(url + scheme, n - scheme) &&
	    !env("D9PROF_S3_ALLOW_HTTP")) {
		text_say(
			why, len,
			"the endpoint URL of %s is http:// to another machine: credentials and "
			"traces would cross the network in clear (use https://, or set "
			"D9PROF_S3_ALLOW_HTTP=1 to send them anyway)",
			from);
		return -EINVAL;
	}
	memcpy(out, url, n);
	out[n] = '\0';
	return 0;
}

int s3_config__load(struct s3_config *c, const char *endpoint_url, char *why, size_t len)
{
	const char *profile = env("AWS_PROFILE"), *region, *ep, *ep_from = NULL;
	struct s3_profile *pv = NULL; /* [0] credentials file, [1] config file */
	char paths[2][512] = {"", ""};
	struct s3_files f = {.paths = {paths[0], paths[1]}};
	int err, i;

	memset(c, 0, sizeof(*c));
	if (!profile)
		profile = "default";
	if (!copy(c->profile, sizeof(c->profile), profile)) {
		text_say(why, len, "AWS_PROFILE is longer than %zu bytes",
			 sizeof(c->profile) - 1);
		return -EINVAL;
	}
	f.profile = c->profile;
	region = env("AWS_REGION");
	if (!region)
		region = env("AWS_DEFAULT_REGION");
	if ((ep = endpoint_url) && *ep)
		ep_from = "--endpoint-url";
	else if ((ep = env("AWS_ENDPOINT_URL_S3")))
		ep_from = "AWS_ENDPOINT_URL_S3";
	else if ((ep = env("AWS_ENDPOINT_URL")))
		ep_from = "AWS_ENDPOINT_URL";

	/* The files only when they may decide something: a file another user
	 * could change is refused even for its region. */
	if (!(env("AWS_ACCESS_KEY_ID") && env("AWS_SECRET_ACCESS_KEY")) || !region ||
	    !ep) {
		err = -ENOMEM;
		pv = calloc(2, sizeof(*pv));
		if (!pv)
			goto out;
		err = read_profile("AWS_SHARED_CREDENTIALS_FILE", "credentials",
				   c->profile, false, &pv[0], paths[0], sizeof(paths[0]),
				   why, len);
		if (!err)
			err = read_profile("AWS_CONFIG_FILE", "config", c->profile, true,
					   &pv[1], paths[1], sizeof(paths[1]), why, len);
		if (err)
			goto out;
		f.pv = pv;
		/* the credentials file's settings override the config file's */
		if (!region)
			region = pv[0].region[0]   ? pv[0].region
				 : pv[1].region[0] ? pv[1].region
						   : NULL;
		for (i = 0; i < 2 && !ep; i++) {
			if (pv[i].endpoint[0]) {
				ep = pv[i].endpoint;
				ep_from = i ? "the config file's profile"
					    : "the credentials file's profile";
			}
		}
	}
	if (!region)
		region = "us-east-1";
	err = check_region(region, why, len);
	if (err)
		goto out;
	copy(c->region, sizeof(c->region), region);
	if (ep)
		err = s3_check_endpoint(ep, ep_from, false, c->endpoint,
					sizeof(c->endpoint), why, len);
	else
		snprintf(c->endpoint, sizeof(c->endpoint), "https://s3.%s.amazonaws.com",
			 c->region);
	if (!err)
		err = s3_creds_find(c, &f, why, len);
out:
	if (pv) {
		explicit_bzero(pv, 2 * sizeof(*pv));
		free(pv);
	}
	if (err)
		s3_config__clear(c);
	return err;
}

int s3_config_reload_keys(struct s3_config *c, char *why, size_t len)
{
	struct s3_config n;
	int err;

	/* the endpoint as it was resolved stands for --endpoint-url: the
	 * chain's own endpoints (STS) do not depend on it */
	err = s3_config__load(&n, c->endpoint, why, len);
	if (!err) {
		memcpy(c->key_id_, n.key_id_, sizeof(c->key_id_));
		memcpy(c->secret_, n.secret_, sizeof(c->secret_));
		memcpy(c->token_, n.token_, sizeof(c->token_));
		memcpy(c->source, n.source, sizeof(c->source));
		c->expires = n.expires;
	}
	s3_config__clear(&n);
	return err;
}

void s3_config__clear(struct s3_config *c)
{
	if (!c)
		return;
	explicit_bzero(c->key_id_, sizeof(c->key_id_));
	explicit_bzero(c->secret_, sizeof(c->secret_));
	explicit_bzero(c->token_, sizeof(c->token_));
}
