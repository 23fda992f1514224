// SPDX-License-Identifier: GPL-2.0
/*
 * In-kernel fallback to TCP (src/sdp_fallback.c): an SDP socket whose
 * connection cannot be made over SDP carries on over TCP when the policy
 * allows (SDP_TCP_FALLBACK, net.sdp.tcp_fallback), on the same
 * descriptor, with the reason on record; without it, connect() fails as
 * before.  The peer here is mostly a plain TCP listener (no SDP listener
 * on its port): the SDP attempt is rejected.  The other reasons come from
 * scratch devices (an address without an RDMA device, one nobody answers
 * ARP for, one whose MTU is too small for RoCE) and from an RDMA CM
 * listener that never answers.  On a real host (host mode) the tests that
 * need scratch devices, a peer namespace, a cgroup or a host sysctl skip.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/sdp.h>
#include <rdma/rdma_cma.h>

#include "net.h"
#include "ops.h"
#include "tap.h"
#include "util.h"

#define FB_SYSCTL	"/proc/sys/net/sdp/tcp_fallback"
#define FB_CACHE_SYSCTL	"/proc/sys/net/sdp/tcp_fallback_cache_s"
#define FB_TIMEOUT_SYSCTL "/proc/sys/net/sdp/tcp_fallback_timeout_ms"
#define RESOLVE_SYSCTL	"/proc/sys/net/sdp/resolve_timeout_ms"

static bool cache_lists(const struct sockaddr_storage *addr, int reason,
			bool say);

/*
 * A plain TCP listener on the test address; its address in @addr.  Not
 * on a port an earlier test left in the negative cache: a connect() to
 * it would not try SDP.
 */
static int tcp_listener(struct sockaddr_storage *addr)
{
	int fd, tries = 0;

	do {
		socklen_t len = test_sockaddr(addr, 0);

		if (tries)
			close(fd);
		fd = socket(addr->ss_family, SOCK_STREAM, 0);
		CHECK(fd >= 0, "socket: %s", strerror(errno));
		sockopt_set(fd, SOL_SOCKET, SO_REUSEADDR, 1);
		CHECK_OK(bind(fd, (struct sockaddr *)addr, len));
		CHECK_OK(listen(fd, 8));
		local_addr(fd, addr);
	} while (cache_lists(addr, -1, false) && ++tries < 20);
	return fd;
}

/* An SDP socket with SDP_TCP_FALLBACK @on (-1: left to the sysctl). */
static int sdp_socket(int on, int flags)
{
	int fd = socket(AF_INET_SDP, SOCK_STREAM | flags, 0);

	CHECK(fd >= 0, "socket(AF_INET_SDP): %s", strerror(errno));
	if (on >= 0)
		sockopt_set(fd, SOL_SDP, SDP_TCP_FALLBACK, on);
	return fd;
}

/* @fd uses TCP, fallen back for @why; SDP if @why is SDP_FB_NONE. */
static void check_fallen_back(int fd, unsigned int why)
{
	struct sdp_info info;

	info = sdp_info_of(fd);
	CHECK(info.sdpi_transport ==
	      (why ? SDP_TRANSPORT_TCP : SDP_TRANSPORT_SDP),
	      "transport %u, reason %u", info.sdpi_transport,
	      info.sdpi_fallback_reason);
	CHECK(info.sdpi_fallback_reason == why, "reason %u, not %u",
	      info.sdpi_fallback_reason, why);
}

/* @n bytes each way between @a and @b, every byte checked. */
static void exchange(int a, int b, size_t n)
{
	int ends[2][2] = { { a, b }, { b, a } }, i;
	char *buf = xmalloc(n);

	for (i = 0; i < 2; i++) {
		pattern_fill(buf, n, 61 + i, 0);
		CHECK(write_all(ends[i][0], buf, n) == (ssize_t)n,
		      "write: %s", strerror(errno));
		memset(buf, 0, n);
		CHECK(read_all(ends[i][1], buf, n) == (ssize_t)n, "read: %s",
		      strerror(errno));
		CHECK(pattern_check(buf, n, 61 + i, 0) < 0,
		      "wrong bytes, direction %d", i);
	}
	free(buf);
}

/*
 * What a plain TCP listener makes of an SDP attempt on its port.  Over
 * InfiniBand and RoCE the host's RDMA CM rejects it (no SDP listener on
 * the port): reason rejected, at once, and ECONNREFUSED without
 * fallback.  Over iWARP (sdp(7), "iWARP devices") the request is the
 * first bytes of a TCP connection of the iWARP CM's own, which the
 * listener accepts and never answers: the attempt is given up after the
 * fallback timeout (reason unreachable), or fails with ETIMEDOUT
 * without fallback, and the listener's accept queue holds that
 * connection before the fallback's (tcp_peer_accept()).
 */
static unsigned int tcp_peer_reason(void)
{
	return test_device_iwarp() ? SDP_FB_UNREACHABLE : SDP_FB_REJECTED;
}

static const char *tcp_peer_counter(void)
{
	return test_device_iwarp() ? "FallbackUnreachable" : "FallbackRejected";
}

static int tcp_peer_errno(void)
{
	return test_device_iwarp() ? ETIMEDOUT : ECONNREFUSED;
}

/* sdpstat's Transport column for a socket fallen back for @why. */
static const char *tcp_transport_name(unsigned int why)
{
	return why == SDP_FB_UNREACHABLE ? "tcp:unreachable" : "tcp:rejected";
}

/* The iWARP CM's connections that tcp_peer_accept() passed over. */
static int iwarp_requests;

/*
 * accept() on a plain TCP listener that SDP attempts may have reached.
 * Over iWARP a connection whose first bytes are an MPA request's key
 * (RFC 5044, "MPA ID Req Frame") is the iWARP CM's, whose request
 * arrived as data: counted, closed, and the next one taken.  (It is
 * queued before the fallback's own connection, which comes only once
 * the attempt was given up, long after the request was sent.)
 */
static int tcp_peer_accept(int l)
{
	static const char key[] = "MPA ID Req Frame";
	char buf[sizeof(key) - 1];
	int s;

	for (;;) {
		s = net_accept(l, WAIT_MS);
		if (!test_device_iwarp() ||
		    recv(s, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT) !=
		    (ssize_t)sizeof(buf) || memcmp(buf, key, sizeof(buf)))
			return s;
		iwarp_requests++;
		close(s);
	}
}

/*
 * Over iWARP an SDP listener holds the TCP port of its number, which a
 * listener with fallback on needs for its TCP socket as well (sdp(7)):
 * its listen() fails with EADDRINUSE, bound to port 0 or not bound.
 */
static void check_iwarp_fb_listen_refused(void)
{
	struct sockaddr_storage addr;
	socklen_t len;
	int i, l;

	for (i = 0; i < 2; i++) {
		l = socket(AF_INET_SDP, SOCK_STREAM, 0);
		CHECK(l >= 0, "socket(AF_INET_SDP): %s", strerror(errno));
		sockopt_set(l, SOL_SDP, SDP_TCP_FALLBACK, 1);
		len = test_sockaddr(&addr, 0);
		if (!i)
			CHECK_OK(bind(l, (struct sockaddr *)&addr, len));
		errno = 0;
		CHECK(listen(l, 8) == -1 && errno == EADDRINUSE,
		      "listen (%s) with fallback on over iWARP: %s, not EADDRINUSE",
		      i ? "not bound" : "bound to port 0",
		      errno ? strerror(errno) : "listening");
		close(l);
	}
}

/*
 * Off (the default): connect() to a host port without an SDP listener
 * fails with ECONNREFUSED (over iWARP ETIMEDOUT: tcp_peer_errno()), as
 * before fallback existed; the option reads 0 and takes only 0 and 1.
 */
static void test_fallback_off(void)
{
	struct sockaddr_storage addr;
	int l = tcp_listener(&addr), fd = sdp_socket(-1, 0);
	socklen_t len = sizeof(int);
	int v = -1;

	CHECK_OK(getsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK, &v, &len));
	CHECK(v == 0, "SDP_TCP_FALLBACK reads %d by default", v);
	v = 2;
	CHECK(setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK, &v, sizeof(v)) == -1 &&
	      errno == EINVAL, "SDP_TCP_FALLBACK 2 was taken");
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == -1 &&
	      errno == tcp_peer_errno(), "connect: %s, not %s",
	      strerror(errno), errname(tcp_peer_errno()));
	close(fd);
	close(l);
}

/*
 * On: a blocking connect() to a TCP-only peer succeeds over TCP, on the
 * same descriptor; both ways carry data; the names are the connection's;
 * SDP_INFO, TCP_INFO and the counters say what happened; close() gives
 * the peer EOF.  Over iWARP the listener got the iWARP CM's connection
 * first, with the request in it.
 */
static void test_fallback_rejected(void)
{
	struct sockaddr_storage addr, peer, mine, theirs;
	struct stats before, after;
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	int l = tcp_listener(&addr), fd = sdp_socket(1, 0), s;
	int requests = iwarp_requests;
	char c;

	stats_read(&before);
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == 0,
	      "connect with fallback: %s", strerror(errno));
	s = tcp_peer_accept(l);
	check_fallen_back(fd, tcp_peer_reason());
	CHECK(iwarp_requests - requests == (test_device_iwarp() ? 1 : 0),
	      "%d connections of the iWARP CM reached the TCP listener",
	      iwarp_requests - requests);
	exchange(fd, s, 256 << 10);
	peer_addr(fd, &peer);
	CHECK(sockaddr_equal(&peer, &addr), "getpeername is not the listener");
	local_addr(fd, &mine);
	peer_addr(s, &theirs);
	CHECK(sockaddr_equal(&mine, &theirs),
	      "getsockname is not what the peer sees");
	CHECK_OK(getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len));
	CHECK(ti.tcpi_state == TCP_ESTABLISHED, "TCP_INFO state %u",
	      ti.tcpi_state);
	stats_read(&after);
	CHECK(stat_of(&after, tcp_peer_counter()) -
	      stat_of(&before, tcp_peer_counter()) == 1, "%s +%lld",
	      tcp_peer_counter(), stat_of(&after, tcp_peer_counter()) -
	      stat_of(&before, tcp_peer_counter()));
	CHECK(stat_of(&after, "FallbackEstab") -
	      stat_of(&before, "FallbackEstab") == 1, "FallbackEstab +%lld",
	      stat_of(&after, "FallbackEstab") -
	      stat_of(&before, "FallbackEstab"));
	close(fd);
	CHECK(read(s, &c, 1) == 0, "the peer got no EOF: %s", strerror(errno));
	close(s);
	close(l);
}

/*
 * A nonblocking connect() with epoll registered before it: EINPROGRESS,
 * then EPOLLOUT once TCP connected, SO_ERROR 0, and EPOLLIN for the
 * peer's data -- the waits a server's event loop makes.
 */
static void test_fallback_nonblocking_epoll(void)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT };
	struct sockaddr_storage addr;
	int l = tcp_listener(&addr), fd = sdp_socket(1, SOCK_NONBLOCK), s;
	int ep = epoll_create1(0), n;
	char buf[16];

	CHECK(ep >= 0, "epoll_create1: %s", strerror(errno));
	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == -1 &&
	      errno == EINPROGRESS, "nonblocking connect: %s",
	      strerror(errno));
	n = epoll_wait(ep, &ev, 1, WAIT_MS);
	CHECK(n == 1 && (ev.events & EPOLLOUT),
	      "no EPOLLOUT within %d ms (%d, events %#x)", WAIT_MS, n,
	      n == 1 ? ev.events : 0);
	CHECK(!(ev.events & (EPOLLERR | EPOLLHUP)), "events %#x", ev.events);
	CHECK(sockopt_get(fd, SOL_SOCKET, SO_ERROR) == 0, "SO_ERROR set");
	s = tcp_peer_accept(l);
	check_fallen_back(fd, tcp_peer_reason());
	ev.events = EPOLLIN;
	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
	CHECK(epoll_wait(ep, &ev, 1, 200) == 0, "EPOLLIN with nothing sent");
	CHECK(write(s, "hello", 5) == 5, "write: %s", strerror(errno));
	n = epoll_wait(ep, &ev, 1, WAIT_MS);
	CHECK(n == 1 && (ev.events & EPOLLIN), "no EPOLLIN for the data");
	CHECK(recv(fd, buf, sizeof(buf), 0) == 5 && !memcmp(buf, "hello", 5),
	      "recv: %s", strerror(errno));
	CHECK(recv(fd, buf, sizeof(buf), 0) == -1 && errno == EAGAIN,
	      "recv on an empty socket: %s", strerror(errno));
	close(ep);
	close(fd);
	close(s);
	close(l);
}

/*
 * Nobody listens at all: TCP's refusal is the answer.  A blocking
 * connect() fails with ECONNREFUSED; a nonblocking one reports it once,
 * through poll() and SO_ERROR.  FallbackFails counts both.  Over iWARP
 * the refusal of the iWARP CM's own TCP connection ends the SDP attempt
 * (rdma_connect() fails with it), as the CM's rejection does elsewhere:
 * reason rejected there too.
 */
static void test_fallback_refused(void)
{
	struct sockaddr_storage addr;
	struct stats before, after;
	struct pollfd p;
	int fd;

	close(tcp_listener(&addr));	/* a port nobody listens on */
	stats_read(&before);
	fd = sdp_socket(1, 0);
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == -1 &&
	      errno == ECONNREFUSED, "blocking connect: %s, not ECONNREFUSED",
	      strerror(errno));
	check_fallen_back(fd, SDP_FB_REJECTED);
	close(fd);

	fd = sdp_socket(1, SOCK_NONBLOCK);
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == -1 &&
	      errno == EINPROGRESS, "nonblocking connect: %s",
	      strerror(errno));
	p.fd = fd;
	p.events = POLLOUT;
	CHECK(poll(&p, 1, WAIT_MS) == 1 && (p.revents & POLLERR),
	      "no POLLERR (revents %#x)", p.revents);
	CHECK(sockopt_get(fd, SOL_SOCKET, SO_ERROR) == ECONNREFUSED,
	      "SO_ERROR is not ECONNREFUSED");
	CHECK(sockopt_get(fd, SOL_SOCKET, SO_ERROR) == 0,
	      "SO_ERROR reported twice");
	close(fd);
	stats_read(&after);
	CHECK(stat_of(&after, "FallbackFails") -
	      stat_of(&before, "FallbackFails") == 2, "FallbackFails +%lld",
	      stat_of(&after, "FallbackFails") -
	      stat_of(&before, "FallbackFails"));
}

