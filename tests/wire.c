// SPDX-License-Identifier: GPL-2.0
/*
 * Two hosts on a wire (tests/vm/wire, make check-wire): this program runs
 * in both guests, as guest a (SDP_WIRE_ROLE=a, the client side of every
 * test) and guest b (the server side), over Soft-RoCE on a virtio-net
 * wire between them.  Both run the same list of tests in the same order;
 * each test's a side makes the connections its b side accepts on one
 * listener (WIRE_PORT), so the two stay in step without sleeps.  The
 * guests meet through files in the shared directory (SDP_WIRE_SHARE) and
 * ask the host for faults there (tests/vm/wire).
 *
 * The last test kills guest b (its host dies without a word) and checks
 * that every call guest a had waiting on it returns an error, which one,
 * and within what bound; guest a's run then checks, as every run, that no
 * socket and no RDMA resource is left and that sdp unloads.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "net.h"
#include "tap.h"
#include "util.h"

#define WIRE_PORT	7700
#define MIB		(1024 * 1024)
#define WAIT_MS		30000
/* How long guest b waits, at most, to be killed in the last test. */
#define KILL_WAIT_MS	120000

static char role;		/* 'a' or 'b' */
static const char *share;	/* the shared directory */
static int listener = -1;	/* b's */
static struct sockaddr_storage peer;	/* b's listener, for a */

/* ---- Meeting through the shared directory ---------------------------- */

static int share_create(const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", share, name);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static void share_touch(const char *name)
{
	CHECK(share_create(name) == 0, "create %s/%s: %s", share, name,
	      strerror(errno));
}

static bool share_exists(void *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", share, (const char *)name);
	return stat(path, &st) == 0;
}

static void share_wait(const char *name, int ms)
{
	CHECK(wait_until(share_exists, (void *)name, ms),
	      "no %s/%s within %d ms", share, name, ms);
}

/* Ask the host for a fault and wait until it is done. */
static void fault(const char *what)
{
	char name[64];

	snprintf(name, sizeof(name), "fault-%s", what);
	share_touch(name);
	snprintf(name, sizeof(name), "done-%s", what);
	share_wait(name, 10000);
}

/* ---- Connections ------------------------------------------------------ */

/* a: a connection to b's listener. */
static int wire_connect(void)
{
	int fd = net_connect(&peer, 0);

	CHECK(fd >= 0, "connect to the other guest: %s", strerror(errno));
	return fd;
}

/* b: the next connection from a. */
static int wire_accept(void)
{
	return net_accept(listener, WAIT_MS);
}

static void set_thresh(int fd, int v)
{
	CHECK_OK(setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &v, sizeof(v)));
}

static struct sdp_info info(int fd)
{
	struct sdp_info si;
	socklen_t len = sizeof(si);

	CHECK_OK(getsockopt(fd, SOL_SDP, SDP_INFO, &si, &len));
	return si;
}

/* Send @len bytes of stream @seed in @chunk-sized writes. */
static void send_pattern(int fd, size_t len, size_t chunk, uint64_t seed)
{
	char *buf = malloc(chunk);
	size_t off, n;

	CHECK(buf, "out of memory");
	for (off = 0; off < len; off += n) {
		n = len - off < chunk ? len - off : chunk;
		pattern_fill(buf, n, seed, off);
		CHECK(write_all(fd, buf, n) == (ssize_t)n,
		      "send at %zu of %zu: %s", off, len, strerror(errno));
	}
	free(buf);
}

/* Receive and check bytes [@from, @from + @len) of stream @seed. */
static void recv_pattern(int fd, size_t from, size_t len, uint64_t seed)
{
	size_t chunk = MIB, off, n, end = from + len;
	char *buf = malloc(chunk);
	ssize_t bad;

	CHECK(buf, "out of memory");
	for (off = from; off < end; off += n) {
		n = end - off < chunk ? end - off : chunk;
		CHECK(read_all(fd, buf, n) == (ssize_t)n,
		      "recv at %zu of %zu: %s", off, end, strerror(errno));
		bad = pattern_check(buf, n, seed, off);
		CHECK(bad < 0, "byte %zu of %zu is wrong", off + bad, end);
	}
	free(buf);
}

static void ack(int fd)
{
	CHECK(write_all(fd, "k", 1) == 1, "answer: %s", strerror(errno));
}

static void expect_ack(int fd)
{
	char c = 0;

	CHECK(read_all(fd, &c, 1) == 1 && c == 'k', "no answer: %s",
	      strerror(errno));
}

