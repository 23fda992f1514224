// SPDX-License-Identifier: GPL-2.0
/*
 * Operability: /proc/net/sdp, the sock_diag listing, sdpstat, the
 * statistics, the net.sdp sysctls, module parameters, tracepoints,
 * `make install`, the man pages and the DKMS check.
 *
 * Every check compares with something known independently: sockets this
 * test opened (their inodes from fstat(), addresses from getsockname()),
 * byte counts it transferred, counters read before and after.  The
 * suite runs in the test guest, as root, from the repository directory,
 * one test at a time, so the namespace's counters move only by what the
 * running test does (sockets of earlier tests may still be finishing
 * their close: tests wait for /proc/net/sdp to empty first).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/sdp.h>
#include <linux/sdp_diag.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>

#include "net.h"
#include "tap.h"
#include "util.h"

#define WAIT_MS		10000
/* Payload bytes per Data message: 32 KiB buffers less the 16-byte BSDH. */
#define MSG_PAYLOAD	(32768 - 16)
#define TCP_ESTABLISHED	1
#define TCP_SYN_SENT	2
#define TCP_CLOSE	7
#define TCP_LISTEN	10

static void *xmalloc(size_t size)
{
	void *p = malloc(size);

	CHECK(p, "malloc(%zu)", size);
	return p;
}

static unsigned long inode_of(int fd)
{
	struct stat st;

	CHECK_OK(fstat(fd, &st));
	return st.st_ino;
}

/*
 * The counter tests count messages of the buffered path: large sends
 * would go zero-copy (tests/zcopy.c counts that path).
 */
static void buffered_only(int fd)
{
	int off = 0;

	CHECK_OK(setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &off, sizeof(off)));
}

static void send_bytes(int fd, size_t len)
{
	char *buf = xmalloc(len);

	buffered_only(fd);
	pattern_fill(buf, len, 7, 0);
	CHECK(write_all(fd, buf, len) == (ssize_t)len, "write %zu: %s", len,
	      strerror(errno));
	free(buf);
}

static void recv_bytes(int fd, size_t len)
{
	char *buf = xmalloc(len);

	CHECK(read_all(fd, buf, len) == (ssize_t)len, "read %zu: %s", len,
	      strerror(errno));
	CHECK(pattern_check(buf, len, 7, 0) < 0, "wrong data");
	free(buf);
}

/* Send @len bytes from a child process while the caller reads them. */
static pid_t send_bytes_async(int fd, size_t len)
{
	pid_t pid;

	buffered_only(fd);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		char *buf = malloc(len);

		if (!buf)
			_exit(2);
		pattern_fill(buf, len, 7, 0);
		_exit(write_all(fd, buf, len) == (ssize_t)len ? 0 : 1);
	}
	return pid;
}

static void wait_child_ok(pid_t pid)
{
	int status;

	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "sender failed");
}

static bool inq_is(void *arg)
{
	int *a = arg, v = -1;

	return !ioctl(a[0], SIOCINQ, &v) && v == a[1];
}

/* Wait until @fd has exactly @bytes unread. */
static void wait_inq(int fd, int bytes)
{
	int a[2] = { fd, bytes };

	CHECK(wait_until(inq_is, a, WAIT_MS), "SIOCINQ never reached %d",
	      bytes);
}

static bool no_sdp_sockets(void *arg)
{
	(void)arg;
	return proc_net_sdp_count() == 0;
}

/* Sockets closed by earlier tests finish their teardown first. */
static void wait_no_sockets(void)
{
	CHECK(wait_until(no_sdp_sockets, NULL, 30000),
	      "%d SDP sockets still exist", proc_net_sdp_count());
}

/* ---- /proc/net/sdp ---- */

struct proc_sock {
	uint32_t laddr[4], raddr[4];
	int lwords, rwords;		/* 1 (IPv4) or 4 (IPv6) */
	unsigned int lport, rport, st, txq, rxq, uid;
	unsigned long ino;
	unsigned long long c[8];	/* tx_bcopy ... rx_zcopy_msgs */
};

enum { TX_BCOPY, RX_BCOPY, TX_ZCOPY, RX_ZCOPY, TX_BCOPY_MSGS, RX_BCOPY_MSGS,
       TX_ZCOPY_MSGS, RX_ZCOPY_MSGS };

static const char proc_header[] =
	"local_address rem_address   st tx_queue rx_queue uid inode tx_bcopy rx_bcopy tx_zcopy rx_zcopy tx_bcopy_msgs rx_bcopy_msgs tx_zcopy_msgs rx_zcopy_msgs\n";

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
			   "%63s %63s %x %x:%x %u %lu %llu %llu %llu %llu %llu %llu %llu %llu%n",
			   la, ra, &p.st, &p.txq, &p.rxq, &p.uid, &p.ino,
			   &p.c[0], &p.c[1], &p.c[2], &p.c[3], &p.c[4],
			   &p.c[5], &p.c[6], &p.c[7], &end);
		CHECK(n == 15 && line[end] == '\n', "malformed line '%s'", line);
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