/*
 * net.sdp.tcp_fallback 1 turns it on for every socket, and a socket's
 * SDP_TCP_FALLBACK 0 still turns it off for that one.
 */
static void test_fallback_sysctl(void)
{
	struct sockaddr_storage addr;
	int l = tcp_listener(&addr), fd, s;

	CHECK(write_file(FB_SYSCTL, "2") != 0, "%s took 2", FB_SYSCTL);
	CHECK(write_file(FB_SYSCTL, "1") == 0, "write %s", FB_SYSCTL);
	fd = sdp_socket(-1, 0);
	CHECK(sockopt_get(fd, SOL_SDP, SDP_TCP_FALLBACK) == 1,
	      "SDP_TCP_FALLBACK does not read the sysctl's 1");
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == 0,
	      "connect with the sysctl on: %s", strerror(errno));
	s = tcp_peer_accept(l);
	check_fallen_back(fd, tcp_peer_reason());
	exchange(fd, s, 4096);
	close(fd);
	close(s);
	fd = sdp_socket(0, 0);
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == -1 &&
	      errno == tcp_peer_errno(),
	      "SDP_TCP_FALLBACK 0 under the sysctl's 1: %s",
	      strerror(errno));
	close(fd);
	CHECK(write_file(FB_SYSCTL, "0") == 0, "write %s", FB_SYSCTL);
	close(l);
}

/*
 * Where SDP works, it is used: with fallback on, a connection to an SDP
 * listener is an SDP one.
 */
static void test_fallback_not_needed(void)
{
	struct sockaddr_storage addr;
	struct sdp_info info;
	int l = net_listener(&addr, 1, 0), fd = sdp_socket(1, 0), s;

	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == 0,
	      "connect: %s", strerror(errno));
	s = net_accept(l, WAIT_MS);
	info = sdp_info_of(fd);
	CHECK(info.sdpi_transport == SDP_TRANSPORT_SDP &&
	      info.sdpi_fallback_reason == SDP_FB_NONE,
	      "transport %u, reason %u over SDP", info.sdpi_transport,
	      info.sdpi_fallback_reason);
	exchange(fd, s, 4096);
	close(fd);
	close(s);
	close(l);
}

/*
 * Options set before the fallback hold after it (TCP_NODELAY,
 * TCP_CONGESTION, SO_RCVTIMEO), options set after it reach TCP
 * (TCP_KEEPIDLE read back),
 * shutdown() half-closes, and a close() with unread data resets the
 * peer, as on TCP.
 */
static void test_fallback_options(void)
{
	struct timeval tv = { .tv_usec = 200000 };
	struct sockaddr_storage addr;
	int l = tcp_listener(&addr), fd = sdp_socket(1, 0), s;
	char buf[8], ca[16] = "";
	socklen_t calen = sizeof(ca);
	long long t0, ms;

	sockopt_set(fd, IPPROTO_TCP, TCP_NODELAY, 1);
	/* Not the kernel's default (cubic): TCP's own reno. */
	CHECK_OK(setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "reno", 4));
	CHECK_OK(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == 0,
	      "connect: %s", strerror(errno));
	s = tcp_peer_accept(l);
	check_fallen_back(fd, tcp_peer_reason());
	CHECK(sockopt_get(fd, IPPROTO_TCP, TCP_NODELAY) == 1,
	      "TCP_NODELAY lost in the fallback");
	CHECK_OK(getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, ca, &calen));
	CHECK(!strcmp(ca, "reno"), "TCP_CONGESTION is %s after the fallback",
	      ca);
	t0 = now_ms();
	CHECK(recv(fd, buf, sizeof(buf), 0) == -1 && errno == EAGAIN,
	      "recv with SO_RCVTIMEO: %s", strerror(errno));
	ms = now_ms() - t0;
	CHECK(ms >= 150 && ms < 5000, "SO_RCVTIMEO of 200 ms took %lld ms",
	      ms);
	sockopt_set(fd, IPPROTO_TCP, TCP_KEEPIDLE, 7);
	CHECK(sockopt_get(fd, IPPROTO_TCP, TCP_KEEPIDLE) == 7,
	      "TCP_KEEPIDLE not kept");
	CHECK_OK(shutdown(fd, SHUT_WR));
	CHECK(read(s, buf, 1) == 0, "no EOF after shutdown(SHUT_WR)");
	CHECK(write(s, "ab", 2) == 2, "write: %s", strerror(errno));
	CHECK(read(fd, buf, sizeof(buf)) == 2 && !memcmp(buf, "ab", 2),
	      "no data after the half close: %s", strerror(errno));
	close(s);
	CHECK(read(fd, buf, sizeof(buf)) == 0, "no EOF: %s", strerror(errno));
	close(fd);

	/* A close() with unread data resets the peer. */
	fd = sdp_socket(1, 0);
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == 0,
	      "connect: %s", strerror(errno));
	s = tcp_peer_accept(l);
	CHECK(write(s, "ab", 2) == 2, "write: %s", strerror(errno));
	CHECK(wait_fd(fd, POLLIN, WAIT_MS) & POLLIN, "no data");
	close(fd);
	CHECK(wait_fd(s, POLLIN, WAIT_MS) & (POLLIN | POLLERR | POLLHUP),
	      "the peer heard nothing of the close");
	CHECK(read(s, buf, 1) == -1 && errno == ECONNRESET,
	      "the peer's read after a close with unread data: %s",
	      strerror(errno));
	close(s);
	close(l);
}

/*
 * Fallen-back connections use no RDMA resources once made, and give
 * back the SDP attempt's: 16 of them open at once, then closed.
 */
static void test_fallback_resources(void)
{
	struct sockaddr_storage addr;
	struct rdma_res base, now;
	int l = tcp_listener(&addr), c[16], s[16], i;
	char b[64];

	CHECK(rdma_res_read(&base) == 0, "rdma resource show");
	for (i = 0; i < 16; i++) {
		c[i] = sdp_socket(1, 0);
		CHECK(connect(c[i], (struct sockaddr *)&addr,
			      sockaddr_len(&addr)) == 0,
		      "connect %d: %s", i, strerror(errno));
		s[i] = tcp_peer_accept(l);
	}
	CHECK(rdma_res_wait(&base, &now, WAIT_MS),
	      "RDMA resources of 16 fallen-back connections: %s",
	      rdma_res_str(&now, b, sizeof(b)));
	for (i = 0; i < 16; i++) {
		exchange(c[i], s[i], 1024);
		close(c[i]);
		close(s[i]);
	}
	close(l);
	wait_no_sockets();
}

/*
 * The reason on record in every listing: sdpstat's Transport column
 * ("sdp", "tcp:rejected" or over iWARP "tcp:unreachable"), /proc/net/sdp's
 * fallback column and the
 * SDP_DIAG_CONN attribute, for a mixed set of connections.
 */
static void test_fallback_listed(void)
{
	struct sockaddr_storage ta, sa, c1a, c2a;
	int tl = tcp_listener(&ta), sl = net_listener(&sa, 1, 0);
	int c1 = sdp_socket(1, 0), c2 = sdp_socket(1, 0), s1, s2, st, n;
	struct sdp_diag_sock d[64];
	const struct sdp_diag_sock *ds;
	char a[96], *out, *line, *l = NULL;
	unsigned int seen = 0;
	size_t cap = 0;
	ssize_t len;
	FILE *f;

	CHECK_OK(connect(c1, (struct sockaddr *)&ta, sockaddr_len(&ta)));
	CHECK_OK(connect(c2, (struct sockaddr *)&sa, sockaddr_len(&sa)));
	s1 = tcp_peer_accept(tl);
	s2 = net_accept(sl, WAIT_MS);
	local_addr(c1, &c1a);
	local_addr(c2, &c2a);
	if (access("tools/bin/sdpstat", X_OK))
		CHECK(0, "tools/bin/sdpstat not built");
	out = run_capture("tools/bin/sdpstat", &st);
	CHECK(st == 0, "sdpstat failed: %d", st);
	tap_diag("sdpstat:\n%s", out);
	CHECK(!strncmp(out, "State ", 6) && strstr(out, " Transport"),
	      "no Transport column:\n%s", out);
	snprintf(a, sizeof(a), " %s:%u %s:%u %s ", TEST_ADDR(),
		 sockaddr_port(&c1a), TEST_ADDR(), sockaddr_port(&ta),
		 tcp_transport_name(tcp_peer_reason()));
	line = find_line(out, a, NULL);
	CHECK(line && !strncmp(line, "ESTAB ", 6),
	      "no ESTAB line '%s':\n%s", a, out);
	snprintf(a, sizeof(a), " %s:%u %s:%u sdp ", TEST_ADDR(),
		 sockaddr_port(&c2a), TEST_ADDR(), sockaddr_port(&sa));
	CHECK(find_line(out, a, NULL), "no line '%s':\n%s", a, out);
	free(out);

	n = diag_dump(1U << TCP_ESTABLISHED, 0, d, 64);
	CHECK(n > 0, "sock_diag dump: %d", n);
	ds = diag_find(d, n, inode_of(c1));
	CHECK(ds && ds->has_conn &&
	      ds->conn.transport == SDP_TRANSPORT_TCP &&
	      ds->conn.fallback_reason == tcp_peer_reason(),
	      "sock_diag of the fallen-back socket: %s",
	      ds ? "wrong transport" : "missing");
	ds = diag_find(d, n, inode_of(c2));
	CHECK(ds && ds->has_conn && ds->conn.transport == SDP_TRANSPORT_SDP,
	      "sock_diag of the SDP socket");

	/* /proc/net/sdp: inode (7th field) and fallback (the 16th). */
	f = fopen("/proc/net/sdp", "re");
	CHECK(f, "/proc/net/sdp: %s", strerror(errno));
	while ((len = getline(&l, &cap, f)) > 0) {
		unsigned long ino;
		unsigned int fb;

		if (sscanf(l, "%*s %*s %*x %*x:%*x %*u %lu %*u %*u %*u %*u %*u %*u %*u %*u %u",
			   &ino, &fb) != 2)
			continue;
		if (ino == inode_of(c1))
			seen |= 1 | (fb == tcp_peer_reason() ? 4 : 0);
		if (ino == inode_of(c2))
			seen |= 2 | (fb == 0 ? 8 : 0);
	}
	free(l);
	fclose(f);
	CHECK(seen == 15, "/proc/net/sdp's fallback column (seen %#x)", seen);
	close(c1);
	close(c2);
	close(s1);
	close(s2);
	close(tl);
	close(sl);
}

/* An SDP listener with SDP_TCP_FALLBACK @on on the test address. */
static int sdp_listener(int on, struct sockaddr_storage *addr)
{
	socklen_t len = test_sockaddr(addr, 0);
	int fd = sdp_socket(on, 0);

	CHECK_OK(bind(fd, (struct sockaddr *)addr, len));
	CHECK_OK(listen(fd, 8));
	local_addr(fd, addr);
	return fd;
}

/* A plain TCP client of @addr: blocking connect(), 0 or errno. */
static int tcp_connect(const struct sockaddr_storage *addr, int *fd)
{
	*fd = socket(addr->ss_family, SOCK_STREAM, 0);
	CHECK(*fd >= 0, "socket: %s", strerror(errno));
	return connect(*fd, (const struct sockaddr *)addr,
		       sockaddr_len(addr)) ? errno : 0;
}

/*
 * Passive side: an SDP listener with fallback on also listens on TCP at
 * its port, so a TCP-only client reaches it; accept() returns that
 * client's connection (reason tcp-client) and SDP clients' alike, poll()
 * tells of both, and closing the listener resets a TCP client not yet
 * accepted.  Without fallback a TCP client is refused.
 *
 * Over iWARP (sdp(7)) the TCP client of a listener without fallback is
 * accepted, by the iWARP CM, and a listener with fallback on cannot be
 * had: its listen() fails with EADDRINUSE.
 */
