/* SPDX-License-Identifier: MIT */
/*
 * xml.c - store/xml.h: the bounded XML reader, allocating nothing but
 * the current element's text. What S3's answers mean is s3.c's (its
 * callbacks); this file knows XML alone, and tests/fuzz/fuzz_store.c
 * reaches it through them.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/text.h"
#include "store/xml.h"

int xml_bad(struct xml *x, const char *what)
{
	text_say(x->why, x->len, "malformed XML from S3: %s", what);
	return -EBADMSG;
}

static int text_add(struct xml *x, const char *s, size_t n)
{
	if (LIB_GROW(x->text, x->tcap, x->tlen + n + 1))
		return -ENOMEM;
	memcpy(x->text + x->tlen, s, n);
	x->tlen += n;
	x->text[x->tlen] = '\0';
	return 0;
}

/* ASCII only, whatever the locale says */
static bool name_char(char ch)
{
	return text_name_char(ch) || ch == ':';
}

/* The element name at @p (advanced past it), its local part into @out. */
static int xml_name(struct xml *x, const char **p, const char *end, char *out)
{
	const char *s = *p, *local;

	while (*p < end && name_char(**p))
		(*p)++;
	if (*p == s)
		return xml_bad(x, "a tag without a name");
	for (local = *p; local > s && local[-1] != ':'; local--)
		;
	if (*p - local >= XML_NAME || *p == local)
		return xml_bad(x, "an element name too long");
	memcpy(out, local, (size_t)(*p - local));
	out[*p - local] = '\0';
	return 0;
}

/* &...; at @p: the character it stands for, appended to the text. */
static int xml_entity(struct xml *x, const char **p, const char *end)
{
	static const struct {
		const char *name;
		char ch;
	} named[] = {{"amp;", '&'},
		     {"lt;", '<'},
		     {"gt;", '>'},
		     {"quot;", '"'},
		     {"apos;", '\''}};
	const char *s = *p + 1,
		   *semi = memchr(s, ';',
				  (size_t)(end - s) < 12 ? (size_t)(end - s) : 12);
	unsigned long cp;
	char u[4], *e;
	size_t i, n;

	if (!semi)
		return xml_bad(x, "an '&' that starts no entity");
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		if ((size_t)(semi + 1 - s) == strlen(named[i].name) &&
		    !memcmp(s, named[i].name, strlen(named[i].name))) {
			*p = semi + 1;
			return text_add(x, &named[i].ch, 1);
		}
	}
	if (*s != '#' || semi == s + 1)
		return xml_bad(x, "an entity other than the five of XML");
	if (s[1] == 'x')
		cp = strtoul(s + 2, &e, 16);
	else
		cp = strtoul(s + 1, &e, 10);
	if (e != semi || !isxdigit((unsigned char)s[s[1] == 'x' ? 2 : 1]) || cp == 0 ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return xml_bad(x, "a character reference to no character");
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	*p = semi + 1;
	return text_add(x, u, n);
}

static const char *find(const char *p, const char *end, const char *what)
{
	size_t n = strlen(what);

	for (; p + n <= end; p++)
		if (!memcmp(p, what, n))
			return p;
	return NULL;
}

int xml_walk(struct xml *x, const char *doc, size_t n)
{
	const char *p = doc, *end = doc + n, *q;
	bool root_seen = false;
	int err = 0;

	x->depth = 0;
	x->tlen = 0;
	if (memchr(doc, '\0', n))
		return xml_bad(x, "a NUL byte");
	while (p < end && !err) {
		if (*p != '<') {
			if (x->depth == 0) {
				if (!isspace((unsigned char)*p))
					return xml_bad(x,
						       "text outside the root element");
				p++;
			} else if (*p == '&') {
				err = xml_entity(x, &p, end);
			} else {
				for (q = p; q < end && *q != '<' && *q != '&'; q++)
					;
				err = text_add(x, p, (size_t)(q - p));
				p = q;
			}
			continue;
		}
		if (end - p >= 2 && p[1] == '?') {
			q = find(p, end, "?>");
			if (!q || x->depth)
				return xml_bad(x, "a processing instruction");
			p = q + 2;
		} else if (end - p >= 4 && !memcmp(p, "<!--", 4)) {
			q = find(p + 4, end, "-->");
			if (!q)
				return xml_bad(x, "an unterminated comment");
			p = q + 3;
		} else if (end - p >= 9 && !memcmp(p, "<![CDATA[", 9)) {
			q = find(p + 9, end, "]]>");
			if (!q || !x->depth)
				return xml_bad(x, "a CDATA section");
			err = text_add(x, p + 9, (size_t)(q - p - 9));
			p = q + 3;
		} else if (end - p >= 2 && p[1] == '!') {
			return xml_bad(x, "a DOCTYPE or declaration");
		} else if (end - p >= 2 && p[1] == '/') {
			char name[XML_NAME];

			p += 2;
			if ((err = xml_name(x, &p, end, name)))
				return err;
			while (p < end && isspace((unsigned char)*p))
				p++;
			if (p == end || *p != '>' || !x->depth ||
			    strcmp(name, x->names[x->depth - 1]))
				return xml_bad(x,
					       "an end tag that closes no open element");
			p++;
			err = x->fn(x, XML_END, x->text ? x->text : "", x->tlen);
			x->depth--;
			x->tlen = 0;
		} else {
			bool empty = false;

			p++;
			if (x->depth == XML_DEPTH)
				return xml_bad(x, "elements nested too deep");
			if (!x->depth && root_seen)
				return xml_bad(x, "a second root element");
			if ((err = xml_name(x, &p, end, x->names[x->depth])))
				return err;
			/* attributes: skipped, quotes respected */
			for (;;) {
				while (p < end && isspace((unsigned char)*p))
					p++;
				if (p == end)
					return xml_bad(x, "an unterminated start tag");
				if (*p == '>') {
					p++;
					break;
				}
				if (*p == '/' && end - p >= 2 && p[1] == '>') {
					p += 2;
					empty = true;
					break;
				}
				while (p < end && name_char(*p))
					p++;
				while (p < end && isspace((unsigned char)*p))
					p++;
				if (p == end || *p != '=')
					return xml_bad(x, "an attribute without a value");
				p++;
				while (p < end && isspace((unsigned char)*p))
					p++;
				if (p == end || (*p != '"' && *p != '\''))
					return xml_bad(
						x, "an attribute value without quotes");
				q = memchr(p + 1, *p, (size_t)(end - p - 1));
				if (!q)
					return xml_bad(x,
						       "an unterminated attribute value");
				p = q + 1;
			}
			root_seen = true;
			x->depth++;
			x->tlen = 0;
			err = x->fn(x, XML_START, "", 0);
			if (!err && empty) {
				err = x->fn(x, XML_END, "", 0);
				x->depth--;
			}
			x->tlen = 0;
		}
	}
	if (!err && (x->depth || !root_seen))
		return xml_bad(x, "the document ends inside an element");
	return err;
}
