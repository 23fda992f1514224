// SPDX-License-Identifier: GPL-2.0
/*
 * libsdp.so, the LD_PRELOAD library, inside a guest with Soft-RoCE.
 *
 * Each test writes a rules file and runs this same program again as a
 * helper ("preload --helper NAME ARG") with LD_PRELOAD=libsdp/libsdp.so:
 * the helper is an ordinary TCP program (socket(AF_INET), bind, listen,
 * accept, connect, poll/select/epoll, dup, fork) that checks, from the
 * inside, what the library made of its sockets.  Whether a descriptor is
 * an SDP socket is told by its inode in /proc/net/sdp, since the library
 * makes SDP sockets look like TCP ones to the program, and whether its
 * connection is SDP's or the module's fallback to TCP by SDP_INFO.
 *
 * "both" clients are tested twice: with the module's own fallback, which
 * the library uses where the module has it, and with the library's
 * (LIBSDP_KERNEL_FALLBACK=0, what a module without it gets).  A helper may
 * open SDP sockets itself (family 27, which the library leaves alone) to
 * play a peer that speaks only SDP.
 *
 * What each helper checks would fail without the feature: a "both"
 * listener must accept connections from SDP-only and TCP-only clients
 * in every waiting style, a "both" client must end up on SDP when an SDP
 * listener exists and on TCP, quickly, when none does or the CM never
 * answers, options and descriptor flags must survive the conversion, the
 * library must stay out of sockets the rules do not select, and it must
 * keep programs working when the module is absent or the rules are bad.
 *
 * Over an iWARP device (sdp(7), "iWARP devices") a "both" server has no
 * SDP listener, its TCP listener holding the port, and a "both" client
 * makes no SDP attempt (SDP_NO_IWARP): it goes to TCP at once, reason
 * iwarp.  The client tests expect that there, and leave out the SDP-only
 * peer, which a "both" client cannot reach over iWARP; the tests of the
 * "both" server's SDP listener skip (tests/preload-tools checks that
 * such a server listens on TCP only).
 *
 * Real programs (iperf3, socat, nc) are driven by tests/preload-tools.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sdp.h>
#include <rdma/rdma_cma.h>

#include "net.h"
#include "tap.h"
#include "util.h"

#define RULES		"/tmp/preload-rules.conf"
#define HELPER_OUT	"/tmp/preload-helper.out"
#define WAIT_MS		10000
#define FB_SYSCTL	"/proc/sys/net/sdp/tcp_fallback"
#define FB_CACHE_SYSCTL	"/proc/sys/net/sdp/tcp_fallback_cache_s"

static char self[PATH_MAX];
static char library[PATH_MAX];

/* ------------------------------------------------------------------ */
/* The helper side: runs with the library preloaded.                   */

static const char *helper_name = "?";

static void __attribute__((noreturn, format(printf, 3, 4)))
hfail(int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "helper %s, line %d: H(%s) ", helper_name, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (errno %s)\n", strerrorname_np(errno) ?: "0");
	exit(1);
}

#define H(cond, ...)							\
	do {								\
		if (!(cond))						\
			hfail(__LINE__, #cond, __VA_ARGS__);		\
	} while (0)

/* An SDP socket (listed in /proc/net/sdp)... */
static bool is_sdp_socket(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && proc_net_sdp_has_inode(st.st_ino);
}

/* ... SDP_INFO of one; the transport 0 (SDP) and no reason if none. */
static void any_info_of(int fd, struct sdp_info *info)
{
	socklen_t len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	getsockopt(fd, SOL_SDP, SDP_INFO, info, &len);
}

/* ... whose bytes go over SDP: not fallen back to TCP. */
static bool is_sdp(int fd)
{
	struct sdp_info info;

	if (!is_sdp_socket(fd))
		return false;
	any_info_of(fd, &info);
	return info.sdpi_transport == SDP_TRANSPORT_SDP;
}

/* Does this helper run with the module's fallback (the default)? */
static bool kernel_fallback(void)
{
	const char *s = getenv("LIBSDP_KERNEL_FALLBACK");

	return !s || strcmp(s, "0");
}

/*
 * Why a "both" client's connection to a TCP-only peer goes to TCP: the
 * peer rejected the SDP attempt, or over iWARP none was made.
 */
static unsigned int both_tcp_reason(void)
{
	return test_device_iwarp() ? SDP_FB_IWARP : SDP_FB_REJECTED;
}

/*
 * A "both" client's connection to a TCP-only peer went to TCP through
 * the module's fallback, for @why, on the SDP socket (with the module's
 * fallback), or is a plain TCP socket (the library's).  "cached" stands
 * for "rejected" and "iwarp": a port an earlier test used may be in the
 * negative cache, which connect() looks at first.
 */
static void check_both_fallback(int fd, unsigned int why)
{
	struct sdp_info info;

	if (!kernel_fallback()) {
		H(!is_sdp_socket(fd), "the library's fallback left an SDP socket");
		return;
	}
	H(is_sdp_socket(fd), "not the module's fallback: a TCP socket");
	any_info_of(fd, &info);
	H(info.sdpi_transport == SDP_TRANSPORT_TCP &&
	  (info.sdpi_fallback_reason == why ||
	   ((why == SDP_FB_REJECTED || why == SDP_FB_IWARP) &&
	    info.sdpi_fallback_reason == SDP_FB_CACHED)),
	  "transport %u, reason %u; wanted tcp, reason %u",
	  info.sdpi_transport, info.sdpi_fallback_reason, why);
}

/* SDP sockets in state @state ("0A": LISTEN) on @port (-1: any), from
 * /proc/net/sdp. */
static int sdp_sockets_in(const char *state, int port)
{
	char line[512], want[8];
	FILE *f = fopen("/proc/net/sdp", "re");
	int n = 0;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), ":%04X", port);
	while (fgets(line, sizeof(line), f)) {
		char local[80], st[8];

		if (sscanf(line, "%79s %*s %7s", local, st) == 2 &&
		    (port < 0 || strstr(local, want)) && !strcmp(st, state))
			n++;
	}
	fclose(f);
	return n;
}

static int sdp_listeners(int port)
{
	return sdp_sockets_in("0A", port);
}

static struct sockaddr_in addr4(const char *a, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port) };

	inet_pton(AF_INET, a, &sin.sin_addr);
	return sin;
}

static int port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	H(getsockname(fd, (struct sockaddr *)&ss, &len) == 0, "getsockname");
	return sockaddr_port(&ss);
}

/* A listener of @family on @a:@port with @backlog. */
static int listener_of(int family, const char *a, int port, int backlog)
{
	struct sockaddr_in sin = addr4(a, port);
	int fd = socket(family, SOCK_STREAM, 0), one = 1;

	H(fd >= 0, "socket(%d)", family);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	H(bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0,
	  "bind(%d) %s:%d", family, a, port);
	H(listen(fd, backlog) == 0, "listen(%d)", family);
	return fd;
}

