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

#include <linux/bug.h>
#include <linux/net.h>
#include <linux/netdevice.h>
#include <linux/uio.h>

/*
 * DEBUG_NET_WARN_ON_ONCE() (5.19): the checks of invariants on the hot
 * paths, compiled in with CONFIG_DEBUG_NET only.  Before it, never.
 */
#ifndef DEBUG_NET_WARN_ON_ONCE
#define DEBUG_NET_WARN_ON_ONCE(cond) BUILD_BUG_ON_INVALID(cond)
#endif

/*
 * proto_ops->accept: the accept flags were an argument up to 6.9 and are
 * in a struct proto_accept_arg from 6.10.  An accept op is declared with
 * SDP_ACCEPT_ARGS after its two sockets and reads the flags as
 * SDP_ACCEPT_FLAGS.
 */
#ifdef SDP_HAVE_PROTO_ACCEPT_ARG
#define SDP_ACCEPT_ARGS		struct proto_accept_arg *accept_arg
#define SDP_ACCEPT_FLAGS	(accept_arg->flags)
#else
#define SDP_ACCEPT_ARGS		int accept_flags, bool accept_kern
#define SDP_ACCEPT_FLAGS	(accept_flags)
#endif

/**
 * sdp_iter_user_seg() - the user memory an iterator reads or writes next
 * @it: the iterator of a sendmsg() or recvmsg()
 * @base: set to the user address of its next byte
 * @len: set to the bytes that are contiguous there (at least 1)
 *
 * Empty iovec elements hold no byte and are looked past: the next byte is
 * in the first non-empty element (the iterator itself is not moved; the
 * kernel's copy and advance helpers skip empty elements the same way).
 *
 * Return: true for an iterator over user memory (iovec or ubuf) with
 * bytes left, false for kernel memory (kvec, bvec, ...), which zero-copy
 * does not handle, or for an empty one.
 */
static inline bool sdp_iter_user_seg(const struct iov_iter *it,
				     unsigned long *base, size_t *len)
{
	const struct iovec *iov;
	unsigned long nsegs;
	size_t off;

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
	off = it->iov_offset;
	for (nsegs = it->nr_segs; nsegs && off >= iov->iov_len; nsegs--) {
		iov++;
		off = 0;
	}
	if (!nsegs)
		return false;
	*base = (unsigned long)iov->iov_base + off;
	*len = min(iov_iter_count(it), iov->iov_len - off);
	return true;
}

/*
 * SOL_SOCKET options reach a family's setsockopt() only when its socket
 * has SOCK_CUSTOM_SOCKOPT (6.12 has it, 6.1 not); without it the socket
 * core handles them all, and refuses SO_ZEROCOPY (EOPNOTSUPP) for
 * families other than IP and RDS: MSG_ZEROCOPY then stays off
 * (sdp_msgzc.c).
 */
static inline void sdp_sock_custom_sockopt(struct socket *sock)
{
#ifdef SOCK_CUSTOM_SOCKOPT
	set_bit(SOCK_CUSTOM_SOCKOPT, &sock->flags);
#endif
}

/*
 * Pages spliced to a socket (sendfile(), splice()), which the socket may
 * keep a reference on instead of copying: a sendmsg() with
 * MSG_SPLICE_PAGES from 6.5; ->sendpage() before (SDP_HAVE_SENDPAGE,
 * af_sdp.c).
 */
static inline bool sdp_msg_spliced(const struct msghdr *msg)
{
#ifdef MSG_SPLICE_PAGES
	return msg->msg_flags & MSG_SPLICE_PAGES;
#else
	return false;
#endif
}

#endif /* _SDP_COMPAT_H */