static void test_fallback_tcp_client(void)
{
	struct sockaddr_storage addr, got, theirs;
	struct stats before, after;
	int l, t, a, c, s, t2, err;
	char ch;

	l = sdp_listener(0, &addr);
	err = tcp_connect(&addr, &t);
	if (test_device_iwarp()) {
		CHECK(err == 0, "a TCP client of an SDP listener over iWARP: %s",
		      errname(err));
		close(t);
		close(l);
		check_iwarp_fb_listen_refused();
		return;
	}
	CHECK(err == ECONNREFUSED,
	      "a TCP client of a listener without fallback was not refused");
	close(t);
	close(l);

	stats_read(&before);
	l = sdp_listener(1, &addr);
	set_nonblock(l, true);
	CHECK(accept(l, NULL, NULL) == -1 && errno == EAGAIN,
	      "accept with nobody waiting: %s", strerror(errno));
	CHECK(tcp_connect(&addr, &t) == 0, "TCP client: %s", strerror(errno));
	CHECK(wait_fd(l, POLLIN, WAIT_MS) & POLLIN,
	      "no POLLIN on the listener for a TCP client");
	a = accept(l, NULL, NULL);
	CHECK(a >= 0, "accept of the TCP client: %s", strerror(errno));
	check_fallen_back(a, SDP_FB_TCP_CLIENT);
	peer_addr(a, &got);
	local_addr(t, &theirs);
	CHECK(sockaddr_equal(&got, &theirs), "getpeername is not the client");
	local_addr(a, &got);
	CHECK(sockaddr_equal(&got, &addr), "getsockname is not the listener's");
	exchange(t, a, 64 << 10);

	/* An SDP client of the same listener still gets SDP. */
	c = sdp_socket(1, 0);
	CHECK_OK(connect(c, (struct sockaddr *)&addr, sockaddr_len(&addr)));
	CHECK(wait_fd(l, POLLIN, WAIT_MS) & POLLIN, "no POLLIN for SDP");
	s = accept(l, NULL, NULL);
	CHECK(s >= 0, "accept of the SDP client: %s", strerror(errno));
	check_fallen_back(s, SDP_FB_NONE);
	check_fallen_back(c, SDP_FB_NONE);
	exchange(c, s, 4096);
	stats_read(&after);
	CHECK(stat_of(&after, "FallbackTcpClient") -
	      stat_of(&before, "FallbackTcpClient") == 1,
	      "FallbackTcpClient +%lld",
	      stat_of(&after, "FallbackTcpClient") -
	      stat_of(&before, "FallbackTcpClient"));

	/* Closing the listener drops a TCP client it did not accept. */
	CHECK(tcp_connect(&addr, &t2) == 0, "TCP client: %s", strerror(errno));
	CHECK(wait_fd(l, POLLIN, WAIT_MS) & POLLIN, "no POLLIN");
	close(l);
	CHECK(wait_fd(t2, POLLIN, WAIT_MS) & (POLLIN | POLLHUP | POLLERR),
	      "the unaccepted client heard nothing");
	CHECK(read(t2, &ch, 1) <= 0, "data from a closed listener");
	close(t2);
	close(a);
	CHECK(read(t, &ch, 1) == 0, "no EOF after close: %s", strerror(errno));
	close(t);
	close(c);
	close(s);
	wait_no_sockets();
}

#define PORT_RANGE_SYSCTL	"/proc/sys/net/ipv4/ip_local_port_range"
#define PF_PORTS	4	/* the narrowed ephemeral range */
#define PF_ROUNDS	8

/*
 * A TCP client reaches the listener @l (fallback on) at @a, port @port:
 * connected and accepted over TCP.  Closed client first, and the accepted
 * socket abortively, so that no connection is left on the listener's
 * port (TIME_WAIT, LAST_ACK).
 */
static void check_tcp_client_reaches(int l, const struct sockaddr_storage *a,
				     uint16_t port)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct sockaddr_storage addr = *a;
	int t, s, err;
	char ch;

	sockaddr_set_port(&addr, port);
	err = tcp_connect(&addr, &t);
	CHECK(err == 0, "a TCP client of the listener on port %u: %s", port,
	      errname(err));
	s = accept(l, NULL, NULL);
	CHECK(s >= 0, "accept: %s", strerror(errno));
	check_fallen_back(s, SDP_FB_TCP_CLIENT);
	close(t);
	CHECK(read(s, &ch, 1) == 0, "no EOF from the TCP client");
	CHECK_OK(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	close(s);
}

/*
 * PF_PORTS ports from @base (or the next ones) that no TCP socket has:
 * all but the last held by sockets bound to them (@hold), the last left
 * free.  Returns its base.
 */
static int hold_tcp_ports(int base, int *hold)
{
	struct sockaddr_storage addr;
	int i, n, fd;
	socklen_t len;

	for (; base + PF_PORTS <= 65536; base += PF_PORTS) {
		for (i = 0, n = 0; i < PF_PORTS; i++) {
			len = test_sockaddr(&addr, base + i);
			fd = socket(addr.ss_family, SOCK_STREAM, 0);
			CHECK(fd >= 0, "socket: %s", strerror(errno));
			if (bind(fd, (struct sockaddr *)&addr, len)) {
				close(fd);
				break;
			}
			if (i < PF_PORTS - 1)
				hold[n++] = fd;
			else
				close(fd);	/* the free one */
		}
		if (i == PF_PORTS)
			return base;
		while (n)
			close(hold[--n]);
	}
	CHECK(0, "no %d free TCP ports", PF_PORTS);
	return -1;
}

/*
 * The port the kernel picks for a socket with fallback on (bind() to port
 * 0, or listen() without bind()) is one TCP has free as well, so that the
 * listener's TCP socket gets it and TCP clients reach it.  The ephemeral
 * range is narrowed to PF_PORTS ports above the usual one (where no
 * connection of an earlier test is), all but one held by plain TCP
 * sockets: every pick must be that one.  The RDMA CM picks its ports
 * without looking at TCP's: 1 in PF_PORTS times the right one.
 */
static void test_fallback_listener_port_free_for_tcp(void)
{
	struct sockaddr_storage addr, got;
	struct rdma_res before, now;
	int hold[PF_PORTS - 1], base, i, l;
	char range[32], dflt[32], buf[64];
	socklen_t len;

	TAP_SKIP_IF_HOST("narrows net.ipv4.ip_local_port_range, a setting of the host's");
	if (test_device_iwarp())
		tap_skip("over iWARP no listener has fallback on (test_fallback_tcp_client asserts its EADDRINUSE)");
	/* No CM id of an earlier test's socket has a port any more. */
	wait_no_sockets();
	CHECK(rdma_res_read(&before) == 0, "rdma resource show failed");
	CHECK(read_file(PORT_RANGE_SYSCTL, dflt, sizeof(dflt)) == 0, "read %s",
	      PORT_RANGE_SYSCTL);
	base = hold_tcp_ports(61000, hold);
	snprintf(range, sizeof(range), "%d %d", base, base + PF_PORTS - 1);
	for (i = 0; i < 2 * PF_ROUNDS; i++) {
		const char *how = i < PF_ROUNDS ? "bind to port 0" :
						  "listen without bind";

		CHECK(write_file(PORT_RANGE_SYSCTL, range) == 0, "write %s",
		      PORT_RANGE_SYSCTL);
		l = sdp_socket(1, 0);
		len = test_sockaddr(&addr, 0);
		if (i < PF_ROUNDS)
			CHECK_OK(bind(l, (struct sockaddr *)&addr, len));
		CHECK_OK(listen(l, 8));
		local_addr(l, &got);
		/* The TCP client's own port from the usual range. */
		CHECK(write_file(PORT_RANGE_SYSCTL, dflt) == 0,
		      "write %s", PORT_RANGE_SYSCTL);
		CHECK(sockaddr_port(&got) == base + PF_PORTS - 1,
		      "%s picked port %u, TCP has only %d free", how,
		      sockaddr_port(&got), base + PF_PORTS - 1);
		check_tcp_client_reaches(l, &addr, sockaddr_port(&got));
		close(l);
		/*
		 * Its CM id, destroyed in the background, has the port until
		 * the socket is gone.
		 */
		wait_no_sockets();
		CHECK(rdma_res_wait(&before, &now, WAIT_MS),
		      "after %s: %s", how, rdma_res_str(&now, buf, sizeof(buf)));
	}
	for (i = 0; i < PF_PORTS - 1; i++)
		close(hold[i]);
}

/*
 * Is @addr in /proc/net/sdp_fallback, with @reason (-1: any)?  Quiet
 * unless @say.
 */
static bool cache_lists(const struct sockaddr_storage *addr, int reason,
			bool say)
{
	char host[INET6_ADDRSTRLEN], want[96], *out;
	bool found;
	int st;

	out = run_capture("cat /proc/net/sdp_fallback", &st);
	CHECK(st == 0 && !strncmp(out, "address port reason expires_ms\n", 31),
	      "/proc/net/sdp_fallback:\n%s", out);
	if (addr->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)addr)->sin_addr,
			  host, sizeof(host));
	else
		inet_ntop(AF_INET6,
			  &((const struct sockaddr_in6 *)addr)->sin6_addr,
			  host, sizeof(host));
	if (reason < 0)
		snprintf(want, sizeof(want), " %s %u ", host,
			 sockaddr_port(addr));
	else
		snprintf(want, sizeof(want), " %s %u %d ", host,
			 sockaddr_port(addr), reason);
	found = find_line(out, want, NULL);
	if (!found && say)
		tap_diag("no '%s' in:\n%s", want, out);
	free(out);
	return found;
}

/*
 * The negative cache: once a connect() to an address and port fell back,
 * the next ones go to TCP at once (reason cached, FallbackCached), for
 * net.sdp.tcp_fallback_cache_s; /proc/net/sdp_fallback lists the
 * destination and why; with the sysctl at 0 every connect() tries SDP.
 */
static void test_fallback_cache(void)
{
	struct sockaddr_storage addr;
	struct stats before, after;
	int l = tcp_listener(&addr), c1, c2, c3, s;
	char ttl[16] = "";

	CHECK(read_file(FB_CACHE_SYSCTL, ttl, sizeof(ttl)) == 0 &&
	      atoi(ttl) == 60, "%s is '%s', not 60", FB_CACHE_SYSCTL, ttl);
	stats_read(&before);
	c1 = sdp_socket(1, 0);
	CHECK_OK(connect(c1, (struct sockaddr *)&addr, sockaddr_len(&addr)));
	s = tcp_peer_accept(l);
	close(s);
	check_fallen_back(c1, tcp_peer_reason());
	CHECK(cache_lists(&addr, tcp_peer_reason(), true),
	      "the destination is not in /proc/net/sdp_fallback");
	c2 = sdp_socket(1, 0);
	CHECK_OK(connect(c2, (struct sockaddr *)&addr, sockaddr_len(&addr)));
	s = tcp_peer_accept(l);
	check_fallen_back(c2, SDP_FB_CACHED);
	exchange(c2, s, 4096);
	close(s);
	stats_read(&after);
	CHECK(stat_of(&after, "FallbackCached") -
	      stat_of(&before, "FallbackCached") == 1, "FallbackCached +%lld",
	      stat_of(&after, "FallbackCached") -
	      stat_of(&before, "FallbackCached"));
	CHECK(stat_of(&after, tcp_peer_counter()) -
	      stat_of(&before, tcp_peer_counter()) == 1,
	      "%s +%lld: SDP was tried again", tcp_peer_counter(),
	      stat_of(&after, tcp_peer_counter()) -
	      stat_of(&before, tcp_peer_counter()));

	CHECK(write_file(FB_CACHE_SYSCTL, "0") == 0, "write %s",
	      FB_CACHE_SYSCTL);
	c3 = sdp_socket(1, 0);
	CHECK_OK(connect(c3, (struct sockaddr *)&addr, sockaddr_len(&addr)));
	s = tcp_peer_accept(l);
	check_fallen_back(c3, tcp_peer_reason());
	close(s);
	CHECK(write_file(FB_CACHE_SYSCTL, "60") == 0, "write %s",
	      FB_CACHE_SYSCTL);
	close(c1);
	close(c2);
	close(c3);
	close(l);
}

/*
 * An error is reported once, as on TCP: the peer resets the connection;
 * poll() says POLLERR, recv() fails with ECONNRESET, and from then on
 * neither poll() nor SO_ERROR report it again.  And the other way: read
 * through SO_ERROR first, recv() does not report it again.
 */
static void test_fallback_error_once(void)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct sockaddr_storage addr;
	int l = tcp_listener(&addr), fd, s, i;
	char ch;

	for (i = 0; i < 2; i++) {
		fd = sdp_socket(1, 0);
		CHECK_OK(connect(fd, (struct sockaddr *)&addr,
				 sockaddr_len(&addr)));
		s = tcp_peer_accept(l);
		CHECK_OK(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
		close(s);	/* a reset */
		CHECK(wait_fd(fd, POLLIN, WAIT_MS) & POLLERR,
		      "no POLLERR after the peer's reset");
		if (!i) {
			CHECK(recv(fd, &ch, 1, MSG_DONTWAIT) == -1 &&
			      errno == ECONNRESET, "recv after a reset: %s",
			      strerror(errno));
		} else {
			CHECK(sockopt_get(fd, SOL_SOCKET, SO_ERROR) ==
			      ECONNRESET, "SO_ERROR is not ECONNRESET");
			CHECK(recv(fd, &ch, 1, MSG_DONTWAIT) == 0,
			      "recv after SO_ERROR read the reset: %s",
			      strerror(errno));
		}
		CHECK(!(wait_fd(fd, POLLIN, 0) & POLLERR),
		      "POLLERR after the error was read (%s)",
		      i ? "SO_ERROR" : "recv");
		CHECK(sockopt_get(fd, SOL_SOCKET, SO_ERROR) == 0,
		      "SO_ERROR after the error was read (%s)",
		      i ? "SO_ERROR" : "recv");
		close(fd);
	}
	close(l);
}

/*
 * Urgent data on a fallen-back socket: POLLPRI, the byte by MSG_OOB, and
 * SIGURG to the socket's owner (F_SETOWN), once per urgent byte, as on
 * TCP; none without an owner.
 */