/* A program's TCP listener (what the library may shadow). */
static int tcp_listener(const char *a, int port)
{
	return listener_of(AF_INET, a, port, 16);
}

/* A listener that speaks only SDP (family 27: the library's own). */
static int sdp_only_listener(int port)
{
	return listener_of(AF_INET_SDP, TEST_ADDR(), port, 16);
}

static int connect_family(int family, const char *a, int port)
{
	struct sockaddr_in sin = addr4(a, port);
	int fd = socket(family, SOCK_STREAM, 0);

	H(fd >= 0, "socket(%d)", family);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* One byte each way between two connected sockets. */
static void ping(int a, int b)
{
	char c = 0;

	H(write(a, "p", 1) == 1, "write");
	H(wait_fd(b, POLLIN, WAIT_MS) & POLLIN, "no data");
	H(read(b, &c, 1) == 1 && c == 'p', "read");
	H(write(b, "q", 1) == 1, "write back");
	H(wait_fd(a, POLLIN, WAIT_MS) & POLLIN, "no reply");
	H(read(a, &c, 1) == 1 && c == 'q', "read back");
}

struct delayed {
	int family, port, delay_ms, fd;
};

static void *delayed_connect(void *arg)
{
	struct delayed *d = arg;

	usleep(d->delay_ms * 1000);
	d->fd = connect_family(d->family, TEST_ADDR(), d->port);
	return NULL;
}

/* Wait for the listener @l to be readable in the style @how. */
static void wait_listener(int l, const char *how, int epfd)
{
	if (!strcmp(how, "poll")) {
		struct pollfd p = { l, POLLIN, 0 };

		H(poll(&p, 1, WAIT_MS) == 1 && (p.revents & POLLIN),
		  "poll: revents %#x", p.revents);
	} else if (!strcmp(how, "select")) {
		fd_set r;
		struct timeval tv = { WAIT_MS / 1000, 0 };

		FD_ZERO(&r);
		FD_SET(l, &r);
		H(select(l + 1, &r, NULL, NULL, &tv) == 1 && FD_ISSET(l, &r),
		  "select");
		H(tv.tv_sec < WAIT_MS / 1000 || tv.tv_usec > 0,
		  "select did not update its timeout");
	} else if (!strncmp(how, "epoll", 5)) {
		struct epoll_event ev;

		H(epoll_wait(epfd, &ev, 1, WAIT_MS) == 1 &&
		  ev.data.u64 == 0xfeed0000ULL + l && (ev.events & EPOLLIN),
		  "epoll_wait: %#llx", (unsigned long long)ev.data.u64);
	}
}

/*
 * "both" server: a TCP listener gets an SDP shadow; accept() in the
 * style @how (block, poll, select, epoll, epoll-et) returns the
 * connections of an SDP-only and of a TCP-only client, each arriving
 * while the program already waits.
 */
static void h_accept(const char *how)
{
	int l = tcp_listener("0.0.0.0", 0), port = port_of(l), epfd = -1;
	bool block = !strcmp(how, "block");
	int got_sdp = 0, got_tcp = 0, i;
	struct delayed d[2] = {
		{ AF_INET_SDP, port, 300, -1 },
		{ AF_INET, port, 300, -1 },
	};

	H(sdp_listeners(port) == 1, "no SDP shadow listener on port %d", port);
	if (!block)
		set_nonblock(l, true);
	if (!strncmp(how, "epoll", 5)) {
		struct epoll_event ev = { EPOLLIN, { .u64 = 0xfeed0000ULL + l } };

		if (!strcmp(how, "epoll-et"))
			ev.events |= EPOLLET;
		epfd = epoll_create1(EPOLL_CLOEXEC);
		H(epoll_ctl(epfd, EPOLL_CTL_ADD, l, &ev) == 0, "epoll_ctl");
	}
	for (i = 0; i < 2; i++) {
		struct sockaddr_in peer;
		socklen_t plen = sizeof(peer);
		pthread_t t;
		int a;

		/* Nothing waits yet: a nonblocking accept must say so. */
		if (!block)
			H(accept(l, NULL, NULL) < 0 && errno == EAGAIN,
			  "accept with nothing pending");
		pthread_create(&t, NULL, delayed_connect, &d[i]);
		if (!block)
			wait_listener(l, how, epfd);
		a = accept(l, (struct sockaddr *)&peer, &plen);
		H(a >= 0, "accept (%s, %s client)", how,
		  i ? "tcp" : "sdp");
		pthread_join(t, NULL);
		H(d[i].fd >= 0, "client connect");
		H(peer.sin_family == AF_INET &&
		  peer.sin_addr.s_addr == addr4(TEST_ADDR(), 0).sin_addr.s_addr,
		  "accept's address");
		if (is_sdp(a))
			got_sdp++;
		else
			got_tcp++;
		H(is_sdp(a) == (i == 0), "connection %d over the wrong family", i);
		ping(d[i].fd, a);
		close(a);
		close(d[i].fd);
	}
	H(got_sdp == 1 && got_tcp == 1, "sdp %d tcp %d", got_sdp, got_tcp);
	close(l);
	H(sdp_listeners(port) == 0, "the shadow outlived its listener");
	if (epfd >= 0)
		close(epfd);
}

struct blocked_accept {
	int l, ret, err;
};

static void *blocked_accept(void *arg)
{
	struct blocked_accept *b = arg;

	b->ret = accept(b->l, NULL, NULL);
	b->err = errno;
	return NULL;
}

/*
 * dup(), dup2() and close() of a "both" listener share one shadow that
 * lives as long as the last descriptor; shutdown(SHUT_RD) wakes a
 * blocked accept() and retires the shadow.
 */
static void h_listener_dups(const char *arg)
{
	int l = tcp_listener("0.0.0.0", 0), port = port_of(l), l2, c, a;
	struct blocked_accept b;
	pthread_t t;

	(void)arg;
	l2 = dup(l);
	H(l2 >= 0, "dup");
	close(l);
	H(sdp_listeners(port) == 1, "the shadow went with the first close");
	c = connect_family(AF_INET_SDP, TEST_ADDR(), port);
	H(c >= 0, "sdp connect after close of the original");
	a = accept(l2, NULL, NULL);
	H(a >= 0 && is_sdp(a), "accept on the dup");
	close(a);
	close(c);

	H(dup2(l2, 50) == 50, "dup2");
	close(l2);
	c = connect_family(AF_INET, TEST_ADDR(), port);
	H(c >= 0, "tcp connect");
	a = accept(50, NULL, NULL);
	H(a >= 0 && !is_sdp(a), "tcp accept on the dup2 copy");
	close(a);
	close(c);

	/* A thread blocked in accept() wakes up on shutdown(). */
	b.l = 50;
	pthread_create(&t, NULL, blocked_accept, &b);
	usleep(200000);
	H(shutdown(50, SHUT_RD) == 0, "shutdown");
	pthread_join(t, NULL);
	H(b.ret < 0 && b.err == EINVAL, "accept after shutdown: %d %s",
	  b.ret, strerrorname_np(b.err) ?: "0");
	H(sdp_listeners(port) == 0, "shadow still listening after shutdown");
	close(50);
}

/*
 * Prefork: two processes block in accept() on one "both" listener.  A
 * TCP connection wakes both; the loser must not stay stuck in the TCP
 * accept(), or the SDP connection that follows is never accepted.
 */
static void h_prefork(const char *arg)
{
	int l = tcp_listener("0.0.0.0", 0), port = port_of(l), i, st;
	pid_t kids[2];
	int c[2];

	(void)arg;
	for (i = 0; i < 2; i++) {
		kids[i] = fork();
		H(kids[i] >= 0, "fork");
		if (kids[i] == 0) {
			int a = accept(l, NULL, NULL);
			char ch;

			if (a < 0 || read(a, &ch, 1) != 1)
				_exit(1);
			ch = is_sdp(a) ? 'S' : 'T';
			_exit(write(a, &ch, 1) == 1 ? 0 : 2);
		}
	}
	close(l);
	usleep(300000);		/* both children in accept() */
	c[0] = connect_family(AF_INET, TEST_ADDR(), port);
	H(c[0] >= 0, "tcp connect");
	usleep(500000);		/* the race for it is over */
	c[1] = connect_family(AF_INET_SDP, TEST_ADDR(), port);
	H(c[1] >= 0, "sdp connect");
	for (i = 0; i < 2; i++) {
		char ch = 0;

		H(write(c[i], "x", 1) == 1, "write");
		H(wait_fd(c[i], POLLIN, WAIT_MS) & POLLIN,
		  "connection %d (%s) not served", i, i ? "sdp" : "tcp");
		H(read(c[i], &ch, 1) == 1 && ch == (i ? 'S' : 'T'),
		  "answer '%c'", ch);
		close(c[i]);
	}
	for (i = 0; i < 2; i++)
		H(waitpid(kids[i], &st, 0) == kids[i] && WIFEXITED(st) &&
		  !WEXITSTATUS(st), "child %d status %#x", i, st);
}

/*
 * Fork after accept: the child serves the connection, the parent closes
 * its copy and accepts the next one (an SDP and then a TCP client).
 */
static void h_fork_after_accept(const char *arg)
{
	int l = tcp_listener("0.0.0.0", 0), port = port_of(l), i, st;

	(void)arg;
	for (i = 0; i < 2; i++) {
		int c = connect_family(i ? AF_INET : AF_INET_SDP, TEST_ADDR(),
				       port);
		int a = accept(l, NULL, NULL);
		pid_t kid;
		char ch = 0;

		H(c >= 0 && a >= 0, "connect/accept");
		H(is_sdp(a) == !i, "family of connection %d", i);
		kid = fork();
		H(kid >= 0, "fork");
		if (kid == 0) {
			close(l);
			if (read(a, &ch, 1) != 1)
				_exit(1);
			_exit(write(a, &ch, 1) == 1 ? 0 : 1);
		}
		close(a);
		H(write(c, "f", 1) == 1, "write");
		H(wait_fd(c, POLLIN, WAIT_MS) & POLLIN, "child did not answer");
		H(read(c, &ch, 1) == 1 && ch == 'f', "echo");
		H(waitpid(kid, &st, 0) == kid && WIFEXITED(st) &&
		  !WEXITSTATUS(st), "child status %#x", st);
		/* Closed in both processes now: end of stream. */
		H(wait_fd(c, POLLIN, WAIT_MS) & POLLIN, "no EOF");
		H(read(c, &ch, 1) == 0, "EOF after both closed");
		close(c);
	}
	close(l);
}

/* Wait for a nonblocking connect in the style @how; returns SO_ERROR. */
static int finish_connect(int c, const char *how, int epfd)
{
	socklen_t l = sizeof(int);
	int err = -1;

	if (!strcmp(how, "poll")) {
		struct pollfd p = { c, POLLOUT, 0 };

		H(poll(&p, 1, WAIT_MS) == 1, "poll");
	} else if (!strcmp(how, "select")) {
		fd_set w;
		struct timeval tv = { WAIT_MS / 1000, 0 };

		FD_ZERO(&w);
		FD_SET(c, &w);
		H(select(c + 1, NULL, &w, NULL, &tv) == 1 && FD_ISSET(c, &w),
		  "select");
	} else {
		struct epoll_event ev;

		H(epoll_wait(epfd, &ev, 1, WAIT_MS) == 1 &&
		  ev.data.u64 == 0xc0ffee, "epoll_wait");
	}
	H(getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &l) == 0, "SO_ERROR");
	return err;
}

