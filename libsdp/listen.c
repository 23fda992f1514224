// SPDX-License-Identifier: GPL-2.0
/*
 * libsdp: bind(), listen(), accept(), accept4() and shutdown() -- the
 * servers, and the SDP shadow behind a "both" listener.  See libsdp.c
 * for the whole.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "libsdp_int.h"

/* -------------------------------------------------------------------- */
/* bind, listen                                                         */

static uint16_t port_of(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct fdent *e;
	enum sdp_use use;
	sigset_t old;
	int ret, err;

	ensure_init();
	e = get(fd);
	if (!is_candidate(e, addr, len))
		return real.bind(fd, addr, len);

	/* listen() logs the decision; here it only matters for "sdp". */
	use = sdp_config_match(&cfg, SDP_ROLE_SERVER, NULL, addr, len, NULL);
	if (use == SDP_USE_SDP && port_of(addr) != 0) {
		/* SDP only, on a fixed port: TCP's port must not matter. */
		if (convert(fd, fd_nonblocking(fd)) == 0) {
			ret = real.bind(fd, addr, len);
			return log_sdp_call("bind", addr, len, ret);
		}
		logmsg(SDP_LOG_WARN, "bind %s: no SDP socket (%s): tcp",
		       ADDRSTR(addr, len), strerror(errno));
	}
	ret = real.bind(fd, addr, len);
	if (ret < 0)
		return ret;
	err = errno;
	lock_tab(&old);
	e = get(fd);
	if (e && e->kind == FD_CAND) {
		e->bound = true;
		memcpy(&e->bindaddr, addr, len);
		e->bindlen = len;
	}
	unlock_tab(&old);
	errno = err;
	return 0;
}

/* Where a listen() on @fd will listen, for the rules. */
static socklen_t listen_addr(int fd, int domain, struct sockaddr_storage *ss)
{
	socklen_t len = sizeof(*ss);

	if (real.getsockname(fd, (struct sockaddr *)ss, &len) == 0)
		return len;
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = domain;
	return domain == AF_INET6 ? sizeof(struct sockaddr_in6) :
				    sizeof(struct sockaddr_in);
}

/* Set up the SDP shadow of the TCP listener @fd.  Without the lock. */
static int shadow_listen(int fd, int backlog)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct timeval retry = { 0, LISTEN_RETRY_MS * 1000 };
	struct timeval prog = { 0, 0 };
	struct shadow *sh;
	struct fdent *e;
	socklen_t tl = sizeof(prog);
	sigset_t old;
	int sfd, one = 1;

	if (real.getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -1;
	sfd = sdp_socket(fd, true);
	if (sfd < 0)
		return -1;
	real.setsockopt(sfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (real.bind(sfd, (struct sockaddr *)&ss, len) < 0 ||
	    real.listen(sfd, backlog) < 0) {
		int err = errno;

		real.close(sfd);
		errno = err;
		return -1;
	}
	sfd = hide_fd(sfd);
	if (sfd < 0)
		return -1;
	sh = calloc(1, sizeof(*sh));
	if (!sh) {
		real.close(sfd);
		errno = ENOMEM;
		return -1;
	}
	real.getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &prog, &tl);
	real.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &retry, sizeof(retry));
	sh->fd = sfd;
	sh->refs = 1;
	sh->rcvtimeo = prog;
	sh->lfd_hint = fd;

	lock_tab(&old);
	e = get(fd);
	if (!e || e->kind != FD_CAND) {
		unlock_tab(&old);
		real.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &prog,
				sizeof(prog));
		real.close(sfd);
		free(sh);
		errno = EBADF;
		return -1;
	}
	mark_hidden(sfd);
	e->shadow = sh;
	set_kind(fd, e, FD_LISTEN_BOTH);
	/* Registrations made before listen() now cover the shadow too. */
	for (unsigned int i = 0; i < e->n_eps; i++) {
		struct epoll_event ev = e->eps[i].ev;

		real.epoll_ctl(e->eps[i].epfd, EPOLL_CTL_ADD, sfd, &ev);
	}
	unlock_tab(&old);
	return 0;
}

