// SPDX-License-Identifier: MIT
/*
 * store/s3: the configuration as the AWS CLI reads it (environment,
 * profiles of the credentials and config files, the files' checks,
 * precedence of region and endpoint), s3:// URLs, and the requests
 * against a scripted HTTP server on loopback (what is sent, how answers
 * and errors are read). End-to-end tests get a real one (s3rver) from
 * tests/e2e/s3lib.sh.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "store/s3.h"

extern char **environ;

static char home[64];
static char why[512];

/* every AWS_* variable out of the way, and a fresh HOME with ~/.aws */
static void setup(void)
{
	char dir[128];
	size_t i, n = 0;
	char *names[64];

	for (i = 0; environ[i] && n < 64; i++) {
		if (!strncmp(environ[i], "AWS_", 4)) {
			names[n] = strndup(environ[i], strcspn(environ[i], "="));
			n++;
		}
	}
	for (i = 0; i < n; i++) {
		unsetenv(names[i]);
		free(names[i]);
	}
	/* (the config tests name made-up hosts over http://) */
	setenv("D9PROF_S3_ALLOW_HTTP", "1", 1);
	/* the chain's last source: never asked of 169.254.169.254 here */
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	snprintf(home, sizeof(home), "/tmp/d9s3.XXXXXX");
	cr_assert_not_null(mkdtemp(home));
	setenv("HOME", home, 1);
	snprintf(dir, sizeof(dir), "%s/.aws", home);
	cr_assert_eq(mkdir(dir, 0700), 0);
	why[0] = '\0';
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", home);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(s3, .init = setup, .fini = teardown);

/* HOME/@name with @text, mode @mode; its path in a static buffer */
static const char *put_file(const char *name, const char *text, mode_t mode)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", home, name);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	cr_assert_eq(chmod(path, mode), 0);
	return path;
}

static void env_creds(void)
{
	setenv("AWS_ACCESS_KEY_ID", "AKIAENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
}

Test(s3, environment_credentials_and_the_defaults)
{
	struct s3_config c;

	env_creds();
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.key_id_, "AKIAENV");
	cr_expect_str_eq(c.secret_, "envsecret");
	cr_expect_str_eq(c.token_, "");
	cr_expect_str_eq(c.source, "environment");
	cr_expect_str_eq(c.profile, "default");
	cr_expect_str_eq(c.region, "us-east-1");
	cr_expect_str_eq(c.endpoint, "https://s3.us-east-1.amazonaws.com");
	s3_config__clear(&c);
}

Test(s3, session_token_from_the_environment_and_from_a_profile)
{
	struct s3_config c;

	env_creds();
	setenv("AWS_SESSION_TOKEN", "envtoken", 1);
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.token_, "envtoken");
	s3_config__clear(&c);

	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_SESSION_TOKEN");
	put_file(".aws/credentials",
		 "[default]\naws_access_key_id = AKIAF\naws_secret_access_key = fs\n"
		 "aws_session_token = filetoken\n",
		 0600);
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.token_, "filetoken");
	s3_config__clear(&c);
}

Test(s3, profile_from_the_credentials_file_region_and_endpoint_from_the_config)
{
	struct s3_config c;
	char src[200];

	put_file(".aws/credentials",
		 "# a comment\n"
		 "[default]\n"
		 "aws_access_key_id = AKIADEFAULT\n"
		 "aws_secret_access_key = defaultsecret\n"
		 "\n"
		 "[work]\n"
		 "  ; indented comment\n"
		 "AWS_Access_Key_ID=AKIAWORK   \n"
		 "aws_secret_access_key:   work/secret+x==  \r\n",
		 0600);
	put_file(".aws/config",
		 "[default]\nregion = eu-west-1\n"
		 "[work]\nregion = ap-south-1\n" /* not a config profile: no "profile" */
		 "[profile   work]\n"
		 "region = eu-central-1\n"
		 "endpoint_url = http://minio.local:9000/\n",
		 0600);
	setenv("AWS_PROFILE", "work", 1);
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.key_id_, "AKIAWORK",
			 "keys are case-insensitive, blanks trimmed");
	cr_expect_str_eq(c.secret_, "work/secret+x==", "':' delimits too, CR trimmed");
	cr_expect_str_eq(c.profile, "work");
	cr_expect_str_eq(c.region, "eu-central-1");
	cr_expect_str_eq(c.endpoint, "http://minio.local:9000", "no trailing '/'");
	snprintf(src, sizeof(src), "profile work in %s/.aws/credentials", home);
	cr_expect_str_eq(c.source, src);
	cr_expect_null(strstr(c.source, "secret"), "the source never holds the secret");
	s3_config__clear(&c);

	unsetenv("AWS_PROFILE");
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.key_id_, "AKIADEFAULT");
	cr_expect_str_eq(c.region, "eu-west-1", "[default] in the config file");
	cr_expect_str_eq(c.endpoint, "https://s3.eu-west-1.amazonaws.com");
	s3_config__clear(&c);
}

Test(s3, credentials_in_the_config_file_and_files_named_by_the_environment)
{
	struct s3_config c;
	char path[200];

	put_file("conf",
		 "[profile p]\naws_access_key_id = AKIACONF\naws_secret_access_key = cs\n"
		 "s3 =\n  endpoint_url = http://nested.example\n" /* nested: not the
								     profile's */
		 "region = us-west-2\n",
		 0600);
	snprintf(path, sizeof(path), "%s/conf", home);
	setenv("AWS_CONFIG_FILE", path, 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "~/nothing-here", 1);
	setenv("AWS_PROFILE", "p", 1);
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.key_id_, "AKIACONF");
	cr_expect_str_eq(c.region, "us-west-2");
	cr_expect_str_eq(c.endpoint, "https://s3.us-west-2.amazonaws.com");
	snprintf(path, sizeof(path), "profile p in %s/conf", home);
	cr_expect_str_eq(c.source, path);
	s3_config__clear(&c);
}

Test(s3, region_and_endpoint_precedence)
{
	struct s3_config c;

	env_creds();
	put_file(".aws/config",
		 "[default]\nregion = eu-west-3\nendpoint_url = http://profile\n", 0600);
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.region, "eu-west-3");
	cr_expect_str_eq(c.endpoint, "http://profile");

	setenv("AWS_DEFAULT_REGION", "ca-central-1", 1);
	setenv("AWS_ENDPOINT_URL", "http://generic:1", 1);
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.region, "ca-central-1");
	cr_expect_str_eq(c.endpoint, "http://generic:1");

	setenv("AWS_REGION", "sa-east-1", 1);
	setenv("AWS_ENDPOINT_URL_S3", "https://s3only:2/", 1);
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.region, "sa-east-1");
	cr_expect_str_eq(c.endpoint, "https://s3only:2");

	cr_assert_eq(s3_config__load(&c, "http://caller:3//", why, sizeof(why)), 0, "%s",
		     why);
	cr_expect_str_eq(c.endpoint, "http://caller:3");
	s3_config__clear(&c);
}

Test(s3, a_file_others_can_write_is_refused)
{
	struct s3_config c;
	const char *path;
	char want[300];

	path = put_file(".aws/credentials",
			"[default]\naws_access_key_id = A\naws_secret_access_key = S\n",
			0620);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EPERM);
	snprintf(want, sizeof(want), "chmod go-w %s", path);
	cr_expect_not_null(strstr(why, want), "%s", why);
	cr_expect_not_null(strstr(why, "writable by group or others"), "%s", why);
	cr_expect_str_eq(c.secret_, "", "nothing kept from a refused load");

	chmod(path, 0602);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EPERM);
	chmod(path, 0644);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	s3_config__clear(&c);

	/* the config file is checked as well: it says where the data goes */
	put_file(".aws/config", "[default]\nendpoint_url = http://evil\n", 0666);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EPERM);
	cr_expect_not_null(strstr(why, "/.aws/config"), "%s", why);
}