/*
 * "both" client.  ARG is "WAY:PEER": WAY block, poll, select, epoll
 * (registered after connect) or epoll-early (before connect); PEER sdp
 * (an SDP-only listener), tcp (a TCP-only one) or none (nobody).
 */
static void h_connect(const char *arg)
{
	char how[16], peer[8];
	int l = -1, port, c, epfd = -1, err;
	struct sockaddr_in sin;
	long long t0, ms;
	bool block;

	H(sscanf(arg, "%15[^:]:%7s", how, peer) == 2, "arg");
	block = !strcmp(how, "block");
	if (!strcmp(peer, "sdp")) {
		l = sdp_only_listener(0);
		port = port_of(l);
	} else {
		/* TCP listener; for "none", its port with nobody on it. */
		l = tcp_listener(TEST_ADDR(), 0);
		port = port_of(l);
		if (!strcmp(peer, "none")) {
			close(l);
			l = -1;
		}
	}
	sin = addr4(TEST_ADDR(), port);
	c = socket(AF_INET, SOCK_STREAM | (block ? 0 : SOCK_NONBLOCK), 0);
	H(c >= 0, "socket");
	if (!block) {
		struct epoll_event ev = { EPOLLOUT, { .u64 = 0xc0ffee } };

		epfd = epoll_create1(0);
		if (!strcmp(how, "epoll-early"))
			H(epoll_ctl(epfd, EPOLL_CTL_ADD, c, &ev) == 0, "ctl");
	}
	t0 = now_ms();
	err = connect(c, (struct sockaddr *)&sin, sizeof(sin)) ? errno : 0;
	if (!block) {
		H(err == EINPROGRESS, "nonblocking connect: %s",
		  strerrorname_np(err) ?: "0");
		if (!strcmp(how, "epoll")) {
			struct epoll_event ev = { EPOLLOUT, { .u64 = 0xc0ffee } };

			H(epoll_ctl(epfd, EPOLL_CTL_ADD, c, &ev) == 0, "ctl");
		}
		err = finish_connect(c, how, epfd);
	}
	ms = now_ms() - t0;
	if (!strcmp(peer, "none")) {
		H(err == ECONNREFUSED, "connect to nobody: %s",
		  strerrorname_np(err) ?: "0");
	} else {
		int a;

		H(err == 0, "connect: %s", strerrorname_np(err) ?: "?");
		a = accept(l, NULL, NULL);
		H(a >= 0, "accept");
		H(is_sdp(c) == !strcmp(peer, "sdp"), "client over %s, wanted %s",
		  is_sdp(c) ? "sdp" : "tcp", peer);
		if (strcmp(peer, "sdp"))
			check_both_fallback(c, both_tcp_reason());
		H(!!(fcntl(c, F_GETFL) & O_NONBLOCK) == !block,
		  "O_NONBLOCK changed");
		if (!block)
			set_nonblock(c, false);
		ping(c, a);
		close(a);
	}
	/* No multi-second stall on the way to TCP. */
	H(ms < 1500, "connect took %lld ms", ms);
	fprintf(stderr, "connect %s to %s: %lld ms\n", how, peer, ms);
	close(c);
	if (l >= 0)
		close(l);
	if (epfd >= 0)
		close(epfd);
}

