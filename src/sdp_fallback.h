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
#include <net/sock.h>
#include <uapi/linux/sdp.h>

struct sdp_sock;

/* The callbacks of a fallback's TCP socket: sdp_fb::ops[] */
enum sdp_fb_ev {
	SDP_FB_EV_STATE,	/* sk_state_change */
	SDP_FB_EV_DATA,		/* sk_data_ready */
	SDP_FB_EV_SPACE,	/* sk_write_space */
	SDP_FB_EV_ERROR,	/* sk_error_report */
	SDP_FB_EV_MAX
};

/* One of those callbacks, as TCP had it. */
struct sdp_fb_cb {
	void (*fn)(struct sock *sk);
};

/**
 * struct sdp_fb - a socket's fallback to TCP; only sdp_fallback.c looks
 *	inside, the rest of the module asks sdp_fb()
 * @sock: the TCP socket of a fallback, made by connect() with fallback
 *	on (sdp_fb_ready()), or NULL; set once, under lock_sock() and
 *	sdp_sock::lock, released by sdp_release() only, so that a call that
 *	read it may use it
 * @lsn: a listener's TCP listening socket (fallback on), or NULL; set
 *	and cleared under lock_sock() and sdp_sock::lock, read under
 *	lock_sock() or with READ_ONCE() (poll)
 * @port: a TCP socket bound to the port picked for a bind() to port 0
 *	with fallback on, keeping it for TCP until listen() or a fallback
 *	takes it over (sdp_fb_bind_any()), or NULL; under lock_sock()
 * @on: the socket's calls go to @sock (sdp_fb()); cleared when a new
 *	connect() tries SDP again, under lock_sock() and sdp_sock::lock
 * @reason: enum sdp_fallback_reason, set with @on
 * @timeout_ms: SDP_TCP_FALLBACK_TIMEOUT once set (SDP_O_FB_TMO_SET);
 *	under lock_sock()
 * @deadline: jiffies at which the SDP attempt of a connect() with
 *	fallback on is given up (sdp_fb_timeout_check()), 0 when none;
 *	under lock_sock()
 * @err: @sock's error when last looked at; under sdp_sock::lock
 * @err_copied: the error of @sock copied to sk_err and not yet read
 *	(through SO_ERROR, or a call @sock answered), or 0; under
 *	sdp_sock::lock
 * @urg_seq: the sequence number of @sock's last urgent byte SIGURG was
 *	sent for (@urg_sent); under @sock's socket lock (its data_ready)
 * @urg_sent: SIGURG was sent for @urg_seq
 * @ops: @sock's own callbacks (enum sdp_fb_ev), which ours call on (for
 *	a listener, @lsn's data_ready); under its sk_callback_lock
 */
struct sdp_fb {
	struct socket *sock;
	struct socket *lsn;
	struct socket *port;
	bool on;
	u8 reason;
	unsigned int timeout_ms;
	unsigned long deadline;
	int err;
	int err_copied;
	u32 urg_seq;
	bool urg_sent;
	struct sdp_fb_cb ops[SDP_FB_EV_MAX];
};

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
void sdp_fb_timeout_set(struct sdp_sock *ssk, unsigned int ms);
void sdp_fb_timeout_arm(struct sdp_sock *ssk);
unsigned long sdp_fb_timeout_check(struct sdp_sock *ssk);
void sdp_fb_keepalive(struct sdp_sock *ssk, int on);
void sdp_fb_release(struct sdp_sock *ssk);
int sdp_fb_bind_any(struct sdp_sock *ssk, const struct sockaddr_storage *ss);
void sdp_fb_listen(struct sdp_sock *lssk, int backlog);
bool sdp_fb_listen_pending(const struct sdp_sock *lssk);
struct sock *sdp_fb_accept(struct sdp_sock *lssk);

/*
 * The socket's calls once it uses TCP (sdp_fb::sock set): each goes to
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
