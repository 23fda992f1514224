// SPDX-License-Identifier: GPL-2.0
/*
 * Many connections at once: SDP_SCALE_CONNS (default 1000) SDP
 * connections in the test guest (2 GiB), all passing data at the same
 * time, some of them a stream that makes their receive rings grow, then
 * idle.  The data is checked end to end, the memory an idle
 * connection costs is asserted (the fall in MemAvailable, everything
 * counted: buffers, sockets, QPs and CQs as Soft-RoCE allocates them,
 * except on a real host (host mode), where it is only reported; and the
 * module's own buffers, MemPages, exactly),
 * and when they are closed every socket, page and RDMA resource is
 * given back.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "net.h"
#include "tap.h"
#include "util.h"

#define WAIT_MS		60000
/*
 * Bytes each client sends and gets back: a request and its answer, one
 * message each way, that fit the small buffers a ring starts on (4 KiB
 * with the BSDH), so that no ring grows.
 */
#define MSG_BYTES	4000
/*
 * Then the first BULK_CONNS of them carry BULK_BYTES one way, in sends
 * below net.sdp.zcopy_thresh (buffered): their servers' rings grow to 16
 * buffers of 32 KiB, and shrink back once quiet (net.sdp.rx_idle_ms).
 */
#define BULK_CONNS	64
#define BULK_BYTES	(256 * 1024)
#define BULK_SEND	(16 * 1024)
/*
 * What an idle connection may cost per end, everything counted: issue
 * 15's goal.  Four receive buffers of 4 KiB, Soft-RoCE's queues (send
 * queue 36, CQ 12, receive queue 4 KiB, as vmalloc) and the socket, CM
 * id and QP structures.
 */
#define IDLE_KIB_MAX	128
/*
 * On a KASAN kernel every slab object carries redzones and freed ones
 * wait in its quarantine: the same connections measured 153 KiB per end
 * on the debug kernel (Slab 103, VmallocUsed 52) where Debian's 6.1 and
 * 6.12 measure 94 and 83 (Slab 32 and 33, VmallocUsed 52).  There the
 * bound is this factor looser.
 */
#define KASAN_FACTOR	2
/* Pages of the receive buffers of an idle end (4 small ones). */
#define IDLE_PAGES	4
/*
 * Send buffers an end holds after its one message: a slot gets a 32 KiB
 * buffer only when a send needs it, so one (two, should a send be split
 * and find the first still in flight), not the ring's 16.
 */
#define BUSY_TX_BUFS	2
#define BUF_PAGES	(32 * 1024 / 4096)

/* One connection: its two ends and how far each direction has got. */
struct conn {
	int c, s;
	size_t c_sent, s_got, s_sent, c_got;
};

/* The fields of /proc/meminfo the test looks at, in KiB. */
struct meminfo {
	long avail, slab, vmalloc, pagetables;
};

static void meminfo_read(struct meminfo *m)
{
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	CHECK(f, "/proc/meminfo: %s", strerror(errno));
	memset(m, 0, sizeof(*m));
	m->avail = -1;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "MemAvailable: %ld kB", &m->avail);
		sscanf(line, "Slab: %ld kB", &m->slab);
		sscanf(line, "VmallocUsed: %ld kB", &m->vmalloc);
		sscanf(line, "PageTables: %ld kB", &m->pagetables);
	}
	fclose(f);
	CHECK(m->avail > 0, "no MemAvailable");
}

static void raise_nofile(int n)
{
	struct rlimit rl = { .rlim_cur = n, .rlim_max = n };

	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "RLIMIT_NOFILE %d: %s", n,
	      strerror(errno));
}

/* Send what is left of connection @i's pattern on @fd (@who's end). */
static void send_rest(int fd, int i, char *tx, size_t *done, const char *who)
{
	ssize_t r;

	pattern_fill(tx, MSG_BYTES, i, 0);
	r = send(fd, tx + *done, MSG_BYTES - *done, MSG_DONTWAIT);
	CHECK(r > 0 || errno == EAGAIN, "connection %d: %s send: %s", i, who,
	      strerror(errno));
	if (r > 0)
		*done += r;
}

/* Read what has come of connection @i's pattern on @fd, and check it. */
static void recv_some(int fd, int i, char *buf, size_t *done, const char *who)
{
	ssize_t r = recv(fd, buf, MSG_BYTES - *done, MSG_DONTWAIT);

	CHECK(r > 0 || (r < 0 && errno == EAGAIN), "connection %d: %s recv %zd: %s",
	      i, who, r, r ? strerror(errno) : "EOF");
	if (r > 0) {
		CHECK(pattern_check(buf, r, i, *done) < 0,
		      "connection %d: %s got a wrong byte at %zu", i, who, *done);
		*done += r;
	}
}

