/* SPDX-License-Identifier: MIT */
/*
 * s3.h - an S3 (or S3-compatible) bucket through libcurl: put a file, list
 * keys under a prefix, get an object into a file, head an object. Requests
 * are signed by libcurl's AWS SigV4 (CURLOPT_AWS_SIGV4), addressed
 * path-style (ENDPOINT/BUCKET/KEY), payloads unsigned
 * (x-amz-content-sha256: UNSIGNED-PAYLOAD; TLS protects them on https).
 *
 * Configuration, as the AWS CLI reads it (s3_config__load()):
 *   credentials  the first source of the AWS SDKs' chain that has them
 *                (s3_creds.c), of the profile AWS_PROFILE (else
 *                "default") of AWS_SHARED_CREDENTIALS_FILE (else
 *                ~/.aws/credentials) and AWS_CONFIG_FILE (else
 *                ~/.aws/config, "[profile NAME]" sections):
 *                1. the environment: AWS_ACCESS_KEY_ID +
 *                   AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN);
 *                2. web identity: AWS_ROLE_ARN +
 *                   AWS_WEB_IDENTITY_TOKEN_FILE (+ AWS_ROLE_SESSION_NAME),
 *                   else the profile's role_arn + web_identity_token_file,
 *                   through STS AssumeRoleWithWebIdentity (unsigned POST
 *                   to AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, else
 *                   https://sts.REGION.amazonaws.com); a role_arn with a
 *                   source_profile or credential_source is refused as not
 *                   supported;
 *                3. the profile's credential_process (/bin/sh -c, its
 *                   JSON on stdout, at most 64 KiB in 60 s or
 *                   D9PROF_S3_TIMEOUT);
 *                4. SSO (sso_session, sso_start_url): refused as not
 *                   supported, with the command that exports the keys;
 *                5. the profile's aws_access_key_id,
 *                   aws_secret_access_key, aws_session_token;
 *                6. the container endpoint:
 *                   AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (on
 *                   http://169.254.170.2) or _FULL_URI (https://, or
 *                   http:// to loopback, 169.254.170.2, 169.254.170.23,
 *                   [fd00:ec2::23]), with AWS_CONTAINER_AUTHORIZATION_
 *                   TOKEN_FILE or _TOKEN as its Authorization;
 *                7. IMDSv2 (a token PUT, the role, its credentials) at
 *                   AWS_EC2_METADATA_SERVICE_ENDPOINT, else
 *                   http://169.254.169.254, 1 s to connect; not with
 *                   AWS_EC2_METADATA_DISABLED=true.
 *                A source that is set up but fails is an error naming it
 *                (no later source is tried); none set up is -ENOKEY,
 *                naming what was tried. Credentials that expire (2, 3,
 *                6, 7) are fetched again through the chain by the
 *                struct s3 that signs with them, 5 minutes before they
 *                expire (and when a fetch fails, again 10 s later while
 *                the old ones still hold).
 *   region       AWS_REGION, AWS_DEFAULT_REGION, the profile's region,
 *                else us-east-1.
 *   endpoint     the caller's (--endpoint-url), AWS_ENDPOINT_URL_S3,
 *                AWS_ENDPOINT_URL, the profile's endpoint_url, else
 *                https://s3.REGION.amazonaws.com.
 * A file is read only if it is a regular file, opened without following
 * a final symlink, owned by the caller's effective uid or root, and not
 * writable by group or others (the recorder runs as root: a file another
 * user can change is not a source of where its data goes); else -EPERM
 * and why (a web identity or container token file is followed and need
 * only be a regular file no one else may write: Kubernetes mounts them
 * as symlinks). Secrets never leave this module (s3_config.c,
 * s3_creds.c, s3.c): no message, error or URL holds them, and what held
 * them is wiped.
 *
 * A 401 or 403 answer's reason ends "(key from SOURCE)": every command
 * says where the key it was refused came from.
 *
 * Every function returns 0 or -errno, with a one-line reason in @why for a
 * person (the S3 error code and message when the store said no) and the
 * HTTP status in the object's last_status. -EAGAIN: worth retrying (no
 * connection, a timeout, 5xx, 429/SlowDown); other errors are not
 * (-EACCES: credentials or permission refused, -ENOENT: no such bucket
 * or key, -EINVAL: a bad URL).
 */
#ifndef D9_STORE_S3_H
#define D9_STORE_S3_H

#include <stddef.h>
#include <stdint.h>

