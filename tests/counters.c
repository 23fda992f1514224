// SPDX-License-Identifier: GPL-2.0
/*
 * The namespace's statistics (/proc/net/sdp_stats) and the accounting of
 * connection memory: each counter moves by exactly what the test did
 * (tests/lib/ops.h), MemPages and the memory cgroup follow the buffers.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "net.h"
#include "ops.h"
#include "tap.h"
#include "util.h"

/* ---- statistics ---- */

/* Payload of a message in a receiver's first, small (4 KiB) buffers. */
#define SMALL_PAYLOAD	(4096 - 16)
/* Receive buffers of a new connection: net.sdp.rx_init_bufs' default. */
#define RX_INIT		4
#define RX_IDLE_SYSCTL	"/proc/sys/net/sdp/rx_idle_ms"

/* The ChRcvBufAcks received are at least *arg. */
static bool acks_rx_at(void *arg)
{
	return sdp_stat("ChRcvBufAckRx") >= *(long long *)arg;
}

/*
 * A connection, exactly N bytes one way through the buffered path, an
 * orderly close: each counter moves by what that is, the others not.
 * The first two messages fill the receiver's first, small buffers and
 * make its ring grow; once the sender has its ChRcvBufAck the rest
 * follows, in full messages but for the few that still land in small
 * buffers.  (Sent at once, how many small messages go before the ring
 * grows is timing: a loaded machine delays the receiver's work item.)
 * A grown ring is kept (net.sdp.rx_idle_ms 0), so that it grows once.
 */
static void test_counters_transfer(void)
{
	static const char *const moved[] = {
		"ActiveOpens", "ActiveEstab", "PassiveOpens", "PassiveEstab",
		"BcopyTxBytes", "BcopyTxMsgs", "BcopyRxBytes", "BcopyRxMsgs",
		"DisConnTx", "DisConnRx", "CreditUpdatesTx",
		"CreditUpdatesRx", "CreditStalls", "CurrEstab",
		/*
		 * the blocking reads may poll or be handed the CQ's
		 * event, a wait for credits longer than 1 s sends a
		 * persist probe, and a sender quiet for
		 * net.sdp.tx_idle_ms before the close gives its send
		 * buffers back: timing decides
		 */
		"BusyPollHits", "BusyPollYields", "CqHandoffs", "PersistProbes",
		"TxRingReleases", "RxRingGrows", "ChRcvBufAckTx",
		"ChRcvBufAckRx", NULL
	};
	const size_t n = 1 << 20, first = 2 * SMALL_PAYLOAD;
	struct stats before, after, mid;
	struct sockaddr_storage addr;
	long long acks;
	pid_t sender;
	int l, c, s;
	char ch;

	CHECK(write_file(RX_IDLE_SYSCTL, "0") == 0, "write %s",
	      RX_IDLE_SYSCTL);
	wait_no_sockets();
	stats_read(&before);
	l = listener_pair(&addr, 1, &c, &s);
	close(l);
	sender = send_bytes_async(c, first);
	recv_bytes(s, first);
	wait_child_ok(sender);
	acks = stat_of(&before, "ChRcvBufAckRx") + 1;
	CHECK(wait_until(acks_rx_at, &acks, WAIT_MS),
	      "no ChRcvBufAck within %d ms of two small messages", WAIT_MS);
	sender = send_bytes_async(c, n - first);   /* more than rings hold */
	recv_bytes(s, n - first);
	wait_child_ok(sender);
	stats_read(&mid);
	CHECK(stat_of(&mid, "CurrEstab") - stat_of(&before, "CurrEstab") == 2,
	      "CurrEstab %lld with a connection open (was %lld)",
	      stat_of(&mid, "CurrEstab"), stat_of(&before, "CurrEstab"));
	CHECK_OK(shutdown(c, SHUT_WR));
	CHECK(read(s, &ch, 1) == 0, "no end of stream");
	close(s);
	CHECK(read(c, &ch, 1) == 0, "no end of stream on the client");
	close(c);
	wait_no_sockets();
	stats_read(&after);

	CHECK(DELTA("ActiveOpens") == 1 && DELTA("ActiveEstab") == 1,
	      "active opens %lld estab %lld", DELTA("ActiveOpens"),
	      DELTA("ActiveEstab"));
	CHECK(DELTA("PassiveOpens") == 1 && DELTA("PassiveEstab") == 1,
	      "passive opens %lld estab %lld", DELTA("PassiveOpens"),
	      DELTA("PassiveEstab"));
	CHECK(DELTA("BcopyTxBytes") == (long long)n &&
	      DELTA("BcopyRxBytes") == (long long)n,
	      "bcopy bytes tx %lld rx %lld, want %zu", DELTA("BcopyTxBytes"),
	      DELTA("BcopyRxBytes"), n);
	tap_diag("%lld messages for %zu bytes, RxRingGrows +%lld",
		 DELTA("BcopyTxMsgs"), n, DELTA("RxRingGrows"));
	/*
	 * Two small messages, then full ones but for those that land in the
	 * small buffers still posted when the ring grew: two, four at most.
	 */
	CHECK(DELTA("BcopyTxMsgs") == DELTA("BcopyRxMsgs") &&
	      DELTA("BcopyTxMsgs") >= (long long)(2 + msgs_for(n - first)) &&
	      DELTA("BcopyTxMsgs") <= (long long)(2 + RX_INIT +
						 msgs_for(n - first)),
	      "bcopy msgs tx %lld rx %lld, want %zu to %zu", DELTA("BcopyTxMsgs"),
	      DELTA("BcopyRxMsgs"), 2 + msgs_for(n - first),
	      2 + RX_INIT + msgs_for(n - first));
	CHECK(DELTA("DisConnTx") == 2 && DELTA("DisConnRx") == 2,
	      "DisConn tx %lld rx %lld", DELTA("DisConnTx"),
	      DELTA("DisConnRx"));
	CHECK(DELTA("CurrEstab") == 0, "CurrEstab moved by %lld",
	      DELTA("CurrEstab"));
	/*
	 * The receiver's ring started small; 1 MiB made it grow, once, to
	 * full buffers, which it told the sender with one ChRcvBufAck.
	 */
	CHECK(DELTA("RxRingGrows") == 1, "RxRingGrows +%lld",
	      DELTA("RxRingGrows"));
	CHECK(DELTA("ChRcvBufAckTx") == 1 && DELTA("ChRcvBufAckRx") == 1,
	      "ChRcvBufAck tx +%lld rx +%lld", DELTA("ChRcvBufAckTx"),
	      DELTA("ChRcvBufAckRx"));
	check_unchanged(&before, &after, moved);
}

