// SPDX-License-Identifier: GPL-2.0
/*
 * Listing SDP sockets: /proc/net/sdp, the sock_diag dump, sdpstat, the
 * per-namespace listing, and the tracepoints.  Each check compares with
 * sockets the test opened and bytes it sent (tests/lib/ops.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "net.h"
#include "ops.h"
#include "tap.h"
#include "util.h"

/* ---- /proc/net/sdp ---- */

struct proc_sock {
	uint32_t laddr[4], raddr[4];
	int lwords, rwords;		/* 1 (IPv4) or 4 (IPv6) */
	unsigned int lport, rport, st, txq, rxq, uid;
	unsigned long ino;
	unsigned long long c[8];	/* tx_bcopy ... rx_zcopy_msgs */
	unsigned int fallback;		/* enum sdp_fallback_reason */
};

enum { TX_BCOPY, RX_BCOPY, TX_ZCOPY, RX_ZCOPY, TX_BCOPY_MSGS, RX_BCOPY_MSGS,
       TX_ZCOPY_MSGS, RX_ZCOPY_MSGS };

static const char proc_header[] =
	"local_address rem_address   st tx_queue rx_queue uid inode tx_bcopy rx_bcopy tx_zcopy rx_zcopy tx_bcopy_msgs rx_bcopy_msgs tx_zcopy_msgs rx_zcopy_msgs fallback\n";

/* "HEX:PORT" with 8 or 32 hex digits, each 8 a word as the kernel prints it. */
static bool parse_proc_addr(const char *s, uint32_t *w, int *words,
			    unsigned int *port)
{
	const char *colon = strchr(s, ':');
	int i, n;

	if (!colon)
		return false;
	n = colon - s;
	if (n != 8 && n != 32)
		return false;
	*words = n / 8;
	for (i = 0; i < *words; i++) {
		char hex[9];

		memcpy(hex, s + 8 * i, 8);
		hex[8] = '\0';
		w[i] = strtoul(hex, NULL, 16);
	}
	return sscanf(colon + 1, "%x", port) == 1;
}

/* Find the line of inode @ino; fail the test on any malformed line. */
static bool proc_find(unsigned long ino, struct proc_sock *ps)
{
	char line[1024], la[64], ra[64];
	bool found = false;
	FILE *f = fopen("/proc/net/sdp", "re");

	CHECK(f, "/proc/net/sdp: %s", strerror(errno));
	CHECK(fgets(line, sizeof(line), f), "no header");
	CHECK(!strcmp(line, proc_header), "header is '%s'", line);
	while (fgets(line, sizeof(line), f)) {
		struct proc_sock p;
		int n, end = 0;

		memset(&p, 0, sizeof(p));
		n = sscanf(line,
			   "%63s %63s %x %x:%x %u %lu %llu %llu %llu %llu %llu %llu %llu %llu %u%n",
			   la, ra, &p.st, &p.txq, &p.rxq, &p.uid, &p.ino,
			   &p.c[0], &p.c[1], &p.c[2], &p.c[3], &p.c[4],
			   &p.c[5], &p.c[6], &p.c[7], &p.fallback, &end);
		CHECK(n == 16 && line[end] == '\n', "malformed line '%s'", line);
		CHECK(parse_proc_addr(la, p.laddr, &p.lwords, &p.lport) &&
		      parse_proc_addr(ra, p.raddr, &p.rwords, &p.rport),
		      "bad address in '%s'", line);
		CHECK(p.lwords == p.rwords, "mixed address sizes: '%s'", line);
		if (p.ino == ino && ino) {
			CHECK(!found, "inode %lu listed twice", ino);
			*ps = p;
			found = true;
		}
	}
	fclose(f);
	return found;
}

static void proc_get(int fd, struct proc_sock *ps)
{
	unsigned long ino = inode_of(fd);

	CHECK(proc_find(ino, ps), "inode %lu not in /proc/net/sdp", ino);
}

/* The /proc words of @ss as an SDP socket used through @af shows them. */
static void expect_words(const struct sockaddr_storage *ss, int af,
			 uint32_t *w, int *words, unsigned int *port)
{
	memset(w, 0, 4 * sizeof(*w));
	*port = sockaddr_port(ss);
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		memcpy(w, &s6->sin6_addr, 16);
		*words = 4;
		return;
	}
	if (af == AF_INET6) {	/* v4-mapped */
		w[2] = htonl(0xffff);
		w[3] = ((const struct sockaddr_in *)ss)->sin_addr.s_addr;
		*words = 4;
		return;
	}
	w[0] = ((const struct sockaddr_in *)ss)->sin_addr.s_addr;
	*words = 1;
}

static void check_proc_addr(const char *what, const uint32_t *w, int words,
			    unsigned int port,
			    const struct sockaddr_storage *ss, int af)
{
	uint32_t want[4];
	unsigned int wport;
	int wwords;

	expect_words(ss, af, want, &wwords, &wport);
	CHECK(words == wwords && !memcmp(w, want, 4 * words) && port == wport,
	      "%s: /proc has %d words %08X..:%04X, want %d words %08X..:%04X",
	      what, words, w[0], port, wwords, want[0], wport);
}