/* One transfer each way, checked byte by byte at the receiver. */
static void both_ways(int fd, size_t len, size_t chunk)
{
	if (role == 'a') {
		send_pattern(fd, len, chunk, 1);
		expect_ack(fd);
		recv_pattern(fd, 0, len, 2);
		ack(fd);
	} else {
		recv_pattern(fd, 0, len, 1);
		ack(fd);
		send_pattern(fd, len, chunk, 2);
		expect_ack(fd);
	}
}

/* ---- The tests -------------------------------------------------------- */

/*
 * 16 MiB each way through the buffered path (zero-copy off on both ends),
 * every byte checked at the receiver.
 */
static void test_wire_buffered(void)
{
	int fd = role == 'a' ? wire_connect() : wire_accept();
	long long t0 = now_ms();

	set_thresh(fd, 0);
	both_ways(fd, 16 * MIB, 64 * 1024);
	tap_diag("2 x 16 MiB buffered in %lld ms", now_ms() - t0);
	CHECK(info(fd).sdpi_zcopy_tx_bytes == 0, "zero-copy was used");
	CHECK_OK(close(fd));
}

/*
 * 16 MiB each way in 1 MiB blocking sends: zero-copy (the receiver
 * RDMA-reads the sender's pages across the wire), checked at the
 * receiver, and the sender's counters show that it went zero-copy.
 */
static void test_wire_zcopy(void)
{
	int fd = role == 'a' ? wire_connect() : wire_accept();
	long long t0 = now_ms();
	struct sdp_info si;

	both_ways(fd, 16 * MIB, MIB);
	si = info(fd);
	tap_diag("2 x 16 MiB in 1 MiB sends in %lld ms, %llu bytes zero-copy sent",
		 now_ms() - t0, (unsigned long long)si.sdpi_zcopy_tx_bytes);
	CHECK(si.sdpi_zcopy_tx_bytes >= 8 * MIB,
	      "only %llu of 16 MiB went zero-copy",
	      (unsigned long long)si.sdpi_zcopy_tx_bytes);
	CHECK_OK(close(fd));
}

/* Fill @fd's send side until a send would block (the peer reads nothing). */
static void fill(int fd)
{
	static char buf[64 * 1024];
	long long end = now_ms() + WAIT_MS;
	ssize_t n;

	for (;;) {
		CHECK(now_ms() < end, "the send side never filled");
		n = send(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN) {
			/* Full once nothing is in flight any more. */
			if (wait_fd(fd, POLLOUT, 500) == 0)
				return;
			continue;
		}
		CHECK(n > 0, "send: %s", strerror(errno));
	}
}

/*
 * b: cut the wire (netem drops everything our NIC sends: our messages,
 * our acknowledgments, our CM replies, so that neither side hears the
 * other) or restore it.
 */
static void cut(bool on)
{
	const char *dev = getenv("SDP_TEST_NETDEV");
	char cmd[256];

	CHECK(dev, "no SDP_TEST_NETDEV");
	snprintf(cmd, sizeof(cmd), on ?
		 "tc qdisc add dev %s root netem loss 100%%" :
		 "tc qdisc del dev %s root", dev);
	CHECK(system(cmd) == 0, "%s failed", cmd);
}

/*
 * The wire is cut for 1 s in the middle of a 16 MiB transfer, less than
 * the RC retry budget (6 retries of the 2.1 s ACK timeout): the QPs
 * retransmit, the connection survives and every byte arrives.
 */
static void test_wire_link_flap(void)
{
	int fd = role == 'a' ? wire_connect() : wire_accept();
	long long t0;

	set_thresh(fd, 0);
	if (role == 'a') {
		send_pattern(fd, 16 * MIB, 64 * 1024, 3);
		expect_ack(fd);
	} else {
		recv_pattern(fd, 0, 4 * MIB, 3);
		t0 = now_ms();
		cut(true);
		usleep(1000 * 1000);
		cut(false);
		tap_diag("wire cut for %lld ms", now_ms() - t0);
		recv_pattern(fd, 4 * MIB, 12 * MIB, 3);
		ack(fd);
	}
	CHECK(sockopt_get(fd, SOL_SOCKET, SO_ERROR) == 0, "SO_ERROR");
	CHECK_OK(close(fd));
}

/*
 * The wire is cut for 30 s, longer than the RC retry budget, while a's
 * data waits for b's credits (b stopped reading): a's send fails with
 * ETIMEDOUT within 25 s of the cut (the next persist probe, at most 16 s
 * away by then, and the QP's 15 s of retries); b, which only reads and
 * has SO_KEEPALIVE (1 s, 1 s, 3), finds the connection dead by its
 * probes: its recv() gives ETIMEDOUT once it reads again (or ECONNRESET,
 * when a's abort reached it first).
 */
