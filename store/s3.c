/* SPDX-License-Identifier: MIT */
/*
 * s3.c - store/s3.h on libcurl (the configuration it is given is
 * s3_config.c's): requests signed by libcurl's SigV4 on one easy
 * handle per struct s3 (so its connection is reused), and the two XML
 * answers read here (ListBucketResult and Error) through store/xml.h's
 * bounded reader: no entity but the five predefined ones and character
 * references, no DOCTYPE, bounded depth; their size is bounded here.
 *
 * libcurl 7.88 puts the request's path and query string into the
 * canonical request as they are sent, so both are built here already in
 * S3's canonical form: every byte but A-Za-z0-9-._~ as %XX (upper case),
 * '/' kept in the path only, the query's parameters sorted by name. A key
 * with spaces, '+' or '%' then signs as S3 computes it (CURLOPT_PATH_AS_IS
 * keeps "." and ".." segments as they are, which keys may hold). It signs
 * every header we add, even an empty one that only removes a header of
 * its own ("Expect:"), so none such is added. It trims and collapses
 * blanks in header values as S3 does.
 *
 * Secrets: the key id, the secret and the session token live in the
 * config (struct s3 keeps a copy) and in libcurl's option strings; only
 * this file and s3_config.c (which reads them and wipes what it read)
 * hold them. No URL, message or log holds them: there is no
 * CURLOPT_VERBOSE and no debug callback, and what we allocate around them
 * (the header list, the copies) is wiped before it is freed. libcurl
 * frees its own copies of the option strings without wiping them; that
 * is out of our reach.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/map.h"
#include "lib/sha256.h"
#include "lib/text.h"
#include "store/s3.h"
#include "store/s3_int.h"
#include "store/xml.h"

#define LIST_PAGE_MAX  (8u << 20) /* 1000 keys of 1024 bytes, escaped: < 6 MiB */
#define ERROR_BODY_MAX (64u << 10)
#define KEY_MAX	       1024	   /* S3's limit on a key, in bytes */
#define TOKEN_MAX      (16u << 10) /* a continuation token */
#define META_VALUE_MAX 256
/* A request moving fewer than S3_FLOOR bytes a second for its timeout
 * fails; none lasts past S3_DEADLINE_STALLS timeouts, a GET that plus its
 * size at S3_GET_FLOOR bytes a second. */
#define S3_FLOOR	   1024
#define S3_DEADLINE_STALLS 10
#define S3_GET_FLOOR	   (64u << 10)
/* Credentials that expire are fetched again KEYS_BEFORE seconds before
 * they do, at most once in KEYS_PAUSE seconds while they still hold
 * (a source that hands out keys about to expire is not asked at every
 * request, one that fails is asked again) */
#define KEYS_BEFORE 300
#define KEYS_PAUSE  10

/* ASCII only, whatever the locale says */
static bool alnum(char c)
{
	return lower_digit(c) || (c >= 'A' && c <= 'Z');
}

/* ---- names -------------------------------------------------------------- */

/* 3 to 63 of a-z 0-9 . -, starting and ending with a letter or digit, no
 * "..": what S3 accepts as a new bucket's name. */
static bool bucket_ok(const char *b, size_t n)
{
	size_t i;

	if (n < 3 || n > 63 || !lower_digit(b[0]) || !lower_digit(b[n - 1]))
		return false;
	for (i = 0; i < n; i++) {
		if (!lower_digit(b[i]) && b[i] != '.' && b[i] != '-')
			return false;
		if (b[i] == '.' && b[i + 1] == '.')
			return false;
	}
	return true;
}

int s3_parse_url(const char *url, char *bucket, size_t blen, char *prefix, size_t plen)
{
	const char *b, *slash, *p, *e;

	if (!url || strncmp(url, "s3://", 5))
		return -EINVAL;
	b = url + 5;
	slash = strchr(b, '/');
	if (!slash)
		slash = b + strlen(b);
	if (!bucket_ok(b, (size_t)(slash - b)) || (size_t)(slash - b) >= blen)
		return -EINVAL;
	for (p = slash; *p == '/'; p++)
		;
	for (e = p + strlen(p); e > p && e[-1] == '/'; e--)
		;
	if ((size_t)(e - p) >= plen)
		return -EINVAL;
	memcpy(bucket, b, (size_t)(slash - b));
	bucket[slash - b] = '\0';
	memcpy(prefix, p, (size_t)(e - p));
	prefix[e - p] = '\0';
	return 0;
}

/* ---- strings built for requests ------------------------------------------ */

struct sbuf {
	char *s;
	size_t n, cap;
	int err;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->err)
		return;
	if (LIB_GROW(b->s, b->cap, b->n + n + 1)) {
		b->err = -ENOMEM;
		return;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

/* S3's URI encoding: A-Za-z0-9-._~ as they are, '/' too if @path, every
 * other byte %XX in upper case. */
static void sb_esc(struct sbuf *b, const char *s, bool path)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};

		if (alnum((char)ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~' ||
		    (path && ch == '/'))
			sb_add(b, (const char *)s, 1);
		else
			sb_add(b, e, 3);
	}
}

/* ---- the connection ------------------------------------------------------ */

struct s3 {
	CURL *curl;
	struct s3_config cfg;
	char bucket[64];
	char sigv4[96];
	long status;
	long deadline_ms;   /* a request's */
	int64_t next_fetch; /* of its credentials, at the earliest (unix s) */
	char curl_err[CURL_ERROR_SIZE];
};