/*
 * Orderly closes, many of them, each end closing first in turn: every
 * one is two DisConns each way and no abort.  The second DisConn's
 * acknowledgement races with the first closer's CM disconnect (the
 * DREQ can overtake it, and the disconnect then flushes the DisConn's
 * completion: Soft-RoCE on 6.12 did in about one close in 40), which
 * must not count as, or report, a reset.
 */
static void test_counters_orderly_close_race(void)
{
	static const char *const moved[] = {
		"ActiveOpens", "ActiveEstab", "PassiveOpens", "PassiveEstab",
		"BcopyTxBytes", "BcopyTxMsgs", "BcopyRxBytes", "BcopyRxMsgs",
		"DisConnTx", "DisConnRx", "CreditUpdatesTx", "CreditUpdatesRx",
		"CreditStalls", "CurrEstab", "BusyPollHits", "BusyPollYields",
		"CqHandoffs",		/* the reads sleep: as they poll */
		"TxRingReleases", NULL	/* a round slower than tx_idle_ms */
	};
	const int rounds = 120;
	struct sockaddr_storage addr;
	struct stats before, after;
	int l, i, fd[2], first;
	socklen_t len;
	int err;
	char ch;

	wait_no_sockets();
	stats_read(&before);
	l = listener_pair(&addr, 4, &fd[0], &fd[1]);
	for (i = 0; i < rounds; i++) {
		if (i) {
			fd[0] = net_connect(&addr, 0);
			fd[1] = net_accept(l, WAIT_MS);
		}
		first = i & 1;	/* client first, then server first */
		CHECK(write_all(fd[first], "x", 1) == 1 &&
		      read_all(fd[!first], &ch, 1) == 1, "round %d: data", i);
		CHECK_OK(shutdown(fd[first], SHUT_WR));
		CHECK(wait_fd(fd[!first], POLLIN, WAIT_MS) > 0 &&
		      read(fd[!first], &ch, 1) == 0, "round %d: no EOF: %s",
		      i, strerror(errno));
		CHECK_OK(close(fd[!first]));
		CHECK(wait_fd(fd[first], POLLIN, WAIT_MS) > 0 &&
		      read(fd[first], &ch, 1) == 0,
		      "round %d: no EOF for the first closer: %s", i,
		      strerror(errno));
		len = sizeof(err);
		CHECK_OK(getsockopt(fd[first], SOL_SOCKET, SO_ERROR, &err,
				    &len));
		CHECK(err == 0, "round %d: SO_ERROR %s", i, strerror(err));
		CHECK_OK(close(fd[first]));
	}
	close(l);
	wait_no_sockets();
	stats_read(&after);
	CHECK(DELTA("DisConnTx") == 2 * rounds && DELTA("DisConnRx") == 2 * rounds,
	      "DisConn tx %lld rx %lld, want %d", DELTA("DisConnTx"),
	      DELTA("DisConnRx"), 2 * rounds);
	CHECK(DELTA("AbortOnCmDisconnect") == 0,
	      "%lld of %d orderly closes counted as AbortOnCmDisconnect",
	      DELTA("AbortOnCmDisconnect"), rounds);
	check_unchanged(&before, &after, moved);
}

/*
 * Refused connections: to a port nobody listens on, and to a listener
 * whose backlog is full.
 */
