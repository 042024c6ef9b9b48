/* SPDX-License-Identifier: MIT */
/*
 * text.h - strings from the target made safe to show, and the one UTF-8
 * decoder of the tree.
 *
 * The recorder runs as root against a target that may be hostile, and the
 * views show what the target named: its comm and command line, thread and
 * task names, symbol and module names from its binaries, paths made from
 * them, and whatever else a trace file holds. None of that may put a
 * control on a terminal (ESC [2J, an OSC title, BEL, U+009B CSI) or make
 * an output a strict parser refuses. So:
 *
 *  - every text output of such a string goes through text_clean() or
 *    text_put() (the analysis views through analysis_clean_name() and
 *    analysis_frame_label(), which use it; cli/ messages through error(),
 *    warning() and info());
 *  - every JSON string through lib_json_str() (lib/json.h), the SVG
 *    through its XML writer and pprof's string table through
 *    text_clean(): all of them read UTF-8 with text_utf8() and decide
 *    what is shown with text_printable(), so there is one rule.
 *
 * lib/ depends on libc alone and nothing here allocates or locks:
 * everything is thread-safe, and text_utf8(), text_printable() and
 * text_clean() are async-signal-safe (text_put() uses stdio).
 */
#ifndef D9_LIB_TEXT_H
#define D9_LIB_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What text_clean() and text_put() show in place of what they hide. */
#define TEXT_REPLACEMENT '?'

/* Length (1 to 4) of the well-formed UTF-8 character that starts @s, and
 * its code point in *@cp (if @cp is not NULL); 0 if @s[0..@n) does not
 * start with one. Well-formed is RFC 3629's table, exactly: no overlong
 * form (C0, C1, E0 80..9F, F0 80..8F), no surrogate (ED A0..BF), nothing
 * above U+10FFFF (F4 90.., F5..FF), no lone continuation byte (80..BF)
 * and no sequence cut short, by @n or by a byte that does not continue
 * it. A NUL byte is U+0000 (length 1). Reads @s[0] and then only while
 * the bytes continue the sequence, never past @n: a NUL-terminated string
 * may be passed with @n = 4 whatever its length. */
size_t text_utf8(const char *s, size_t n, uint32_t *cp);

/* Characters in NUL-terminated @s as text_utf8() reads them: a character,
 * or a byte that starts none, counts one (as a view shows it: one '?'). */
size_t text_chars(const char *s);

/* 1 if code point @cp is shown as itself, 0 for what a terminal acts on
 * or that changes how a line reads: the C0 controls U+0000..U+001F (tab
 * and line feed included: a shown name is one line), DEL U+007F, the C1
 * controls U+0080..U+009F, the line and paragraph separators U+2028 and
 * U+2029, and the bidirectional formatting characters of UAX #9 (U+061C,
 * U+200E, U+200F, U+202A..U+202E, U+2066..U+2069). */
int text_printable(uint32_t cp);

/* Copy the NUL-terminated @s into @buf (@len bytes) as it may be shown:
 * each well-formed, printable character (text_utf8(), text_printable())
 * as it is; each other character, and each byte that starts no
 * well-formed character, as one TEXT_REPLACEMENT. Whole characters only:
 * what does not fit in @len - 1 bytes is left out, and @buf always ends
 * with a NUL when @len > 0 (nothing is written when @len is 0). The
 * result is never longer than @s: strlen(@s) + 1 bytes hold all of it,
 * and @buf may be @s itself (cleaned in place). Returns the length of the
 * result, without the NUL. */
size_t text_clean(const char *s, char *buf, size_t len);

/* @bytes as people read a size, "512 B", "24.0 KiB", "1.5 MiB" (powers
 * of 1024, up to GiB), into @buf; returns @buf. */
char *text_size(double bytes, char *buf, size_t len);
/* A duration with three significant digits: "850ns", "12.3ms", "2.50s".
 * Returns @buf. */
char *text_duration(uint64_t ns, char *buf, size_t len);

/* Write text_clean() of @s, whole, to @out (nothing if @s is NULL). */
void text_put(FILE *out, const char *s);

/* Is @c one of [A-Za-z0-9._-]: what a name d9prof makes a path component
 * of keeps (the layout's SERVICE, HOST and BOOT, a cache file's name)? */
static inline int text_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

/* @s (NULL: "") made one safe path component (and shell word) into @buf:
 * each character not text_name_char() as '_', a leading '.' too (so never
 * "." or ".."), "unknown" if empty: the layout's SERVICE, HOST and BOOT,
 * the tables' partitions. The target names itself: its name must not
 * climb out of a directory. */
void text_name_component(const char *s, char *buf, size_t len);

/* Is @s, whole, one word that every shell reads as itself (not empty;
 * only letters, digits and _.:/-=,+@%: nothing to quote, glob or
 * expand)? */
int text_shell_word(const char *s);
/* @s as one shell word at @buf + *@at (@len bytes in all), *@at moved
 * past it: as it is if text_shell_word(), else in single quotes (each '
 * as '\''), so that pasting a command d9prof suggests runs nothing a
 * name or key put in it. Returns -1 (and writes nothing) if it does not
 * fit, else 0. */
int text_shell_arg(const char *s, char *buf, size_t len, size_t *at);

/* printf @fmt into @why, a caller's buffer for a one-line reason (nothing
 * if it is NULL or @len is 0). */
void text_say(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* D9_LIB_TEXT_H */