/* Check the address columns of @fd's line against its socket names. */
static void check_proc_names(int fd, const struct proc_sock *ps, int af,
			     bool connected)
{
	struct sockaddr_storage ss, zero;

	local_addr(fd, &ss);
	check_proc_addr("local", ps->laddr, ps->lwords, ps->lport, &ss, af);
	if (connected) {
		peer_addr(fd, &ss);
	} else {
		memset(&zero, 0, sizeof(zero));
		zero.ss_family = ss.ss_family;
		ss = zero;
	}
	check_proc_addr("remote", ps->raddr, ps->rwords, ps->rport, &ss, af);
}

/*
 * A listener, an established pair through it, N bytes client -> server
 * read, then M more left unread: every column of the three lines.
 */
static void test_proc_net_sdp_known_sockets(void)
{
	const size_t n = 100000, m = 1000;
	struct sockaddr_storage addr;
	struct proc_sock pl, pc, ps;
	int l, c, s;

	wait_no_sockets();
	l = listener_pair(&addr, 5, &c, &s);
	send_bytes(c, n);
	recv_bytes(s, n);
	send_bytes(c, m);
	wait_inq(s, m);

	proc_get(l, &pl);
	CHECK(pl.st == TCP_LISTEN, "listener st %02X", pl.st);
	check_proc_names(l, &pl, AF_INET, false);
	CHECK(pl.txq == 5 && pl.rxq == 0, "listener queues %u:%u, want 5:0",
	      pl.txq, pl.rxq);
	CHECK(pl.uid == getuid(), "listener uid %u", pl.uid);

	proc_get(c, &pc);
	CHECK(pc.st == TCP_ESTABLISHED, "client st %02X", pc.st);
	check_proc_names(c, &pc, AF_INET, true);
	CHECK(pc.c[TX_BCOPY] == n + m && pc.c[RX_BCOPY] == 0,
	      "client bcopy tx %llu rx %llu, want %zu 0", pc.c[TX_BCOPY],
	      pc.c[RX_BCOPY], n + m);
	CHECK(pc.c[TX_BCOPY_MSGS] == msgs_for(n) + msgs_for(m),
	      "client tx msgs %llu, want %zu", pc.c[TX_BCOPY_MSGS],
	      msgs_for(n) + msgs_for(m));
	CHECK(!pc.c[TX_ZCOPY] && !pc.c[RX_ZCOPY] && !pc.c[TX_ZCOPY_MSGS] &&
	      !pc.c[RX_ZCOPY_MSGS], "zero-copy counters moved");
	CHECK(pc.txq == 0 && pc.rxq == 0, "client queues %u:%u", pc.txq,
	      pc.rxq);

	proc_get(s, &ps);
	CHECK(ps.st == TCP_ESTABLISHED, "server st %02X", ps.st);
	check_proc_names(s, &ps, AF_INET, true);
	CHECK(ps.lport == pl.lport, "server port %u, listener %u", ps.lport,
	      pl.lport);
	CHECK(ps.rxq == m && ps.txq == 0, "server queues %u:%u, want 0:%zu",
	      ps.txq, ps.rxq, m);
	CHECK(ps.c[RX_BCOPY] == n + m && ps.c[TX_BCOPY] == 0,
	      "server bcopy rx %llu tx %llu", ps.c[RX_BCOPY], ps.c[TX_BCOPY]);
	CHECK(ps.c[RX_BCOPY_MSGS] == pc.c[TX_BCOPY_MSGS],
	      "server rx msgs %llu, client sent %llu", ps.c[RX_BCOPY_MSGS],
	      pc.c[TX_BCOPY_MSGS]);
	CHECK(ps.uid == getuid(), "server uid %u", ps.uid);
	recv_bytes(s, m);
	close(c);
	close(s);
	close(l);
}

/* The uid column is the owner's: a socket made by uid 65534. */
static void test_proc_net_sdp_uid(void)
{
	int pipefd[2], status;
	unsigned long ino;
	struct proc_sock p;
	pid_t pid;

	CHECK_OK(pipe(pipefd));
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		int fd;

		close(pipefd[0]);
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(2);
		fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
		if (fd < 0)
			_exit(3);
		ino = inode_of(fd);
		if (write(pipefd[1], &ino, sizeof(ino)) != sizeof(ino))
			_exit(4);
		/* Hold the socket until the parent closes the pipe. */
		close(pipefd[1]);
		sleep(30);
		_exit(0);
	}
	close(pipefd[1]);
	CHECK(read(pipefd[0], &ino, sizeof(ino)) == sizeof(ino),
	      "child did not make a socket");
	CHECK(proc_find(ino, &p), "inode %lu not listed", ino);
	CHECK(p.uid == 65534, "uid %u, want 65534", p.uid);
	CHECK(p.st == TCP_CLOSE, "st %02X", p.st);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(pipefd[0]);
}

/*
 * Sockets used through AF_INET6 are listed as /proc/net/tcp6 lists
 * them: 32 hex digits, IPv4 peers v4-mapped.
 */