static size_t msgs_for(size_t bytes)
{
	return (bytes + MSG_PAYLOAD - 1) / MSG_PAYLOAD;
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
	l = net_listener(&addr, 5, 0);
	c = net_connect(&addr, 0);
	s = net_accept(l, WAIT_MS);
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

struct diag_sock {
	struct sdp_diag_msg m;
	struct sdp_diag_stats st;
	struct sdp_diag_conn conn;
	bool has_st, has_conn;
};

/* Dump into @out (at most @max); returns how many sockets came. */
static int diag_dump(uint32_t states, uint32_t ino, struct diag_sock *out,
		     int max)
{
	struct {
		struct nlmsghdr nlh;
		struct sdp_diag_req req;
	} msg = {
		.nlh = {
			.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			.nlmsg_seq = 42,
		},
		.req = {
			.sdiag_family = AF_INET_SDP,
			.sdiag_states = states,
			.sdiag_ext = (1U << (SDP_DIAG_STATS - 1)) |
				     (1U << (SDP_DIAG_CONN - 1)),
			.sdiag_ino = ino,
		},
	};
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	static char buf[32768] __attribute__((aligned(8)));
	int fd, count = 0;
	bool done = false;

	fd = CHECK_OK(socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			     NETLINK_SOCK_DIAG));
	CHECK_OK(sendto(fd, &msg, sizeof(msg), 0, (struct sockaddr *)&nl,
			sizeof(nl)));
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		CHECK(n > 0, "netlink recv: %s", n ? strerror(errno) : "EOF");
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			struct diag_sock d;
			struct nlattr *a;
			int len;

			CHECK(h->nlmsg_seq == 42, "seq %u", h->nlmsg_seq);
			if (h->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			CHECK(h->nlmsg_type != NLMSG_ERROR, "netlink error %d",
			      ((struct nlmsgerr *)NLMSG_DATA(h))->error);
			CHECK(h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
			      h->nlmsg_len >= NLMSG_LENGTH(sizeof(d.m)),
			      "message type %u len %u", h->nlmsg_type,
			      h->nlmsg_len);
			memset(&d, 0, sizeof(d));
			memcpy(&d.m, NLMSG_DATA(h), sizeof(d.m));
			len = h->nlmsg_len - NLMSG_LENGTH(sizeof(d.m));
			a = (struct nlattr *)((char *)NLMSG_DATA(h) +
					      NLMSG_ALIGN(sizeof(d.m)));
			while (len >= (int)sizeof(*a) && a->nla_len <= len &&
			       a->nla_len >= sizeof(*a)) {
				void *p = (char *)a + NLA_HDRLEN;

				if (a->nla_type == SDP_DIAG_STATS &&
				    a->nla_len >= NLA_HDRLEN + sizeof(d.st)) {
					memcpy(&d.st, p, sizeof(d.st));
					d.has_st = true;
				} else if (a->nla_type == SDP_DIAG_CONN &&
					   a->nla_len >= NLA_HDRLEN + sizeof(d.conn)) {
					memcpy(&d.conn, p, sizeof(d.conn));
					d.has_conn = true;
				}
				len -= NLA_ALIGN(a->nla_len);
				a = (struct nlattr *)((char *)a +
						      NLA_ALIGN(a->nla_len));
			}
			if (count < max)
				out[count] = d;
			count++;
		}
	}
	close(fd);
	return count;
}

static const struct diag_sock *diag_find(const struct diag_sock *d, int n,
					 unsigned long ino)
{
	int i;

	for (i = 0; i < n; i++)
		if (d[i].m.sdiag_inode == ino)
			return &d[i];
	return NULL;
}

static void check_diag_names(int fd, const struct diag_sock *d, bool conn)
{
	struct sockaddr_storage ss;
	const struct sockaddr_in *sin = (const void *)&ss;

	CHECK(d->m.sdiag_family == AF_INET, "family %u", d->m.sdiag_family);
	local_addr(fd, &ss);
	CHECK(d->m.sdiag_src[0] == sin->sin_addr.s_addr &&
	      d->m.sdiag_sport == sin->sin_port, "local address/port differ");
	if (conn) {
		peer_addr(fd, &ss);
		CHECK(d->m.sdiag_dst[0] == sin->sin_addr.s_addr &&
		      d->m.sdiag_dport == sin->sin_port,
		      "remote address/port differ");
	}
}

#define MAX_DIAG	512

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

static void check_info_matches_diag(int fd, const struct diag_sock *d)
{
	struct sdp_info info;
	socklen_t len = sizeof(info);
	size_t i;

	CHECK(sizeof(info) == sizeof(d->st) &&
	      sizeof(info) == N_SAME_COUNTERS * sizeof(__u64),
	      "struct sdp_info %zu bytes, struct sdp_diag_stats %zu",
	      sizeof(info), sizeof(d->st));
	CHECK_OK(getsockopt(fd, SOL_SDP, SDP_INFO, &info, &len));
	CHECK(len == sizeof(info), "SDP_INFO gave %u bytes", len);
	for (i = 0; i < N_SAME_COUNTERS; i++) {
		__u64 a = *(const __u64 *)((const char *)&info +
					   same_counters[i].info);
		__u64 b = *(const __u64 *)((const char *)&d->st +
					   same_counters[i].diag);

		CHECK(same_counters[i].exact ? a == b : a >= b,
		      "%s: SDP_INFO %llu, sock_diag %llu", same_counters[i].name,
		      (unsigned long long)a, (unsigned long long)b);
	}
}