/* One request's state, for the callbacks. */
struct xfer {
	struct s3 *s;
	/* the answer: into @fd from offset 0 when 2xx and @fd >= 0, else
	 * into @body (at most @body_max bytes for a 2xx answer) */
	int fd;
	uint64_t off, fd_max; /* (into @fd: at most @fd_max bytes) */
	char *body;
	size_t blen, bcap, body_max;
	bool too_big;
	int err;	      /* -errno of our side of the transfer (the files) */
	const char *err_what; /* and what failed */
	/* the upload */
	int in_fd;
	uint64_t in_off, in_size;
	/* headers */
	const char *meta_key; /* its value is wanted */
	char meta[META_VALUE_MAX * 2];
	bool have_meta, have_length;
	uint64_t length;
	char bucket_region[32];
};

/* libcurl, loaded at the first s3__new(): the other commands (every
 * record, every analysis) do not load it and the 30 libraries it pulls in
 * (TLS, Kerberos, LDAP...), which made 42 shared objects to map and
 * relocate at every start, each a wait for a CPU on a busy machine. */
static struct {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	CURLcode (*easy_perform)(CURL *c);
	void (*easy_cleanup)(CURL *c);
	const char *(*easy_strerror)(CURLcode rc);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
} cu;
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_init_err;

static void curl_init(void)
{
	static const struct {
		const char *name;
		size_t at;
	} fns[] = {
#define FN(f, sym) {#sym, offsetof(typeof(cu), f)}
		FN(global_init, curl_global_init),
		FN(easy_init, curl_easy_init),
		FN(easy_setopt, curl_easy_setopt),
		FN(easy_getinfo, curl_easy_getinfo),
		FN(easy_perform, curl_easy_perform),
		FN(easy_cleanup, curl_easy_cleanup),
		FN(easy_strerror, curl_easy_strerror),
		FN(slist_append, curl_slist_append),
		FN(slist_free_all, curl_slist_free_all),
#undef FN
	};
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);

	curl_init_err = -ELIBACC;
	if (!h)
		return;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void *f = dlsym(h, fns[i].name);

		if (!f)
			return; /* h stays open: a failed load is not retried */
		memcpy((char *)&cu + fns[i].at, &f, sizeof(f));
	}
	curl_init_err = cu.global_init(CURL_GLOBAL_DEFAULT) ? -ENOMEM : 0;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	size_t n = size * nmemb, max;
	long code = 0;

	cu.easy_getinfo(x->s->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300 && x->fd >= 0) {
		size_t done = 0;

		/* never more than the object was listed at */
		if (n > x->fd_max - x->off) {
			x->too_big = true;
			return 0;
		}
		while (done < n) {
			ssize_t w = pwrite(x->fd, p + done, n - done, (off_t)x->off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				x->err = w < 0 ? -errno : -EIO;
				x->err_what = "cannot write the object to its file";
				return 0;
			}
			done += (size_t)w;
			x->off += (uint64_t)w;
		}
		return n;
	}
	max = code >= 200 && code < 300 ? x->body_max : ERROR_BODY_MAX;
	if (x->blen + n > max) {
		if (code >= 200 && code < 300) {
			x->too_big = true;
			return 0;
		}
		/* an error's body: what fits is enough to read its code */
		if (x->blen >= max)
			return n;
		return on_body(p, 1, max - x->blen, arg) ? n : 0;
	}
	if (LIB_GROW(x->body, x->bcap, x->blen + n + 1)) {
		x->err = -ENOMEM;
		x->err_what = "cannot keep the answer";
		return 0;
	}
	memcpy(x->body + x->blen, p, n);
	x->blen += n;
	x->body[x->blen] = '\0';
	return n;
}

static size_t on_read(char *p, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	size_t n = size * nmemb;
	ssize_t r;

	if (n > x->in_size - x->in_off)
		n = (size_t)(x->in_size - x->in_off);
	if (!n)
		return 0;
	do
		r = pread(x->in_fd, p, n, (off_t)x->in_off);
	while (r < 0 && errno == EINTR);
	if (r <= 0) {
		x->err = r < 0 ? -errno : -EIO;
		x->err_what = r < 0 ? "cannot read the file to put"
				    : "the file to put is shorter than its size";
		return CURL_READFUNC_ABORT;
	}
	x->in_off += (uint64_t)r;
	return (size_t)r;
}

static int on_seek(void *arg, curl_off_t off, int origin)
{
	struct xfer *x = arg;

	if (origin != SEEK_SET || off < 0 || (uint64_t)off > x->in_size)
		return CURL_SEEKFUNC_FAIL;
	x->in_off = (uint64_t)off;
	return CURL_SEEKFUNC_OK;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	size_t n = size * nmemb, nlen, vlen;
	const char *colon = memchr(p, ':', n), *v, *end = p + n;
	char val[sizeof(x->meta)];

	if (n >= 5 && !memcmp(p, "HTTP/", 5)) {
		/* a new answer (after a 100 Continue): forget the last one's */
		x->have_meta = x->have_length = false;
		x->bucket_region[0] = '\0';
		return n;
	}
	if (!colon)
		return n;
	nlen = (size_t)(colon - p);
	for (v = colon + 1; v < end && (*v == ' ' || *v == '\t'); v++)
		;
	while (end > v && isspace((unsigned char)end[-1]))
		end--;
	vlen = (size_t)(end - v);
	if (vlen >= sizeof(val))
		vlen = sizeof(val) - 1;
	memcpy(val, v, vlen);
	val[vlen] = '\0';
	if (nlen == 14 && !strncasecmp(p, "content-length", 14)) {
		char *e;
		unsigned long long l;

		errno = 0;
		l = strtoull(val, &e, 10);
		if (!errno && e != val && !*e && isdigit((unsigned char)val[0])) {
			x->length = l;
			x->have_length = true;
		}
	} else if (nlen == 19 && !strncasecmp(p, "x-amz-bucket-region", 19)) {
		size_t i;

		for (i = 0; i < vlen && i + 1 < sizeof(x->bucket_region); i++)
			x->bucket_region[i] =
				lower_digit(val[i]) || val[i] == '-' ? val[i] : '?';
		x->bucket_region[i] = '\0';
	} else if (x->meta_key && nlen == 11 + strlen(x->meta_key) &&
		   !strncasecmp(p, "x-amz-meta-", 11) &&
		   !strncasecmp(p + 11, x->meta_key, nlen - 11)) {
		text_clean(val, x->meta, sizeof(x->meta));
		x->have_meta = true;
	}
	return n;
}