EXPORT int listen(int fd, int backlog)
{
	struct sockaddr_storage ss;
	struct fdent *e;
	enum sdp_use use;
	socklen_t len;
	sigset_t old;
	int ret, err, sfd = -1;

	ensure_init();
	e = get(fd);
	if (e && e->kind == FD_LISTEN_BOTH) {
		ret = real.listen(fd, backlog);
		if (ret == 0) {
			lock_tab(&old);
			e = get(fd);
			if (e && e->kind == FD_LISTEN_BOTH &&
			    !e->shadow->retired)
				sfd = e->shadow->fd;
			if (sfd >= 0)
				real.listen(sfd, backlog);
			unlock_tab(&old);
		}
		return ret;
	}
	if (!e || e->kind != FD_CAND)
		return real.listen(fd, backlog);

	len = listen_addr(fd, e->domain, &ss);
	decide(SDP_ROLE_SERVER, (struct sockaddr *)&ss, len, &use);
	switch (use) {
	case SDP_USE_SDP:
		if (convert(fd, fd_nonblocking(fd)) < 0) {
			logmsg(SDP_LOG_WARN, "listen %s: no SDP socket (%s): tcp",
			       ADDRSTR(&ss, len), strerror(errno));
			break;
		}
		lock_tab(&old);
		e = get(fd);
		if (e && e->bound) {
			memcpy(&ss, &e->bindaddr, e->bindlen);
			len = e->bindlen;
		} else {
			len = 0;
		}
		unlock_tab(&old);
		if (len && real.bind(fd, (struct sockaddr *)&ss, len) < 0) {
			err = errno;
			logmsg(SDP_LOG_ERROR, "listen %s: sdp bind: %s",
			       ADDRSTR(&ss, len), strerror(err));
			errno = err;
			return -1;
		}
		ret = real.listen(fd, backlog);
		return log_sdp_call("listen", &ss, len, ret);
	case SDP_USE_BOTH:
		ret = real.listen(fd, backlog);
		if (ret < 0)
			return ret;
		err = errno;
		len = listen_addr(fd, e->domain, &ss);
		if (shadow_listen(fd, backlog) < 0) {
			logmsg(SDP_LOG_WARN, "listen %s: tcp only (no SDP listener: %s)",
			       ADDRSTR(&ss, len), strerror(errno));
			forget(fd);
		} else {
			logmsg(SDP_LOG_SUMMARY, "listen %s: tcp and sdp",
			       ADDRSTR(&ss, len));
		}
		errno = err;
		return 0;
	case SDP_USE_TCP:
		break;
	}
	forget(fd);
	return real.listen(fd, backlog);
}

/* -------------------------------------------------------------------- */
/* accept                                                               */

static struct shadow *shadow_get(int fd)
{
	struct shadow *sh = NULL;
	struct fdent *e;
	sigset_t old;

	lock_tab(&old);
	e = get(fd);
	if (e && e->kind == FD_LISTEN_BOTH && !e->shadow->retired) {
		sh = e->shadow;
		sh->refs++;
	}
	unlock_tab(&old);
	return sh;
}

static void shadow_release(struct shadow *sh)
{
	sigset_t old;

	lock_tab(&old);
	shadow_put(sh);
	unlock_tab(&old);
}