static void test_counters_refused(void)
{
	static const char *const moved[] = {
		"ActiveOpens", "ActiveEstab", "PassiveOpens", "PassiveEstab",
		"ActiveRefused", "PassiveRefused", "ListenOverflows",
		"CurrEstab", "DisConnTx", "DisConnRx", "AbortOnClose",
		"AbortConnTx", "AbortConnRx", "AbortByPeer", "CreditUpdatesTx",
		"CreditUpdatesRx", "CreditStalls", NULL
	};
	struct sockaddr_storage addr, bound;
	struct stats before, mid, after;
	socklen_t len;
	int l, c1, c2, c3, b;

	wait_no_sockets();
	stats_read(&before);

	/* A bound socket that does not listen: the peer's CM refuses. */
	len = test_sockaddr(&bound, 0);
	b = CHECK_OK(socket(AF_INET_SDP, SOCK_STREAM, 0));
	CHECK_OK(bind(b, (struct sockaddr *)&bound, len));
	local_addr(b, &bound);
	c3 = CHECK_OK(socket(AF_INET_SDP, SOCK_STREAM, 0));
	CHECK_ERRNO(connect(c3, (struct sockaddr *)&bound, len), ECONNREFUSED);
	stats_read(&mid);
	CHECK(stat_of(&mid, "ActiveOpens") - stat_of(&before, "ActiveOpens") == 1 &&
	      stat_of(&mid, "ActiveRefused") - stat_of(&before, "ActiveRefused") == 1 &&
	      stat_of(&mid, "PassiveRefused") == stat_of(&before, "PassiveRefused"),
	      "no listener: opens %lld refused %lld passive refused %lld",
	      stat_of(&mid, "ActiveOpens") - stat_of(&before, "ActiveOpens"),
	      stat_of(&mid, "ActiveRefused") - stat_of(&before, "ActiveRefused"),
	      stat_of(&mid, "PassiveRefused") - stat_of(&before, "PassiveRefused"));
	close(c3);
	close(b);

	/* Backlog 0: the first connection waits for accept(), the next is refused. */
	l = net_listener(&addr, 0, 0);
	c1 = net_connect(&addr, 0);
	CHECK(wait_fd(l, POLLIN, WAIT_MS) > 0, "first connection not queued");
	c2 = CHECK_OK(socket(AF_INET_SDP, SOCK_STREAM, 0));
	CHECK_ERRNO(connect(c2, (struct sockaddr *)&addr,
			    addr.ss_family == AF_INET6 ?
			    sizeof(struct sockaddr_in6) :
			    sizeof(struct sockaddr_in)), ECONNREFUSED);
	close(c2);
	close(c1);
	close(l);
	wait_no_sockets();
	stats_read(&after);

	CHECK(DELTA("ActiveOpens") == 3 && DELTA("ActiveEstab") == 1,
	      "active opens %lld estab %lld", DELTA("ActiveOpens"),
	      DELTA("ActiveEstab"));
	CHECK(DELTA("ActiveRefused") == 2, "active refused %lld",
	      DELTA("ActiveRefused"));
	CHECK(DELTA("PassiveOpens") == 1 && DELTA("PassiveEstab") == 1,
	      "passive opens %lld estab %lld", DELTA("PassiveOpens"),
	      DELTA("PassiveEstab"));
	CHECK(DELTA("PassiveRefused") == 1 && DELTA("ListenOverflows") == 1,
	      "passive refused %lld overflows %lld", DELTA("PassiveRefused"),
	      DELTA("ListenOverflows"));
	CHECK(DELTA("ActiveFails") == 0 && DELTA("PassiveFails") == 0,
	      "fails %lld/%lld", DELTA("ActiveFails"), DELTA("PassiveFails"));
	CHECK(DELTA("CurrEstab") == 0, "CurrEstab moved by %lld",
	      DELTA("CurrEstab"));
	check_unchanged(&before, &after, moved);
}

/*
 * close() with unread data aborts: the closer counts AbortOnClose and
 * sends AbortConn, the peer counts AbortByPeer; the socket's
 * abort reason shows in the dump.
 */
static void test_counters_abort(void)
{
	struct stats before, after;
	struct sdp_diag_sock d[8];
	ssize_t r;
	char buf[16];
	int c, s, cnt;

	wait_no_sockets();
	stats_read(&before);
	net_pair(&c, &s);
	send_bytes(c, 100);
	wait_inq(s, 100);
	close(s);
	CHECK(wait_fd(c, POLLIN, WAIT_MS) > 0, "no reset on the client");
	r = recv(c, buf, sizeof(buf), 0);
	CHECK(r == -1 && errno == ECONNRESET, "recv %zd %s", r,
	      strerror(errno));
	cnt = diag_dump(~0U, inode_of(c), d, 8);
	CHECK(cnt == 1 && d[0].has_conn &&
	      d[0].conn.abort_reason == SDP_ABORT_REASON_PEER,
	      "abort reason %u", cnt == 1 ? d[0].conn.abort_reason : 99);
	close(c);
	wait_no_sockets();
	stats_read(&after);
	CHECK(DELTA("AbortOnClose") == 1 && DELTA("AbortByPeer") == 1,
	      "aborts on close %lld by peer %lld", DELTA("AbortOnClose"),
	      DELTA("AbortByPeer"));
	CHECK(DELTA("AbortConnTx") == 1 && DELTA("AbortConnRx") == 1,
	      "AbortConn tx %lld rx %lld", DELTA("AbortConnTx"),
	      DELTA("AbortConnRx"));
	CHECK(DELTA("AbortOnTimeout") == 0 && DELTA("AbortOnProtoError") == 0 &&
	      DELTA("AbortOnCqError") == 0 && DELTA("AbortOnCmDisconnect") == 0 &&
	      DELTA("AbortOnData") == 0 && DELTA("AbortOnDeviceRemoval") == 0,
	      "other abort counters moved");
	CHECK(DELTA("CurrEstab") == 0, "CurrEstab moved by %lld",
	      DELTA("CurrEstab"));
}

/* ---- Memory ---- */

/* Pages of one of the module's 32 KiB buffers. */
#define BUF_PAGES	(32 * 1024 / 4096)
/* ... and of one of the 4 KiB ones a receive ring starts on. */
#define SMALL_PAGES	1

#define MEM_SYSCTL	"/proc/sys/net/sdp/mem"
#define TX_IDLE_SYSCTL	"/proc/sys/net/sdp/tx_idle_ms"
#define RX_INIT_SYSCTL	"/proc/sys/net/sdp/rx_init_bufs"