static void test_sock_diag_known_sockets(void)
{
	const size_t n = 200000;
	struct diag_sock *d = xmalloc(MAX_DIAG * sizeof(*d));
	const struct diag_sock *dl, *dc, *ds;
	struct sockaddr_storage addr;
	int l, c, s, cnt;

	wait_no_sockets();
	l = net_listener(&addr, 7, 0);
	c = net_connect(&addr, 0);
	s = net_accept(l, WAIT_MS);
	send_bytes(s, n);
	recv_bytes(c, n);

	cnt = diag_dump(~0U, 0, d, MAX_DIAG);
	CHECK(cnt == 3 && cnt == proc_net_sdp_count(),
	      "dump has %d sockets, /proc/net/sdp %d", cnt,
	      proc_net_sdp_count());
	dl = diag_find(d, cnt, inode_of(l));
	dc = diag_find(d, cnt, inode_of(c));
	ds = diag_find(d, cnt, inode_of(s));
	CHECK(dl && dc && ds, "a known socket is missing from the dump");
	CHECK(dl->m.sdiag_state == TCP_LISTEN && dl->m.sdiag_wqueue == 7 &&
	      dl->m.sdiag_rqueue == 0, "listener state %u queues %u/%u",
	      dl->m.sdiag_state, dl->m.sdiag_rqueue, dl->m.sdiag_wqueue);
	check_diag_names(l, dl, false);
	CHECK(dc->m.sdiag_state == TCP_ESTABLISHED &&
	      ds->m.sdiag_state == TCP_ESTABLISHED, "states %u %u",
	      dc->m.sdiag_state, ds->m.sdiag_state);
	check_diag_names(c, dc, true);
	check_diag_names(s, ds, true);
	CHECK(dc->m.sdiag_uid == getuid() && ds->m.sdiag_uid == getuid(),
	      "uids %u %u", dc->m.sdiag_uid, ds->m.sdiag_uid);
	CHECK(dc->m.sdiag_cookie[0] != ds->m.sdiag_cookie[0] ||
	      dc->m.sdiag_cookie[1] != ds->m.sdiag_cookie[1], "same cookie");
	CHECK(dc->has_st && ds->has_st && dc->has_conn, "attributes missing");
	CHECK(ds->st.bcopy_tx_bytes == n && dc->st.bcopy_rx_bytes == n &&
	      ds->st.bcopy_tx_msgs == msgs_for(n) &&
	      dc->st.bcopy_rx_msgs == msgs_for(n) &&
	      !dc->st.bcopy_tx_bytes && !ds->st.bcopy_rx_bytes,
	      "server tx %llu/%llu, client rx %llu/%llu, want %zu/%zu",
	      (unsigned long long)ds->st.bcopy_tx_bytes,
	      (unsigned long long)ds->st.bcopy_tx_msgs,
	      (unsigned long long)dc->st.bcopy_rx_bytes,
	      (unsigned long long)dc->st.bcopy_rx_msgs, n, msgs_for(n));
	CHECK(!dc->st.zcopy_tx_bytes && !dc->st.zcopy_rx_bytes &&
	      !dc->st.rdma_reads, "zero-copy counters moved");
	check_info_matches_diag(c, dc);
	check_info_matches_diag(s, ds);
	CHECK(ds->st.credit_updates_rx > 0,
	      "the sender saw no credit update in %zu bytes", n);
	CHECK(dc->conn.tx_max == 32768 && dc->conn.rx_bufs == 16 &&
	      dc->conn.tx_bufs == 16 && !dc->conn.abort_reason,
	      "conn tx_max %u bufs %u/%u abort %u", dc->conn.tx_max,
	      dc->conn.rx_bufs, dc->conn.tx_bufs, dc->conn.abort_reason);
	CHECK(dc->conn.tx_mseq_next == ds->conn.rx_mseq_last + 1 ||
	      dc->conn.tx_mseq_next > 1, "mseq %u/%u", dc->conn.tx_mseq_next,
	      ds->conn.rx_mseq_last);

	/* The kernel filters by state and by inode. */
	cnt = diag_dump(1U << TCP_LISTEN, 0, d, MAX_DIAG);
	CHECK(cnt == 1 && d[0].m.sdiag_inode == inode_of(l),
	      "LISTEN dump: %d sockets", cnt);
	cnt = diag_dump(~0U, inode_of(s), d, MAX_DIAG);
	CHECK(cnt == 1 && d[0].m.sdiag_inode == inode_of(s),
	      "inode dump: %d sockets", cnt);
	close(c);
	close(s);
	close(l);
	free(d);
}