/* accept() on a TCP listener with an SDP shadow. */
static int accept_both(int fd, struct shadow *sh, struct sockaddr *addr,
		       socklen_t *len, int flags)
{
	struct timeval tv;
	long long deadline = -1;
	bool nonblock = fd_nonblocking(fd);
	socklen_t room = len ? *len : 0;
	unsigned int first;
	sigset_t old;
	int ret = -1, i;

	lock_tab(&old);
	tv = sh->rcvtimeo;
	first = sh->turn++ & 1;
	unlock_tab(&old);
	if (tv.tv_sec || tv.tv_usec)
		deadline = now_ms() + tv.tv_sec * 1000LL + tv.tv_usec / 1000;

	for (;;) {
		struct pollfd p[2];
		int t;

		for (i = 0; i < 2; i++) {
			bool sdp = (first + i) & 1;

			if (len)
				*len = room;
			if (sdp) {
				if (sh->retired)
					continue;
				ret = real.accept4(sh->fd, addr, len, flags);
			} else {
				struct pollfd q = { fd, POLLIN, 0 };

				/* A blocking listener: only when it is ready
				 * (and SO_RCVTIMEO bounds a lost race). */
				if (!nonblock && real.ppoll(&q, 1,
					&(struct timespec){ 0, 0 }, NULL) == 0)
					continue;
				ret = real.accept4(fd, addr, len, flags);
				if (ret >= 0)
					real.setsockopt(ret, SOL_SOCKET,
							SO_RCVTIMEO, &tv,
							sizeof(tv));
			}
			if (ret >= 0) {
				logmsg(SDP_LOG_DEBUG, "accept on fd %d: fd %d over %s",
				       fd, ret, sdp ? "sdp" : "tcp");
				return ret;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != ECONNABORTED && errno != EPROTO)
				return -1;
		}
		if (nonblock) {
			errno = EAGAIN;
			return -1;
		}
		t = -1;
		if (deadline >= 0) {
			long long left = deadline - now_ms();

			if (left <= 0) {
				errno = EAGAIN;
				return -1;
			}
			t = left;
		}
		p[0] = (struct pollfd){ fd, POLLIN, 0 };
		p[1] = (struct pollfd){ sh->retired ? -1 : sh->fd, POLLIN, 0 };
		if (real.ppoll(p, 2, t < 0 ? NULL : &(struct timespec){
				t / 1000, t % 1000 * 1000000 }, NULL) < 0)
			return -1;	/* EINTR: as accept() on a signal */
		if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
			/* shut down or closed: let accept() say it */
			return real.accept4(fd, addr, len, flags);
		}
		first = p[1].revents ? 1 : 0;
	}
}

EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	struct shadow *sh;
	struct fdent *e;
	int ret, err;

	ensure_init();
	e = get(fd);
	if (!e || e->kind != FD_LISTEN_BOTH)
		return real.accept4(fd, addr, len, flags);
	sh = shadow_get(fd);
	if (!sh)
		return real.accept4(fd, addr, len, flags);
	ret = accept_both(fd, sh, addr, len, flags);
	err = errno;
	shadow_release(sh);
	errno = err;
	return ret;
}

EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct fdent *e;

	ensure_init();
	e = get(fd);
	if (!e || e->kind != FD_LISTEN_BOTH)
		return real.accept(fd, addr, len);
	return accept4(fd, addr, len, 0);
}

/* Retire a shadow: its SDP listener goes, its number stays ours until
 * the last user lets go (a placeholder that is never readable). */
static void shadow_retire(struct shadow *sh)
{
	int ph;

	if (sh->retired)
		return;
	sh->retired = true;
	ph = real.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ph >= 0) {
		real.dup3(ph, sh->fd, O_CLOEXEC);
		real.close(ph);
	}
}

EXPORT int shutdown(int fd, int how)
{
	struct fdent *e;
	sigset_t old;
	int ret, err;

	ensure_init();
	e = get(fd);
	ret = real.shutdown(fd, how);
	if (!e || e->kind != FD_LISTEN_BOTH || ret < 0 || how == SHUT_WR)
		return ret;
	err = errno;
	lock_tab(&old);
	e = get(fd);
	if (e && e->kind == FD_LISTEN_BOTH)
		shadow_retire(e->shadow);
	unlock_tab(&old);
	errno = err;
	return ret;
}
