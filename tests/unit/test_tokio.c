// SPDX-License-Identifier: MIT
/*
 * test_tokio.c - Tokio's per-thread task id found in an executable
 * (symbol/tokio.c): the decoder of TaskIdGuard::enter on the bytes of real
 * builds (rustc 1.95, tokio 1.24.2) and on assembled variants, and the
 * ELF half on small executables compiled here that carry a CONTEXT
 * thread-local and an enter function by Tokio's mangled names, whose
 * running copy says where its slot really is.
 */
#include <criterion/criterion.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbol/tokio.h"

TestSuite(tokio);

/* ---- the decoder ------------------------------------------------------- */

/* TaskIdGuard::enter of zcapp (tests/e2e/zerocode), release with
 * line-tables-only and -C force-frame-pointers=yes:
 *   push %rbp; mov %rsp,%rbp; push %rbx; push %rax; mov %rdi,%rbx
 *   mov %fs:0x0,%rax; lea -0xd0(%rax),%rax; cmpb $0x1,0x60(%rax); jne
 *   mov 0x20(%rax),%rcx; mov 0x28(%rax),%rdx
 *   movq $0x1,0x20(%rax); mov %rbx,0x28(%rax)      <- ends at 0x33
 *   ... ret; the lazy initialisation path */
static const uint8_t enter_fp[] = {
	0x55, 0x48, 0x89, 0xe5, 0x53, 0x50, 0x48, 0x89, 0xfb, 0x64, 0x48, 0x8b, 0x04,
	0x25, 0x00, 0x00, 0x00, 0x00, 0x48, 0x8d, 0x80, 0x30, 0xff, 0xff, 0xff, 0x80,
	0x78, 0x60, 0x01, 0x75, 0x25, 0x48, 0x8b, 0x48, 0x20, 0x48, 0x8b, 0x50, 0x28,
	0x48, 0xc7, 0x40, 0x20, 0x01, 0x00, 0x00, 0x00, 0x48, 0x89, 0x58, 0x28, 0x31,
	0xc0, 0x48, 0x83, 0xf9, 0x02, 0x48, 0x0f, 0x45, 0xc1, 0x48, 0x83, 0xc4, 0x08,
	0x5b, 0x5d, 0xc3, 0x48, 0x89, 0xc7, 0x31, 0xf6, 0xe8, 0x12, 0x0a, 0x00, 0x00,
	0x48, 0x85, 0xc0, 0x75, 0xcc, 0xb9, 0x02, 0x00, 0x00, 0x00, 0xeb, 0xd9};
#define ENTER_FP_STORED 0x33

/* the same without frame pointers (RUSTFLAGS="") */
static const uint8_t enter_nofp[] = {
	0x53, 0x48, 0x89, 0xfb, 0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00,
	0x00, 0x48, 0x8d, 0x80, 0x30, 0xff, 0xff, 0xff, 0x80, 0x78, 0x60, 0x01,
	0x75, 0x20, 0x48, 0x8b, 0x48, 0x20, 0x48, 0x8b, 0x50, 0x28, 0x48, 0xc7,
	0x40, 0x20, 0x01, 0x00, 0x00, 0x00, 0x48, 0x89, 0x58, 0x28, 0x31, 0xc0,
	0x48, 0x83, 0xf9, 0x02, 0x48, 0x0f, 0x45, 0xc1, 0x5b, 0xc3, 0x48, 0x89,
	0xc7, 0x31, 0xf6, 0xe8, 0xfc, 0x09, 0x00, 0x00, 0x48, 0x85, 0xc0, 0x75,
	0xd1, 0xb9, 0x02, 0x00, 0x00, 0x00, 0xeb, 0xde};

/* fat LTO, codegen-units 1: the lazy state tested through %fs:-0x18
 * first, CONTEXT at fs-0x78, the id stored straight from %rdi */
static const uint8_t enter_lto[] = {
	0x55, 0x48, 0x89, 0xe5, 0x53, 0x50, 0x64, 0x80, 0x3c, 0x25, 0xe8, 0xff, 0xff,
	0xff, 0x01, 0x75, 0x35, 0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00, 0x00,
	0x48, 0x8d, 0x80, 0x88, 0xff, 0xff, 0xff, 0x48, 0x8b, 0x48, 0x20, 0x48, 0x8b,
	0x50, 0x28, 0x48, 0xc7, 0x40, 0x20, 0x01, 0x00, 0x00, 0x00, 0x48, 0x89, 0x78,
	0x28, 0x31, 0xc0, 0x48, 0x83, 0xf9, 0x02, 0x48, 0x0f, 0x45, 0xc1, 0x48, 0x83,
	0xc4, 0x08, 0x5b, 0x5d, 0xc3, 0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00,
	0x00, 0x48, 0x8d, 0x80, 0x88, 0xff, 0xff, 0xff, 0x48, 0x89, 0xfb, 0x48, 0x89,
	0xc7, 0xe8, 0x9f, 0x7a, 0xff, 0xff, 0x48, 0x89, 0xdf, 0x48, 0x85, 0xc0, 0x75,
	0xb8, 0xb9, 0x02, 0x00, 0x00, 0x00, 0xeb, 0xc5};