Test(s3, a_symlink_or_a_directory_is_refused)
{
	struct s3_config c;
	char link[200];
	const char *target;

	target = put_file("real-credentials",
			  "[default]\naws_access_key_id = A\naws_secret_access_key = S\n",
			  0600);
	snprintf(link, sizeof(link), "%s/.aws/credentials", home);
	cr_assert_eq(symlink(target, link), 0);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EPERM);
	cr_expect_not_null(strstr(why, "symbolic link"), "%s", why);
	cr_expect_not_null(strstr(why, "AWS_SHARED_CREDENTIALS_FILE"), "%s", why);

	/* named directly, it is read */
	setenv("AWS_SHARED_CREDENTIALS_FILE", target, 1);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	s3_config__clear(&c);

	setenv("AWS_SHARED_CREDENTIALS_FILE", home, 1);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EPERM);
	cr_expect_not_null(strstr(why, "not a regular file"), "%s", why);
}

Test(s3, files_are_not_needed_when_the_environment_decides_everything)
{
	struct s3_config c;

	env_creds();
	setenv("AWS_REGION", "eu-north-1", 1);
	put_file(".aws/config", "[default]\nregion = us-east-2\n", 0666);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EPERM,
		     "the endpoint could come from it");
	cr_expect_eq(s3_config__load(&c, "http://127.0.0.1:9", why, sizeof(why)), 0, "%s",
		     why);
	cr_expect_str_eq(c.region, "eu-north-1");
	s3_config__clear(&c);
}

Test(s3, no_credentials_is_enokey)
{
	struct s3_config c;

	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -ENOKEY);
	cr_expect_not_null(strstr(why, "AWS_ACCESS_KEY_ID"), "%s", why);

	put_file(".aws/credentials",
		 "[other]\naws_access_key_id = A\naws_secret_access_key = S\n", 0600);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -ENOKEY,
		     "not the profile");
	cr_expect_not_null(strstr(why, "profile default"), "%s", why);

	setenv("AWS_PROFILE", "other", 1);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	s3_config__clear(&c);

	put_file(".aws/credentials", "[other]\naws_access_key_id = A\n", 0600);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -ENOKEY, "half a pair");
	cr_expect_not_null(strstr(why, "aws_secret_access_key"), "%s", why);

	unsetenv("AWS_PROFILE");
	setenv("AWS_ACCESS_KEY_ID", "AKIAONLY", 1);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -ENOKEY);
	cr_expect_not_null(strstr(why, "AWS_SECRET_ACCESS_KEY"), "%s", why);
}

Test(s3, malformed_files_and_urls_are_einval_and_say_nothing_secret)
{
	struct s3_config c;

	put_file(".aws/credentials", "aws_access_key_id = A\n[default]\n", 0600);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EINVAL);
	cr_expect_not_null(strstr(why, "/.aws/credentials:1:"), "%s", why);

	put_file(".aws/credentials", "[default]\njust words\n", 0600);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EINVAL);
	cr_expect_not_null(strstr(why, ":2:"), "%s", why);

	put_file(".aws/credentials", "[default\n", 0600);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EINVAL);

	put_file(".aws/credentials",
		 "[default]\naws_access_key_id = A\naws_secret_access_key = S\n", 0600);
	cr_expect_eq(s3_config__load(&c, "ftp://host", why, sizeof(why)), -EINVAL);
	cr_expect_eq(s3_config__load(&c, "http://", why, sizeof(why)), -EINVAL);
	cr_expect_eq(s3_config__load(&c, "https://user:hunter2@host", why, sizeof(why)),
		     -EINVAL);
	cr_expect_null(strstr(why, "hunter2"), "%s", why);
	cr_expect_eq(s3_config__load(&c, "http://host/a b", why, sizeof(why)), -EINVAL);
	setenv("AWS_REGION", "us-east-1\x1b[2J", 1);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EINVAL);
	cr_expect_null(strchr(why, '\x1b'), "%s", why);
}

Test(s3, clear_wipes_the_secrets)
{
	struct s3_config c;

	env_creds();
	setenv("AWS_SESSION_TOKEN", "tok", 1);
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	s3_config__clear(&c);
	cr_expect_str_eq(c.key_id_, "");
	cr_expect_str_eq(c.secret_, "");
	cr_expect_str_eq(c.token_, "");
	cr_expect_str_eq(c.region, "us-east-1", "what is not secret stays");
	s3_config__clear(NULL);
}

Test(s3, urls)
{
	static const struct {
		const char *url, *bucket, *prefix;
	} good[] = {
		{"s3://bucket", "bucket", ""},
		{"s3://bucket/", "bucket", ""},
		{"s3://my.bucket-1/some/prefix/", "my.bucket-1", "some/prefix"},
		{"s3://abc//a b+c//", "abc", "a b+c"},
		{"s3://0ab/x", "0ab", "x"},
	};
	static const char *const bad[] = {
		NULL,
		"",
		"s3:/bucket",
		"http://bucket/x",
		"S3://bucket",
		"s3://",
		"s3:///x",
		"s3://ab",
		"s3://Bucket",
		"s3://-bucket",
		"s3://bucket-",
		"s3://a..b",
		"s3://a_b/x",
		"s3://a b",
		"s3://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	char b[64], p[64];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cr_assert_eq(s3_parse_url(good[i].url, b, sizeof(b), p, sizeof(p)), 0,
			     "%s", good[i].url);
		cr_expect_str_eq(b, good[i].bucket);
		cr_expect_str_eq(p, good[i].prefix);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(s3_parse_url(bad[i], b, sizeof(b), p, sizeof(p)), -EINVAL,
			     "%s", bad[i] ? bad[i] : "(null)");
	cr_expect_eq(s3_parse_url("s3://bucket/a-long-prefix", b, sizeof(b), p, 8),
		     -EINVAL, "a prefix too long for its buffer");
}

/* ---- requests, against a scripted server on loopback --------------------- */

#define FAKE_MAX 8

struct fake_answer {
	int status;
	const char *headers; /* extra lines, each ending "\r\n" */
	const char *body;
	int no_body; /* HEAD: Content-Length from headers, nothing sent */
	int endless; /* a body of 1 GB said, sent fast until the client goes */
	int trickle; /* a body of 1 GB said, 2 bytes a second (30 s at most) */
};

struct fake {
	int lfd, port, n, served;
	struct fake_answer answers[FAKE_MAX];
	char head[FAKE_MAX][4096]; /* each request's line and headers */
	char body[FAKE_MAX][4096];
	size_t body_len[FAKE_MAX];
	pthread_t thread;
};

