// SPDX-License-Identifier: GPL-2.0
/*
 * Zero-copy: large blocking sends go as SrcAvail and the receiver
 * RDMA-reads them straight into its own buffer.  The tests check the
 * bytes (every one), the path they took (the SDP_INFO counters of both
 * ends), the pinned-page accounting (VmPin), and the corner cases:
 * interleaving with buffered data, two sending threads, nonblocking
 * sends, RLIMIT_MEMLOCK, signals, and a peer that aborts mid-transfer.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/errqueue.h>
#include <linux/sockios.h>
#include <linux/sdp.h>

#include "net.h"
#include "tap.h"
#include "util.h"

#define WAIT_MS		10000
#define MIB		(1024 * 1024)
#define THRESH_SYSCTL	"/proc/sys/net/sdp/zcopy_thresh"

static void need_sdp(void)
{
	if (!test_is_sdp())
		tap_skip("zero-copy is SDP's own");
}

static struct sdp_info info(int fd)
{
	return sdp_info_of(fd);
}

static bool no_pinned_pages(void *arg)
{
	(void)arg;
	return vm_pin_kb() == 0;
}

static void expect_unpinned(void)
{
	CHECK(wait_until(no_pinned_pages, NULL, WAIT_MS),
	      "%ld kB still pinned", vm_pin_kb());
}

static void set_thresh(int fd, int v)
{
	CHECK_OK(setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &v, sizeof(v)));
}

/* poll() has POLLHUP for *@arg (its connection is over). */
static bool hung_up(void *arg)
{
	return wait_fd(*(int *)arg, 0, 0) & POLLHUP;
}

/* A counter of /proc/net/sdp_stats; it must exist. */
static long long stat_value(const char *name)
{
	long long v = sdp_stat(name);

	CHECK(v >= 0, "no %s in /proc/net/sdp_stats", name);
	return v;
}

/*
 * The longest send that goes zero-copy in one advertisement: 1 MiB, or
 * one page less than the device maps in one MR where that is less:
 * soft-iWARP maps 256 pages (SIW_MAX_SGE_PBL).
 */
static size_t zc_len(void)
{
	return test_provider_siw() ? 255 * 4096 : MIB;
}

/* ---- A reader thread that checks the pattern ---- */

struct reader {
	int fd;
	uint64_t seed;
	size_t want;		/* bytes to read, then stop */
	size_t max_read;	/* largest single recv() (random sizes) */
	bool peek;		/* MSG_PEEK now and then */
	uint64_t rng;
	size_t got;
	const char *err;
};

static void *reader_fn(void *arg)
{
	struct reader *r = arg;
	size_t cap = r->max_read ? r->max_read : MIB;
	char *buf = malloc(cap), *pbuf = malloc(cap);
	struct rng rng;

	rng_seed(&rng, r->rng ? r->rng : 1);
	if (!buf || !pbuf) {
		r->err = "malloc";
		goto out;
	}
	while (r->got < r->want) {
		size_t n = r->max_read ? rng_range(&rng, 1, cap) : cap;
		ssize_t k;

		n = n < r->want - r->got ? n : r->want - r->got;
		if (r->peek && rng_range(&rng, 0, 7) == 0) {
			k = recv(r->fd, pbuf, n, MSG_PEEK);
			if (k <= 0) {
				r->err = k ? "recv(MSG_PEEK) failed" :
					     "EOF on peek";
				goto out;
			}
			if (pattern_check(pbuf, k, r->seed, r->got) >= 0) {
				r->err = "wrong byte in peeked data";
				goto out;
			}
		}
		k = recv(r->fd, buf, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			r->err = k ? "recv failed" : "early EOF";
			goto out;
		}
		if (pattern_check(buf, k, r->seed, r->got) >= 0) {
			r->err = "wrong byte";
			goto out;
		}
		r->got += k;
	}
out:
	free(buf);
	free(pbuf);
	return NULL;
}

static void reader_join(pthread_t t, struct reader *r)
{
	pthread_join(t, NULL);
	CHECK(!r->err, "reader: %s at stream offset %zu (%s)", r->err, r->got,
	      strerror(errno));
	CHECK(r->got == r->want, "reader got %zu of %zu", r->got, r->want);
}

/* Send @len pattern bytes in one send() call; all of them. */
static void send_one(int fd, size_t len, uint64_t seed, uint64_t off)
{
	char *buf = xmalloc(len);
	ssize_t n;

	pattern_fill(buf, len, seed, off);
	n = send(fd, buf, len, MSG_NOSIGNAL);
	CHECK(n == (ssize_t)len, "send %zu: %zd (%s)", len, n, strerror(errno));
	free(buf);
}

/* ---- Tests ---- */

/*
 * SDP_ZCOPY_THRESH starts at net.sdp.zcopy_thresh, reads back what was
 * set, refuses negative values, and is inherited by accepted sockets;
 * SDP_INFO is read-only and its data counters start at zero.
 */
static void test_sockopts(void)
{
	struct sockaddr_storage addr;
	struct sdp_info si, zero;
	socklen_t len;
	int l, c, s, v;
	long long param;

	need_sdp();
	param = read_ull(THRESH_SYSCTL);
	CHECK(param >= 0, "cannot read %s", THRESH_SYSCTL);
	l = net_listener(&addr, 4, 0);
	CHECK(sockopt_get(l, SOL_SDP, SDP_ZCOPY_THRESH) == param,
	      "default threshold %d, net.sdp.zcopy_thresh %lld",
	      sockopt_get(l, SOL_SDP, SDP_ZCOPY_THRESH), param);
	set_thresh(l, 12345);
	CHECK(sockopt_get(l, SOL_SDP, SDP_ZCOPY_THRESH) == 12345,
	      "threshold did not stick");
	v = -1;
	CHECK_ERRNO(setsockopt(l, SOL_SDP, SDP_ZCOPY_THRESH, &v, sizeof(v)),
		    EINVAL);
	CHECK_ERRNO(setsockopt(l, SOL_SDP, SDP_INFO, &v, sizeof(v)),
		    ENOPROTOOPT);
	CHECK_ERRNO(setsockopt(l, SOL_SDP, 15, &v, sizeof(v)), ENOPROTOOPT);

	c = net_connect(&addr, 0);
	s = net_accept(l, WAIT_MS);
	CHECK(sockopt_get(s, SOL_SDP, SDP_ZCOPY_THRESH) == 12345,
	      "accepted socket has threshold %d, its listener 12345",
	      sockopt_get(s, SOL_SDP, SDP_ZCOPY_THRESH));
	memset(&zero, 0, sizeof(zero));
	si = info(c);
	/*
	 * Nothing sent yet: every data counter is zero.  Only the credit
	 * counters (the last three fields) may have moved: the connection
	 * setup exchanges credit updates.
	 */
	CHECK(!memcmp(&si, &zero, offsetof(struct sdp_info,
					   sdpi_credit_updates_tx)),
	      "SDP_INFO data counters not zero at start");
	/* A short buffer gets the first fields. */
	len = 8;
	CHECK_OK(getsockopt(c, SOL_SDP, SDP_INFO, &si, &len));
	CHECK(len == 8, "short SDP_INFO length %u", len);
	close(c);
	close(s);
	close(l);
}

/*
 * One 1 MiB send (zc_len()) goes zero-copy: the receiver RDMA-reads all
 * of it, no byte goes through the buffers, and nothing stays pinned.  With the
 * threshold at 0 the same send goes buffered.
 */
static void test_path_counters(void)
{
	struct sdp_info ci, si;
	struct reader r = { .seed = 11, .want = zc_len() };
	long long len = zc_len(), tx0, rx0, itx0, irx0;
	pthread_t t;
	int c, s;

	need_sdp();
	tx0 = stat_value("ZcopyTxBytes");
	rx0 = stat_value("ZcopyRxBytes");
	itx0 = stat_value("ZcopyRemoteInvTx");
	irx0 = stat_value("ZcopyRemoteInvRx");
	net_pair(&c, &s);
	r.fd = s;
	CHECK(!pthread_create(&t, NULL, reader_fn, &r), "pthread_create");
	send_one(c, len, 11, 0);
	reader_join(t, &r);
	ci = info(c);
	si = info(s);
	/* The namespace's counters moved by as much. */
	CHECK(stat_value("ZcopyTxBytes") - tx0 == len &&
	      stat_value("ZcopyRxBytes") - rx0 == len,
	      "/proc/net/sdp_stats: ZcopyTxBytes +%lld, ZcopyRxBytes +%lld",
	      stat_value("ZcopyTxBytes") - tx0, stat_value("ZcopyRxBytes") - rx0);
	tap_diag("sender: %llu zcopy bytes in %llu SrcAvail; receiver: %llu bytes in %llu reads",
		 (unsigned long long)ci.sdpi_zcopy_tx_bytes,
		 (unsigned long long)ci.sdpi_srcavail_tx,
		 (unsigned long long)si.sdpi_zcopy_rx_bytes,
		 (unsigned long long)si.sdpi_rdma_reads);
	CHECK(ci.sdpi_zcopy_tx_bytes == (uint64_t)len &&
	      ci.sdpi_bcopy_tx_bytes == 0,
	      "sender: %llu zcopy, %llu bcopy bytes",
	      (unsigned long long)ci.sdpi_zcopy_tx_bytes,
	      (unsigned long long)ci.sdpi_bcopy_tx_bytes);
	CHECK(ci.sdpi_srcavail_tx >= 1 && ci.sdpi_sendsm_rx == 0 &&
	      ci.sdpi_cancel_tx == 0, "sender: %llu SrcAvail, %llu SendSM, %llu cancels",
	      (unsigned long long)ci.sdpi_srcavail_tx,
	      (unsigned long long)ci.sdpi_sendsm_rx,
	      (unsigned long long)ci.sdpi_cancel_tx);
	CHECK(si.sdpi_zcopy_rx_bytes == (uint64_t)len &&
	      si.sdpi_bcopy_rx_bytes == 0 &&
	      si.sdpi_rdma_reads >= 1 &&
	      si.sdpi_srcavail_rx == ci.sdpi_srcavail_tx,
	      "receiver: %llu zcopy, %llu bcopy bytes, %llu reads",
	      (unsigned long long)si.sdpi_zcopy_rx_bytes,
	      (unsigned long long)si.sdpi_bcopy_rx_bytes,
	      (unsigned long long)si.sdpi_rdma_reads);
	/*
	 * Every advertisement was read in full, so the receiver's last
	 * RdmaRdCompl of each invalidated the sender's key (both ends
	 * allow it), and the sender posted no invalidation of its own.
	 */
	CHECK(si.sdpi_rinv_tx == si.sdpi_srcavail_rx &&
	      ci.sdpi_rinv_rx == ci.sdpi_srcavail_tx,
	      "remote invalidations: %llu sent for %llu SrcAvail, %llu received for %llu",
	      (unsigned long long)si.sdpi_rinv_tx,
	      (unsigned long long)si.sdpi_srcavail_rx,
	      (unsigned long long)ci.sdpi_rinv_rx,
	      (unsigned long long)ci.sdpi_srcavail_tx);
	CHECK(stat_value("ZcopyRemoteInvTx") - itx0 ==
	      (long long)ci.sdpi_srcavail_tx &&
	      stat_value("ZcopyRemoteInvRx") - irx0 ==
	      (long long)ci.sdpi_srcavail_tx,
	      "/proc/net/sdp_stats: ZcopyRemoteInvTx +%lld, ZcopyRemoteInvRx +%lld",
	      stat_value("ZcopyRemoteInvTx") - itx0,
	      stat_value("ZcopyRemoteInvRx") - irx0);
	expect_unpinned();

	/* Disabled: the same send through the buffers. */
	set_thresh(c, 0);
	r = (struct reader){ .fd = s, .seed = 12, .want = MIB };
	CHECK(!pthread_create(&t, NULL, reader_fn, &r), "pthread_create");
	send_one(c, MIB, 12, 0);
	reader_join(t, &r);
	si = info(c);
	CHECK(si.sdpi_zcopy_tx_bytes == (uint64_t)len &&
	      si.sdpi_bcopy_tx_bytes == MIB &&
	      si.sdpi_srcavail_tx == ci.sdpi_srcavail_tx,
	      "threshold 0: %llu zcopy, %llu bcopy bytes",
	      (unsigned long long)si.sdpi_zcopy_tx_bytes,
	      (unsigned long long)si.sdpi_bcopy_tx_bytes);
	close(c);
	close(s);
}

/*
 * Random write sizes from 1 byte to 2 MiB mix both paths; random read
 * sizes, some peeking (which declines an advertisement with SendSM).
 * Every byte is checked; both paths and SendSM must have been used.
 */