/* opt-level "s": enter is `mov %rdi,%rsi; mov $1,%edi; jmp
 * set_current_task_id`, which stores its two arguments (the tag from
 * %r14, the id from %rbx) at fs-0xd8+0x20. Laid out here with the real
 * set_current_task_id right after enter (the jump retargeted). */
static const uint8_t enter_opt_s[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xfe, 0xbf, 0x01, 0x00, 0x00, 0x00, 0x5d,
	0xe9, 0x02, 0x00, 0x00, 0x00, 0xcc, 0xcc, 0x55, 0x48, 0x89, 0xe5, 0x41, 0x56,
	0x53, 0x48, 0x89, 0xf3, 0x49, 0x89, 0xfe, 0x64, 0x48, 0x8b, 0x04, 0x25, 0x00,
	0x00, 0x00, 0x00, 0x48, 0x8d, 0x80, 0x28, 0xff, 0xff, 0xff, 0x80, 0x78, 0x60,
	0x01, 0x75, 0x1f, 0x48, 0x8b, 0x48, 0x20, 0x48, 0x8b, 0x50, 0x28, 0x4c, 0x89,
	0x70, 0x20, 0x48, 0x89, 0x58, 0x28, 0x31, 0xc0, 0x48, 0x83, 0xf9, 0x02, 0x48,
	0x0f, 0x45, 0xc1, 0x5b, 0x41, 0x5e, 0x5d, 0xc3, 0x48, 0x89, 0xc7, 0x31, 0xf6,
	0xff, 0x15, 0x84, 0x60, 0x05, 0x00, 0x48, 0x85, 0xc0, 0x75, 0xd1, 0xb9, 0x02,
	0x00, 0x00, 0x00, 0xeb, 0xda};

/* The debug build's enter: `mov %rdi,%rsi; mov $1,%edi; call
 * set_current_task_id`, whose store is deep in generic code */
static const uint8_t enter_debug[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10,
				      0x48, 0x89, 0xfe, 0x48, 0x89, 0x75, 0xf8, 0xbf,
				      0x01, 0x00, 0x00, 0x00, 0xe8, 0x57, 0xb7, 0x01,
				      0x00, 0x48, 0x83, 0xc4, 0x10, 0x5d, 0xc3};

/* Assembled variants (GNU as), each with its listing */

/* mov %fs:0,%r13; lea -0xd0(%r13),%r13; cmpb $1,0x60(%r13); jne 1f;
 * mov %rdi,%r9; movq $1,0x20(%r13); mov %r9,0x28(%r13); 1: ret */
static const uint8_t high_regs[] = {
	0x64, 0x4c, 0x8b, 0x2c, 0x25, 0x00, 0x00, 0x00, 0x00, 0x4d, 0x8d, 0xad, 0x30,
	0xff, 0xff, 0xff, 0x41, 0x80, 0x7d, 0x60, 0x01, 0x75, 0x0f, 0x49, 0x89, 0xf9,
	0x49, 0xc7, 0x45, 0x20, 0x01, 0x00, 0x00, 0x00, 0x4d, 0x89, 0x4d, 0x28, 0xc3};

/* mov %fs:0,%r8; movq $1,-0xb0(%r8); mov %rdi,-0xa8(%r8); ret */
static const uint8_t disp32_stores[] = {0x64, 0x4c, 0x8b, 0x04, 0x25, 0x00, 0x00,
					0x00, 0x00, 0x49, 0xc7, 0x80, 0x50, 0xff,
					0xff, 0xff, 0x01, 0x00, 0x00, 0x00, 0x49,
					0x89, 0xb8, 0x58, 0xff, 0xff, 0xff, 0xc3};

/* mov %fs:0,%rax; sub $0x200,%rax; movq $1,0x120(%rax);
 * mov %rdi,0x128(%rax); ret */