static void *fake_serve(void *arg)
{
	struct fake *f = arg;

	for (f->served = 0; f->served < f->n; f->served++) {
		int i = f->served, fd = accept(f->lfd, NULL, NULL);
		char buf[8192], out[8192], *end = NULL, *cl;
		size_t got = 0, want = 0;
		const struct fake_answer *a = &f->answers[i];

		if (fd < 0)
			break;
		while (got < sizeof(buf) - 1) {
			ssize_t r = read(fd, buf + got, sizeof(buf) - 1 - got);

			if (r <= 0)
				break;
			got += (size_t)r;
			buf[got] = '\0';
			if (!end && (end = strstr(buf, "\r\n\r\n"))) {
				cl = strcasestr(buf, "\r\ncontent-length:");
				want = (size_t)(end + 4 - buf) +
				       (cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0);
				if (strcasestr(buf, "\r\nexpect: 100-continue\r\n"))
					send(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25,
					     MSG_NOSIGNAL);
			}
			if (end && got >= want)
				break;
		}
		if (end) {
			size_t h = (size_t)(end + 4 - buf);

			snprintf(f->head[i], sizeof(f->head[i]), "%.*s", (int)h, buf);
			f->body_len[i] = got - h < sizeof(f->body[i])
						 ? got - h
						 : sizeof(f->body[i]);
			memcpy(f->body[i], buf + h, f->body_len[i]);
		}
		if (a->endless || a->trickle) {
			char chunk[65536];
			size_t k = 0;

			snprintf(out, sizeof(out),
				 "HTTP/1.1 %d X\r\nConnection: close\r\n"
				 "Content-Length: 1000000000\r\n\r\n",
				 a->status);
			memset(chunk, 'x', sizeof(chunk));
			if (send(fd, out, strlen(out), MSG_NOSIGNAL) > 0)
				while (a->endless ? send(fd, chunk, sizeof(chunk),
							 MSG_NOSIGNAL) > 0
						  : k++ < 60 &&
							    send(fd, chunk, 1,
								 MSG_NOSIGNAL) > 0 &&
							    !usleep(500000))
					;
			close(fd);
			continue;
		}
		if (a->no_body)
			snprintf(out, sizeof(out),
				 "HTTP/1.1 %d X\r\nConnection: close\r\n%s\r\n",
				 a->status, a->headers ? a->headers : "");
		else
			snprintf(
				out, sizeof(out),
				"HTTP/1.1 %d X\r\nConnection: close\r\nContent-Length: %zu\r\n%s\r\n%s",
				a->status, a->body ? strlen(a->body) : 0,
				a->headers ? a->headers : "", a->body ? a->body : "");
		send(fd, out, strlen(out), MSG_NOSIGNAL); /* the client may be gone */
		close(fd);
	}
	return NULL;
}

static void fake_start(struct fake *f)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {.tv_sec = 10};
	socklen_t sl = sizeof(sa);

	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_geq(f->lfd, 0);
	cr_assert_eq(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(f->lfd, 8), 0);
	setsockopt(f->lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cr_assert_eq(getsockname(f->lfd, (struct sockaddr *)&sa, &sl), 0);
	f->port = ntohs(sa.sin_port);
	cr_assert_eq(pthread_create(&f->thread, NULL, fake_serve, f), 0);
}

static void fake_stop(struct fake *f)
{
	pthread_join(f->thread, NULL);
	close(f->lfd);
}

/* a struct s3 on bucket "bkt" of the fake server */
static struct s3 *fake_s3(struct fake *f, const char *token)
{
	struct s3_config c;
	struct s3 *s;
	char ep[64];