static void test_fallback_sigurg(void)
{
	struct sigaction old;
	struct sockaddr_storage addr;
	int l = tcp_listener(&addr), fd = sdp_socket(1, 0), s;
	char ch = 0;

	sigurg_catch(&old);
	CHECK_OK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)));
	s = tcp_peer_accept(l);
	check_fallen_back(fd, tcp_peer_reason());
	sigurgs = 0;
	CHECK(send(s, "A", 1, MSG_OOB) == 1, "send(MSG_OOB): %s",
	      strerror(errno));
	CHECK(wait_fd(fd, POLLPRI, WAIT_MS) & POLLPRI, "no POLLPRI");
	CHECK(recv(fd, &ch, 1, MSG_OOB) == 1 && ch == 'A', "read %#x", ch);
	CHECK(sigurgs == 0, "SIGURG without an owner");
	CHECK_OK(fcntl(fd, F_SETOWN, getpid()));
	CHECK(send(s, "B", 1, MSG_OOB) == 1, "send(MSG_OOB): %s",
	      strerror(errno));
	CHECK(wait_until(got_sigurg, NULL, WAIT_MS), "no SIGURG");
	CHECK(recv(fd, &ch, 1, MSG_OOB) == 1 && ch == 'B', "read %#x", ch);
	/* Ordinary data after it: no second signal for the same byte. */
	CHECK(send(s, "xyz", 3, 0) == 3, "send: %s", strerror(errno));
	CHECK(wait_fd(fd, POLLIN, WAIT_MS) & POLLIN, "no POLLIN");
	sleep_ms_poll(100);
	CHECK(sigurgs == 1, "%d SIGURGs for one urgent byte", (int)sigurgs);
	CHECK_OK(sigaction(SIGURG, &old, NULL));
	close(s);
	close(fd);
	close(l);
}

/* ---- The other reasons: a scratch device, a silent RDMA CM ---- */

/* "ip ARGS...": its exit status. */
#define IP(...) run((const char *const[]){ "ip", __VA_ARGS__, NULL })

/*
 * A dummy device @dev with MTU @mtu and the address @cidr, up.  @arp: it
 * sends ARP requests (that nobody answers) instead of taking every
 * neighbour as resolved; each given up after one 100 ms try.
 */
static void scratch_netdev(const char *dev, const char *mtu,
			   const char *cidr, bool arp)
{
	char path[96];

	/* A failed run of the test may have left it. */
	snprintf(path, sizeof(path), "/sys/class/net/%s", dev);
	if (!access(path, F_OK))
		CHECK(IP("link", "del", dev) == 0, "ip link del %s failed",
		      dev);
	CHECK(IP("link", "add", dev, "mtu", mtu, "type", "dummy") == 0,
	      "ip link add %s failed", dev);
	CHECK(IP("addr", "add", cidr, "dev", dev) == 0, "ip addr add %s failed",
	      cidr);
	if (arp) {
		CHECK(IP("link", "set", dev, "arp", "on") == 0,
		      "ip link set %s arp on failed", dev);
		snprintf(path, sizeof(path),
			 "/proc/sys/net/ipv4/neigh/%s/mcast_solicit", dev);
		CHECK(write_file(path, "1") == 0, "write %s", path);
		snprintf(path, sizeof(path),
			 "/proc/sys/net/ipv4/neigh/%s/retrans_time_ms", dev);
		CHECK(write_file(path, "100") == 0, "write %s", path);
	}
	CHECK(IP("link", "set", dev, "up") == 0, "ip link set %s up failed",
	      dev);
}

/* A plain TCP listener on @ip, any port; its address in @addr. */
static int tcp_listener_on(const char *ip, struct sockaddr_storage *addr)
{
	int fd;

	CHECK(make_sockaddr(addr, ip, 0), "address %s", ip);
	fd = socket(addr->ss_family, SOCK_STREAM, 0);
	CHECK(fd >= 0, "socket: %s", strerror(errno));
	CHECK_OK(bind(fd, (struct sockaddr *)addr, sockaddr_len(addr)));
	CHECK_OK(listen(fd, 8));
	local_addr(fd, addr);
	return fd;
}

/* The counter @name went up by exactly one from @before. */
static void check_counted(const struct stats *before, const char *name)
{
	struct stats after;

	stats_read(&after);
	CHECK(stat_of(&after, name) - stat_of(before, name) == 1,
	      "%s +%lld, not +1", name,
	      stat_of(&after, name) - stat_of(before, name));
}

/*
 * A connect() with fallback on to a TCP-only listener at @ip (any port)
 * that must fall back for @why, counted as @counter, listed in the
 * negative cache, and carry data.
 */
static void check_reason_at(const char *ip, unsigned int why,
			    const char *counter)
{
	struct sockaddr_storage addr;
	struct stats before;
	int l = tcp_listener_on(ip, &addr), fd = sdp_socket(1, 0), s;

	stats_read(&before);
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == 0,
	      "connect to %s with fallback: %s", ip, strerror(errno));
	s = tcp_peer_accept(l);
	check_fallen_back(fd, why);
	check_counted(&before, counter);
	CHECK(cache_lists(&addr, why, true), "%s is not in the negative cache",
	      ip);
	exchange(fd, s, 4096);
	close(s);
	close(fd);
	close(l);
}

/*
 * No RDMA device has the address: it is on a device without Soft-RoCE.
 * The SDP attempt ends at address resolution, which finds the address
 * but no RDMA device for it (reason no-device); TCP connects.
 */
static void test_fallback_no_device(void)
{
	TAP_SKIP_IF_HOST("adds a scratch netdev and subnet (sdpfb0, 10.66.0.1/24)");
	scratch_netdev("sdpfb0", "1500", "10.66.0.1/24", false);
	check_reason_at("10.66.0.1", SDP_FB_NO_DEVICE, "FallbackNoDevice");
	CHECK(IP("link", "del", "sdpfb0") == 0, "ip link del failed");
}

/*
 * A loopback address: no RDMA device carries it (sdp.rst), so the SDP
 * attempt ends before the RDMA CM sees it (reason no-device) and TCP
 * connects over the loopback device, for IPv4 and IPv6 alike.
 */
static void test_fallback_loopback(void)
{
	check_reason_at("127.0.0.1", SDP_FB_NO_DEVICE, "FallbackNoDevice");
	if (access("/proc/sys/net/ipv6", F_OK))
		return;
	check_reason_at("::1", SDP_FB_NO_DEVICE, "FallbackNoDevice");
}

/*
 * Address resolution fails: nobody answers ARP for the destination.  The
 * SDP attempt ends after net.sdp.resolve_timeout_ms (reason addr-error);
 * TCP, tried next, fails as a TCP socket fails there, with the error
 * reported once.
 */
static void test_fallback_addr_error(void)
{
	struct sockaddr_storage addr;
	struct stats before;
	char old[16] = "";
	int fd, tcp, tcp_err, err, port;

	TAP_SKIP_IF_HOST("adds a scratch netdev and subnet (sdpfb1, 10.67.0.1/24)");
	scratch_netdev("sdpfb1", "1500", "10.67.0.1/24", true);
	/* A port an earlier run did not leave in the negative cache. */
	port = 9;
	do {
		CHECK(make_sockaddr(&addr, "10.67.0.2", port), "address");
		port += 1000;
	} while (cache_lists(&addr, -1, false) && port < 60000);
	CHECK(read_file(RESOLVE_SYSCTL, old, sizeof(old)) == 0, "read %s",
	      RESOLVE_SYSCTL);
	CHECK(write_file(RESOLVE_SYSCTL, "300") == 0, "write %s",
	      RESOLVE_SYSCTL);

	/* What TCP says about the address. */
	tcp = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	CHECK(connect(tcp, (struct sockaddr *)&addr, sockaddr_len(&addr)) == -1 &&
	      errno == EINPROGRESS, "TCP connect: %s", strerror(errno));
	tcp_err = tcp_connect_result(tcp, 10000);
	CHECK(tcp_err != -1, "TCP: no end of the connect in 10 s");
	CHECK(tcp_err, "TCP connected to nobody");
	close(tcp);

	stats_read(&before);
	fd = sdp_socket(1, SOCK_NONBLOCK);
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == -1 &&
	      errno == EINPROGRESS, "connect: %s", strerror(errno));
	CHECK(wait_fd(fd, POLLOUT, 10000) & POLLERR, "no error in 10 s");
	err = sockopt_get(fd, SOL_SOCKET, SO_ERROR);
	CHECK(err == tcp_err, "SO_ERROR is %s, not TCP's %s", errname(err),
	      errname(tcp_err));
	CHECK(sockopt_get(fd, SOL_SOCKET, SO_ERROR) == 0,
	      "the error was reported twice");
	check_fallen_back(fd, SDP_FB_ADDR_ERROR);
	check_counted(&before, "FallbackAddrError");
	CHECK(cache_lists(&addr, SDP_FB_ADDR_ERROR, true),
	      "the address is not in the negative cache");
	close(fd);
	CHECK(write_file(RESOLVE_SYSCTL, old) == 0, "write %s", RESOLVE_SYSCTL);
	CHECK(IP("link", "del", "sdpfb1") == 0, "ip link del failed");
}

/*
 * A subnet on the new device @dev where nobody answers ARP: the address
 * resolution of a connect there gives up after 200 ms.  The negative
 * cache is off, so that every connect tries SDP (also in a second run of
 * the test); the harness puts the sysctls back after the test.
 */
static void silent_subnet(const char *dev, const char *cidr)
{
	scratch_netdev(dev, "1500", cidr, true);
	CHECK(write_file(RESOLVE_SYSCTL, "200") == 0, "write %s",
	      RESOLVE_SYSCTL);
	CHECK(write_file(FB_CACHE_SYSCTL, "0") == 0, "write %s",
	      FB_CACHE_SYSCTL);
}

#define PE_SOCKS	24

/*
 * What poll() reports, SO_ERROR reads: a fallen-back socket whose TCP
 * connect fails says POLLERR only once SO_ERROR has the error, however
 * soon after the failure it is polled (TCP's error, written on another
 * CPU, is copied to the SDP socket by TCP's callback a little later).
 * PE_SOCKS connects to addresses nobody answers ARP for, polled without
 * sleeping; each must end with POLLERR and TCP's error, read once.
 */
static void test_fallback_pollerr_so_error(void)
{
	struct pollfd p[PE_SOCKS];
	int i, err, left = PE_SOCKS;
	long long deadline, polls = 0;
	char ip[32];

	TAP_SKIP_IF_HOST("adds a scratch netdev and subnet (sdpfb4, 10.71.0.1/24)");
	silent_subnet("sdpfb4", "10.71.0.1/24");
	for (i = 0; i < PE_SOCKS; i++) {
		struct sockaddr_storage addr;

		snprintf(ip, sizeof(ip), "10.71.0.%d", 2 + i);
		CHECK(make_sockaddr(&addr, ip, 9), "address %s", ip);
		p[i] = (struct pollfd){ .fd = sdp_socket(1, SOCK_NONBLOCK),
					.events = POLLIN | POLLOUT };
		CHECK(connect(p[i].fd, (struct sockaddr *)&addr,
			      sockaddr_len(&addr)) == -1 &&
		      errno == EINPROGRESS, "connect %s: %s", ip,
		      strerror(errno));
	}
	deadline = now_ms() + 4 * WAIT_MS;
	while (left && now_ms() < deadline) {
		CHECK(poll(p, PE_SOCKS, 0) >= 0, "poll: %s", strerror(errno));
		polls++;
		for (i = 0; i < PE_SOCKS; i++) {
			if (!p[i].revents || p[i].fd < 0)
				continue;
			err = sockopt_get(p[i].fd, SOL_SOCKET, SO_ERROR);
			CHECK(p[i].revents & POLLERR,
			      "socket %d: revents %#x without POLLERR (SO_ERROR %s)",
			      i, p[i].revents, errname(err));
			CHECK(err == EHOSTUNREACH,
			      "socket %d: POLLERR, but SO_ERROR is %s", i,
			      errname(err));
			CHECK(sockopt_get(p[i].fd, SOL_SOCKET, SO_ERROR) == 0,
			      "socket %d: the error was reported twice", i);
			check_fallen_back(p[i].fd, SDP_FB_ADDR_ERROR);
			close(p[i].fd);
			p[i].fd = -1;
			left--;
		}
	}
	CHECK(!left, "%d of %d connects did not fail in %d ms", left,
	      PE_SOCKS, 4 * WAIT_MS);
	tap_diag("%lld polls", polls);
	CHECK(IP("link", "del", "sdpfb4") == 0, "ip link del failed");
}

#define CR_SOCKS	32
#define CR_ROUNDS	6

/*
 * close() while the SDP attempt ends and the fallback starts: the
 * address resolution of CR_SOCKS connects fails at about the same time
 * (nobody answers ARP), and all of them are closed at once around then,
 * a little later each round.  Whether a socket had fallen back or not,
 * it must go, with its TCP socket and its RDMA resources.
 */
static void test_fallback_close_racing(void)
{
	struct rdma_res base, now;
	int fd[CR_SOCKS], i, r;
	char ip[32], b[64], b0[64];
	long long t0;

	TAP_SKIP_IF_HOST("adds a scratch netdev and subnet (sdpfb5, 10.72.0.1/24)");
	silent_subnet("sdpfb5", "10.72.0.1/24");
	CHECK(rdma_res_read(&base) == 0, "rdma resource show");
	for (r = 0; r < CR_ROUNDS; r++) {
		t0 = now_ms();
		for (i = 0; i < CR_SOCKS; i++) {
			struct sockaddr_storage addr;

			snprintf(ip, sizeof(ip), "10.72.0.%d", 2 + i);
			CHECK(make_sockaddr(&addr, ip, 9), "address %s", ip);
			fd[i] = sdp_socket(1, SOCK_NONBLOCK);
			CHECK(connect(fd[i], (struct sockaddr *)&addr,
				      sockaddr_len(&addr)) == -1 &&
			      errno == EINPROGRESS, "connect %s: %s", ip,
			      strerror(errno));
		}
		/* Resolution gives up at 200 ms: close from 150 to 400. */
		while (now_ms() < t0 + 150 + 50 * r)
			usleep(1000);
		for (i = 0; i < CR_SOCKS; i++)
			close(fd[i]);
		wait_no_sockets();
	}
	CHECK(rdma_res_wait(&base, &now, 30000),
	      "RDMA resources after the closes: %s, before: %s",
	      rdma_res_str(&now, b, sizeof(b)),
	      rdma_res_str(&base, b0, sizeof(b0)));
	CHECK(IP("link", "del", "sdpfb5") == 0, "ip link del failed");
}