static const uint8_t sub_then_disp32[] = {
	0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00, 0x00, 0x48, 0x2d, 0x00,
	0x02, 0x00, 0x00, 0x48, 0xc7, 0x80, 0x20, 0x01, 0x00, 0x00, 0x01, 0x00,
	0x00, 0x00, 0x48, 0x89, 0xb8, 0x28, 0x01, 0x00, 0x00, 0xc3};

/* mov %fs:0,%rax; mov %rax,%r12; add $-0x70,%r12; mov %rdi,%r15;
 * movq $1,(%r12); mov %r15,0x8(%r12); ret */
static const uint8_t copy_and_add[] = {
	0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00, 0x00, 0x49, 0x89,
	0xc4, 0x49, 0x83, 0xc4, 0x90, 0x49, 0x89, 0xff, 0x49, 0xc7, 0x04,
	0x24, 0x01, 0x00, 0x00, 0x00, 0x4d, 0x89, 0x7c, 0x24, 0x08, 0xc3};

/* push %rbx; mov %rdi,%rbx; mov %fs:0,%rax; lea -0xd0(%rax),%rax;
 * mov %rbx,0x28(%rax); movq $1,0x20(%rax); pop %rbx; ret */
static const uint8_t id_before_tag[] = {
	0x53, 0x48, 0x89, 0xfb, 0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00,
	0x00, 0x48, 0x8d, 0x80, 0x30, 0xff, 0xff, 0xff, 0x48, 0x89, 0x58, 0x28,
	0x48, 0xc7, 0x40, 0x20, 0x01, 0x00, 0x00, 0x00, 0x5b, 0xc3};
#define ID_BEFORE_TAG_ID_STORED 0x18

/* Tokio >= 1.40's shape: push %rbx; mov %rdi,%rbx; mov %fs:0,%rax;
 * lea -0xd0(%rax),%rax; cmpb $1,0x60(%rax); jne 1f; mov 0x20(%rax),%rcx;
 * mov %rbx,0x20(%rax); mov %rcx,%rax; pop %rbx; ret;
 * 1: xor %eax,%eax; pop %rbx; ret */
static const uint8_t nonzero[] = {0x53, 0x48, 0x89, 0xfb, 0x64, 0x48, 0x8b, 0x04, 0x25,
				  0x00, 0x00, 0x00, 0x00, 0x48, 0x8d, 0x80, 0x30, 0xff,
				  0xff, 0xff, 0x80, 0x78, 0x60, 0x01, 0x75, 0x0d, 0x48,
				  0x8b, 0x48, 0x20, 0x48, 0x89, 0x58, 0x20, 0x48, 0x89,
				  0xc8, 0x5b, 0xc3, 0x31, 0xc0, 0x5b, 0xc3};

/* movq $1,%fs:-0xb0; mov %rdi,%fs:-0xa8; ret */
static const uint8_t fs_absolute[] = {0x64, 0x48, 0xc7, 0x04, 0x25, 0x50, 0xff, 0xff,
				      0xff, 0x01, 0x00, 0x00, 0x00, 0x64, 0x48, 0x89,
				      0x3c, 0x25, 0x58, 0xff, 0xff, 0xff, 0xc3};

/* cmpb $1,%fs:-0x18; jne 1f; mov %rdi,%fs:-0x58; 1: ret */
static const uint8_t fs_absolute_nonzero[] = {0x64, 0x80, 0x3c, 0x25, 0xe8, 0xff, 0xff,
					      0xff, 0x01, 0x75, 0x09, 0x64, 0x48, 0x89,
					      0x3c, 0x25, 0xa8, 0xff, 0xff, 0xff, 0xc3};

/* mov %fs:0,%rax; jmp 1f; (bad) (bad); 1: lea -0xd0(%rax),%rax;
 * movq $1,0x20(%rax); mov %rdi,0x28(%rax); ret */
static const uint8_t jump_over_junk[] = {
	0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00, 0x00, 0xeb, 0x02,
	0x06, 0x07, 0x48, 0x8d, 0x80, 0x30, 0xff, 0xff, 0xff, 0x48, 0xc7,
	0x40, 0x20, 0x01, 0x00, 0x00, 0x00, 0x48, 0x89, 0x78, 0x28, 0xc3};

/* mov %rsi,%rax (no %fs load); lea -0xd0(%rax),%rax; movq $1,0x20(%rax);
 * mov %rdi,0x28(%rax); ret */
static const uint8_t no_fs_load[] = {0x48, 0x89, 0xf0, 0x48, 0x8d, 0x80, 0x30, 0xff,
				     0xff, 0xff, 0x48, 0xc7, 0x40, 0x20, 0x01, 0x00,
				     0x00, 0x00, 0x48, 0x89, 0x78, 0x28, 0xc3};