	env_creds();
	if (token)
		setenv("AWS_SESSION_TOKEN", token, 1);
	setenv("AWS_REGION", "eu-west-1", 1);
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d/", f->port);
	cr_assert_eq(s3_config__load(&c, ep, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(s3__new(&c, "bkt", 5, &s), 0);
	s3_config__clear(&c);
	return s;
}

static int temp_file(const char *content)
{
	char path[] = "/tmp/d9s3f.XXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	unlink(path);
	cr_assert_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	return fd;
}

Test(s3, put_sends_the_file_signed_with_its_metadata)
{
	struct fake f = {.n = 1, .answers = {{200, "ETag: \"x\"\r\n", ""}}};
	struct s3_meta meta[] = {{"trace-id", "abc 123"},
				 {"empty", ""},
				 {"blank", "  "},
				 {"spaced", " a  b "}};
	struct s3 *s;
	int fd = temp_file("hello, store");

	fake_start(&f);
	s = fake_s3(&f, "TOKEN/1+2=");
	cr_assert_eq(s3__put_fd(s, "dir/a b+c%.d9", fd, 5, meta, 4, why, sizeof(why)), 0,
		     "%s", why);
	fake_stop(&f);
	cr_expect_eq(s3__last_status(s), 200);
	cr_expect_eq(strncmp(f.head[0], "PUT /bkt/dir/a%20b%2Bc%25.d9 HTTP/1.1\r\n", 39),
		     0, "%s", f.head[0]);
	cr_expect_eq(f.body_len[0], 5, "size bytes from offset 0");
	cr_expect_eq(memcmp(f.body[0], "hello", 5), 0);
	cr_expect_not_null(strcasestr(f.head[0], "\r\nx-amz-meta-trace-id: abc 123\r\n"));
	cr_expect_null(strcasestr(f.head[0], "x-amz-meta-empty"),
		       "an empty value is not sent");
	cr_expect_null(strcasestr(f.head[0], "x-amz-meta-blank"), "nor a blank one");
	cr_expect_not_null(strcasestr(f.head[0], "\r\nx-amz-meta-spaced:  a  b \r\n"),
			   "blanks are any value's");
	/* sha256sum of "hello": the payload is signed */
	cr_expect_not_null(
		strcasestr(
			f.head[0],
			"\r\nx-amz-content-sha256: "
			"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\r\n"),
		"%s", f.head[0]);
	cr_expect_not_null(strstr(f.head[0], ";x-amz-content-sha256;"), "%s", f.head[0]);
	cr_expect_not_null(
		strcasestr(f.head[0], "\r\nx-amz-security-token: TOKEN/1+2=\r\n"));
	cr_expect_not_null(
		strstr(f.head[0], "Authorization: AWS4-HMAC-SHA256 Credential=AKIAENV/"));
	cr_expect_not_null(strstr(f.head[0], "/eu-west-1/s3/aws4_request"));
	cr_expect_null(strstr(f.head[0], "envsecret"), "the secret is never sent");

	meta[0].key = "Upper";
	cr_expect_eq(s3__put_fd(s, "k", fd, 5, meta, 1, why, sizeof(why)), -EINVAL);
	meta[0].key = "ok";
	meta[0].value = "tab\there";
	cr_expect_eq(s3__put_fd(s, "k", fd, 5, meta, 1, why, sizeof(why)), -EINVAL);
	cr_expect_eq(s3__put_fd(s, "", fd, 5, NULL, 0, why, sizeof(why)), -EINVAL);
	s3__free(s);
	close(fd);
}

Test(s3, put_of_a_file_shorter_than_its_size_fails)
{
	struct fake f = {.n = 1, .answers = {{200, NULL, ""}}};
	struct s3 *s;
	int fd = temp_file("abc");

	fake_start(&f);
	s = fake_s3(&f, NULL);
	cr_expect_eq(s3__put_fd(s, "k", fd, 10, NULL, 0, why, sizeof(why)), -EIO);
	cr_expect_not_null(strstr(why, "shorter"), "%s", why);
	fake_stop(&f);
	s3__free(s);
	close(fd);
}

static const char page1[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
	"<Name>bkt</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount>"
	"<IsTruncated>true</IsTruncated>"
	"<NextContinuationToken>tok/1+=</NextContinuationToken>"
	"<Contents><Key>p/a &amp; b&lt;&#233;&#x1F600;</Key>"
	"<LastModified>2024-02-29T12:34:56.789Z</LastModified>"
	"<ETag>&quot;0123456789abcdef0123456789abcdef&quot;</ETag><Size>42</Size>"
	"<Owner><ID>x</ID></Owner><StorageClass>STANDARD</StorageClass></Contents>"
	"<!-- a comment -->"
	"<Contents><Key>p/b</Key><Size>0</Size><ETag>\"e-2\"</ETag>"
	"<LastModified>1970-01-01T00:00:10Z</LastModified></Contents>"
	"</ListBucketResult>";
static const char page2[] =
	"<ListBucketResult><IsTruncated>false</IsTruncated>"
	"<Contents><Key>p/c</Key><Size>18446744073709551615</Size></Contents>"
	"<Contents/>" /* a Contents without a Key: refused */
	"</ListBucketResult>";
static const char page2_ok[] =
	"<ListBucketResult><IsTruncated>false</IsTruncated>"
	"<Contents><Key>p/c</Key><Size>18446744073709551615</Size></Contents>"
	"</ListBucketResult>";

/* What a listing gave, page by page (at most 16 keys kept) */
struct listed {
	size_t n, pages;
	size_t stop_at; /* the page (from 1) whose callback says -ECANCELED */
	char *key[16];
	uint64_t size[16];
	char etag[16][72];
	int64_t mtime[16];
};

static int collect(void *arg, const struct s3_object *v, size_t n)
{
	struct listed *l = arg;

	if (++l->pages == l->stop_at)
		return -ECANCELED;
	for (size_t i = 0; i < n && l->n < 16; i++, l->n++) {
		l->key[l->n] = strdup(v[i].key);
		l->size[l->n] = v[i].size;
		memcpy(l->etag[l->n], v[i].etag, sizeof(v[i].etag));
		l->mtime[l->n] = v[i].mtime;
	}
	return 0;
}

static void listed_release(struct listed *l)
{
	for (size_t i = 0; i < l->n && i < 16; i++)
		free(l->key[i]);
	memset(l, 0, sizeof(*l));
}

Test(s3, list_follows_continuation_tokens_and_decodes_the_xml)
{
	struct fake f = {.n = 2, .answers = {{200, NULL, page1}, {200, NULL, page2_ok}}};
	struct listed l = {0};
	struct s3 *s;

	fake_start(&f);
	s = fake_s3(&f, NULL);
	cr_assert_eq(s3__list(s, "p/", collect, &l, why, sizeof(why)), 0, "%s", why);
	fake_stop(&f);
	cr_assert_eq(l.n, 3);
	cr_expect_eq(l.pages, 2, "one call a page");
	cr_expect_str_eq(l.key[0], "p/a & b<\xc3\xa9\xf0\x9f\x98\x80");
	cr_expect_eq(l.size[0], 42);
	cr_expect_str_eq(l.etag[0], "0123456789abcdef0123456789abcdef");
	cr_expect_eq(l.mtime[0], 1709210096);
	cr_expect_str_eq(l.key[1], "p/b");
	cr_expect_str_eq(l.etag[1], "e-2");
	cr_expect_eq(l.mtime[1], 10);
	cr_expect_eq(l.size[2], UINT64_MAX);
	/* the query in S3's canonical form: sorted, escaped */
	cr_expect_eq(
		strncmp(f.head[0], "GET /bkt?list-type=2&prefix=p%2F HTTP/1.1\r\n", 43),
		0, "%s", f.head[0]);
	cr_expect_eq(
		strncmp(f.head[1],
			"GET /bkt?continuation-token=tok%2F1%2B%3D&list-type=2&prefix=p%2F "
			"HTTP/1.1\r\n",
			76),
		0, "%s", f.head[1]);
	listed_release(&l);
	s3__free(s);
}

/* Tokens that alternate (A, B, A, ...) listed forever (4633 requests
 * and 738 MB in 15 s): any token seen before ends the listing. */
Test(s3, list_refuses_a_continuation_token_seen_before)
{
	static const char a[] = "<ListBucketResult><IsTruncated>true</IsTruncated>"
				"<NextContinuationToken>A</NextContinuationToken>"
				"<Contents><Key>p/a</Key><Size>1</Size></Contents>"
				"</ListBucketResult>";
	static const char b[] = "<ListBucketResult><IsTruncated>true</IsTruncated>"
				"<NextContinuationToken>B</NextContinuationToken>"
				"<Contents><Key>p/b</Key><Size>1</Size></Contents>"
				"</ListBucketResult>";
	struct fake f = {.n = 3,
			 .answers = {{200, NULL, a}, {200, NULL, b}, {200, NULL, a}}};
	struct listed l = {0};
	struct s3 *s;

	fake_start(&f);
	s = fake_s3(&f, NULL);
	cr_expect_eq(s3__list(s, "p/", collect, &l, why, sizeof(why)), -EBADMSG);
	cr_expect_not_null(strstr(why, "a continuation token seen before"), "%s", why);
	fake_stop(&f);
	cr_expect_eq(f.served, 3, "three pages, not more");
	listed_release(&l);
	s3__free(s);
}

/* The callback stops a listing: its error is the listing's, and no
 * page is asked for after it. */
Test(s3, list_stops_when_its_callback_says_so)
{
	struct fake f = {.n = 1, .answers = {{200, NULL, page1}}};
	struct listed l = {.stop_at = 1};
	struct s3 *s;

	fake_start(&f);
	s = fake_s3(&f, NULL);
	/* (a request for page 2 would wait for an answer that never comes) */
	cr_expect_eq(s3__list(s, "p/", collect, &l, why, sizeof(why)), -ECANCELED);
	cr_expect_eq(l.pages, 1);
	cr_expect_eq(l.n, 0);
	fake_stop(&f);
	s3__free(s);
	listed_release(&l);
}

Test(s3, malformed_listings_are_ebadmsg)
{
	static const char *const bad[] = {
		page2,
		"<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents>",
		"<ListBucketResult><Contents><Key>a &bogus; b</Key><Size>1</Size></Contents>"
		"</ListBucketResult>",
		"<ListBucketResult><Contents><Key>a</Key><Size>x</Size></Contents></ListBucketResult>",
		"<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contentz></ListBucketResult>",
		"<!DOCTYPE x [<!ENTITY a \"b\">]><ListBucketResult/>",
		"<Other/>",
		"",
		"<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
		"<ListBucketResult><Contents><Key>a&#0;</Key><Size>1</Size></Contents></ListBucketResult>",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fake f = {.n = 1, .answers = {{200, NULL, bad[i]}}};
		struct listed l = {0};
		struct s3 *s;

		fake_start(&f);
		s = fake_s3(&f, NULL);
		why[0] = '\0';
		cr_expect_eq(s3__list(s, "", collect, &l, why, sizeof(why)), -EBADMSG,
			     "%s", bad[i]);
		cr_expect_eq(l.pages, 0, "no part of a bad page given: %s", bad[i]);
		cr_expect_not_null(strstr(why, "XML"), "%s", why);
		fake_stop(&f);
		listed_release(&l);
		s3__free(s);
	}
}

static const char denied[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<Error><Code>InvalidAccessKeyId</Code><Message>The AWS Access Key Id you provided does "
	"not exist in our records.\x1b[2J</Message><AWSAccessKeyId>AKIAENV</AWSAccessKeyId>"
	"<RequestId>1</RequestId></Error>";

Test(s3, errors_map_to_errno_with_what_s3_said)
{
	static const struct {
		struct fake_answer a;
		int err;
		const char *says;
	} cases[] = {
		{{403, NULL, denied},
		 -EACCES,
		 "S3 said 403 InvalidAccessKeyId: The AWS Access Key Id you provided does not exist "
		 "in our records.?[2J"},
		{{404, NULL,
		  "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not "
		  "exist</Message></Error>"},
		 -ENOENT,
		 "no bucket 'bkt' at http://127.0.0.1:"},
		{{503, NULL,
		  "<Error><Code>SlowDown</Code><Message>Reduce your request rate."
		  "</Message></Error>"},
		 -EAGAIN,
		 "S3 said 503 SlowDown: Reduce your request rate"},
		{{500, NULL, "<html>oops</html>"}, -EAGAIN, "S3 said 500"},
		{{429, NULL, ""}, -EAGAIN, "S3 said 429"},
		{{400, NULL, "<Error><Code>RequestTimeout</Code></Error>"},
		 -EAGAIN,
		 "RequestTimeout"},
		{{400, NULL, "<Error><Code>ExpiredToken</Code></Error>"},
		 -EACCES,
		 "ExpiredToken"},
		{{301, "x-amz-bucket-region: eu-central-1\r\n",
		  "<Error><Code>PermanentRedirect</Code><Message>Use the right endpoint.</Message>"
		  "</Error>"},
		 -EIO,
		 "S3 said 301 PermanentRedirect: Use the right endpoint (the bucket is in "
		 "eu-central-1: set AWS_REGION=eu-central-1)"},
		{{400, NULL, "not xml <Code>Sneaky</Code>"}, -EIO, "S3 said 400"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake f = {.n = 1, .answers = {cases[i].a}};
		struct listed l = {0};
		struct s3 *s;

		fake_start(&f);
		s = fake_s3(&f, NULL);
		why[0] = '\0';
		cr_expect_eq(s3__list(s, "", collect, &l, why, sizeof(why)), cases[i].err,
			     "case %zu: %s", i, why);
		cr_expect_not_null(strstr(why, cases[i].says), "case %zu: %s", i, why);
		cr_expect_null(strstr(why, "Sneaky"), "only S3's Error is read");
		cr_expect_eq(s3__last_status(s), cases[i].a.status);
		fake_stop(&f);
		s3__free(s);
	}
}

Test(s3, get_truncates_and_fills_the_file)
{
	struct fake f = {
		.n = 2,
		.answers = {{200, NULL, "new content"},
			    {404, NULL,
			     "<Error><Code>NoSuchKey</Code><Message>The specified key "
			     "does not exist.</Message></Error>"}}};
	struct s3 *s;
	uint64_t size = 0;
	char buf[64] = "";
	int fd = temp_file("old content that is longer");

	fake_start(&f);
	s = fake_s3(&f, NULL);
	cr_assert_eq(s3__get_fd(s, "a/b", fd, UINT64_MAX, &size, why, sizeof(why)), 0,
		     "%s", why);
	cr_expect_eq(size, 11);
	cr_expect_eq(pread(fd, buf, sizeof(buf) - 1, 0), 11);
	cr_expect_str_eq(buf, "new content");
	cr_expect_eq(s3__get_fd(s, "gone", fd, UINT64_MAX, &size, why, sizeof(why)),
		     -ENOENT);
	cr_expect_not_null(strstr(why, "no key 'gone' in bucket 'bkt'"), "%s", why);
	cr_expect_eq(lseek(fd, 0, SEEK_END), 0, "the error body is not the file's");
	fake_stop(&f);
	s3__free(s);
	close(fd);
}

/* http:// to another machine sent the session token in clear, and
 * payloads anyone on the path could change, silently: refused unless
 * asked for; loopback (a local MinIO, s3rver) needs nothing. */
Test(s3, http_past_loopback_needs_an_opt_in)
{
	static const char *const local[] = {"http://127.0.0.1:9000",
					    "http://localhost:4569/", "http://[::1]:9000",
					    "https://s3.example.com"};
	static const char *const far[] = {
		"http://s3.example.com", "http://127.evil.com:80", "http://10.0.0.7:9000",
		"http://localhost.evil"};
	struct s3_config c;

	env_creds();
	setenv("AWS_REGION", "eu-west-1", 1);
	unsetenv("D9PROF_S3_ALLOW_HTTP");
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++) {
		cr_expect_eq(s3_config__load(&c, local[i], why, sizeof(why)), 0, "%s: %s",
			     local[i], why);
		s3_config__clear(&c);
	}
	for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		cr_expect_eq(s3_config__load(&c, far[i], why, sizeof(why)), -EINVAL, "%s",
			     far[i]);
		cr_expect_not_null(strstr(why, "D9PROF_S3_ALLOW_HTTP=1"), "%s", why);
		s3_config__clear(&c);
	}
	setenv("D9PROF_S3_ALLOW_HTTP", "1", 1);
	cr_expect_eq(s3_config__load(&c, far[0], why, sizeof(why)), 0, "%s", why);
	s3_config__clear(&c);
}

/* An object that comes larger or smaller than listed is not kept: one
 * that never ends stops at its listed size, not at the disk's. */
Test(s3, a_get_is_its_listed_size_or_fails)
{
	struct fake f = {
		.n = 2, .answers = {{200, NULL, NULL, 0, 1}, {200, NULL, "new content"}}};
	struct s3 *s;
	uint64_t size = 0;
	int fd = temp_file("");

	fake_start(&f);
	s = fake_s3(&f, NULL);
	cr_expect_eq(s3__get_fd(s, "a/b", fd, 4489, &size, why, sizeof(why)), -EBADMSG);
	cr_expect_not_null(strstr(why, "a/b is larger than listed (4489 bytes)"), "%s",
			   why);
	cr_expect_leq(lseek(fd, 0, SEEK_END), 4489);
	cr_expect_eq(s3__get_fd(s, "a/c", fd, 20, &size, why, sizeof(why)), -EBADMSG);
	cr_expect_not_null(strstr(why, "a/c came as 11 bytes, listed as 20"), "%s", why);
	fake_stop(&f);
	s3__free(s);
	close(fd);
}

/* An endpoint that trickles (2 bytes a second) is dropped after the
 * timeout below the floor (it held ls forever at 1 byte a second). */
Test(s3, a_trickle_is_dropped_after_its_timeout)
{
	struct fake f = {.n = 1, .answers = {{200, NULL, NULL, 0, 0, 1}}};
	struct listed l = {0};
	struct timespec a, b;
	struct s3 *s;

	setenv("D9PROF_S3_TIMEOUT", "1", 1);
	fake_start(&f);
	s = fake_s3(&f, NULL);
	unsetenv("D9PROF_S3_TIMEOUT");
	clock_gettime(CLOCK_MONOTONIC, &a);
	cr_expect_eq(s3__list(s, "", collect, &l, why, sizeof(why)), -EAGAIN, "%s", why);
	clock_gettime(CLOCK_MONOTONIC, &b);
	cr_expect_lt(b.tv_sec - a.tv_sec, 10, "dropped after %ld s",
		     (long)(b.tv_sec - a.tv_sec));
	listed_release(&l);
	s3__free(s);
	fake_stop(&f);
}

Test(s3, head_reads_the_size_and_one_metadata_value)
{
	struct fake f = {
		.n = 2,
		.answers = {
			{200,
			 "Content-Length: 123456\r\nX-Amz-Meta-Trace-Id: abc\x01 123 \r\n"
			 "x-amz-meta-other: no\r\n",
			 NULL, 1},
			{200, "Content-Length: 7\r\n", NULL, 1}}};
	struct s3 *s;
	uint64_t size = 0;
	char v[64];

	fake_start(&f);
	s = fake_s3(&f, NULL);
	cr_assert_eq(s3__head(s, "k", &size, "trace-id", v, sizeof(v), why, sizeof(why)),
		     0, "%s", why);
	cr_expect_eq(size, 123456);
	cr_expect_str_eq(v, "abc? 123", "cleaned, trimmed");
	cr_expect_eq(strncmp(f.head[0], "HEAD /bkt/k HTTP/1.1", 20), 0, "%s", f.head[0]);
	cr_assert_eq(s3__head(s, "k", &size, "trace-id", v, sizeof(v), why, sizeof(why)),
		     0, "%s", why);
	cr_expect_eq(size, 7);
	cr_expect_str_eq(v, "", "absent");
	fake_stop(&f);
	s3__free(s);
}

Test(s3, no_server_is_eagain_with_status_0)
{
	struct fake f = {0};
	struct s3 *s;
	uint64_t size;

	fake_start(&f); /* n = 0: the thread ends at once */
	fake_stop(&f);	/* and the port is closed: refused */
	s = fake_s3(&f, NULL);
	cr_expect_eq(s3__head(s, "k", &size, NULL, NULL, 0, why, sizeof(why)), -EAGAIN);
	cr_expect_not_null(strstr(why, "onnect"), "%s", why);
	cr_expect_eq(s3__last_status(s), 0);
	s3__free(s);
}

Test(s3, new_refuses_what_s3_would)
{
	struct s3_config c;
	struct s3 *s = (struct s3 *)1;

	env_creds();
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(s3__new(&c, "Bad_Bucket", 0, &s), -EINVAL);
	cr_expect_null(s);
	cr_expect_eq(s3__new(&c, "ok-bucket", -1, &s), -EINVAL);
	cr_expect_eq(s3__new(&c, "ok-bucket", 0, &s), 0);
	cr_expect_eq(s3__last_status(s), 0);
	s3__free(s);
	s3__free(NULL);
	s3_config__clear(&c);
}

/* ---- the credential chain ------------------------------------------------- */

/* HOME/@name, an executable shell script of @body */
static const char *put_script(const char *name, const char *body)
{
	static char path[256];
	char text[4096];

	snprintf(text, sizeof(text), "#!/bin/sh\n%s", body);
	snprintf(path, sizeof(path), "%s", put_file(name, text, 0700));
	return path;
}

/* ~/.aws/config of one [default] profile saying @lines */
static void config_profile(const char *lines)
{
	char text[2048];

	snprintf(text, sizeof(text), "[default]\nregion = eu-west-1\n%s", lines);
	put_file(".aws/config", text, 0600);
}

/* a credential_process printing @json (printf's format, %s the unix time
 * in @secs from now, as ISO 8601) */
static void process_says(const char *json, int secs)
{
	char body[2048], line[1024];

	snprintf(
		body, sizeof(body),
		"exp=$(date -u -d \"@$(( $(date +%%s) + %d ))\" +%%Y-%%m-%%dT%%H:%%M:%%SZ)\n"
		"printf '%s' \"$exp\"\n",
		secs, json);
	snprintf(line, sizeof(line), "credential_process = %s\n",
		 put_script("proc.sh", body));
	config_profile(line);
}

Test(s3, credential_process_json_with_its_expiration)
{
	struct s3_config c;
	time_t now = time(NULL);

	process_says(
		"{\"Version\": 1, \"AccessKeyId\": \"ASIAPROC\",\n"
		" \"SecretAccessKey\": \"pr/oc+se=cret\", \"SessionToken\": \"t\\u006fk\",\n"
		" \"Expiration\": \"%s\", \"Extra\": {\"a\": [1, -2.5e3, true, null, \"x\"]}}",
		3600);
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.key_id_, "ASIAPROC");
	cr_expect_str_eq(c.secret_, "pr/oc+se=cret");
	cr_expect_str_eq(c.token_, "tok", "escapes decoded");
	cr_expect_str_eq(c.source, "credential_process of profile default");
	cr_expect(c.expires >= now + 3599 && c.expires <= time(NULL) + 3600, "%lld",
		  (long long)c.expires);
	cr_expect_str_eq(c.region, "eu-west-1");
	s3_config__clear(&c);

	/* no Expiration: they do not expire */
	process_says(
		"{\"Version\":1,\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\"}%.0s", 0);
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(c.expires, 0);
	s3_config__clear(&c);
}

Test(s3, credential_process_failures_name_the_profile_and_say_no_secret)
{
	static const struct {
		const char *json, *says;
		int err;
	} cases[] = {
		{"{\"Version\": 2, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"hunter2\"}",
		 "its output's Version is not 1", -EBADMSG},
		{"{\"Version\": 1, \"AccessKeyId\": \"A\"}", "no usable SecretAccessKey",
		 -EBADMSG},
		{"{\"Version\": 1, \"AccessKeyId\": \"A\\r\\nX-Evil: 1\", \"SecretAccessKey\": \"S\"}",
		 "no usable AccessKeyId", -EBADMSG},
		{"{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"hunter 2\"}",
		 "no usable SecretAccessKey", -EBADMSG},
		{"{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"hunter2\", "
		 "\"Expiration\": \"soon\"}",
		 "no usable Expiration", -EBADMSG},
		{"{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"hunter2\",}",
		 "its output is not JSON: a member without a quoted name", -EBADMSG},
		{"{\"Version\": 1, \"SecretAccessKey\": \"hunter2\"} trailing",
		 "not JSON: text after the object", -EBADMSG},
		{"[[[[[[[[[[[[[[[[[[[[", "not JSON: not an object", -EBADMSG},
		{"{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]], \"SecretAccessKey\": "
		 "\"hunter2\"}",
		 "not JSON: values nested too deep", -EBADMSG},
		{"{\"SecretAccessKey\": \"hunter2", "not JSON: a string without its end",
		 -EBADMSG},
		{"{\"Version\": 01}", "not JSON: a value that is none", -EBADMSG},
		{"", "not JSON: not an object", -EBADMSG},
	};
	char script[1024], body[2048];
	struct s3_config c;

	setenv("AWS_PROFILE", "dev", 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(body, sizeof(body), "printf '%%s' '%s'\n", cases[i].json);
		snprintf(script, sizeof(script),
			 "[profile dev]\ncredential_process = %s\n",
			 put_script("bad.sh", body));
		put_file(".aws/config", script, 0600);
		why[0] = '\0';
		cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), cases[i].err,
			     "case %zu: %s", i, why);
		cr_expect_not_null(strstr(why, "credential_process of profile dev: "),
				   "case %zu: %s", i, why);
		cr_expect_not_null(strstr(why, cases[i].says), "case %zu: %s", i, why);
		cr_expect_null(strstr(why, "hunter"), "case %zu: %s", i, why);
		cr_expect_str_eq(c.secret_, "", "wiped");
	}