int s3__new(const struct s3_config *c, const char *bucket, double timeout_s,
	    struct s3 **out)
{
	const char *e;
	double v;
	long ms, connect_ms;
	struct s3 *s;
	int err = -EINVAL;

	*out = NULL;
	if (!c || !bucket || !bucket_ok(bucket, strlen(bucket)) || !(timeout_s >= 0) ||
	    timeout_s > 86400 * 7 || !c->key_id_[0] || !c->secret_[0] ||
	    !c->endpoint[0] || !c->region[0] || strchr(c->region, ':'))
		return -EINVAL;
	pthread_once(&curl_once, curl_init);
	if (curl_init_err)
		return curl_init_err;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *c;
	s->next_fetch = (int64_t)time(NULL) + KEYS_PAUSE;
	copy(s->bucket, sizeof(s->bucket), bucket);
	snprintf(s->sigv4, sizeof(s->sigv4), "aws:amz:%s:s3", c->region);
	s->curl = cu.easy_init();
	if (!s->curl) {
		err = -ENOMEM;
		goto fail;
	}
	/* (D9PROF_S3_TIMEOUT: the tests' hostile endpoints) */
	if ((e = env("D9PROF_S3_TIMEOUT")) && (v = atof(e)) > 0 && v < 86400)
		timeout_s = v;
	ms = timeout_s > 0 ? (long)(timeout_s * 1000) : 60000;
	if (ms < 1)
		ms = 1;
	connect_ms = ms < 10000 ? ms : 10000;
#define SET(opt, val)                                                                    \
	do {                                                                             \
		CURLcode rc_ = cu.easy_setopt(s->curl, opt, val);                        \
		if (rc_) {                                                               \
			err = rc_ == CURLE_OUT_OF_MEMORY ? -ENOMEM : -ENOTSUP;           \
			goto fail;                                                       \
		}                                                                        \
	} while (0)
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_NOPROGRESS, 1L);
	SET(CURLOPT_ERRORBUFFER, s->curl_err);
	SET(CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	/* a floor, not a stall: an endpoint trickling bytes is dropped after
	 * @timeout_s below S3_FLOOR bytes a second, and no request lasts
	 * past its deadline, however it goes */
	SET(CURLOPT_LOW_SPEED_LIMIT, (long)S3_FLOOR);
	SET(CURLOPT_LOW_SPEED_TIME, (ms + 999) / 1000);
	s->deadline_ms = ms * S3_DEADLINE_STALLS;
	SET(CURLOPT_TIMEOUT_MS, s->deadline_ms);
	SET(CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
#else
	SET(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	SET(CURLOPT_PATH_AS_IS, 1L);
	SET(CURLOPT_TCP_KEEPALIVE, 1L);
#ifdef D9_VERSION
	SET(CURLOPT_USERAGENT, "d9prof/" D9_VERSION);
#else
	SET(CURLOPT_USERAGENT, "d9prof");
#endif
	SET(CURLOPT_AWS_SIGV4, s->sigv4);
	SET(CURLOPT_USERNAME, s->cfg.key_id_);
	SET(CURLOPT_PASSWORD, s->cfg.secret_);
	SET(CURLOPT_WRITEFUNCTION, on_body);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_READFUNCTION, on_read);
	SET(CURLOPT_SEEKFUNCTION, on_seek);
#undef SET
	*out = s;
	return 0;
fail:
	s3__free(s);
	return err;
}

const char *s3_strerror(int err)
{
	if (err == -ELIBACC)
		return "cannot load libcurl (libcurl.so.4), which S3 needs: install it "
		       "(Debian: apt-get install libcurl4)";
	return strerror(-err);
}

void s3__free(struct s3 *s)
{
	if (!s)
		return;
	if (s->curl)
		cu.easy_cleanup(s->curl);
	explicit_bzero(&s->cfg, sizeof(s->cfg));
	free(s);
}

long s3__last_status(const struct s3 *s)
{
	return s ? s->status : 0;
}

static void free_headers(struct curl_slist *h)
{
	struct curl_slist *i;

	for (i = h; i; i = i->next)
		explicit_bzero(i->data, strlen(i->data));
	cu.slist_free_all(h);
}

/* ---- plain requests (the credential sources) ------------------------------ */

static size_t on_plain(char *p, size_t size, size_t nmemb, void *arg)
{
	struct s3_http *h = arg;
	size_t n = size * nmemb;

	if (n > h->max - h->alen)
		return 0; /* (h->alen > h->max says why) */
	memcpy(h->answer + h->alen, p, n);
	h->alen += n;
	h->answer[h->alen] = '\0';
	return n;
}

int s3_http(struct s3_http *h, char *why, size_t len)
{
	char detail[CURL_ERROR_SIZE] = "", dbuf[CURL_ERROR_SIZE];
	struct curl_slist *hdr = NULL, *t;
	CURL *c;
	CURLcode rc;
	int err = -ENOMEM;

	h->status = 0;
	h->alen = 0;
	pthread_once(&curl_once, curl_init);
	if (curl_init_err) {
		text_say(why, len, "%s", s3_strerror(curl_init_err));
		return curl_init_err;
	}
	/* the whole answer's room at once: no copy of a secret left behind
	 * by a realloc */
	h->answer = malloc(h->max + 1);
	c = cu.easy_init();
	if (!h->answer || !c)
		goto out;
	h->answer[0] = '\0';
	for (const char *const *l = h->headers; l && *l; l++) {
		t = cu.slist_append(hdr, *l);
		if (!t)
			goto out;
		hdr = t;
	}
	if (cu.easy_setopt(c, CURLOPT_NOSIGNAL, 1L) ||
	    cu.easy_setopt(c, CURLOPT_NOPROGRESS, 1L) ||
	    cu.easy_setopt(c, CURLOPT_ERRORBUFFER, detail) ||
	    cu.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, h->connect_ms) ||
	    cu.easy_setopt(c, CURLOPT_TIMEOUT_MS, h->total_ms) ||
	    cu.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) ||
#if LIBCURL_VERSION_NUM >= 0x075500
	    cu.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") ||
#else
	    cu.easy_setopt(c, CURLOPT_PROTOCOLS,
			   (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) ||
#endif
	    (h->no_proxy && cu.easy_setopt(c, CURLOPT_NOPROXY, "*")) ||
	    cu.easy_setopt(c, CURLOPT_URL, h->url) ||
	    cu.easy_setopt(c, CURLOPT_HTTPHEADER, hdr) ||
	    cu.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_plain) ||
	    cu.easy_setopt(c, CURLOPT_WRITEDATA, h))
		goto out;
	if (strcmp(h->method, "GET") &&
	    (cu.easy_setopt(c, CURLOPT_POSTFIELDS, h->body ? h->body : "") ||
	     cu.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)h->body_len) ||
	     cu.easy_setopt(c, CURLOPT_CUSTOMREQUEST, h->method)))
		goto out;
	rc = cu.easy_perform(c);
	cu.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &h->status);
	err = 0;
	if (rc == CURLE_WRITE_ERROR && h->status) {
		text_say(why, len, "%s: an answer of more than %zu bytes", h->shown,
			 h->max);
		err = -EBADMSG;
	} else if (rc) {
		shown(detail, dbuf, sizeof(dbuf));
		text_say(why, len, "%s: %s%s%s%s", h->shown, cu.easy_strerror(rc),
			 dbuf[0] ? " (" : "", dbuf, dbuf[0] ? ")" : "");
		err = rc == CURLE_OUT_OF_MEMORY ? -ENOMEM : -EAGAIN;
	}