/* mov %fs:0,%rax; lea -0xd0(%rax),%rax; movq $1,0x20(%rcx);
 * mov %rdi,0x28(%rcx); ret */
static const uint8_t store_through_other_reg[] = {
	0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00, 0x00, 0x48,
	0x8d, 0x80, 0x30, 0xff, 0xff, 0xff, 0x48, 0xc7, 0x41, 0x20,
	0x01, 0x00, 0x00, 0x00, 0x48, 0x89, 0x79, 0x28, 0xc3};

/* mov %fs:0,%rax; lea -0xd0(%rax),%rax; mov 0x30(%rax),%rdx;
 * movq $1,0x20(%rax); mov %rdx,0x28(%rax); ret */
static const uint8_t stores_not_the_id[] = {
	0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00, 0x00, 0x48, 0x8d,
	0x80, 0x30, 0xff, 0xff, 0xff, 0x48, 0x8b, 0x50, 0x30, 0x48, 0xc7,
	0x40, 0x20, 0x01, 0x00, 0x00, 0x00, 0x48, 0x89, 0x50, 0x28, 0xc3};

/* mov %fs:0,%rax; lea -0xd0(%rax),%rax; movq $2,0x20(%rax);
 * mov %rdi,0x28(%rax); ret */
static const uint8_t tag_is_two[] = {0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00,
				     0x00, 0x48, 0x8d, 0x80, 0x30, 0xff, 0xff, 0xff,
				     0x48, 0xc7, 0x40, 0x20, 0x02, 0x00, 0x00, 0x00,
				     0x48, 0x89, 0x78, 0x28, 0xc3};

/* mov %fs:0,%rax; lea -0xd0(%rax),%rax; movl $1,0x20(%rax);
 * mov %rdi,0x28(%rax); ret */
static const uint8_t tag_32bit[] = {0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00,
				    0x00, 0x00, 0x48, 0x8d, 0x80, 0x30, 0xff,
				    0xff, 0xff, 0xc7, 0x40, 0x20, 0x01, 0x00,
				    0x00, 0x00, 0x48, 0x89, 0x78, 0x28, 0xc3};

/* mov %fs:0,%rax; call 1f; movq $1,0x20(%rax); mov %rdi,0x28(%rax); ret;
 * 1: ret */
static const uint8_t call_clobbers_rax[] = {0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00,
					    0x00, 0x00, 0xe8, 0x0d, 0x00, 0x00, 0x00,
					    0x48, 0xc7, 0x40, 0x20, 0x01, 0x00, 0x00,
					    0x00, 0x48, 0x89, 0x78, 0x28, 0xc3, 0xc3};

/* the base in %rbx survives the call, but %rdi does not */
static const uint8_t call_clobbers_rdi[] = {0x64, 0x48, 0x8b, 0x1c, 0x25, 0x00, 0x00,
					    0x00, 0x00, 0xe8, 0x0d, 0x00, 0x00, 0x00,
					    0x48, 0xc7, 0x43, 0x20, 0x01, 0x00, 0x00,
					    0x00, 0x48, 0x89, 0x7b, 0x28, 0xc3, 0xc3};

/* mov %fs:0,%rax; movq $1,-0xb0(%rax); nop x4; mov %rdi,-0xa8(%rax); ret */
static const uint8_t tag_far_from_id[] = {0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00,
					  0x00, 0x48, 0xc7, 0x80, 0x50, 0xff, 0xff, 0xff,
					  0x01, 0x00, 0x00, 0x00, 0x90, 0x90, 0x90, 0x90,
					  0x48, 0x89, 0xb8, 0x58, 0xff, 0xff, 0xff, 0xc3};

/* mov %fs:0,%rax; lea -0xd0(%rax),%rax; movq %rdi,%xmm0;
 * movups %xmm0,0x20(%rax); ret */
static const uint8_t sse_store[] = {0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00, 0x00,
				    0x48, 0x8d, 0x80, 0x30, 0xff, 0xff, 0xff, 0x66, 0x48,
				    0x0f, 0x6e, 0xc7, 0x0f, 0x11, 0x40, 0x20, 0xc3};

/* mov %fs:0,%rax; jmp .+0x100 */
static const uint8_t jump_out[] = {0x64, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00,
				   0x00, 0x00, 0xe9, 0xfb, 0x00, 0x00, 0x00};

