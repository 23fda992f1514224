/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the socket-level suites: the family under test,
 * addresses, listeners and connected pairs, a checkable byte pattern,
 * full reads and writes, and bounded waits.
 *
 * The family is AF_INET_SDP, or AF_INET with SDP_TEST_FAMILY=tcp so that
 * a suite can be checked against TCP, its reference.  Either way the
 * addresses given to bind() and connect() are struct sockaddr_in or
 * struct sockaddr_in6 (AF_INET / AF_INET6): that is the SDP contract.
 *
 * Functions that set something up (net_listener(), net_pair(), ...) fail
 * the running test with CHECK when they cannot; the I/O helpers return
 * -1 and set errno so that a test can check the error itself.
 */
#ifndef SDP_TEST_NET_H
#define SDP_TEST_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <linux/sdp.h>

/* AF_INET_SDP, or AF_INET if SDP_TEST_FAMILY=tcp. */
int test_family(void);
/* Is the family under test SDP (not TCP, and not fallen back to TCP)? */
bool test_is_sdp(void);
/*
 * SDP_TEST_FAMILY=fallback: the sockets are SDP ones with
 * SDP_TCP_FALLBACK on, and net_listener() makes plain TCP listeners, so
 * that the pairs are SDP sockets fallen back to TCP, held to TCP's
 * behaviour (test_is_sdp() is false).
 */
bool test_is_fallback(void);
/* "sdp", "tcp" or "fallback", for messages. */
const char *test_family_name(void);

/*
 * socket(test_family(), SOCK_STREAM | flags, 0), -1/errno on failure;
 * for TCP with an IPv6 SDP_TEST_ADDR, an AF_INET6 socket.
 */
int test_socket(int flags);
/*
 * A socket to use with addresses of family @af (AF_INET or AF_INET6).
 * An SDP socket takes both; TCP, the reference, needs an AF_INET6
 * socket for IPv6 (and dual-stack) addresses.
 */
int test_socket_af(int af, int flags);

/*
 * The test address (SDP_TEST_ADDR, IPv4 or IPv6) with @port, in @ss;
 * returns its length.  Fails the test if the address cannot be parsed.
 */
socklen_t test_sockaddr(struct sockaddr_storage *ss, uint16_t port);
/* Any address parsed the same way: 0 if @str is not an IP address. */
socklen_t make_sockaddr(struct sockaddr_storage *ss, const char *str,
			uint16_t port);
uint16_t sockaddr_port(const struct sockaddr_storage *ss);
/* The length of @ss's address for its family. */
socklen_t sockaddr_len(const struct sockaddr_storage *ss);
void sockaddr_set_port(struct sockaddr_storage *ss, uint16_t port);
/* Same family, address and port? */
bool sockaddr_equal(const struct sockaddr_storage *a,
		    const struct sockaddr_storage *b);
/* "a.b.c.d:port" or "[v6]:port" in @buf. */
const char *sockaddr_str(const struct sockaddr_storage *ss, char *buf,
			 size_t size);
/* getsockname() / getpeername() that fail the test on error. */
socklen_t local_addr(int fd, struct sockaddr_storage *ss);
socklen_t peer_addr(int fd, struct sockaddr_storage *ss);

/* Integer socket options; both fail the test on error. */
int sockopt_get(int fd, int level, int name);
void sockopt_set(int fd, int level, int name, int value);
/* SO_SNDBUF and SO_RCVBUF to @bytes (nothing if 0). */
void set_bufsize(int fd, int bytes);
void set_nonblock(int fd, bool on);

/*
 * A listening socket on the test address and an ephemeral port, with
 * SO_SNDBUF/SO_RCVBUF set to @bufsize first (0: defaults) so that the
 * accepted sockets inherit them.  Its address goes to @addr.
 */
