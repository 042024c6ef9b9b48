/* SPDX-License-Identifier: MIT */
/*
 * s3_creds.c - s3_creds_find() (s3_int.h): the credential chain of the
 * AWS SDKs, in their order, as store/s3.h lists it: the environment, web
 * identity (STS AssumeRoleWithWebIdentity), the profile's
 * credential_process, SSO (refused: not supported), the profile's keys,
 * the container endpoint, IMDSv2. The first source that is set up
 * decides: its credentials, or its error, named ("credential_process of
 * profile dev: exit 1: ..."); none set up is -ENOKEY with what was tried.
 *
 * What the sources answer is read here: STS's XML through store/xml.h,
 * the JSON of a credential_process and of the metadata endpoints through
 * the reader below (just enough JSON: the root object's scalar members;
 * nested values checked and skipped; iterative, its depth bounded, its
 * input bounded by the caller). Key ids, secrets and tokens from them
 * must be printable ASCII without blanks: they go into headers.
 *
 * Secrets: this file is one of the three that hold them (s3.c,
 * s3_config.c). The token files' text, the requests' bodies and headers
 * (s3.c wipes its copies), the answers (s3_http_release()), the readers'
 * buffers (sized once for the whole answer, so no realloc leaves a copy)
 * and the command's output are wiped before they are freed; no message
 * quotes a secret, a container endpoint's path (it may be one) or an
 * answer's body (only an error's code and message).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/text.h"
#include "store/s3.h"
#include "store/s3_int.h"
#include "store/xml.h"

extern char **environ;

#define ANSWER_MAX	  (64u << 10) /* an endpoint's answer */
#define TOKEN_FILE_MAX	  (64u << 10) /* a web identity or container token */
#define PROCESS_OUT_MAX	  (64u << 10) /* a credential_process's stdout */
#define PROCESS_ERR_KEEP  1024	      /* the end of its stderr, for a message */
#define PROCESS_TIMEOUT_S 60
#define JSON_DEPTH	  16
#define IMDS_DEFAULT	  "http://169.254.169.254"
#define IMDS_DEFAULT_IPV6 "http://[fd00:ec2::254]"
#define CONTAINER_HOST	  "http://169.254.170.2"
#define IMDS_TOKEN_TTL	  "21600"
#define ROLE_SESSION_MAX  64

/* ---- what a source hands out --------------------------------------------- */

struct keys {
	char key_id[sizeof(((struct s3_config *)0)->key_id_)];
	char secret[sizeof(((struct s3_config *)0)->secret_)];
	char token[sizeof(((struct s3_config *)0)->token_)];
	char expiration[64];
	char version[16];
	char code[64], message[256]; /* an error's, or IMDS's "Code" */
	const char *too_long;	     /* a member that did not fit */
};

#define KF(f) offsetof(struct keys, f), sizeof(((struct keys *)0)->f)
static const struct {
	const char *name;
	size_t off, size;
} key_members[] = {
	/* the credential_process, container and IMDS names; STS's are the
	 * first four too */
	{"AccessKeyId", KF(key_id)},
	{"SecretAccessKey", KF(secret)},
	{"SessionToken", KF(token)},
	{"Token", KF(token)},
	{"Expiration", KF(expiration)},
	{"Version", KF(version)},
	{"Code", KF(code)},
	{"code", KF(code)},
	{"Message", KF(message)},
	{"message", KF(message)},
};
#undef KF

static void keys_set(struct keys *k, const char *name, const char *v, size_t n)
{
	for (size_t i = 0; i < sizeof(key_members) / sizeof(key_members[0]); i++) {
		if (strcmp(name, key_members[i].name))
			continue;
		if (n >= key_members[i].size) {
			k->too_long = key_members[i].name;
			return;
		}
		memcpy((char *)k + key_members[i].off, v, n);
		((char *)k + key_members[i].off)[n] = '\0';
	}
}

/* printable ASCII without blanks, @min to any bytes */
static bool header_safe(const char *s, size_t min)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (s[n] <= ' ' || s[n] > '~')
			return false;
	return n >= min;
}

/* @k's credentials into @c, from @label: 0, or -EBADMSG with why. */
static int keys_give(struct s3_config *c, const struct keys *k, const char *label,
		     char *why, size_t len)
{
	const char *bad = NULL;
	int64_t exp = 0;
	size_t i;

	for (i = 0; k->key_id[i]; i++)
		if (!isalnum((unsigned char)k->key_id[i]) || k->key_id[i] & 0x80)
			break;
	if (k->too_long)
		bad = k->too_long;
	else if (!k->key_id[0] || k->key_id[i])
		bad = "AccessKeyId";
	else if (!header_safe(k->secret, 1))
		bad = "SecretAccessKey";
	else if (!header_safe(k->token, 0))
		bad = "SessionToken";
	else if (k->expiration[0] && s3_parse_time(k->expiration, &exp))
		bad = "Expiration";
	if (bad && k->too_long)
		text_say(why, len, "%s: a %s too long", label, bad);
	else if (bad)
		text_say(why, len, "%s: no usable %s in its answer", label, bad);
	if (bad)
		return -EBADMSG;
	memcpy(c->key_id_, k->key_id, sizeof(c->key_id_));
	memcpy(c->secret_, k->secret, sizeof(c->secret_));
	memcpy(c->token_, k->token, sizeof(c->token_));
	text_say(c->source, sizeof(c->source), "%s", label);
	c->expires = exp;
	return 0;
}