/*
 * Route resolution fails: the address's device has Soft-RoCE, but an MTU
 * (300) that leaves less than the smallest RoCE MTU (256) after the
 * headers, so the RDMA CM finds no path to it (reason route-error).
 */
static void test_fallback_route_error(void)
{
	TAP_SKIP_IF_HOST("adds a scratch netdev, subnet and Soft-RoCE device (sdpfb2, sdpfbrxe)");
	scratch_netdev("sdpfb2", "300", "10.68.0.1/24", false);
	CHECK(run((const char *const[]){ "rdma", "link", "add", "sdpfbrxe",
					 "type", "rxe", "netdev", "sdpfb2",
					 NULL }) == 0, "rdma link add failed");
	check_reason_at("10.68.0.1", SDP_FB_ROUTE_ERROR, "FallbackRouteError");
	CHECK(run((const char *const[]){ "rdma", "link", "delete", "sdpfbrxe",
					 NULL }) == 0, "rdma link delete failed");
	CHECK(IP("link", "del", "sdpfb2") == 0, "ip link del failed");
}

/* An RDMA CM listener that takes connection requests and never answers. */
struct silent_cm {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
};

/*
 * ... on the test address, any port, and a TCP listener on the same port:
 * the address and port in @addr, the TCP listener returned.  The RDMA
 * CM's port space is not TCP's, so the port it picks may be TCP's
 * already (an earlier test's connection in TIME_WAIT): then another.
 * Over iWARP a plain TCP listener is such a peer by itself (it takes the
 * iWARP CM's connection and never answers its request: tcp_peer_reason())
 * and an RDMA CM listener would hold the TCP port: the TCP listener
 * alone.
 */
static int silent_cm_open(struct silent_cm *s, struct sockaddr_storage *addr,
			  int backlog)
{
	int l, tries = 0;

	if (test_device_iwarp()) {
		s->ec = NULL;
		l = tcp_listener(addr);
		CHECK_OK(listen(l, backlog));
		return l;
	}
	s->ec = rdma_create_event_channel();
	CHECK(s->ec, "rdma_create_event_channel: %s", strerror(errno));
	for (;;) {
		CHECK(rdma_create_id(s->ec, &s->id, NULL, RDMA_PS_TCP) == 0,
		      "rdma_create_id: %s", strerror(errno));
		test_sockaddr(addr, 0);
		CHECK(rdma_bind_addr(s->id, (struct sockaddr *)addr) == 0,
		      "bind: %s", strerror(errno));
		CHECK(rdma_listen(s->id, 1024) == 0, "rdma_listen: %s",
		      strerror(errno));
		sockaddr_set_port(addr, ntohs(rdma_get_src_port(s->id)));
		l = socket(addr->ss_family, SOCK_STREAM, 0);
		CHECK(l >= 0, "socket: %s", strerror(errno));
		if (bind(l, (struct sockaddr *)addr, sockaddr_len(addr)) == 0)
			break;
		CHECK(errno == EADDRINUSE && ++tries < 20,
		      "bind TCP to the RDMA CM's port %d: %s",
		      sockaddr_port(addr), strerror(errno));
		close(l);
		rdma_destroy_id(s->id);
	}
	CHECK_OK(listen(l, backlog));
	return l;
}

/* Reject what came in, then let go. */
static void silent_cm_close(struct silent_cm *s)
{
	struct rdma_cm_event *ev;

	if (!s->ec)
		return;
	fcntl(s->ec->fd, F_SETFL, fcntl(s->ec->fd, F_GETFL) | O_NONBLOCK);
	while (rdma_get_cm_event(s->ec, &ev) == 0) {
		struct rdma_cm_id *child = ev->id;
		bool req = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST;

		if (req)
			rdma_reject(child, NULL, 0);
		rdma_ack_cm_event(ev);
		if (req)
			rdma_destroy_id(child);
	}
	rdma_destroy_id(s->id);
	rdma_destroy_event_channel(s->ec);
}

/*
 * The RDMA CM listener of the port takes connection requests and never
 * answers (librdmacm's, here).  With fallback on, the SDP attempt gives
 * up after SDP_TCP_FALLBACK_TIMEOUT (reason unreachable) and the TCP
 * listener on the same port answers, blocking and nonblocking.  The
 * option reads net.sdp.tcp_fallback_timeout_ms until it is set.  The
 * destination enters the negative cache only when the attempt had the
 * namespace's timeout, not a shorter one of its socket's.
 */
static void test_fallback_unreachable(void)
{
	struct sockaddr_storage addr;
	struct silent_cm cm;
	struct stats before;
	int l, fd, s, i;
	long long t0, ms;

	l = silent_cm_open(&cm, &addr, 8);

	fd = sdp_socket(1, 0);
	CHECK(sockopt_get(fd, SOL_SDP, SDP_TCP_FALLBACK_TIMEOUT) == 3000,
	      "SDP_TCP_FALLBACK_TIMEOUT does not read the default 3000");
	CHECK(write_file(FB_TIMEOUT_SYSCTL, "5000") == 0, "write %s",
	      FB_TIMEOUT_SYSCTL);
	CHECK(sockopt_get(fd, SOL_SDP, SDP_TCP_FALLBACK_TIMEOUT) == 5000,
	      "SDP_TCP_FALLBACK_TIMEOUT does not read the sysctl");
	CHECK(write_file(FB_TIMEOUT_SYSCTL, "3000") == 0, "write %s",
	      FB_TIMEOUT_SYSCTL);
	i = -1;
	CHECK(setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK_TIMEOUT, &i,
			 sizeof(i)) == -1 && errno == EINVAL,
	      "SDP_TCP_FALLBACK_TIMEOUT -1 was taken");
	close(fd);

	/* The cache off: each attempt meets the silent CM. */
	CHECK(write_file(FB_CACHE_SYSCTL, "0") == 0, "write %s",
	      FB_CACHE_SYSCTL);
	for (i = 0; i < 2; i++) {
		bool nonblock = i == 0;

		if (!nonblock)
			CHECK(write_file(FB_CACHE_SYSCTL, "60") == 0,
			      "write %s", FB_CACHE_SYSCTL);
		fd = sdp_socket(1, nonblock ? SOCK_NONBLOCK : 0);
		sockopt_set(fd, SOL_SDP, SDP_TCP_FALLBACK_TIMEOUT, 300);
		CHECK(sockopt_get(fd, SOL_SDP, SDP_TCP_FALLBACK_TIMEOUT) == 300,
		      "SDP_TCP_FALLBACK_TIMEOUT does not read what was set");
		stats_read(&before);
		t0 = now_ms();
		if (nonblock) {
			CHECK(connect(fd, (struct sockaddr *)&addr,
				      sockaddr_len(&addr)) == -1 &&
			      errno == EINPROGRESS, "connect: %s",
			      strerror(errno));
			CHECK(wait_fd(fd, POLLOUT, 10000) == POLLOUT,
			      "not connected within 10 s");
			CHECK(sockopt_get(fd, SOL_SOCKET, SO_ERROR) == 0,
			      "SO_ERROR after the fallback");
		} else {
			CHECK(connect(fd, (struct sockaddr *)&addr,
				      sockaddr_len(&addr)) == 0,
			      "connect: %s", strerror(errno));
		}
		ms = now_ms() - t0;
		CHECK(ms >= 250 && ms < 5000,
		      "fell back after %lld ms, for a 300 ms timeout", ms);
		s = tcp_peer_accept(l);
		check_fallen_back(fd, SDP_FB_UNREACHABLE);
		check_counted(&before, "FallbackUnreachable");
		exchange(fd, s, 4096);
		close(s);
		close(fd);
	}
	/*
	 * A timeout the socket chose, shorter than the namespace's, says
	 * nothing of the destination to the namespace's other sockets.
	 */
	CHECK(!cache_lists(&addr, -1, true),
	      "a socket's 300-ms timeout put the destination in the cache");
	/* The namespace's own does. */
	CHECK(write_file(FB_TIMEOUT_SYSCTL, "300") == 0, "write %s",
	      FB_TIMEOUT_SYSCTL);
	fd = sdp_socket(1, 0);
	CHECK_OK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)));
	s = tcp_peer_accept(l);
	check_fallen_back(fd, SDP_FB_UNREACHABLE);
	close(s);
	close(fd);
	CHECK(cache_lists(&addr, SDP_FB_UNREACHABLE, true),
	      "the destination is not in the negative cache");

	silent_cm_close(&cm);
	close(l);
}

/*
 * examples/sdp_fallback (make demo's listing) makes one connection for
 * each reason it can reach here and says so: over SDP, rejected, cached,
 * from a TCP client, to an address without RDMA, to one nobody answers
 * for (on the test device's network: given up after 300 ms).
 */
static void test_fallback_example(void)
{
	static const char *const want[] = {
		"to the SDP listener:                 sdp\n",
		"to the TCP listener:                 tcp, reason rejected\n",
		"to the TCP listener again:           tcp, reason cached\n",
		"accepted by the SDP listener:        sdp\n",
		"accepted by the SDP listener:        tcp, reason tcp-client\n",
		"to an address without RDMA:          tcp, reason no-device\n",
		"to an address nobody answers for:    tcp, reason unreachable\n",
	};
	struct sockaddr_storage a;
	char cmd[256], silent[INET_ADDRSTRLEN], *out, *dot;
	size_t i;
	int st;

	TAP_SKIP_IF_HOST("adds a scratch netdev and subnet (sdpfb3, 10.69.0.1/24)");
	if (test_device_iwarp())
		tap_skip("the example's SDP listener has fallback on, which iWARP refuses (test_fallback_tcp_client)");
	test_sockaddr(&a, 0);
	if (a.ss_family != AF_INET)
		tap_skip("the example takes IPv4 addresses");
	inet_ntop(AF_INET, &((struct sockaddr_in *)&a)->sin_addr, silent,
		  sizeof(silent));
	dot = strrchr(silent, '.');
	CHECK(dot && !strcmp(dot, ".1"), "test address %s does not end in .1",
	      silent);
	strcpy(dot, ".99");
	scratch_netdev("sdpfb3", "1500", "10.69.0.1/24", false);
	snprintf(cmd, sizeof(cmd), "examples/bin/sdp_fallback %s 10.69.0.1 %s",
		 TEST_ADDR(), silent);
	out = run_capture(cmd, &st);
	CHECK(IP("link", "del", "sdpfb3") == 0, "ip link del failed");
	CHECK(st == 0, "%s: status %d:\n%s", cmd, st, out);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(strstr(out, want[i]), "no '%.*s' in:\n%s",
		      (int)strlen(want[i]) - 1, want[i], out);
	free(out);
}

/* ---- Races: fallbacks amid closes, shutdowns and second connects ---- */

#define RACE_WORKERS	4
#define RACE_MS		5000	/* at least this long */
#define RACE_MAX_MS	90000	/* and until every outcome was seen */
#define RACE_WITNESS_MS	30000	/* the witness's wait for one outcome */
#define RACE_ACCEPTED	32

enum { RACE_TCP, RACE_SILENT, RACE_SDP, RACE_NOBODY, RACE_DSTS };

struct race {
	struct sockaddr_storage dst[RACE_DSTS];
	int lsn[RACE_NOBODY];		/* a listener for each but NOBODY */
	pthread_mutex_t lock;		/* keeps slot[]'s descriptors open */
	int slot[RACE_WORKERS];		/* each worker's socket, or -1 */
	atomic_bool stop;
	atomic_bool failed;
	char why[160];			/* the first failure */
	atomic_long calls, fallbacks, sdp, early_closes;
};

/* The errors a call may meet on a socket whose peer may refuse, reset,
 * never answer, or be shut down by another thread. */
static bool race_errno_ok(int err)
{
	switch (err) {
	case EINPROGRESS: case EALREADY: case EISCONN: case ECONNREFUSED:
	case ECONNRESET: case ECONNABORTED: case ETIMEDOUT: case EHOSTUNREACH:
	case ENETUNREACH: case EAGAIN: case EPIPE: case ENOTCONN:
		return true;
	default:
		return false;
	}
}

/* Count call @what's result @ret; a failure if its error is not one of those. */
static void race_check(struct race *r, const char *what, long ret)
{
	int err = errno;

	atomic_fetch_add(&r->calls, 1);
	if (ret >= 0 || race_errno_ok(err))
		return;
	if (!atomic_exchange(&r->failed, true))
		snprintf(r->why, sizeof(r->why), "%s: %s", what,
			 strerrorname_np(err) ?: "?");
}

/* Accepts on every listener and closes, at once (half of them with a
 * reset) or after RACE_ACCEPTED more: peers that come and go. */
static void *race_acceptor(void *arg)
{
	struct race *r = arg;
	struct linger lg = { 1, 0 };
	int kept[RACE_ACCEPTED], n = 0, i, a;
	struct pollfd p[RACE_NOBODY];

	for (i = 0; i < RACE_ACCEPTED; i++)
		kept[i] = -1;
	while (!atomic_load(&r->stop)) {
		for (i = 0; i < RACE_NOBODY; i++)
			p[i] = (struct pollfd){ r->lsn[i], POLLIN, 0 };
		if (poll(p, RACE_NOBODY, 20) <= 0)
			continue;
		for (i = 0; i < RACE_NOBODY; i++) {
			if (!(p[i].revents & POLLIN))
				continue;
			a = accept4(r->lsn[i], NULL, NULL, SOCK_NONBLOCK);
			if (a < 0)
				continue;
			if (n & 1) {
				setsockopt(a, SOL_SOCKET, SO_LINGER, &lg,
					   sizeof(lg));
				close(a);
			} else {
				if (kept[n % RACE_ACCEPTED] >= 0)
					close(kept[n % RACE_ACCEPTED]);
				kept[n % RACE_ACCEPTED] = a;
			}
			n++;
		}
	}
	for (i = 0; i < RACE_ACCEPTED; i++)
		if (kept[i] >= 0)
			close(kept[i]);
	return NULL;
}