/* More sockets than one netlink message holds: the dump resumes. */
static void test_sock_diag_many_sockets(void)
{
	struct diag_sock *d = xmalloc(MAX_DIAG * sizeof(*d));
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
		struct diag_sock d[4];
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
		    d[0].m.sdiag_inode != inode_of(cfd) ||
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

/* ---- statistics ---- */

#define MAX_STATS 64

struct stats {
	int n;
	char name[MAX_STATS][40];
	long long val[MAX_STATS];
};

static void stats_read(struct stats *s)
{
	char line[256];
	FILE *f = fopen("/proc/net/sdp_stats", "re");

	CHECK(f, "/proc/net/sdp_stats: %s", strerror(errno));
	s->n = 0;
	while (fgets(line, sizeof(line), f)) {
		int got;

		CHECK(s->n < MAX_STATS, "too many counters");
		got = sscanf(line, "%39s %lld", s->name[s->n], &s->val[s->n]);
		CHECK(got == 2, "bad line '%s'", line);
		s->n++;
	}
	fclose(f);
	CHECK(s->n > 0, "no counters");
}

static long long stat_of(const struct stats *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return s->val[i];
	CHECK(0, "no counter %s", name);
	return 0;
}

/* Every counter but those named in @moved (NULL-terminated) is unchanged. */
static void check_unchanged(const struct stats *a, const struct stats *b,
			    const char *const *moved)
{
	int i, j;

	for (i = 0; i < a->n; i++) {
		bool skip = false;

		for (j = 0; moved[j]; j++)
			skip |= !strcmp(a->name[i], moved[j]);
		if (!skip)
			CHECK(a->val[i] == stat_of(b, a->name[i]),
			      "%s moved from %lld to %lld", a->name[i],
			      a->val[i], stat_of(b, a->name[i]));
	}
}

#define DELTA(name) (stat_of(&after, name) - stat_of(&before, name))

/*
 * A connection, exactly N bytes one way through the buffered path, an
 * orderly close: each counter moves by what that is, the others not.
 */
static void test_counters_transfer(void)
{
	static const char *const moved[] = {
		"ActiveOpens", "ActiveEstab", "PassiveOpens", "PassiveEstab",
		"BcopyTxBytes", "BcopyTxMsgs", "BcopyRxBytes", "BcopyRxMsgs",
		"DisConnTx", "DisConnRx", "CreditUpdatesTx",
		"CreditUpdatesRx", "CreditStalls", "CurrEstab",
		/* the blocking reads may poll: timing decides */
		"BusyPollHits", "BusyPollYields", NULL
	};
	const size_t n = 1 << 20;
	struct stats before, after, mid;
	struct sockaddr_storage addr;
	pid_t sender;
	int l, c, s;
	char ch;

	wait_no_sockets();
	stats_read(&before);
	l = net_listener(&addr, 1, 0);
	c = net_connect(&addr, 0);
	s = net_accept(l, WAIT_MS);
	close(l);
	sender = send_bytes_async(c, n);	/* more than the rings hold */
	recv_bytes(s, n);
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
	CHECK(DELTA("BcopyTxMsgs") == (long long)msgs_for(n) &&
	      DELTA("BcopyRxMsgs") == (long long)msgs_for(n),
	      "bcopy msgs tx %lld rx %lld, want %zu", DELTA("BcopyTxMsgs"),
	      DELTA("BcopyRxMsgs"), msgs_for(n));
	CHECK(DELTA("DisConnTx") == 2 && DELTA("DisConnRx") == 2,
	      "DisConn tx %lld rx %lld", DELTA("DisConnTx"),
	      DELTA("DisConnRx"));
	CHECK(DELTA("CurrEstab") == 0, "CurrEstab moved by %lld",
	      DELTA("CurrEstab"));
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
	struct diag_sock d[8];
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
#define MEM_SYSCTL	"/proc/sys/net/sdp/mem"

/* MemPages must be @base + @want now. */
#define CHECK_MEM(base, want, what)					\
	CHECK(sdp_stat("MemPages") - (base) == (want),			\
	      "MemPages +%lld %s, expected +%d",				\
	      sdp_stat("MemPages") - (base), what, (int)(want))

static bool mem_pages_back(void *arg)
{
	return sdp_stat("MemPages") == *(long long *)arg;
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
 * when needed: a new pair holds two receive rings of 16 buffers and no
 * send buffers until it sends; the first send of each end adds its send
 * ring.  Above net.sdp.mem's max a new connect() fails with ENOBUFS
 * (MemRefused) while the established pair keeps working; under pressure
 * (usage above the middle value, until below the first) a new pair gets
 * 4 buffers each way (MemPressureConns +1 per end).  Closed, all of it is
 * given back.
 */
static void test_memory_limits(void)
{
	struct sockaddr_storage addr;
	long long base, refused, small, m;
	int c, s, l, c2, c3, s3;
	char val[128];

	if (!test_is_sdp())
		tap_skip("SDP's own accounting");
	if (sysconf(_SC_PAGESIZE) != 4096)
		tap_skip("page size %ld", sysconf(_SC_PAGESIZE));
	base = sdp_stat("MemPages");
	CHECK(base >= 0, "no MemPages counter");
	l = net_listener(&addr, 4, 0);
	c = net_connect(&addr, 0);
	s = net_accept(l, WAIT_MS);
	CHECK_MEM(base, 2 * 16 * BUF_PAGES, "for a pair that has not sent");
	ping_both(c, s);
	CHECK_MEM(base, 4 * 16 * BUF_PAGES, "for a pair that has sent");

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
	CHECK_MEM(m, 2 * 4 * BUF_PAGES, "for a pair made under pressure");
	ping_both(c3, s3);
	CHECK_MEM(m, 4 * 4 * BUF_PAGES, "for that pair after sending");

	close(c);
	close(s);
	close(c3);
	close(s3);
	close(l);
	CHECK(wait_until(mem_pages_back, &base, WAIT_MS),
	      "MemPages %lld after the close, %lld before", sdp_stat("MemPages"),
	      base);
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
 * a cgroup raise its memory.current by at least 3/4 of their 8 x 32
 * buffers of 32 KiB, and closing them gives it back.
 */
static void test_memory_cgroup(void)
{
	char cg[64], path[128], pid[16], ctl[256];
	struct sockaddr_storage addr;
	struct cg_back back;
	int c[4], s[4], l, i;
	long long used;

	if (!test_is_sdp())
		tap_skip("SDP's own buffers");
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

	back.cg = cg;
	back.base = cg_current(cg);
	CHECK(back.base >= 0, "no memory.current in %s", cg);
	l = net_listener(&addr, 4, 0);
	for (i = 0; i < 4; i++) {
		c[i] = net_connect(&addr, 0);
		s[i] = net_accept(l, WAIT_MS);
		ping_both(c[i], s[i]);
	}
	used = cg_current(cg) - back.base;
	tap_diag("memory.current +%lld kB for 4 pairs", used / 1024);
	CHECK(used >= 8 * 32 * 32 * 1024 / 4 * 3,
	      "memory.current +%lld kB: the buffers are not charged to the cgroup",
	      used / 1024);
	for (i = 0; i < 4; i++) {
		close(c[i]);
		close(s[i]);
	}
	close(l);
	CHECK(wait_until(cg_back, &back, WAIT_MS),
	      "memory.current still +%lld kB after the close",
	      (cg_current(cg) - back.base) / 1024);
	CHECK(write_file(CG_ROOT "/cgroup.procs", pid) == 0, "leave %s", cg);
	rmdir(cg);
}

/* ---- sysctls and module parameters ---- */

struct knob {
	const char *name;
	long min, max, dflt;
};

static const struct knob knobs[] = {
	{ "recv_poll", 0, 100000, 700 },
	{ "fin_timeout", 1, 3600, 60 },
	{ "resolve_timeout_ms", 100, 60000, 2000 },
	{ "zcopy_thresh", 0, 1073741824, 65536 },
	{ "max_half_open", 0, 65536, 256 },
};

#define NKNOBS (sizeof(knobs) / sizeof(knobs[0]))

static int sysctl_write(const char *name, long v)
{
	char path[128], val[32];
	int fd, n, err = 0;

	snprintf(path, sizeof(path), "/proc/sys/net/sdp/%s", name);
	n = snprintf(val, sizeof(val), "%ld\n", v);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, n) != n)
		err = -errno;
	close(fd);
	return err;
}

static long sysctl_read(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/proc/sys/net/sdp/%s", name);
	return read_ull(path);
}

static void sysctl_defaults(void)
{
	size_t i;

	for (i = 0; i < NKNOBS; i++)
		sysctl_write(knobs[i].name, knobs[i].dflt);
}

/* Each knob: default, both bounds accepted, one beyond each refused. */
static void test_sysctl_bounds(void)
{
	size_t i;

	sysctl_defaults();
	for (i = 0; i < NKNOBS; i++) {
		const struct knob *k = &knobs[i];
		int err;

		CHECK(sysctl_read(k->name) == k->dflt, "%s is %ld, want %ld",
		      k->name, sysctl_read(k->name), k->dflt);
		err = sysctl_write(k->name, k->min - 1);
		CHECK(err == -EINVAL, "%s=%ld: %s", k->name, k->min - 1,
		      err ? strerror(-err) : "accepted");
		err = sysctl_write(k->name, k->max + 1);
		CHECK(err == -EINVAL, "%s=%ld: %s", k->name, k->max + 1,
		      err ? strerror(-err) : "accepted");
		CHECK(sysctl_read(k->name) == k->dflt,
		      "%s changed to %ld by refused writes", k->name,
		      sysctl_read(k->name));
		CHECK_OK(sysctl_write(k->name, k->min));
		CHECK(sysctl_read(k->name) == k->min, "%s min", k->name);
		CHECK_OK(sysctl_write(k->name, k->max));
		CHECK(sysctl_read(k->name) == k->max, "%s max", k->name);
		CHECK_OK(sysctl_write(k->name, k->dflt));
	}
}

/* A new namespace has its own knobs, starting from the defaults. */
static void test_sysctl_per_netns(void)
{
	int status;
	pid_t pid;

	sysctl_defaults();
	CHECK_OK(sysctl_write("fin_timeout", 123));
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		if (unshare(CLONE_NEWNET))
			_exit(2);
		if (sysctl_read("fin_timeout") != 60)
			_exit(3);
		if (sysctl_write("fin_timeout", 7) || sysctl_read("fin_timeout") != 7)
			_exit(4);
		if (sysctl_write("recv_poll", 100001) != -EINVAL)
			_exit(5);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "child namespace check failed: %d",
	      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CHECK(sysctl_read("fin_timeout") == 123, "fin_timeout here is %ld",
	      sysctl_read("fin_timeout"));
	sysctl_defaults();
}

/*
 * net.sdp.fin_timeout bounds how long an orphaned socket waits for the
 * peer's close: with 1 s, a client closed while its peer keeps the
 * connection open is aborted after about a second.
 */
static void test_sysctl_fin_timeout_applies(void)
{
	struct stats before, after;
	unsigned long cino;
	long long t0;
	ssize_t r;
	char ch;
	int c, s;

	sysctl_defaults();
	wait_no_sockets();
	CHECK_OK(sysctl_write("fin_timeout", 1));
	stats_read(&before);
	net_pair(&c, &s);
	cino = inode_of(c);
	close(c);		/* DisConn; the server never closes */
	CHECK(read(s, &ch, 1) == 0, "no end of stream");
	t0 = now_ms();
	/* The orphan is aborted: the server sees the AbortConn. */
	CHECK(wait_fd(s, POLLERR, 8000) > 0, "no abort after 8 s");
	r = send(s, "x", 1, MSG_NOSIGNAL);
	CHECK(r == -1, "send after the abort: %zd", r);
	CHECK(now_ms() - t0 < 8000, "abort took %lld ms", now_ms() - t0);
	stats_read(&after);
	CHECK(DELTA("AbortOnTimeout") == 1, "AbortOnTimeout moved by %lld",
	      DELTA("AbortOnTimeout"));
	CHECK(!proc_net_sdp_has_inode(cino), "closed client still listed");
	close(s);
	sysctl_defaults();
}

/* ---- busy polling ---- */

struct echo {
	int fd;
	int rounds;
	int cpu;
	int err;
};

/* Run the calling thread on @cpu alone. */
static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_OK(sched_setaffinity(0, sizeof(set), &set));
}

/* The first @n CPUs this process may run on, in @cpus; false if fewer. */
static bool allowed_cpus(int *cpus, int n)
{
	cpu_set_t set;
	int cpu, i = 0;

	CHECK_OK(sched_getaffinity(0, sizeof(set), &set));
	for (cpu = 0; cpu < CPU_SETSIZE && i < n; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[i++] = cpu;
	return i == n;
}

/* On CPU e->cpu, send back each byte that arrives, @rounds times. */
static void *echo_fn(void *arg)
{
	struct echo *e = arg;
	char ch;
	int i;

	pin_to_cpu(e->cpu);
	for (i = 0; i < e->rounds; i++) {
		if (read_all(e->fd, &ch, 1) != 1 ||
		    write_all(e->fd, &ch, 1) != 1) {
			e->err = errno ? errno : EIO;
			break;
		}
	}
	return NULL;
}

/*
 * @rounds one-byte round trips from @c, the caller pinned to @cpu_c, to
 * an echo thread on @s pinned to @cpu_s; returns how long they took in
 * microseconds.  Each blocking read waits for the other side.
 */
static long long ping_pong(int c, int cpu_c, int s, int cpu_s, int rounds)
{
	struct echo e = { .fd = s, .rounds = rounds, .cpu = cpu_s };
	long long t0, t;
	pthread_t thr;
	char ch = 'p';
	int i, err;

	pin_to_cpu(cpu_c);
	err = pthread_create(&thr, NULL, echo_fn, &e);
	CHECK(!err, "pthread_create: %s", strerror(err));
	t0 = now_us();
	for (i = 0; i < rounds; i++) {
		CHECK(write_all(c, &ch, 1) == 1, "write: %s", strerror(errno));
		CHECK(read_all(c, &ch, 1) == 1, "read: %s", strerror(errno));
	}
	t = now_us() - t0;
	pthread_join(thr, NULL);
	CHECK(!e.err, "echo: %s", strerror(e.err));
	return t;
}

/*
 * net.sdp.recv_poll and SO_BUSY_POLL decide whether a blocking receive
 * polls: with either set, receives that wait for the reply find it while
 * polling (BusyPollHits moves); with the sysctl at 0 and no SO_BUSY_POLL,
 * nothing polls.
 */
static void test_busy_poll_settings(void)
{
	long long hits_default, hits_off, yields_off, hits_sockopt;
	struct stats before, after;
	int c, s, cpu[2];

	/* Each end on a CPU of its own, so that neither poll yields. */
	if (!allowed_cpus(cpu, 2))
		tap_skip("needs two CPUs");
	sysctl_defaults();
	net_pair(&c, &s);

	stats_read(&before);
	ping_pong(c, cpu[0], s, cpu[1], 50);
	stats_read(&after);
	hits_default = DELTA("BusyPollHits");

	CHECK_OK(sysctl_write("recv_poll", 0));
	stats_read(&before);
	ping_pong(c, cpu[0], s, cpu[1], 50);
	stats_read(&after);
	hits_off = DELTA("BusyPollHits");
	yields_off = DELTA("BusyPollYields");

	/* SO_BUSY_POLL on the client only, the sysctl still 0. */
	sockopt_set(c, SOL_SOCKET, SO_BUSY_POLL, 700);
	CHECK(sockopt_get(c, SOL_SOCKET, SO_BUSY_POLL) == 700,
	      "SO_BUSY_POLL reads back %d",
	      sockopt_get(c, SOL_SOCKET, SO_BUSY_POLL));
	stats_read(&before);
	ping_pong(c, cpu[0], s, cpu[1], 50);
	stats_read(&after);
	hits_sockopt = DELTA("BusyPollHits");
	sysctl_defaults();
	close(c);
	close(s);

	CHECK(hits_default > 0, "recv_poll 700: no receive found data by polling");
	CHECK(hits_off == 0 && yields_off == 0,
	      "recv_poll 0: BusyPollHits +%lld, BusyPollYields +%lld",
	      hits_off, yields_off);
	CHECK(hits_sockopt > 0,
	      "SO_BUSY_POLL 700: no receive found data by polling");
}

/*
 * The fastest of three runs of @rounds round trips, both ends on @cpu: a
 * host stall in one run does not count.
 */
static long long ping_pong_best(int c, int s, int cpu, int rounds)
{
	long long best = 0, t;
	int i;

	for (i = 0; i < 3; i++) {
		t = ping_pong(c, cpu, s, cpu, rounds);
		if (!i || t < best)
			best = t;
	}
	return best;
}

/*
 * Both ends on one CPU and a busy-poll time of 100 ms: a reader must stop
 * polling as soon as the peer it waits for is runnable on its CPU
 * (BusyPollYields moves), so that a round trip costs about what it costs
 * without polling.  A reader that kept the CPU would delay every reply
 * until the scheduler took the CPU away from it (a tick or more).
 */
static void test_busy_poll_yields_cpu(void)
{
	long long t_off, t_poll, yields;
	struct stats before, after;
	int c, s, cpu;

	allowed_cpus(&cpu, 1);
	sysctl_defaults();
	net_pair(&c, &s);

	CHECK_OK(sysctl_write("recv_poll", 0));
	ping_pong(c, cpu, s, cpu, 10);	/* warm up */
	t_off = ping_pong_best(c, s, cpu, 50);

	sockopt_set(c, SOL_SOCKET, SO_BUSY_POLL, 100000);
	sockopt_set(s, SOL_SOCKET, SO_BUSY_POLL, 100000);
	stats_read(&before);
	t_poll = ping_pong_best(c, s, cpu, 50);
	stats_read(&after);
	yields = DELTA("BusyPollYields");
	sysctl_defaults();
	close(c);
	close(s);

	tap_diag("one CPU, 50 round trips (best of 3): %lld us without polling, %lld us with SO_BUSY_POLL 100 ms; %lld yields",
		 t_off, t_poll, yields);
	CHECK(yields > 0, "the pollers never gave the CPU up");
	CHECK(t_poll < 3 * t_off, "polling made round trips %.1f times slower",
	      (double)t_poll / t_off);
}

static bool tracing_dir(char *buf, size_t size)
{
	if (!access("/sys/kernel/tracing/events", F_OK)) {
		snprintf(buf, size, "/sys/kernel/tracing");
		return true;
	}
	mkdir("/sys/kernel/tracing", 0755);
	if (!mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) &&
	    !access("/sys/kernel/tracing/events", F_OK)) {
		snprintf(buf, size, "/sys/kernel/tracing");
		return true;
	}
	return false;
}

static void write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);

	CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	CHECK(write(fd, s, strlen(s)) == (ssize_t)strlen(s), "%s: %s", path,
	      strerror(errno));
	close(fd);
}

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

	if (!tracing_dir(root, sizeof(root)))
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
	write_str(path, "1");
	snprintf(path, sizeof(path), "%s/events/sdp/sdp_abort/enable", inst);
	write_str(path, "1");

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