/* ---- a JSON reader, just enough for the credential answers --------------- */

struct jr {
	const char *doc, *p, *end;
	char *buf; /* the current string or scalar: room for the whole document */
	char *why;
	size_t len;
};

static int jbad(struct jr *j, const char *what)
{
	text_say(j->why, j->len, "not JSON: %s at byte %zu", what,
		 (size_t)(j->p - j->doc));
	return -EBADMSG;
}

static void jws(struct jr *j)
{
	while (j->p < j->end &&
	       (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

/* The string at j->p (its '"') decoded into j->buf, its length in *@n.
 * \u escapes of ASCII decode as it; others as TEXT_REPLACEMENT (nothing
 * read here needs them: keys and tokens are ASCII, messages are shown
 * cleaned). */
static int jstr(struct jr *j, size_t *n)
{
	static const char esc[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
	char *o = j->buf;

	for (j->p++;;) {
		unsigned char ch;
		const char *e;

		if (j->p >= j->end)
			return jbad(j, "a string without its end");
		ch = (unsigned char)*j->p++;
		if (ch == '"')
			break;
		if (ch < 0x20)
			return jbad(j, "a control character in a string");
		if (ch != '\\') {
			*o++ = (char)ch;
			continue;
		}
		if (j->p >= j->end)
			return jbad(j, "a string without its end");
		ch = (unsigned char)*j->p++;
		if (ch == 'u') {
			unsigned long cp = 0;

			for (int i = 0; i < 4; i++, j->p++) {
				if (j->p >= j->end || !isxdigit((unsigned char)*j->p))
					return jbad(j, "a \\u without 4 hex digits");
				cp = cp * 16 +
				     (unsigned long)(isdigit((unsigned char)*j->p)
							     ? *j->p - '0'
							     : (*j->p | 0x20) - 'a' + 10);
			}
			*o++ = cp && cp < 0x80 ? (char)cp : TEXT_REPLACEMENT;
			continue;
		}
		for (e = esc; *e && *e != (char)ch; e += 2)
			;
		if (!*e)
			return jbad(j, "an unknown escape");
		*o++ = e[1];
	}
	*o = '\0';
	*n = (size_t)(o - j->buf);
	return 0;
}

/* A number, true, false or null at j->p into j->buf, as written */
static int jscalar(struct jr *j, size_t *n)
{
	static const char *const lit[] = {"true", "false", "null"};
	const char *s = j->p, *d;

	for (size_t i = 0; i < 3; i++) {
		size_t l = strlen(lit[i]);

		if ((size_t)(j->end - j->p) >= l && !memcmp(j->p, lit[i], l)) {
			j->p += l;
			goto done;
		}
	}
	if (j->p < j->end && *j->p == '-')
		j->p++;
	d = j->p;
	while (j->p < j->end && isdigit((unsigned char)*j->p))
		j->p++;
	if (j->p == d || (*d == '0' && j->p - d > 1))
		return jbad(j, "a value that is none");
	if (j->p < j->end && *j->p == '.') {
		d = ++j->p;
		while (j->p < j->end && isdigit((unsigned char)*j->p))
			j->p++;
		if (j->p == d)
			return jbad(j, "a number without digits after its '.'");
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		d = j->p;
		while (j->p < j->end && isdigit((unsigned char)*j->p))
			j->p++;
		if (j->p == d)
			return jbad(j, "a number without its exponent");
	}
done:
	*n = (size_t)(j->p - s);
	memcpy(j->buf, s, *n);
	j->buf[*n] = '\0';
	return 0;
}

/* Each scalar member of the object @doc (@n bytes) to keys_set(): strings
 * decoded, other scalars as written. 0, -EBADMSG (with why), -ENOMEM. */
static int json_keys(const char *doc, size_t n, struct keys *k, char *why, size_t len)
{
	struct jr j = {.doc = doc, .p = doc, .end = doc + n, .why = why, .len = len};
	enum { FIRST, KEY, VALUE, NEXT } st = FIRST;
	char stack[JSON_DEPTH], name[64] = "";
	int d = 0, err = 0;
	size_t vn;

	if (memchr(doc, '\0', n))
		return jbad(&j, "a NUL byte");
	j.buf = malloc(n + 1);
	if (!j.buf)
		return -ENOMEM;
	jws(&j);
	if (j.p == j.end || *j.p != '{')
		err = jbad(&j, "not an object");
	else
		stack[d++] = *j.p++ == '{' ? '}' : ']';
	while (d && !err) {
		char ch;

		jws(&j);
		if (j.p == j.end) {
			err = jbad(&j, "the document ends inside a value");
			break;
		}
		ch = *j.p;
		if ((st == FIRST || st == NEXT) && ch == stack[d - 1]) {
			j.p++;
			d--;
			st = NEXT;
			continue;
		}
		if (st == NEXT) {
			if (ch != ',')
				err = jbad(&j, "no ',' between two values");
			j.p++;
			st = stack[d - 1] == '}' ? KEY : VALUE;
			continue;
		}
		if (st == FIRST)
			st = stack[d - 1] == '}' ? KEY : VALUE;
		if (st == KEY) {
			if (ch != '"') {
				err = jbad(&j, "a member without a quoted name");
				break;
			}
			if ((err = jstr(&j, &vn)))
				break;
			/* (a longer name is none we look for) */
			if (vn < sizeof(name))
				memcpy(name, j.buf, vn + 1);
			else
				name[0] = '\0';
			jws(&j);
			if (j.p == j.end || *j.p != ':')
				err = jbad(&j, "a member's name without its ':'");
			j.p++;
			st = VALUE;
		} else if (ch == '{' || ch == '[') {
			if (d == JSON_DEPTH)
				err = jbad(&j, "values nested too deep");
			stack[d++] = ch == '{' ? '}' : ']';
			j.p++;
			st = FIRST;
		} else {
			err = ch == '"' ? jstr(&j, &vn) : jscalar(&j, &vn);
			if (!err && d == 1)
				keys_set(k, name, j.buf, vn);
			st = NEXT;
		}
	}
	if (!err) {
		jws(&j);
		if (j.p != j.end)
			err = jbad(&j, "text after the object");
	}
	explicit_bzero(j.buf, n + 1);
	free(j.buf);
	explicit_bzero(name, sizeof(name));
	return err;
}

/* ---- STS's XML ------------------------------------------------------------ */

static int sts_fn(struct xml *x, enum xml_ev ev, const char *text, size_t tlen)
{
	struct keys *k = x->ctx;
	const char *el = x->names[x->depth - 1];

	if (ev != XML_END)
		return 0;
	/* AssumeRoleWithWebIdentityResponse/...Result/Credentials/NAME, or
	 * ErrorResponse/Error/{Code,Message} */
	if ((x->depth == 4 && !strcmp(x->names[2], "Credentials") &&
	     strcmp(el, "Token") && strcmp(el, "Version") && strcmp(el, "Code") &&
	     strcmp(el, "Message")) ||
	    (x->depth == 3 && !strcmp(x->names[0], "ErrorResponse") &&
	     !strcmp(x->names[1], "Error") &&
	     (!strcmp(el, "Code") || !strcmp(el, "Message"))))
		keys_set(k, el, text, tlen);
	return 0;
}

/* STS's answer @a (@n bytes) into @k: 0 or -EBADMSG with why */
static int sts_read(const char *a, size_t n, struct keys *k, char *why, size_t len)
{
	struct xml x = {.fn = sts_fn, .ctx = k, .why = why, .len = len};
	int err = -ENOMEM;

	/* the text's room at once (no element's text is longer than the
	 * answer): no realloc leaves a secret behind */
	x.text = malloc(n + 1);
	if (x.text) {
		x.tcap = n + 1;
		err = xml_walk(&x, a, n);
		explicit_bzero(x.text, x.tcap);
	}
	free(x.text);
	return err;
}

/* ---- helpers --------------------------------------------------------------- */

/* What the chain tried and found nothing in, for the message of none */
struct tried {
	char s[512];
	size_t n;
};

static void __attribute__((format(printf, 2, 3)))
tried(struct tried *t, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (t->n + 3 >= sizeof(t->s))
		return;
	if (t->n)
		t->n += (size_t)snprintf(t->s + t->n, sizeof(t->s) - t->n, ", ");
	va_start(ap, fmt);
	w = vsnprintf(t->s + t->n, sizeof(t->s) - t->n, fmt, ap);
	va_end(ap);
	if (w > 0)
		t->n = t->n + (size_t)w < sizeof(t->s) ? t->n + (size_t)w
						       : sizeof(t->s) - 1;
}

/* The profile's value at @off (offsetof(struct s3_profile, ...)): the
 * credentials file's, else the config file's; NULL if neither has it */
static const char *pick(const struct s3_files *f, size_t off)
{
	for (int i = 0; f->pv && i < 2; i++) {
		const char *v = (const char *)&f->pv[i] + off;

		if (*v)
			return v;
	}
	return NULL;
}
#define PICK(f, field) pick((f), offsetof(struct s3_profile, field))

/* The token file @path (@var names where it was set) into @buf (@cap
 * bytes), its trailing blanks cut: followed if a symlink (Kubernetes
 * mounts them so), a regular file no one else may write, at most
 * TOKEN_FILE_MAX bytes. 0, or -errno with why prefixed by @label. The
 * caller wipes @buf. */
static int read_token(const char *path, const char *var, const char *label, char *buf,
		      size_t cap, char *why, size_t len)
{
	char pbuf[160];
	struct stat st;
	size_t got = 0;
	int fd, err = 0;

	shown(path, pbuf, sizeof(pbuf));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		text_say(why, len, "%s: cannot open %s (%s): %s", label, pbuf, var,
			 strerror(errno));
		return err == -ENOENT ? -ENOKEY : err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_mode & S_IWOTH) ||
	    st.st_size >= (off_t)cap) {
		text_say(
			why, len,
			"%s: %s (%s) is not a regular file of at most %zu bytes that only "
			"its owner and group may write: not read",
			label, pbuf, var, cap - 1);
		close(fd);
		return -EPERM;
	}
	for (;;) {
		ssize_t r = read(fd, buf + got, cap - 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			text_say(why, len, "%s: cannot read %s: %s", label, pbuf,
				 strerror(errno));
			break;
		}
		if (r == 0 || (got += (size_t)r) == cap - 1)
			break;
	}
	close(fd);
	while (got && isspace((unsigned char)buf[got - 1]))
		got--;
	buf[got] = '\0';
	if (!err && !got) {
		text_say(why, len, "%s: %s (%s) is empty", label, pbuf, var);
		err = -ENOKEY;
	}
	return err;
}

/* The -errno of an endpoint's error status */
static int status_error(long status)
{
	if (status == 401 || status == 403 || status == 400)
		return -EACCES;
	if (status >= 500 || status == 429 || status == 408)
		return -EAGAIN;
	return -EIO;
}

/* "said STATUS[ CODE][: MESSAGE]" of an error answer whose code and
 * message are in @k */
static void said(char *out, size_t olen, long status, const struct keys *k)
{
	char code[64], msg[200];

	shown(k->code, code, sizeof(code));
	shown(k->message, msg, sizeof(msg));
	snprintf(out, olen, "said %ld%s%s%s%s", status, code[0] ? " " : "", code,
		 msg[0] ? ": " : "", msg);
}

/* ---- 1. the environment ---------------------------------------------------- */

static int from_env(struct s3_config *c, char *why, size_t len)
{
	const char *id = env("AWS_ACCESS_KEY_ID"), *secret = env("AWS_SECRET_ACCESS_KEY");
	const char *token = env("AWS_SESSION_TOKEN");

	if (!id && !secret)
		return 0;
	if (!id || !secret) {
		text_say(why, len, "%s is set but %s is not",
			 id ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
			 id ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
		return -ENOKEY;
	}
	if (!copy(c->key_id_, sizeof(c->key_id_), id) ||
	    !copy(c->secret_, sizeof(c->secret_), secret) ||
	    (token && !copy(c->token_, sizeof(c->token_), token))) {
		text_say(why, len, "an AWS_* credential variable is too long");
		return -EINVAL;
	}
	snprintf(c->source, sizeof(c->source), "environment");
	return 1;
}

/* ---- 2. web identity -------------------------------------------------------- */

/* @s form-encoded (RFC 3986's unreserved kept) at @out + *@at */
static void form(char *out, size_t cap, size_t *at, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s && *at + 4 < cap; s++) {
		unsigned char ch = (unsigned char)*s;

		if (isalnum(ch) && !(ch & 0x80)) {
			out[(*at)++] = (char)ch;
		} else if (strchr("-._~", ch)) {
			out[(*at)++] = (char)ch;
		} else {
			out[(*at)++] = '%';
			out[(*at)++] = hex[ch >> 4];
			out[(*at)++] = hex[ch & 15];
		}
	}
	out[*at] = '\0';
}

/* AssumeRoleWithWebIdentity for @arn with the token in @file: 0, or
 * -errno with why prefixed by @label */
static int assume_web(struct s3_config *c, const char *arn, const char *file,
		      const char *file_var, const char *session, const char *label,
		      char *why, size_t len)
{
	const char *ep = env("AWS_ENDPOINT_URL_STS"), *ep_from = "AWS_ENDPOINT_URL_STS";
	char url[520], base[512], name[ROLE_SESSION_MAX + 1], w[300], sbuf[300];
	char *token = NULL, *body = NULL;
	struct s3_http h = {.method = "POST",
			    .url = url,
			    .shown = base,
			    .connect_ms = 10000,
			    .total_ms = 30000,
			    .max = ANSWER_MAX};
	struct keys k = {0};
	size_t at = 0, cap;
	int err;

	if (!ep) {
		ep = env("AWS_ENDPOINT_URL");
		ep_from = "AWS_ENDPOINT_URL";
	}
	if (ep) {
		err = s3_check_endpoint(ep, ep_from, false, base, sizeof(base), w,
					sizeof(w));
		if (err) {
			text_say(why, len, "%s: %s", label, w);
			return err;
		}
	} else {
		snprintf(base, sizeof(base), "https://sts.%s.amazonaws.com", c->region);
	}
	snprintf(url, sizeof(url), "%s/", base);
	if (session) {
		size_t n = strlen(session), i;

		for (i = 0; i < n; i++)
			if (!text_name_char(session[i]) && !strchr("+=,@", session[i]))
				break;
		if (n < 2 || n > ROLE_SESSION_MAX || i < n) {
			text_say(
				why, len,
				"%s: the role session name is not 2 to 64 of A-Z a-z 0-9 "
				"+=,.@_-",
				label);
			return -EINVAL;
		}
		snprintf(name, sizeof(name), "%s", session);
	} else {
		snprintf(name, sizeof(name), "d9prof-%lld", (long long)time(NULL));
	}
	err = -ENOMEM;
	token = malloc(TOKEN_FILE_MAX);
	/* every byte escaped at worst, and the fixed text: nothing cut */
	cap = 128 + 3 * (strlen(arn) + strlen(name) + TOKEN_FILE_MAX);
	body = malloc(cap);
	if (!token || !body) {
		text_say(why, len, "%s: out of memory", label);
		goto out;
	}
	err = read_token(file, file_var, label, token, TOKEN_FILE_MAX, why, len);
	if (err)
		goto out;
	at = (size_t)snprintf(body, cap, "Action=AssumeRoleWithWebIdentity&RoleArn=");
	form(body, cap, &at, arn);
	at += (size_t)snprintf(body + at, cap - at, "&RoleSessionName=");
	form(body, cap, &at, name);
	at += (size_t)snprintf(body + at, cap - at,
			       "&Version=2011-06-15&WebIdentityToken=");
	form(body, cap, &at, token);
	h.body = body;
	h.body_len = at;
	h.headers = (const char *const[]){"Accept: application/xml", NULL};
	err = s3_http(&h, w, sizeof(w));
	if (err) {
		text_say(why, len, "%s: STS at %s", label, w);
		goto out;
	}
	err = sts_read(h.answer, h.alen, &k, w, sizeof(w));
	if (h.status != 200) {
		said(sbuf, sizeof(sbuf), h.status, &k);
		text_say(why, len, "%s: STS at %s %s", label, base, sbuf);
		err = status_error(h.status);
	} else if (err) {
		text_say(why, len, "%s: STS at %s: %s", label, base, w);
	} else {
		err = keys_give(c, &k, label, why, len);
	}
out:
	s3_http_release(&h);
	if (token) {
		explicit_bzero(token, TOKEN_FILE_MAX);
		free(token);
	}
	if (body) {
		explicit_bzero(body, cap);
		free(body);
	}
	explicit_bzero(&k, sizeof(k));
	return err;
}

static int web_identity(struct s3_config *c, const struct s3_files *f, struct tried *t,
			char *why, size_t len)
{
	const char *arn = env("AWS_ROLE_ARN"), *file = env("AWS_WEB_IDENTITY_TOKEN_FILE");
	char label[200], abuf[120], pbuf[64];
	int err;

	shown(f->profile, pbuf, sizeof(pbuf));
	if (arn && file) {
		text_say(label, sizeof(label), "web identity (AWS_ROLE_ARN=%s)",
			 shown(arn, abuf, sizeof(abuf)));
		err = assume_web(c, arn, file, "AWS_WEB_IDENTITY_TOKEN_FILE",
				 env("AWS_ROLE_SESSION_NAME"), label, why, len);
		return err ? err : 1;
	}
	if (arn || file)
		tried(t, "web identity (%s without %s)",
		      arn ? "AWS_ROLE_ARN" : "AWS_WEB_IDENTITY_TOKEN_FILE",
		      arn ? "AWS_WEB_IDENTITY_TOKEN_FILE" : "AWS_ROLE_ARN");
	else
		tried(t, "web identity");
	arn = PICK(f, role_arn);
	file = PICK(f, token_file);
	if (arn && file) {
		text_say(label, sizeof(label), "web identity of profile %s (role_arn %s)",
			 pbuf, shown(arn, abuf, sizeof(abuf)));
		err = assume_web(c, arn, file, "web_identity_token_file",
				 PICK(f, session_name), label, why, len);
		return err ? err : 1;
	}
	if (arn && (PICK(f, source_profile) || PICK(f, credential_source))) {
		text_say(why, len,
			 "profile %s assumes its role_arn with %s, which d9prof does not "
			 "support: run `aws configure export-credentials --profile %s "
			 "--format env` and export them",
			 pbuf,
			 PICK(f, source_profile) ? "source_profile" : "credential_source",
			 pbuf);
		return -ENOKEY;
	}
	return 0;
}

/* ---- 3. credential_process ----------------------------------------------- */

/* The last non-blank line of @s, cleaned, into @out */
static void last_line(char *s, size_t n, char *out, size_t olen)
{
	char *e = s + n, *b;

	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	*e = '\0';
	for (b = e; b > s && b[-1] != '\n'; b--)
		;
	text_clean(b, out, olen);
}

static double process_timeout(void)
{
	const char *e = env("D9PROF_S3_TIMEOUT");
	double v = e ? atof(e) : 0;

	return v > 0 && v < 86400 ? v : PROCESS_TIMEOUT_S;
}

/* Run @cmd with /bin/sh -c, its stdin /dev/null, in a process group of
 * its own: its stdout into @out (*@n bytes, at most PROCESS_OUT_MAX),
 * what it said last on stderr into @err_line. 0 if it exited 0; else
 * -errno with why (after @label). */
static int run_process(const char *cmd, const char *label, char *out, size_t *n,
		       char *why, size_t len)
{
	char *argv[] = {(char *)"sh", (char *)"-c", (char *)cmd, NULL},
	     errbuf[PROCESS_ERR_KEEP + 1];
	char line[200];
	int o[2] = {-1, -1}, e[2] = {-1, -1}, status = 0, err;
	size_t elen = 0;
	double limit = process_timeout();
	struct timespec t0, now;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	pid_t pid;

	*n = 0;
	if (pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC)) {
		err = -errno;
		text_say(why, len, "%s: cannot make a pipe: %s", label, strerror(errno));
		goto close;
	}
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, o[1], 1);
	posix_spawn_file_actions_adddup2(&fa, e[1], 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	/* none of ours (a recorder's perf events, the target's segment) */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
					      POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	err = -posix_spawn(&pid, "/bin/sh", &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(o[1]);
	close(e[1]);
	o[1] = e[1] = -1;
	if (err) {
		text_say(why, len, "%s: cannot run /bin/sh: %s", label, strerror(-err));
		goto close;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (bool out_open = true, err_open = true; out_open || err_open;) {
		struct pollfd p[2] = {{out_open ? o[0] : -1, POLLIN, 0},
				      {err_open ? e[0] : -1, POLLIN, 0}};
		double left;
		ssize_t r;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = limit - (double)(now.tv_sec - t0.tv_sec) -
		       (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
		if (left <= 0) {
			text_say(why, len, "%s: no answer in %g s: killed", label, limit);
			err = -ETIMEDOUT;
			break;
		}
		if (poll(p, 2, (int)(left * 1000) + 1) < 0 && errno != EINTR) {
			err = -errno;
			text_say(why, len, "%s: %s", label, strerror(errno));
			break;
		}
		if (p[0].revents) {
			r = read(o[0], out + *n, PROCESS_OUT_MAX + 1 - *n);
			if (r > 0 && (*n += (size_t)r) > PROCESS_OUT_MAX) {
				text_say(why, len,
					 "%s: more than %u KiB on its stdout: killed",
					 label, PROCESS_OUT_MAX >> 10);
				err = -EFBIG;
				break;
			}
			out_open =
				r != 0 && !(r < 0 && errno != EINTR && errno != EAGAIN);
		}
		if (p[1].revents) {
			/* its end only: the first half goes when it is full */
			if (elen == PROCESS_ERR_KEEP) {
				memmove(errbuf, errbuf + PROCESS_ERR_KEEP / 2,
					PROCESS_ERR_KEEP / 2);
				elen = PROCESS_ERR_KEEP / 2;
			}
			r = read(e[0], errbuf + elen, PROCESS_ERR_KEEP - elen);
			if (r > 0)
				elen += (size_t)r;
			err_open =
				r != 0 && !(r < 0 && errno != EINTR && errno != EAGAIN);
		}
	}
	if (err)
		kill(-pid, SIGKILL);
	/* its pipes closed: it exits now (else, past its time, it is killed) */
	for (;;) {
		pid_t w = waitpid(pid, &status, err ? 0 : WNOHANG);

		if (w == pid || (w < 0 && errno != EINTR))
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (w == 0 && (double)(now.tv_sec - t0.tv_sec) > limit) {
			kill(-pid, SIGKILL);
			text_say(why, len, "%s: no exit in %g s: killed", label, limit);
			err = -ETIMEDOUT;
		} else if (w == 0) {
			usleep(10000);
		}
	}
	if (err)
		goto close;
	errbuf[elen] = '\0';
	last_line(errbuf, elen, line, sizeof(line));
	if (WIFSIGNALED(status)) {
		text_say(why, len, "%s: killed by signal %d%s%s", label, WTERMSIG(status),
			 line[0] ? ": " : "", line);
		err = -EIO;
	} else if (WEXITSTATUS(status)) {
		text_say(why, len, "%s: exit %d%s%s", label, WEXITSTATUS(status),
			 line[0] ? ": " : "", line);
		err = -EIO;
	}
close:
	for (int i = 0; i < 2; i++) {
		if (o[i] >= 0)
			close(o[i]);
		if (e[i] >= 0)
			close(e[i]);
	}
	return err;
}

static int process(struct s3_config *c, const struct s3_files *f, char *why, size_t len)
{
	const char *cmd = PICK(f, process);
	char label[200], pbuf[64], w[200];
	struct keys k = {0};
	char *out;
	size_t n = 0;
	int err;

	if (!cmd)
		return 0;
	text_say(label, sizeof(label), "credential_process of profile %s",
		 shown(f->profile, pbuf, sizeof(pbuf)));
	out = malloc(PROCESS_OUT_MAX + 1);
	if (!out)
		return -ENOMEM;
	err = run_process(cmd, label, out, &n, why, len);
	if (!err) {
		err = json_keys(out, n, &k, w, sizeof(w));
		if (err) {
			text_say(why, len, "%s: its output is %s", label, w);
		} else if (strcmp(k.version, "1")) {
			text_say(why, len, "%s: its output's Version is not 1", label);
			err = -EBADMSG;
		} else {
			err = keys_give(c, &k, label, why, len);
		}
	}
	explicit_bzero(out, PROCESS_OUT_MAX + 1);
	free(out);
	explicit_bzero(&k, sizeof(k));
	return err ? err : 1;
}

/* ---- 4. SSO, 5. the profile's keys --------------------------------------- */

static int sso(const struct s3_files *f, char *why, size_t len)
{
	char pbuf[64];

	if (!PICK(f, sso_session) && !PICK(f, sso_start_url))
		return 0;
	shown(f->profile, pbuf, sizeof(pbuf));
	text_say(
		why, len,
		"profile %s uses AWS SSO, which d9prof does not support: run `aws "
		"configure export-credentials --profile %s --format env` and export them",
		pbuf, pbuf);
	return -ENOKEY;
}

static int static_keys(struct s3_config *c, const struct s3_files *f, char *why,
		       size_t len)
{
	char pbuf[64], fbuf[136];

	shown(f->profile, pbuf, sizeof(pbuf));
	for (int i = 0; f->pv && i < 2; i++) {
		const struct s3_profile *p = &f->pv[i];

		if (!p->key_id[0] && !p->secret[0])
			continue;
		shown(f->paths[i], fbuf, sizeof(fbuf));
		if (!p->key_id[0] || !p->secret[0]) {
			text_say(why, len, "profile %s in %s has %s but not %s", pbuf,
				 fbuf,
				 p->key_id[0] ? "aws_access_key_id"
					      : "aws_secret_access_key",
				 p->key_id[0] ? "aws_secret_access_key"
					      : "aws_access_key_id");
			return -ENOKEY;
		}
		memcpy(c->key_id_, p->key_id, sizeof(c->key_id_));
		memcpy(c->secret_, p->secret, sizeof(c->secret_));
		memcpy(c->token_, p->token, sizeof(c->token_));
		text_say(c->source, sizeof(c->source), "profile %s in %s", pbuf, fbuf);
		return 1;
	}
	return 0;
}

/* ---- 6. the container endpoint --------------------------------------------- */

/* May credentials be asked of @url (checked by s3_check_endpoint()) in
 * clear? As the SDKs allow: loopback, the ECS and EKS agents' addresses. */
static bool container_host_ok(const char *url)
{
	const char *h;
	size_t n;

	if (!strncasecmp(url, "https://", 8))
		return true;
	h = url + 7;
	n = strcspn(h, "/");
	if (s3_loopback(h, n))
		return true;
	for (const char *const *a =
		     (const char *const[]){"169.254.170.2", "169.254.170.23",
					   "[fd00:ec2::23]", NULL};
	     *a; a++) {
		size_t l = strlen(*a);

		if (n >= l && !strncasecmp(h, *a, l) && (n == l || h[l] == ':'))
			return true;
	}
	return false;
}

static int container(struct s3_config *c, struct tried *t, char *why, size_t len)
{
	const char *rel = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const char *full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	const char *tfile = env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *tok = env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
	char url[1100], base[512], label[200], w[300], sbuf[300], *auth = NULL;
	const char *hl[2] = {NULL, NULL};
	struct s3_http h = {.method = "GET",
			    .url = url,
			    .shown = base,
			    .connect_ms = 2000,
			    .total_ms = 5000,
			    .max = ANSWER_MAX,
			    .no_proxy = true};
	struct keys k = {0};
	size_t i;
	int err;

	if (!rel && !full) {
		tried(t, "the container endpoint");
		return 0;
	}
	if (rel) {
		for (i = 0; rel[i] > ' ' && rel[i] < 0x7f && rel[i] != '#'; i++)
			;
		if (rel[0] != '/' || rel[i] || i > 1000) {
			text_say(
				why, len,
				"the container endpoint: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI "
				"is not a path");
			return -EINVAL;
		}
		snprintf(base, sizeof(base), "%s", CONTAINER_HOST);
		snprintf(url, sizeof(url), "%s%s", CONTAINER_HOST, rel);
		text_say(
			label, sizeof(label),
			"the container endpoint %s (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI)",
			base);
	} else {
		err = s3_check_endpoint(full, "AWS_CONTAINER_CREDENTIALS_FULL_URI", true,
					url, sizeof(url), w, sizeof(w));
		if (!err && !container_host_ok(url)) {
			snprintf(
				w, sizeof(w),
				"AWS_CONTAINER_CREDENTIALS_FULL_URI is http:// to a host other "
				"than loopback, 169.254.170.2, 169.254.170.23 or "
				"[fd00:ec2::23]: use https://");
			err = -EINVAL;
		}
		if (err) {
			text_say(why, len, "the container endpoint: %s", w);
			return err;
		}
		/* its scheme and host: the path may be secret */
		i = strcspn(url + 8, "/") + 8;
		snprintf(base, sizeof(base), "%.*s", (int)i, url);
		text_say(label, sizeof(label),
			 "the container endpoint %s (AWS_CONTAINER_CREDENTIALS_FULL_URI)",
			 base);
	}
	if (tfile || tok) {
		auth = malloc(TOKEN_FILE_MAX + 32);
		if (!auth)
			return -ENOMEM;
		strcpy(auth, "Authorization: ");
		if (tfile)
			err = read_token(tfile, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
					 label, auth + 15, TOKEN_FILE_MAX, why, len);
		else
			err = copy(auth + 15, TOKEN_FILE_MAX, tok) ? 0 : -EINVAL;
		for (i = 15; !err && auth[i]; i++)
			if (auth[i] < ' ' || auth[i] > '~')
				err = -EINVAL;
		if (err == -EINVAL)
			text_say(
				why, len,
				"%s: its authorization token is not one line of printable "
				"ASCII",
				label);
		if (err)
			goto out;
		hl[0] = auth;
		h.headers = hl;
	}
	err = s3_http(&h, w, sizeof(w));
	if (err) {
		text_say(why, len, "%s: %s", label, w);
		goto out;
	}
	err = json_keys(h.answer, h.alen, &k, w, sizeof(w));
	if (h.status != 200) {
		said(sbuf, sizeof(sbuf), h.status, &k);
		text_say(why, len, "%s %s", label, sbuf);
		err = status_error(h.status);
	} else if (err) {
		text_say(why, len, "%s: its answer is %s", label, w);
	} else {
		err = keys_give(c, &k, label, why, len);
	}
out:
	s3_http_release(&h);
	if (auth) {
		explicit_bzero(auth, TOKEN_FILE_MAX + 32);
		free(auth);
	}
	explicit_bzero(&k, sizeof(k));
	return err ? err : 1;
}

/* ---- 7. IMDSv2 ---------------------------------------------------------------- */

static int imds(struct s3_config *c, struct tried *t, char *why, size_t len)
{
	const char *dis = env("AWS_EC2_METADATA_DISABLED"), *ep;
	const char *mode = env("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
	char base[512], url[700], label[300], w[300], sbuf[300], role[130], *hdr = NULL;
	struct s3_http h = {.url = url,
			    .shown = base,
			    .connect_ms = 1000,
			    .total_ms = 2000,
			    .max = ANSWER_MAX,
			    .no_proxy = true};
	struct keys k = {0};
	size_t i;
	int err;

	if (dis && !strcasecmp(dis, "true")) {
		tried(t, "IMDSv2 (AWS_EC2_METADATA_DISABLED)");
		return 0;
	}
	ep = env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	if (!ep)
		ep = mode && !strcasecmp(mode, "IPv6") ? IMDS_DEFAULT_IPV6 : IMDS_DEFAULT;
	err = s3_check_endpoint(ep, "AWS_EC2_METADATA_SERVICE_ENDPOINT", true, base,
				sizeof(base), w, sizeof(w));
	if (err) {
		text_say(why, len, "IMDSv2: %s", w);
		return err;
	}
	text_say(label, sizeof(label), "IMDSv2 at %s", base);
	/* the token */
	snprintf(url, sizeof(url), "%s/latest/api/token", base);
	h.method = "PUT";
	h.headers = (const char *const[]){
		"X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL, NULL};
	h.max = 4096;
	err = s3_http(&h, w, sizeof(w));
	if (err == -ELIBACC || err == -ENOMEM) {
		text_say(why, len, "%s: %s", label, w);
		goto out;
	}
	if (err) {
		/* no instance metadata here: not on EC2 */
		tried(t, "IMDSv2 at %s (no answer)", base);
		err = 0;
		goto out;
	}
	if (h.status != 200 || !h.alen || !header_safe(h.answer, 1)) {
		if (h.status == 200)
			tried(t, "IMDSv2 at %s (a token that is none)", base);
		else
			tried(t, "IMDSv2 at %s (%ld to the token's PUT)", base, h.status);
		err = 0;
		goto out;
	}
	hdr = malloc(h.alen + 40);
	if (!hdr) {
		err = -ENOMEM;
		goto out;
	}
	sprintf(hdr, "X-aws-ec2-metadata-token: %s", h.answer);
	s3_http_release(&h);
	/* the role */
	h.method = "GET";
	h.headers = (const char *const[]){hdr, NULL};
	h.max = ANSWER_MAX;
	snprintf(url, sizeof(url), "%s/latest/meta-data/iam/security-credentials/", base);
	err = s3_http(&h, w, sizeof(w));
	if (err) {
		text_say(why, len, "%s: %s", label, w);
		goto out;
	}
	if (h.status == 404 || (h.status == 200 && !h.alen)) {
		text_say(why, len, "%s: no role (no instance profile on this instance)",
			 label);
		err = -ENOKEY;
		goto out;
	}
	if (h.status != 200) {
		text_say(why, len, "%s said %ld to the role's GET", label, h.status);
		err = status_error(h.status);
		goto out;
	}
	for (i = 0; i < h.alen && i + 1 < sizeof(role) &&
		    (text_name_char(h.answer[i]) || strchr("+=,@", h.answer[i]));
	     i++)
		role[i] = h.answer[i];
	role[i] = '\0';
	if (!i || (i < h.alen && h.answer[i] != '\n' && h.answer[i] != '\r')) {
		text_say(why, len, "%s: a role name that is none", label);
		err = -EBADMSG;
		goto out;
	}
	s3_http_release(&h);
	/* its credentials */
	text_say(label, sizeof(label), "IMDSv2 at %s (role %s)", base, role);
	snprintf(url, sizeof(url), "%s/latest/meta-data/iam/security-credentials/%s",
		 base, role);
	err = s3_http(&h, w, sizeof(w));
	if (err) {
		text_say(why, len, "%s: %s", label, w);
		goto out;
	}
	err = json_keys(h.answer, h.alen, &k, w, sizeof(w));
	if (h.status != 200 || (!err && k.code[0] && strcmp(k.code, "Success"))) {
		said(sbuf, sizeof(sbuf), h.status, &k);
		text_say(why, len, "%s %s", label, sbuf);
		err = h.status == 200 ? -EACCES : status_error(h.status);
	} else if (err) {
		text_say(why, len, "%s: its answer is %s", label, w);
	} else {
		err = keys_give(c, &k, label, why, len);
		if (!err)
			err = 1;
	}
out:
	s3_http_release(&h);
	if (hdr) {
		explicit_bzero(hdr, strlen(hdr));
		free(hdr);
	}
	explicit_bzero(&k, sizeof(k));
	return err;
}

/* ---- the chain --------------------------------------------------------------- */

int s3_creds_find(struct s3_config *c, const struct s3_files *f, char *why, size_t len)
{
	struct tried t = {.n = 0};
	char pbuf[64], p0[120], p1[120];
	int err;

	c->expires = 0;
	err = from_env(c, why, len);
	if (!err) {
		tried(&t, "the environment");
		err = web_identity(c, f, &t, why, len);
	}
	if (!err)
		err = process(c, f, why, len);
	if (!err)
		err = sso(f, why, len);
	if (!err)
		err = static_keys(c, f, why, len);
	if (!err) {
		tried(&t, "profile %s of %s and %s",
		      shown(f->profile, pbuf, sizeof(pbuf)),
		      f->paths[0] && f->paths[0][0] ? shown(f->paths[0], p0, sizeof(p0))
						    : "~/.aws/credentials",
		      f->paths[1] && f->paths[1][0] ? shown(f->paths[1], p1, sizeof(p1))
						    : "~/.aws/config");
		err = container(c, &t, why, len);
	}
	if (!err)
		err = imds(c, &t, why, len);
	if (err)
		return err < 0 ? err : 0;
	text_say(
		why, len,
		"no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
		"aws_access_key_id and aws_secret_access_key or credential_process in the "
		"profile (tried %s)",
		t.s);
	return -ENOKEY;
}