/*
 * Keep send buffers however long a connection is quiet (net.sdp.tx_idle_ms
 * 0), for tests that count them; @old gets the value to restore.
 */
static void tx_idle_keep(char *old, size_t len)
{
	CHECK(read_file(TX_IDLE_SYSCTL, old, len) == 0, "no %s",
	      TX_IDLE_SYSCTL);
	CHECK(write_file(TX_IDLE_SYSCTL, "0") == 0, "write %s",
	      TX_IDLE_SYSCTL);
}

/* MemPages must be @base + @want now. */
#define CHECK_MEM(base, want, what)					\
	CHECK(sdp_stat("MemPages") - (base) == (want),			\
	      "MemPages +%lld %s, expected +%d",				\
	      sdp_stat("MemPages") - (base), what, (int)(want))

static bool mem_pages_back(void *arg)
{
	return sdp_stat("MemPages") == *(long long *)arg;
}

/*
 * Write to @fd without blocking until it takes no more (its peer does
 * not read): its send ring is full.  Returns the bytes written.
 */
static size_t fill_send_ring(int fd)
{
	static char buf[16384];
	size_t total = 0;
	int eagain = 0;
	ssize_t r;

	memset(buf, 0xa5, sizeof(buf));
	/* Until a wait for POLLOUT also times out: the ring stays full. */
	while (eagain < 1000) {
		r = send(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r > 0) {
			total += r;
			continue;
		}
		CHECK(r < 0 && errno == EAGAIN, "send: %s", strerror(errno));
		if (wait_fd(fd, POLLOUT, 300) == 0)
			return total;
		eagain++;
	}
	CHECK(false, "%zu bytes written, and POLLOUT never ends", total);
	return total;
}

/* Put net.sdp.tx_idle_ms back to @idle; MemPages must go back to @base. */
static void tx_idle_restore(const char *idle, long long base)
{
	CHECK(write_file(TX_IDLE_SYSCTL, idle) == 0, "write %s", TX_IDLE_SYSCTL);
	CHECK(wait_until(mem_pages_back, &base, WAIT_MS),
	      "MemPages %lld after the close, %lld before", sdp_stat("MemPages"),
	      base);
}

/* One byte each way, so that both ends have sent (and read) once. */
static void ping_both(int a, int b)
{
	char ch;

	CHECK(write_all(a, "p", 1) == 1 && read_all(b, &ch, 1) == 1 &&
	      write_all(b, "q", 1) == 1 && read_all(a, &ch, 1) == 1,
	      "ping: %s", strerror(errno));
}

/*
 * Connection memory is counted per namespace (MemPages) and held only
 * when needed: a new pair holds two receive rings of RX_INIT small
 * (4 KiB) buffers (net.sdp.rx_init_bufs; one byte each way does not make
 * them grow) and
 * no send buffers until it sends; a send gives a send slot its buffer
 * when it first needs it: one byte each way, one per end.  Above
 * net.sdp.mem's max a new connect() fails with ENOBUFS (MemRefused)
 * while the established pair keeps working; under pressure (usage above
 * the middle value, until below the first) a new pair gets rings of 4
 * buffers each way, RX_INIT of them posted (MemPressureConns +1 per end):
 * a sender whose peer does not read fills 4 send slots, not 16.  Closed,
 * all of it is
 * given back.  Send buffers are kept while it counts (net.sdp.tx_idle_ms
 * 0; test_memory_tx_release() tests their release).
 */
static void test_memory_limits(void)
{
	struct sockaddr_storage addr;
	long long base, refused, small, m;
	int c, s, l, c2, c3, s3;
	char val[128], idle[32];

	if (!test_is_sdp())
		tap_skip("SDP's own accounting");
	if (sysconf(_SC_PAGESIZE) != 4096)
		tap_skip("page size %ld", sysconf(_SC_PAGESIZE));
	tx_idle_keep(idle, sizeof(idle));
	base = sdp_stat("MemPages");
	CHECK(base >= 0, "no MemPages counter");
	l = listener_pair(&addr, 4, &c, &s);
	CHECK_MEM(base, 2 * RX_INIT * SMALL_PAGES, "for a pair that has not sent");
	ping_both(c, s);
	CHECK_MEM(base, 2 * (RX_INIT * SMALL_PAGES + BUF_PAGES),
		  "for a pair that has sent a byte each way");

	/* At the limit: no new connection; the old one goes on. */
	m = sdp_stat("MemPages");
	refused = sdp_stat("MemRefused");
	snprintf(val, sizeof(val), "%lld %lld %lld", 4 * m, 4 * m, m);
	CHECK(write_file(MEM_SYSCTL, val) == 0, "write %s", MEM_SYSCTL);
	c2 = CHECK_OK(test_socket(0));
	CHECK_ERRNO(connect(c2, (struct sockaddr *)&addr,
			    addr.ss_family == AF_INET6 ?
			    sizeof(struct sockaddr_in6) :
			    sizeof(struct sockaddr_in)), ENOBUFS);
	CHECK(sdp_stat("MemRefused") > refused, "MemRefused did not move");
	close(c2);
	ping_both(c, s);
	CHECK(wait_fd(l, POLLIN, 300) == 0, "the listener got a connection");

	/* Under pressure: small rings for a new pair. */
	small = sdp_stat("MemPressureConns");
	CHECK(write_file(MEM_SYSCTL, "0 0 100000000") == 0, "write %s",
	      MEM_SYSCTL);
	m = sdp_stat("MemPages");
	c3 = net_connect(&addr, 0);
	s3 = net_accept(l, WAIT_MS);
	CHECK(sdp_stat("MemPressureConns") - small == 2,
	      "MemPressureConns +%lld", sdp_stat("MemPressureConns") - small);
	CHECK_MEM(m, 2 * RX_INIT * SMALL_PAGES,
		  "for a pair made under pressure");
	ping_both(c3, s3);
	CHECK_MEM(m, 2 * (RX_INIT * SMALL_PAGES + BUF_PAGES),
		  "for that pair after a byte each way");
	CHECK(fill_send_ring(c3) > 0, "nothing sent");
	CHECK_MEM(m, 2 * RX_INIT * SMALL_PAGES + (1 + 4) * BUF_PAGES,
		  "for that pair once one end filled its send ring");

	close(c);
	close(s);
	close(c3);
	close(s3);
	close(l);
	tx_idle_restore(idle, base);
}