/* recv_poll is bounds-checked at load and seeds net.sdp.recv_poll. */
static void test_module_parameters(void)
{
	static const char *const params[] = { "family", "recv_poll" };
	char line[512], *out;
	size_t i;
	FILE *p;
	int ret;

	wait_no_sockets();
	CHECK_OK(sdp_unload(10000));
	ret = sdp_load("recv_poll=100001");
	CHECK(ret == -EINVAL, "recv_poll=100001: %s",
	      ret ? strerror(-ret) : "loaded");
	CHECK(!sdp_loaded(), "loaded with an out-of-range recv_poll");
	CHECK_OK(sdp_load("recv_poll=250"));
	CHECK(sysctl_read("recv_poll") == 250, "net.sdp.recv_poll %ld",
	      sysctl_read("recv_poll"));
	CHECK_OK(sdp_unload(10000));
	CHECK_OK(sdp_ensure_loaded());
	CHECK(sysctl_read("recv_poll") == 700, "default recv_poll %ld",
	      sysctl_read("recv_poll"));

	/* modinfo: every parameter has a description. */
	snprintf(line, sizeof(line), "modinfo -p %s", env_or("SDP_KO", "sdp.ko"));
	p = popen(line, "r");
	CHECK(p, "modinfo");
	out = xmalloc(8192);
	out[fread(out, 1, 8191, p)] = '\0';
	pclose(p);
	for (i = 0; i < 2; i++) {
		char *at;

		snprintf(line, sizeof(line), "%s:", params[i]);
		at = strstr(out, line);
		CHECK(at && at[strlen(line)] && at[strlen(line)] != '\n' &&
		      strstr(at, "default"), "parameter %s has no description",
		      params[i]);
	}
	free(out);
}