static void test_proc_net_sdp_ipv6(void)
{
	struct sockaddr_in6 any = { .sin6_family = AF_INET6 };
	struct sockaddr_in6 dst = { .sin6_family = AF_INET6 };
	struct sockaddr_storage la;
	struct proc_sock pl, pc, ps;
	int l, c, s;

	if (access("/proc/sys/net/ipv6", F_OK))
		tap_skip("no IPv6 in this kernel");
	if (read_ull("/proc/sys/net/ipv6/bindv6only") == 1)
		tap_skip("net.ipv6.bindv6only=1");
	l = CHECK_OK(socket(AF_INET_SDP, SOCK_STREAM, 0));
	CHECK_OK(bind(l, (struct sockaddr *)&any, sizeof(any)));
	CHECK_OK(listen(l, 4));
	local_addr(l, &la);
	c = CHECK_OK(socket(AF_INET_SDP, SOCK_STREAM, 0));
	dst.sin6_port = htons(sockaddr_port(&la));
	dst.sin6_addr.s6_addr[10] = 0xff;
	dst.sin6_addr.s6_addr[11] = 0xff;
	CHECK(inet_pton(AF_INET, TEST_ADDR(), &dst.sin6_addr.s6_addr[12]) == 1,
	      "SDP_TEST_ADDR %s is not IPv4", TEST_ADDR());
	CHECK_OK(connect(c, (struct sockaddr *)&dst, sizeof(dst)));
	s = net_accept(l, WAIT_MS);

	proc_get(l, &pl);
	CHECK(pl.lwords == 4, "listener address has %d words", pl.lwords);
	check_proc_names(l, &pl, AF_INET6, false);
	proc_get(c, &pc);
	CHECK(pc.lwords == 4 && pc.st == TCP_ESTABLISHED, "client %d words st %02X",
	      pc.lwords, pc.st);
	CHECK(pc.laddr[2] == htonl(0xffff), "client not v4-mapped: %08X",
	      pc.laddr[2]);
	check_proc_names(c, &pc, AF_INET6, true);
	proc_get(s, &ps);
	check_proc_names(s, &ps, AF_INET6, true);
	close(c);
	close(s);
	close(l);
}

/* ---- sock_diag ---- */

static void check_diag_names(int fd, const struct sdp_diag_sock *d, bool conn)
{
	struct sockaddr_storage ss;
	const struct sockaddr_in *sin = (const void *)&ss;

	CHECK(d->msg.sdiag_family == AF_INET, "family %u",
	      d->msg.sdiag_family);
	local_addr(fd, &ss);
	CHECK(d->msg.sdiag_src[0] == sin->sin_addr.s_addr &&
	      d->msg.sdiag_sport == sin->sin_port,
	      "local address/port differ");
	if (conn) {
		peer_addr(fd, &ss);
		CHECK(d->msg.sdiag_dst[0] == sin->sin_addr.s_addr &&
		      d->msg.sdiag_dport == sin->sin_port,
		      "remote address/port differ");
	}
}

/*
 * The two views of a socket's counters, getsockopt(SDP_INFO) and the
 * SDP_DIAG_STATS attribute, name the same counters (each uapi struct
 * holds all of them).  @d was dumped before @fd's SDP_INFO was read, so a
 * counter can only have grown; the data counters must be equal, since
 * nothing moves once the transfer is done.
 */
#define SAME_COUNTER(info, diag, exact) \
	{ #diag, offsetof(struct sdp_info, info), \
	  offsetof(struct sdp_diag_stats, diag), exact }

static const struct {
	const char *name;
	size_t info, diag;
	bool exact;
} same_counters[] = {
	SAME_COUNTER(sdpi_bcopy_tx_bytes, bcopy_tx_bytes, true),
	SAME_COUNTER(sdpi_bcopy_tx_msgs, bcopy_tx_msgs, true),
	SAME_COUNTER(sdpi_bcopy_rx_bytes, bcopy_rx_bytes, true),
	SAME_COUNTER(sdpi_bcopy_rx_msgs, bcopy_rx_msgs, true),
	SAME_COUNTER(sdpi_zcopy_tx_bytes, zcopy_tx_bytes, true),
	SAME_COUNTER(sdpi_zcopy_tx_msgs, zcopy_tx_msgs, true),
	SAME_COUNTER(sdpi_zcopy_rx_bytes, zcopy_rx_bytes, true),
	SAME_COUNTER(sdpi_zcopy_rx_msgs, zcopy_rx_msgs, true),
	SAME_COUNTER(sdpi_rdma_reads, rdma_reads, true),
	SAME_COUNTER(sdpi_sendsm_tx, sendsm_tx, true),
	SAME_COUNTER(sdpi_sendsm_rx, sendsm_rx, true),
	SAME_COUNTER(sdpi_cancel_tx, srcavail_cancel_tx, true),
	SAME_COUNTER(sdpi_cancel_rx, srcavail_cancel_rx, true),
	SAME_COUNTER(sdpi_srcavail_tx, srcavail_tx, true),
	SAME_COUNTER(sdpi_srcavail_rx, srcavail_rx, true),
	SAME_COUNTER(sdpi_zcopy_fallbacks, zcopy_fallbacks, true),
	SAME_COUNTER(sdpi_rinv_tx, rinv_tx, true),
	SAME_COUNTER(sdpi_rinv_rx, rinv_rx, true),
	SAME_COUNTER(sdpi_credit_updates_tx, credit_updates_tx, false),
	SAME_COUNTER(sdpi_credit_updates_rx, credit_updates_rx, false),
	SAME_COUNTER(sdpi_credit_stalls, credit_stalls, false),
};

#define N_SAME_COUNTERS (sizeof(same_counters) / sizeof(same_counters[0]))