int net_listener(struct sockaddr_storage *addr, int backlog, int bufsize);
/* A socket connected (blocking) to @addr, with @bufsize as above. */
int net_connect(const struct sockaddr_storage *addr, int bufsize);
/* accept() with a bounded wait; fails the test on error or timeout. */
int net_accept(int listener, int timeout_ms);
/* A connected pair through a temporary listener; both ends blocking. */
void net_pair(int *client, int *server);
void net_pair_bufsize(int *client, int *server, int bufsize);

/*
 * The test pattern: byte @off of stream @seed is a fixed function of
 * both, so any chunk can be generated or checked on its own.
 */
void pattern_fill(void *buf, size_t len, uint64_t seed, uint64_t off);
/* Offset in @buf of the first wrong byte, or -1 if the chunk is right. */
ssize_t pattern_check(const void *buf, size_t len, uint64_t seed,
		      uint64_t off);

/* A small xorshift generator for sizes and choices. */
struct rng {
	uint64_t s;
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* Uniform in [lo, hi]. */
uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi);
/* In [1, max], spread over the orders of magnitude (log-uniform). */
size_t rng_size(struct rng *r, size_t max);

/*
 * Write or read exactly @len bytes, retrying partial transfers and
 * EINTR, and waiting (up to NET_IO_TIMEOUT_MS per step) on EAGAIN.
 * write_all() uses MSG_NOSIGNAL on sockets.  They return @len, what
 * read_all() got before end of file, or -1 with errno (ETIMEDOUT for
 * a wait that ran out).
 */
#define NET_IO_TIMEOUT_MS	30000
ssize_t write_all(int fd, const void *buf, size_t len);
ssize_t read_all(int fd, void *buf, size_t len);

/* A MSG_ZEROCOPY completion notification: ids @lo to @hi, its ee_code. */
struct zc_note {
	uint32_t lo, hi;
	uint8_t code;
};

/*
 * Take one notification from @fd's error queue, without waiting: 0, or
 * -errno (-EAGAIN: none queued).  It must be TCP's form: one control
 * message SOL_IP/IP_RECVERR (SOL_IPV6/IPV6_RECVERR), origin
 * SO_EE_ORIGIN_ZEROCOPY, errno 0.
 */
int zc_note_read(int fd, struct zc_note *n);
/* read_all() with readv() calls whose first element is empty. */
ssize_t readv_all_empty_first(int fd, void *buf, size_t len);

/* Monotonic clock in microseconds and in milliseconds. */
long long now_us(void);
long long now_ms(void);
/*
 * poll() one fd for @events for up to @timeout_ms (EINTR does not cut
 * it short); returns revents, 0 on timeout, -1 on error.
 */
int wait_fd(int fd, short events, int timeout_ms);
/*
 * The end of a plain TCP socket's non-blocking connect(), waited for up
 * to @timeout_ms: 0 once connected, the error (SO_ERROR) once failed,
 * -1 if neither came.  POLLERR alone is not the end: for an ICMP error
 * tcp_v4_err() queues it on the error queue, which wakes poll(), before
 * it writes the error SO_ERROR reads; the CLOSE (POLLHUP) comes after.
 */
int tcp_connect_result(int fd, int timeout_ms);
/* Wait until @cond(@arg) holds, checking every few ms; false on timeout. */
bool wait_until(bool (*cond)(void *arg), void *arg, int timeout_ms);
/* Sleep @ms (poll-based; for pacing only, never to wait for an event). */
void sleep_ms_poll(int ms);

/* SDP_TEST_BYTES (with an optional K, M or G suffix), or @dflt. */
size_t test_bytes(size_t dflt);

/* getsockopt(SDP_INFO) of @fd, of the full length. */
struct sdp_info sdp_info_of(int fd);
/*
 * The stream positions of @fd (SDP_INFO), once what it sent is
 * acknowledged (within 10 s): @sent bytes sent and acknowledged,
 * @received received, and TCP_INFO's byte counters agreeing.  @who
 * names the end in the diagnostic.
 */
void expect_stream_pos(const char *who, int fd, uint64_t sent,
		       uint64_t received);

#endif /* SDP_TEST_NET_H */