/* 1: jmp 1b */
static const uint8_t endless[] = {0xeb, 0xfe};

#define FOUND(code, off, k)                                                              \
	do {                                                                             \
		int64_t o_ = 0;                                                          \
		uint32_t k_ = 0;                                                         \
		int r_ = tokio_decode_enter(code, sizeof(code), &o_, &k_);               \
		cr_assert_eq(r_, 0, "%s: %d", #code, r_);                                \
		cr_expect_eq(o_, (int64_t)(off), "%s: %lld", #code, (long long)o_);      \
		cr_expect_eq(k_, (uint32_t)(k), "%s: kind %u", #code, k_);               \
	} while (0)

#define REFUSED(code)                                                                    \
	cr_expect_eq(tokio_decode_enter(code, sizeof(code), NULL, NULL),                 \
		     -EPROTONOSUPPORT, "%s", #code)

Test(tokio, decodes_the_tagged_slot_of_real_release_builds)
{
	FOUND(enter_fp, -0xd0 + 0x20, TOKIO_ID_TAGGED);
	FOUND(enter_nofp, -0xd0 + 0x20, TOKIO_ID_TAGGED);
	FOUND(enter_lto, -0x78 + 0x20, TOKIO_ID_TAGGED);
}

Test(tokio, follows_the_tail_call_of_an_opt_level_s_build)
{
	FOUND(enter_opt_s, -0xd8 + 0x20, TOKIO_ID_TAGGED);
}

Test(tokio, refuses_a_debug_build_whose_enter_only_calls)
{
	REFUSED(enter_debug);
}

Test(tokio, decodes_any_register_and_displacement)
{
	FOUND(high_regs, -0xd0 + 0x20, TOKIO_ID_TAGGED);
	FOUND(disp32_stores, -0xb0, TOKIO_ID_TAGGED);
	FOUND(sub_then_disp32, -0x200 + 0x120, TOKIO_ID_TAGGED);
	FOUND(copy_and_add, -0x70, TOKIO_ID_TAGGED);
	FOUND(fs_absolute, -0xb0, TOKIO_ID_TAGGED);
}

Test(tokio, takes_the_tag_and_the_id_in_either_order)
{
	FOUND(id_before_tag, -0xd0 + 0x20, TOKIO_ID_TAGGED);
}

Test(tokio, decodes_the_nonzero_form_of_later_tokio)
{
	FOUND(nonzero, -0xd0 + 0x20, TOKIO_ID_NONZERO);
	FOUND(fs_absolute_nonzero, -0x58, TOKIO_ID_NONZERO);
}

Test(tokio, takes_a_direct_jump_over_what_it_cannot_decode)
{
	FOUND(jump_over_junk, -0xd0 + 0x20, TOKIO_ID_TAGGED);
}

Test(tokio, accepts_endbr64_before_the_code)
{
	uint8_t code[4 + sizeof(enter_nofp)] = {0xf3, 0x0f, 0x1e, 0xfa};
	int64_t off;
	uint32_t kind;

	memcpy(code + 4, enter_nofp, sizeof(enter_nofp));
	cr_assert_eq(tokio_decode_enter(code, sizeof(code), &off, &kind), 0);
	cr_expect_eq(off, -0xb0);
	cr_expect_eq(kind, TOKIO_ID_TAGGED);
}

Test(tokio, refuses_stores_it_cannot_tie_to_the_thread_pointer_and_the_id)
{
	REFUSED(no_fs_load);
	REFUSED(store_through_other_reg);
	REFUSED(stores_not_the_id);
	REFUSED(call_clobbers_rax);
	REFUSED(call_clobbers_rdi);
}

Test(tokio, refuses_a_word_before_the_id_that_is_not_a_64_bit_tag_1)
{
	REFUSED(tag_is_two);
	REFUSED(tag_32bit);
	REFUSED(tag_far_from_id);
}

Test(tokio, refuses_what_it_cannot_decode_or_follow)
{
	REFUSED(sse_store);
	REFUSED(jump_out);
	REFUSED(endless);
	cr_expect_eq(tokio_decode_enter(enter_fp, 0, NULL, NULL), -EPROTONOSUPPORT);
}

Test(tokio, truncated_code_is_refused_until_the_id_is_stored)
{
	for (size_t n = 0; n <= sizeof(enter_fp); n++) {
		int64_t off = 0;
		int r = tokio_decode_enter(enter_fp, n, &off, NULL);

		if (n < ENTER_FP_STORED)
			cr_expect_eq(r, -EPROTONOSUPPORT, "%zu bytes", n);
		else
			cr_expect(r == 0 && off == -0xb0, "%zu bytes: %d %lld", n, r,
				  (long long)off);
	}
	/* the id stored, but what follows might have been its tag */
	for (size_t n = 0; n < sizeof(id_before_tag); n++)
		if (n < ID_BEFORE_TAG_ID_STORED + 8)
			cr_expect_eq(tokio_decode_enter(id_before_tag, n, NULL, NULL),
				     -EPROTONOSUPPORT, "%zu bytes", n);
}

/* ---- the executable ---------------------------------------------------- */

/* A program with Tokio's names: CONTEXT a TLS array after another TLS
 * variable, enter() in assembly (BODY), a panic-location path with
 * VERSION. Run, it calls enter(42) and prints where ctx[SLOT] is from the
 * thread pointer, and the two words there. */
static const char prog[] =
	"#include <stdio.h>\n"
	"#define CTX \"_ZN5tokio7runtime7context7CONTEXT3VAL17h0123456789abcdefE\"\n"
	"#define ENTER \"_ZN5tokio7runtime4task4core11TaskIdGuard5enter17h0123456789abcdefE\"\n"
	"#ifndef ALIGN\n#define ALIGN 8\n#endif\n"
	"#ifndef BEFORE\n#define BEFORE 8\n#endif\n"
	"__thread char before[BEFORE] = {1};\n"
	"#ifndef NO_CONTEXT\n"
	"__thread unsigned long long ctx[13] __asm__(CTX) __attribute__((aligned(ALIGN)));\n"
	"#endif\n"
	"__thread unsigned long long other[4];\n"
	"#ifdef VERSION\n"
	"__attribute__((used)) const char where[] =\n"
	"	\"/usr/share/cargo/registry/tokio-\" VERSION \"/src/runtime/context.rs\";\n"
	"#endif\n"
	"#ifdef BODY\n"
	"__asm__(\".text; .globl \" ENTER \"; .type \" ENTER \",@function; \" ENTER \": \"\n"
	"	BODY \" ret; .size \" ENTER \",.-\" ENTER);\n"
	"void enter(unsigned long long id) __asm__(ENTER);\n"
	"#endif\n"
	"int main(void)\n"
	"{\n"
	"	char *tp;\n"
	"\n"
	"	__asm__(\"mov %%fs:0,%0\" : \"=r\"(tp));\n"
	"#ifdef BODY\n"
	"	enter(42);\n"
	"#endif\n"
	"#ifdef SLOT\n"
	"	printf(\"%ld %llu %llu\\n\", (long)((char *)&ctx[SLOT] - tp), ctx[SLOT],\n"
	"	       ctx[SLOT + 1]);\n"
	"#endif\n"
	"	return (int)before[0] - 1 + (int)other[0];\n"
	"}\n";

/* enter's bodies: Tokio 1.24's store of Some(id), 1.40's, one into
 * another variable */
#define TAGGED_BODY                                                                      \
	"#define BODY \"mov %fs:0,%rax; lea \" CTX \"@tpoff(%rax),%rax; "                \
	"movq $1,0x20(%rax); mov %rdi,0x28(%rax);\"\n#define SLOT 4\n"
#define NONZERO_BODY                                                                     \
	"#define BODY \"mov %fs:0,%rax; lea \" CTX \"@tpoff(%rax),%rax; "                \
	"mov %rdi,0x20(%rax);\"\n#define SLOT 4\n"
#define OUTSIDE_BODY                                                                     \
	"#define BODY \"mov %fs:0,%rax; lea other@tpoff(%rax),%rax; "                    \
	"movq $1,0(%rax); mov %rdi,8(%rax);\"\n"

static char dir[] = "/tmp/d9tokio.XXXXXX";

static void setup(void)
{
	cr_assert(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		cr_log_warn("could not remove %s", dir);
}

static const char *at(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* Build the program @name with the #defines @cfg */
static void build(const char *name, const char *cfg)
{
	char cmd[PATH_MAX * 3];
	FILE *f;

	f = fopen(at("prog.c"), "w");
	cr_assert(f);
	fputs(prog, f);
	fclose(f);
	f = fopen(at("cfg.h"), "w");
	cr_assert(f);
	fputs(cfg, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -O1 -include %s/cfg.h -o %s/%s %s/prog.c", dir,
		 dir, name, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* Run @name: where its slot is from the thread pointer, and the words
 * there after enter(42) */
static void run(const char *name, long *off, unsigned long long *w0,
		unsigned long long *w1)
{
	FILE *p = popen(at(name), "r");

	cr_assert(p);
	cr_assert_eq(fscanf(p, "%ld %llu %llu", off, w0, w1), 3);
	cr_assert_eq(pclose(p), 0);
}

static int find(const char *path, struct tokio_layout *l, char *why, size_t len)
{
	int r = tokio_layout_find(path, l, why, len);

	cr_log_info("%s: %d %s", path, r, why);
	cr_expect_eq(strchr(why, '\n'), NULL, "one line: %s", why);
	return r;
}

#ifdef __x86_64__
Test(tokio, finds_the_slot_where_the_running_program_has_it, .init = setup,
     .fini = teardown)
{
	struct tokio_layout l;
	unsigned long long w0, w1;
	char why[256];
	long off;

	build("tagged", "#define VERSION \"1.24.2\"\n" TAGGED_BODY);
	run("tagged", &off, &w0, &w1);
	cr_expect(w0 == 1 && w1 == 42, "Some(42): %llu %llu", w0, w1);
	cr_assert_eq(find(at("tagged"), &l, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(l.task_off, off);
	cr_expect_eq(l.kind, TOKIO_ID_TAGGED);
	cr_expect_str_eq(l.version, "1.24.2");
	cr_expect_neq(l.enter_addr, 0);
	cr_expect_str_empty(why);
}

/* CONTEXT aligned to 64 after a 40-byte variable: the block below the
 * thread pointer is rounded up to 64, as glibc lays it out */
Test(tokio, follows_glibcs_rounding_of_an_aligned_tls_block, .init = setup,
     .fini = teardown)
{
	struct tokio_layout l;
	unsigned long long w0, w1;
	char why[256];
	long off;

	build("aligned",
	      "#define VERSION \"1.38.0\"\n#define ALIGN 64\n#define BEFORE 40\n" TAGGED_BODY);
	run("aligned", &off, &w0, &w1);
	cr_assert_eq(find(at("aligned"), &l, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(l.task_off, off);
	cr_expect_str_eq(l.version, "1.38.0");
}

Test(tokio, finds_the_nonzero_slot_of_tokio_1_40, .init = setup, .fini = teardown)
{
	struct tokio_layout l;
	unsigned long long w0, w1;
	char why[256];
	long off;

	build("nonzero", "#define VERSION \"1.41.0\"\n" NONZERO_BODY);
	run("nonzero", &off, &w0, &w1);
	cr_expect_eq(w0, 42);
	cr_assert_eq(find(at("nonzero"), &l, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(l.task_off, off);
	cr_expect_eq(l.kind, TOKIO_ID_NONZERO);
}

Test(tokio, a_binary_without_version_paths_has_an_empty_version, .init = setup,
     .fini = teardown)
{
	struct tokio_layout l;
	char why[256];

	build("vendored", TAGGED_BODY);
	cr_assert_eq(find(at("vendored"), &l, why, sizeof(why)), 0, "%s", why);
	cr_expect_str_empty(l.version);
	cr_expect_eq(l.kind, TOKIO_ID_TAGGED);
}

Test(tokio, refuses_a_layout_other_than_its_versions, .init = setup, .fini = teardown)
{
	struct tokio_layout l;
	char why[256];

	build("tagged141", "#define VERSION \"1.41.0\"\n" TAGGED_BODY);
	cr_expect_eq(find(at("tagged141"), &l, why, sizeof(why)), -EPROTONOSUPPORT);
	cr_expect(strstr(why, "1.40"), "%s", why);
	cr_expect_eq(l.task_off, 0);
	build("nonzero124", "#define VERSION \"1.24.2\"\n" NONZERO_BODY);
	cr_expect_eq(find(at("nonzero124"), &l, why, sizeof(why)), -EPROTONOSUPPORT);
}

Test(tokio, refuses_a_slot_outside_context, .init = setup, .fini = teardown)
{
	struct tokio_layout l;
	char why[256];

	build("outside", "#define VERSION \"1.24.2\"\n" OUTSIDE_BODY);
	cr_expect_eq(find(at("outside"), &l, why, sizeof(why)), -EPROTONOSUPPORT);
	cr_expect(strstr(why, "outside CONTEXT"), "%s", why);
}

Test(tokio, says_which_old_or_unrecognised_tokio_it_refuses, .init = setup,
     .fini = teardown)
{
	struct tokio_layout l;
	char why[256];

	build("old", "#define VERSION \"1.21.2\"\n" TAGGED_BODY);
	cr_expect_eq(find(at("old"), &l, why, sizeof(why)), -EPROTONOSUPPORT);
	cr_expect(strstr(why, "1.21.2") && strstr(why, "1.22"), "%s", why);
	build("noenter", "#define VERSION \"1.24.2\"\n");
	cr_expect_eq(find(at("noenter"), &l, why, sizeof(why)), -EPROTONOSUPPORT);
	cr_expect(strstr(why, "TaskIdGuard::enter"), "%s", why);
	build("strange", "#define VERSION \"1.24.2\"\n#define BODY \"mov %fs:0,%rax; "
			 "movups %xmm0,-0xb0(%rax);\"\n");
	cr_expect_eq(find(at("strange"), &l, why, sizeof(why)), -EPROTONOSUPPORT);
	cr_expect(strstr(why, "not recognised"), "%s", why);
}

Test(tokio, asks_for_symbols_when_tokio_is_stripped, .init = setup, .fini = teardown)
{
	struct tokio_layout l;
	char why[256], cmd[PATH_MAX * 2];

	build("tagged", "#define VERSION \"1.24.2\"\n" TAGGED_BODY);
	snprintf(cmd, sizeof(cmd), "strip -o %s/stripped %s/tagged", dir, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	cr_expect_eq(find(at("stripped"), &l, why, sizeof(why)), -ENODATA);
	cr_expect(strstr(why, "strip"), "%s", why);
}

Test(tokio, a_program_without_tokios_runtime_is_not_tokio, .init = setup,
     .fini = teardown)
{
	struct tokio_layout l;
	char why[256];

	build("plain", "#define NO_CONTEXT\n");
	cr_expect_eq(find(at("plain"), &l, why, sizeof(why)), -ENOENT);
	/* tokio::sync alone: tokio's paths, no runtime */
	build("synconly", "#define NO_CONTEXT\n#define VERSION \"1.24.2\"\n");
	cr_expect_eq(find(at("synconly"), &l, why, sizeof(why)), -ENOENT);
	cr_expect(strstr(why, "1.24.2"), "%s", why);
}
#endif

Test(tokio, a_system_program_is_not_tokio)
{
	struct tokio_layout l;
	char why[256];

	if (access("/bin/true", R_OK))
		cr_skip_test("no /bin/true");
	cr_expect_eq(find("/bin/true", &l, why, sizeof(why)), -ENOENT);
}

Test(tokio, a_missing_file_or_one_not_elf_says_so)
{
	struct tokio_layout l;
	char why[256];

	cr_expect_eq(find("/nonexistent/x", &l, why, sizeof(why)), -ENOENT);
	cr_expect(strstr(why, "cannot open"), "%s", why);
	cr_expect_eq(find("/proc/self/status", &l, why, sizeof(why)), -ENOEXEC);
	cr_expect(strstr(why, "not an ELF"), "%s", why);
	cr_expect_eq(tokio_layout_find("/nonexistent/x", &l, NULL, 0), -ENOENT);
}

Test(tokio, an_elf_of_another_machine_is_not_supported, .init = setup, .fini = teardown)
{
	struct tokio_layout l;
	char why[256];
	Elf64_Ehdr e64 = {.e_type = ET_EXEC,
			  .e_machine = EM_AARCH64,
			  .e_version = EV_CURRENT,
			  .e_ehsize = sizeof(Elf64_Ehdr)};
	Elf32_Ehdr e32 = {.e_type = ET_EXEC,
			  .e_machine = EM_386,
			  .e_version = EV_CURRENT,
			  .e_ehsize = sizeof(Elf32_Ehdr)};
	FILE *f;

	memcpy(e64.e_ident, ELFMAG, SELFMAG);
	e64.e_ident[EI_CLASS] = ELFCLASS64;
	e64.e_ident[EI_DATA] = ELFDATA2LSB;
	e64.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(e32.e_ident, e64.e_ident, EI_NIDENT);
	e32.e_ident[EI_CLASS] = ELFCLASS32;
	f = fopen(at("arm64"), "w");
	cr_assert(f);
	cr_assert_eq(fwrite(&e64, sizeof(e64), 1, f), 1);
	fclose(f);
	f = fopen(at("i386"), "w");
	cr_assert(f);
	cr_assert_eq(fwrite(&e32, sizeof(e32), 1, f), 1);
	fclose(f);
	cr_expect_eq(find(at("arm64"), &l, why, sizeof(why)), -ENOTSUP);
	cr_expect(strstr(why, "x86-64"), "%s", why);
	cr_expect_eq(find(at("i386"), &l, why, sizeof(why)), -ENOTSUP);
}