/* ---- sdpstat ---- */

static char *run_capture(const char *cmd, int *status)
{
	size_t cap = 1 << 20, len = 0, n;
	char *buf = xmalloc(cap + 1);
	FILE *p = popen(cmd, "r");

	CHECK(p, "popen %s", cmd);
	while ((n = fread(buf + len, 1, cap - len, p)) > 0)
		len += n;
	buf[len] = '\0';
	*status = pclose(p);
	return buf;
}

/* The line of @out whose fields include @a and @b (NULL: any), or NULL. */
static char *find_line(char *out, const char *a, const char *b)
{
	char *line = out;

	while (line && *line) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char tmp[1024];
		size_t i, j = 0;

		/* One space between fields, and around the line. */
		tmp[j++] = ' ';
		for (i = 0; i < len && j < sizeof(tmp) - 2; i++) {
			if (isspace((unsigned char)line[i])) {
				if (tmp[j - 1] != ' ')
					tmp[j++] = ' ';
			} else {
				tmp[j++] = line[i];
			}
		}
		if (tmp[j - 1] != ' ')
			tmp[j++] = ' ';
		tmp[j] = '\0';
		if ((!a || strstr(tmp, a)) && (!b || strstr(tmp, b)))
			return line;
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

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
	l = net_listener(&addr, 9, 0);
	c = net_connect(&addr, 0);
	s = net_accept(l, WAIT_MS);
	send_bytes(c, n);
	recv_bytes(s, n);
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
	snprintf(a, sizeof(a), " %s:%u %s:%u ", TEST_ADDR(), lport,
		 TEST_ADDR(), cport);
	snprintf(b, sizeof(b), " ino:%lu ", inode_of(s));
	line = find_line(out, a, b);
	CHECK(line && !strncmp(line, "ESTAB ", 6), "server line:\n%s", out);
	line = strchr(line, '\n') + 1;
	snprintf(a, sizeof(a), " bcopy_rx_bytes:%zu ", n);
	CHECK(find_line(line, a, NULL) == line, "server counters:\n%.400s",
	      line);
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

/* ---- installation ---- */

static bool file_exists(const char *root, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s%s", root, rel);
	return !access(path, F_OK);
}

/*
 * make install-files DESTDIR=... (what `make install` runs once the
 * build is done: running kbuild again in the emulated guest would take
 * minutes) lays out every file, and make uninstall removes them all.
 */
static void test_make_install_destdir(void)
{
	static const char *const files[] = {
		"/usr/local/include/linux/sdp.h",
		"/usr/local/include/linux/sdp_diag.h",
		"/usr/local/sbin/sdpstat",
		"/usr/local/share/man/man7/sdp.7",
		"/usr/local/share/man/man8/sdpstat.8",
		"/usr/local/share/doc/sdp/sdp.rst",
		"/usr/local/share/doc/sdp/examples/modprobe.d/sdp.conf",
	};
	char root[] = "/var/tmp/sdp-install.XXXXXX", cmd[512], mod[256],
	     rel[128], *out;
	struct stat st;
	size_t i;
	int status;

	CHECK(mkdtemp(root), "mkdtemp");
	CHECK_OK(read_file("/proc/sys/kernel/osrelease", rel, sizeof(rel)));
	snprintf(cmd, sizeof(cmd), "make -s install-files DESTDIR=%s 2>&1", root);
	out = run_capture(cmd, &status);
	CHECK(status == 0, "make install failed:\n%s", out);
	free(out);
	snprintf(mod, sizeof(mod), "/lib/modules/%s/extra/sdp.ko", rel);
	CHECK(file_exists(root, mod), "no %s", mod);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		CHECK(file_exists(root, files[i]), "no %s", files[i]);
	snprintf(cmd, sizeof(cmd), "%s/usr/local/sbin/sdpstat", root);
	CHECK_OK(stat(cmd, &st));
	CHECK((st.st_mode & 0777) == 0755, "sdpstat mode %o", st.st_mode);
	snprintf(cmd, sizeof(cmd), "%s%s", root, mod);
	CHECK_OK(stat(cmd, &st));
	CHECK((st.st_mode & 0777) == 0644, "sdp.ko mode %o", st.st_mode);

	snprintf(cmd, sizeof(cmd), "make -s uninstall DESTDIR=%s 2>&1", root);
	out = run_capture(cmd, &status);
	CHECK(status == 0, "make uninstall failed:\n%s", out);
	free(out);
	CHECK(!file_exists(root, mod), "%s left", mod);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		CHECK(!file_exists(root, files[i]), "%s left", files[i]);
	snprintf(cmd, sizeof(cmd), "find %s -type f | wc -l", root);
	out = run_capture(cmd, &status);
	CHECK(atoi(out) == 0, "files left after uninstall: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0, "rm");
}

/* The man pages are valid man(7) roff: groff has nothing to warn about. */
static void test_man_pages_render(void)
{
	static const char *const pages[] = { "man/sdp.7", "man/sdpstat.8" };
	char cmd[256], *out;
	size_t i;
	int status;

	if (system("command -v groff > /dev/null 2>&1"))
		tap_skip("no groff");
	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		CHECK(!access(pages[i], R_OK), "no %s", pages[i]);
		snprintf(cmd, sizeof(cmd),
			 "groff -man -ww -z -rCHECKSTYLE=3 %s 2>&1", pages[i]);
		out = run_capture(cmd, &status);
		CHECK(status == 0 && !out[0], "%s: groff says:\n%s", pages[i],
		      out);
		free(out);
		snprintf(cmd, sizeof(cmd),
			 "MANWIDTH=80 man -l %s 2>&1 | grep -c -E '^(NAME|SYNOPSIS|DESCRIPTION|SEE ALSO)$'",
			 pages[i]);
		out = run_capture(cmd, &status);
		CHECK(atoi(out) == 4, "%s lacks standard sections (%s)",
		      pages[i], out);
		free(out);
	}
}

/* DKMS: kernels without the RDMA CM, or older than 5.10, are refused. */
static void test_dkms_refuses_without_rdma_cm(void)
{
	char dir[] = "/var/tmp/sdp-dkms.XXXXXX", path[256], cmd[512], *out;
	FILE *f;
	int status;

	out = run_capture("cat dkms.conf", &status);
	CHECK(status == 0, "no dkms.conf");
	CHECK(find_line(out, "BUILD_EXCLUSIVE_CONFIG=", "CONFIG_INFINIBAND_ADDR_TRANS"),
	      "dkms.conf does not require CONFIG_INFINIBAND_ADDR_TRANS");
	CHECK(find_line(out, "PRE_BUILD=\"scripts/dkms-check", NULL),
	      "dkms.conf has no PRE_BUILD check");
	free(out);

	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(path, sizeof(path), "%s/.config", dir);
	f = fopen(path, "we");
	CHECK(f, "%s", path);
	fputs("CONFIG_MODULES=y\nCONFIG_INFINIBAND=m\n# CONFIG_INFINIBAND_ADDR_TRANS is not set\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "scripts/dkms-check 6.1.0-1-amd64 %s 2>&1", dir);
	out = run_capture(cmd, &status);
	CHECK(status != 0 && strstr(out, "INFINIBAND_ADDR_TRANS"),
	      "kernel without the RDMA CM accepted: %d %s", status, out);
	free(out);

	f = fopen(path, "we");
	CHECK(f, "%s", path);
	fputs("CONFIG_MODULES=y\nCONFIG_INFINIBAND=m\nCONFIG_INFINIBAND_ADDR_TRANS=y\n", f);
	fclose(f);
	out = run_capture(cmd, &status);
	CHECK(status == 0, "kernel with the RDMA CM refused: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "scripts/dkms-check 5.4.0-1-amd64 %s 2>&1", dir);
	out = run_capture(cmd, &status);
	CHECK(status != 0 && strstr(out, "5.10"), "5.4 accepted: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "rm");
}

static const struct tap_test tests[] = {
	TAP_TEST(test_proc_net_sdp_known_sockets),
	TAP_TEST(test_proc_net_sdp_uid),
	TAP_TEST(test_proc_net_sdp_ipv6),
	TAP_TEST(test_sock_diag_known_sockets),
	TAP_TEST(test_sock_diag_many_sockets),
	TAP_TEST(test_netns_separate_listing_and_stats),
	TAP_TEST(test_counters_transfer),
	TAP_TEST(test_counters_refused),
	TAP_TEST(test_counters_abort),
	TAP_TEST(test_memory_limits),
	TAP_TEST(test_memory_cgroup),
	TAP_TEST(test_sysctl_bounds),
	TAP_TEST(test_sysctl_per_netns),
	TAP_TEST(test_sysctl_fin_timeout_applies),
	TAP_TEST(test_busy_poll_settings),
	TAP_TEST(test_busy_poll_yields_cpu),
	TAP_TEST(test_tracepoints),
	TAP_TEST(test_sdpstat_lists_sockets),
	TAP_TEST(test_sdpstat_summary),
	TAP_TEST(test_module_parameters),
	TAP_TEST(test_make_install_destdir),
	TAP_TEST(test_man_pages_render),
	TAP_TEST(test_dkms_refuses_without_rdma_cm),
};

TAP_MAIN(tests)