static void test_mixed_integrity(void)
{
	size_t total = test_bytes(256 * MIB), sent = 0;
	struct reader r = { .seed = 21, .max_read = 3 * MIB / 2, .peek = true,
			    .rng = 5 };
	struct sdp_info ci, si;
	struct rng rng;
	char *buf = xmalloc(2 * MIB);
	pthread_t t;
	int c, s;

	need_sdp();
	net_pair(&c, &s);
	r.fd = s;
	r.want = total;
	CHECK(!pthread_create(&t, NULL, reader_fn, &r), "pthread_create");
	rng_seed(&rng, 7);
	while (sent < total) {
		size_t n = rng_range(&rng, 0, 3) ? rng_range(&rng, 64 * 1024,
							     2 * MIB) :
			   rng_range(&rng, 1, 64 * 1024);
		ssize_t k;

		n = n < total - sent ? n : total - sent;
		pattern_fill(buf, n, 21, sent);
		k = write_all(c, buf, n);
		CHECK(k == (ssize_t)n, "write %zu at %zu: %zd (%s)", n, sent, k,
		      strerror(errno));
		sent += n;
	}
	reader_join(t, &r);
	ci = info(c);
	si = info(s);
	tap_diag("%zu MiB: %llu MiB zero-copy, %llu MiB buffered; %llu SendSM",
		 total / MIB, (unsigned long long)ci.sdpi_zcopy_tx_bytes / MIB,
		 (unsigned long long)ci.sdpi_bcopy_tx_bytes / MIB,
		 (unsigned long long)ci.sdpi_sendsm_rx);
	CHECK(ci.sdpi_zcopy_tx_bytes + ci.sdpi_bcopy_tx_bytes == total,
	      "counted %llu + %llu bytes, sent %zu",
	      (unsigned long long)ci.sdpi_zcopy_tx_bytes,
	      (unsigned long long)ci.sdpi_bcopy_tx_bytes, total);
	/*
	 * How the bytes split depends on the machine's speed (a sender
	 * whose reader reads nothing for 0.5 s sends the rest buffered;
	 * the debug kernel is that slow at times), so only that both
	 * paths carried data is asserted.
	 */
	CHECK(ci.sdpi_zcopy_tx_bytes && ci.sdpi_bcopy_tx_bytes,
	      "one path unused");
	CHECK(si.sdpi_zcopy_rx_bytes == ci.sdpi_zcopy_tx_bytes,
	      "receiver read %llu, sender counted %llu",
	      (unsigned long long)si.sdpi_zcopy_rx_bytes,
	      (unsigned long long)ci.sdpi_zcopy_tx_bytes);
	CHECK(si.sdpi_sendsm_tx == ci.sdpi_sendsm_rx && ci.sdpi_sendsm_rx,
	      "SendSM: %llu sent, %llu received",
	      (unsigned long long)si.sdpi_sendsm_tx,
	      (unsigned long long)ci.sdpi_sendsm_rx);
	/*
	 * Both paths and the declined advertisements (counted sent only
	 * as far as they were read) come to one stream position.
	 */
	expect_stream_pos("sender", c, total, 0);
	expect_stream_pos("receiver", s, 0, total);
	free(buf);
	close(c);
	close(s);
	expect_unpinned();
}

/* Small and large writes alternate; the stream stays in order. */
static void test_small_large_alternate(void)
{
	struct reader r = { .seed = 31, .max_read = 200 * 1024, .rng = 3 };
	size_t off = 0;
	int c, s, i;
	char *buf = xmalloc(300 * 1024);
	pthread_t t;

	need_sdp();
	net_pair(&c, &s);
	r.fd = s;
	r.want = 40 * (100 + 300 * 1024);
	CHECK(!pthread_create(&t, NULL, reader_fn, &r), "pthread_create");
	for (i = 0; i < 80; i++) {
		size_t n = i % 2 ? 300 * 1024 : 100;

		pattern_fill(buf, n, 31, off);
		CHECK(write_all(c, buf, n) == (ssize_t)n, "write: %s",
		      strerror(errno));
		off += n;
	}
	reader_join(t, &r);
	CHECK(info(c).sdpi_zcopy_tx_bytes >= 20 * 300 * 1024,
	      "large writes did not go zero-copy");
	free(buf);
	close(c);
	close(s);
}

/*
 * A fresh connection, whose peer posted its first few receive buffers
 * only: a small write, then a large one.  The large one goes zero-copy
 * at once, whole: its SrcAvail (which needs three credits, so that its
 * cancel can follow) is not held up behind the small write's credit, and
 * is neither cancelled nor taken back.  Before, with three buffers, it
 * waited for a third credit that the peer had no reason to send, and went
 * buffered after a stall.
 */
static void test_large_after_small_on_fresh(void)
{
	struct reader r = { .seed = 37 };
	const size_t big = zc_len();
	struct sdp_info si;
	pthread_t t;
	int c, s;

	need_sdp();
	net_pair(&c, &s);
	r.fd = s;
	r.want = 100 + big;
	CHECK(!pthread_create(&t, NULL, reader_fn, &r), "pthread_create");
	send_one(c, 100, 37, 0);
	send_one(c, big, 37, 100);
	reader_join(t, &r);
	si = info(c);
	CHECK(si.sdpi_zcopy_tx_bytes == big && si.sdpi_srcavail_tx == 1 &&
	      si.sdpi_cancel_tx == 0 && si.sdpi_sendsm_rx == 0,
	      "%llu of %zu bytes zero-copy, %llu SrcAvail, %llu cancelled, %llu SendSM",
	      (unsigned long long)si.sdpi_zcopy_tx_bytes, big,
	      (unsigned long long)si.sdpi_srcavail_tx,
	      (unsigned long long)si.sdpi_cancel_tx,
	      (unsigned long long)si.sdpi_sendsm_rx);
	close(c);
	close(s);
}

#define ZC_READ_DELAY	"/sys/kernel/debug/sdp/zc_read_delay_ms"
/* What a reader reads first after a slow read (SDP_ZC_PROBE_LEN). */
#define ZC_PROBE_LEN	(64u << 10)

/*
 * Every RDMA read of an advertisement takes @ms longer from now on, as a
 * read the transport retried does (sdp_fault.c).  Skips without it.
 */
static void zc_read_delay(unsigned int ms)
{
	char v[16];

	TAP_SKIP_IF_HOST("every zero-copy read on the host would be slowed");
	if (access(ZC_READ_DELAY, W_OK))
		tap_skip("no %s: %s", ZC_READ_DELAY, strerror(errno));
	snprintf(v, sizeof(v), "%u", ms);
	CHECK(write_file(ZC_READ_DELAY, v) == 0, "write %s: %s", ZC_READ_DELAY,
	      strerror(errno));
}

/* One send of @len bytes, read by a thread; its zero-copy bytes. */
static uint64_t send_read_one(int c, int s, size_t len, uint64_t seed)
{
	struct reader r = { .fd = s, .seed = seed, .want = len };
	uint64_t zc0 = info(c).sdpi_zcopy_tx_bytes;
	pthread_t t;

	CHECK(!pthread_create(&t, NULL, reader_fn, &r), "pthread_create");
	send_one(c, len, seed, 0);
	reader_join(t, &r);
	return info(c).sdpi_zcopy_tx_bytes - zc0;
}

/*
 * RDMA reads as slow as the transport's retries make them on a lossy
 * link (each read counts as 0.7 s slower than it was, zc_read_delay()):
 * after two in a row the reader declines advertisements for a while
 * (SendSM), and the sender, declined four times in a row, stops
 * advertising: a send goes buffered without a SrcAvail.  That must
 * happen within 16 sends of 1 MiB (before, every send was advertised
 * and read zero-copy).  Then the reads are fast again, and once the
 * back-off (eight times the slow reads' time, about 12 s here) and the
 * sender's hold (1 s) are over, a whole send goes zero-copy again, its
 * first read a short probe: it takes more reads than a send on the clean
 * link before, where those reads were longer than a probe.
 */
static void test_slow_reads_go_buffered(void)
{
	const size_t len = zc_len();
	long long slow0, back0, end;
	uint64_t zc = 0, sa, zc_all = 0, r0, reads = 0, reads_clean;
	struct sdp_info ci, si;
	int c, s, i, held = -1;

	need_sdp();
	zc_read_delay(0);
	net_pair(&c, &s);
	r0 = info(s).sdpi_rdma_reads;
	zc = send_read_one(c, s, len, 60);
	reads_clean = info(s).sdpi_rdma_reads - r0;
	CHECK(zc == len, "on a clean link %llu of %zu bytes went zero-copy",
	      (unsigned long long)zc, len);
	zc = 0;
	zc_read_delay(700);
	/* Checked after the path, which is what matters: */
	slow0 = sdp_stat("ZcopySlowReads");
	back0 = sdp_stat("ZcopyBackoffs");
	for (i = 0; i < 16 && held < 0; i++) {
		sa = info(c).sdpi_srcavail_tx;
		zc_all += send_read_one(c, s, len, 61 + i);
		if (info(c).sdpi_srcavail_tx == sa)
			held = i;
	}
	ci = info(c);
	si = info(s);
	tap_diag("slow reads: %d sends, the first without SrcAvail #%d; %llu of %zu bytes zero-copy in %llu SrcAvail, %llu SendSM; %lld slow reads, %lld back-offs",
		 i, held + 1, (unsigned long long)zc_all, i * len,
		 (unsigned long long)ci.sdpi_srcavail_tx,
		 (unsigned long long)ci.sdpi_sendsm_rx,
		 sdp_stat("ZcopySlowReads") - slow0,
		 sdp_stat("ZcopyBackoffs") - back0);
	CHECK(held >= 0, "16 sends, every one advertised (%llu bytes zero-copy): slow reads did not move the sender to the buffered path",
	      (unsigned long long)zc_all);
	CHECK(ci.sdpi_bcopy_tx_bytes == i * len - zc_all && zc_all < i * len,
	      "%llu bytes zero-copy, %llu buffered, of %zu",
	      (unsigned long long)zc_all,
	      (unsigned long long)ci.sdpi_bcopy_tx_bytes, i * len);
	CHECK(ci.sdpi_sendsm_rx >= 4 && si.sdpi_sendsm_tx == ci.sdpi_sendsm_rx,
	      "%llu SendSM received, %llu sent: held before four declines",
	      (unsigned long long)ci.sdpi_sendsm_rx,
	      (unsigned long long)si.sdpi_sendsm_tx);
	CHECK(stat_value("ZcopySlowReads") - slow0 >= 2 &&
	      stat_value("ZcopyBackoffs") - back0 >= 1,
	      "ZcopySlowReads +%lld, ZcopyBackoffs +%lld",
	      stat_value("ZcopySlowReads") - slow0,
	      stat_value("ZcopyBackoffs") - back0);

	/* The link is clean again: zero-copy comes back. */
	zc_read_delay(0);
	end = now_ms() + 3 * WAIT_MS;
	for (i = 0; zc < len && now_ms() < end; i++) {
		usleep(250 * 1000);
		r0 = info(s).sdpi_rdma_reads;
		zc = send_read_one(c, s, len, 90 + i);
		reads = info(s).sdpi_rdma_reads - r0;
	}
	tap_diag("zero-copy again after %d sends, in %llu reads (%llu on the clean link)",
		 i, (unsigned long long)reads,
		 (unsigned long long)reads_clean);
	CHECK(zc == len, "no send went zero-copy within %d ms of fast reads (last: %llu of %zu bytes)",
	      3 * WAIT_MS, (unsigned long long)zc, len);
	/*
	 * The probe shows as more reads only where the clean link's reads
	 * were longer than a probe; soft-iWARP reads one run of the
	 * reader's pages at a time (one SGE), shorter than that.
	 */
	if (len / reads_clean > ZC_PROBE_LEN)
		CHECK(reads > reads_clean, "the send zero-copy again took %llu reads, as many as on the clean link: its first read was not a short probe",
		      (unsigned long long)reads);
	else
		tap_diag("reads of %llu bytes on average, no longer than a probe's %u: the probe does not show in the count",
			 (unsigned long long)(len / reads_clean), ZC_PROBE_LEN);
	/* Declined and backed-off advertisements: each byte counts once. */
	sa = info(c).sdpi_zcopy_tx_bytes + info(c).sdpi_bcopy_tx_bytes;
	expect_stream_pos("sender", c, sa, 0);
	expect_stream_pos("receiver", s, 0, sa);
	close(c);
	close(s);
	expect_unpinned();
}

/*
 * A back-off belongs to the connection whose reads were slow, not to
 * the socket: slow reads on a connection (zc_read_delay()) until the
 * reader backs off, the peer resets it, the reader's socket connects
 * again (a nonblocking connect() that left it connecting, called twice,
 * as in redo_round()), and the new connection's first 1 MiB is read
 * zero-copy at once.  A socket that kept the old back-off would decline
 * up to 64 s of advertisements on a clean connection (sdp_conn_reset()
 * starts each connection's pacing afresh).
 */