/*
 * The peer's CM never answers (a user-space rdma_cm listener that does
 * nothing, set up by the test): the SDP attempt must give up after
 * LIBSDP_CONNECT_TIMEOUT and the TCP listener on the same port serve.
 * ARG: "block:PORT" or "epoll:PORT".
 */
static void h_silent_peer(const char *arg)
{
	char how[16];
	int port, l, c, epfd = -1, err = 0, a;
	struct sockaddr_in sin;
	long long t0, ms;

	H(sscanf(arg, "%15[^:]:%d", how, &port) == 2, "arg");
	l = tcp_listener(TEST_ADDR(), port);
	sin = addr4(TEST_ADDR(), port);
	c = socket(AF_INET, SOCK_STREAM, 0);
	t0 = now_ms();
	if (!strcmp(how, "block")) {
		H(connect(c, (struct sockaddr *)&sin, sizeof(sin)) == 0,
		  "blocking connect");
	} else {
		struct epoll_event ev = { EPOLLOUT, { .u64 = 0xc0ffee } };

		set_nonblock(c, true);
		epfd = epoll_create1(0);
		H(epoll_ctl(epfd, EPOLL_CTL_ADD, c, &ev) == 0, "ctl");
		H(connect(c, (struct sockaddr *)&sin, sizeof(sin)) < 0 &&
		  errno == EINPROGRESS, "nonblocking connect");
		err = finish_connect(c, "epoll", epfd);
		set_nonblock(c, false);
	}
	ms = now_ms() - t0;
	H(err == 0, "connect: %s", strerrorname_np(err) ?: "?");
	a = accept(l, NULL, NULL);
	H(a >= 0 && !is_sdp(c), "not a TCP connection");
	check_both_fallback(c, SDP_FB_UNREACHABLE);
	ping(c, a);
	H(ms >= 300 && ms < 3000, "fell back after %lld ms", ms);
	fprintf(stderr, "silent CM, %s: TCP after %lld ms\n", how, ms);
}

/*
 * More "both" connects in progress in one epoll set than libsdp follows
 * on its stack (EPOLL_STACK_CONNECTS, 16): epoll_wait() alone must settle
 * every one of them.  ARG: "tcp" (a TCP-only listener: each SDP attempt
 * is refused and TCP takes over, and the refused attempt's event, with
 * EPOLLERR, must not reach the program) or "sdp" (an SDP-only listener).
 * Each connect must be reported once, writable and without error, and
 * carry a byte.
 */
#define MANY_CONNECTS	40