/* MemPages at @pages, and at least @releases TxRingReleases. */
struct mem_at {
	long long pages;
	long long releases;
};

static long long mem_at_pages(const struct mem_at *m)
{
	return m->pages;
}

static bool mem_pages_at(void *arg)
{
	const struct mem_at *m = arg;

	return sdp_stat("MemPages") == mem_at_pages(m) &&
	       sdp_stat("TxRingReleases") >= m->releases;
}

/*
 * An idle connection gives its send buffers back: net.sdp.tx_idle_ms
 * (here 200 ms) after its last send, each end of a pair that has sent
 * holds only its receive ring again (TxRingReleases +1 per end).  The
 * next send gets them back and data flows as before, also through a
 * ring that was released mid-stream (a sender slower than 200 ms between
 * two writes releases between them); with tx_idle_ms 0 they are kept.
 * The receive rings are whole from the start (net.sdp.rx_init_bufs 16),
 * so that only the send rings move: how much a ring that grows from
 * small buffers holds depends on when its small ones come back.
 */
static void test_memory_tx_release(void)
{
	const size_t n = 1 << 20;
	struct mem_at want;
	long long base, rel, grows;
	pid_t sender;
	int c, s, l;
	char old[32] = "1000";
	struct sockaddr_storage addr;

	if (!test_is_sdp())
		tap_skip("SDP's own buffers");
	if (sysconf(_SC_PAGESIZE) != 4096)
		tap_skip("page size %ld", sysconf(_SC_PAGESIZE));
	CHECK(read_file(TX_IDLE_SYSCTL, old, sizeof(old)) == 0,
	      "no %s", TX_IDLE_SYSCTL);
	CHECK(write_file(TX_IDLE_SYSCTL, "200") == 0, "write %s",
	      TX_IDLE_SYSCTL);
	CHECK(write_file(RX_INIT_SYSCTL, "16") == 0, "write %s",
	      RX_INIT_SYSCTL);
	base = sdp_stat("MemPages");
	rel = sdp_stat("TxRingReleases");
	l = listener_pair(&addr, 4, &c, &s);
	/* The passive ring grew from its half-open buffers to 16 already. */
	grows = sdp_stat("RxRingGrows");
	ping_both(c, s);
	want.pages = base + 2 * 16 * BUF_PAGES;
	want.releases = rel + 2;
	CHECK(wait_until(mem_pages_at, &want, WAIT_MS) &&
	      sdp_stat("RxRingGrows") == grows,
	      "MemPages +%lld, TxRingReleases +%lld, RxRingGrows +%lld %d ms after the last send, expected +%d, +2 and +0",
	      sdp_stat("MemPages") - base, sdp_stat("TxRingReleases") - rel,
	      sdp_stat("RxRingGrows") - grows, WAIT_MS,
	      2 * 16 * BUF_PAGES);

	/* Back in use: the rings come again, the data is intact. */
	sender = send_bytes_async(c, n);
	recv_bytes(s, n);
	wait_child_ok(sender);
	ping_both(s, c);
	want.releases = rel + 4;
	CHECK(wait_until(mem_pages_at, &want, WAIT_MS) &&
	      sdp_stat("RxRingGrows") == grows,
	      "MemPages +%lld (expected +%lld), TxRingReleases +%lld, RxRingGrows +%lld after the second quiet time",
	      sdp_stat("MemPages") - base, mem_at_pages(&want) - base,
	      sdp_stat("TxRingReleases") - rel,
	      sdp_stat("RxRingGrows") - grows);

	/* tx_idle_ms 0: kept (a byte each way: one send buffer per end). */
	CHECK(write_file(TX_IDLE_SYSCTL, "0") == 0, "write %s", TX_IDLE_SYSCTL);
	rel = sdp_stat("TxRingReleases");
	ping_both(c, s);
	want.pages += 2 * BUF_PAGES;
	CHECK(wait_until(mem_pages_at, &want, WAIT_MS),
	      "MemPages +%lld for a pair that has sent, expected +%lld",
	      sdp_stat("MemPages") - base, mem_at_pages(&want) - base);
	usleep(500 * 1000);
	CHECK(sdp_stat("MemPages") == mem_at_pages(&want),
	      "MemPages +%lld with tx_idle_ms 0, 500 ms later, expected +%lld",
	      sdp_stat("MemPages") - base, mem_at_pages(&want) - base);
	CHECK(sdp_stat("TxRingReleases") == rel, "released with tx_idle_ms 0");

	close(c);
	close(s);
	close(l);
	tx_idle_restore(old, base);
}