out:
	if (err == -ENOMEM)
		text_say(why, len, "%s: out of memory", h->shown);
	free_headers(hdr);
	if (c)
		cu.easy_cleanup(c);
	return err;
}

void s3_http_release(struct s3_http *h)
{
	if (h->answer) {
		explicit_bzero(h->answer, h->max + 1);
		free(h->answer);
	}
	h->answer = NULL;
	h->alen = 0;
}

/* The SHA-256 of the empty body, which a request without one signs */
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* The headers every request carries, with @sha, the hex SHA-256 of its
 * body (NULL: it has none), which libcurl signs with the rest; then
 * @extra (NULL-terminated). */
static struct curl_slist *headers(const struct s3 *s, const char *sha,
				  const char *const *extra)
{
	char line[24 + 2 * SHA256_LEN + 1];
	struct curl_slist *h = NULL, *t;
	struct sbuf b = {0};

	snprintf(line, sizeof(line), "x-amz-content-sha256: %s",
		 sha ? sha : EMPTY_SHA256);
	h = cu.slist_append(NULL, line);
	if (h && s->cfg.token_[0]) {
		sb_str(&b, "x-amz-security-token: ");
		sb_str(&b, s->cfg.token_);
		t = b.err ? NULL : cu.slist_append(h, b.s);
		if (b.s) {
			explicit_bzero(b.s, b.cap);
			free(b.s);
		}
		if (!t) {
			free_headers(h);
			return NULL;
		}
	}
	for (; h && extra && *extra; extra++) {
		t = cu.slist_append(h, *extra);
		if (!t) {
			free_headers(h);
			return NULL;
		}
	}
	return h;
}

struct error_ctx {
	char *code, *msg;
	size_t clen, mlen;
};

static int error_fn(struct xml *x, enum xml_ev ev, const char *text, size_t tlen)
{
	struct error_ctx *c = x->ctx;

	if (ev != XML_END || x->depth != 2 || strcmp(x->names[0], "Error"))
		return 0;
	if (!strcmp(x->names[1], "Code")) {
		size_t i, n = 0;

		for (i = 0; i < tlen && n + 1 < c->clen; i++)
			if (alnum(text[i]) || text[i] == '.')
				c->code[n++] = text[i];
		c->code[n] = '\0';
	} else if (!strcmp(x->names[1], "Message")) {
		size_t n = text_clean(text, c->msg, c->mlen);

		while (n && (c->msg[n - 1] == '.' || c->msg[n - 1] == ' '))
			c->msg[--n] = '\0';
	}
	return 0;
}

/* The S3 error in @body: its Code (letters and digits) and Message
 * (cleaned, no trailing full stop). */
static void error_body(const char *body, size_t n, char *code, size_t clen, char *msg,
		       size_t mlen)
{
	struct error_ctx c = {code, msg, clen, mlen};
	struct xml x = {.fn = error_fn, .ctx = &c};

	code[0] = msg[0] = '\0';
	if (body && n && xml_walk(&x, body, n))
		code[0] = msg[0] = '\0'; /* not S3's: nothing from it is shown */
	free(x.text);
}

/* The -errno and @why for an answer that was not 2xx. @key: the key asked
 * for, NULL for the bucket. */