static void h_many_connects(const char *arg)
{
	bool sdp = !strcmp(arg, "sdp");
	int l, port, epfd, i, n, left = MANY_CONNECTS, c[MANY_CONNECTS];
	bool seen[MANY_CONNECTS] = { false };
	struct sockaddr_in sin;
	long long end;
	char ch;

	l = listener_of(sdp ? AF_INET_SDP : AF_INET, TEST_ADDR(), 0,
			2 * MANY_CONNECTS);
	port = port_of(l);
	sin = addr4(TEST_ADDR(), port);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	H(epfd >= 0, "epoll_create1");
	for (i = 0; i < MANY_CONNECTS; i++) {
		struct epoll_event ev = { EPOLLOUT, { .u64 = i } };

		c[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		H(c[i] >= 0, "socket %d", i);
		H(epoll_ctl(epfd, EPOLL_CTL_ADD, c[i], &ev) == 0, "ctl %d", i);
		H(connect(c[i], (struct sockaddr *)&sin, sizeof(sin)) < 0 &&
		  errno == EINPROGRESS, "connect %d", i);
	}
	/*
	 * Every SDP attempt has its answer (no SDP socket left in SYN_SENT)
	 * before the program looks, so that one epoll_wait() has to handle
	 * all of them, not a few at a time as the answers trickle in.
	 */
	end = now_ms() + WAIT_MS;
	while (sdp_sockets_in("02", -1) > 0) {
		H(now_ms() < end, "SDP attempts still in SYN_SENT");
		usleep(10000);
	}
	end = now_ms() + WAIT_MS;
	while (left > 0) {
		struct epoll_event evs[MANY_CONNECTS];
		long long ms = end - now_ms();

		n = epoll_wait(epfd, evs, MANY_CONNECTS, ms > 0 ? (int)ms : 0);
		H(n >= 0, "epoll_wait");
		H(n > 0 || ms > 0, "%d of %d connects never reported", left,
		  MANY_CONNECTS);
		for (int k = 0; k < n; k++) {
			unsigned long long x = evs[k].data.u64;
			int err = -1;
			socklen_t el = sizeof(err);

			H(x < MANY_CONNECTS && !seen[x], "event for %llu", x);
			H(!(evs[k].events & (EPOLLERR | EPOLLHUP)),
			  "connect %llu reported events %#x", x, evs[k].events);
			H(getsockopt(c[x], SOL_SOCKET, SO_ERROR, &err, &el) == 0 &&
			  err == 0, "connect %llu: SO_ERROR %s", x,
			  strerrorname_np(err) ?: "?");
			H(epoll_ctl(epfd, EPOLL_CTL_DEL, c[x], NULL) == 0,
			  "ctl del %llu", x);
			seen[x] = true;
			left--;
		}
	}
	for (i = 0; i < MANY_CONNECTS; i++) {
		H(is_sdp(c[i]) == sdp, "connect %d over %s", i,
		  is_sdp(c[i]) ? "sdp" : "tcp");
		if (!sdp)
			check_both_fallback(c[i], both_tcp_reason());
		set_nonblock(c[i], false);
		H(write(c[i], "m", 1) == 1, "write %d", i);
	}
	/* One byte on each accepted connection, whatever the order. */
	for (i = 0; i < MANY_CONNECTS; i++) {
		int a = accept(l, NULL, NULL);

		H(a >= 0, "accept %d", i);
		H(wait_fd(a, POLLIN, WAIT_MS) & POLLIN, "no byte on accepted %d",
		  i);
		H(read(a, &ch, 1) == 1 && ch == 'm', "read on accepted %d", i);
		close(a);
	}
	for (i = 0; i < MANY_CONNECTS; i++)
		close(c[i]);
	close(epfd);
	close(l);
	fprintf(stderr, "%d connects over %s settled in epoll_wait\n",
		MANY_CONNECTS, arg);
}

/*
 * "sdp" rules mean SDP only (an address without RDMA fails), and the
 * first rule that matches wins ("tcp" for 127.0.0.1 before it).
 */
static void h_sdp_only(const char *arg)
{
	int l = tcp_listener("127.0.0.1", 0), port = port_of(l), c;

	(void)arg;
	c = connect_family(AF_INET, "127.0.0.2", port);
	H(c < 0 && errno == ENETUNREACH, "sdp-only connect to 127.0.0.2");
	c = connect_family(AF_INET, "127.0.0.1", port);
	H(c >= 0 && !is_sdp(c), "127.0.0.1 must stay TCP (first rule)");
	close(c);
	close(l);
}

/* Sockets the rules do not select are left alone. */
static void h_untouched(const char *arg)
{
	int before = proc_net_sdp_count(), l, c, a, u, dom = 0;
	socklen_t len = sizeof(dom);

	(void)arg;
	l = tcp_listener(TEST_ADDR(), 0);
	c = connect_family(AF_INET, TEST_ADDR(), port_of(l));
	H(c >= 0, "connect");
	a = accept(l, NULL, NULL);
	H(a >= 0, "accept");
	H(!is_sdp(l) && !is_sdp(c) && !is_sdp(a), "SDP where no rule says so");
	H(proc_net_sdp_count() == before, "SDP sockets appeared");
	H(getsockopt(c, SOL_SOCKET, SO_DOMAIN, &dom, &len) == 0 &&
	  dom == AF_INET, "SO_DOMAIN");
	ping(c, a);
	u = socket(AF_INET, SOCK_DGRAM, 0);
	H(u >= 0 && !is_sdp(u), "udp");
	close(u);
	close(a);
	close(c);
	close(l);
}

/* Options, flags and names survive the conversion to SDP. */
static void h_options(const char *arg)
{
	int l = sdp_only_listener(0), port = port_of(l), c, a, v, one = 1;
	socklen_t len = sizeof(v);
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	struct sockaddr_storage ss;
	struct tcp_info ti;
	int idle = 30, zero = 0;

	(void)arg;
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	H(c >= 0, "socket");
	H(setsockopt(c, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) == 0, "ka");
	H(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0, "nd");
	H(setsockopt(c, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) == 0,
	  "keepidle");
	v = 256 * 1024;
	H(setsockopt(c, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) == 0, "rcvbuf");
	{
		struct sockaddr_in sin = addr4(TEST_ADDR(), port);

		H(connect(c, (struct sockaddr *)&sin, sizeof(sin)) < 0 &&
		  errno == EINPROGRESS, "O_NONBLOCK kept: EINPROGRESS");
	}
	H(wait_fd(c, POLLOUT, WAIT_MS) & POLLOUT, "connect");
	a = accept(l, NULL, NULL);
	H(a >= 0 && is_sdp(c), "not SDP");
	H(fcntl(c, F_GETFD) & FD_CLOEXEC, "FD_CLOEXEC lost");
	H(getsockopt(c, SOL_SOCKET, SO_KEEPALIVE, &v, &len) == 0 && v == 1,
	  "SO_KEEPALIVE %d", v);
	H(getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, &len) == 0 && v == 1,
	  "TCP_NODELAY %d", v);
	H(getsockopt(c, SOL_SOCKET, SO_RCVBUF, &v, &len) == 0 &&
	  v >= 256 * 1024, "SO_RCVBUF %d", v);
	H(getsockopt(c, IPPROTO_TCP, TCP_KEEPIDLE, &v, &len) == 0 && v == 30,
	  "TCP_KEEPIDLE %d (remembered)", v);
	H(setsockopt(c, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof(idle)) == 0,
	  "TCP_KEEPINTVL on SDP");
	H(getsockopt(c, SOL_SOCKET, SO_DOMAIN, &v, &len) == 0 && v == AF_INET,
	  "SO_DOMAIN %d", v);
	len = sizeof(ti);
	H(getsockopt(c, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 &&
	  ti.tcpi_state == TCP_ESTABLISHED, "TCP_INFO");
	len = sizeof(v);
	H(setsockopt(c, IPPROTO_TCP, TCP_MD5SIG, &v, sizeof(v)) < 0,
	  "options with a meaning are not faked");
	set_nonblock(c, false);
	ping(c, a);
	close(a);
	close(c);

	/* An AF_INET6 socket (dual-stack, as iperf3 makes them). */
	c = socket(AF_INET6, SOCK_STREAM, 0);
	H(setsockopt(c, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) == 0,
	  "V6ONLY");
	v = 0x20;
	H(setsockopt(c, IPPROTO_IPV6, IPV6_TCLASS, &v, sizeof(v)) == 0,
	  "IPV6_TCLASS");
	sin6.sin6_port = htons(port);
	H(inet_pton(AF_INET6, "::ffff:10.55.0.1", &sin6.sin6_addr) == 1, "a");
	H(connect(c, (struct sockaddr *)&sin6, sizeof(sin6)) == 0, "connect6");
	a = accept(l, NULL, NULL);
	H(a >= 0 && is_sdp(c), "v6 not SDP");
	len = sizeof(ss);
	H(getsockname(c, (struct sockaddr *)&ss, &len) == 0 &&
	  ss.ss_family == AF_INET6, "getsockname family %d", ss.ss_family);
	len = sizeof(ss);
	H(getpeername(c, (struct sockaddr *)&ss, &len) == 0 &&
	  ss.ss_family == AF_INET6 &&
	  sockaddr_port(&ss) == port, "getpeername");
	len = sizeof(v);
	H(getsockopt(c, IPPROTO_IPV6, IPV6_V6ONLY, &v, &len) == 0 && v == 0,
	  "IPV6_V6ONLY");
	/* Carried over to the SDP socket, whose traffic class it sets. */
	H(getsockopt(c, IPPROTO_IPV6, IPV6_TCLASS, &v, &len) == 0 &&
	  v == 0x20, "IPV6_TCLASS %#x", v);
	ping(c, a);
	close(a);
	close(c);
	close(l);
}

/* dup2() of an SDP socket onto standard input and output. */
static void h_dup2_stdio(const char *arg)
{
	int l = sdp_only_listener(0), c, a;
	char buf[8] = "";

	(void)arg;
	c = connect_family(AF_INET, TEST_ADDR(), port_of(l));
	H(c >= 0 && is_sdp(c), "connect");
	a = accept(l, NULL, NULL);
	H(a >= 0, "accept");
	H(dup2(c, 0) == 0 && dup2(c, 1) == 1, "dup2");
	close(c);
	H(is_sdp(0) && is_sdp(1), "stdin/stdout are not the SDP socket");
	H(write(1, "hi\n", 3) == 3, "write stdout");
	H(read(a, buf, 3) == 3 && !memcmp(buf, "hi\n", 3), "peer read");
	H(write(a, "yo", 2) == 2, "peer write");
	H(read(0, buf, 2) == 2 && !memcmp(buf, "yo", 2), "read stdin");
	H(close(0) == 0 && close(1) == 0, "close");
	H(read(a, buf, 1) == 0, "EOF after the last copy closed");
	close(a);
	close(l);
}

/* The descriptor of the SDP shadow of listener @l (an SDP listener
 * on @l's port that the program did not open), or -1. */
static int find_shadow(int l, int port)
{
	int fd;

	for (fd = 3; fd < 1024; fd++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int dom = 0, acc = 0;
		socklen_t dl = sizeof(dom), al = sizeof(acc);

		if (fd == l || getsockname(fd, (struct sockaddr *)&ss, &len) ||
		    sockaddr_port(&ss) != port)
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) == 0 &&
		    acc && getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &dl) == 0 &&
		    is_sdp(fd))
			return fd;
	}
	return -1;
}

