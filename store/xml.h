/* SPDX-License-Identifier: MIT */
/*
 * xml.h - the bounded XML reader S3's answers are read with (a listing
 * page, an error). It reads a whole document from memory and calls back
 * at each start and end tag; it keeps no tree. It refuses rather than
 * guesses: a NUL byte, an entity other than the five predefined ones and
 * character references, a DOCTYPE or any other declaration, a processing
 * instruction inside the root, CDATA outside it, text or a second element
 * beside the root, nesting deeper than XML_DEPTH, names longer than
 * XML_NAME - 1 bytes. Attributes are skipped; names are kept without
 * their namespace prefix. The document's size is its caller's to bound.
 * It sees bytes from the network and no secret.
 */
#ifndef D9_STORE_XML_H
#define D9_STORE_XML_H

#include <stddef.h>

#define XML_DEPTH 16
#define XML_NAME  64

enum xml_ev { XML_START, XML_END };

struct xml {
	/* the reader's; the callback reads them */
	char names[XML_DEPTH][XML_NAME]; /* the open elements, local names */
	int depth;			 /* names[depth - 1] is the current one */
	char *text;			 /* the current element's text, decoded */
	size_t tlen, tcap;
	/* the caller's: called at each start and end tag; @text is the
	 * element's text at its end ("" at its start); an error stops the
	 * walk and is xml_walk()'s */
	int (*fn)(struct xml *x, enum xml_ev ev, const char *text, size_t tlen);
	void *ctx;
	char *why; /* NULL: no reason kept */
	size_t len;
};

/* Walk the document @doc (@n bytes), calling x->fn; 0 or -EBADMSG (with
 * x->why) or the callback's error. A struct xml may walk several
 * documents; free(x->text) after the last. */
int xml_walk(struct xml *x, const char *doc, size_t n);
/* Refuse the document for @what ("malformed XML from S3: @what" into
 * x->why): -EBADMSG. Callbacks refuse what they do not expect with it. */
int xml_bad(struct xml *x, const char *what);

#endif /* D9_STORE_XML_H */
