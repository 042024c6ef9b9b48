// SPDX-License-Identifier: MIT
/* The protobuf writer and gzip of the pprof export (analysis/pbuf.c). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analysis/pbuf.h"

TestSuite(pbuf);

Test(pbuf, varints_are_base128_low_group_first)
{
	struct pbuf b = {0};

	pbuf_varint(&b, 0);
	pbuf_varint(&b, 1);
	pbuf_varint(&b, 300);
	pbuf_varint(&b, UINT64_MAX);
	static const uint8_t want[] = {0x00, 0x01, 0xac, 0x02, 0xff, 0xff, 0xff,
				       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	cr_assert_eq(b.len, sizeof(want));
	cr_assert_arr_eq(b.data, want, sizeof(want));
	pbuf_release(&b);
}

Test(pbuf, fields_carry_their_wire_type_and_zero_is_left_out)
{
	struct pbuf b = {0}, m = {0}, tmp = {0};
	static const uint64_t v[] = {3, 270};
	/* 1: varint 150; 2: (0 left out); 3: "hi"; 4: message {1: 5};
	 * 5: packed [3, 270] */
	static const uint8_t want[] = {0x08, 0x96, 0x01, 0x1a, 0x02, 'h',  'i',	 0x22,
				       0x02, 0x08, 0x05, 0x2a, 0x03, 0x03, 0x8e, 0x02};

	pbuf_uint(&b, 1, 150);
	pbuf_uint(&b, 2, 0);
	pbuf_bytes(&b, 3, "hi", 2);
	pbuf_uint(&m, 1, 5);
	pbuf_msg(&b, 4, &m);
	cr_assert_eq(m.len, 0, "a message is emptied for reuse");
	pbuf_packed(&b, 5, v, 2, &tmp);
	cr_assert_eq(b.len, sizeof(want));
	cr_assert_arr_eq(b.data, want, sizeof(want));
	cr_assert_eq(pbuf_error(&b), 0);
	pbuf_release(&b);
	pbuf_release(&m);
	pbuf_release(&tmp);
}

Test(pbuf, gzip_round_trips_through_zlib)
{
	size_t n = 300000, got;
	uint8_t *in = malloc(n), *back = malloc(n + 1);
	char *buf = NULL;
	size_t blen = 0;
	FILE *f = open_memstream(&buf, &blen);
	z_stream z = {0};

	for (size_t i = 0; i < n; i++)
		in[i] = (uint8_t)(i * 7 / 13);
	cr_assert_eq(analysis_gzip_write(in, n, f), 0);
	fclose(f);
	cr_assert_geq(blen, 18);
	cr_assert_eq((uint8_t)buf[0], 0x1f, "gzip magic");
	cr_assert_eq((uint8_t)buf[1], 0x8b, "gzip magic");
	cr_assert_eq(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (uint8_t *)buf;
	z.avail_in = (uInt)blen;
	z.next_out = back;
	z.avail_out = (uInt)n + 1;
	cr_assert_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	got = n + 1 - z.avail_out;
	inflateEnd(&z);
	cr_assert_eq(got, n);
	cr_assert_arr_eq(back, in, n);
	free(in);
	free(back);
	free(buf);
}