static void sdp_accept_works(int l, int port)
{
	int c = connect_family(AF_INET_SDP, TEST_ADDR(), port), a;

	H(c >= 0, "sdp connect");
	a = accept(l, NULL, NULL);
	H(a >= 0 && is_sdp(a), "accept");
	close(a);
	close(c);
}

/*
 * The program cannot close the library's descriptors by accident:
 * close() says EBADF, close_range() spares them, dup2() onto one moves
 * it out of the way.
 */
static void h_hidden(const char *arg)
{
	int l = tcp_listener("0.0.0.0", 0), port = port_of(l), sh, junk;

	(void)arg;
	sh = find_shadow(l, port);
	H(sh >= 0, "no shadow descriptor");
	H(fcntl(sh, F_GETFD) & FD_CLOEXEC, "the shadow is inherited by exec");
	H(close(sh) < 0 && errno == EBADF, "close() of the shadow");
	sdp_accept_works(l, port);
	H(close_range(l + 1, ~0U, 0) == 0, "close_range");
	H(sdp_listeners(port) == 1, "close_range closed the shadow");
	sdp_accept_works(l, port);
	junk = socket(AF_INET, SOCK_DGRAM, 0);
	H(dup2(junk, sh) == sh, "dup2 onto the shadow's number");
	close(junk);
	H(sdp_listeners(port) == 1, "dup2 closed the shadow");
	sdp_accept_works(l, port);
	H(close(sh) == 0, "the program's own descriptor there");
	close(l);
	H(sdp_listeners(port) == 0, "the moved shadow outlived its listener");
}

/* Threads creating, connecting, accepting and closing at once. */
struct stress {
	int port, fails;
};

static void *stress_client(void *arg)
{
	struct stress *s = arg;
	int i;

	for (i = 0; i < 8; i++) {
		int c = connect_family(AF_INET, TEST_ADDR(), s->port);
		char ch = 0;

		/* Over iWARP "both" is TCP on both sides. */
		if (c < 0 || is_sdp(c) == test_device_iwarp() ||
		    write(c, "s", 1) != 1 ||
		    read(c, &ch, 1) != 1 || ch != 's')
			s->fails++;
		if (c >= 0)
			close(c);
	}
	return NULL;
}

static void *stress_server(void *arg)
{
	int l = *(int *)arg;
	char ch;

	for (;;) {
		int a = accept(l, NULL, NULL);

		if (a < 0)
			return NULL;
		if (read(a, &ch, 1) == 1 && write(a, &ch, 1) == 1) {
			/* served */
		}
		close(a);
	}
}