static void check_info_matches_diag(int fd, const struct sdp_diag_sock *d)
{
	struct sdp_info info;
	socklen_t len = sizeof(info);
	size_t i;

	/* Counters, then (sdp_info only) the transport and the reason. */
	CHECK(offsetof(struct sdp_info, sdpi_transport) == sizeof(d->stats) &&
	      sizeof(d->stats) == N_SAME_COUNTERS * sizeof(__u64),
	      "struct sdp_info %zu bytes, struct sdp_diag_stats %zu",
	      sizeof(info), sizeof(d->stats));
	CHECK_OK(getsockopt(fd, SOL_SDP, SDP_INFO, &info, &len));
	CHECK(len == sizeof(info), "SDP_INFO gave %u bytes", len);
	for (i = 0; i < N_SAME_COUNTERS; i++) {
		__u64 a = *(const __u64 *)((const char *)&info +
					   same_counters[i].info);
		__u64 b = *(const __u64 *)((const char *)&d->stats +
					   same_counters[i].diag);

		CHECK(same_counters[i].exact ? a == b : a >= b,
		      "%s: SDP_INFO %llu, sock_diag %llu", same_counters[i].name,
		      (unsigned long long)a, (unsigned long long)b);
	}
}

/* Has the socket @arg (an int *) received a credit update? */
static bool credit_update_seen(void *arg)
{
	struct sdp_info info;
	socklen_t len = sizeof(info);

	CHECK_OK(getsockopt(*(int *)arg, SOL_SDP, SDP_INFO, &info, &len));
	return info.sdpi_credit_updates_rx > 0;
}

static void test_sock_diag_known_sockets(void)
{
	/*
	 * More than the reader's 16 buffers take: the sender cannot finish
	 * without a credit update.  (With fewer messages than the ring, an
	 * update is due only as sdp_credit_update_due() says; over
	 * soft-iWARP the first connection after boot sometimes had none.)
	 */
	const size_t n = 19 * MSG_PAYLOAD;
	struct sdp_diag_sock *d = xmalloc(MAX_DIAG * sizeof(*d));
	const struct sdp_diag_sock *dl, *dc, *ds;
	struct sockaddr_storage addr;
	int l, c, s, cnt;
	pid_t pid;

	wait_no_sockets();
	l = listener_pair(&addr, 7, &c, &s);
	pid = send_bytes_async(s, n);
	recv_bytes(c, n);
	wait_child_ok(pid);
	CHECK(wait_until(credit_update_seen, &s, WAIT_MS),
	      "the sender saw no credit update in %zu bytes", n);

	cnt = diag_dump(~0U, 0, d, MAX_DIAG);
	CHECK(cnt == 3 && cnt == proc_net_sdp_count(),
	      "dump has %d sockets, /proc/net/sdp %d", cnt,
	      proc_net_sdp_count());
	dl = diag_find(d, cnt, inode_of(l));
	dc = diag_find(d, cnt, inode_of(c));
	ds = diag_find(d, cnt, inode_of(s));
	CHECK(dl && dc && ds, "a known socket is missing from the dump");
	CHECK(dl->msg.sdiag_state == TCP_LISTEN &&
	      dl->msg.sdiag_wqueue == 7 && dl->msg.sdiag_rqueue == 0,
	      "listener state %u queues %u/%u",
	      dl->msg.sdiag_state, dl->msg.sdiag_rqueue, dl->msg.sdiag_wqueue);
	check_diag_names(l, dl, false);
	CHECK(dc->msg.sdiag_state == TCP_ESTABLISHED &&
	      ds->msg.sdiag_state == TCP_ESTABLISHED, "states %u %u",
	      dc->msg.sdiag_state, ds->msg.sdiag_state);
	check_diag_names(c, dc, true);
	check_diag_names(s, ds, true);
	CHECK(dc->msg.sdiag_uid == getuid() && ds->msg.sdiag_uid == getuid(),
	      "uids %u %u", dc->msg.sdiag_uid, ds->msg.sdiag_uid);
	CHECK(dc->msg.sdiag_cookie[0] != ds->msg.sdiag_cookie[0] ||
	      dc->msg.sdiag_cookie[1] != ds->msg.sdiag_cookie[1],
	      "same cookie");
	CHECK(dc->has_stats && ds->has_stats && dc->has_conn,
	      "attributes missing");
	CHECK(ds->stats.bcopy_tx_bytes == n && dc->stats.bcopy_rx_bytes == n &&
	      ds->stats.bcopy_tx_msgs == msgs_for(n) &&
	      dc->stats.bcopy_rx_msgs == msgs_for(n) &&
	      !dc->stats.bcopy_tx_bytes && !ds->stats.bcopy_rx_bytes,
	      "server tx %llu/%llu, client rx %llu/%llu, want %zu/%zu",
	      (unsigned long long)ds->stats.bcopy_tx_bytes,
	      (unsigned long long)ds->stats.bcopy_tx_msgs,
	      (unsigned long long)dc->stats.bcopy_rx_bytes,
	      (unsigned long long)dc->stats.bcopy_rx_msgs, n, msgs_for(n));
	CHECK(!dc->stats.zcopy_tx_bytes && !dc->stats.zcopy_rx_bytes &&
	      !dc->stats.rdma_reads, "zero-copy counters moved");
	check_info_matches_diag(c, dc);
	check_info_matches_diag(s, ds);
	CHECK(ds->stats.credit_updates_rx > 0,
	      "sock_diag has no credit update of the sender");
	CHECK(dc->conn.tx_max == 32768 && dc->conn.rx_bufs == 16 &&
	      dc->conn.tx_bufs == 16 && !dc->conn.abort_reason,
	      "conn tx_max %u bufs %u/%u abort %u", dc->conn.tx_max,
	      dc->conn.rx_bufs, dc->conn.tx_bufs, dc->conn.abort_reason);
	CHECK(dc->conn.tx_mseq_next == ds->conn.rx_mseq_last + 1 ||
	      dc->conn.tx_mseq_next > 1, "mseq %u/%u", dc->conn.tx_mseq_next,
	      ds->conn.rx_mseq_last);

	/* The kernel filters by state and by inode. */
	cnt = diag_dump(1U << TCP_LISTEN, 0, d, MAX_DIAG);
	CHECK(cnt == 1 && d[0].msg.sdiag_inode == inode_of(l),
	      "LISTEN dump: %d sockets", cnt);
	cnt = diag_dump(~0U, inode_of(s), d, MAX_DIAG);
	CHECK(cnt == 1 && d[0].msg.sdiag_inode == inode_of(s),
	      "inode dump: %d sockets", cnt);
	close(c);
	close(s);
	close(l);
	free(d);
}