	snprintf(
		script, sizeof(script),
		"[profile dev]\ncredential_process = %s --flag=1\n",
		put_script(
			"fail.sh",
			"echo 'first line' >&2\necho '{\"Version\": 1}'\n"
			"printf 'token expired:\\033[2J run login\\n\\n' >&2\nexit 3\n"));
	put_file(".aws/config", script, 0600);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EIO);
	cr_expect_str_eq(
		why,
		"credential_process of profile dev: exit 3: token expired:?[2J run login",
		"its last line on stderr, cleaned");

	/* past its time: killed, with what it started */
	setenv("D9PROF_S3_TIMEOUT", "0.3", 1);
	snprintf(script, sizeof(script), "[profile dev]\ncredential_process = %s\n",
		 put_script("slow.sh", "sleep 30 &\nsleep 30\n"));
	put_file(".aws/config", script, 0600);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -ETIMEDOUT);
	cr_expect_str_eq(why,
			 "credential_process of profile dev: no answer in 0.3 s: killed");

	/* more than it may say */
	snprintf(script, sizeof(script), "[profile dev]\ncredential_process = %s\n",
		 put_script("big.sh", "head -c 100000 /dev/zero | tr '\\0' ' '\n"));
	put_file(".aws/config", script, 0600);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EFBIG);
	cr_expect_not_null(strstr(why, "more than 64 KiB on its stdout"), "%s", why);
}