/* Another thread's socket, while it is in use: shutdowns and reads of
 * its state, held open by the lock meanwhile. */
static void *race_chaos(void *arg)
{
	struct race *r = arg;
	unsigned int seed = 77;
	struct sdp_info info;
	socklen_t len;
	int fd, n;

	while (!atomic_load(&r->stop)) {
		pthread_mutex_lock(&r->lock);
		fd = r->slot[rand_r(&seed) % RACE_WORKERS];
		if (fd >= 0) {
			switch (rand_r(&seed) % 4) {
			case 0:
				race_check(r, "shutdown (other thread)",
					   shutdown(fd, rand_r(&seed) % 3));
				break;
			case 1:
				len = sizeof(info);
				race_check(r, "SDP_INFO (other thread)",
					   getsockopt(fd, SOL_SDP, SDP_INFO,
						      &info, &len));
				break;
			case 2:
				race_check(r, "FIONREAD (other thread)",
					   ioctl(fd, FIONREAD, &n));
				break;
			default:
				race_check(r, "poll (other thread)",
					   poll(&(struct pollfd){ fd, POLLIN |
							POLLOUT, 0 }, 1, 0));
				break;
			}
		}
		pthread_mutex_unlock(&r->lock);
		usleep(200);
	}
	return NULL;
}

struct race_worker {
	struct race *r;
	int id;
};

/*
 * One worker: SDP sockets with fallback on (a timeout of 1 ms to 3 s:
 * the short ones race the CM's answer, the long one lets a rejection
 * come first also where the CM answers slowly, as on a debug kernel),
 * blocking or not, to a random destination, and then at once or a
 * little later one of: close, a second connect(), data, a shutdown, a
 * reset, or a wait for the outcome.  Every blocking call is bounded by
 * 200 ms socket timeouts, the wait for the outcome by 4 s: under this
 * load the debug kernel's CM took over 500 ms to reject, and a wait of
 * 300 ms saw no rejection in 90 s of races in one run (2026-12-05).
 */
static void *race_worker(void *arg)
{
	static const int tmo[] = { 1, 10, 50, 3000 };
	struct race_worker *rw = arg;
	struct race *r = rw->r;
	struct timeval tv = { 0, 200000 };
	struct linger lg = { 1, 0 };
	unsigned int seed = rw->id * 7919 + 1;
	struct sdp_info info;
	char buf[4096] = { 0 };
	socklen_t len;
	int fd, d, nb, ms;
	long ret;

	while (!atomic_load(&r->stop) && !atomic_load(&r->failed)) {
		nb = rand_r(&seed) & 1;
		fd = socket(AF_INET_SDP, SOCK_STREAM | (nb ? SOCK_NONBLOCK : 0),
			    0);
		if (fd < 0) {
			race_check(r, "socket", -1);
			if (errno == EMFILE || errno == ENFILE)
				break;
			continue;
		}
		d = rand_r(&seed) % RACE_DSTS;
		ms = tmo[rand_r(&seed) % 4];
		/*
		 * Over iWARP a fallback from the SDP destination is a TCP
		 * client of the iWARP CM's listening socket.  Soft-iWARP as
		 * the kernels ship it takes such a client that closes before
		 * it was accepted for the listener's own peer closing, and
		 * the listener's close then puts its endpoint once too often
		 * (a WARNING in siw_cep_put(), a BUG in the list_del() after
		 * it; TESTING.md, "siw's own").  The test bed's siw.ko has
		 * that fixed (scripts/siw-patches/); on a host's own device
		 * the SDP destination gets the timeout long enough for its
		 * answer, and the others race as everywhere.
		 */
		if (d == RACE_SDP && test_device_iwarp() && test_host_mode())
			ms = tmo[3];
		setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK, &(int){ 1 },
			   sizeof(int));
		setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK_TIMEOUT, &ms,
			   sizeof(int));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		pthread_mutex_lock(&r->lock);
		r->slot[rw->id] = fd;
		pthread_mutex_unlock(&r->lock);

		race_check(r, "connect", connect(fd, (void *)&r->dst[d],
						 sockaddr_len(&r->dst[d])));
		switch (rand_r(&seed) % 6) {
		case 0:		/* close during the attempt */
			atomic_fetch_add(&r->early_closes, 1);
			break;
		case 1:		/* data, once writable */
			poll(&(struct pollfd){ fd, POLLOUT, 0 }, 1,
			     rand_r(&seed) % 100);
			ret = send(fd, buf, sizeof(buf),
				   MSG_DONTWAIT | MSG_NOSIGNAL);
			race_check(r, "send", ret);
			race_check(r, "recv", recv(fd, buf, sizeof(buf),
						   MSG_DONTWAIT));
			break;
		case 2:		/* connect() again, during or after */
			usleep(rand_r(&seed) % 20000);
			race_check(r, "second connect",
				   connect(fd, (void *)&r->dst[d],
					   sockaddr_len(&r->dst[d])));
			break;
		case 3:
			race_check(r, "shutdown",
				   shutdown(fd, rand_r(&seed) % 3));
			break;
		case 4:		/* wait for the outcome; count it */
			poll(&(struct pollfd){ fd, POLLOUT, 0 }, 1, 4000);
			len = sizeof(info);
			ret = getsockopt(fd, SOL_SDP, SDP_INFO, &info, &len);
			race_check(r, "SDP_INFO", ret);
			if (ret < 0)
				break;
			if (info.sdpi_transport == SDP_TRANSPORT_TCP)
				atomic_fetch_add(&r->fallbacks, 1);
			else if (d == RACE_SDP)
				atomic_fetch_add(&r->sdp, 1);
			break;
		default:	/* a reset */
			usleep(rand_r(&seed) % 20000);
			setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			break;
		}
		pthread_mutex_lock(&r->lock);
		r->slot[rw->id] = -1;
		close(fd);
		pthread_mutex_unlock(&r->lock);
	}
	return NULL;
}

/*
 * The witness: beside the workers, one connect() at a time, in turn to
 * the rejecting, the silent and the SDP destination, each waited for
 * (RACE_WITNESS_MS at most, a failure if it takes longer), with a
 * fallback timeout long enough for a slow CM's answer or, to the silent
 * one, short.  The workers' outcomes come by chance (another thread may
 * shut the socket down first); the witness's come whatever the races do
 * to the CM, so each outcome is seen on a slow kernel too.
 */
static void *race_witness(void *arg)
{
	static const struct { int dst, ms; } turn[] = {
		{ RACE_TCP, 10000 }, { RACE_SILENT, 100 }, { RACE_SDP, 10000 },
	};
	struct race *r = arg;
	struct sdp_info info;
	socklen_t len;
	int fd, d, n = 0;
	long ret;

	while (!atomic_load(&r->stop) && !atomic_load(&r->failed)) {
		d = turn[n % 3].dst;
		fd = socket(AF_INET_SDP, SOCK_STREAM | SOCK_NONBLOCK, 0);
		race_check(r, "socket (witness)", fd);
		if (fd < 0)
			break;
		setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK, &(int){ 1 },
			   sizeof(int));
		setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK_TIMEOUT,
			   &turn[n++ % 3].ms, sizeof(int));
		race_check(r, "connect (witness)",
			   connect(fd, (void *)&r->dst[d],
				   sockaddr_len(&r->dst[d])));
		ret = poll(&(struct pollfd){ fd, POLLOUT, 0 }, 1,
			   RACE_WITNESS_MS);
		if (ret == 0 && !atomic_exchange(&r->failed, true))
			snprintf(r->why, sizeof(r->why),
				 "the witness's connect() to destination %d had no outcome in %d ms",
				 d, RACE_WITNESS_MS);
		len = sizeof(info);
		ret = getsockopt(fd, SOL_SDP, SDP_INFO, &info, &len);
		race_check(r, "SDP_INFO (witness)", ret);
		if (ret == 0 && info.sdpi_transport == SDP_TRANSPORT_TCP)
			atomic_fetch_add(&r->fallbacks, 1);
		else if (ret == 0 && d == RACE_SDP)
			atomic_fetch_add(&r->sdp, 1);
		close(fd);
	}
	return NULL;
}

/* Has every outcome the races must include happened since @before? */
static bool race_all_seen(struct race *r, const struct stats *before)
{
	struct stats now;

	stats_read(&now);
	return atomic_load(&r->fallbacks) > 0 && atomic_load(&r->sdp) > 0 &&
	       atomic_load(&r->early_closes) > 0 &&
	       stat_of(&now, "FallbackRejected") >
	       stat_of(before, "FallbackRejected") &&
	       stat_of(&now, "FallbackUnreachable") >
	       stat_of(before, "FallbackUnreachable");
}

/*
 * Fallbacks racing everything else a program may do to the socket: for
 * RACE_MS and then until each outcome below has happened (at most
 * RACE_MAX_MS: a slow kernel needs longer to see a rejection win its
 * race), workers make connects with fallback on to a TCP-only
 * listener (rejected), to a port whose RDMA CM never answers (given up
 * after 1 ms to 3 s: unreachable), to an SDP listener with fallback on
 * (SDP) and to a port nobody has (refused by both), and close, reset,
 * shut down or connect again at once or a little later, while another
 * thread shuts the same sockets down and reads their state, and a
 * witness connects to one destination at a time and waits for each
 * outcome.  The negative cache is off, so that every connect() makes
 * its SDP attempt.  (Over iWARP the TCP-only listener does not answer
 * either, and the rejections come from the port nobody has: the refusal
 * of the iWARP CM's TCP connection.)
 * Every call returns (bounded), with an error TCP could give; fallbacks
 * happened; afterwards no socket, CM id or QP is left.
 */
static void test_fallback_races(void)
{
	struct race_worker rw[RACE_WORKERS];
	pthread_t wt[RACE_WORKERS], at, ct, wit;
	struct stats before, after;
	struct rdma_res base, now;
	struct silent_cm cm;
	struct race r = { 0 };
	char b[64], b0[64];
	int i, l, t;

	CHECK(rdma_res_read(&base) == 0, "rdma resource show");
	pthread_mutex_init(&r.lock, NULL);
	for (i = 0; i < RACE_WORKERS; i++)
		r.slot[i] = -1;
	r.lsn[RACE_TCP] = tcp_listener(&r.dst[RACE_TCP]);
	/* The silent RDMA CM, and TCP on its port. */
	r.lsn[RACE_SILENT] = silent_cm_open(&cm, &r.dst[RACE_SILENT], 64);
	/*
	 * SDP, with fallback on: TCP on its port too; over iWARP, where a
	 * listener cannot have it (test_fallback_tcp_client), without.
	 */
	l = sdp_socket(!test_device_iwarp(), 0);
	test_sockaddr(&r.dst[RACE_SDP], 0);
	CHECK_OK(bind(l, (struct sockaddr *)&r.dst[RACE_SDP],
		      sockaddr_len(&r.dst[RACE_SDP])));
	CHECK_OK(listen(l, 64));
	local_addr(l, &r.dst[RACE_SDP]);
	r.lsn[RACE_SDP] = l;
	/* Nobody: a port just let go of. */
	l = tcp_listener(&r.dst[RACE_NOBODY]);
	close(l);

	CHECK(write_file(FB_CACHE_SYSCTL, "0") == 0, "write %s",
	      FB_CACHE_SYSCTL);
	stats_read(&before);
	CHECK(pthread_create(&at, NULL, race_acceptor, &r) == 0, "thread");
	CHECK(pthread_create(&ct, NULL, race_chaos, &r) == 0, "thread");
	CHECK(pthread_create(&wit, NULL, race_witness, &r) == 0, "thread");
	for (i = 0; i < RACE_WORKERS; i++) {
		rw[i] = (struct race_worker){ &r, i };
		CHECK(pthread_create(&wt[i], NULL, race_worker, &rw[i]) == 0,
		      "thread");
	}
	sleep_ms_poll(RACE_MS);
	for (t = RACE_MS; t < RACE_MAX_MS && !atomic_load(&r.failed) &&
	     !race_all_seen(&r, &before); t += 250)
		sleep_ms_poll(250);
	atomic_store(&r.stop, true);
	for (i = 0; i < RACE_WORKERS; i++)
		CHECK(join_ms(wt[i], 30000) == 0,
		      "worker %d did not return within 30 s", i);
	CHECK(join_ms(ct, 30000) == 0 && join_ms(at, 30000) == 0 &&
	      join_ms(wit, RACE_WITNESS_MS + 5000) == 0,
	      "a helper thread did not return in time");
	stats_read(&after);
	CHECK(write_file(FB_CACHE_SYSCTL, "60") == 0, "write %s",
	      FB_CACHE_SYSCTL);
	tap_diag("%d ms: %ld calls, %ld fallbacks and %ld SDP connections seen, %ld closes during the attempt; FallbackRejected +%lld, FallbackUnreachable +%lld, FallbackTcpClient +%lld",
		 t, atomic_load(&r.calls), atomic_load(&r.fallbacks),
		 atomic_load(&r.sdp), atomic_load(&r.early_closes),
		 stat_of(&after, "FallbackRejected") -
		 stat_of(&before, "FallbackRejected"),
		 stat_of(&after, "FallbackUnreachable") -
		 stat_of(&before, "FallbackUnreachable"),
		 stat_of(&after, "FallbackTcpClient") -
		 stat_of(&before, "FallbackTcpClient"));
	CHECK(!atomic_load(&r.failed), "%s", r.why);
	CHECK(atomic_load(&r.fallbacks) > 0 && atomic_load(&r.sdp) > 0 &&
	      atomic_load(&r.early_closes) > 0, "the races did not happen");
	CHECK(stat_of(&after, "FallbackRejected") >
	      stat_of(&before, "FallbackRejected") &&
	      stat_of(&after, "FallbackUnreachable") >
	      stat_of(&before, "FallbackUnreachable"),
	      "no fallback for a rejection or for no answer");

	for (i = 0; i < RACE_NOBODY; i++)
		close(r.lsn[i]);
	silent_cm_close(&cm);
	wait_no_sockets();
	CHECK(rdma_res_wait(&base, &now, 30000),
	      "RDMA resources after the races: %s, before: %s",
	      rdma_res_str(&now, b, sizeof(b)),
	      rdma_res_str(&base, b0, sizeof(b0)));
}

