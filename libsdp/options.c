// SPDX-License-Identifier: GPL-2.0
/*
 * libsdp: socket(), setsockopt(), getsockopt(), getsockname() and
 * getpeername(); the record of the options a program sets, replayed on
 * the SDP socket that replaces its TCP one, and the TCP options SDP does
 * not have, accepted and remembered.  See libsdp.c for the whole.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>

#include "libsdp_int.h"

/* -------------------------------------------------------------------- */
/* Options                                                              */

static bool recordable(int level, int name, socklen_t len)
{
	if (len > MAX_OPT_LEN)
		return false;
	if (level == SOL_SOCKET || level == IPPROTO_TCP)
		return true;
	return (level == IPPROTO_IPV6 &&
		(name == IPV6_V6ONLY || name == IPV6_TCLASS)) ||
	       (level == IPPROTO_IP && (name == IP_TOS || name == IP_TTL));
}

/* Options that only tune TCP or IP: accepted (and remembered) on SDP. */
static bool emulated(int level, int name)
{
	switch (level) {
	case IPPROTO_TCP:
		switch (name) {
		case TCP_MAXSEG: case TCP_KEEPIDLE: case TCP_KEEPINTVL:
		case TCP_KEEPCNT: case TCP_SYNCNT: case TCP_LINGER2:
		case TCP_DEFER_ACCEPT: case TCP_WINDOW_CLAMP:
		case TCP_QUICKACK: case TCP_CONGESTION: case TCP_USER_TIMEOUT:
		case TCP_NOTSENT_LOWAT: case TCP_THIN_LINEAR_TIMEOUTS:
		case TCP_FASTOPEN: case TCP_FASTOPEN_CONNECT:
			return true;
		}
		return false;
	case IPPROTO_IP:
		return name == IP_TOS || name == IP_TTL;
	case IPPROTO_IPV6:
		return name == IPV6_V6ONLY || name == IPV6_TCLASS ||
		       name == IPV6_UNICAST_HOPS;
	}
	return false;
}

static const struct optrec *find_opt(const struct fdent *e, int level,
				     int name)
{
	unsigned int i;

	for (i = 0; i < e->n_opts; i++)
		if (e->opts[i].level == level && e->opts[i].name == name)
			return &e->opts[i];
	return NULL;
}

/* Under the lock. */
static void record_opt(struct fdent *e, int level, int name, const void *val,
		       socklen_t len)
{
	struct optrec *o = (struct optrec *)find_opt(e, level, name);

	if (!recordable(level, name, len) || !val)
		return;
	if (!o) {
		o = realloc(e->opts, (e->n_opts + 1) * sizeof(*o));
		if (!o)
			return;
		e->opts = o;
		o = &e->opts[e->n_opts++];
	}
	o->level = level;
	o->name = name;
	o->len = len;
	memcpy(o->val, val, len);
}

/* Replay the recorded options on a new socket; the ones SDP does not
 * have stay in the record, which getsockopt() answers from. */
void replay_opts(int sfd, const struct optrec *opts, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (real.setsockopt(sfd, opts[i].level, opts[i].name,
				    opts[i].val, opts[i].len) < 0)
			logmsg(SDP_LOG_DEBUG, "option %d/%d not replayed on the SDP socket: %s",
			       opts[i].level, opts[i].name,
			       strerrorname_np(errno));
}

/* A snapshot of an entry's options, to use without the lock. */
struct optrec *opts_copy(int fd, unsigned int *n)
{
	struct optrec *copy = NULL;
	struct fdent *e;
	sigset_t old;

	*n = 0;
	lock_tab(&old);
	e = get(fd);
	if (e && e->n_opts) {
		copy = malloc(e->n_opts * sizeof(*copy));
		if (copy) {
			memcpy(copy, e->opts, e->n_opts * sizeof(*copy));
			*n = e->n_opts;
		}
	}
	unlock_tab(&old);
	return copy;
}

/* -------------------------------------------------------------------- */
/* socket, setsockopt, getsockopt, getsockname                          */

static bool is_tcp(int domain, int type, int protocol)
{
	return (domain == AF_INET || domain == AF_INET6) &&
	       (type & SOCK_TYPE_BITS) == SOCK_STREAM &&
	       (protocol == 0 || protocol == IPPROTO_TCP);
}