static void h_threads(const char *arg)
{
	int l = tcp_listener("0.0.0.0", 0), i;
	struct stress s[4];
	pthread_t srv[2], cli[4];

	(void)arg;
	for (i = 0; i < 2; i++)
		pthread_create(&srv[i], NULL, stress_server, &l);
	for (i = 0; i < 4; i++) {
		s[i] = (struct stress){ port_of(l), 0 };
		pthread_create(&cli[i], NULL, stress_client, &s[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(cli[i], NULL);
		H(!s[i].fails, "client %d: %d failures", i, s[i].fails);
	}
	shutdown(l, SHUT_RD);
	for (i = 0; i < 2; i++)
		pthread_join(srv[i], NULL);
	close(l);
}

/* Without the module, or with bad rules: plain TCP, and it works. */
static void h_plain_tcp(const char *arg)
{
	int l = tcp_listener("127.0.0.1", 0), c, a;

	(void)arg;
	c = connect_family(AF_INET, "127.0.0.1", port_of(l));
	H(c >= 0, "connect");
	a = accept(l, NULL, NULL);
	H(a >= 0 && !is_sdp(a) && !is_sdp(c), "accept");
	ping(c, a);
	close(a);
	close(c);
	close(l);
}

static const struct {
	const char *name;
	void (*fn)(const char *arg);
} helpers[] = {
	{ "accept", h_accept },
	{ "listener_dups", h_listener_dups },
	{ "prefork", h_prefork },
	{ "fork_after_accept", h_fork_after_accept },
	{ "connect", h_connect },
	{ "silent_peer", h_silent_peer },
	{ "many_connects", h_many_connects },
	{ "sdp_only", h_sdp_only },
	{ "untouched", h_untouched },
	{ "options", h_options },
	{ "dup2_stdio", h_dup2_stdio },
	{ "hidden", h_hidden },
	{ "threads", h_threads },
	{ "plain_tcp", h_plain_tcp },
};

static int helper_main(const char *name, const char *arg)
{
	size_t i;

	helper_name = name;
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++) {
		if (!strcmp(helpers[i].name, name)) {
			helpers[i].fn(arg);
			return 0;
		}
	}
	fprintf(stderr, "no helper %s\n", name);
	return 2;
}

/* ------------------------------------------------------------------ */
/* The test side: not preloaded.                                        */

/*
 * Run helper @name with @arg under the library with @rules (NULL: keep
 * the file as it is); @env ("NAME=value", several separated by spaces,
 * or NULL) is added.  Its output
 * goes to @out.  Returns its exit status (-1: killed or not run).
 */
static void write_rules(const char *rules)
{
	int fd = open(RULES, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	CHECK(fd >= 0 && write(fd, rules, strlen(rules)) ==
	      (ssize_t)strlen(rules), "cannot write %s", RULES);
	close(fd);
}

static int helper(const char *rules, const char *env, const char *name,
		  const char *arg, char *out, size_t size)
{
	pid_t pid;
	int st, fd;

	if (rules)
		write_rules(rules);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		fd = open(HELPER_OUT, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("LD_PRELOAD", library, 1);
		setenv("LIBSDP_CONFIG_FILE", RULES, 1);
		if (env) {
			char *vars = strdup(env), *v, *save;

			for (v = strtok_r(vars, " ", &save); v;
			     v = strtok_r(NULL, " ", &save))
				putenv(v);
		}
		execl(self, self, "--helper", name, arg ? arg : "", NULL);
		_exit(127);
	}
	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	out[0] = '\0';
	read_file(HELPER_OUT, out, size);
	if (out[0])
		tap_diag("helper %s %s: %s", name, arg ? arg : "", out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define RUN_HELPER(rules, env, name, arg)				\
	do {								\
		const char *__arg = (arg);				\
		char __out[4096];					\
		int __st = helper(rules, env, name, __arg, __out,	\
				  sizeof(__out));			\
		CHECK(__st == 0, "helper %s %s failed (%d)", name,	\
		      __arg ? __arg : "", __st);			\
	} while (0)

static const char both_server[] =
	"log min-level 7 destination stderr\n"
	"use both server * *:*\n";
static const char both_client[] =
	"log min-level 7 destination stderr\n"
	"use both client * *:*\n";

/* The tests of a "both" server's SDP listener: none over iWARP. */
static void need_both_listener(void)
{
	if (test_device_iwarp())
		tap_skip("over iWARP a \"both\" server listens on TCP only (sdp(7))");
}

static void test_accept_blocking(void)
{
	need_both_listener();
	RUN_HELPER(both_server, NULL, "accept", "block");
}

static void test_accept_poll(void)
{
	need_both_listener();
	RUN_HELPER(both_server, NULL, "accept", "poll");
}

static void test_accept_select(void)
{
	need_both_listener();
	RUN_HELPER(both_server, NULL, "accept", "select");
}

static void test_accept_epoll(void)
{
	need_both_listener();
	RUN_HELPER(both_server, NULL, "accept", "epoll");
	RUN_HELPER(both_server, NULL, "accept", "epoll-et");
}

static void test_listener_dup_close_shutdown(void)
{
	need_both_listener();
	RUN_HELPER(both_server, NULL, "listener_dups", NULL);
}

static void test_prefork_accept(void)
{
	need_both_listener();
	RUN_HELPER(both_server, NULL, "prefork", NULL);
}

static void test_fork_after_accept(void)
{
	need_both_listener();
	RUN_HELPER(both_server, NULL, "fork_after_accept", NULL);
}

/* The module's fallback (the default), then the library's. */
static const char *const both_modes[] = { NULL, "LIBSDP_KERNEL_FALLBACK=0" };

static void test_connect_both_blocking(void)
{
	bool iwarp = test_device_iwarp();
	long long rejected, at_once;
	size_t m;

	/* Over iWARP the negative cache may answer first (see above). */

	for (m = 0; m < 2; m++) {
		if (iwarp)
			write_rules(both_client);
		else
			RUN_HELPER(both_client, both_modes[m], "connect", "block:sdp");
		rejected = sdp_stat("FallbackRejected");
		at_once = sdp_stat("FallbackIwarp") + sdp_stat("FallbackCached");
		RUN_HELPER(NULL, both_modes[m], "connect", "block:tcp");
		/*
		 * One SDP attempt, the module's, not one of each; over iWARP
		 * none, and the module's fallback at once.
		 */
		CHECK(sdp_stat("FallbackRejected") - rejected == (!m && !iwarp),
		      "FallbackRejected +%lld with %s",
		      sdp_stat("FallbackRejected") - rejected,
		      both_modes[m] ?: "the module's fallback");
		if (iwarp)
			CHECK(sdp_stat("FallbackIwarp") + sdp_stat("FallbackCached") -
			      at_once == !m, "FallbackIwarp and FallbackCached +%lld with %s",
			      sdp_stat("FallbackIwarp") + sdp_stat("FallbackCached") -
			      at_once, both_modes[m] ?: "the module's fallback");
		else
			CHECK(sdp_stat("FallbackIwarp") == at_once - sdp_stat("FallbackCached"),
			      "FallbackIwarp moved over %s", TEST_IBDEV());
		RUN_HELPER(NULL, both_modes[m], "connect", "block:none");
	}
}

static void test_connect_both_nonblocking(void)
{
	static const char *const ways[] = { "poll", "select", "epoll",
					    "epoll-early" };
	static const char *const peers[] = { "sdp", "tcp", "none" };
	char arg[32];
	size_t i, j, m;

	write_rules(both_client);
	for (m = 0; m < 2; m++)
		for (i = 0; i < 4; i++)
			for (j = 0; j < 3; j++) {
				/* Not over iWARP: see the top of the file. */
				if (!j && test_device_iwarp())
					continue;
				snprintf(arg, sizeof(arg), "%s:%s", ways[i],
					 peers[j]);
				RUN_HELPER(NULL, both_modes[m], "connect", arg);
			}
}

/*
 * The RDMA CM of the "peer" takes the connect request and never answers
 * (a librdmacm listener that reads no events); the SDP attempt must time
 * out on the library's clock (LIBSDP_CONNECT_TIMEOUT, given to the
 * module as SDP_TCP_FALLBACK_TIMEOUT, or its own) and fall back.  The
 * negative cache is off, so that each connect() meets the silent CM.
 */
static void test_connect_both_silent_cm(void)
{
	struct rdma_event_channel *ec = rdma_create_event_channel();
	struct sockaddr_storage a;
	struct rdma_cm_id *id;
	char arg[32], env[96];
	size_t m;
	int port;

	if (test_device_iwarp())
		tap_skip("a \"both\" client makes no SDP attempt over iWARP (SDP_NO_IWARP)");
	CHECK(ec, "rdma_create_event_channel: %s", strerror(errno));
	CHECK(rdma_create_id(ec, &id, NULL, RDMA_PS_TCP) == 0,
	      "rdma_create_id: %s", strerror(errno));
	test_sockaddr(&a, 0);
	CHECK(rdma_bind_addr(id, (struct sockaddr *)&a) == 0, "bind: %s",
	      strerror(errno));
	CHECK(rdma_listen(id, 4) == 0, "rdma_listen: %s", strerror(errno));
	port = ntohs(rdma_get_src_port(id));

	CHECK(write_file(FB_CACHE_SYSCTL, "0") == 0, "write %s",
	      FB_CACHE_SYSCTL);
	write_rules(both_client);
	for (m = 0; m < 2; m++) {
		snprintf(env, sizeof(env), "LIBSDP_CONNECT_TIMEOUT=400 %s",
			 both_modes[m] ?: "");
		snprintf(arg, sizeof(arg), "block:%d", port);
		RUN_HELPER(NULL, env, "silent_peer", arg);
		snprintf(arg, sizeof(arg), "epoll:%d", port);
		RUN_HELPER(NULL, env, "silent_peer", arg);
	}
	CHECK(write_file(FB_CACHE_SYSCTL, "60") == 0, "write %s",
	      FB_CACHE_SYSCTL);

	/* Reject what came in, then let go. */
	{
		struct rdma_cm_event *ev;
		int fl = fcntl(ec->fd, F_GETFL);

		fcntl(ec->fd, F_SETFL, fl | O_NONBLOCK);
		while (rdma_get_cm_event(ec, &ev) == 0) {
			struct rdma_cm_id *child = ev->id;
			bool req = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST;

			if (req)
				rdma_reject(child, NULL, 0);
			rdma_ack_cm_event(ev);
			if (req)
				rdma_destroy_id(child);
		}
	}
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ec);
}

/* More connects in progress in one epoll set than libsdp keeps on its stack. */
static void test_connect_both_many_in_epoll(void)
{
	char env[96];
	size_t m;

	write_rules(both_client);
	for (m = 0; m < 2; m++) {
		RUN_HELPER(NULL, both_modes[m], "many_connects", "tcp");
		if (test_device_iwarp())
			continue;	/* see the top of the file */
		/* 40 SDP connects at once may take the slow guest over 1 s. */
		snprintf(env, sizeof(env), "LIBSDP_CONNECT_TIMEOUT=8000 %s",
			 both_modes[m] ?: "");
		RUN_HELPER(NULL, env, "many_connects", "sdp");
	}
}

/*
 * "sdp" means SDP only, also where net.sdp.tcp_fallback would let the
 * module fall back: the rules decide.
 */
static void test_sdp_rule_means_sdp_only(void)
{
	RUN_HELPER("use tcp client * 127.0.0.1:*\n"
		   "use sdp client * *:*\n"
		   "use sdp server * 10.55.0.1:*\n", NULL, "sdp_only", NULL);
	CHECK(write_file(FB_SYSCTL, "1") == 0, "write %s", FB_SYSCTL);
	RUN_HELPER(NULL, NULL, "sdp_only", NULL);
	CHECK(write_file(FB_SYSCTL, "0") == 0, "write %s", FB_SYSCTL);
}

static void test_unselected_sockets_untouched(void)
{
	RUN_HELPER("use both server * *:1\n"
		   "use both client * 192.0.2.0/24:*\n"
		   "use sdp client other-program *:*\n", NULL, "untouched",
		   NULL);
}

static void test_options_survive(void)
{
	RUN_HELPER("use sdp client * *:*\n", NULL, "options", NULL);
}

static void test_dup2_onto_stdio(void)
{
	RUN_HELPER("use sdp client * *:*\n", NULL, "dup2_stdio", NULL);
}

static void test_hidden_descriptors(void)
{
	need_both_listener();
	RUN_HELPER(both_server, NULL, "hidden", NULL);
}

static void test_threads(void)
{
	RUN_HELPER("use both server * *:*\nuse both client * *:*\n", NULL,
		   "threads", NULL);
}

/* A malformed rules file: a message naming file and line, then TCP. */
static void test_bad_rules_disable(void)
{
	char out[4096];

	CHECK(helper("use sdp server * *:*\n"
		     "use sdp client * *:99999\n", NULL, "plain_tcp", NULL,
		     out, sizeof(out)) == 0, "the program failed");
	CHECK(strstr(out, RULES ":2: bad port '99999'"), "no message: %s",
	      out);
	CHECK(strstr(out, "libsdp disabled"), "not disabled: %s", out);
}

/*
 * Without the module (unloaded, and autoloading disabled) a program
 * under "sdp" rules still works over TCP, and is told why once.
 */
static void test_module_absent(void)
{
	char out[4096], saved[256] = "";
	int fd, st;

	TAP_SKIP_IF_HOST("sets kernel.modprobe to /bin/true (no module autoloads on the host meanwhile) and unloads sdp");
	CHECK(read_file("/proc/sys/kernel/modprobe", saved, sizeof(saved)) == 0,
	      "modprobe path");
	fd = open("/proc/sys/kernel/modprobe", O_WRONLY);
	CHECK(fd >= 0 && write(fd, "/bin/true", 9) == 9, "set modprobe");
	close(fd);
	CHECK(sdp_unload(10000) == 0, "cannot unload sdp");
	st = helper("log min-level 8\n"
		    "use sdp server * *:*\nuse sdp client * *:*\n", NULL,
		    "plain_tcp", NULL, out, sizeof(out));
	fd = open("/proc/sys/kernel/modprobe", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, saved, strlen(saved)) < 0)
			tap_diag("cannot restore modprobe");
		close(fd);
	}
	CHECK(sdp_ensure_loaded() == 0, "cannot reload sdp");
	CHECK(st == 0, "the program failed without the module");
	CHECK(strstr(out, "is the sdp module loaded?"), "no warning: %s", out);
}

static const struct tap_test tests[] = {
	TAP_TEST(test_accept_blocking),
	TAP_TEST(test_accept_poll),
	TAP_TEST(test_accept_select),
	TAP_TEST(test_accept_epoll),
	TAP_TEST(test_listener_dup_close_shutdown),
	TAP_TEST(test_prefork_accept),
	TAP_TEST(test_fork_after_accept),
	TAP_TEST(test_connect_both_blocking),
	TAP_TEST(test_connect_both_nonblocking),
	TAP_TEST(test_connect_both_silent_cm),
	TAP_TEST(test_connect_both_many_in_epoll),
	TAP_TEST(test_sdp_rule_means_sdp_only),
	TAP_TEST(test_unselected_sockets_untouched),
	TAP_TEST(test_options_survive),
	TAP_TEST(test_dup2_onto_stdio),
	TAP_TEST(test_hidden_descriptors),
	TAP_TEST(test_threads),
	TAP_TEST(test_bad_rules_disable),
	TAP_TEST(test_module_absent),
};

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "--helper"))
		return helper_main(argv[2], argc > 3 ? argv[3] : "");
	if (!realpath("/proc/self/exe", self) ||
	    !realpath("libsdp/libsdp.so", library)) {
		/* run from the repository: libsdp/libsdp.so must be built */
		printf("1..0 # SKIP libsdp/libsdp.so not found (run from the repository after make)\n");
		return 0;
	}
	return tap_main(tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
