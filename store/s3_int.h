/* SPDX-License-Identifier: MIT */
/*
 * s3_int.h - private to s3.c, s3_config.c and s3_creds.c, the three files
 * that hold secrets: the small string helpers they use, what a profile
 * says (s3_config.c reads it, s3_creds.c's chain uses it), and the plain
 * HTTP request and the time reader of s3.c that the credential sources
 * use. No other file includes it. ASCII only, whatever the locale says.
 */
#ifndef D9_STORE_S3_INT_H
#define D9_STORE_S3_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/text.h"
#include "store/s3.h"

/* @s made safe to quote in a message (text_clean()), cut to fit @buf. */
static inline const char *shown(const char *s, char *buf, size_t len)
{
	text_clean(s ? s : "", buf, len);
	return buf;
}

static inline bool lower_digit(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* The variable @name, NULL if unset or empty */
static inline const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* @src whole into @dst, or false (and nothing copied) if it does not fit */
static inline bool copy(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		return false;
	memcpy(dst, src, n + 1);
	return true;
}

/* ---- s3_config.c's ------------------------------------------------------ */

/* What one file (the credentials or the config file) says of the profile
 * looked for: every value as it is written, "" where it is not. */
struct s3_profile {
	char key_id[128], secret[256], token[2048]; /* static keys */
	char region[64];
	char endpoint[512];
	char process[2048]; /* credential_process */
	char role_arn[512];
	char token_file[512];	    /* web_identity_token_file */
	char session_name[128];	    /* role_session_name */
	char source_profile[128];   /* (role_arn from another profile: */
	char credential_source[64]; /*  not supported) */
	char sso_session[128];	    /* (SSO: not supported) */
	char sso_start_url[512];
	bool section; /* the profile's section is there */
};

/* What the chain looks at beyond the environment: the profile's values
 * in the credentials file ([0]) and the config file ([1]), whose paths
 * are @paths ("" if none could be made); @pv NULL when the files were not
 * read (the environment decided everything). */
struct s3_files {
	const char *profile;
	const struct s3_profile *pv;
	const char *paths[2];
};

/* @url ("http[s]://host[:port][/path]") into @out without its trailing
 * '/'; @from names where it came from in @why. http:// past this
 * machine's loopback is refused unless @clear_ok or D9PROF_S3_ALLOW_HTTP
 * (the metadata endpoints are http:// on a link-local address). The URL
 * is not quoted in @why: it might carry a password. 0 or -EINVAL. */
int s3_check_endpoint(const char *url, const char *from, bool clear_ok, char *out,
		      size_t olen, char *why, size_t len);
/* Is the host at @h (@n bytes: host[:port][/path]) this machine's
 * loopback (127.0.0.0/8, localhost, [::1])? */
bool s3_loopback(const char *h, size_t n);
/* Fetch @c's credentials again through the chain (its region and
 * endpoint kept): 0, or -errno with why (@c unchanged). */
int s3_config_reload_keys(struct s3_config *c, char *why, size_t len);

/* ---- s3_creds.c's -------------------------------------------------------- */

/* The credentials of @c (c->key_id_, secret_, token_, source, expires)
 * from the first source of the chain that has them, its region already
 * resolved. 0; -ENOKEY (none: @why lists what was tried), or the error
 * of the source that has them but failed (@why names it). */
int s3_creds_find(struct s3_config *c, const struct s3_files *f, char *why, size_t len);

/* ---- s3.c's --------------------------------------------------------------- */

/* One plain request through s3.c's libcurl (loaded at the first call),
 * unsigned: what the credential sources send. */
struct s3_http {
	const char *method;	    /* "GET", "PUT" or "POST" */
	const char *url;	    /* not quoted in a message: it may be secret */
	const char *shown;	    /* how messages name the endpoint */
	const char *const *headers; /* NULL-terminated "Name: value" lines */
	const char *body;	    /* PUT, POST: @body_len bytes */
	size_t body_len;
	long connect_ms, total_ms;
	size_t max;    /* the answer's body: at most this many bytes */
	bool no_proxy; /* never through a proxy (the metadata endpoints) */
	/* the answer: its status, its body (NUL-terminated, @alen bytes;
	 * s3_http_release() wipes and frees it) */
	long status;
	char *answer;
	size_t alen;
};
/* 0 when an answer came, whatever its status; else -errno with why:
 * -EAGAIN (no connection, a timeout), -EBADMSG (past @max), -ELIBACC (no
 * libcurl), -ENOMEM. Headers and body are wiped from what it allocated. */
int s3_http(struct s3_http *h, char *why, size_t len);
void s3_http_release(struct s3_http *h);
/* "2023-01-02T03:04:05[.123]Z" (or "+HH:MM") into unix seconds: 0 or -1 */
int s3_parse_time(const char *s, int64_t *out);

#endif /* D9_STORE_S3_INT_H */
