/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- differences between the kernels we build
 * for (5.10 and newer), in one place.  The SDP_HAVE_* macros come from
 * Kbuild, which looks for the interfaces in the kernel's headers.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_COMPAT_H
#define _SDP_COMPAT_H

#include <linux/uio.h>

/**
 * sdp_iter_user_seg() - the user memory an iterator reads or writes next
 * @it: the iterator of a sendmsg() or recvmsg()
 * @base: set to the user address of its next byte
 * @len: set to the bytes that are contiguous there
 *
 * Return: true for an iterator over user memory (iovec or ubuf), false
 * for kernel memory (kvec, bvec, ...), which zero-copy does not handle.
 */
static inline bool sdp_iter_user_seg(const struct iov_iter *it,
				     unsigned long *base, size_t *len)
{
	const struct iovec *iov;

	if (!iov_iter_count(it))
		return false;
#ifdef SDP_HAVE_ITER_UBUF
	if (iter_is_ubuf(it)) {
		*base = (unsigned long)it->ubuf + it->iov_offset;
		*len = iov_iter_count(it);
		return true;
	}
#endif
	if (!iter_is_iovec(it))
		return false;
#ifdef SDP_HAVE_ITER_IOV
	iov = iter_iov(it);
#else
	iov = it->iov;
#endif
	*base = (unsigned long)iov->iov_base + it->iov_offset;
	*len = min(iov_iter_count(it), iov->iov_len - it->iov_offset);
	return true;
}

#endif /* _SDP_COMPAT_H */