/*
 * Move the bytes of every connection that poll() says can move: each
 * client sends MSG_BYTES of its pattern (seed: its index), its server
 * reads and checks them and, once all are in, sends the client's
 * pattern back in one send, which the client reads and checks.
 * Returns how many connections are done.
 */
static int pass_data(struct conn *cn, int n, struct pollfd *pfd, char *buf,
		     char *tx)
{
	int i, done = 0;

	for (i = 0; i < n; i++) {
		struct conn *k = &cn[i];
		short ce = pfd[2 * i].revents, se = pfd[2 * i + 1].revents;

		CHECK(!((ce | se) & (POLLERR | POLLNVAL)),
		      "connection %d: poll events %#x/%#x", i, ce, se);
		if ((ce & POLLOUT) && k->c_sent < MSG_BYTES)
			send_rest(k->c, i, tx, &k->c_sent, "client");
		if ((se & POLLIN) && k->s_got < MSG_BYTES)
			recv_some(k->s, i, buf, &k->s_got, "server");
		if ((se & POLLOUT) && k->s_got == MSG_BYTES &&
		    k->s_sent < MSG_BYTES)
			send_rest(k->s, i, tx, &k->s_sent, "server");
		if ((ce & POLLIN) && k->c_got < MSG_BYTES)
			recv_some(k->c, i, buf, &k->c_got, "client");
		pfd[2 * i].events = (k->c_sent < MSG_BYTES ? POLLOUT : 0) |
				    (k->c_got < MSG_BYTES ? POLLIN : 0);
		pfd[2 * i + 1].events =
			(k->s_got < MSG_BYTES ? POLLIN : 0) |
			(k->s_got == MSG_BYTES && k->s_sent < MSG_BYTES ?
			 POLLOUT : 0);
		if (k->c_got == MSG_BYTES)
			done++;
	}
	return done;
}

/*
 * The first @k connections of @cn: each client sends BULK_BYTES of its
 * pattern (a child process, one connection after the other, blocking),
 * each server reads them in turn and checks them.
 */
static void pass_bulk(struct conn *cn, int k, char *buf)
{
	int i, status;
	pid_t pid;

	for (i = 0; i < k; i++) {
		set_nonblock(cn[i].c, false);
		set_nonblock(cn[i].s, false);
	}
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		for (i = 0; i < k; i++) {
			size_t off;

			pattern_fill(buf, BULK_BYTES, i, 0);
			for (off = 0; off < BULK_BYTES; off += BULK_SEND)
				if (write_all(cn[i].c, buf + off, BULK_SEND) !=
				    BULK_SEND)
					_exit(1);
		}
		_exit(0);
	}
	for (i = 0; i < k; i++) {
		CHECK(read_all(cn[i].s, buf, BULK_BYTES) == BULK_BYTES,
		      "connection %d: bulk read: %s", i, strerror(errno));
		CHECK(pattern_check(buf, BULK_BYTES, i, 0) < 0,
		      "connection %d: wrong bulk data", i);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "the bulk sender failed");
}

struct idle_wait {
	long long releases;
	long long grows, shrinks;
};

/*
 * Every end has given its send buffers back (net.sdp.tx_idle_ms), and
 * every receive ring that grew has shrunk back (net.sdp.rx_idle_ms).
 */
static bool rings_released(void *arg)
{
	const struct idle_wait *w = arg;

	return sdp_stat("TxRingReleases") >= w->releases &&
	       sdp_stat("RxRingShrinks") - w->shrinks ==
	       sdp_stat("RxRingGrows") - w->grows;
}

static bool no_sdp_sockets(void *arg)
{
	(void)arg;
	return proc_net_sdp_count() == 0;
}

static bool mem_pages_back(void *arg)
{
	return sdp_stat("MemPages") == *(long long *)arg;
}