/* ---- the fallback's TCP sockets, as a hostile user or peer sees them ---- */

/* A connection in /proc/net/tcp (or tcp6): its state, timer and owner. */
struct tcp_row {
	unsigned int st;	/* TCP_ESTABLISHED, ... */
	unsigned int timer;	/* 0 none, 1 retransmit, 2 keepalive, 4 probe */
	unsigned int uid;
	unsigned long tx_queue;
};

/*
 * The row of the connection from local port @lport to remote port @rport
 * in the namespace of this process; false if there is none.
 */
static bool tcp_row_of(int family, uint16_t lport, uint16_t rport,
		       struct tcp_row *r)
{
	FILE *f = fopen(family == AF_INET6 ? "/proc/net/tcp6" : "/proc/net/tcp",
			"r");
	char line[512], la[64], ra[64];
	unsigned int lp, rp, tr;
	unsigned long txq, rxq;
	bool found = false;

	CHECK(f, "/proc/net/tcp: %s", strerror(errno));
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %*u: %63[0-9A-Fa-f]:%x %63[0-9A-Fa-f]:%x %x %lx:%lx %x:%*x %*x %u",
			   la, &lp, ra, &rp, &r->st, &txq, &rxq, &tr,
			   &r->uid) != 9)
			continue;
		if (lp != lport || rp != rport)
			continue;
		r->timer = tr;
		r->tx_queue = txq;
		found = true;
	}
	fclose(f);
	return found;
}

/* @fd's local and remote ports. */
static void ports_of(int fd, uint16_t *lport, uint16_t *rport)
{
	struct sockaddr_storage a;

	local_addr(fd, &a);
	*lport = sockaddr_port(&a);
	peer_addr(fd, &a);
	*rport = sockaddr_port(&a);
}

/*
 * Run @fn(@arg) in a child as uid/gid 65534, in the cgroup @cgroup
 * unless NULL; its exit status.
 */
static int as_nobody(const char *cgroup, int (*fn)(void *arg), void *arg)
{
	char procs[256];
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
		if (cgroup && write_file(procs, "0"))
			_exit(3);
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(fn(arg));
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int fallback_uid_child(void *arg)
{
	const struct sockaddr_storage *addr = arg;
	struct sdp_info info;
	socklen_t len = sizeof(info);
	uint16_t lport, rport;
	struct tcp_row r;
	int fd, one = 1;

	fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK, &one, sizeof(one)))
		return 10;
	if (connect(fd, (const struct sockaddr *)addr, sockaddr_len(addr)))
		return 11;
	if (getsockopt(fd, SOL_SDP, SDP_INFO, &info, &len))
		return 12;
	/* The reason it did fall back for, for the message. */
	if (info.sdpi_fallback_reason != tcp_peer_reason())
		return 20 + (info.sdpi_fallback_reason & 0x1f);
	ports_of(fd, &lport, &rport);
	if (!tcp_row_of(addr->ss_family, lport, rport, &r))
		return 13;
	return r.uid == 65534 ? 0 : 14;
}

/*
 * The TCP socket of a fallback is its user's: a connect() by uid 65534,
 * whose SDP attempt the peer rejects (the fallback then starts in the RDMA
 * CM's worker), has a TCP connection that /proc/net/tcp (as ss -e) shows
 * owned by 65534, not by root.
 */
static void test_fallback_tcp_socket_is_the_users(void)
{
	struct sockaddr_storage addr;
	int l = tcp_listener(&addr), st;

	st = as_nobody(NULL, fallback_uid_child, &addr);
	CHECK(st < 20 || st >= 64, "uid 65534's fallback: reason %d, not %u",
	      st - 20, tcp_peer_reason());
	CHECK(st == 0, "uid 65534's fallback: %s",
	      st == 11 ? "connect failed" :
	      st == 12 ? "SDP_INFO failed" :
	      st == 13 ? "no TCP connection in /proc/net/tcp" :
	      st == 14 ? "its TCP connection is not owned by uid 65534" :
			 "the child failed");
	close(l);
}

/* A cgroup-BPF program that refuses every connect() of @family. */
static int bpf_deny_connect(int family)
{
	struct bpf_insn insns[] = {
		/* r0 = 0 (deny); exit */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_CGROUP_SOCK_ADDR;
	a.expected_attach_type = family == AF_INET6 ?
				 BPF_CGROUP_INET6_CONNECT :
				 BPF_CGROUP_INET4_CONNECT;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uintptr_t)"GPL";
	return syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a));
}

#define CGROUP_ROOT	"/sys/fs/cgroup"
#define CGROUP_DENY	CGROUP_ROOT "/sdp-test-deny"

static int cgroup_deny_child(void *arg)
{
	const struct sockaddr_storage *addr = arg;
	int fd, one = 1;

	/* The policy holds for TCP ... */
	fd = socket(addr->ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		return 11;
	if (connect(fd, (const struct sockaddr *)addr, sockaddr_len(addr)) !=
	    -1 || errno != EPERM)
		return 12;
	close(fd);
	/* ... and for an SDP socket that falls back to TCP. */
	fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK, &one, sizeof(one)))
		return 13;
	if (connect(fd, (const struct sockaddr *)addr, sockaddr_len(addr)) !=
	    -1)
		return 14;
	return errno == EPERM ? 0 : 15;
}

/*
 * A cgroup-BPF connect program (what systemd's IPAddressDeny= and
 * SocketBindDeny= use) that denies the destination denies the fallback
 * too: the TCP socket is in its user's cgroup, not the kernel worker's.
 */
static void test_fallback_cgroup_bpf_connect_denied(void)
{
	struct sockaddr_storage addr;
	union bpf_attr a;
	int l, prog, cg, st;

	TAP_SKIP_IF_HOST("makes a cgroup at the root of the host's hierarchy and attaches a BPF program to it");
	if (access(CGROUP_ROOT "/cgroup.procs", F_OK)) {
		mkdir(CGROUP_ROOT, 0755);
		CHECK(mount("cgroup2", CGROUP_ROOT, "cgroup2", 0, NULL) == 0,
		      "mount cgroup2: %s", strerror(errno));
	}
	l = tcp_listener(&addr);
	rmdir(CGROUP_DENY);
	CHECK_OK(mkdir(CGROUP_DENY, 0755));
	cg = open(CGROUP_DENY, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(cg >= 0, "%s: %s", CGROUP_DENY, strerror(errno));
	prog = bpf_deny_connect(addr.ss_family);
	CHECK(prog >= 0, "BPF_PROG_LOAD: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.target_fd = cg;
	a.attach_bpf_fd = prog;
	a.attach_type = addr.ss_family == AF_INET6 ? BPF_CGROUP_INET6_CONNECT :
						     BPF_CGROUP_INET4_CONNECT;
	CHECK(syscall(__NR_bpf, BPF_PROG_ATTACH, &a, sizeof(a)) == 0,
	      "BPF_PROG_ATTACH: %s", strerror(errno));

	st = as_nobody(CGROUP_DENY, cgroup_deny_child, &addr);
	CHECK(st == 0, "in a cgroup that denies connect(): %s",
	      st == 3 ? "could not join the cgroup" :
	      st == 12 ? "plain TCP was not denied (EPERM)" :
	      st == 14 ? "the fallback connected around the policy" :
	      st == 15 ? "the fallback failed, but not with EPERM" :
			 "the child failed");

	CHECK_OK(syscall(__NR_bpf, BPF_PROG_DETACH, &a, sizeof(a)));
	close(prog);
	close(cg);
	CHECK_OK(rmdir(CGROUP_DENY));
	close(l);
}

#define ORPHAN_RETRIES	"/proc/sys/net/ipv4/tcp_orphan_retries"
#define PEER_NS		"sdpfbpeer"
#define PEER_ADDR	"10.73.0.2"

/*
 * A peer host that can go silent: the network namespace PEER_NS behind
 * a veth pair (no RDMA device: SDP falls back for that), 10.73.0.1 here
 * and PEER_ADDR there; sdpv0 down, and nothing reaches it any more.
 */
static void peer_ns_up(void)
{
	IP("netns", "del", PEER_NS);
	IP("link", "del", "sdpv0");
	CHECK(IP("netns", "add", PEER_NS) == 0, "ip netns add failed");
	CHECK(IP("link", "add", "sdpv0", "type", "veth", "peer", "name",
		 "sdpv1", "netns", PEER_NS) == 0, "ip link add veth failed");
	CHECK(IP("addr", "add", "10.73.0.1/24", "dev", "sdpv0") == 0 &&
	      IP("link", "set", "sdpv0", "up") == 0 &&
	      IP("-n", PEER_NS, "addr", "add", PEER_ADDR "/24", "dev",
		 "sdpv1") == 0 &&
	      IP("-n", PEER_NS, "link", "set", "sdpv1", "up") == 0,
	      "addressing the veth pair failed");
}

static void peer_ns_down(void)
{
	CHECK(IP("link", "del", "sdpv0") == 0, "ip link del failed");
	CHECK(IP("netns", "del", PEER_NS) == 0, "ip netns del failed");
}

/*
 * A TCP server in PEER_NS (a child process, killed with its process
 * group by the test runner) that accepts @n clients and never reads,
 * with small buffers; its address in @addr.
 */
static pid_t peer_ns_sink(struct sockaddr_storage *addr, int n)
{
	int pipefd[2], l, fd, i;
	socklen_t len;
	pid_t pid;

	CHECK_OK(pipe(pipefd));
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		fd = open("/run/netns/" PEER_NS, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWNET))
			_exit(2);
		len = make_sockaddr(addr, PEER_ADDR, 0);
		l = socket(AF_INET, SOCK_STREAM, 0);
		set_bufsize(l, 4096);
		if (bind(l, (struct sockaddr *)addr, len) || listen(l, n) ||
		    getsockname(l, (struct sockaddr *)addr, &len) ||
		    write(pipefd[1], addr, sizeof(*addr)) != sizeof(*addr))
			_exit(3);
		for (i = 0; i < n; i++)
			if (accept(l, NULL, NULL) < 0)
				_exit(4);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	CHECK(read(pipefd[0], addr, sizeof(*addr)) == sizeof(*addr),
	      "the peer namespace's server did not start");
	close(pipefd[0]);
	return pid;
}

/*
 * @c connected to a peer that never reads: fill what it takes, and note
 * its ports.
 */
static void fill(int c, uint16_t *lport, uint16_t *rport)
{
	char buf[4096];
	int i;

	set_nonblock(c, true);
	memset(buf, 'o', sizeof(buf));
	for (i = 0; i < 4096 && write(c, buf, sizeof(buf)) > 0; i++)
		;
	CHECK(errno == EAGAIN, "filling: %s", strerror(errno));
	ports_of(c, lport, rport);
}

/*
 * A closed fallen-back socket's TCP connection lives on as a user TCP
 * socket's does, side by side with a plain TCP socket's: both fill what
 * a peer that never reads takes, the peer goes silent (its link down),
 * and both close with their data queued.  Each orphan keeps trying (a
 * timer in /proc/net/tcp) and is reaped after
 * net.ipv4.tcp_orphan_retries tries.  (A kernel socket's timers stop at
 * close: its orphan would hold its data, unsent, for ever, and a peer
 * that came back would never get the rest, nor a FIN.)
 */
static void test_fallback_orphan_as_tcp(void)
{
	struct sockaddr_storage addr;
	uint16_t lp[2], rp[2];
	struct tcp_row r[2];
	long long t0;
	bool gone[2];
	pid_t sink;
	int c[2], i;

	TAP_SKIP_IF_HOST("adds a network namespace (sdpfbpeer), a veth pair and a subnet, and sets net.ipv4.tcp_orphan_retries");
	peer_ns_up();
	sink = peer_ns_sink(&addr, 2);

	c[0] = socket(addr.ss_family, SOCK_STREAM, 0);
	CHECK_OK(connect(c[0], (struct sockaddr *)&addr, sockaddr_len(&addr)));
	c[1] = sdp_socket(1, 0);
	CHECK_OK(connect(c[1], (struct sockaddr *)&addr, sockaddr_len(&addr)));
	check_fallen_back(c[1], SDP_FB_NO_DEVICE);
	for (i = 0; i < 2; i++)
		fill(c[i], &lp[i], &rp[i]);
	/* The peer goes silent, then both close with their data queued. */
	CHECK(IP("link", "set", "sdpv0", "down") == 0, "ip link set down");
	close(c[0]);
	close(c[1]);

	/* Both keep trying ... */
	t0 = now_ms();
	do {
		for (i = 0; i < 2; i++)
			CHECK(tcp_row_of(addr.ss_family, lp[i], rp[i], &r[i]),
			      "%s orphan gone at once",
			      i ? "the fallback's" : "plain TCP's");
		if (r[0].timer && r[1].timer)
			break;
		sleep_ms_poll(20);
	} while (now_ms() - t0 < WAIT_MS);
	CHECK(r[0].timer, "plain TCP's orphan has no timer (st %02X)",
	      r[0].st);
	CHECK(r[1].timer,
	      "the fallback's orphan has no timer: st %02X, %lu bytes queued",
	      r[1].st, r[1].tx_queue);

	/*
	 * ... and both are reaped after one more try (tests/lib/tap.c puts
	 * the sysctl back), within a bound.
	 */
	CHECK(write_file(ORPHAN_RETRIES, "1") == 0, "write %s", ORPHAN_RETRIES);
	t0 = now_ms();
	do {
		for (i = 0; i < 2; i++)
			gone[i] = !tcp_row_of(addr.ss_family, lp[i], rp[i],
					      &r[i]);
		if (gone[0] && gone[1])
			break;
		sleep_ms_poll(100);
	} while (now_ms() - t0 < 30000);
	CHECK(gone[0], "plain TCP's orphan not reaped in 30 s");
	CHECK(gone[1], "the fallback's orphan not reaped in 30 s (timer %u, st %02X)",
	      r[1].timer, r[1].st);

	kill(sink, SIGKILL);
	waitpid(sink, NULL, 0);
	peer_ns_down();
}

/*
 * The namespace goes while a fallen-back socket's orphan lingers: in a
 * new network namespace (no RDMA device there: fallback for no device),
 * a connection to a peer that never reads; the socket closes with data
 * queued, the loopback goes down (the peer's reset never comes), and
 * every process leaves the namespace.  The orphan keeps its namespace
 * until it is reaped; a debug kernel (KASAN, slub_debug) reports any use
 * of a freed one, and the harness fails on it.
 */
static void test_fallback_netns_dismantled(void)
{
	pid_t pid = fork();
	int status;

	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		struct ifreq ifr = { .ifr_name = "lo" };
		char buf[4096];
		socklen_t len = sizeof(a);
		int l, c, s, i, one = 1, ctl;

		if (unshare(CLONE_NEWNET))
			_exit(10);
		ctl = socket(AF_INET, SOCK_DGRAM, 0);
		ifr.ifr_flags = IFF_UP;
		if (ctl < 0 || ioctl(ctl, SIOCSIFFLAGS, &ifr))
			_exit(11);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		l = socket(AF_INET, SOCK_STREAM, 0);
		set_bufsize(l, 4096);
		if (l < 0 || bind(l, (struct sockaddr *)&a, len) ||
		    listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &len))
			_exit(12);
		c = socket(AF_INET_SDP, SOCK_STREAM, 0);
		if (c < 0 ||
		    setsockopt(c, SOL_SDP, SDP_TCP_FALLBACK, &one, sizeof(one)) ||
		    connect(c, (struct sockaddr *)&a, sizeof(a)))
			_exit(13);
		s = accept(l, NULL, NULL);
		if (s < 0)
			_exit(14);
		set_nonblock(c, true);
		memset(buf, 'n', sizeof(buf));
		for (i = 0; i < 4096 && write(c, buf, sizeof(buf)) > 0; i++)
			;
		close(c);
		ifr.ifr_flags = 0;
		if (ioctl(ctl, SIOCSIFFLAGS, &ifr))
			_exit(15);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the child in its namespace failed: status %#x", status);
	/* The namespace's teardown runs in the background meanwhile. */
	sleep_ms_poll(2000);
}

