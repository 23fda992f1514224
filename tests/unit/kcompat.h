/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The little of the kernel's headers that src/sdp_proto.h and
 * src/sdp_wire.h use, for building them in user space (tests/unit.c).
 * They include it instead of the kernel's headers when __KERNEL__ is not
 * defined.
 */
#ifndef SDP_KCOMPAT_H
#define SDP_KCOMPAT_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>	/* __u8 .. __u64, __be16 .. __be64 */

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;

#define U16_MAX		((u16)~0U)
#define U32_MAX		((u32)~0U)

#define __packed	__attribute__((__packed__))

#define be16_to_cpu(x)	((u16)be16toh(x))
#define be32_to_cpu(x)	((u32)be32toh(x))
#define be64_to_cpu(x)	((u64)be64toh(x))
#define cpu_to_be16(x)	((__be16)htobe16(x))
#define cpu_to_be32(x)	((__be32)htobe32(x))
#define cpu_to_be64(x)	((__be64)htobe64(x))

#define min_t(type, a, b)						\
	({ type __a = (a); type __b = (b); __a < __b ? __a : __b; })

/* As the kernel's: the message is optional. */
#undef static_assert
#define static_assert(expr, ...) __static_assert(expr, ##__VA_ARGS__, #expr)
#define __static_assert(expr, msg, ...) _Static_assert(expr, msg)
#define BUILD_BUG_ON(cond) _Static_assert(!(cond), "BUILD_BUG_ON(" #cond ")")

#endif /* SDP_KCOMPAT_H */