struct s3_config {
	char region[64];
	char endpoint[512]; /* scheme://host[:port][/path], no trailing '/' */
	char profile[128];
	char source[200]; /* where the credentials came from ("environment",
			   * "profile default in /root/.aws/credentials",
			   * "IMDSv2 at http://169.254.169.254 (role web)"),
			   * never what they are */
	int64_t expires;  /* when they expire (unix seconds), 0: never */
	/* private: the secrets */
	char key_id_[128], secret_[256], token_[2048];
};

/* @endpoint_url: NULL or --endpoint-url. 0; -ENOKEY (no credentials),
 * -EPERM (a file refused), -EINVAL (a malformed file or URL), or the
 * error of the credential source that failed (-EACCES: it refused us,
 * -EAGAIN: it did not answer, -EBADMSG: its answer is not one), with
 * why. It may block on the network and run a command (the sources of
 * the chain). */
int s3_config__load(struct s3_config *c, const char *endpoint_url, char *why, size_t len);
/* Wipe the secrets. */
void s3_config__clear(struct s3_config *c);

/* "s3://BUCKET[/PREFIX]" into @bucket and @prefix (no leading or
 * trailing '/'; "" for none). 0 or -EINVAL (not s3://, no bucket, a
 * bucket name S3 would refuse). */
int s3_parse_url(const char *url, char *bucket, size_t blen, char *prefix, size_t plen);

struct s3;

/* A connection to @bucket with @c (copied, and its credentials fetched
 * again before they expire): a request fails (-EAGAIN) when
 * it moves less than 1 KiB a second for @timeout_s seconds (0: 60;
 * D9PROF_S3_TIMEOUT in the environment overrides it), or lasts ten times
 * that (a GET, plus its size at 64 KiB a second); connecting takes at
 * most 10 s. One thread at a time per struct s3. 0 or -errno: -ELIBACC
 * when libcurl (libcurl.so.4, loaded at the first call) cannot be loaded. */
int s3__new(const struct s3_config *c, const char *bucket, double timeout_s,
	    struct s3 **out);
void s3__free(struct s3 *s);
/* What an error of s3__new() or of a request means, one phrase: for
 * -ELIBACC what to install, else strerror(-@err). */
const char *s3_strerror(int err);
/* The HTTP status of the last request (0: none reached the server). */
long s3__last_status(const struct s3 *s);

/* A user metadata pair of an object (x-amz-meta-KEY: VALUE); both
 * printable ASCII, the key [a-z0-9-], the value at most 256 bytes. */
struct s3_meta {
	const char *key, *value;
};

/* Put the file open at @fd (read from offset 0, @size bytes) as @key with
 * @meta (@nmeta pairs). */
int s3__put_fd(struct s3 *s, const char *key, int fd, uint64_t size,
	       const struct s3_meta *meta, size_t nmeta, char *why, size_t len);

struct s3_object {
	char *key;
	uint64_t size;
	char etag[72]; /* without its quotes ("" if longer) */
	int64_t mtime; /* unix seconds */
};

/* One page of a listing: its @n objects (and their keys) valid during
 * the call only. 0 goes on to the next page; a negative errno stops the
 * listing, and s3__list() returns it (any reason is the callback's to
 * say in the @why it was given). */
typedef int (*s3_page_fn)(void *arg, const struct s3_object *v, size_t n);

/* Every key under @prefix (a plain prefix: "a/b/" lists under a/b/),
 * in the store's order (UTF-8 binary, so the time-ordered layout comes
 * in time order), one page at a time to @fn (as many keys as the store
 * puts in a page, 1000 for S3), following continuation tokens: what it
 * holds is one page, whatever the listing's length. A page is given
 * whole or not at all: one that does not read is -EBADMSG before @fn
 * sees any of it. */
int s3__list(struct s3 *s, const char *prefix, s3_page_fn fn, void *arg, char *why,
	     size_t len);

/* Get @key into the file open at @fd (truncated first); its size in
 * *@size if non-NULL. With @max (UINT64_MAX: any size), the size it was
 * listed at: more, or fewer, is -EBADMSG (the file then holds part of
 * it). */
int s3__get_fd(struct s3 *s, const char *key, int fd, uint64_t max, uint64_t *size,
	       char *why, size_t len);

/* @key's size and its metadata value for @meta_key (without
 * "x-amz-meta-") into @value ("" if absent; -ERANGE if it does not fit). */
int s3__head(struct s3 *s, const char *key, uint64_t *size, const char *meta_key,
	     char *value, size_t vlen, char *why, size_t len);

#endif /* D9_STORE_S3_H */