/*
 * SDP_SCALE_CONNS connections, made one after another, pass MSG_BYTES
 * each way all at once (poll() over every end).  Right after the data,
 * each end holds at most BUSY_TX_BUFS send buffers on top of its receive
 * buffers (MemPages).  BULK_CONNS of them then stream BULK_BYTES one
 * way, and their servers' rings grow (RxRingGrows).  They are left idle
 * until each end has freed its send buffers (net.sdp.tx_idle_ms, 1 s)
 * and every ring that grew has shrunk back (net.sdp.rx_idle_ms, 1 s).
 * Then
 * the fall in MemAvailable since before the first connect, over twice
 * the connections, is at most IDLE_KIB_MAX per end, and each end holds
 * only its rx_init_bufs receive buffers (MemPages); every connection
 * still carries a byte each way; closed, all of it is given back.
 */
static void test_scale_idle_connections(void)
{
	int n = atoi(env_or("SDP_SCALE_CONNS", "1000"));
	long long pages, idle_pages, grows, shrinks, rel, ms;
	struct sockaddr_storage addr;
	struct rdma_res res0, res;
	struct idle_wait iw;
	struct pollfd *pfd;
	struct meminfo m0, m1;
	long per_end, idle_max;
	struct conn *cn;
	char *buf, *tx, rs[128], ch;
	int l, i, done;

	if (!test_is_sdp())
		tap_skip("SDP's own connections");
	CHECK(n > 0, "SDP_SCALE_CONNS %d", n);
	raise_nofile(2 * n + 64);
	CHECK(proc_net_sdp_count() == 0, "%d SDP sockets before the test",
	      proc_net_sdp_count());
	CHECK(rdma_res_read(&res0) == 0, "rdma resource show");
	cn = xmalloc(n * sizeof(*cn));
	pfd = xmalloc(2 * n * sizeof(*pfd));
	buf = xmalloc(BULK_BYTES);
	tx = xmalloc(MSG_BYTES);
	memset(cn, 0, n * sizeof(*cn));
	memset(pfd, 0, 2 * n * sizeof(*pfd));
	memset(buf, 0, MSG_BYTES);
	memset(tx, 0, MSG_BYTES);

	pages = sdp_stat("MemPages");
	grows = sdp_stat("RxRingGrows");
	shrinks = sdp_stat("RxRingShrinks");
	rel = sdp_stat("TxRingReleases");
	CHECK(pages >= 0 && grows >= 0 && shrinks >= 0 && rel >= 0,
	      "no memory counters");
	meminfo_read(&m0);

	l = net_listener(&addr, n, 0);
	ms = now_ms();
	for (i = 0; i < n; i++) {
		cn[i].c = net_connect(&addr, 0);
		cn[i].s = net_accept(l, WAIT_MS);
		set_nonblock(cn[i].c, true);
		set_nonblock(cn[i].s, true);
		pfd[2 * i] = (struct pollfd){ .fd = cn[i].c,
					      .events = POLLOUT };
		pfd[2 * i + 1] = (struct pollfd){ .fd = cn[i].s,
						  .events = POLLIN };
	}
	ms = now_ms() - ms;
	tap_diag("%d connections in %lld ms (%lld per second)", n, ms,
		 ms ? n * 1000LL / ms : 0);
	CHECK(proc_net_sdp_count() == 2 * n + 1, "%d SDP sockets, expected %d",
	      proc_net_sdp_count(), 2 * n + 1);

	/* All of them at once. */
	ms = now_ms();
	done = 0;
	while (done < n) {
		int r = poll(pfd, 2 * n, WAIT_MS);

		CHECK(r > 0, "poll %d (%s) with %d of %d connections done", r,
		      r ? strerror(errno) : "timeout", done, n);
		done = pass_data(cn, n, pfd, buf, tx);
	}
	tap_diag("%d x %d bytes each way in %lld ms", n, MSG_BYTES,
		 now_ms() - ms);
	tap_diag("busy: MemPages +%lld (%lld per end)",
		 sdp_stat("MemPages") - pages,
		 (sdp_stat("MemPages") - pages) / (2 * n));
	CHECK(sdp_stat("MemPages") - pages <=
	      2LL * n * (IDLE_PAGES + BUSY_TX_BUFS * BUF_PAGES),
	      "MemPages +%lld for %d connections that passed a message each way, expected at most %d per end",
	      sdp_stat("MemPages") - pages, n,
	      IDLE_PAGES + BUSY_TX_BUFS * BUF_PAGES);

	/* Some stream: their servers' rings grow. */
	ms = now_ms();
	pass_bulk(cn, BULK_CONNS < n ? BULK_CONNS : n, buf);
	tap_diag("%d x %d bytes one way in %lld ms: RxRingGrows +%lld",
		 BULK_CONNS < n ? BULK_CONNS : n, BULK_BYTES, now_ms() - ms,
		 sdp_stat("RxRingGrows") - grows);
	CHECK(sdp_stat("RxRingGrows") - grows >= (BULK_CONNS < n ? BULK_CONNS : n),
	      "RxRingGrows +%lld after %d streams", sdp_stat("RxRingGrows") - grows,
	      BULK_CONNS < n ? BULK_CONNS : n);

	/*
	 * Idle: every end that sent has freed its send buffers, every ring
	 * that grew has shrunk.
	 */
	iw.releases = rel + 2LL * n;
	iw.grows = grows;
	iw.shrinks = shrinks;
	CHECK(wait_until(rings_released, &iw, WAIT_MS),
	      "TxRingReleases +%lld, expected +%d; RxRingGrows +%lld, RxRingShrinks +%lld",
	      sdp_stat("TxRingReleases") - rel, 2 * n,
	      sdp_stat("RxRingGrows") - grows,
	      sdp_stat("RxRingShrinks") - shrinks);
	/*
	 * A shrink is counted when it starts (our ChRcvBufAck); its full
	 * buffers go once the peer has sent the messages before it.
	 */
	idle_pages = pages + 2LL * n * IDLE_PAGES;
	CHECK(wait_until(mem_pages_back, &idle_pages, WAIT_MS),
	      "MemPages +%lld for %d idle connections, expected %d per end",
	      sdp_stat("MemPages") - pages, n, IDLE_PAGES);
	meminfo_read(&m1);
	per_end = (m0.avail - m1.avail) / (2 * n);
	tap_diag("idle: MemAvailable %ld -> %ld KiB: %ld KiB per end, of which Slab %ld, VmallocUsed %ld, PageTables %ld; MemPages +%lld (%lld per end), RxRingGrows +%lld, RxRingShrinks +%lld",
		 m0.avail, m1.avail, per_end, (m1.slab - m0.slab) / (2 * n),
		 (m1.vmalloc - m0.vmalloc) / (2 * n),
		 (m1.pagetables - m0.pagetables) / (2 * n),
		 sdp_stat("MemPages") - pages,
		 (sdp_stat("MemPages") - pages) / (2 * n),
		 sdp_stat("RxRingGrows") - grows,
		 sdp_stat("RxRingShrinks") - shrinks);
	idle_max = IDLE_KIB_MAX * (kernel_has_kasan() ? KASAN_FACTOR : 1);
	/*
	 * On a real host (host mode) the rest of the host moves MemAvailable
	 * too, and an adapter's queues are not Soft-RoCE's: reported only.
	 */
	if (test_host_mode())
		tap_diag("host mode: %ld KiB per end, not held to %ld KiB",
			 per_end, idle_max);
	else
		CHECK(per_end <= idle_max,
		      "an idle connection costs %ld KiB per end, more than %ld%s",
		      per_end, idle_max, kernel_has_kasan() ? " (KASAN)" : "");

	/* Idle connections still work: a byte each way on each. */
	for (i = 0; i < n; i++) {
		set_nonblock(cn[i].c, false);
		set_nonblock(cn[i].s, false);
		CHECK(write_all(cn[i].c, "p", 1) == 1 &&
		      read_all(cn[i].s, &ch, 1) == 1 && ch == 'p' &&
		      write_all(cn[i].s, "q", 1) == 1 &&
		      read_all(cn[i].c, &ch, 1) == 1 && ch == 'q',
		      "connection %d after idle: %s", i, strerror(errno));
	}

	for (i = 0; i < n; i++) {
		CHECK(close(cn[i].c) == 0 && close(cn[i].s) == 0,
		      "close %d: %s", i, strerror(errno));
	}
	close(l);
	CHECK(wait_until(no_sdp_sockets, NULL, WAIT_MS),
	      "%d SDP sockets %d ms after the close", proc_net_sdp_count(),
	      WAIT_MS);
	CHECK(wait_until(mem_pages_back, &pages, WAIT_MS),
	      "MemPages %lld after the close, %lld before", sdp_stat("MemPages"),
	      pages);
	CHECK(rdma_res_wait(&res0, &res, WAIT_MS),
	      "RDMA resources %s after the close, %s before",
	      rdma_res_str(&res, rs, 64),
	      rdma_res_str(&res0, rs + 64, 64));
	free(cn);
	free(pfd);
	free(buf);
	free(tx);
}

static const struct tap_test tests[] = {
	TAP_TEST(test_scale_idle_connections),
};

TAP_MAIN(tests)