static int answer_error(struct s3 *s, struct xfer *x, const char *key, char *why,
			size_t len)
{
	char code[64] = "", msg[256] = "", kbuf[160], ep[160], hint[128] = "", said[400];
	long st = s->status;
	int err;

	error_body(x->body, x->blen, code, sizeof(code), msg, sizeof(msg));
	if (st >= 500 || st == 429 || !strcmp(code, "SlowDown") ||
	    !strcmp(code, "RequestTimeout") || !strcmp(code, "InternalError") ||
	    !strcmp(code, "ServiceUnavailable"))
		err = -EAGAIN;
	else if (st == 401 || st == 403 || !strcmp(code, "ExpiredToken") ||
		 !strcmp(code, "InvalidToken") || !strcmp(code, "AccessDenied"))
		err = -EACCES;
	else if (st == 404 || !strcmp(code, "NoSuchBucket") || !strcmp(code, "NoSuchKey"))
		err = -ENOENT;
	else
		err = -EIO;
	if (x->bucket_region[0] && strcmp(x->bucket_region, s->cfg.region))
		snprintf(hint, sizeof(hint), " (the bucket is in %s: set AWS_REGION=%s)",
			 x->bucket_region, x->bucket_region);
	if (code[0])
		snprintf(said, sizeof(said), "S3 said %ld %s%s%s", st, code,
			 msg[0] ? ": " : "", msg);
	else
		snprintf(said, sizeof(said), "S3 said %ld%s", st,
			 x->blen || err == -ENOENT
				 ? ""
				 : " (an answer without a body to say why)");
	shown(s->cfg.endpoint, ep, sizeof(ep));
	if (!strcmp(code, "NoSuchBucket") || (err == -ENOENT && !code[0] && !key))
		text_say(why, len, "no bucket '%s' at %s: %s%s", s->bucket, ep, said,
			 hint);
	else if (!strcmp(code, "NoSuchKey"))
		text_say(why, len, "no key '%s' in bucket '%s': %s%s",
			 shown(key, kbuf, sizeof(kbuf)), s->bucket, said, hint);
	else if (err == -ENOENT && !code[0])
		text_say(why, len,
			 "no key '%s' in bucket '%s' (or no such bucket at %s): %s%s",
			 shown(key, kbuf, sizeof(kbuf)), s->bucket, ep, said, hint);
	else if (err == -EACCES)
		text_say(why, len, "%s%s (key from %s)", said, hint, s->cfg.source);
	else
		text_say(why, len, "%s%s", said, hint);
	return err;
}

static int transport_error(struct s3 *s, CURLcode rc, char *why, size_t len)
{
	char ep[160], detail[CURL_ERROR_SIZE];

	shown(s->cfg.endpoint, ep, sizeof(ep));
	shown(s->curl_err, detail, sizeof(detail));
	if (detail[0] && strcmp(detail, cu.easy_strerror(rc)))
		text_say(why, len, "%s: %s (%s)", ep, cu.easy_strerror(rc), detail);
	else
		text_say(why, len, "%s: %s", ep, cu.easy_strerror(rc));
	switch (rc) {
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
		return -EINVAL;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
		return -EIO; /* a certificate refused: trying again will not help */
	default:
		return -EAGAIN;
	}
}

/* Run the request set up on s->curl: 0 for a 2xx answer, else -errno. */
static int perform(struct s3 *s, const char *url, struct curl_slist *hdr, struct xfer *x,
		   const char *key, char *why, size_t len)
{
	CURLcode rc;

	s->curl_err[0] = '\0';
	s->status = 0;
	if (cu.easy_setopt(s->curl, CURLOPT_URL, url) ||
	    cu.easy_setopt(s->curl, CURLOPT_HTTPHEADER, hdr) ||
	    cu.easy_setopt(s->curl, CURLOPT_WRITEDATA, x) ||
	    cu.easy_setopt(s->curl, CURLOPT_HEADERDATA, x) ||
	    cu.easy_setopt(s->curl, CURLOPT_READDATA, x) ||
	    cu.easy_setopt(s->curl, CURLOPT_SEEKDATA, x)) {
		text_say(why, len, "cannot set up the request");
		return -ENOMEM;
	}
	rc = cu.easy_perform(s->curl);
	cu.easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &s->status);
	cu.easy_setopt(s->curl, CURLOPT_HTTPHEADER, NULL);
	if (x->err) {
		text_say(why, len, "%s: %s", x->err_what, strerror(-x->err));
		return x->err;
	}
	if (x->too_big && x->fd >= 0) {
		text_say(why, len, "%s is larger than listed (%llu bytes): not kept", key,
			 (unsigned long long)x->fd_max);
		return -EBADMSG;
	}
	if (x->too_big) {
		text_say(why, len, "an answer larger than %zu MiB", x->body_max >> 20);
		return -EBADMSG;
	}
	if (rc != CURLE_OK)
		return transport_error(s, rc, why, len);
	if (s->status >= 200 && s->status < 300)
		return 0;
	return answer_error(s, x, key, why, len);
}

/* The credentials fetched again if they expire soon (KEYS_BEFORE): 0,
 * else -EAGAIN with why when they have expired (or are about to) and
 * could not be. */