/* The ring size connections start with, as the suite found it. */
static char rx_init_default[32];

/*
 * The stream positions a resume compares (sdp-resume.rst): the bytes
 * each end sent, had acknowledged and received, whatever the messages
 * were.  Both directions, an urgent byte taken out of band (a byte of
 * the stream, though no in-band read returns it), once with whole
 * receive rings and once with rings that start small (the first sends
 * go in parts to the peer's small buffers).  A new connection starts
 * again from 0.  TCP_INFO's byte counters and sock_diag's SDP_DIAG_CONN
 * show the same positions.
 */
/* sock_diag's SDP_DIAG_CONN has the positions SDP_INFO has. */
static void expect_diag_pos(const char *who, int fd)
{
	struct sdp_info i = sdp_info_of(fd);
	struct sdp_diag_sock d[1];
	int cnt;

	cnt = diag_dump(~0U, inode_of(fd), d, 1);
	CHECK(cnt == 1 && d[0].has_conn, "%s: %d sockets in the dump", who,
	      cnt);
	CHECK(d[0].conn.rx_seq == i.sdpi_rx_seq &&
	      d[0].conn.snd_una == i.sdpi_snd_una &&
	      d[0].conn.snd_nxt == i.sdpi_snd_nxt,
	      "%s: sock_diag rx_seq %llu snd_una %llu snd_nxt %llu, SDP_INFO %llu %llu %llu",
	      who, (unsigned long long)d[0].conn.rx_seq,
	      (unsigned long long)d[0].conn.snd_una,
	      (unsigned long long)d[0].conn.snd_nxt,
	      (unsigned long long)i.sdpi_rx_seq,
	      (unsigned long long)i.sdpi_snd_una,
	      (unsigned long long)i.sdpi_snd_nxt);
}

static void test_stream_position(void)
{
	static const char path[] = "/proc/sys/net/sdp/rx_init_bufs";
	const size_t n = 100000, m = 3000;
	struct sockaddr_storage addr;
	unsigned long long msgs;
	struct pollfd p;
	int round, l, c, s;
	char oob = 0;

	for (round = 0; round < 2; round++) {
		/* tap_main() puts net.sdp.* back after the test. */
		if (round == 1 && !rx_init_default[0])
			tap_skip("%s unreadable: no rings that start small",
				 path);
		if (round == 1)
			CHECK(!write_file(path, rx_init_default),
			      "setting %s to %s", path, rx_init_default);
		l = listener_pair(&addr, 5, &c, &s);
		expect_stream_pos("new client", c, 0, 0);
		expect_stream_pos("new server", s, 0, 0);
		send_bytes(c, n);
		CHECK(send(c, "!", 1, MSG_OOB) == 1, "send MSG_OOB: %s",
		      strerror(errno));
		send_bytes(s, m);
		recv_bytes(s, n);
		p = (struct pollfd){ .fd = s, .events = POLLPRI };
		CHECK(poll(&p, 1, WAIT_MS) == 1 && (p.revents & POLLPRI),
		      "no urgent data within %d ms", WAIT_MS);
		CHECK(recv(s, &oob, 1, MSG_OOB) == 1 && oob == '!',
		      "recv MSG_OOB: %s, byte %d", strerror(errno), oob);
		recv_bytes(c, m);
		/* Small buffers first: more messages than whole ones take. */
		msgs = sdp_info_of(c).sdpi_bcopy_tx_msgs;
		tap_diag("round %d: %llu Data messages for %zu + 1 bytes",
			 round, msgs, n);
		CHECK(round == 0 || msgs > msgs_for(n) + 1,
		      "rings that start small: %llu Data messages for %zu + 1 bytes, as many as whole ones take",
		      msgs, n);
		expect_stream_pos("client", c, n + 1, m);
		expect_stream_pos("server", s, m, n + 1);
		expect_diag_pos("client", c);
		expect_diag_pos("server", s);
		close(c);
		close(s);
		close(l);
	}
}

/* CPUs the guest could have: Soft-RoCE has one completion vector each. */
static int possible_cpus(void)
{
	char buf[64] = "";
	int lo, hi;

	if (read_file("/sys/devices/system/cpu/possible", buf, sizeof(buf)))
		return 1;
	if (sscanf(buf, "%d-%d", &lo, &hi) == 2)
		return hi - lo + 1;
	return 1;
}

/*
 * Connections spread over the device's completion vectors (each CQ takes
 * the one fewest CQs use), which sock_diag's SDP_DIAG_CONN reports: with
 * 8 connections (16 CQs) on a device with V vectors, every vector below
 * min(V, 16) carries some, and no vector carries more than its share
 * rounded up, plus two (the CQs of connections closed just before may
 * still be counted while they go).  All on vector 0 fails it.
 */