Test(s3, the_chain_takes_the_first_source_set_up)
{
	struct s3_config c;

	/* credential_process before the profile's keys */
	put_file(".aws/credentials",
		 "[default]\naws_access_key_id = AKIAFILE\naws_secret_access_key = fs\n",
		 0600);
	process_says(
		"{\"Version\": 1, \"AccessKeyId\": \"ASIAPROC\", \"SecretAccessKey\": "
		"\"s\", \"Expiration\": \"%s\"}",
		600);
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.key_id_, "ASIAPROC");
	s3_config__clear(&c);
	/* the environment before all */
	env_creds();
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.key_id_, "AKIAENV");
	cr_expect_eq(c.expires, 0);
	s3_config__clear(&c);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");

	/* SSO before the keys: said not supported, with what to do */
	config_profile("sso_session = corp\nsso_account_id = 1\n");
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -ENOKEY);
	cr_expect_str_eq(
		why,
		"profile default uses AWS SSO, which d9prof does not support: run `aws "
		"configure export-credentials --profile default --format env` and "
		"export them");
	config_profile("role_arn = arn:aws:iam::1:role/r\nsource_profile = base\n");
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -ENOKEY);
	cr_expect_not_null(strstr(why, "assumes its role_arn with source_profile"), "%s",
			   why);

	/* none: what was tried */
	unlink(put_file(".aws/credentials", "", 0600));
	config_profile("");
	setenv("AWS_ROLE_ARN", "arn:aws:iam::1:role/r", 1);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -ENOKEY);
	cr_expect_not_null(
		strstr(why, "(tried the environment, web identity (AWS_ROLE_ARN "
			    "without AWS_WEB_IDENTITY_TOKEN_FILE), profile default of "),
		"%s", why);
	cr_expect_not_null(strstr(why, "/.aws/config, the container endpoint, IMDSv2 "
				       "(AWS_EC2_METADATA_DISABLED))"),
			   "%s", why);
}