static int fresh_keys(struct s3 *s, char *why, size_t len)
{
	int64_t now = (int64_t)time(NULL), exp = s->cfg.expires;
	struct s3_config n;
	char w[400];
	int err;

	if (!exp || now + KEYS_BEFORE < exp ||
	    (now < s->next_fetch && now + KEYS_PAUSE < exp))
		return 0;
	s->next_fetch = now + KEYS_PAUSE;
	n = s->cfg;
	w[0] = '\0';
	err = s3_config_reload_keys(&n, w, sizeof(w));
	if (!err && (cu.easy_setopt(s->curl, CURLOPT_USERNAME, n.key_id_) ||
		     cu.easy_setopt(s->curl, CURLOPT_PASSWORD, n.secret_))) {
		err = -ENOMEM;
		snprintf(w, sizeof(w), "cannot set them on the connection");
		/* the old ones again */
		cu.easy_setopt(s->curl, CURLOPT_USERNAME, s->cfg.key_id_);
		cu.easy_setopt(s->curl, CURLOPT_PASSWORD, s->cfg.secret_);
	}
	if (!err)
		s->cfg = n;
	explicit_bzero(&n, sizeof(n));
	if (!err || now + KEYS_PAUSE < exp)
		return 0; /* (a failure while the old ones hold: tried again later) */
	text_say(why, len, "the credentials from %s expire%s and cannot be had again: %s",
		 s->cfg.source, now < exp ? "" : "d", w[0] ? w : strerror(-err));
	return err == -ENOMEM ? err : -EAGAIN;
}

static void xfer_init(struct xfer *x, struct s3 *s)
{
	memset(x, 0, sizeof(*x));
	x->s = s;
	x->fd = x->in_fd = -1;
}

/* ENDPOINT/BUCKET/KEY, the key escaped */
static int object_url(const struct s3 *s, const char *key, struct sbuf *b)
{
	sb_str(b, s->cfg.endpoint);
	sb_str(b, "/");
	sb_str(b, s->bucket);
	sb_str(b, "/");
	sb_esc(b, key, true);
	return b->err;
}

/* The skeleton of a request on one object, in two steps around what is a
 * verb's own (its checks, its fields of @x): object_begin() first, before
 * anything else the verb does, then object_request(). */

/* @key checked (-EINVAL, with why) and @x set up for a request on it */
static int object_begin(struct s3 *s, const char *key, struct xfer *x, char *why,
			size_t len)
{
	size_t n = key ? strlen(key) : 0;

	if (!n || n > KEY_MAX) {
		text_say(why, len, "an object key must be 1 to %d bytes", KEY_MAX);
		return -EINVAL;
	}
	xfer_init(x, s);
	return 0;
}

/* What sets a verb's request apart: the hash of its body and the headers
 * it adds (as headers() takes them), and its option on the handle, @on
 * for the request (after CURLOPT_HTTPGET, so each verb starts from a GET)
 * and @off after it, so the next request finds the handle as it was. */
struct object_req {
	const char *sha;
	const char *const *extra;
	CURLoption opt;
	long on, off;
};

/* @r on @key with @x: the headers, the URL, the options (an upload's
 * size from @x), perform(). 0 or -errno, with why; x->body is freed. */
static int object_request(struct s3 *s, const char *key, const struct object_req *r,
			  struct xfer *x, char *why, size_t len)
{
	struct curl_slist *hdr = NULL;
	struct sbuf url = {0};
	int err;

	err = fresh_keys(s, why, len);
	if (err)
		goto out;
	err = -ENOMEM;
	hdr = headers(s, r->sha, r->extra);
	if (!hdr || object_url(s, key, &url))
		goto out;
	if (cu.easy_setopt(s->curl, CURLOPT_HTTPGET, 1L) ||
	    cu.easy_setopt(s->curl, r->opt, r->on) ||
	    (x->in_fd >= 0 &&
	     cu.easy_setopt(s->curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->in_size)))
		goto out;
	err = perform(s, url.s, hdr, x, key, why, len);
	cu.easy_setopt(s->curl, r->opt, r->off);
out:
	free(x->body);
	x->body = NULL;
	free_headers(hdr);
	free(url.s);
	return err;
}

/* The hex SHA-256 of @fd's first @size bytes into @hex: what a PUT signs,
 * so that no one on the path can change the payload (S3 refuses a body
 * whose hash is not the signed one). 0 or -errno, with why. */
static int payload_sha256(int fd, uint64_t size, char hex[2 * SHA256_LEN + 1], char *why,
			  size_t len)
{
	enum { CHUNK = 1 << 16 };
	uint8_t *buf = malloc(CHUNK), d[SHA256_LEN];
	struct sha256 c;
	uint64_t off = 0;
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	sha256_init(&c);
	while (off < size) {
		size_t n = size - off < CHUNK ? (size_t)(size - off) : CHUNK;

		do
			r = pread(fd, buf, n, (off_t)off);
		while (r < 0 && errno == EINTR);
		if (r <= 0) {
			free(buf);
			text_say(why, len, "%s",
				 r < 0 ? "cannot read the file to put"
				       : "the file to put is shorter than its size");
			return r < 0 ? -errno : -EIO;
		}
		sha256_update(&c, buf, (size_t)r);
		off += (uint64_t)r;
	}
	free(buf);
	sha256_final(&c, d);
	sha256_hex(d, hex);
	return 0;
}

