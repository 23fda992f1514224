/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- in-kernel fallback to TCP (sdp_fallback.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_FALLBACK_H
#define _SDP_FALLBACK_H

#include <linux/net.h>
#include <linux/poll.h>
#include <uapi/linux/sdp.h>

struct sdp_sock;

/* SDP_TCP_FALLBACK_TIMEOUT at most, ms: as net.sdp.tcp_fallback_timeout_ms */
#define SDP_FB_TIMEOUT_MS_MAX		600000

bool sdp_fb_enabled(const struct sdp_sock *ssk);
bool sdp_fb_cached(struct net *net, const struct sockaddr_storage *ss);
void sdp_fb_cache_add(struct net *net, const struct sockaddr_storage *ss,
		      u8 why);
void sdp_fb_cache_forget(struct net *net, const struct sockaddr_storage *ss);
bool sdp_fb_cacheable(const struct sdp_sock *ssk, enum sdp_fallback_reason why);
int sdp_fb_net_init(struct net *net);
void sdp_fb_net_exit(struct net *net);
void sdp_fb_ready(struct sdp_sock *ssk);
int sdp_fb_connect(struct sdp_sock *ssk, enum sdp_fallback_reason why);
void sdp_fb_reset(struct sdp_sock *ssk);
unsigned int sdp_fb_timeout_ms(const struct sdp_sock *ssk);
void sdp_fb_timeout_arm(struct sdp_sock *ssk);
void sdp_fb_timeout_check(struct sdp_sock *ssk);
void sdp_fb_keepalive(struct sdp_sock *ssk, int on);
void sdp_fb_release(struct sdp_sock *ssk);
int sdp_fb_bind_any(struct sdp_sock *ssk, const struct sockaddr_storage *ss);
void sdp_fb_listen(struct sdp_sock *lssk, int backlog);
bool sdp_fb_listen_pending(const struct sdp_sock *lssk);
struct sock *sdp_fb_accept(struct sdp_sock *lssk);

/*
 * The socket's calls once it uses TCP (sdp_sock::fb set): each goes to
 * the TCP socket, with the socket-level options in force.
 */
int sdp_fb_sendmsg(struct sdp_sock *ssk, struct msghdr *msg, size_t len);
int sdp_fb_recvmsg(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
		   int flags);
__poll_t sdp_fb_poll(struct sdp_sock *ssk, struct file *file);
int sdp_fb_shutdown(struct sdp_sock *ssk, int how);
int sdp_fb_getname(struct sdp_sock *ssk, struct sockaddr *uaddr, int peer);
int sdp_fb_ioctl(struct sdp_sock *ssk, unsigned int cmd, unsigned long arg);
int sdp_fb_setsockopt(struct sdp_sock *ssk, int level, int optname,
		      sockptr_t optval, unsigned int optlen);
int sdp_fb_getsockopt(struct sdp_sock *ssk, int level, int optname,
		      char __user *optval, int __user *optlen);

#endif /* _SDP_FALLBACK_H */