/* Send buffers a pair holds: MemPages above @base, less the rx rings. */
static long long tx_bufs_of(long long base, long long rx_pages)
{
	return (sdp_stat("MemPages") - base - rx_pages) / BUF_PAGES;
}

/*
 * sock_diag's view of the pair @c, @s agrees: each end's receive ring
 * is whole (16 buffers of 32 KiB), the send buffers of the two ends add
 * up to @tx (what MemPages says), and each end's mem_pages is its own
 * buffers.  Returns the client's send buffers.
 */
static unsigned int check_diag_mem(int c, int s, long long tx)
{
	struct sdp_diag_sock d[2];
	const struct sdp_diag_sock *dc = &d[0], *ds = &d[1];

	CHECK(diag_dump(~0U, inode_of(c), &d[0], 1) == 1 &&
	      diag_dump(~0U, inode_of(s), &d[1], 1) == 1,
	      "the pair is not in the sock_diag dump");
	CHECK(dc->has_conn && ds->has_conn, "no SDP_DIAG_CONN for the pair");
	CHECK(dc->conn.rx_alloc == 16 && ds->conn.rx_alloc == 16,
	      "rx_alloc %u and %u, expected 16", dc->conn.rx_alloc,
	      ds->conn.rx_alloc);
	CHECK(dc->conn.tx_alloc + ds->conn.tx_alloc == tx,
	      "tx_alloc %u + %u, MemPages says %lld", dc->conn.tx_alloc,
	      ds->conn.tx_alloc, tx);
	CHECK(dc->conn.mem_pages == (16 + dc->conn.tx_alloc) * BUF_PAGES &&
	      ds->conn.mem_pages == (16 + ds->conn.tx_alloc) * BUF_PAGES,
	      "mem_pages %u and %u for tx_alloc %u and %u",
	      dc->conn.mem_pages, ds->conn.mem_pages, dc->conn.tx_alloc,
	      ds->conn.tx_alloc);
	return dc->conn.tx_alloc;
}

/*
 * A send slot gets its buffer when a send first needs it, and an empty
 * ring starts over at its first slot: 100 requests and answers, one
 * message in flight at a time, leave each end with a buffer or two
 * (1 to 4: a send's completion may come after the next send), not its
 * ring of 16.  A sender whose peer does not read fills all 16.  The
 * receive rings are whole from the start (rx_init_bufs 16) and the send
 * buffers kept (tx_idle_ms 0), so that only the send slots move.
 * sock_diag's rx_alloc, tx_alloc and mem_pages of each end agree.
 */
static void test_memory_tx_slots(void)
{
	const long long rx_pages = 2 * 16 * BUF_PAGES;
	struct sockaddr_storage addr;
	char idle[32], *buf;
	long long base, n;
	size_t sent;
	int c, s, l, i;

	if (!test_is_sdp())
		tap_skip("SDP's own buffers");
	if (sysconf(_SC_PAGESIZE) != 4096)
		tap_skip("page size %ld", sysconf(_SC_PAGESIZE));
	tx_idle_keep(idle, sizeof(idle));
	CHECK(write_file(RX_INIT_SYSCTL, "16") == 0, "write %s",
	      RX_INIT_SYSCTL);
	base = sdp_stat("MemPages");
	l = listener_pair(&addr, 4, &c, &s);
	n = tx_bufs_of(base, rx_pages);
	CHECK(n == 0, "%lld send buffers before a send", n);
	check_diag_mem(c, s, n);

	for (i = 0; i < 100; i++)
		ping_both(c, s);
	n = tx_bufs_of(base, rx_pages);
	tap_diag("%lld send buffers after 100 requests and answers", n);
	CHECK(n >= 2 && n <= 8,
	      "%lld send buffers for 100 requests and answers, expected 1 to 4 per end",
	      n);
	check_diag_mem(c, s, n);

	sent = fill_send_ring(c);
	n = tx_bufs_of(base, rx_pages);
	CHECK(n >= 16 + 1 && n <= 16 + 4,
	      "%lld send buffers once one end filled its ring, expected 16 and the other end's 1 to 4",
	      n);
	CHECK(check_diag_mem(c, s, n) == 16,
	      "the client that filled its ring holds fewer than 16");
	/* What waited in the slots arrives whole. */
	buf = malloc(sent);
	CHECK(buf, "malloc");
	CHECK(read_all(s, buf, sent) == (ssize_t)sent, "read: %s",
	      strerror(errno));
	for (i = 0; i < (int)sent; i++)
		if (buf[i] != (char)0xa5)
			break;
	CHECK(i == (int)sent, "byte %d of %zu is %#x", i, sent,
	      (unsigned char)buf[i]);
	free(buf);
	ping_both(c, s);

	close(c);
	close(s);
	close(l);
	tx_idle_restore(idle, base);
}

/* MemPages at @pages, and RxRingShrinks at least @shrinks. */
struct shrunk_at {
	long long pages;
	long long shrinks;
};

static bool rx_shrunk(void *arg)
{
	const struct shrunk_at *w = arg;

	return sdp_stat("MemPages") == w->pages &&
	       sdp_stat("RxRingShrinks") >= w->shrinks;
}

/*
 * The receive ring of @s is RX_INIT small buffers, all posted, and its
 * peer @c sends it messages of 4 KiB at most; @what says when.
 */