static void test_backoff_ends_with_connection(void)
{
	struct sockaddr_storage addr;
	const size_t len = zc_len();
	struct linger lg = { 1, 0 };
	long long back0;
	uint64_t zc;
	int l, c, s, r, e, i;

	need_sdp();
	zc_read_delay(0);
	l = net_listener(&addr, 4, 0);
	c = test_socket_af(addr.ss_family, SOCK_NONBLOCK);
	CHECK(c >= 0, "socket: %s", strerror(errno));
	r = connect(c, (const struct sockaddr *)&addr, sockaddr_len(&addr));
	CHECK(!r || errno == EINPROGRESS, "nonblocking connect: %s",
	      strerror(errno));
	CHECK(wait_fd(c, POLLOUT, WAIT_MS) & POLLOUT, "not connected");
	CHECK(!sockopt_get(c, SOL_SOCKET, SO_ERROR), "the connect failed");
	s = net_accept(l, WAIT_MS);
	set_nonblock(c, false);

	zc_read_delay(700);
	back0 = stat_value("ZcopyBackoffs");
	for (i = 0; i < 16 && stat_value("ZcopyBackoffs") == back0; i++)
		send_read_one(s, c, len, 120 + i);
	zc_read_delay(0);
	CHECK(stat_value("ZcopyBackoffs") > back0,
	      "%d sends of slow reads, no back-off", i);
	zc = send_read_one(s, c, len, 140);
	CHECK(zc < len, "%llu of %zu bytes zero-copy during the back-off",
	      (unsigned long long)zc, len);

	/* The peer resets the connection; the reader connects again. */
	CHECK_OK(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	CHECK_OK(close(s));
	CHECK(wait_until(hung_up, &c, WAIT_MS), "no reset came");
	r = connect(c, (const struct sockaddr *)&addr, sockaddr_len(&addr));
	e = errno;
	CHECK(r < 0 && (e == ECONNRESET || e == ECONNABORTED),
	      "connect() after the reset: %d (%s)", r, strerror(e));
	r = connect(c, (const struct sockaddr *)&addr, sockaddr_len(&addr));
	CHECK(!r, "connect() again: %s", strerror(errno));
	s = net_accept(l, WAIT_MS);

	zc = send_read_one(s, c, len, 141);
	CHECK(zc == len, "the new connection's first send: %llu of %zu bytes zero-copy: it inherited the old one's back-off",
	      (unsigned long long)zc, len);
	close(s);
	close(c);
	close(l);
	expect_unpinned();
}

/* ---- Two threads ---- */

struct rec_hdr {
	uint32_t magic;
	uint32_t thread;
	uint32_t seq;
	uint32_t len;
};

#define REC_MAGIC	0x5a43524bu
#define REC_COUNT	24

struct sender {
	int fd;
	uint32_t id;
	const char *err;
};

static void *record_sender(void *arg)
{
	struct sender *sd = arg;
	char *buf = malloc(sizeof(struct rec_hdr) + 512 * 1024);
	struct rng rng;
	uint32_t i;

	rng_seed(&rng, 100 + sd->id);
	for (i = 0; buf && i < REC_COUNT; i++) {
		struct rec_hdr h = { REC_MAGIC, sd->id, i,
				     rng_range(&rng, 1, 512 * 1024) };
		size_t n = sizeof(h) + h.len;

		memcpy(buf, &h, sizeof(h));
		pattern_fill(buf + sizeof(h), h.len, sd->id * 1000 + i, 0);
		if (send(sd->fd, buf, n, MSG_NOSIGNAL) != (ssize_t)n) {
			sd->err = "send was not complete";
			break;
		}
	}
	free(buf);
	return NULL;
}

/*
 * Two threads send records on one socket, each with one send(); every
 * record arrives whole and each thread's records in order.
 */
static void test_two_threads(void)
{
	struct sender sd[2];
	uint32_t next[2] = { 0, 0 };
	char *buf = xmalloc(512 * 1024);
	pthread_t t[2];
	int c, s, i;

	need_sdp();
	net_pair(&c, &s);
	for (i = 0; i < 2; i++) {
		sd[i] = (struct sender){ .fd = c, .id = i };
		CHECK(!pthread_create(&t[i], NULL, record_sender, &sd[i]),
		      "pthread_create");
	}
	for (i = 0; i < 2 * REC_COUNT; i++) {
		struct rec_hdr h;

		CHECK(read_all(s, &h, sizeof(h)) == sizeof(h), "record header");
		CHECK(h.magic == REC_MAGIC && h.thread < 2 &&
		      h.len <= 512 * 1024,
		      "record %d: bad header (magic %#x thread %u len %u): records interleaved",
		      i, h.magic, h.thread, h.len);
		CHECK(h.seq == next[h.thread], "thread %u: record %u after %u",
		      h.thread, h.seq, next[h.thread]);
		next[h.thread]++;
		CHECK(read_all(s, buf, h.len) == (ssize_t)h.len, "record body");
		CHECK(pattern_check(buf, h.len, h.thread * 1000 + h.seq, 0) < 0,
		      "record %u of thread %u corrupt", h.seq, h.thread);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		CHECK(!sd[i].err, "sender %d: %s", i, sd[i].err);
	}
	CHECK(info(c).sdpi_zcopy_tx_bytes > 0, "no record went zero-copy");
	free(buf);
	close(c);
	close(s);
}

/*
 * Nonblocking sends of 4 MiB to a peer that does not read return at
 * once, with what the buffers took, until EAGAIN; none advertises.
 */
static void test_nonblocking_send(void)
{
	size_t len = 4 * MIB;
	char *buf = xmalloc(len);
	long long t0, dt;
	ssize_t n;
	int c, s, i;

	need_sdp();
	net_pair(&c, &s);
	pattern_fill(buf, len, 41, 0);
	for (i = 0;; i++) {
		t0 = now_ms();
		n = send(c, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		dt = now_ms() - t0;
		CHECK(dt < 2000, "nonblocking send took %lld ms", dt);
		if (n < 0)
			break;
		CHECK((size_t)n < len, "nonblocking send took all %zd bytes", n);
		CHECK(i < 100, "no EAGAIN after 100 sends");
	}
	CHECK(errno == EAGAIN, "nonblocking send: %s", strerror(errno));
	CHECK(info(c).sdpi_srcavail_tx == 0, "a nonblocking send advertised");
	free(buf);
	close(c);
	close(s);
}

/* No CAP_IPC_LOCK and RLIMIT_MEMLOCK 0: nothing can be pinned. */
static void no_memlock(void)
{
	struct rlimit rl = { 0, 0 };

	CHECK(drop_cap(CAP_IPC_LOCK) == 0, "capset: %s", strerror(errno));
	CHECK(!has_cap(CAP_IPC_LOCK), "CAP_IPC_LOCK kept");
	CHECK_OK(setrlimit(RLIMIT_MEMLOCK, &rl));
}

static void wait_child_ok(pid_t pid, const char *what)
{
	int st;

	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed (status %#x)",
	      what, st);
}

/*
 * Without RLIMIT_MEMLOCK room (and without CAP_IPC_LOCK), a sender
 * falls back to buffered copy, and a receiver declines with SendSM;
 * either way every byte arrives.
 */
static void test_memlock_fallback(void)
{
	struct sdp_info ci, si;
	pid_t pid;
	int c, s;

	need_sdp();
	/* The sender cannot pin. */
	net_pair(&c, &s);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		no_memlock();
		send_one(c, MIB, 51, 0);
		_exit(0);
	}
	{
		struct reader r = { .fd = s, .seed = 51, .want = MIB };

		reader_fn(&r);
		CHECK(!r.err && r.got == MIB, "reader: %s", r.err);
	}
	wait_child_ok(pid, "limited sender");
	ci = info(c);
	CHECK(ci.sdpi_zcopy_fallbacks >= 1 && ci.sdpi_zcopy_tx_bytes == 0 &&
	      ci.sdpi_bcopy_tx_bytes == MIB,
	      "limited sender: %llu fallbacks, %llu zcopy, %llu bcopy bytes",
	      (unsigned long long)ci.sdpi_zcopy_fallbacks,
	      (unsigned long long)ci.sdpi_zcopy_tx_bytes,
	      (unsigned long long)ci.sdpi_bcopy_tx_bytes);
	close(c);
	close(s);

	/* The receiver cannot pin. */
	net_pair(&c, &s);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		struct reader r = { .fd = s, .seed = 52, .want = MIB };

		no_memlock();
		reader_fn(&r);
		CHECK(!r.err && r.got == MIB, "limited reader: %s", r.err);
		_exit(0);
	}
	send_one(c, MIB, 52, 0);
	wait_child_ok(pid, "limited reader");
	ci = info(c);
	si = info(s);
	CHECK(ci.sdpi_sendsm_rx >= 1 && si.sdpi_sendsm_tx == ci.sdpi_sendsm_rx &&
	      si.sdpi_zcopy_rx_bytes == 0 && si.sdpi_zcopy_fallbacks >= 1,
	      "limited reader: %llu SendSM, %llu zcopy bytes",
	      (unsigned long long)si.sdpi_sendsm_tx,
	      (unsigned long long)si.sdpi_zcopy_rx_bytes);
	close(c);
	close(s);
	expect_unpinned();
}

/* ---- Signals and aborts during a zero-copy send ---- */

static volatile sig_atomic_t got_signal;

static void on_sigusr1(int sig)
{
	(void)sig;
	got_signal = 1;
}

/* SIGUSR1 interrupts system calls (no SA_RESTART) and sets got_signal. */
static void catch_sigusr1(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
	got_signal = 0;
}

struct kicker {
	pthread_t target;
	pid_t tid;
	int abort_fd;		/* >= 0: abort this socket instead */
	pthread_t *after;	/* wait for this thread to end first */
	long long kicked_ms;	/* when it signalled or aborted */
};


