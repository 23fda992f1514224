// SPDX-License-Identifier: GPL-2.0
/*
 * libsdp: connect() -- "sdp" clients, and "both" clients: the module's
 * own fallback to TCP where it has one, else SDP first here and then
 * TCP, with settle() deciding a nonblocking attempt.  See libsdp.c for
 * the whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "libsdp_int.h"
#include "sdp_names.h"

/* -------------------------------------------------------------------- */
/* connect                                                              */

/*
 * Wait up to @ms for a nonblocking connect on @fd; 0 when connected,
 * else -1 with the error (ETIMEDOUT when it did not finish).
 */
static int wait_connect(int fd, int ms)
{
	long long deadline = now_ms() + ms;
	socklen_t l = sizeof(int);
	int err = 0;

	for (;;) {
		struct pollfd p = { fd, POLLOUT, 0 };
		long long left = deadline - now_ms();
		struct timespec ts;

		if (left < 0)
			left = 0;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = left % 1000 * 1000000;
		if (real.ppoll(&p, 1, &ts, NULL) > 0)
			break;
		if (now_ms() >= deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
	if (real.getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
		return -1;
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* Bind a new socket where the program bound its TCP one. */
static void rebind(int fd, int sfd)
{
	struct sockaddr_storage ss;
	struct fdent *e;
	socklen_t len = 0;
	sigset_t old;

	lock_tab(&old);
	e = get(fd);
	if (e && e->bound) {
		ss = e->bindaddr;
		len = e->bindlen;
	}
	unlock_tab(&old);
	if (len && real.bind(sfd, (struct sockaddr *)&ss, len) < 0)
		logmsg(SDP_LOG_WARN, "cannot bind the SDP socket to %s (%s): connecting unbound",
		       ADDRSTR(&ss, len), strerror(errno));
}

/*
 * @fd's entry, still a candidate, with the table locked (*@old); else
 * NULL with the table unlocked, @sfd closed and errno EBADF (the
 * program closed or reused @fd meanwhile).
 */
static struct fdent *lock_cand(int fd, int sfd, sigset_t *old)
{
	struct fdent *e;

	lock_tab(old);
	e = get(fd);
	if (e && e->kind == FD_CAND)
		return e;
	unlock_tab(old);
	real.close(sfd);
	errno = EBADF;
	return NULL;
}

/* Log the outcome @ret of a connect() the module may fall back for. */
static void log_kernel_fb(int fd, const struct sockaddr *addr, socklen_t len,
			  int ret)
{
	struct sdp_info info = { 0 };
	socklen_t il = sizeof(info);
	int err = errno;

	if (SDP_LOG_SUMMARY < cfg.log_level)
		return;
	if (ret < 0 && err == EINPROGRESS) {
		logmsg(SDP_LOG_SUMMARY, "connect %s: in progress: sdp, or tcp (kernel fallback)",
		       ADDRSTR(addr, len));
	} else if (ret < 0) {
		logmsg(SDP_LOG_SUMMARY, "connect %s: sdp and tcp (kernel fallback): %s",
		       ADDRSTR(addr, len), strerror(err));
	} else if (real.getsockopt(fd, SOL_SDP, SDP_INFO, &info, &il) == 0 &&
		   info.sdpi_transport == SDP_TRANSPORT_TCP) {
		logmsg(SDP_LOG_SUMMARY, "connect %s: tcp (kernel fallback: %s)",
		       ADDRSTR(addr, len),
		       sdp_fallback_reason_name(info.sdpi_fallback_reason));
	} else {
		logmsg(SDP_LOG_SUMMARY, "connect %s: sdp", ADDRSTR(addr, len));
	}
	errno = err;
}

/*
 * "both" where the module falls back itself (sdp(7), "TCP fallback"):
 * the SDP socket @sfd gets SDP_TCP_FALLBACK on and our fallback timeout
 * and takes the descriptor's place; where SDP cannot connect, the kernel
 * goes on over TCP on that same socket (and remembers the destination),
 * so nothing here tries a second time.  Returns 1, @sfd untouched, if
 * the module has no fallback; else connect()'s result.
 */
static int connect_kernel_fb(int fd, int sfd, const struct sockaddr *addr,
			     socklen_t len)
{
	/* The module's 0 is "no limit"; ours, "do not wait for SDP". */
	int one = 1, ms = connect_ms ? connect_ms : 1, ret;
	struct fdent *e;
	sigset_t old;

	if (!kernel_fb ||
	    real.setsockopt(sfd, SOL_SDP, SDP_TCP_FALLBACK, &one,
			    sizeof(one)) < 0 ||
	    real.setsockopt(sfd, SOL_SDP, SDP_TCP_FALLBACK_TIMEOUT, &ms,
			    sizeof(ms)) < 0)
		return 1;
	e = lock_cand(fd, sfd, &old);
	if (!e)
		return -1;
	if (install(fd, e, sfd) < 0) {
		unlock_tab(&old);
		forget(fd);
		return real.connect(fd, addr, len);
	}
	set_kind(fd, e, FD_SDP);
	unlock_tab(&old);
	ret = real.connect(fd, addr, len);
	log_kernel_fb(fd, addr, len, ret);
	return ret;
}

/* "both": the module's fallback, or SDP first here, then TCP. */
static int connect_both(int fd, const struct sockaddr *addr, socklen_t len)
{
	bool nonblock = fd_nonblocking(fd);
	struct fdent *e;
	sigset_t old;
	int sfd, tfd, ret, err;

	sfd = sdp_socket(fd, true);
	if (sfd < 0)
		goto tcp;
	rebind(fd, sfd);
	/*
	 * No SDP attempt over iWARP (sdp(7), SDP_NO_IWARP): a "both" server
	 * there has no SDP listener, and the request would reach its
	 * program as data.  A module without the option tries SDP.
	 */
	err = errno;
	real.setsockopt(sfd, SOL_SDP, SDP_NO_IWARP, &(int){ 1 }, sizeof(int));
	errno = err;
	ret = connect_kernel_fb(fd, sfd, addr, len);
	if (ret != 1)
		return ret;
	ret = real.connect(sfd, addr, len);
	if (ret < 0 && errno == EINPROGRESS && !nonblock)
		ret = wait_connect(sfd, connect_ms);
	if (ret < 0 && errno != EINPROGRESS) {
		err = errno;
		real.close(sfd);
		logmsg(SDP_LOG_SUMMARY, "connect %s: sdp failed (%s): tcp",
		       ADDRSTR(addr, len), strerrorname_np(err));
		goto tcp;
	}
	e = lock_cand(fd, sfd, &old);
	if (!e)
		return -1;
	if (ret == 0) {
		if (install(fd, e, sfd) < 0) {
			unlock_tab(&old);
			goto tcp;
		}
		set_kind(fd, e, FD_SDP);
		unlock_tab(&old);
		logmsg(SDP_LOG_SUMMARY, "connect %s: sdp", ADDRSTR(addr, len));
		return 0;
	}
	/* In progress, nonblocking: hold the TCP socket aside. */
	tfd = real.fcntl(fd, F_DUPFD_CLOEXEC, hidden_min);
	if (tfd < 0)
		tfd = real.fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (tfd < 0 || install(fd, e, sfd) < 0) {
		err = errno;
		if (tfd >= 0)
			real.close(tfd);
		unlock_tab(&old);
		logmsg(SDP_LOG_WARN, "connect %s: cannot set up the SDP attempt (%s): tcp",
		       ADDRSTR(addr, len), strerror(err));
		goto tcp;
	}
	e->tcp_fd = tfd;
	memcpy(&e->peer, addr, len);
	e->peerlen = len;
	e->deadline = now_ms() + connect_ms;
	mark_hidden(tfd);
	set_kind(fd, e, FD_CONNECTING);
	unlock_tab(&old);
	logmsg(SDP_LOG_DEBUG, "connect %s: trying sdp (nonblocking)",
	       ADDRSTR(addr, len));
	errno = EINPROGRESS;
	return -1;
tcp:
	forget(fd);
	return real.connect(fd, addr, len);
}

/*
 * Settle a "both" attempt in progress on @fd, waiting up to @wait_ms for
 * it.  Returns 1 while it is still in progress, 0 when it is settled
 * (over SDP, or a TCP connect was started on @fd, or failed: FD_FAILED).
 */
int settle(int fd, int wait_ms)
{
	struct pollfd p = { fd, POLLOUT, 0 };
	struct sockaddr_storage peer;
	socklen_t l = sizeof(int), plen;
	struct fdent *e;
	long long left;
	sigset_t old;
	int err = 0, sdp_err, tfd, ret, fl;

	e = get(fd);
	if (!e || e->kind != FD_CONNECTING)
		return 0;
	left = e->deadline - now_ms();
	if (wait_ms > left)
		wait_ms = left > 0 ? left : 0;
	real.ppoll(&p, 1, &(struct timespec){ wait_ms / 1000,
					      wait_ms % 1000 * 1000000 },
		   NULL);

	lock_tab(&old);
	e = get(fd);
	if (!e || e->kind != FD_CONNECTING) {
		unlock_tab(&old);
		return 0;
	}
	p = (struct pollfd){ fd, POLLOUT, 0 };
	real.ppoll(&p, 1, &(struct timespec){ 0, 0 }, NULL);
	if (!p.revents && now_ms() < e->deadline) {
		unlock_tab(&old);
		return 1;
	}
	if (p.revents)
		real.getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l);
	else
		err = ETIMEDOUT;
	if (!err && (p.revents & POLLHUP))
		err = ECONNRESET;
	if (!err && (p.revents & POLLOUT)) {
		tfd = e->tcp_fd;
		set(tfd, NULL);
		real.close(tfd);
		e->tcp_fd = -1;
		set_kind(fd, e, FD_SDP);
		logmsg(SDP_LOG_SUMMARY, "connect %s: sdp",
		       ADDRSTR(&e->peer, e->peerlen));
		unlock_tab(&old);
		return 0;
	}
	/* SDP failed or took too long: the program's TCP socket takes over. */
	sdp_err = p.revents ? (err ? err : ECONNRESET) : ETIMEDOUT;
	tfd = e->tcp_fd;
	peer = e->peer;
	plen = e->peerlen;
	fl = real.fcntl(fd, F_GETFL);
	if (fl >= 0)
		real.fcntl(tfd, F_SETFL, fl);
	ret = real.connect(tfd, (struct sockaddr *)&peer, plen);
	err = ret < 0 ? errno : 0;
	set(tfd, NULL);
	e->tcp_fd = -1;
	if (install(fd, e, tfd) < 0) {
		/* Cannot happen with valid descriptors; leave SDP's error. */
		set_kind(fd, e, FD_SDP);
		unlock_tab(&old);
		return 0;
	}
	logmsg(SDP_LOG_SUMMARY, "connect %s: sdp %s (%s): tcp",
	       ADDRSTR(&peer, plen), p.revents ? "failed" : "took too long",
	       strerrorname_np(sdp_err));
	if (ret == 0 || err == EINPROGRESS) {
		set(fd, NULL);
		free_entry(e);
	} else {
		e->err = err;
		set_kind(fd, e, FD_FAILED);
	}
	unlock_tab(&old);
	return 0;
}

/*
 * The error of a "both" connect whose TCP fallback failed at once
 * (FD_FAILED), taken: it is reported once, and @fd is plain TCP after
 * it.  0 if there is none.
 */
static int take_failed(int fd)
{
	struct fdent *e;
	sigset_t old;
	int err = 0;

	lock_tab(&old);
	e = get(fd);
	if (e && e->kind == FD_FAILED) {
		err = e->err;
		set(fd, NULL);
		free_entry(e);
	}
	unlock_tab(&old);
	return err;
}

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct fdent *e;
	enum sdp_use use;
	int ret, err;

	ensure_init();
	e = get(fd);
	if (!e)
		return real.connect(fd, addr, len);
	if (e->kind == FD_CONNECTING) {
		settle(fd, 0);
		e = get(fd);
		if (e && e->kind == FD_CONNECTING) {
			errno = EALREADY;
			return -1;
		}
	}
	if (e && e->kind == FD_FAILED) {
		err = take_failed(fd);
		if (err) {
			errno = err;
			return -1;
		}
		e = get(fd);
	}
	if (!is_candidate(e, addr, len))
		return real.connect(fd, addr, len);

	decide(SDP_ROLE_CLIENT, addr, len, &use);
	switch (use) {
	case SDP_USE_SDP:
		if (convert(fd, fd_nonblocking(fd)) < 0) {
			logmsg(SDP_LOG_WARN, "connect %s: no SDP socket (%s): tcp",
			       ADDRSTR(addr, len), strerror(errno));
			break;
		}
		rebind(fd, fd);
		ret = real.connect(fd, addr, len);
		return log_sdp_call("connect", addr, len, ret);
	case SDP_USE_BOTH:
		return connect_both(fd, addr, len);
	case SDP_USE_TCP:
		break;
	}
	forget(fd);
	return real.connect(fd, addr, len);
}