static void check_rx_small(int c, int s, const char *what)
{
	struct sdp_diag_sock dc, ds;

	CHECK(diag_dump(~0U, inode_of(c), &dc, 1) == 1 &&
	      diag_dump(~0U, inode_of(s), &ds, 1) == 1 &&
	      dc.has_conn && ds.has_conn,
	      "the pair is not in the sock_diag dump");
	CHECK(ds.conn.rx_alloc == RX_INIT && ds.conn.rx_posted == RX_INIT &&
	      ds.conn.mem_pages == RX_INIT * SMALL_PAGES,
	      "receiver %s: rx_alloc %u, rx_posted %u, mem_pages %u, expected %d, %d, %d",
	      what, ds.conn.rx_alloc, ds.conn.rx_posted, ds.conn.mem_pages,
	      RX_INIT, RX_INIT, RX_INIT * SMALL_PAGES);
	CHECK(dc.conn.tx_max == 4096,
	      "sender %s: tx_max %u, expected 4096", what, dc.conn.tx_max);
}

/* What sock_diag says the ends of @c, @s hold (for a failure's log). */
static void show_pair_mem(int c, int s)
{
	struct sdp_diag_sock d;
	int i, fd;

	for (i = 0; i < 2; i++) {
		fd = i ? s : c;
		if (diag_dump(~0U, inode_of(fd), &d, 1) != 1 || !d.has_conn)
			continue;
		tap_diag("%s: rx_alloc %u, rx_posted %u, tx_alloc %u, mem_pages %u, tx_max %u",
			 i ? "receiver" : "sender", d.conn.rx_alloc,
			 d.conn.rx_posted, d.conn.tx_alloc, d.conn.mem_pages,
			 d.conn.tx_max);
	}
}

/*
 * A receive ring that grew shrinks back once no data came for
 * net.sdp.rx_idle_ms (here 200 ms): the receiver tells the sender, with
 * a ChRcvBufAck of 4 KiB buffers, from which message on they are small;
 * the sender sends the messages before that one, empty when it has
 * nothing to say, so that the full buffers come back; the receiver frees
 * them and posts RX_INIT small ones.  1 MiB one way, then quiet: the
 * pair holds what a new pair holds (its send buffers go too,
 * net.sdp.tx_idle_ms 200), RxRingShrinks +1, and sock_diag agrees.
 * Twice: the ring grows again when data comes (a second ChRcvBufAck,
 * which the sender takes), the data arrives whole, and it shrinks again.
 * With rx_idle_ms 0 a grown ring stays.
 */
static void test_memory_rx_shrink(void)
{
	const size_t n = 1 << 20;
	long long base, grows, shrinks, acks_tx, acks_rx;
	struct sockaddr_storage addr;
	struct shrunk_at want;
	int c, s, l, round;
	char idle[32];
	pid_t sender;

	if (!test_is_sdp())
		tap_skip("SDP's own buffers");
	if (sysconf(_SC_PAGESIZE) != 4096)
		tap_skip("page size %ld", sysconf(_SC_PAGESIZE));
	CHECK(read_file(TX_IDLE_SYSCTL, idle, sizeof(idle)) == 0, "no %s",
	      TX_IDLE_SYSCTL);
	CHECK(write_file(RX_IDLE_SYSCTL, "200") == 0, "write %s",
	      RX_IDLE_SYSCTL);
	CHECK(write_file(TX_IDLE_SYSCTL, "200") == 0, "write %s",
	      TX_IDLE_SYSCTL);
	base = sdp_stat("MemPages");
	l = listener_pair(&addr, 4, &c, &s);
	grows = sdp_stat("RxRingGrows");
	shrinks = sdp_stat("RxRingShrinks");
	acks_tx = sdp_stat("ChRcvBufAckTx");
	acks_rx = sdp_stat("ChRcvBufAckRx");
	want.pages = base + 2 * RX_INIT * SMALL_PAGES;
	CHECK(shrinks >= 0, "no RxRingShrinks counter");

	for (round = 1; round <= 2; round++) {
		sender = send_bytes_async(c, n);
		recv_bytes(s, n);
		wait_child_ok(sender);
		CHECK(sdp_stat("RxRingGrows") - grows >= round,
		      "round %d: RxRingGrows +%lld", round,
		      sdp_stat("RxRingGrows") - grows);
		want.shrinks = shrinks + round;
		if (!wait_until(rx_shrunk, &want, WAIT_MS))
			show_pair_mem(c, s);
		CHECK(sdp_stat("MemPages") == want.pages &&
		      sdp_stat("RxRingShrinks") >= want.shrinks,
		      "round %d: MemPages +%lld, RxRingShrinks +%lld %d ms after the data, expected +%d and +%d",
		      round, sdp_stat("MemPages") - base,
		      sdp_stat("RxRingShrinks") - shrinks, WAIT_MS,
		      2 * RX_INIT * SMALL_PAGES, round);
		/* Each growth shrank back, each told with a ChRcvBufAck. */
		CHECK(sdp_stat("RxRingShrinks") - shrinks ==
		      sdp_stat("RxRingGrows") - grows,
		      "round %d: RxRingGrows +%lld, RxRingShrinks +%lld", round,
		      sdp_stat("RxRingGrows") - grows,
		      sdp_stat("RxRingShrinks") - shrinks);
		CHECK(sdp_stat("ChRcvBufAckTx") - acks_tx ==
		      2 * (sdp_stat("RxRingGrows") - grows) &&
		      sdp_stat("ChRcvBufAckRx") - acks_rx ==
		      sdp_stat("ChRcvBufAckTx") - acks_tx,
		      "round %d: ChRcvBufAck tx +%lld rx +%lld for +%lld growths",
		      round, sdp_stat("ChRcvBufAckTx") - acks_tx,
		      sdp_stat("ChRcvBufAckRx") - acks_rx,
		      sdp_stat("RxRingGrows") - grows);
		check_rx_small(c, s, "after the quiet time");
		ping_both(c, s);
	}

	/* rx_idle_ms 0: the grown ring stays, 16 full buffers. */
	CHECK(write_file(RX_IDLE_SYSCTL, "0") == 0, "write %s",
	      RX_IDLE_SYSCTL);
	shrinks = sdp_stat("RxRingShrinks");
	sender = send_bytes_async(c, n);
	recv_bytes(s, n);
	wait_child_ok(sender);
	want.pages = base + RX_INIT * SMALL_PAGES + 16 * BUF_PAGES;
	want.shrinks = shrinks;
	if (!wait_until(rx_shrunk, &want, WAIT_MS))
		show_pair_mem(c, s);
	CHECK(sdp_stat("MemPages") == want.pages,
	      "MemPages +%lld with rx_idle_ms 0, expected +%d",
	      sdp_stat("MemPages") - base,
	      RX_INIT * SMALL_PAGES + 16 * BUF_PAGES);
	usleep(500 * 1000);
	CHECK(sdp_stat("MemPages") == want.pages &&
	      sdp_stat("RxRingShrinks") == shrinks,
	      "MemPages +%lld, RxRingShrinks +%lld with rx_idle_ms 0, 500 ms later",
	      sdp_stat("MemPages") - base,
	      sdp_stat("RxRingShrinks") - shrinks);

	close(c);
	close(s);
	close(l);
	tx_idle_restore(idle, base);
}