static void test_comp_vectors_spread(void)
{
	struct sdp_diag_sock *d = xmalloc(MAX_DIAG * sizeof(*d));
	int c[8], s[8], i, l, cnt, nvec = possible_cpus(), used[64] = {0};
	struct sockaddr_storage addr;
	int want, max_share, conns = 0;

	/*
	 * Soft-RoCE and siw have a vector per possible CPU; a real host's
	 * adapter has what its driver gives it.
	 */
	if (test_host_mode()) {
		nvec = test_device_comp_vectors();
		CHECK(nvec > 0, "no num_comp_vectors for %s (ibv_devinfo -v)",
		      TEST_IBDEV());
	}
	wait_no_sockets();
	l = net_listener(&addr, 16, 0);
	for (i = 0; i < 8; i++) {
		c[i] = net_connect(&addr, 0);
		s[i] = net_accept(l, WAIT_MS);
	}
	cnt = diag_dump(1U << TCP_ESTABLISHED, 0, d, MAX_DIAG);
	for (i = 0; i < cnt; i++) {
		CHECK(d[i].has_conn, "no SDP_DIAG_CONN");
		CHECK(d[i].conn.comp_vector < nvec && d[i].conn.comp_vector < 64,
		      "comp_vector %u of %d", d[i].conn.comp_vector, nvec);
		used[d[i].conn.comp_vector]++;
		conns++;
	}
	CHECK(conns == 16, "%d established sockets, want 16", conns);
	want = nvec < 16 ? nvec : 16;
	max_share = (16 + want - 1) / want + 2;
	tap_diag("16 CQs on %d completion vectors: vector 0 has %d, 1 has %d",
		 nvec, used[0], nvec > 1 ? used[1] : 0);
	for (i = 0; i < want; i++)
		CHECK(used[i] > 0 && used[i] <= max_share,
		      "vector %d has %d of 16 CQs (%d vectors)", i, used[i], nvec);
	for (i = 0; i < 8; i++) {
		close(c[i]);
		close(s[i]);
	}
	close(l);
	free(d);
}

/* More sockets than one netlink message holds: the dump resumes. */
static void test_sock_diag_many_sockets(void)
{
	struct sdp_diag_sock *d = xmalloc(MAX_DIAG * sizeof(*d));
	int fds[300], i, cnt, found = 0;

	wait_no_sockets();
	for (i = 0; i < 300; i++)
		fds[i] = CHECK_OK(socket(AF_INET_SDP, SOCK_STREAM, 0));
	cnt = diag_dump(~0U, 0, d, MAX_DIAG);
	CHECK(cnt == 300, "dump has %d sockets, want 300", cnt);
	for (i = 0; i < 300; i++) {
		found += !!diag_find(d, cnt, inode_of(fds[i]));
		close(fds[i]);
	}
	CHECK(found == 300, "%d of 300 sockets found", found);
	free(d);
}

/*
 * Another network namespace has its own listing, /proc/net/sdp and
 * statistics: a socket there is listed there only.
 */
