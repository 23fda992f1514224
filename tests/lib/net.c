// SPDX-License-Identifier: GPL-2.0
/*
 * Socket helpers shared by the SDP test suites; see net.h.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/errqueue.h>
#include <linux/sdp.h>

#include "net.h"
#include "tap.h"
#include "tcpinfo.h"
#include "util.h"

int test_family(void)
{
	const char *f = env_or("SDP_TEST_FAMILY", "sdp");

	return strcmp(f, "tcp") ? AF_INET_SDP : AF_INET;
}

bool test_is_fallback(void)
{
	return !strcmp(env_or("SDP_TEST_FAMILY", "sdp"), "fallback");
}

bool test_is_sdp(void)
{
	return test_family() == AF_INET_SDP && !test_is_fallback();
}

const char *test_family_name(void)
{
	return test_is_fallback() ? "fallback" : test_is_sdp() ? "sdp" : "tcp";
}

/* An SDP socket that falls back to TCP (SDP_TCP_FALLBACK 1). */
static int fallback_socket(int flags)
{
	int fd = socket(AF_INET_SDP, SOCK_STREAM | flags, 0), on = 1;

	if (fd >= 0 &&
	    setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK, &on, sizeof(on))) {
		close(fd);
		return -1;
	}
	return fd;
}

int test_socket(int flags)
{
	struct sockaddr_storage ss;

	if (test_is_fallback())
		return fallback_socket(flags);
	/* For TCP, an IPv6 test address needs an AF_INET6 socket. */
	if (!test_is_sdp() && make_sockaddr(&ss, TEST_ADDR(), 0))
		return test_socket_af(ss.ss_family, flags);
	return socket(test_family(), SOCK_STREAM | flags, 0);
}

int test_socket_af(int af, int flags)
{
	if (test_is_fallback())
		return fallback_socket(flags);
	return socket(test_is_sdp() ? AF_INET_SDP : af, SOCK_STREAM | flags, 0);
}

socklen_t make_sockaddr(struct sockaddr_storage *ss, const char *str,
			uint16_t port)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, str, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		return sizeof(*sin);
	}
	if (inet_pton(AF_INET6, str, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		return sizeof(*sin6);
	}
	return 0;
}

socklen_t test_sockaddr(struct sockaddr_storage *ss, uint16_t port)
{
	socklen_t len = make_sockaddr(ss, TEST_ADDR(), port);

	CHECK(len, "SDP_TEST_ADDR=%s is not an IP address", TEST_ADDR());
	return len;
}

socklen_t sockaddr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					   sizeof(struct sockaddr_in);
}

uint16_t sockaddr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

void sockaddr_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons(port);
}

bool sockaddr_equal(const struct sockaddr_storage *a,
		    const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family ||
	    sockaddr_port(a) != sockaddr_port(b))
		return false;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return false;
}

const char *sockaddr_str(const struct sockaddr_storage *ss, char *buf,
			 size_t size)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr,
			  ip, sizeof(ip));
		snprintf(buf, size, "[%s]:%u", ip, sockaddr_port(ss));
	} else if (ss->ss_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr,
			  ip, sizeof(ip));
		snprintf(buf, size, "%s:%u", ip, sockaddr_port(ss));
	} else {
		snprintf(buf, size, "(family %u)", ss->ss_family);
	}
	return buf;
}

socklen_t local_addr(int fd, struct sockaddr_storage *ss)
{
	socklen_t len = sizeof(*ss);

	memset(ss, 0, sizeof(*ss));
	CHECK_OK(getsockname(fd, (struct sockaddr *)ss, &len));
	return len;
}

socklen_t peer_addr(int fd, struct sockaddr_storage *ss)
{
	socklen_t len = sizeof(*ss);

	memset(ss, 0, sizeof(*ss));
	CHECK_OK(getpeername(fd, (struct sockaddr *)ss, &len));
	return len;
}

int sockopt_get(int fd, int level, int name)
{
	socklen_t len = sizeof(int);
	int v = -1;

	CHECK(getsockopt(fd, level, name, &v, &len) == 0,
	      "getsockopt(%d, %d): %s", level, name, strerror(errno));
	CHECK(len == sizeof(int), "getsockopt(%d, %d): optlen %u", level, name,
	      len);
	return v;
}