Test(s3, web_identity_through_sts)
{
	struct fake f = {
		.n = 2,
		.answers = {
			{200, NULL,
			 "<AssumeRoleWithWebIdentityResponse "
			 "xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
			 "<AssumeRoleWithWebIdentityResult><SubjectFromWebIdentityToken>x"
			 "</SubjectFromWebIdentityToken><Credentials>"
			 "<AccessKeyId>ASIASTS</AccessKeyId><SecretAccessKey>sts/secret"
			 "</SecretAccessKey><SessionToken>ststoken</SessionToken>"
			 "<Expiration>2030-01-02T03:04:05Z</Expiration></Credentials>"
			 "</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>"},
			{403, NULL,
			 "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>"
			 "<Message>Not authorized to perform sts:AssumeRoleWithWebIdentity"
			 "</Message></Error><RequestId>1</RequestId></ErrorResponse>"}}};
	struct s3_config c;
	char ep[64], link[128];

	fake_start(&f);
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", f.port);
	setenv("AWS_ENDPOINT_URL_STS", ep, 1);
	setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/r", 1);
	/* (Kubernetes mounts it through a symlink: followed) */
	put_file("jwt", "eyJ.hunter2.sig\n", 0644);
	snprintf(link, sizeof(link), "%s/jwt.link", home);
	cr_assert_eq(symlink("jwt", link), 0);
	setenv("AWS_WEB_IDENTITY_TOKEN_FILE", link, 1);
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.key_id_, "ASIASTS");
	cr_expect_str_eq(c.secret_, "sts/secret");
	cr_expect_str_eq(c.token_, "ststoken");
	cr_expect_eq(c.expires, 1893553445);
	cr_expect_str_eq(c.source,
			 "web identity (AWS_ROLE_ARN=arn:aws:iam::123456789012:role/r)");
	cr_expect_eq(strncmp(f.head[0], "POST / HTTP/1.1", 15), 0, "%s", f.head[0]);
	cr_expect_null(strcasestr(f.head[0], "authorization"), "unsigned: %s", f.head[0]);
	cr_expect_not_null(strstr(f.body[0], "Action=AssumeRoleWithWebIdentity&"), "%s",
			   f.body[0]);
	cr_expect_not_null(
		strstr(f.body[0],
		       "RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fr&"),
		"%s", f.body[0]);
	cr_expect_not_null(strstr(f.body[0], "&RoleSessionName=d9prof-"), "%s",
			   f.body[0]);
	cr_expect_not_null(strstr(f.body[0], "&WebIdentityToken=eyJ.hunter2.sig"), "%s",
			   f.body[0]);
	s3_config__clear(&c);

	setenv("AWS_ROLE_SESSION_NAME", "ci-run", 1);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EACCES);
	cr_expect_not_null(strstr(why,
				  "web identity (AWS_ROLE_ARN=arn:aws:iam::123456789012:"
				  "role/r): STS at http://127.0.0.1:"),
			   "%s", why);
	cr_expect_not_null(strstr(why,
				  " said 403 AccessDenied: Not authorized to perform "
				  "sts:AssumeRoleWithWebIdentity"),
			   "%s", why);
	cr_expect_null(strstr(why, "hunter2"), "%s", why);
	cr_expect_not_null(strstr(f.body[1], "&RoleSessionName=ci-run&"), "%s",
			   f.body[1]);
	fake_stop(&f);

	/* a token file that is not there: said, nothing sent */
	setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent/token", 1);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -ENOKEY);
	cr_expect_not_null(strstr(why,
				  "web identity (AWS_ROLE_ARN=arn:aws:iam::123456789012:"
				  "role/r): cannot open /nonexistent/token "
				  "(AWS_WEB_IDENTITY_TOKEN_FILE)"),
			   "%s", why);
}