static void test_netns_separate_listing_and_stats(void)
{
	int pipefd[2], status, fd;
	unsigned long ino = 0;
	pid_t pid;

	fd = CHECK_OK(socket(AF_INET_SDP, SOCK_STREAM, 0));
	CHECK_OK(pipe(pipefd));
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct sdp_diag_sock d[4];
		char line[256];
		FILE *f;
		int cfd;

		close(pipefd[0]);
		if (unshare(CLONE_NEWNET))
			_exit(2);
		/* /proc/net follows the reader's namespace. */
		if (diag_dump(~0U, 0, d, 4) != 0 || proc_net_sdp_count() != 0)
			_exit(3);
		f = fopen("/proc/net/sdp_stats", "re");
		if (!f)
			_exit(4);
		while (fgets(line, sizeof(line), f)) {
			char name[64];
			long long v;

			if (sscanf(line, "%63s %lld", name, &v) != 2 || v != 0)
				_exit(5);	/* a fresh namespace counts 0 */
		}
		fclose(f);
		cfd = socket(AF_INET_SDP, SOCK_STREAM, 0);
		if (cfd < 0)
			_exit(6);
		if (diag_dump(~0U, 0, d, 4) != 1 ||
		    d[0].msg.sdiag_inode != inode_of(cfd) ||
		    proc_net_sdp_count() != 1)
			_exit(7);
		ino = inode_of(cfd);
		if (write(pipefd[1], &ino, sizeof(ino)) != sizeof(ino))
			_exit(8);
		sleep(30);
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &ino, sizeof(ino)) != sizeof(ino)) {
		waitpid(pid, &status, 0);
		CHECK(0, "child failed with status %d",
		      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	CHECK(proc_net_sdp_has_inode(inode_of(fd)), "own socket not listed");
	CHECK(!proc_net_sdp_has_inode(ino),
	      "the other namespace's socket is listed here");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(pipefd[0]);
	close(fd);
}

/* ---- sdpstat ---- */

static void test_sdpstat_lists_sockets(void)
{
	const size_t n = 70000;
	struct sockaddr_storage addr, ca;
	char cmd[256], a[96], b[96], *out, *line;
	unsigned int lport, cport;
	int l, c, s, st;

	if (access("tools/bin/sdpstat", X_OK))
		CHECK(0, "tools/bin/sdpstat not built");
	wait_no_sockets();
	l = listener_pair(&addr, 9, &c, &s);
	send_bytes(c, n);
	recv_bytes(s, n);
	expect_stream_pos("client", c, n, 0);
	local_addr(c, &ca);
	lport = sockaddr_port(&addr);
	cport = sockaddr_port(&ca);

	out = run_capture("tools/bin/sdpstat -a -e", &st);
	CHECK(st == 0, "sdpstat -a -e failed: %d", st);
	CHECK(!strncmp(out, "State ", 6), "no header: %.200s", out);
	snprintf(a, sizeof(a), " %s:%u ", TEST_ADDR(), lport);
	snprintf(b, sizeof(b), " ino:%lu ", inode_of(l));
	line = find_line(out, a, b);
	CHECK(line && !strncmp(line, "LISTEN ", 7), "listener line:\n%s", out);
	if (sscanf(line, "LISTEN %*u %u", &st) != 1)
		st = -1;
	CHECK(st == 9, "listener Send-Q is not the backlog: %.120s", line);
	snprintf(a, sizeof(a), " %s:%u %s:%u ", TEST_ADDR(), cport,
		 TEST_ADDR(), lport);
	snprintf(b, sizeof(b), " ino:%lu ", inode_of(c));
	line = find_line(out, a, b);
	CHECK(line && !strncmp(line, "ESTAB ", 6), "client line:\n%s", out);
	line = strchr(line, '\n');
	CHECK(line, "no counters line");
	snprintf(a, sizeof(a), " bcopy_tx_bytes:%zu ", n);
	snprintf(b, sizeof(b), " bcopy_tx_msgs:%zu ", msgs_for(n));
	CHECK(find_line(line + 1, a, b) == line + 1,
	      "client counters wrong:\n%.400s", line + 1);
	line = strchr(line + 1, '\n');
	CHECK(line, "no connection line");
	snprintf(a, sizeof(a), " snd_una:%zu ", n);
	snprintf(b, sizeof(b), " snd_nxt:%zu ", n);
	CHECK(find_line(line + 1, a, b) == line + 1 &&
	      find_line(line + 1, " rx_seq:0 ", NULL) == line + 1,
	      "client stream positions wrong:\n%.400s", line + 1);
	snprintf(a, sizeof(a), " %s:%u %s:%u ", TEST_ADDR(), lport,
		 TEST_ADDR(), cport);
	snprintf(b, sizeof(b), " ino:%lu ", inode_of(s));
	line = find_line(out, a, b);
	CHECK(line && !strncmp(line, "ESTAB ", 6), "server line:\n%s", out);
	line = strchr(line, '\n') + 1;
	snprintf(a, sizeof(a), " bcopy_rx_bytes:%zu ", n);
	CHECK(find_line(line, a, NULL) == line, "server counters:\n%.400s",
	      line);
	line = strchr(line, '\n');
	CHECK(line, "no connection line");
	snprintf(a, sizeof(a), " rx_seq:%zu ", n);
	CHECK(find_line(line + 1, a, " snd_nxt:0 ") == line + 1,
	      "server stream positions wrong:\n%.400s", line + 1);
	free(out);

	/* -l: the listener only; default: the connections only. */
	out = run_capture("tools/bin/sdpstat -l -H", &st);
	CHECK(st == 0 && !strncmp(out, "LISTEN ", 7) && !strchr(out, '\n')[1],
	      "sdpstat -l:\n%s", out);
	free(out);
	out = run_capture("tools/bin/sdpstat -H", &st);
	CHECK(st == 0 && !find_line(out, "LISTEN", NULL) &&
	      find_line(out, "ESTAB", NULL), "sdpstat:\n%s", out);
	free(out);

	/* Filters: the server's side by source port, the client's by dport. */
	snprintf(cmd, sizeof(cmd), "tools/bin/sdpstat -H sport :%u", lport);
	out = run_capture(cmd, &st);
	snprintf(a, sizeof(a), " %s:%u %s:%u ", TEST_ADDR(), lport,
		 TEST_ADDR(), cport);
	CHECK(st == 0 && find_line(out, a, NULL) == out &&
	      !strchr(out, '\n')[1], "sport filter:\n%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd),
		 "tools/bin/sdpstat -H state established dport = %u", lport);
	out = run_capture(cmd, &st);
	snprintf(a, sizeof(a), " %s:%u %s:%u ", TEST_ADDR(), cport,
		 TEST_ADDR(), lport);
	CHECK(st == 0 && find_line(out, a, NULL) == out &&
	      !strchr(out, '\n')[1], "dport filter:\n%s", out);
	free(out);
	out = run_capture("tools/bin/sdpstat state bogus 2>&1", &st);
	CHECK(st != 0 && strstr(out, "unknown state"), "bad state: %d %s", st,
	      out);
	free(out);
	close(c);
	close(s);
	close(l);
}

/* sdpstat -s: socket totals and every counter of /proc/net/sdp_stats. */
static void test_sdpstat_summary(void)
{
	struct sockaddr_storage addr;
	struct stats stats;
	char *out, want[128];
	int l, st, i;

	wait_no_sockets();
	l = net_listener(&addr, 1, 0);
	stats_read(&stats);
	out = run_capture("tools/bin/sdpstat -s", &st);
	CHECK(st == 0, "sdpstat -s failed");
	CHECK(strstr(out, "SDP sockets: 1 (estab 0, listen 1,"),
	      "totals wrong:\n%.300s", out);
	for (i = 0; i < stats.n; i++) {
		if (!strcmp(stats.name[i], "CurrEstab") ||
		    !strncmp(stats.name[i], "CreditUpdates", 13) ||
		    !strncmp(stats.name[i], "DisConn", 7))
			continue;	/* may move while closes finish */
		snprintf(want, sizeof(want), " %s ", stats.name[i]);
		CHECK(find_line(out, want, NULL), "no %s in:\n%s",
		      stats.name[i], out);
		CHECK(atoll(find_line(out, want, NULL) + 2 +
			    strlen(stats.name[i])) == stats.val[i],
		      "%s differs from /proc/net/sdp_stats (%lld)",
		      stats.name[i], stats.val[i]);
	}
	free(out);
	close(l);
}

/* ---- tracepoints ---- */

static char *read_all_file(const char *path)
{
	size_t cap = 1 << 20, len = 0;
	char *buf = xmalloc(cap + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	while ((n = read(fd, buf + len, cap - len)) > 0)
		len += n;
	buf[len] = '\0';
	close(fd);
	return buf;
}

/* The state tracepoint fires on connect/accept; aborts are traced with why. */
static void test_tracepoints(void)
{
	static const char *const events[] = {
		"sdp_state_change", "sdp_abort", "sdp_zcopy_send",
		"sdp_zcopy_recv", "sdp_rdma_read", "sdp_zcopy_cancel",
	};
	char root[64], inst[128], path[256], want[128];
	struct sockaddr_storage ca, sa;
	char *trace;
	size_t i;
	int c, s;

	/* A real host's tracefs is mounted, or stays unmounted. */
	if (test_host_mode() && access("/sys/kernel/tracing/events", F_OK))
		tap_skip("host mode: tracefs is not mounted at /sys/kernel/tracing");
	if (!tracefs_root(root, sizeof(root)))
		tap_skip("no tracefs");
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/sdp/%s/format", root,
			 events[i]);
		CHECK(!access(path, R_OK), "no tracepoint %s", events[i]);
	}
	snprintf(inst, sizeof(inst), "%s/instances/sdp_ops_test", root);
	rmdir(inst);
	CHECK_OK(mkdir(inst, 0755));
	snprintf(path, sizeof(path), "%s/events/sdp/sdp_state_change/enable",
		 inst);
	CHECK(!write_file(path, "1"), "cannot write %s", path);
	snprintf(path, sizeof(path), "%s/events/sdp/sdp_abort/enable", inst);
	CHECK(!write_file(path, "1"), "cannot write %s", path);

	net_pair(&c, &s);
	local_addr(c, &ca);
	local_addr(s, &sa);
	send_bytes(c, 10);
	wait_inq(s, 10);
	close(s);		/* unread data: an abort */
	CHECK(wait_fd(c, POLLERR, WAIT_MS) > 0, "no reset");
	close(c);

	snprintf(path, sizeof(path), "%s/trace", inst);
	trace = read_all_file(path);
	snprintf(want, sizeof(want), "src=%s:%u dst=%s:%u SYN_SENT -> ESTABLISHED",
		 TEST_ADDR(), sockaddr_port(&ca), TEST_ADDR(),
		 sockaddr_port(&sa));
	CHECK(strstr(trace, want), "no '%s' in the trace:\n%.2000s", want,
	      trace);
	CHECK(strstr(trace, "CLOSE -> SYN_SENT"), "no connect in the trace");
	CHECK(strstr(trace, "SYN_RECV -> ESTABLISHED"), "no accept traced");
	CHECK(strstr(trace, "CLOSE -> LISTEN"), "no listen traced");
	snprintf(want, sizeof(want), "src=%s:%u", TEST_ADDR(),
		 sockaddr_port(&sa));
	CHECK(strstr(trace, "sdp_abort: ") &&
	      strstr(strstr(trace, "sdp_abort: "), want) &&
	      strstr(trace, "reason=close") && strstr(trace, "reason=peer"),
	      "aborts not traced as close/peer:\n%.2000s", trace);
	free(trace);
	CHECK_OK(rmdir(inst));
}