/* Once the target sleeps in send(): signal it, or abort the peer. */
static void *kick_when_blocked(void *arg)
{
	struct kicker *k = arg;

	if (k->after)
		pthread_join(*k->after, NULL);
	if (!wait_until(task_sleeping, &k->tid, WAIT_MS))
		return NULL;
	k->kicked_ms = now_ms();
	if (k->abort_fd >= 0) {
		struct linger lg = { 1, 0 };

		setsockopt(k->abort_fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(k->abort_fd);
	} else {
		pthread_kill(k->target, SIGUSR1);
	}
	return NULL;
}

/*
 * A signal (handler without SA_RESTART) while a zero-copy send waits for
 * a reader that reads nothing: the sender cancels, and send() fails with
 * EINTR (or, if the peer looked stalled first and the rest went
 * buffered, returns what the buffers took).  The stream then goes on
 * with the next send and holds exactly what send() reported.
 */
static void test_signal_during_zcopy(void)
{
	struct kicker k = { .target = pthread_self(), .tid = gettid(),
			    .abort_fd = -1 };
	char *buf = xmalloc(MIB), *rbuf = xmalloc(MIB);
	pthread_t t;
	ssize_t n;
	int c, s;

	need_sdp();
	net_pair(&c, &s);
	catch_sigusr1();
	pattern_fill(buf, MIB, 61, 0);
	CHECK(!pthread_create(&t, NULL, kick_when_blocked, &k), "pthread_create");
	n = send(c, buf, MIB, MSG_NOSIGNAL);
	pthread_join(t, NULL);
	CHECK(got_signal, "the signal was not delivered");
	CHECK(n < 0 ? errno == EINTR : (size_t)n < MIB,
	      "send after the signal: %zd (%s)", n, strerror(errno));
	tap_diag("send() returned %zd%s", n, n < 0 ? " (EINTR)" : "");
	CHECK(info(c).sdpi_cancel_tx == 1, "%llu SrcAvailCancel sent",
	      (unsigned long long)info(c).sdpi_cancel_tx);
	/* What was not sent is not in the stream: the marker follows. */
	CHECK(write_all(c, "END", 3) == 3, "write: %s", strerror(errno));
	if (n > 0) {
		CHECK(read_all(s, rbuf, n) == n, "read the partial send");
		CHECK(pattern_check(rbuf, n, 61, 0) < 0, "partial send corrupt");
	}
	CHECK(read_all(s, rbuf, 3) == 3 && !memcmp(rbuf, "END", 3),
	      "the stream does not go on right after the cancelled send");
	free(buf);
	free(rbuf);
	close(c);
	close(s);
	expect_unpinned();
}

struct partial {
	int fd;
	size_t want;
	uint64_t seed;
	const char *err;
};

/* Read @want bytes in one recv() once data is there, then stop. */
static void *read_once(void *arg)
{
	struct partial *p = arg;
	char *buf = malloc(p->want);
	ssize_t n;

	if (wait_fd(p->fd, POLLIN, WAIT_MS) <= 0) {
		p->err = "nothing to read";
	} else {
		n = recv(p->fd, buf, p->want, MSG_WAITALL);
		if (n != (ssize_t)p->want)
			p->err = "short read";
		else if (pattern_check(buf, n, p->seed, 0) >= 0)
			p->err = "wrong byte";
	}
	free(buf);
	return NULL;
}

/*
 * The reader takes 100 KiB of a 1 MiB advertisement and stops; a signal
 * then makes send() return 100 KiB, and the stream goes on from there.
 */
static void test_signal_after_partial_read(void)
{
	struct kicker k = { .target = pthread_self(), .tid = gettid(),
			    .abort_fd = -1 };
	struct partial p = { .want = 100 * 1024, .seed = 62 };
	char *buf = xmalloc(MIB), rbuf[4];
	pthread_t rt, kt;
	ssize_t n;
	int c, s;

	need_sdp();
	net_pair(&c, &s);
	catch_sigusr1();
	pattern_fill(buf, MIB, 62, 0);
	p.fd = s;
	CHECK(!pthread_create(&rt, NULL, read_once, &p), "pthread_create");
	/* The kicker signals us once the reader is done and we sleep. */
	k.after = &rt;
	CHECK(!pthread_create(&kt, NULL, kick_when_blocked, &k),
	      "pthread_create");
	n = send(c, buf, MIB, MSG_NOSIGNAL);
	pthread_join(kt, NULL);
	CHECK(!p.err, "reader: %s", p.err);
	CHECK(got_signal, "the signal was not delivered");
	tap_diag("send() returned %zd", n);
	CHECK(n >= (ssize_t)p.want && n < MIB, "send returned %zd (%s)", n,
	      strerror(errno));
	CHECK(write_all(c, "END", 3) == 3, "write: %s", strerror(errno));
	{
		char *rest = xmalloc(MIB);
		size_t more = n - p.want;

		CHECK(read_all(s, rest, more) == (ssize_t)more, "rest of send");
		CHECK(pattern_check(rest, more, 62, p.want) < 0, "rest corrupt");
		free(rest);
	}
	CHECK(read_all(s, rbuf, 3) == 3 && !memcmp(rbuf, "END", 3),
	      "the stream does not go on right after the partial send");
	free(buf);
	close(c);
	close(s);
	expect_unpinned();
}

/*
 * The receiver aborts (SO_LINGER {1, 0}) while a zero-copy send waits
 * for it: send() fails within 5 s of the abort with ECONNRESET, as a TCP
 * send that a reset interrupts does, and no page stays pinned.  (If the
 * sender took the silent reader for stalled before the abort came and
 * went on through the buffers, send() returns what those took and the
 * next send() gets the ECONNRESET: the kicker aborts as soon as the
 * sender sleeps, long before the stall time, so this is rare.)
 */
static void test_peer_abort_during_zcopy(void)
{
	struct kicker k = { .target = pthread_self(), .tid = gettid() };
	char *buf = xmalloc(MIB);
	long long took;
	pthread_t t;
	ssize_t n;
	int c, s;

	need_sdp();
	net_pair(&c, &s);
	k.abort_fd = s;
	pattern_fill(buf, MIB, 71, 0);
	CHECK(!pthread_create(&t, NULL, kick_when_blocked, &k),
	      "pthread_create");
	n = send(c, buf, MIB, MSG_NOSIGNAL);
	CHECK(join_ms(t, WAIT_MS) == 0, "the kicker did not finish");
	CHECK(k.kicked_ms, "the send never blocked");
	if (n >= 0) {
		tap_diag("send() returned %zd before the abort", n);
		CHECK(n < MIB, "all of the send went to an aborted peer");
		n = send(c, buf, MIB, MSG_NOSIGNAL);
	}
	took = now_ms() - k.kicked_ms;
	CHECK(n < 0 && errno == ECONNRESET,
	      "send to an aborted peer: %zd (%s)", n, strerror(errno));
	CHECK(took < 5000, "send failed %lld ms after the abort", took);
	CHECK(info(c).sdpi_srcavail_tx >= 1, "the send was not zero-copy");
	expect_unpinned();
	free(buf);
	close(c);
}

struct zc_sender {
	int fd;
	size_t len;
	ssize_t ret;
	int err;
};

static void *zc_sender_fn(void *arg)
{
	struct zc_sender *z = arg;
	char *buf = malloc(z->len);

	if (!buf) {
		z->err = ENOMEM;
		return NULL;
	}
	pattern_fill(buf, z->len, 81, 0);
	z->ret = send(z->fd, buf, z->len, MSG_NOSIGNAL);
	z->err = errno;
	free(buf);
	return NULL;
}

/*
 * readv() with an empty element first, at a zero-copy advertisement: the
 * RDMA read goes into the next element (the empty one pins nothing), and
 * every byte arrives through the zero-copy path.
 */
static void test_readv_empty_element(void)
{
	struct zc_sender z = { .len = zc_len() };
	ssize_t len = zc_len();
	char *buf = xmalloc(len);
	pthread_t t;
	ssize_t n;
	int c, s;

	need_sdp();
	net_pair(&c, &s);
	z.fd = c;
	CHECK(!pthread_create(&t, NULL, zc_sender_fn, &z), "pthread_create");
	n = readv_all_empty_first(s, buf, len);
	CHECK(n == len, "readv: %zd (%s)", n, strerror(errno));
	CHECK(join_ms(t, WAIT_MS) == 0, "the send did not return");
	CHECK(z.ret == len, "send: %zd (%s)", z.ret, strerror(z.err));
	CHECK(pattern_check(buf, len, 81, 0) < 0, "wrong bytes");
	CHECK(info(s).sdpi_zcopy_rx_bytes == (uint64_t)len,
	      "%llu of %zd bytes came zero-copy",
	      (unsigned long long)info(s).sdpi_zcopy_rx_bytes, len);
	free(buf);
	close(c);
	close(s);
	expect_unpinned();
}

/*
 * One RDMA read covers at most the pages the send queue has read work
 * requests for (sdp_conn.c: 6 with the default rings, 768 KiB with
 * Soft-RoCE's 32 scatter entries; soft-iWARP has one), so that the
 * queue fits a power of two: a 1 MiB advertisement is read in parts, and
 * one recv() of 1 MiB still returns all of it, intact.  An advertisement
 * covers at most one page less than the device registers in one MR
 * (soft-iWARP: 256 pages); the rest comes buffered, for the next recv().
 */
static void test_read_in_parts(void)
{
	struct zc_sender z = { .len = MIB };
	struct sdp_info ci, si;
	ssize_t n, first;
	pthread_t t;
	char *buf;
	int c, s;

	need_sdp();
	net_pair(&c, &s);
	z.fd = c;
	buf = xmalloc(MIB);
	memset(buf, 0, MIB);
	CHECK(!pthread_create(&t, NULL, zc_sender_fn, &z), "pthread_create");
	CHECK(wait_fd(s, POLLIN, WAIT_MS) > 0, "nothing to read after %d ms",
	      WAIT_MS);
	n = first = recv(s, buf, MIB, 0);
	/* The buffered rest, if the advertisement did not cover it all. */
	if (n > 0 && n < MIB)
		n = recv(s, buf + n, MIB - n, MSG_WAITALL) == MIB - n ? MIB : -1;
	CHECK(join_ms(t, WAIT_MS) == 0, "the send has not ended after %d ms",
	      WAIT_MS);
	CHECK(z.ret == MIB, "send: %zd (%s)", z.ret, strerror(z.err));
	ci = info(c);
	si = info(s);
	tap_diag("one SrcAvail of %llu bytes read in %llu parts",
		 (unsigned long long)ci.sdpi_zcopy_tx_bytes,
		 (unsigned long long)si.sdpi_rdma_reads);
	CHECK(ci.sdpi_srcavail_tx == 1 && ci.sdpi_zcopy_tx_bytes > MIB / 2 &&
	      ci.sdpi_zcopy_tx_bytes <= MIB,
	      "sender: %llu SrcAvail, %llu zero-copy bytes",
	      (unsigned long long)ci.sdpi_srcavail_tx,
	      (unsigned long long)ci.sdpi_zcopy_tx_bytes);
	CHECK(n == MIB, "recv() of 1 MiB got %zd (%s)", n, strerror(errno));
	CHECK(first >= (ssize_t)ci.sdpi_zcopy_tx_bytes,
	      "one recv() got %zd of the %llu advertised bytes", first,
	      (unsigned long long)ci.sdpi_zcopy_tx_bytes);
	CHECK(pattern_check(buf, MIB, 81, 0) < 0, "wrong byte at %zd",
	      pattern_check(buf, MIB, 81, 0));
	CHECK(si.sdpi_zcopy_rx_bytes == ci.sdpi_zcopy_tx_bytes &&
	      si.sdpi_rdma_reads >= 2,
	      "receiver: %llu zero-copy bytes in %llu reads, expected %llu in at least 2",
	      (unsigned long long)si.sdpi_zcopy_rx_bytes,
	      (unsigned long long)si.sdpi_rdma_reads,
	      (unsigned long long)ci.sdpi_zcopy_tx_bytes);
	free(buf);
	close(c);
	close(s);
	expect_unpinned();
}

struct aligned_sender {
	int fd;
	char *buf;
	size_t len;
	ssize_t ret;
	int err;
};

static void *aligned_sender_fn(void *arg)
{
	struct aligned_sender *z = arg;

	z->ret = send(z->fd, z->buf, z->len, MSG_NOSIGNAL);
	z->err = errno;
	return NULL;
}

/*
 * recv()s of 32 bytes, each across a page boundary of the sender's
 * buffer (8 bytes before it, 24 after), with reads of the rest of each
 * page between them, all from one zero-copy advertisement: every byte
 * arrives intact, through RDMA reads.  soft-iWARP answers an RDMA read of
 * at most 32 bytes that crosses a page of its source with the wrong
 * bytes (siw_try_1seg() copies the second page's share from past the end
 * of the first), which the module must not let happen (sdp_zc_recv()).
 */
static void test_short_reads_across_pages(void)
{
	const size_t len = 256 << 10, page = 4096, small = 32;
	struct aligned_sender z = { .len = len };
	char *buf = xmalloc(page);
	size_t got = 0, want;
	pthread_t t;
	ssize_t n;
	int c, s;

	need_sdp();
	net_pair(&c, &s);
	z.fd = c;
	z.buf = aligned_alloc(page, len);
	CHECK(z.buf, "aligned_alloc");
	pattern_fill(z.buf, len, 83, 0);
	CHECK(!pthread_create(&t, NULL, aligned_sender_fn, &z), "pthread_create");
	/* Up to 8 bytes before the first boundary, then across each. */
	want = page - 8;
	while (got < len) {
		if (want > len - got)
			want = len - got;
		n = recv(s, buf, want, MSG_WAITALL);
		CHECK(n == (ssize_t)want, "recv %zu at %zu: %zd (%s)", want, got,
		      n, strerror(errno));
		CHECK(pattern_check(buf, n, 83, got) < 0,
		      "wrong byte at stream offset %zu (a read of %zu)",
		      got + pattern_check(buf, n, 83, got), want);
		got += n;
		want = want == small ? page - small : small;
	}
	CHECK(join_ms(t, WAIT_MS) == 0, "the send did not return");
	CHECK(z.ret == (ssize_t)len, "send: %zd (%s)", z.ret, strerror(z.err));
	CHECK(info(s).sdpi_zcopy_rx_bytes == len,
	      "%llu of %zu bytes came zero-copy",
	      (unsigned long long)info(s).sdpi_zcopy_rx_bytes, len);
	free(z.buf);
	free(buf);
	close(c);
	close(s);
	expect_unpinned();
}

/* The next MSG_ZEROCOPY notification of @fd must be ids @lo to @hi, @code. */
static void expect_zc_note(int fd, uint32_t lo, uint32_t hi, uint8_t code)
{
	struct zc_note n;
	int err;

	CHECK(wait_fd(fd, 0, WAIT_MS) & POLLERR, "no EPOLLERR for id %u", lo);
	err = zc_note_read(fd, &n);
	CHECK(!err, "MSG_ERRQUEUE: %s", strerror(-err));
	CHECK(n.lo == lo && n.hi == hi && n.code == code,
	      "notification of ids %u to %u, code %u; expected %u to %u, %u",
	      n.lo, n.hi, n.code, lo, hi, code);
}

/*
 * MSG_ZEROCOPY's notifications say what SDP did with the caller's pages.
 * A nonblocking send below the zero-copy threshold is copied: id 0,
 * SO_EE_CODE_ZEROCOPY_COPIED, queued before send() returns.  A blocking
 * send of 1 MiB (of what one advertisement maps, zc_len()) goes
 * zero-copy, the peer reading the caller's pages: id 1, code 0.  Three small sends, copied, before the program reads the
 * queue: one notification, ids 2 to 4, COPIED.  Everything arrives.
 */
static void test_msg_zerocopy_codes(void)
{
	const size_t big = 4 * MIB, one = zc_len();
	char *buf = xmalloc(big + MIB + 3000);
	struct reader r = { .seed = 43 };
	struct zc_note n;
	size_t off;
	ssize_t k;
	pthread_t t;
	int c, s, i;

	need_sdp();
	net_pair(&c, &s);
	i = 1;
	if (setsockopt(c, SOL_SOCKET, SO_ZEROCOPY, &i, sizeof(i))) {
		CHECK(errno == EOPNOTSUPP && !kernel_at_least(6, 12),
		      "SO_ZEROCOPY: %s", strerror(errno));
		free(buf);
		close(c);
		close(s);
		tap_skip("SO_ZEROCOPY: this kernel's socket core does not pass it to SDP (tests/stream.c test_msg_zerocopy)");
	}
	pattern_fill(buf, big + MIB + 3000, 43, 0);
	k = send(c, buf, 1000, MSG_ZEROCOPY | MSG_DONTWAIT | MSG_NOSIGNAL);
	CHECK(k == 1000, "nonblocking send: %zd (%s)", k, strerror(errno));
	off = k;
	expect_zc_note(c, 0, 0, SO_EE_CODE_ZEROCOPY_COPIED);
	CHECK(info(c).sdpi_srcavail_tx == 0, "1000 bytes were advertised");

	r.fd = s;
	r.want = off + one + 3000;
	CHECK_OK(pthread_create(&t, NULL, reader_fn, &r));
	k = send(c, buf + off, one, MSG_ZEROCOPY | MSG_NOSIGNAL);
	CHECK(k == (ssize_t)one, "send %zu: %zd (%s)", one, k, strerror(errno));
	off += one;
	CHECK(info(c).sdpi_zcopy_tx_bytes == one,
	      "%llu bytes zero-copy of the %zu-byte send",
	      (unsigned long long)info(c).sdpi_zcopy_tx_bytes, one);
	expect_zc_note(c, 1, 1, 0);
	for (i = 0; i < 3; i++) {
		k = send(c, buf + off, 1000, MSG_ZEROCOPY | MSG_NOSIGNAL);
		CHECK(k == 1000, "send 1000: %zd (%s)", k, strerror(errno));
		off += 1000;
	}
	expect_zc_note(c, 2, 4, SO_EE_CODE_ZEROCOPY_COPIED);
	CHECK(zc_note_read(c, &n) == -EAGAIN, "a notification beyond id 4");
	reader_join(t, &r);
	free(buf);
	close(c);
	close(s);
}

/*
 * SO_ZEROCOPY on @c, or skip on a kernel whose socket core refuses it
 * for SDP (6.1: tests/stream.c test_msg_zerocopy).
 */
static void msgzc_on(int c, int s, char *buf)
{
	int v = 1;

	if (!setsockopt(c, SOL_SOCKET, SO_ZEROCOPY, &v, sizeof(v)))
		return;
	CHECK(errno == EOPNOTSUPP && !kernel_at_least(6, 12),
	      "SO_ZEROCOPY: %s", strerror(errno));
	free(buf);
	close(c);
	close(s);
	tap_skip("SO_ZEROCOPY: this kernel's socket core does not pass it to SDP");
}

/* A nonblocking MSG_ZEROCOPY send of @len bytes at @buf: what it took. */
static ssize_t msgzc_send_nb(int fd, const char *buf, size_t len)
{
	return send(fd, buf, len, MSG_ZEROCOPY | MSG_DONTWAIT | MSG_NOSIGNAL);
}

static int outq(int fd)
{
	int v = -1;

	CHECK_OK(ioctl(fd, SIOCOUTQ, &v));
	return v;
}

/*
 * A connected pair, SO_ZEROCOPY on *@c, and a nonblocking MSG_ZEROCOPY
 * send from *@c of 1 MiB of stream @seed, which @buf gets: what it took.
 */
static ssize_t msgzc_pair_send(int *c, int *s, char *buf, uint64_t seed)
{
	ssize_t k;

	net_pair(c, s);
	msgzc_on(*c, *s, buf);
	pattern_fill(buf, MIB, seed, 0);
	k = msgzc_send_nb(*c, buf, MIB);
	CHECK(k > 0 && k <= MIB, "nonblocking send: %zd (%s)", k,
	      strerror(errno));
	return k;
}

/* @s reads @k bytes of stream @seed, then the end of the stream. */
static void read_to_end(int s, size_t k, uint64_t seed)
{
	struct reader r = { .fd = s, .seed = seed, .want = k };
	pthread_t t;
	char ch;

	CHECK_OK(pthread_create(&t, NULL, reader_fn, &r));
	reader_join(t, &r);
	CHECK(wait_fd(s, POLLIN, WAIT_MS) & POLLIN, "no end of stream");
	CHECK(recv(s, &ch, 1, MSG_DONTWAIT) == 0, "after the data: %s",
	      strerror(errno));
}

/*
 * A nonblocking MSG_ZEROCOPY send goes zero-copy, as an event-driven
 * server written for TCP expects: it returns at once with the bytes of
 * one advertisement (at most 1 MiB), which the peer then reads from the
 * caller's pages.  Until it has, no notification is queued, SIOCOUTQ
 * counts the bytes, and the socket is not writable (no POLLOUT; a
 * nonblocking send gets EAGAIN).  Then the notification has code 0 and
 * the caller's buffer is its own again (overwriting it changes nothing
 * the peer gets).  The program then sends three advertisements' worth
 * more as poll() allows (3 MiB; less where a device maps fewer pages,
 * zc_len()): every id is notified, every byte arrives, all of it
 * zero-copy, nothing stays pinned.
 */
static void test_msg_zerocopy_nonblocking(void)
{
	const size_t total = 4 * zc_len();
	char *buf = xmalloc(total);
	struct reader r = { .seed = 91, .want = total };
	uint32_t ids = 1, next = 1;
	struct sdp_info si;
	struct zc_note n;
	size_t off;
	pthread_t t;
	ssize_t k;
	int c, s;

	need_sdp();
	net_pair(&c, &s);
	msgzc_on(c, s, buf);
	pattern_fill(buf, total, 91, 0);
	k = msgzc_send_nb(c, buf, 2 * MIB);
	CHECK(k > 0 && k <= MIB, "nonblocking send of 2 MiB: %zd (%s)", k,
	      strerror(errno));
	CHECK(info(c).sdpi_srcavail_tx == 1,
	      "the nonblocking MSG_ZEROCOPY send was not advertised");
	CHECK(zc_note_read(c, &n) == -EAGAIN,
	      "notified (ids %u to %u) before the peer read", n.lo, n.hi);
	CHECK(outq(c) == k, "SIOCOUTQ %d with %zd bytes unread", outq(c), k);
	CHECK(!(wait_fd(c, POLLOUT, 0) & POLLOUT),
	      "writable while the peer has not read the advertisement");
	CHECK_ERRNO(send(c, buf + k, 1, MSG_DONTWAIT | MSG_NOSIGNAL), EAGAIN);

	r.fd = s;
	CHECK_OK(pthread_create(&t, NULL, reader_fn, &r));
	expect_zc_note(c, 0, 0, 0);
	CHECK(info(c).sdpi_zcopy_tx_bytes == (uint64_t)k,
	      "%llu bytes read zero-copy of %zd",
	      (unsigned long long)info(c).sdpi_zcopy_tx_bytes, k);
	memset(buf, 0xa5, k);		/* the pages are the program's again */

	/* As an event loop does: send on POLLOUT, read notes on POLLERR. */
	off = k;
	while (off < total || next < ids) {
		int ev = wait_fd(c, off < total ? POLLOUT : 0, WAIT_MS);

		CHECK(ev > 0, "nothing within %d ms at %zu, ids %u to %u unnotified (SIOCOUTQ %d; the reader at %zu)",
		      WAIT_MS, off, next, ids - 1, outq(c), r.got);
		if (ev & POLLERR) {
			CHECK(!zc_note_read(c, &n), "EPOLLERR, but MSG_ERRQUEUE: %s",
			      strerror(errno));
			CHECK(n.lo == next && n.hi >= n.lo && n.hi < ids,
			      "notification of ids %u to %u; expected from %u, below %u",
			      n.lo, n.hi, next, ids);
			next = n.hi + 1;
		}
		if ((ev & POLLOUT) && off < total) {
			k = msgzc_send_nb(c, buf + off, total - off);
			CHECK(k > 0 || errno == EAGAIN, "send at %zu: %zd (%s)",
			      off, k, strerror(errno));
			if (k > 0) {
				off += k;
				ids++;
			}
		}
	}
	reader_join(t, &r);
	si = info(c);
	tap_diag("%u sends, %llu advertised, %llu of %zu bytes zero-copy", ids,
		 (unsigned long long)si.sdpi_srcavail_tx,
		 (unsigned long long)si.sdpi_zcopy_tx_bytes, total);
	CHECK(si.sdpi_zcopy_tx_bytes == total,
	      "only %llu of %zu bytes zero-copy",
	      (unsigned long long)si.sdpi_zcopy_tx_bytes, total);
	CHECK(zc_note_read(c, &n) == -EAGAIN, "a notification beyond id %u",
	      ids - 1);
	expect_stream_pos("sender", c, total, 0);
	expect_stream_pos("receiver", s, 0, total);
	expect_unpinned();
	free(buf);
	close(c);
	close(s);
}

/*
 * A nonblocking MSG_ZEROCOPY send whose advertisement the peer declines
 * (it peeks first, and answers SendSM): after send() returned, the
 * kernel copies the rest from the caller's pages, still pinned, into the
 * send ring as fast as credits allow, and only then queues the
 * notification, with SO_EE_CODE_ZEROCOPY_COPIED.  Every byte arrives in
 * order, overwriting the buffer after the notification changes none of
 * them, and a later send follows them.
 */
static void test_msg_zerocopy_nonblocking_declined(void)
{
	char *buf = xmalloc(MIB + 1000), peek[100];
	struct reader r = { .seed = 92 };
	pthread_t t;
	ssize_t k;
	int c, s;

	need_sdp();
	k = msgzc_pair_send(&c, &s, buf, 92);
	pattern_fill(buf + MIB, 1000, 92, MIB);
	CHECK(recv(s, peek, sizeof(peek), MSG_PEEK) == sizeof(peek),
	      "peek: %s", strerror(errno));
	CHECK(pattern_check(peek, sizeof(peek), 92, 0) < 0, "wrong byte peeked");
	r.fd = s;
	r.want = k + 1000;
	CHECK_OK(pthread_create(&t, NULL, reader_fn, &r));
	expect_zc_note(c, 0, 0, SO_EE_CODE_ZEROCOPY_COPIED);
	memset(buf, 0x5a, k);
	CHECK(wait_fd(c, POLLOUT, WAIT_MS) & POLLOUT, "not writable");
	CHECK(send(c, buf + k, 1000, MSG_NOSIGNAL) == 1000, "send: %s",
	      strerror(errno));
	reader_join(t, &r);
	CHECK(info(c).sdpi_srcavail_tx == 1 && info(c).sdpi_zcopy_tx_bytes == 0,
	      "%llu SrcAvail, %llu bytes zero-copy; expected 1 declined",
	      (unsigned long long)info(c).sdpi_srcavail_tx,
	      (unsigned long long)info(c).sdpi_zcopy_tx_bytes);
	/* The declined advertisement's bytes count once, as Data. */
	expect_stream_pos("sender", c, k + 1000, 0);
	expect_stream_pos("receiver", s, 0, k + 1000);
	expect_unpinned();
	free(buf);
	close(c);
	close(s);
}

static bool cancel_sent(void *arg)
{
	return info(*(int *)arg).sdpi_cancel_tx > 0;
}

static bool cancel_received(void *arg)
{
	return info(*(int *)arg).sdpi_cancel_rx > 0;
}

/*
 * A nonblocking MSG_ZEROCOPY send to a peer that reads nothing for a
 * while: after 0.5 s without progress the kernel cancels the
 * advertisement on its own (SrcAvailCancel; the idle peer answers
 * SendSM) and copies the rest from the pinned pages as the peer's
 * buffers allow, without the program calling in again.  When the peer
 * reads, every byte arrives, the notification says COPIED, and nothing
 * stays pinned.
 */
static void test_msg_zerocopy_nonblocking_stalled(void)
{
	char *buf = xmalloc(MIB);
	struct reader r = { .seed = 94 };
	pthread_t t;
	ssize_t k;
	int c, s;

	need_sdp();
	k = msgzc_pair_send(&c, &s, buf, 94);
	CHECK(wait_until(cancel_sent, &c, WAIT_MS),
	      "the stalled advertisement was not cancelled");
	/* Posted is not arrived: the peer counts it when it gets it. */
	CHECK(wait_until(cancel_received, &s, WAIT_MS) &&
	      info(s).sdpi_cancel_rx == 1, "the peer saw %llu SrcAvailCancel",
	      (unsigned long long)info(s).sdpi_cancel_rx);
	r.fd = s;
	r.want = k;
	CHECK_OK(pthread_create(&t, NULL, reader_fn, &r));
	expect_zc_note(c, 0, 0, SO_EE_CODE_ZEROCOPY_COPIED);
	reader_join(t, &r);
	CHECK(info(c).sdpi_zcopy_tx_bytes == 0,
	      "%llu bytes zero-copy of a declined advertisement",
	      (unsigned long long)info(c).sdpi_zcopy_tx_bytes);
	/* The cancelled advertisement's bytes count once, as Data. */
	expect_stream_pos("sender", c, k, 0);
	expect_stream_pos("receiver", s, 0, k);
	expect_unpinned();
	free(buf);
	close(c);
	close(s);
}

/*
 * close() right after a nonblocking MSG_ZEROCOPY send: the peer still
 * gets every byte, then the end of the stream, and nothing stays pinned.
 * The same when the sending process exits at once (its memory goes; the
 * pinned pages stay until the peer has read them).  And a peer that
 * closes without reading resets the sender's connection, whose pages are
 * unpinned all the same.
 */
static void test_msg_zerocopy_nonblocking_close(void)
{
	char *buf = xmalloc(MIB), ch;
	ssize_t k;
	pid_t pid;
	int c, s;

	need_sdp();
	k = msgzc_pair_send(&c, &s, buf, 93);
	CHECK_OK(close(c));
	read_to_end(s, k, 93);
	close(s);
	expect_unpinned();

	net_pair(&c, &s);
	msgzc_on(c, s, buf);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (!pid)
		_exit(msgzc_send_nb(c, buf, zc_len()) == (ssize_t)zc_len() ?
		      0 : 1);
	close(c);
	wait_child_ok(pid, "the sender that exits");
	read_to_end(s, zc_len(), 93);
	close(s);
	expect_unpinned();

	msgzc_pair_send(&c, &s, buf, 93);
	CHECK(wait_fd(s, POLLIN, WAIT_MS) & POLLIN, "nothing to read");
	CHECK_OK(close(s));		/* unread data: the connection is reset */
	CHECK(wait_until(hung_up, &c, WAIT_MS), "the sender saw no reset");
	CHECK_ERRNO(recv(c, &ch, 1, MSG_DONTWAIT), ECONNRESET);
	expect_unpinned();
	free(buf);
	close(c);
}

/* ---- A storm of nonblocking MSG_ZEROCOPY sends ---- */

#define STORM_THREADS	3
#define STORM_MS	15000

struct storm {
	int id;
	int file;	/* sendfile() from it, or -1: MSG_ZEROCOPY sends */
	long rounds;
	const char *err;
};

static bool sdp_sockets_back(void *arg)
{
	return proc_net_sdp_count() <= *(int *)arg;
}

static void storm_notes(int fd)
{
	struct zc_note n;

	while (!zc_note_read(fd, &n))
		;
}

/* Read from @s until the end of the stream, an error, or @ms. */
static void storm_drain(int s, char *buf, int ms)
{
	long long end = now_ms() + ms;
	ssize_t r;

	while (now_ms() < end) {
		if (!(wait_fd(s, POLLIN, 100) & (POLLIN | POLLERR | POLLHUP)))
			continue;
		r = recv(s, buf, MIB, MSG_DONTWAIT);
		if (!r || (r < 0 && errno != EAGAIN && errno != EINTR))
			return;
	}
}

static void *storm_fn(void *arg)
{
	struct storm *st = arg;
	char *buf = malloc(3 * MIB), *rbuf = malloc(MIB);
	struct rng rng;
	long long end = now_ms() + STORM_MS;

	rng_seed(&rng, 1000 + st->id);
	if (!buf || !rbuf) {
		st->err = "malloc";
		goto out;
	}
	memset(buf, st->id, 3 * MIB);
	while (now_ms() < end) {
		struct linger lg = { 1, 0 };
		int c, s, i, n, one = 1;

		net_pair(&c, &s);
		if (st->file >= 0)
			set_nonblock(c, true);
		else if (setsockopt(c, SOL_SOCKET, SO_ZEROCOPY, &one,
				      sizeof(one))) {
			st->err = "SO_ZEROCOPY";
			close(c);
			close(s);
			break;
		}
		n = rng_range(&rng, 1, 4);
		for (i = 0; i < n; i++) {
			size_t len = MIB + rng_range(&rng, 0, MIB);
			/* Page-aligned (gathered) or not (copied). */
			off_t off = rng_range(&rng, 0, 1) ? 0 :
				    rng_range(&rng, 1, 4095);
			ssize_t r;
			int q;

			if (st->file >= 0)
				r = sendfile(c, st->file, &off, len);
			else
				r = send(c, buf + off, len, MSG_ZEROCOPY |
					 MSG_DONTWAIT | MSG_NOSIGNAL);

			if (r < 0 && errno != EAGAIN)
				break;
			switch (rng_range(&rng, 0, 9)) {
			case 0:
				recv(s, rbuf, 100, MSG_PEEK | MSG_DONTWAIT);
				break;
			case 1:
				recv(s, NULL, MIB, MSG_TRUNC | MSG_DONTWAIT);
				break;
			case 2: case 3: case 4: case 5:
				recv(s, rbuf, rng_range(&rng, 1, MIB),
				     MSG_DONTWAIT);
				break;
			}
			wait_fd(c, POLLOUT, rng_range(&rng, 0, 50));
			storm_notes(c);
			if (ioctl(c, SIOCOUTQ, &q) || ioctl(c, SIOCOUTQNSD, &q)) {
				st->err = "SIOCOUTQ/SIOCOUTQNSD";
				break;
			}
		}
		switch (rng_range(&rng, 0, 5)) {
		case 0:		/* unread data: the connection is reset */
			close(c);
			close(s);
			break;
		case 1:		/* abort */
			setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			close(c);
			close(s);
			break;
		case 2:		/* the sender closes, the peer reads it all */
			close(c);
			storm_drain(s, rbuf, 3000);
			close(s);
			break;
		case 3:		/* the peer resets, the sender sees it */
			close(s);
			wait_fd(c, 0, 20);
			storm_notes(c);
			close(c);
			break;
		default:	/* half close, read it all, then the notes */
			shutdown(c, SHUT_WR);
			storm_drain(s, rbuf, 3000);
			storm_notes(c);
			close(c);
			close(s);
			break;
		}
		st->rounds++;
	}
out:
	free(buf);
	free(rbuf);
	return NULL;
}

/*
 * Hardening: for 15 s, three threads each open a connection, make one to
 * four nonblocking MSG_ZEROCOPY sends of 1 to 2 MiB while the peer peeks,
 * drops (MSG_TRUNC), reads part or nothing, and end it every way there
 * is (reset by unread data, SO_LINGER 0, close with the peer reading,
 * the peer's reset, half close), the sender's advertisements still in
 * progress.  Every thread must finish, and then no SDP socket and no
 * pinned page may be left (the harness adds a clean kernel log, no RDMA
 * resource left and the module unloading).
 */
static void storm_run(int before, int file);

static void test_msg_zerocopy_nonblocking_storm(void)
{
	int before, c, s;

	need_sdp();
	net_pair(&c, &s);
	msgzc_on(c, s, NULL);
	close(c);
	close(s);
	before = proc_net_sdp_count();
	storm_run(before, -1);
}

/* Run the storm's threads, sending with MSG_ZEROCOPY or from @file. */
static void storm_run(int before, int file)
{
	struct storm st[STORM_THREADS];
	pthread_t t[STORM_THREADS];
	long rounds = 0;
	int i;

	for (i = 0; i < STORM_THREADS; i++) {
		st[i] = (struct storm){ .id = i, .file = file };
		CHECK_OK(pthread_create(&t[i], NULL, storm_fn, &st[i]));
	}
	for (i = 0; i < STORM_THREADS; i++) {
		CHECK(join_ms(t[i], STORM_MS + 6 * WAIT_MS) == 0,
		      "storm thread %d did not finish", i);
		CHECK(!st[i].err, "storm thread %d: %s (%s)", i, st[i].err,
		      strerror(errno));
		rounds += st[i].rounds;
	}
	tap_diag("%ld connections", rounds);
	CHECK(rounds >= STORM_THREADS, "only %ld connections", rounds);
	if (!wait_until(sdp_sockets_back, &before, 3 * WAIT_MS)) {
		diag_sdp_sockets();
		CHECK(0, "%d SDP sockets left, %d before",
		      proc_net_sdp_count(), before);
	}
	expect_unpinned();
}

/* ---- sendfile() and splice() pages ---- */

/* A memfd of @len pattern bytes: seed @seed, stream offset @off on. */
static int pattern_file(size_t len, uint64_t seed, uint64_t off)
{
	char *buf = xmalloc(len);
	int fd = memfd_create("zcopy", MFD_CLOEXEC);

	CHECK(fd >= 0, "memfd_create: %s", strerror(errno));
	pattern_fill(buf, len, seed, off);
	CHECK(write(fd, buf, len) == (ssize_t)len, "write the file: %s",
	      strerror(errno));
	free(buf);
	return fd;
}

/*
 * sendfile() @count bytes of @fd from @off to @sock, waiting for POLLOUT
 * where it says EAGAIN (a nonblocking socket); all of them.
 */
static void sendfile_count(int sock, int fd, off_t off, size_t count)
{
	off_t pos = off;

	while ((size_t)(pos - off) < count) {
		ssize_t n = sendfile(sock, fd, &pos, count - (pos - off));

		if (n < 0 && errno == EAGAIN) {
			CHECK(wait_fd(sock, POLLOUT, WAIT_MS) & POLLOUT,
			      "not writable again after EAGAIN at %lld",
			      (long long)(pos - off));
			continue;
		}
		CHECK(n > 0, "sendfile at %lld: %zd, %s",
		      (long long)(pos - off), n, strerror(errno));
	}
}

static long long spliced0;

static bool spliced_at_least(void *arg)
{
	return sdp_stat("ZcopyTxSplicedBytes") - spliced0 >=
	       *(long long *)arg;
}

/*
 * sendfile() of a file from offset 0 goes zero-copy, as TCP's does: the
 * pages of its calls (a pipe's worth each) are gathered into
 * advertisements of up to 1 MiB, and the peer RDMA-reads them from the
 * page cache.  4 MiB blocking, 4 MiB more on the socket made nonblocking
 * (POLLOUT after EAGAIN), then a send() from memory: the peer reads every
 * byte in order, and most of the file's bytes went zero-copy
 * (SDP_INFO's zcopy_tx_bytes and ZcopyTxSplicedBytes).
 */
static void test_sendfile_zerocopy(void)
{
	const size_t len = 4 * MIB;
	struct reader r = { .seed = 41 };
	long long zc, want = len;
	pthread_t t;
	int c, s, fd;

	need_sdp();
	fd = pattern_file(2 * len, 41, 0);
	net_pair(&c, &s);
	r.fd = s;
	r.want = 2 * len + 1000;
	spliced0 = sdp_stat("ZcopyTxSplicedBytes");
	zc = info(c).sdpi_zcopy_tx_bytes;
	CHECK_OK(pthread_create(&t, NULL, reader_fn, &r));
	sendfile_count(c, fd, 0, len);
	set_nonblock(c, true);
	sendfile_count(c, fd, len, len);
	set_nonblock(c, false);
	send_one(c, 1000, 41, 2 * len);
	reader_join(t, &r);
	zc = info(c).sdpi_zcopy_tx_bytes - zc;
	tap_diag("%lld of %zu bytes zero-copy, in %llu advertisements", zc,
		 2 * len, (unsigned long long)info(c).sdpi_zcopy_tx_msgs);
	CHECK(zc >= want, "only %lld of %zu bytes went zero-copy", zc, 2 * len);
	CHECK(spliced0 >= 0, "no ZcopyTxSplicedBytes in /proc/net/sdp_stats");
	CHECK(wait_until(spliced_at_least, &zc, WAIT_MS),
	      "ZcopyTxSplicedBytes +%lld, the socket's zero-copy bytes +%lld",
	      sdp_stat("ZcopyTxSplicedBytes") - spliced0, zc);
	expect_stream_pos("sender", c, 2 * len + 1000, 0);
	expect_stream_pos("receiver", s, 0, 2 * len + 1000);
	close(c);
	close(s);
	close(fd);
}

static bool reader_done(void *arg)
{
	const struct reader *r = arg;

	return r->got == r->want || r->err;
}

/*
 * Spliced pages gathered wait for no further call: a sendfile() of more
 * than the file holds ends at its end with its last pages flagged "more
 * to come", and the peer gets them all the same, at once.  Pages that
 * cannot follow in one mapping (an odd file offset) go too.  A close()
 * right after a sendfile(): the peer gets every byte, then the end of
 * the stream.  A peer that closes without reading resets the sender in
 * the middle of a sendfile().
 */
static void test_sendfile_zerocopy_ends(void)
{
	const size_t len = 600 * 1024, odd = 3000;
	struct reader r = { .seed = 43 };
	off_t pos = 0;
	pthread_t t;
	int c, s, fd, fd2;
	ssize_t n;
	char ch;

	need_sdp();
	fd = pattern_file(len, 43, 0);
	fd2 = pattern_file(2 * MIB, 43, len);
	net_pair(&c, &s);
	r.fd = s;
	r.want = len;
	CHECK_OK(pthread_create(&t, NULL, reader_fn, &r));
	n = sendfile(c, fd, &pos, 4 * MIB);
	CHECK(n == (ssize_t)len, "sendfile of the whole file: %zd, %s", n,
	      strerror(errno));
	CHECK(wait_until(reader_done, &r, 3000),
	      "%zu of %zu bytes arrived with no call after the sendfile()",
	      r.got, len);
	reader_join(t, &r);

	/* An odd offset, then close() at once; then the end of the stream. */
	r.want = len + 2 * MIB - odd + 1;
	CHECK_OK(pthread_create(&t, NULL, reader_fn, &r));
	sendfile_count(c, fd2, 0, odd);
	sendfile_count(c, fd2, odd, 2 * MIB - 2 * odd);
	CHECK_OK(close(c));
	pthread_join(t, NULL);
	CHECK(r.got == r.want - 1 && r.err && !strcmp(r.err, "early EOF"),
	      "the peer read %zu of %zu bytes, then: %s", r.got, r.want - 1,
	      r.err ? r.err : "no end of the stream");
	close(s);

	/* The peer resets the connection: the next sendfile() fails. */
	signal(SIGPIPE, SIG_IGN);
	net_pair(&c, &s);
	send_one(c, 1, 43, 0);
	set_nonblock(c, true);
	pos = 0;
	n = sendfile(c, fd2, &pos, 2 * MIB);
	CHECK(n > 0, "sendfile: %zd, %s", n, strerror(errno));
	CHECK(wait_fd(s, POLLIN, WAIT_MS) & POLLIN, "nothing to read");
	CHECK_OK(close(s));	/* unread data: reset */
	CHECK(wait_until(hung_up, &c, WAIT_MS), "the sender saw no reset");
	pos = 0;
	n = sendfile(c, fd2, &pos, 2 * MIB);
	CHECK(n < 0 && (errno == ECONNRESET || errno == EPIPE),
	      "sendfile after the reset: %zd, %s", n, strerror(errno));
	CHECK(recv(c, &ch, 1, MSG_DONTWAIT) <= 0, "data from the reset peer");
	signal(SIGPIPE, SIG_DFL);
	close(c);
	close(fd);
	close(fd2);
}

/*
 * Spliced pages that cannot be gathered (two pieces of a file spliced
 * into a pipe: each a partial page) while an advertisement of spliced pages is
 * in progress go after it, copied: a nonblocking splice() says EAGAIN
 * until then (it spun in the kernel, holding the socket, before; 6.1,
 * one page a call, may take the first page), and a blocking one waits;
 * the peer reads every byte in order.
 */
static void test_splice_behind_zerocopy(void)
{
	struct reader r = { .seed = 53 };
	char small[200];
	off_t pos = 0;
	pthread_t t;
	int c, s, fd, fd2, p[2];
	ssize_t n;

	need_sdp();
	fd = pattern_file(MIB, 53, 0);
	/* Two pieces in two pages of a file, spliced into the pipe. */
	fd2 = memfd_create("pieces", MFD_CLOEXEC);
	CHECK(fd2 >= 0, "memfd_create: %s", strerror(errno));
	pattern_fill(small, sizeof(small), 53, MIB);
	CHECK(pwrite(fd2, small, 100, 0) == 100 &&
	      pwrite(fd2, small + 100, 100, 8192) == 100, "pwrite");
	CHECK_OK(pipe(p));
	pos = 0;
	CHECK(splice(fd2, &pos, p[1], NULL, 100, 0) == 100, "splice in: %s",
	      strerror(errno));
	pos = 8192;
	CHECK(splice(fd2, &pos, p[1], NULL, 100, 0) == 100, "splice in: %s",
	      strerror(errno));
	net_pair(&c, &s);
	pos = 0;
	n = sendfile(c, fd, &pos, MIB);
	CHECK(n == MIB, "sendfile: %zd, %s", n, strerror(errno));
	/* 6.1 hands one page per call: the first may be gathered. */
	set_nonblock(c, true);
	n = splice(p[0], NULL, c, NULL, sizeof(small), 0);
	CHECK((n < 0 && errno == EAGAIN) || (n >= 0 && n < 200),
	      "splice() while the peer has not read: %zd, %s", n,
	      strerror(errno));
	n = n < 0 ? 0 : n;
	set_nonblock(c, false);
	r.fd = s;
	r.want = MIB + sizeof(small);
	CHECK_OK(pthread_create(&t, NULL, reader_fn, &r));
	CHECK(splice(p[0], NULL, c, NULL, sizeof(small) - n, 0) ==
	      (ssize_t)sizeof(small) - n, "splice(): %s", strerror(errno));
	reader_join(t, &r);
	close(p[0]);
	close(p[1]);
	close(fd2);
	close(fd);
	close(s);
	close(c);
}

/*
 * Hardening: the storm of test_msg_zerocopy_nonblocking_storm, with
 * nonblocking sendfile() calls of 1 to 2 MiB from a file, page-aligned
 * (gathered, advertised) or not (copied), ended every way while pages
 * are gathered or advertised.  Every thread finishes, no SDP socket is
 * left (and, from the harness, a clean log, no RDMA resources, unload).
 */
static void test_sendfile_zerocopy_storm(void)
{
	int fd;

	need_sdp();
	fd = pattern_file(2 * MIB + 4096, 49, 0);
	signal(SIGPIPE, SIG_IGN);
	storm_run(proc_net_sdp_count(), fd);
	signal(SIGPIPE, SIG_DFL);
	close(fd);
}

/*
 * Spliced pages a socket holds are bounded and charged: the pages of
 * sendfile() and splice() calls, gathered and in flight, stay within
 * the socket's send buffer (what its send ring holds: SO_SNDBUF when
 * set, else SDP_DEFAULT_BUFS buffers), on top of the ring, and count in
 * MemPages against net.sdp.mem.  SPLICE_CONNS connections, half of them
 * with SO_SNDBUF set, whose readers never read; each writer splices
 * from /dev/zero (6.1: writes zeros) through a pipe, nonblocking and
 * "more to come", until
 * it says EAGAIN and a wait for POLLOUT runs out.  Then SIOCOUTQ of
 * each is at most its ring and as much again (and a pipe's worth), every
 * byte of it is in memory MemPages counts, MemPages is within
 * net.sdp.mem's max, and after close() MemPages and the RDMA resources
 * are back where they were.
 */
#define SPLICE_CONNS	16
#define SPLICE_SNDBUF	(128 * 1024)	/* set on odd connections */
#define SPLICE_PIPE	(64 * 1024)
#define SDP_BUF		(32 * 1024)

/*
 * Fill the pipe @p from /dev/zero, or (6.1: it cannot splice) by write(),
 * which gives the pipe new pages too.
 */
static void pipe_fill_zero(int zero, const int p[2])
{
	static const char zeros[SPLICE_PIPE];
	ssize_t n;

	n = splice(zero, NULL, p[1], NULL, SPLICE_PIPE, SPLICE_F_NONBLOCK);
	if (n < 0 && errno == EINVAL)
		n = write(p[1], zeros, sizeof(zeros));
	CHECK(n > 0 || (n < 0 && errno == EAGAIN),
	      "fill the pipe from /dev/zero: %zd, %s", n, strerror(errno));
}

/* Splice @p's pipe into @c until it says EAGAIN; the bytes taken. */
static long long splice_until_eagain(int zero, const int p[2], int c)
{
	long long took = 0;
	ssize_t n;

	for (;;) {
		pipe_fill_zero(zero, p);
		n = splice(p[0], NULL, c, NULL, SPLICE_PIPE,
			   SPLICE_F_NONBLOCK | SPLICE_F_MORE);
		if (n < 0 && errno == EAGAIN)
			return took;
		CHECK(n > 0, "splice to the socket: %zd, %s", n,
		      strerror(errno));
		took += n;
		/* Far beyond any bound: fail below rather than loop on. */
		if (took > 64LL * MIB)
			return took;
	}
}

/*
 * Splice into the @n sockets @c, from the pipes @p, round after round,
 * until none takes more even after a wait (a stalled advertisement is
 * cancelled after half a second, and its rest copied into the ring as
 * room comes); @took[] adds up the bytes each took.
 */
static void splice_until_full(int zero, int n, const int *c, int (*p)[2],
			      long long *took)
{
	long long deadline = now_ms() + 60000;
	bool progress;
	int i;

	do {
		progress = false;
		for (i = 0; i < n; i++) {
			long long got = splice_until_eagain(zero, p[i], c[i]);

			took[i] += got;
			progress |= got > 0;
		}
		if (!progress)
			for (i = 0; i < n && !progress; i++)
				progress = wait_fd(c[i], POLLOUT, 1500) &
					   POLLOUT;
	} while (progress && now_ms() < deadline);
	CHECK(!progress, "the writers still take more after 60 s");
}

/* The bytes of @fd's send ring: SO_SNDBUF's buffers when set. */
static long long send_ring_bytes(int fd, bool set)
{
	long long bufs = set ? sockopt_get(fd, SOL_SOCKET, SO_SNDBUF) / SDP_BUF
			     : 16;

	return (bufs < 4 ? 4 : bufs > 256 ? 256 : bufs) * SDP_BUF;
}

static bool mem_pages_at_most(void *arg)
{
	return sdp_stat("MemPages") <= *(long long *)arg;
}

static void test_splice_held_bounded(void)
{
	int c[SPLICE_CONNS], s[SPLICE_CONNS], p[SPLICE_CONNS][2], zero, i;
	long long base, mem, outq_sum = 0, took[SPLICE_CONNS] = { 0 };
	long long page = sysconf(_SC_PAGESIZE);
	int outq[SPLICE_CONNS];
	long min_p, pressure, max;
	struct rdma_res res0, res;
	char buf[128], rs[128];
	int n;

	need_sdp();
	CHECK(read_file("/proc/sys/net/sdp/mem", buf, sizeof(buf)) == 0,
	      "no net.sdp.mem");
	n = sscanf(buf, "%ld %ld %ld", &min_p, &pressure, &max);
	CHECK(n == 3, "net.sdp.mem: %s", buf);
	CHECK(rdma_res_read(&res0) == 0, "rdma resource show");
	base = stat_value("MemPages");
	zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	CHECK(zero >= 0, "/dev/zero: %s", strerror(errno));
	for (i = 0; i < SPLICE_CONNS; i++) {
		net_pair_bufsize(&c[i], &s[i], i % 2 ? SPLICE_SNDBUF : 0);
		set_nonblock(c[i], true);
		CHECK_OK(pipe2(p[i], O_NONBLOCK));
	}
	splice_until_full(zero, SPLICE_CONNS, c, p, took);

	mem = sdp_stat("MemPages") - base;
	for (i = 0; i < SPLICE_CONNS; i++) {
		CHECK_OK(ioctl(c[i], SIOCOUTQ, &outq[i]));
		tap_diag("conn %d: spliced %lld, SIOCOUTQ %d, send ring %lld",
			 i, took[i], outq[i], send_ring_bytes(c[i], i % 2));
		outq_sum += outq[i];
	}
	tap_diag("SIOCOUTQ %lld bytes in all, MemPages +%lld (%lld bytes), net.sdp.mem max %ld",
		 outq_sum, mem, mem * page, max);
	for (i = 0; i < SPLICE_CONNS; i++) {
		long long ring = send_ring_bytes(c[i], i % 2);

		CHECK(outq[i] <= 2 * ring + SPLICE_PIPE,
		      "conn %d holds %d bytes unsent, beyond its send ring of %lld and as much again of spliced pages",
		      i, outq[i], ring);
	}
	CHECK(mem * page >= outq_sum,
	      "MemPages +%lld: %lld bytes, fewer than the %lld bytes held unsent",
	      mem, mem * page, outq_sum);
	CHECK(base + mem <= max, "MemPages %lld above net.sdp.mem's max %ld",
	      base + mem, max);

	for (i = 0; i < SPLICE_CONNS; i++) {
		close(p[i][0]);
		close(p[i][1]);
		close(s[i]);	/* unread data: reset */
		close(c[i]);
	}
	close(zero);
	CHECK(wait_until(mem_pages_at_most, &base, WAIT_MS),
	      "MemPages %lld after the close, %lld before", sdp_stat("MemPages"),
	      base);
	CHECK(rdma_res_wait(&res0, &res, WAIT_MS),
	      "RDMA resources %s after the close, %s before",
	      rdma_res_str(&res, buf, sizeof(buf)),
	      rdma_res_str(&res0, rs, sizeof(rs)));
}

/*
 * Spliced pages that net.sdp.mem's max refuses go buffered: with the
 * max at the pages in use, a writer whose reader never reads splices
 * until EAGAIN; MemRefused counts the refusals and the socket holds no
 * more than its send ring (and a pipe's worth).
 */
static void test_splice_over_mem_max(void)
{
	long long base, refused, took = 0, ring;
	char old[128], val[128];
	int c, s, p[1][2], zero, outq = -1;

	need_sdp();
	CHECK(read_file("/proc/sys/net/sdp/mem", old, sizeof(old)) == 0,
	      "no net.sdp.mem");
	base = stat_value("MemPages");
	zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	CHECK(zero >= 0, "/dev/zero: %s", strerror(errno));
	net_pair(&c, &s);
	set_nonblock(c, true);
	CHECK_OK(pipe2(p[0], O_NONBLOCK));
	refused = stat_value("MemRefused");
	snprintf(val, sizeof(val), "%lld %lld %lld", stat_value("MemPages"),
		 stat_value("MemPages"), stat_value("MemPages"));
	CHECK(write_file("/proc/sys/net/sdp/mem", val) == 0,
	      "write net.sdp.mem");
	splice_until_full(zero, 1, &c, p, &took);
	CHECK_OK(ioctl(c, SIOCOUTQ, &outq));
	ring = send_ring_bytes(c, false);
	tap_diag("spliced %lld, SIOCOUTQ %d, send ring %lld, MemRefused +%lld",
		 took, outq, ring, stat_value("MemRefused") - refused);
	CHECK(write_file("/proc/sys/net/sdp/mem", old) == 0,
	      "restore net.sdp.mem");
	CHECK(stat_value("MemRefused") > refused,
	      "no spliced page refused above net.sdp.mem's max");
	CHECK(outq <= ring + SPLICE_PIPE,
	      "%d bytes held unsent above net.sdp.mem's max, beyond the send ring of %lld",
	      outq, ring);
	close(p[0][0]);
	close(p[0][1]);
	close(s);
	close(c);
	close(zero);
	CHECK(wait_until(mem_pages_at_most, &base, WAIT_MS),
	      "MemPages %lld after the close, %lld before", sdp_stat("MemPages"),
	      base);
}

/* ---- connect() again while the last connection's zero-copy work ends ---- */

/* What of the aborted connection is still in progress at the connect(). */
enum redo_kind {
	REDO_SEND,	/* another thread's blocking zero-copy send() */
	REDO_RECV,	/* another thread's recv() reading a SrcAvail */
	REDO_MSGZC,	/* a nonblocking MSG_ZEROCOPY send */
	REDO_SPLICE,	/* sendfile() pages, advertised */
};

#define REDO_ROUNDS	300
#define REDO_MS		30000
#define REDO_LEN	(512 * 1024)
#define REDO_SEED	97

struct redo_io {
	int fd;
	bool recv;
	char *buf;
	pid_t tid;		/* set once the thread runs */
	ssize_t ret;
	int err;
};

static void *redo_io_fn(void *arg)
{
	struct redo_io *io = arg;

	__atomic_store_n(&io->tid, gettid(), __ATOMIC_RELEASE);
	if (io->recv)
		io->ret = recv(io->fd, io->buf, REDO_LEN, 0);
	else
		io->ret = send(io->fd, io->buf, REDO_LEN, MSG_NOSIGNAL);
	io->err = errno;
	return NULL;
}

/* The I/O thread runs and sleeps in its call. */
static bool redo_io_asleep(void *arg)
{
	struct redo_io *io = arg;
	pid_t tid = __atomic_load_n(&io->tid, __ATOMIC_ACQUIRE);

	return tid && task_sleeping(&tid);
}

/* The reader's socket has had the peer's SrcAvail. */
static bool srcavail_seen(void *arg)
{
	return info(*(int *)arg).sdpi_srcavail_rx >= 1;
}

/* A new connection to @addr through @l: @c's bytes arrive, and only they. */
static void redo_check_new(int l, int c)
{
	int s2 = net_accept(l, WAIT_MS);
	char m[4];

	CHECK(write_all(c, "new!", 4) == 4, "send on the new connection: %s",
	      strerror(errno));
	CHECK(read_all(s2, m, 4) == 4 && !memcmp(m, "new!", 4),
	      "the new connection does not start with its own bytes");
	CHECK(write_all(s2, "back", 4) == 4, "send back: %s", strerror(errno));
	CHECK(read_all(c, m, 4) == 4 && !memcmp(m, "back", 4),
	      "the new connection's first bytes back are not the peer's");
	close(s2);
}

/*
 * One round: a connection made with a nonblocking connect() (its socket
 * stays SS_CONNECTING until connect() is called again), zero-copy work
 * of @kind in progress on it, the peer aborts, and connect() twice at
 * once: the first reports the end of the last connection, the second
 * starts a new one on the same socket while the zero-copy work of the
 * old one is still ending.
 */
static void redo_round(int l, const struct sockaddr_storage *addr,
		       enum redo_kind kind, int file, char *buf)
{
	struct redo_io io = { .buf = buf, .recv = kind == REDO_RECV };
	struct timeval tv = { .tv_sec = WAIT_MS / 2000 };
	struct linger lg = { 1, 0 };
	bool thread = kind == REDO_SEND || kind == REDO_RECV;
	off_t pos = 0;
	pthread_t t;
	ssize_t n;
	int c, s, r, e;

	c = test_socket_af(addr->ss_family, SOCK_NONBLOCK);
	CHECK(c >= 0, "socket: %s", strerror(errno));
	r = connect(c, (const struct sockaddr *)addr, sockaddr_len(addr));
	CHECK(!r || errno == EINPROGRESS, "nonblocking connect: %s",
	      strerror(errno));
	CHECK(wait_fd(c, POLLOUT, WAIT_MS) & POLLOUT, "not connected");
	CHECK(!sockopt_get(c, SOL_SOCKET, SO_ERROR), "the connect failed");
	s = net_accept(l, WAIT_MS);
	if (kind != REDO_SPLICE)
		set_nonblock(c, false);
	/* A recv() that ends up waiting on the new connection ends. */
	CHECK_OK(setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	if (kind == REDO_MSGZC) {
		int v = 1;

		CHECK_OK(setsockopt(c, SOL_SOCKET, SO_ZEROCOPY, &v, sizeof(v)));
	}

	io.fd = c;
	if (thread) {
		CHECK(!pthread_create(&t, NULL, redo_io_fn, &io),
		      "pthread_create");
		CHECK(wait_until(redo_io_asleep, &io, WAIT_MS),
		      "the %s never blocked", io.recv ? "recv()" : "send()");
	}
	switch (kind) {
	case REDO_SEND:
		break;
	case REDO_RECV:
		/* The advertisement goes, and sendfile() returns. */
		n = sendfile(s, file, &pos, REDO_LEN);
		CHECK(n == REDO_LEN, "sendfile: %zd (%s)", n, strerror(errno));
		CHECK(wait_until(srcavail_seen, &c, WAIT_MS),
		      "no SrcAvail came");
		break;
	case REDO_MSGZC:
		n = send(c, buf, REDO_LEN,
			 MSG_ZEROCOPY | MSG_DONTWAIT | MSG_NOSIGNAL);
		CHECK(n > 0, "MSG_ZEROCOPY send: %zd (%s)", n, strerror(errno));
		break;
	case REDO_SPLICE:
		n = sendfile(c, file, &pos, REDO_LEN);
		CHECK(n > 0, "sendfile: %zd (%s)", n, strerror(errno));
		set_nonblock(c, false);
		break;
	}
	/* The peer resets the connection (as it would with unread data). */
	CHECK_OK(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	CHECK_OK(close(s));
	CHECK(wait_until(hung_up, &c, WAIT_MS), "no reset came");

	r = connect(c, (const struct sockaddr *)addr, sockaddr_len(addr));
	e = errno;
	CHECK(r < 0 && (e == ECONNRESET || e == ECONNABORTED),
	      "connect() after the reset: %d (%s)", r, strerror(e));
	r = connect(c, (const struct sockaddr *)addr, sockaddr_len(addr));
	CHECK(!r, "connect() again: %s", strerror(errno));

	if (thread) {
		CHECK(join_ms(t, WAIT_MS) == 0, "the %s did not end",
		      io.recv ? "recv()" : "send()");
		if (io.recv && io.ret > 0)
			CHECK(pattern_check(buf, io.ret, REDO_SEED, 0) < 0,
			      "recv() of the old connection: wrong bytes");
		else if (io.recv)
			CHECK(!io.ret || io.err == ECONNRESET ||
			      io.err == ENOTCONN || io.err == EAGAIN,
			      "recv() of the old connection: %s",
			      strerror(io.err));
		else
			CHECK(io.ret < 0 ? io.err == ECONNRESET ||
					   io.err == EPIPE :
					   io.ret < REDO_LEN,
			      "send() of the old connection: %zd (%s)",
			      io.ret, strerror(io.err));
	}
	redo_check_new(l, c);
	close(c);
}

static void redo_run(enum redo_kind kind)
{
	struct sockaddr_storage addr;
	long long start = now_ms();
	char *buf = xmalloc(REDO_LEN);
	int l, file = -1, i;

	need_sdp();
	signal(SIGPIPE, SIG_IGN);
	pattern_fill(buf, REDO_LEN, REDO_SEED, 0);
	if (kind == REDO_RECV || kind == REDO_SPLICE)
		file = pattern_file(REDO_LEN, REDO_SEED, 0);
	l = net_listener(&addr, 4, 0);
	if (kind == REDO_MSGZC) {
		int c = net_connect(&addr, 0), s = net_accept(l, WAIT_MS);
		char *tmp = xmalloc(1);

		msgzc_on(c, s, tmp);	/* or skip */
		free(tmp);
		close(c);
		close(s);
	}
	for (i = 0; i < REDO_ROUNDS && now_ms() - start < REDO_MS; i++)
		redo_round(l, &addr, kind, file, buf);
	tap_diag("%d rounds in %lld ms", i, now_ms() - start);
	close(l);
	if (file >= 0)
		close(file);
	free(buf);
	expect_unpinned();
	signal(SIGPIPE, SIG_DFL);
}

/*
 * connect() again while another thread's blocking zero-copy send() of
 * the reset connection is still ending: the send() fails (or returns
 * what went before the reset), the new connection carries its own bytes
 * only, no page stays pinned (and, from the harness, no Oops, no RDMA
 * resource left, the module unloads).  Looped: it is a race.
 */
static void test_reconnect_during_zcopy_send(void)
{
	redo_run(REDO_SEND);
}

/* The same while another thread's recv() RDMA-reads the peer's pages. */
static void test_reconnect_during_zcopy_recv(void)
{
	redo_run(REDO_RECV);
}

/* The same while a nonblocking MSG_ZEROCOPY send is in progress. */
static void test_reconnect_during_msg_zerocopy(void)
{
	redo_run(REDO_MSGZC);
}

/* The same while the pages of a sendfile() are advertised. */
static void test_reconnect_during_sendfile(void)
{
	redo_run(REDO_SPLICE);
}

static const struct tap_test tests[] = {
	TAP_TEST(test_sockopts),
	TAP_TEST(test_path_counters),
	TAP_TEST(test_mixed_integrity),
	TAP_TEST(test_small_large_alternate),
	TAP_TEST(test_large_after_small_on_fresh),
	TAP_TEST(test_slow_reads_go_buffered),
	TAP_TEST(test_backoff_ends_with_connection),
	TAP_TEST(test_two_threads),
	TAP_TEST(test_nonblocking_send),
	TAP_TEST(test_msg_zerocopy_codes),
	TAP_TEST(test_msg_zerocopy_nonblocking),
	TAP_TEST(test_msg_zerocopy_nonblocking_declined),
	TAP_TEST(test_msg_zerocopy_nonblocking_close),
	TAP_TEST(test_msg_zerocopy_nonblocking_stalled),
	TAP_TEST(test_msg_zerocopy_nonblocking_storm),
	TAP_TEST(test_sendfile_zerocopy),
	TAP_TEST(test_sendfile_zerocopy_ends),
	TAP_TEST(test_splice_behind_zerocopy),
	TAP_TEST(test_sendfile_zerocopy_storm),
	TAP_TEST(test_splice_held_bounded),
	TAP_TEST(test_splice_over_mem_max),
	TAP_TEST(test_memlock_fallback),
	TAP_TEST(test_signal_during_zcopy),
	TAP_TEST(test_signal_after_partial_read),
	TAP_TEST(test_peer_abort_during_zcopy),
	TAP_TEST(test_readv_empty_element),
	TAP_TEST(test_read_in_parts),
	TAP_TEST(test_short_reads_across_pages),
	TAP_TEST(test_reconnect_during_zcopy_send),
	TAP_TEST(test_reconnect_during_zcopy_recv),
	TAP_TEST(test_reconnect_during_msg_zerocopy),
	TAP_TEST(test_reconnect_during_sendfile),
};

TAP_MAIN(tests)