int s3__put_fd(struct s3 *s, const char *key, int fd, uint64_t size,
	       const struct s3_meta *meta, size_t nmeta, char *why, size_t len)
{
	char sha[2 * SHA256_LEN + 1];
	const char **extra;
	struct object_req r = {.sha = sha, .opt = CURLOPT_UPLOAD, .on = 1, .off = 0};
	struct xfer x;
	size_t i, k = 0;
	int err;

	err = object_begin(s, key, &x, why, len);
	if (err)
		return err;
	if (size > INT64_MAX) {
		text_say(why, len, "the file is too large");
		return -EFBIG;
	}
	extra = calloc(nmeta + 1, sizeof(*extra));
	if (!extra)
		return -ENOMEM;
	for (i = 0; i < nmeta; i++) {
		const char *mk = meta[i].key, *mv = meta[i].value;
		size_t j, kl = mk ? strlen(mk) : 0, vl = mv ? strlen(mv) : 0;
		char *h;

		for (j = 0; j < kl; j++)
			if (!lower_digit(mk[j]) && mk[j] != '-')
				break;
		if (!kl || j < kl || kl > 128) {
			text_say(why, len,
				 "metadata key %zu is not 1 to 128 of a-z, 0-9 and '-'",
				 i);
			err = -EINVAL;
			goto out;
		}
		for (j = 0; j < vl; j++)
			if (mv[j] < ' ' || mv[j] > '~')
				break;
		if (vl > META_VALUE_MAX || j < vl) {
			text_say(
				why, len,
				"metadata value of '%s' is not at most %d bytes of printable ASCII",
				mk, META_VALUE_MAX);
			err = -EINVAL;
			goto out;
		}
		/* An empty (or blank) header is one libcurl would drop, yet sign:
		 * not sent, it reads back as absent, which is "" too. Blanks
		 * inside a value are signed as S3 reads them (trimmed,
		 * runs of them as one). */
		if (!vl || strspn(mv, " ") == vl)
			continue;
		h = malloc(11 + kl + 2 + vl + 1);
		if (!h) {
			err = -ENOMEM;
			goto out;
		}
		sprintf(h, "x-amz-meta-%s: %s", mk, mv);
		extra[k++] = h;
	}
	err = payload_sha256(fd, size, sha, why, len);
	if (err)
		goto out;
	r.extra = extra;
	x.in_fd = fd;
	x.in_size = size;
	err = object_request(s, key, &r, &x, why, len);
out:
	for (i = 0; i < k; i++)
		free((char *)extra[i]);
	free(extra);
	return err;
}

int s3__get_fd(struct s3 *s, const char *key, int fd, uint64_t max, uint64_t *size,
	       char *why, size_t len)
{
	/* its deadline: the usual, and the time its size takes at
	 * S3_GET_FLOOR bytes a second */
	struct object_req r = {
		.opt = CURLOPT_TIMEOUT_MS,
		.on = (long)(s->deadline_ms +
			     (max == UINT64_MAX ? 0 : max / S3_GET_FLOOR * 1000)),
		.off = s->deadline_ms,
	};
	struct xfer x;
	int err;

	err = object_begin(s, key, &x, why, len);
	if (err)
		return err;
	if (ftruncate(fd, 0)) {
		err = -errno;
		text_say(why, len, "cannot truncate the file to get into: %s",
			 strerror(errno));
		return err;
	}
	x.fd = fd;
	x.fd_max = max;
	err = object_request(s, key, &r, &x, why, len);
	if (!err && max != UINT64_MAX && x.off != max) {
		text_say(why, len, "%s came as %llu bytes, listed as %llu: not kept", key,
			 (unsigned long long)x.off, (unsigned long long)max);
		err = -EBADMSG;
	}
	if (!err && size)
		*size = x.off;
	return err;
}

int s3__head(struct s3 *s, const char *key, uint64_t *size, const char *meta_key,
	     char *value, size_t vlen, char *why, size_t len)
{
	struct object_req r = {.opt = CURLOPT_NOBODY, .on = 1, .off = 0};
	struct xfer x;
	int err;

	err = object_begin(s, key, &x, why, len);
	if (err)
		return err;
	if (value && vlen)
		value[0] = '\0';
	x.meta_key = meta_key && value && vlen ? meta_key : NULL;
	err = object_request(s, key, &r, &x, why, len);
	if (err)
		return err;
	if (!x.have_length) {
		curl_off_t cl = -1;

		if (!cu.easy_getinfo(s->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) &&
		    cl >= 0) {
			x.length = (uint64_t)cl;
			x.have_length = true;
		}
	}
	if (!x.have_length) {
		text_say(why, len, "S3 said %ld without a Content-Length", s->status);
		return -EBADMSG;
	}
	if (size)
		*size = x.length;
	if (x.meta_key && x.have_meta) {
		if (strlen(x.meta) >= vlen) {
			text_say(why, len,
				 "the value of x-amz-meta-%s is longer than %zu bytes",
				 meta_key, vlen - 1);
			return -ERANGE;
		}
		strcpy(value, x.meta);
	}
	return 0;
}

/* ---- listing ------------------------------------------------------------- */

struct list_ctx {
	struct s3_object *v; /* the page being read: its objects */
	size_t n, cap;
	struct s3_object cur;
	bool have_size, truncated, have_truncated;
	char *next;
};

/* Forget the page's objects (its memory is kept for the next page). */
static void page_clear(struct list_ctx *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].key);
	c->n = 0;
}

int s3_parse_time(const char *s, int64_t *out)
{
	struct tm tm = {0};
	int y, mo, d, h, mi, sec, n = 0, off = 0;
	time_t t;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 ||
	    n != 19)
		return -1;
	s += n;
	if (*s == '.')
		for (s++; isdigit((unsigned char)*s); s++)
			;
	if ((s[0] == '+' || s[0] == '-') && isdigit((unsigned char)s[1]) &&
	    isdigit((unsigned char)s[2]) && s[3] == ':' && isdigit((unsigned char)s[4]) &&
	    isdigit((unsigned char)s[5]) && !s[6]) {
		off = ((s[1] - '0') * 10 + (s[2] - '0')) * 3600 +
		      ((s[4] - '0') * 10 + (s[5] - '0')) * 60;
		if (s[0] == '-')
			off = -off;
	} else if (strcmp(s, "Z")) {
		return -1;
	}
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	*out = (int64_t)t - off;
	return 0;
}

