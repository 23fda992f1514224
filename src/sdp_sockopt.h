/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- socket options (sdp_sockopt.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_SOCKOPT_H
#define _SDP_SOCKOPT_H

#include <linux/sockptr.h>

struct socket;

int sdp_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen);
int sdp_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen);

#endif /* _SDP_SOCKOPT_H */