static const struct tap_test tests[] = {
	TAP_TEST(test_proc_net_sdp_known_sockets),
	TAP_TEST(test_proc_net_sdp_uid),
	TAP_TEST(test_proc_net_sdp_ipv6),
	TAP_TEST(test_sock_diag_known_sockets),
	TAP_TEST(test_stream_position),
	TAP_TEST(test_sock_diag_many_sockets),
	TAP_TEST(test_comp_vectors_spread),
	TAP_TEST(test_netns_separate_listing_and_stats),
	TAP_TEST(test_tracepoints),
	TAP_TEST(test_sdpstat_lists_sockets),
	TAP_TEST(test_sdpstat_summary),
};

/*
 * The suite counts messages exactly (msgs_for()) and reads tx_max: it runs
 * with whole receive rings (net.sdp.rx_init_bufs 16), so that every
 * message is a full one from the start.  tests/peer.c and
 * tests/counters.c test rings that start small.
 */
int main(int argc, char **argv)
{
	static const char path[] = "/proc/sys/net/sdp/rx_init_bufs";
	bool whole;
	int ret;

	whole = read_file(path, rx_init_default,
			  sizeof(rx_init_default)) == 0 &&
		write_file(path, "16") == 0;
	ret = tap_main(tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
	if (whole)
		write_file(path, rx_init_default);
	return ret;
}