static int list_fn(struct xml *x, enum xml_ev ev, const char *text, size_t tlen)
{
	struct list_ctx *c = x->ctx;
	const char *el = x->names[x->depth - 1];

	if (x->depth == 1 && strcmp(el, "ListBucketResult"))
		return xml_bad(x, "the answer is not a ListBucketResult");
	if (x->depth == 2 && !strcmp(el, "Contents")) {
		if (ev == XML_START) {
			free(c->cur.key);
			memset(&c->cur, 0, sizeof(c->cur));
			c->have_size = false;
			return 0;
		}
		if (!c->cur.key || !c->have_size)
			return xml_bad(x, "a Contents without its Key or Size");
		if (LIB_GROW(c->v, c->cap, c->n + 1))
			return -ENOMEM;
		c->v[c->n++] = c->cur;
		c->cur.key = NULL;
		return 0;
	}
	if (ev != XML_END)
		return 0;
	if (x->depth == 2 && !strcmp(el, "IsTruncated")) {
		if (strcmp(text, "true") && strcmp(text, "false"))
			return xml_bad(x, "IsTruncated neither true nor false");
		c->truncated = !strcmp(text, "true");
		c->have_truncated = true;
	} else if (x->depth == 2 && !strcmp(el, "NextContinuationToken")) {
		if (!tlen || tlen > TOKEN_MAX || strlen(text) != tlen)
			return xml_bad(x, "a NextContinuationToken empty or too long");
		free(c->next);
		c->next = strdup(text);
		if (!c->next)
			return -ENOMEM;
	} else if (x->depth == 3 && !strcmp(x->names[1], "Contents")) {
		if (!strcmp(el, "Key")) {
			if (!tlen || tlen > KEY_MAX || strlen(text) != tlen)
				return xml_bad(x,
					       "a Key empty or longer than 1024 bytes");
			free(c->cur.key);
			c->cur.key = strdup(text);
			if (!c->cur.key)
				return -ENOMEM;
		} else if (!strcmp(el, "Size")) {
			char *e;

			errno = 0;
			c->cur.size = strtoull(text, &e, 10);
			if (errno || !isdigit((unsigned char)text[0]) || *e)
				return xml_bad(x, "a Size that is not a number");
			c->have_size = true;
		} else if (!strcmp(el, "ETag")) {
			const char *t = text;
			size_t n = tlen;

			if (n >= 2 && t[0] == '"' && t[n - 1] == '"') {
				t++;
				n -= 2;
			}
			c->cur.etag[0] = '\0';
			if (n < sizeof(c->cur.etag)) {
				memcpy(c->cur.etag, t, n);
				c->cur.etag[n] = '\0';
				text_clean(c->cur.etag, c->cur.etag, sizeof(c->cur.etag));
			}
		} else if (!strcmp(el, "LastModified")) {
			if (s3_parse_time(text, &c->cur.mtime))
				return xml_bad(
					x, "a LastModified that is not an ISO 8601 time");
		}
	}
	return 0;
}

int s3__list(struct s3 *s, const char *prefix, s3_page_fn fn, void *arg, char *why,
	     size_t len)
{
	struct list_ctx c = {0};
	struct lib_map seen = {0};
	int created;
	struct xml xp = {.fn = list_fn, .ctx = &c, .why = why, .len = len};
	struct curl_slist *hdr;
	char *token = NULL;
	int err = -ENOMEM;

	if (!prefix)
		prefix = "";
	err = fresh_keys(s, why, len);
	if (err)
		return err;
	hdr = headers(s, NULL, NULL);
	if (!hdr)
		return -ENOMEM;
	for (;;) {
		struct sbuf url = {0};
		struct xfer x;

		/* the parameters sorted by name: libcurl 7.88 signs the query as it is */
		sb_str(&url, s->cfg.endpoint);
		sb_str(&url, "/");
		sb_str(&url, s->bucket);
		sb_str(&url, "?");
		if (token) {
			sb_str(&url, "continuation-token=");
			sb_esc(&url, token, false);
			sb_str(&url, "&");
		}
		sb_str(&url, "list-type=2&prefix=");
		sb_esc(&url, prefix, false);
		if (url.err) {
			free(url.s);
			err = -ENOMEM;
			break;
		}
		xfer_init(&x, s);
		x.body_max = LIST_PAGE_MAX;
		err = cu.easy_setopt(s->curl, CURLOPT_HTTPGET, 1L)
			      ? -ENOMEM
			      : perform(s, url.s, hdr, &x, NULL, why, len);
		free(url.s);
		if (!err) {
			c.truncated = c.have_truncated = false;
			free(c.next);
			c.next = NULL;
			page_clear(&c);
			err = x.blen ? xml_walk(&xp, x.body, x.blen)
				     : xml_bad(&xp, "an empty answer to a listing");
		}
		free(x.body);
		/* the page whole, or none of it (a page cut by a bad answer
		 * is not half given) */
		if (!err && c.n)
			err = fn(arg, c.v, c.n);
		if (err)
			break;
		if (!c.have_truncated || !c.truncated)
			break;
		if (!c.next) {
			err = xml_bad(&xp, "IsTruncated without a NextContinuationToken");
			break;
		}
		/* a token seen before, the last or any: a listing that would
		 * never end */
		if (!lib_map_get(&seen, lib_hash_str(c.next), &created)) {
			err = -ENOMEM;
			break;
		}
		if (!created) {
			err = xml_bad(&xp, "a continuation token seen before");
			break;
		}
		free(token);
		token = c.next;
		c.next = NULL;
	}
	page_clear(&c);
	free(c.v);
	free(c.cur.key);
	free(c.next);
	free(token);
	free(xp.text);
	free_headers(hdr);
	lib_map_release(&seen);
	return err;
}