void sockopt_set(int fd, int level, int name, int value)
{
	CHECK(setsockopt(fd, level, name, &value, sizeof(value)) == 0,
	      "setsockopt(%d, %d, %d): %s", level, name, value,
	      strerror(errno));
}

void set_bufsize(int fd, int bytes)
{
	if (!bytes)
		return;
	sockopt_set(fd, SOL_SOCKET, SO_SNDBUF, bytes);
	sockopt_set(fd, SOL_SOCKET, SO_RCVBUF, bytes);
}

void set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	CHECK(fl >= 0, "F_GETFL: %s", strerror(errno));
	fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	CHECK(fcntl(fd, F_SETFL, fl) == 0, "F_SETFL: %s", strerror(errno));
}

int net_listener(struct sockaddr_storage *addr, int backlog, int bufsize)
{
	socklen_t len = test_sockaddr(addr, 0);
	/* Fallback: a TCP-only peer, which SDP sockets reach over TCP. */
	int fd = test_is_fallback() ? socket(addr->ss_family, SOCK_STREAM, 0) :
				      test_socket_af(addr->ss_family, 0);

	CHECK(fd >= 0, "socket(%s): %s", test_family_name(), strerror(errno));
	set_bufsize(fd, bufsize);
	CHECK(bind(fd, (struct sockaddr *)addr, len) == 0, "bind: %s",
	      strerror(errno));
	CHECK(listen(fd, backlog) == 0, "listen: %s", strerror(errno));
	local_addr(fd, addr);
	CHECK(sockaddr_port(addr) != 0, "listener has port 0");
	return fd;
}

int net_connect(const struct sockaddr_storage *addr, int bufsize)
{
	int fd = test_socket_af(addr->ss_family, 0);
	char s[64];

	CHECK(fd >= 0, "socket(%s): %s", test_family_name(), strerror(errno));
	set_bufsize(fd, bufsize);
	CHECK(connect(fd, (const struct sockaddr *)addr, sockaddr_len(addr)) == 0,
	      "connect %s: %s", sockaddr_str(addr, s, sizeof(s)),
	      strerror(errno));
	return fd;
}

int net_accept(int listener, int timeout_ms)
{
	int r = wait_fd(listener, POLLIN, timeout_ms);
	int fd;

	CHECK(r > 0, "no connection to accept after %d ms (poll %d: %s)",
	      timeout_ms, r, r < 0 ? strerror(errno) : "timeout");
	fd = accept(listener, NULL, NULL);
	CHECK(fd >= 0, "accept: %s", strerror(errno));
	return fd;
}

void net_pair_bufsize(int *client, int *server, int bufsize)
{
	struct sockaddr_storage addr;
	int l = net_listener(&addr, 1, bufsize);

	*client = net_connect(&addr, bufsize);
	*server = net_accept(l, NET_IO_TIMEOUT_MS);
	close(l);
}

void net_pair(int *client, int *server)
{
	net_pair_bufsize(client, server, 0);
}

/*
 * The pattern: a splitmix64-style mix of the seed and the index of the
 * 8-byte block, so each block can be computed from its offset alone.
 */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t pattern_block(uint64_t seed, uint64_t block)
{
	return mix64(seed * 0x9e3779b97f4a7c15ULL + block + 1);
}

static uint8_t pattern_byte(uint64_t seed, uint64_t off)
{
	return pattern_block(seed, off >> 3) >> ((off & 7) * 8);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = v >> (i * 8);
}

void pattern_fill(void *buf, size_t len, uint64_t seed, uint64_t off)
{
	uint8_t *p = buf;

	/* Up to the next block boundary, whole blocks, then the tail. */
	while (len && (off & 7)) {
		*p++ = pattern_byte(seed, off++);
		len--;
	}
	while (len >= 8) {
		put_le64(p, pattern_block(seed, off >> 3));
		p += 8;
		off += 8;
		len -= 8;
	}
	while (len--)
		*p++ = pattern_byte(seed, off++);
}

