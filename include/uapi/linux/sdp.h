/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Sockets Direct Protocol (SDP) -- user-visible definitions.
 *
 * SDP gives stream sockets whose bytes travel over an RDMA reliable
 * connection instead of TCP/IP.  A program opens one with
 *
 *	fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
 *
 * and then uses the ordinary BSD socket calls on it.  Addresses are plain
 * struct sockaddr_in / struct sockaddr_in6 (AF_INET / AF_INET6); for
 * programs written for the OFED implementation, a struct sockaddr_in whose
 * sin_family is AF_INET_SDP is accepted as AF_INET.
 *
 * The address family number is fixed at 27, the value OFED used.  The
 * module can register under a different number (module parameter
 * "family") on a kernel where 27 is taken; programs then have to be told
 * that number at run time.
 */
#ifndef _UAPI_LINUX_SDP_H
#define _UAPI_LINUX_SDP_H

#include <linux/types.h>

#define AF_INET_SDP	27		/* address family of SDP sockets */
#define PF_INET_SDP	AF_INET_SDP	/* protocol family, same value */

/*
 * Level for SDP-specific socket options, as in
 * setsockopt(fd, SOL_SDP, optname, ...).  Standard SOL_SOCKET options
 * and the TCP options that make sense for a byte stream (SOL_TCP /
 * IPPROTO_TCP level: TCP_NODELAY, TCP_CORK) apply to SDP sockets too.
 */
#define SOL_SDP		1025

/*
 * SOL_SDP option names.  Values 1..15 are reserved for options that the
 * byte-stream, zero-copy and diagnostics work adds; none is implemented
 * yet, and setsockopt()/getsockopt() at SOL_SDP fail with ENOPROTOOPT.
 */

#endif /* _UAPI_LINUX_SDP_H */