/*
 * No upper layer protocol on a fallen-back socket: kTLS would keep the
 * module's callbacks as TCP's and call them after the module let go of
 * the socket.  TCP_ULP fails with EOPNOTSUPP, and the connection goes on.
 */
static void test_fallback_no_ulp(void)
{
	struct sockaddr_storage addr;
	int l = tcp_listener(&addr), fd = sdp_socket(1, 0), s;

	CHECK_OK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)));
	s = tcp_peer_accept(l);
	check_fallen_back(fd, tcp_peer_reason());
	CHECK(setsockopt(fd, SOL_TCP, TCP_ULP, "tls", 3) == -1 &&
	      errno == EOPNOTSUPP, "TCP_ULP tls: %s, not EOPNOTSUPP",
	      errno ? strerror(errno) : "taken");
	exchange(fd, s, 4096);
	close(fd);
	close(s);
	close(l);
}

static int cache_poison_child(void *arg)
{
	const struct sockaddr_storage *addr = arg;
	struct sdp_info info;
	socklen_t len = sizeof(info);
	int fd, one = 1, ms = 1;

	fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK_TIMEOUT, &ms, sizeof(ms)))
		return 10;
	if (connect(fd, (const struct sockaddr *)addr, sockaddr_len(addr)))
		return 11;
	if (getsockopt(fd, SOL_SDP, SDP_INFO, &info, &len))
		return 12;
	return info.sdpi_fallback_reason == SDP_FB_UNREACHABLE ? 0 : 13;
}

/*
 * The negative cache holds what the destination decided, not what one
 * user's socket chose: uid 65534's connect() with a 1-ms fallback timeout
 * gives up on SDP (unreachable: the RDMA CM there takes requests and
 * does not answer in time), but the destination does not enter the
 * cache, and another user's connect() makes its own SDP attempt (given
 * up after the namespace's timeout, then cached), not a cached one.
 */
static void test_fallback_cache_not_poisoned(void)
{
	struct sockaddr_storage addr;
	struct stats before, after;
	struct silent_cm cm;
	int l, c, s, st;

	l = silent_cm_open(&cm, &addr, 8);
	CHECK(write_file(FB_TIMEOUT_SYSCTL, "300") == 0, "write %s",
	      FB_TIMEOUT_SYSCTL);

	st = as_nobody(NULL, cache_poison_child, &addr);
	CHECK(st == 0, "uid 65534's 1-ms connect: %s",
	      st == 11 ? "connect failed" :
	      st == 13 ? "not given up as unreachable" : "the child failed");
	close(tcp_peer_accept(l));
	CHECK(!cache_lists(&addr, -1, true),
	      "a 1-ms timeout put the destination in the negative cache");

	stats_read(&before);
	c = sdp_socket(1, 0);
	CHECK_OK(connect(c, (struct sockaddr *)&addr, sockaddr_len(&addr)));
	s = tcp_peer_accept(l);
	check_fallen_back(c, SDP_FB_UNREACHABLE);
	stats_read(&after);
	CHECK(stat_of(&after, "FallbackCached") ==
	      stat_of(&before, "FallbackCached"),
	      "another user's connect() was sent to TCP from the cache");
	CHECK(cache_lists(&addr, SDP_FB_UNREACHABLE, true),
	      "the namespace's own timeout did not cache the destination");
	close(s);
	close(c);
	silent_cm_close(&cm);
	close(l);
}

/*
 * A destination in the cache whose TCP connect fails is tried over SDP
 * again: the peer rejected SDP (cached), then nobody listens on TCP
 * either; the refused connect() takes it out of the cache, and the next
 * connect() makes an SDP attempt (FallbackRejected, not FallbackCached).
 */
static void test_fallback_cache_forgets_refused(void)
{
	struct sockaddr_storage addr;
	struct stats before, after;
	int l = tcp_listener(&addr), fd, s;

	fd = sdp_socket(1, 0);
	CHECK_OK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)));
	s = tcp_peer_accept(l);
	close(s);
	close(fd);
	CHECK(cache_lists(&addr, tcp_peer_reason(), true),
	      "the destination is not in the cache");
	close(l);		/* TCP refuses it now too */
	fd = sdp_socket(1, 0);
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == -1 &&
	      errno == ECONNREFUSED, "connect: %s, not ECONNREFUSED",
	      strerror(errno));
	check_fallen_back(fd, SDP_FB_CACHED);
	close(fd);
	CHECK(!cache_lists(&addr, -1, true),
	      "a refused TCP connect left the destination in the cache");
	stats_read(&before);
	fd = sdp_socket(1, 0);
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == -1 &&
	      errno == ECONNREFUSED, "connect: %s, not ECONNREFUSED",
	      strerror(errno));
	close(fd);
	stats_read(&after);
	CHECK(stat_of(&after, "FallbackRejected") -
	      stat_of(&before, "FallbackRejected") == 1 &&
	      stat_of(&after, "FallbackCached") ==
	      stat_of(&before, "FallbackCached"),
	      "FallbackRejected +%lld, FallbackCached +%lld: SDP not tried again",
	      stat_of(&after, "FallbackRejected") -
	      stat_of(&before, "FallbackRejected"),
	      stat_of(&after, "FallbackCached") -
	      stat_of(&before, "FallbackCached"));
}

/*
 * SDP_NO_IWARP: reads 0 by default, takes only 0 and 1.  Over an iWARP
 * device a connect() with it makes no SDP attempt: with fallback on it
 * connects over TCP at once (reason iwarp, FallbackIwarp, not cached),
 * though the socket's fallback timeout is 10 s, and the TCP listener's
 * program reads the client's bytes first, no iWARP connection request;
 * without fallback it fails with ENETUNREACH, even towards an SDP
 * listener.  Over other devices the option changes nothing: the SDP
 * listener is reached over SDP, and the TCP one is fallen back to for
 * the usual reason.
 */
static void test_fallback_no_iwarp(void)
{
	static const char hello[] = "the client's first bytes";
	bool iwarp = test_device_iwarp();
	struct sockaddr_storage addr;
	struct stats before, after;
	char buf[sizeof(hello)];
	socklen_t len = sizeof(int);
	int l, fd, s, v = -1;
	long long t0, ms;

	fd = sdp_socket(0, 0);
	CHECK_OK(getsockopt(fd, SOL_SDP, SDP_NO_IWARP, &v, &len));
	CHECK(v == 0, "SDP_NO_IWARP reads %d by default", v);
	v = 2;
	CHECK(setsockopt(fd, SOL_SDP, SDP_NO_IWARP, &v, sizeof(v)) == -1 &&
	      errno == EINVAL, "SDP_NO_IWARP 2 was taken");
	sockopt_set(fd, SOL_SDP, SDP_NO_IWARP, 1);
	len = sizeof(int);
	CHECK_OK(getsockopt(fd, SOL_SDP, SDP_NO_IWARP, &v, &len));
	CHECK(v == 1, "SDP_NO_IWARP reads %d after 1", v);

	/* Without fallback, towards an SDP listener. */
	l = sdp_listener(0, &addr);
	errno = 0;
	if (iwarp) {
		CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == -1 &&
		      errno == ENETUNREACH, "connect over iWARP with SDP_NO_IWARP: %s, not ENETUNREACH",
		      errno ? strerror(errno) : "connected");
	} else {
		CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == 0,
		      "connect with SDP_NO_IWARP: %s", strerror(errno));
		s = net_accept(l, WAIT_MS);
		check_fallen_back(fd, SDP_FB_NONE);
		exchange(fd, s, 4096);
		close(s);
	}
	close(fd);
	close(l);

	/* With fallback, towards a TCP listener. */
	l = tcp_listener(&addr);
	fd = sdp_socket(1, 0);
	sockopt_set(fd, SOL_SDP, SDP_NO_IWARP, 1);
	sockopt_set(fd, SOL_SDP, SDP_TCP_FALLBACK_TIMEOUT, 10000);
	stats_read(&before);
	t0 = now_ms();
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) == 0,
	      "connect with fallback and SDP_NO_IWARP: %s", strerror(errno));
	ms = now_ms() - t0;
	stats_read(&after);
	check_fallen_back(fd, iwarp ? SDP_FB_IWARP : SDP_FB_REJECTED);
	CHECK(stat_of(&after, "FallbackIwarp") - stat_of(&before, "FallbackIwarp") ==
	      (iwarp ? 1 : 0), "FallbackIwarp +%lld",
	      stat_of(&after, "FallbackIwarp") - stat_of(&before, "FallbackIwarp"));
	if (iwarp) {
		CHECK(ms < 2000, "the fallback took %lld ms, not at once", ms);
		CHECK(!cache_lists(&addr, -1, false),
		      "the destination entered the negative cache");
		/* The program's first connection, and its first bytes. */
		s = net_accept(l, WAIT_MS);
		CHECK(write_all(fd, hello, sizeof(hello)) == (ssize_t)sizeof(hello),
		      "write: %s", strerror(errno));
		CHECK(read_all(s, buf, sizeof(buf)) == (ssize_t)sizeof(buf),
		      "read: %s", strerror(errno));
		CHECK(!memcmp(buf, hello, sizeof(buf)),
		      "the TCP program's first bytes were not the client's: \"%.16s\"",
		      buf);
	} else {
		s = tcp_peer_accept(l);
	}
	exchange(fd, s, 4096);
	close(fd);
	close(s);
	close(l);
}

static const struct tap_test tests[] = {
	TAP_TEST(test_fallback_off),
	TAP_TEST(test_fallback_rejected),
	TAP_TEST(test_fallback_nonblocking_epoll),
	TAP_TEST(test_fallback_refused),
	TAP_TEST(test_fallback_sysctl),
	TAP_TEST(test_fallback_not_needed),
	TAP_TEST(test_fallback_options),
	TAP_TEST(test_fallback_resources),
	TAP_TEST(test_fallback_listed),
	TAP_TEST(test_fallback_tcp_client),
	TAP_TEST(test_fallback_listener_port_free_for_tcp),
	TAP_TEST(test_fallback_cache),
	TAP_TEST(test_fallback_error_once),
	TAP_TEST(test_fallback_sigurg),
	TAP_TEST(test_fallback_no_device),
	TAP_TEST(test_fallback_loopback),
	TAP_TEST(test_fallback_addr_error),
	TAP_TEST(test_fallback_pollerr_so_error),
	TAP_TEST(test_fallback_close_racing),
	TAP_TEST(test_fallback_route_error),
	TAP_TEST(test_fallback_unreachable),
	TAP_TEST(test_fallback_example),
	TAP_TEST(test_fallback_races),
	TAP_TEST(test_fallback_tcp_socket_is_the_users),
	TAP_TEST(test_fallback_cgroup_bpf_connect_denied),
	TAP_TEST(test_fallback_orphan_as_tcp),
	TAP_TEST(test_fallback_netns_dismantled),
	TAP_TEST(test_fallback_no_ulp),
	TAP_TEST(test_fallback_cache_not_poisoned),
	TAP_TEST(test_fallback_cache_forgets_refused),
	TAP_TEST(test_fallback_no_iwarp),
};

TAP_MAIN(tests)