ssize_t pattern_check(const void *buf, size_t len, uint64_t seed,
		      uint64_t off)
{
	const uint8_t *p = buf;
	uint8_t want[8];
	size_t i = 0, j;

	while (i < len && ((off + i) & 7)) {
		if (p[i] != pattern_byte(seed, off + i))
			return i;
		i++;
	}
	while (len - i >= 8) {
		put_le64(want, pattern_block(seed, (off + i) >> 3));
		if (memcmp(p + i, want, 8)) {
			for (j = 0; p[i + j] == want[j]; j++)
				;
			return i + j;
		}
		i += 8;
	}
	for (; i < len; i++)
		if (p[i] != pattern_byte(seed, off + i))
			return i;
	return -1;
}

void rng_seed(struct rng *r, uint64_t seed)
{
	r->s = mix64(seed) | 1;
}

uint64_t rng_next(struct rng *r)
{
	uint64_t x = r->s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	r->s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi)
{
	return lo + rng_next(r) % (hi - lo + 1);
}

size_t rng_size(struct rng *r, size_t max)
{
	unsigned int bits = 0;
	size_t lo, hi;

	while (bits < 63 && (2ULL << bits) <= max)
		bits++;
	/* An order of magnitude 2^k, k in [0, bits], then a size in it. */
	lo = (size_t)1 << rng_range(r, 0, bits);
	hi = lo * 2 - 1;
	if (hi > max)
		hi = max;
	return rng_range(r, lo, hi);
}

long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

long long now_ms(void)
{
	return now_us() / 1000;
}

int wait_fd(int fd, short events, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	for (;;) {
		long long left = end - now_ms();

		r = poll(&p, 1, left > 0 ? (int)left : 0);
		if (r >= 0)
			return r ? p.revents : 0;
		if (errno != EINTR)
			return -1;
	}
}

int tcp_connect_result(int fd, int timeout_ms)
{
	long long end = now_ms() + timeout_ms, left;
	int ev;

	for (;;) {
		left = end - now_ms();
		ev = wait_fd(fd, POLLOUT, left > 0 ? (int)left : 0);
		if (ev <= 0)
			return -1;
		if (ev & POLLHUP || !(ev & POLLERR))
			return sockopt_get(fd, SOL_SOCKET, SO_ERROR);
		/* The error is queued, the connect not yet ended. */
		if (left <= 0)
			return -1;
		poll(NULL, 0, 1);
	}
}

bool wait_until(bool (*cond)(void *arg), void *arg, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	int step = 1;

	for (;;) {
		if (cond(arg))
			return true;
		if (now_ms() >= end)
			return false;
		poll(NULL, 0, step);
		if (step < 50)
			step *= 2;
	}
}

void sleep_ms_poll(int ms)
{
	long long end = now_ms() + ms;
	long long left;

	while ((left = end - now_ms()) > 0)
		poll(NULL, 0, (int)left);
}

ssize_t write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	size_t done = 0;
	bool sock = true;

	while (done < len) {
		ssize_t n;

		if (sock) {
			n = send(fd, p + done, len - done, MSG_NOSIGNAL);
			if (n < 0 && errno == ENOTSOCK) {
				sock = false;
				continue;
			}
		} else {
			n = write(fd, p + done, len - done);
		}
		if (n > 0) {
			done += n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			int r = wait_fd(fd, POLLOUT, NET_IO_TIMEOUT_MS);

			if (r < 0)
				return -1;
			if (r == 0) {
				errno = ETIMEDOUT;
				return -1;
			}
			continue;
		}
		if (n == 0)
			errno = EIO;
		return -1;
	}
	return done;
}

/* One read: read(), or readv() with an empty element in front. */
static ssize_t read_once(int fd, void *buf, size_t len, bool empty_first)
{
	char empty;
	struct iovec iov[2] = { { &empty, 0 }, { buf, len } };

	return empty_first ? readv(fd, iov, 2) : read(fd, buf, len);
}

static ssize_t read_all_how(int fd, void *buf, size_t len, bool empty_first)
{
	char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = read_once(fd, p + done, len - done, empty_first);

		if (n > 0) {
			done += n;
			continue;
		}
		if (n == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			int r = wait_fd(fd, POLLIN, NET_IO_TIMEOUT_MS);

			if (r < 0)
				return -1;
			if (r == 0) {
				errno = ETIMEDOUT;
				return -1;
			}
			continue;
		}
		return -1;
	}
	return done;
}

ssize_t read_all(int fd, void *buf, size_t len)
{
	return read_all_how(fd, buf, len, false);
}

ssize_t readv_all_empty_first(int fd, void *buf, size_t len)
{
	return read_all_how(fd, buf, len, true);
}