#define CG_ROOT		"/sys/fs/cgroup"

static long long cg_current(const char *cg)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/memory.current", cg);
	return read_ull(path);
}

struct cg_back {
	const char *cg;
	long long base;
};

static bool cg_back(void *arg)
{
	const struct cg_back *b = arg;

	return cg_current(b->cg) - b->base < (2 << 20);
}

/*
 * The buffers are charged to the memory cgroup of the socket (also when
 * the kernel allocates them in the CM's thread, and for an accepted
 * socket, whose cgroup is its listener's): four pairs made and used in
 * a cgroup, each client filling its send ring (its peer does not read),
 * raise its memory.current by at least 3/4 of their 4 x 16 send buffers
 * of 32 KiB (kept: net.sdp.tx_idle_ms 0), and closing them gives it
 * back.
 */
static void test_memory_cgroup(void)
{
	char cg[64], path[128], pid[16], ctl[256], idle[32];
	struct sockaddr_storage addr;
	struct cg_back back;
	int c[4], s[4], l, i;
	long long used;

	if (!test_is_sdp())
		tap_skip("SDP's own buffers");
	TAP_SKIP_IF_HOST("makes a cgroup at the root of the host's hierarchy and enables its memory controller there");
	if (access(CG_ROOT "/cgroup.controllers", F_OK) &&
	    mount("none", CG_ROOT, "cgroup2", 0, NULL))
		tap_skip("no cgroup2 at %s: %s", CG_ROOT, strerror(errno));
	if (read_file(CG_ROOT "/cgroup.controllers", ctl, sizeof(ctl)) ||
	    !strstr(ctl, "memory"))
		tap_skip("no memory controller");
	write_file(CG_ROOT "/cgroup.subtree_control", "+memory");
	snprintf(cg, sizeof(cg), CG_ROOT "/sdp-test-%d", getpid());
	CHECK(mkdir(cg, 0755) == 0, "mkdir %s: %s", cg, strerror(errno));
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	CHECK(write_file(path, pid) == 0, "join %s: %s", cg, strerror(errno));

	tx_idle_keep(idle, sizeof(idle));
	back.cg = cg;
	back.base = cg_current(cg);
	CHECK(back.base >= 0, "no memory.current in %s", cg);
	l = net_listener(&addr, 4, 0);
	for (i = 0; i < 4; i++) {
		c[i] = net_connect(&addr, 0);
		s[i] = net_accept(l, WAIT_MS);
		CHECK(fill_send_ring(c[i]) > 0, "nothing sent");
	}
	used = cg_current(cg) - back.base;
	tap_diag("memory.current +%lld kB for 4 pairs", used / 1024);
	CHECK(used >= 4 * 16 * 32 * 1024 / 4 * 3,
	      "memory.current +%lld kB: the buffers are not charged to the cgroup",
	      used / 1024);
	for (i = 0; i < 4; i++) {
		close(c[i]);
		close(s[i]);
	}
	close(l);
	CHECK(write_file(TX_IDLE_SYSCTL, idle) == 0, "write %s", TX_IDLE_SYSCTL);
	CHECK(wait_until(cg_back, &back, WAIT_MS),
	      "memory.current still +%lld kB after the close",
	      (cg_current(cg) - back.base) / 1024);
	CHECK(write_file(CG_ROOT "/cgroup.procs", pid) == 0, "leave %s", cg);
	rmdir(cg);
}

static const struct tap_test tests[] = {
	TAP_TEST(test_counters_transfer),
	TAP_TEST(test_counters_orderly_close_race),
	TAP_TEST(test_counters_refused),
	TAP_TEST(test_counters_abort),
	TAP_TEST(test_memory_limits),
	TAP_TEST(test_memory_tx_release),
	TAP_TEST(test_memory_tx_slots),
	TAP_TEST(test_memory_rx_shrink),
	TAP_TEST(test_memory_cgroup),
};

TAP_MAIN(tests)