static void test_wire_link_cut(void)
{
	int fd = role == 'a' ? wire_connect() : wire_accept();
	char buf[64 * 1024];
	long long t0;
	ssize_t n;

	set_thresh(fd, 0);
	if (role == 'a') {
		fill(fd);
		share_wait("b-cut", WAIT_MS);
		t0 = now_ms();
		memset(buf, 'c', sizeof(buf));
		do
			n = send(fd, buf, sizeof(buf), MSG_NOSIGNAL);
		while (n > 0 && now_ms() - t0 < 60000);
		tap_diag("send: %s %lld ms after the cut",
			 n < 0 ? strerrorname_np(errno) : "no error",
			 now_ms() - t0);
		CHECK(n < 0 && errno == ETIMEDOUT, "send: %zd/%s, expected ETIMEDOUT",
		      n, n < 0 ? strerrorname_np(errno) : "-");
		CHECK(now_ms() - t0 <= 25000, "the error came %lld ms after the cut",
		      now_ms() - t0);
	} else {
		sockopt_set(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
		sockopt_set(fd, IPPROTO_TCP, TCP_KEEPIDLE, 1);
		sockopt_set(fd, IPPROTO_TCP, TCP_KEEPINTVL, 1);
		sockopt_set(fd, IPPROTO_TCP, TCP_KEEPCNT, 3);
		CHECK(read_all(fd, buf, sizeof(buf)) == sizeof(buf),
		      "recv: %s", strerror(errno));
		/* a fills our buffers, then its data waits for credits. */
		usleep(2000 * 1000);
		cut(true);
		share_touch("b-cut");
		usleep(30 * 1000 * 1000);
		cut(false);
		t0 = now_ms();
		do
			n = read(fd, buf, sizeof(buf));
		while (n > 0 && now_ms() - t0 < 30000);
		tap_diag("recv after the wire came back: %s",
			 n < 0 ? strerrorname_np(errno) : "end of stream");
		CHECK(n < 0 && (errno == ETIMEDOUT || errno == ECONNRESET),
		      "recv: %zd/%s, expected ETIMEDOUT or ECONNRESET", n,
		      n < 0 ? strerrorname_np(errno) : "-");
		CHECK(now_ms() - t0 <= 1000, "recv waited %lld ms for the error",
		      now_ms() - t0);
	}
	CHECK_OK(close(fd));
}

/* A call blocked on the dead peer, in a thread of its own. */
struct blocked {
	int fd;
	bool send;
	long long done_ms;
	ssize_t ret;
	int err;
};

static void *blocked_thread(void *arg)
{
	static char buf[64 * 1024];
	struct blocked *b = arg;

	if (b->send)
		b->ret = send(b->fd, buf, sizeof(buf), MSG_NOSIGNAL);
	else
		b->ret = recv(b->fd, buf, sizeof(buf), 0);
	b->err = errno;
	b->done_ms = now_ms();
	return NULL;
}

static void join_bounded(pthread_t t, struct blocked *b, const char *what,
			 long long t0, long long bound_ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (bound_ms + 5000) / 1000;
	if (pthread_timedjoin_np(t, NULL, &ts)) {
		shutdown(b->fd, SHUT_RDWR);
		pthread_join(t, NULL);
		CHECK(false, "%s still blocked %lld ms after the peer died",
		      what, bound_ms + 5000);
	}
	tap_diag("%s: %s after %lld ms", what,
		 b->ret < 0 ? strerrorname_np(b->err) : "no error",
		 b->done_ms - t0);
	CHECK(b->ret == -1 && b->err == ETIMEDOUT, "%s: %zd/%s, expected ETIMEDOUT",
	      what, b->ret, strerrorname_np(b->err));
	CHECK(b->done_ms - t0 <= bound_ms, "%s: error after %lld ms, bound %lld",
	      what, b->done_ms - t0, bound_ms);
}

/*
 * Guest b dies (its QEMU is killed) while guest a has:
 *  - an idle connection with SO_KEEPALIVE (1 s idle, 1 s interval, 3
 *    probes) and a recv() blocked on it: ETIMEDOUT within idle + interval
 *    x count + one interval = 5 s (probes were answered until the kill, so
 *    the idle time starts at most 1 s before it);
 *  - a send() blocked on a full ring, no SO_KEEPALIVE: the persist probe
 *    (after 1 s of waiting, then doubling) is not acknowledged and the QP's
 *    retries run out: ETIMEDOUT within 30 s;
 *  - then a connect() to the dead host: it fails (ETIMEDOUT after the
 *    CM's 15 REQ retries, or EHOSTUNREACH when its address no longer
 *    resolves) within 130 s, TCP's bound (its 6 SYN retries: 127 s).
 * Everything is closed; the run's end checks that nothing is left.
 */
static void test_wire_peer_dies(void)
{
	struct blocked idle = { .send = false }, full = { .send = true };
	pthread_t ti, tf;
	long long t0;
	int c, i;

	if (role == 'b') {
		for (i = 0; i < 2; i++) {
			c = wire_accept();
			(void)c;	/* held, never read, until we die */
		}
		share_touch("b-holding");
		/* Bounded: a kill that never comes fails the run. */
		usleep(KILL_WAIT_MS * 1000LL);
		CHECK(false, "guest b was not killed within %d ms", KILL_WAIT_MS);
		return;
	}

	idle.fd = wire_connect();
	sockopt_set(idle.fd, SOL_SOCKET, SO_KEEPALIVE, 1);
	sockopt_set(idle.fd, IPPROTO_TCP, TCP_KEEPIDLE, 1);
	sockopt_set(idle.fd, IPPROTO_TCP, TCP_KEEPINTVL, 1);
	sockopt_set(idle.fd, IPPROTO_TCP, TCP_KEEPCNT, 3);
	full.fd = wire_connect();
	set_thresh(full.fd, 0);
	share_wait("b-holding", WAIT_MS);
	fill(full.fd);
	CHECK(pthread_create(&ti, NULL, blocked_thread, &idle) == 0, "thread");
	CHECK(pthread_create(&tf, NULL, blocked_thread, &full) == 0, "thread");
	/* Both are blocked (or about to be) before the kill. */
	usleep(200 * 1000);
	fault("kill-b");
	t0 = now_ms();

	join_bounded(ti, &idle, "recv() on an idle keepalive connection", t0,
		     5000);
	join_bounded(tf, &full, "send() blocked on a full ring", t0, 30000);
	CHECK_OK(close(idle.fd));
	CHECK_OK(close(full.fd));

	c = test_socket(0);
	CHECK(c >= 0, "socket: %s", strerror(errno));
	t0 = now_ms();
	i = connect(c, (struct sockaddr *)&peer, sizeof(struct sockaddr_in));
	tap_diag("connect() to the dead host: %s after %lld ms",
		 i ? strerrorname_np(errno) : "connected", now_ms() - t0);
	CHECK(i == -1 && (errno == ETIMEDOUT || errno == EHOSTUNREACH),
	      "connect: %s", i ? strerrorname_np(errno) : "connected");
	CHECK(now_ms() - t0 <= 130000, "connect failed after %lld ms",
	      now_ms() - t0);
	CHECK_OK(close(c));
}

static const struct tap_test tests[] = {
	TAP_TEST(test_wire_buffered),
	TAP_TEST(test_wire_zcopy),
	TAP_TEST(test_wire_link_flap),
	TAP_TEST(test_wire_link_cut),
	TAP_TEST(test_wire_peer_dies),	/* last: guest b does not survive it */
};

int main(int argc, char **argv)
{
	const char *r = getenv("SDP_WIRE_ROLE");
	const char *pa = getenv("SDP_TEST_PEER");
	struct sockaddr_storage ss;
	int ret;

	share = getenv("SDP_WIRE_SHARE");
	if (!r || !share || !pa || (*r != 'a' && *r != 'b')) {
		fprintf(stderr, "wire: run by tests/vm/wire (SDP_WIRE_ROLE, SDP_WIRE_SHARE, SDP_TEST_PEER)\n");
		return 2;
	}
	role = *r;
	if (role == 'b') {
		test_sockaddr(&ss, WIRE_PORT);
		listener = test_socket(0);
		if (listener < 0 || bind(listener, (struct sockaddr *)&ss,
					 sizeof(struct sockaddr_in)) ||
		    listen(listener, 8)) {
			perror("wire: listener");
			return 1;
		}
		if (share_create("b-listening")) {
			perror("wire: shared directory");
			return 1;
		}
	} else {
		if (!make_sockaddr(&peer, pa, WIRE_PORT)) {
			fprintf(stderr, "wire: bad SDP_TEST_PEER %s\n", pa);
			return 2;
		}
		/* Guest b boots as slowly as we do: 2 minutes at most. */
		if (!wait_until(share_exists, "b-listening", 120000)) {
			fprintf(stderr, "wire: guest b did not listen within 120 s\n");
			return 1;
		}
	}
	ret = tap_main(tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
	if (listener >= 0)
		close(listener);
	return ret;
}