size_t test_bytes(size_t dflt)
{
	const char *v = getenv("SDP_TEST_BYTES");
	unsigned long long n;
	char *end;

	if (!v || !*v)
		return dflt;
	n = strtoull(v, &end, 0);
	switch (*end) {
	case 'k': case 'K':
		n <<= 10;
		break;
	case 'm': case 'M':
		n <<= 20;
		break;
	case 'g': case 'G':
		n <<= 30;
		break;
	}
	return n ? n : dflt;
}

int zc_note_read(int fd, struct zc_note *n)
{
	char control[CMSG_SPACE(sizeof(struct sock_extended_err)) + 64];
	struct msghdr msg = {
		.msg_control = control,
		.msg_controllen = sizeof(control),
	};
	struct sock_extended_err *ee;
	struct cmsghdr *cm;

	if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
		return -errno;
	cm = CMSG_FIRSTHDR(&msg);
	CHECK(cm && ((cm->cmsg_level == SOL_IP &&
		      cm->cmsg_type == IP_RECVERR) ||
		     (cm->cmsg_level == SOL_IPV6 &&
		      cm->cmsg_type == IPV6_RECVERR)),
	      "error queue: control message %d/%d", cm ? cm->cmsg_level : -1,
	      cm ? cm->cmsg_type : -1);
	ee = (struct sock_extended_err *)CMSG_DATA(cm);
	CHECK(ee->ee_origin == SO_EE_ORIGIN_ZEROCOPY && ee->ee_errno == 0,
	      "error queue: origin %u, errno %u", ee->ee_origin,
	      ee->ee_errno);
	n->lo = ee->ee_info;
	n->hi = ee->ee_data;
	n->code = ee->ee_code;
	return 0;
}

/* The last send of a transfer completes once the peer's RC ACK came. */
#define STREAM_POS_WAIT_MS	10000

struct sdp_info sdp_info_of(int fd)
{
	struct sdp_info info;
	socklen_t len = sizeof(info);

	memset(&info, 0xff, sizeof(info));
	CHECK_OK(getsockopt(fd, SOL_SDP, SDP_INFO, &info, &len));
	CHECK(len == sizeof(info), "SDP_INFO gave %u bytes", len);
	return info;
}

struct acked {
	int fd;
	uint64_t want;
};

/* Has the socket of @arg (a struct acked) all it sent acknowledged? */
static bool all_acked(void *arg)
{
	const struct acked *a = arg;

	return sdp_info_of(a->fd).sdpi_snd_una == a->want;
}

void expect_stream_pos(const char *who, int fd, uint64_t sent,
		       uint64_t received)
{
	struct acked a = { .fd = fd, .want = sent };
	struct test_tcp_info ti;
	struct sdp_info i;

	CHECK(wait_until(all_acked, &a, STREAM_POS_WAIT_MS),
	      "%s: %llu bytes sent, %llu acknowledged after %d ms", who,
	      (unsigned long long)sent,
	      (unsigned long long)sdp_info_of(fd).sdpi_snd_una, STREAM_POS_WAIT_MS);
	i = sdp_info_of(fd);
	CHECK(i.sdpi_snd_nxt == sent && i.sdpi_snd_una == sent &&
	      i.sdpi_rx_seq == received,
	      "%s: snd_nxt %llu snd_una %llu rx_seq %llu, want %llu %llu %llu",
	      who, (unsigned long long)i.sdpi_snd_nxt,
	      (unsigned long long)i.sdpi_snd_una,
	      (unsigned long long)i.sdpi_rx_seq, (unsigned long long)sent,
	      (unsigned long long)sent, (unsigned long long)received);
	/* TCP_INFO's counters are the same positions, as TCP's are. */
	CHECK_OK(test_tcp_info(fd, &ti));
	CHECK(ti.bytes_acked == sent && ti.bytes_received == received &&
	      ti.bytes_sent >= sent,
	      "%s: TCP_INFO bytes_acked %llu bytes_received %llu bytes_sent %llu, want %llu %llu and at least %llu",
	      who, (unsigned long long)ti.bytes_acked,
	      (unsigned long long)ti.bytes_received,
	      (unsigned long long)ti.bytes_sent, (unsigned long long)sent,
	      (unsigned long long)received, (unsigned long long)sent);
}