Test(s3, the_container_endpoint_with_its_token)
{
	struct fake f = {
		.n = 2,
		.answers = {
			{200, NULL,
			 "{\"AccessKeyId\":\"ASIAECS\",\"SecretAccessKey\":\"ecs\","
			 "\"Token\":\"ecstoken\",\"Expiration\":\"2030-01-02T03:04:05Z\","
			 "\"RoleArn\":\"arn:aws:iam::1:role/task\"}"},
			{401, NULL, "{\"code\":\"InvalidToken\",\"message\":\"no\"}"}}};
	struct s3_config c;
	char url[128];

	fake_start(&f);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v2/credentials/hunter2-uuid",
		 f.port);
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", url, 1);
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "ignored", 1);
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
	       put_file("pod-token", "podtok\n", 0600), 1);
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.key_id_, "ASIAECS");
	cr_expect_str_eq(c.token_, "ecstoken");
	cr_expect_eq(c.expires, 1893553445);
	snprintf(
		url, sizeof(url),
		"the container endpoint http://127.0.0.1:%d (AWS_CONTAINER_CREDENTIALS_FULL_URI)",
		f.port);
	cr_expect_str_eq(c.source, url, "the path (it may be secret) not shown");
	cr_expect_eq(strncmp(f.head[0], "GET /v2/credentials/hunter2-uuid HTTP/1.1", 40),
		     0, "%s", f.head[0]);
	cr_expect_not_null(strstr(f.head[0], "\r\nAuthorization: podtok\r\n"),
			   "the file's "
			   "first: %s",
			   f.head[0]);
	s3_config__clear(&c);
	unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EACCES);
	cr_expect_not_null(strstr(why, "(AWS_CONTAINER_CREDENTIALS_FULL_URI) said 401 "
				       "InvalidToken: no"),
			   "%s", why);
	cr_expect_null(strstr(why, "hunter2"), "%s", why);
	cr_expect_not_null(strstr(f.head[1], "\r\nAuthorization: ignored\r\n"), "%s",
			   f.head[1]);
	fake_stop(&f);

	/* http:// only to the hosts the SDKs allow: nothing sent elsewhere */
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://192.0.2.1/creds", 1);
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -EINVAL);
	cr_expect_not_null(
		strstr(why, "the container endpoint: AWS_CONTAINER_CREDENTIALS_FULL_"
			    "URI is http:// to a host other than loopback"),
		"%s", why);
}

Test(s3, imdsv2_token_role_and_credentials)
{
	struct fake f = {
		.n = 5,
		.answers = {
			{200, NULL, "imds-hunter2-token"},
			{200, NULL, "web-role\n"},
			{200, NULL,
			 "{\n  \"Code\" : \"Success\",\n  \"LastUpdated\" : "
			 "\"2024-01-01T00:00:00Z\",\n  \"Type\" : \"AWS-HMAC\",\n"
			 "  \"AccessKeyId\" : \"ASIAIMDS\",\n  \"SecretAccessKey\" : "
			 "\"imds\",\n  \"Token\" : \"imdstoken\",\n  \"Expiration\" : "
			 "\"2030-01-02T03:04:05Z\"\n}"},
			{200, NULL, "tok2"},
			{404, NULL, ""}}};
	struct s3_config c;
	char ep[64], src[128];

	fake_start(&f);
	unsetenv("AWS_EC2_METADATA_DISABLED");
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d/", f.port);
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", ep, 1);
	cr_assert_eq(s3_config__load(&c, NULL, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.key_id_, "ASIAIMDS");
	cr_expect_str_eq(c.token_, "imdstoken");
	cr_expect_eq(c.expires, 1893553445);
	snprintf(src, sizeof(src), "IMDSv2 at http://127.0.0.1:%d (role web-role)",
		 f.port);
	cr_expect_str_eq(c.source, src);
	cr_expect_eq(strncmp(f.head[0], "PUT /latest/api/token HTTP/1.1", 30), 0, "%s",
		     f.head[0]);
	cr_expect_not_null(
		strstr(f.head[0], "\r\nX-aws-ec2-metadata-token-ttl-seconds: 21600"),
		"%s", f.head[0]);
	cr_expect_eq(strncmp(f.head[1],
			     "GET /latest/meta-data/iam/security-credentials/ HTTP/1.1",
			     56),
		     0, "%s", f.head[1]);
	cr_expect_not_null(
		strstr(f.head[1], "\r\nX-aws-ec2-metadata-token: imds-hunter2-token"),
		"%s", f.head[1]);
	cr_expect_eq(
		strncmp(f.head[2],
			"GET /latest/meta-data/iam/security-credentials/web-role HTTP/1.1",
			64),
		0, "%s", f.head[2]);
	s3_config__clear(&c);

	/* an instance without a role */
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -ENOKEY);
	snprintf(src, sizeof(src), "IMDSv2 at http://127.0.0.1:%d: no role", f.port);
	cr_expect_not_null(strstr(why, src), "%s", why);
	fake_stop(&f);

	/* nothing there: one of the sources tried */
	cr_expect_eq(s3_config__load(&c, NULL, why, sizeof(why)), -ENOKEY);
	snprintf(src, sizeof(src), "IMDSv2 at http://127.0.0.1:%d (no answer))", f.port);
	cr_expect_not_null(strstr(why, src), "%s", why);
}

Test(s3, expiring_credentials_are_fetched_again_before_a_request)
{
	struct fake f = {.n = 2,
			 .answers = {{200, "Content-Length: 1\r\n", NULL, 1},
				     {200, "Content-Length: 2\r\n", NULL, 1}}};
	char ep[64], line[512], body[1024];
	struct s3_config c;
	struct s3 *s;
	uint64_t size;

	/* keys KEY1, KEY2... at each run, expiring in 5 s: within the 5
	 * minutes before, and too close to wait */
	snprintf(
		body, sizeof(body),
		"n=$(( $(cat %s/n 2>/dev/null || echo 0) + 1 )); echo $n >%s/n\n"
		"exp=$(date -u -d \"@$(( $(date +%%s) + 5 ))\" +%%Y-%%m-%%dT%%H:%%M:%%SZ)\n"
		"[ $n -le 3 ] || exit 1\n"
		"printf '{\"Version\": 1, \"AccessKeyId\": \"KEY%%s\", \"SecretAccessKey\": "
		"\"s\", \"Expiration\": \"%%s\"}' $n $exp\n",
		home, home);
	snprintf(line, sizeof(line), "credential_process = %s\n",
		 put_script("count.sh", body));
	config_profile(line);
	fake_start(&f);
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", f.port);
	cr_assert_eq(s3_config__load(&c, ep, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_eq(c.key_id_, "KEY1");
	cr_assert_eq(s3__new(&c, "bkt", 5, &s), 0);
	s3_config__clear(&c);
	cr_expect_eq(s3__head(s, "a", &size, NULL, NULL, 0, why, sizeof(why)), 0, "%s",
		     why);
	cr_expect_eq(s3__head(s, "b", &size, NULL, NULL, 0, why, sizeof(why)), 0, "%s",
		     why);
	fake_stop(&f);
	cr_expect_not_null(strstr(f.head[0], "Credential=KEY2/"), "%s", f.head[0]);
	cr_expect_not_null(strstr(f.head[1], "Credential=KEY3/"), "%s", f.head[1]);
	/* expiring, and the source fails: said, nothing sent, worth retrying */
	cr_expect_eq(s3__head(s, "c", &size, NULL, NULL, 0, why, sizeof(why)), -EAGAIN);
	cr_expect_str_eq(
		why, "the credentials from credential_process of profile default expire "
		     "and cannot be had again: credential_process of profile default: "
		     "exit 1");
	s3__free(s);
}

Test(s3, a_refused_key_says_where_it_came_from)
{
	struct fake f = {.n = 1, .answers = {{403, NULL, denied}}};
	struct listed l = {0};
	struct s3 *s;

	fake_start(&f);
	s = fake_s3(&f, NULL);
	cr_expect_eq(s3__list(s, "", collect, &l, why, sizeof(why)), -EACCES);
	cr_expect_not_null(strstr(why, "records.?[2J (key from environment)"), "%s", why);
	fake_stop(&f);
	listed_release(&l);
	s3__free(s);
}