EXPORT int socket(int domain, int type, int protocol)
{
	struct fdent *e;
	sigset_t old;
	int fd;

	ensure_init();
	fd = real.socket(domain, type, protocol);
	if (fd < 0 || !active || !is_tcp(domain, type, protocol))
		return fd;
	lock_tab(&old);
	e = new_entry(FD_CAND, domain);
	/* Without memory it stays untracked: plain TCP. */
	if (e && !set(fd, e))
		free_entry(e);
	unlock_tab(&old);
	return fd;
}

/* SO_DOMAIN of a socket we do not track: is it SDP? */
static bool untracked_sdp(int fd)
{
	int dom = 0, saved = errno;
	socklen_t len = sizeof(dom);
	bool ret;

	ret = real.getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) == 0 &&
	      dom == sdp_family;
	errno = saved;
	return ret;
}

EXPORT int setsockopt(int fd, int level, int name, const void *val,
		      socklen_t len)
{
	struct fdent *e;
	sigset_t old;
	int ret, err, other = -1;

	ensure_init();
	e = get(fd);
	if (!e || e->kind == FD_HIDDEN || e->kind == FD_EPOLL) {
		ret = real.setsockopt(fd, level, name, val, len);
		if (ret < 0 && errno == ENOPROTOOPT && emulated(level, name) &&
		    untracked_sdp(fd)) {
			logmsg(SDP_LOG_DEBUG, "fd %d: option %d/%d has no SDP meaning: accepted",
			       fd, level, name);
			return 0;
		}
		return ret;
	}

	lock_tab(&old);
	e = get(fd);
	if (e && e->kind == FD_LISTEN_BOTH && level == SOL_SOCKET &&
	    (name == SO_RCVTIMEO || name == SO_RCVTIMEO_OLD)) {
		/* Ours on the TCP listener: keep the program's for it. */
		if (!val || len < sizeof(struct timeval)) {
			unlock_tab(&old);
			errno = val ? EINVAL : EFAULT;
			return -1;
		}
		memcpy(&e->shadow->rcvtimeo, val, sizeof(struct timeval));
		/* SDP connections inherit it from the shadow. */
		if (!e->shadow->retired)
			real.setsockopt(e->shadow->fd, level, name, val, len);
		unlock_tab(&old);
		return 0;
	}
	ret = real.setsockopt(fd, level, name, val, len);
	err = errno;
	if (!e) {
		/* gone meanwhile */
	} else if (ret == 0) {
		record_opt(e, level, name, val, len);
		if (e->kind == FD_LISTEN_BOTH && !e->shadow->retired)
			other = e->shadow->fd;
		else if (e->kind == FD_CONNECTING)
			other = e->tcp_fd;
		if (other >= 0)
			real.setsockopt(other, level, name, val, len);
	} else if (err == ENOPROTOOPT && emulated(level, name) &&
		   (e->kind == FD_SDP || e->kind == FD_CONNECTING)) {
		record_opt(e, level, name, val, len);
		if (e->kind == FD_CONNECTING)
			real.setsockopt(e->tcp_fd, level, name, val, len);
		ret = 0;
	}
	unlock_tab(&old);
	errno = err;
	return ret;
}

/* getsockopt() of an option SDP does not have: the remembered value, or
 * a neutral default; -1 (ENOPROTOOPT) if there is none. */
static int emulated_get(int fd, struct fdent *e, int level, int name,
			void *val, socklen_t *len)
{
	const struct optrec *o = NULL;
	sigset_t old;
	int v;

	if (!val || !len) {
		errno = EFAULT;
		return -1;
	}
	if (level == IPPROTO_TCP && name == TCP_INFO) {
		struct tcp_info ti;
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);

		memset(&ti, 0, sizeof(ti));
		ti.tcpi_state = real.getpeername(fd, (void *)&ss, &sl) == 0 ?
				TCP_ESTABLISHED : TCP_CLOSE;
		if (*len > sizeof(ti))
			*len = sizeof(ti);
		memcpy(val, &ti, *len);
		return 0;
	}
	if (e) {
		lock_tab(&old);
		if (get(fd) == e) {
			o = find_opt(e, level, name);
			if (o) {
				if (*len > o->len)
					*len = o->len;
				memcpy(val, o->val, *len);
			}
		}
		unlock_tab(&old);
		if (o)
			return 0;
	}
	if (!emulated(level, name) || name == TCP_CONGESTION) {
		errno = ENOPROTOOPT;
		return -1;
	}
	v = level == IPPROTO_TCP && name == TCP_MAXSEG ? SDP_EMULATED_MSS : 0;
	if (*len > sizeof(v))
		*len = sizeof(v);
	memcpy(val, &v, *len);
	return 0;
}


EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct fdent *e;
	sigset_t old;
	int ret;

	ensure_init();
	e = get(fd);
	if (e && level == SOL_SOCKET && name == SO_ERROR &&
	    (e->kind == FD_CONNECTING || e->kind == FD_FAILED)) {
		settle(fd, 0);
		lock_tab(&old);
		e = get(fd);
		if (e && e->kind == FD_FAILED && val && len &&
		    *len >= sizeof(int)) {
			memcpy(val, &e->err, sizeof(int));
			*len = sizeof(int);
			/* Reported once, as SO_ERROR is; then plain TCP. */
			set(fd, NULL);
			free_entry(e);
			unlock_tab(&old);
			return 0;
		}
		if (e && e->kind == FD_CONNECTING && val && len &&
		    *len >= sizeof(int)) {
			/* Still in progress (over SDP, or TCP next). */
			unlock_tab(&old);
			memset(val, 0, sizeof(int));
			*len = sizeof(int);
			return 0;
		}
		unlock_tab(&old);
		return real.getsockopt(fd, level, name, val, len);
	}
	if (e && e->kind == FD_LISTEN_BOTH && level == SOL_SOCKET &&
	    (name == SO_RCVTIMEO || name == SO_RCVTIMEO_OLD) && val && len) {
		struct timeval tv;

		lock_tab(&old);
		e = get(fd);
		if (e && e->kind == FD_LISTEN_BOTH) {
			tv = e->shadow->rcvtimeo;
			unlock_tab(&old);
			if (*len > sizeof(tv))
				*len = sizeof(tv);
			memcpy(val, &tv, *len);
			return 0;
		}
		unlock_tab(&old);
	}
	ret = real.getsockopt(fd, level, name, val, len);
	if (ret == 0 && level == SOL_SOCKET && name == SO_DOMAIN && val &&
	    len && *len >= sizeof(int) && *(int *)val == sdp_family) {
		/* An SDP socket stands in for an AF_INET(6) one. */
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int dom = e && e->kind != FD_HIDDEN ? e->domain : AF_INET;

		if (!(e && e->kind != FD_HIDDEN) &&
		    real.getsockname(fd, (void *)&ss, &sl) == 0)
			dom = ss.ss_family;
		memcpy(val, &dom, sizeof(dom));
		return 0;
	}
	if (ret < 0 && errno == ENOPROTOOPT && level != SOL_SOCKET &&
	    (e ? e->kind == FD_SDP || e->kind == FD_CONNECTING :
		 untracked_sdp(fd)))
		return emulated_get(fd, e, level, name, val, len);
	return ret;
}

/* An AF_INET6 socket that SDP answers for with AF_INET: v4-mapped. */
static void fix_family(int fd, struct sockaddr *addr, socklen_t *len,
		       socklen_t room)
{
	struct sockaddr_in6 sin6;
	struct sockaddr_in sin;
	struct fdent *e = get(fd);

	if (!e || e->domain != AF_INET6 || addr->sa_family != AF_INET ||
	    (e->kind != FD_SDP && e->kind != FD_CONNECTING))
		return;
	memcpy(&sin, addr, sizeof(sin) < room ? sizeof(sin) : room);
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = sin.sin_port;
	if (sin.sin_addr.s_addr != htonl(INADDR_ANY)) {
		sin6.sin6_addr.s6_addr[10] = 0xff;
		sin6.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&sin6.sin6_addr.s6_addr[12], &sin.sin_addr, 4);
	}
	memcpy(addr, &sin6, sizeof(sin6) < room ? sizeof(sin6) : room);
	*len = sizeof(sin6);
}

/* getsockname() or getpeername() (@fn), the family fixed. */
static int get_name(int (*fn)(int, struct sockaddr *, socklen_t *), int fd,
		    struct sockaddr *addr, socklen_t *len)
{
	socklen_t room = len ? *len : 0;
	int ret;

	ret = fn(fd, addr, len);
	if (ret == 0 && addr && room)
		fix_family(fd, addr, len, room);
	return ret;
}

EXPORT int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	ensure_init();
	return get_name(real.getsockname, fd, addr, len);
}

EXPORT int getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	ensure_init();
	return get_name(real.getpeername, fd, addr, len);
}
