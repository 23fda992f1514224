// SPDX-License-Identifier: GPL-2.0
/*
 * Resuming a connection after an outage (Documentation/networking/
 * sdp-resume.rst), so far as it is built: with net.sdp.resume on, a
 * connection both sides offer it on is named and given a secret in the
 * HelloAck, and the namespace's resume listener takes Resumes at
 * net.sdp.resume_port.  The suite plays the peer (tests/lib/peer.c) and
 * the attacker:
 *
 *   - the capability is offered only when both sides ask for it, never
 *     over iWARP (neither side asks or answers there), each
 *     connection gets its own name and secret, and the listener is there
 *     while a resumable connection is, and gone with the last one (the
 *     RDMA resource check after each case counts its CM id);
 *   - forged Resumes (a connection nobody has, a generation not due, a
 *     wrong tag, the right tag from an address the peer never announced,
 *     a malformed one) are refused with the one ResumeRefused answer and
 *     counted by reason, and the connection they name still carries
 *     data both ways;
 *   - without the capability, a connection whose QP fails (the debugfs
 *     fault injection, sdp_fault.c) ends with ECONNRESET at both ends,
 *     as before resumes existed.
 *
 * The tags are SipHash-2-4, computed here as the module does (checked
 * against the algorithm's published test vector first).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "net.h"
#include "peer.h"
#include "tap.h"
#include "util.h"

#define WAIT_MS		PEER_WAIT_MS
#define RESUME		"/proc/sys/net/sdp/resume"
#define RESUME_PORT	"/proc/sys/net/sdp/resume_port"
/* An address of the test netdev's that the peer never announces. */
#define OTHER_ADDR	"10.77.0.9"

/* ---- SipHash-2-4 (the kernel's siphash_3u64()) ------------------------ */

static uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND							\
	do {								\
		v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32); \
		v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;			\
		v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;			\
		v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32); \
	} while (0)

/* SipHash-2-4 of @n little-endian words @m (no tail) under @key. */
static uint64_t siphash(const uint8_t key[16], const uint64_t *m, int n)
{
	uint64_t k0, k1, v0, v1, v2, v3, b = (uint64_t)(n * 8) << 56;
	int i;

	memcpy(&k0, key, 8);
	memcpy(&k1, key + 8, 8);
	k0 = le64toh(k0);
	k1 = le64toh(k1);
	v0 = 0x736f6d6570736575ULL ^ k0;
	v1 = 0x646f72616e646f6dULL ^ k1;
	v2 = 0x6c7967656e657261ULL ^ k0;
	v3 = 0x7465646279746573ULL ^ k1;
	for (i = 0; i < n; i++) {
		v3 ^= m[i];
		SIPROUND;
		SIPROUND;
		v0 ^= m[i];
	}
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* tag(dir, gen) of sdp-resume.rst, "Proof of identity". */
static void resume_tag(const struct hello_ack_resume *x, uint32_t gen,
		       uint64_t dir, uint8_t tag[16])
{
	uint64_t m[3] = { (uint64_t)ntohl(x->conn_id) << 32 | gen, dir, 0 };
	uint64_t h;

	h = htole64(siphash(x->secret, m, 3));
	memcpy(tag, &h, 8);
	m[2] = 1;
	h = htole64(siphash(x->secret, m, 3));
	memcpy(tag + 8, &h, 8);
}

static void test_siphash_vector(void)
{
	/* The reference paper's key 00..0f and message 00..07. */
	uint8_t key[16];
	uint64_t m = 0x0706050403020100ULL;	/* the bytes 00..07, LE */
	int i;

	for (i = 0; i < 16; i++)
		key[i] = i;
	CHECK(siphash(key, NULL, 0) == 0x726fdb47dd0e0e31ULL,
	      "SipHash-2-4 of nothing: %#llx",
	      (unsigned long long)siphash(key, NULL, 0));
	CHECK(siphash(key, &m, 1) == 0x93f5f5799a932462ULL,
	      "SipHash-2-4 of 00..07: %#llx",
	      (unsigned long long)siphash(key, &m, 1));
}

/* ---- Settings ---------------------------------------------------------- */

static char old_resume[16], old_port[16];

static void resume_on(void)
{
	if (access(RESUME, F_OK))
		tap_skip("the module has no net.sdp.resume");
	CHECK(read_file(RESUME, old_resume, sizeof(old_resume)) >= 0 &&
	      read_file(RESUME_PORT, old_port, sizeof(old_port)) >= 0,
	      "read net.sdp.resume*");
	CHECK(write_file(RESUME, "1") == 0, "net.sdp.resume=1");
}

static void resume_restore(void)
{
	CHECK(write_file(RESUME, old_resume) == 0 &&
	      write_file(RESUME_PORT, old_port) == 0,
	      "put net.sdp.resume* back");
}

/* ---- A Resume to the module's listener -------------------------------- */

static bool cm_event(struct rdma_event_channel *ec, struct rdma_cm_event **ev)
{
	struct pollfd pfd = { .fd = ec->fd, .events = POLLIN };

	return poll(&pfd, 1, WAIT_MS) == 1 && rdma_get_cm_event(ec, ev) == 0;
}

/*
 * Send @r in a connect request to port @port of the module's address
 * (that of @p), from @src (NULL: the route's).  Returns the message id
 * of the reject's private data (MID_RESUME_REFUSED from the module's
 * resume listener; over iWARP an MPA reject, ECONNRESET, carries it
 * too), or -1: rejected without one (nobody listens there), or not
 * rejected at all (the outcome in @what).
 */
static int try_resume(const struct peer *p, const struct resume *r,
		      uint16_t port, const struct sockaddr_storage *src,
		      char *what, size_t size)
{
	struct rdma_conn_param param = {
		.private_data = r,
		.private_data_len = sizeof(*r),
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 6,
		.rnr_retry_count = 7,
	};
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct sockaddr_storage dst = p->addr;
	struct rdma_event_channel *ec;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int mid = -1;

	sockaddr_set_port(&dst, port);
	ec = rdma_create_event_channel();
	CHECK(ec, "rdma_create_event_channel: %s", strerror(errno));
	CHECK(rdma_create_id(ec, &id, NULL, RDMA_PS_TCP) == 0,
	      "rdma_create_id: %s", strerror(errno));
	CHECK(rdma_resolve_addr(id, (struct sockaddr *)src,
				(struct sockaddr *)&dst, 2000) == 0,
	      "rdma_resolve_addr: %s", strerror(errno));
	CHECK(cm_event(ec, &ev) && ev->event == RDMA_CM_EVENT_ADDR_RESOLVED,
	      "address not resolved");
	rdma_ack_cm_event(ev);
	CHECK(rdma_resolve_route(id, 2000) == 0, "rdma_resolve_route: %s",
	      strerror(errno));
	CHECK(cm_event(ec, &ev) && ev->event == RDMA_CM_EVENT_ROUTE_RESOLVED,
	      "route not resolved");
	rdma_ack_cm_event(ev);
	pd = ibv_alloc_pd(id->verbs);
	CHECK(pd, "ibv_alloc_pd: %s", strerror(errno));
	cq = ibv_create_cq(id->verbs, 4, NULL, NULL, 0);
	CHECK(cq, "ibv_create_cq: %s", strerror(errno));
	attr.send_cq = cq;
	attr.recv_cq = cq;
	CHECK(rdma_create_qp(id, pd, &attr) == 0, "rdma_create_qp: %s",
	      strerror(errno));
	CHECK(rdma_connect(id, &param) == 0, "rdma_connect: %s",
	      strerror(errno));
	CHECK(cm_event(ec, &ev), "no answer to the Resume within %d ms",
	      WAIT_MS);
	snprintf(what, size, "%s, status %d, %u bytes of private data",
		 rdma_event_str(ev->event), ev->status,
		 ev->param.conn.private_data_len);
	if (ev->event == RDMA_CM_EVENT_REJECTED && ev->param.conn.private_data &&
	    ev->param.conn.private_data_len >= sizeof(struct bsdh))
		mid = *(const uint8_t *)ev->param.conn.private_data;
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED)
		mid = -2;
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(id);
	CHECK(ibv_destroy_cq(cq) == 0, "ibv_destroy_cq");
	CHECK(ibv_dealloc_pd(pd) == 0, "ibv_dealloc_pd");
	CHECK(rdma_destroy_id(id) == 0, "rdma_destroy_id");
	rdma_destroy_event_channel(ec);
	return mid;
}

/* A Resume of the connection @p named, generation @gen, tag right. */
static struct resume resume_of(const struct peer *p, uint32_t gen)
{
	struct resume r;

	memset(&r, 0, sizeof(r));
	r.bsdh.mid = MID_RESUME;
	r.bsdh.bufs = htons(PEER_RX_BUFS);
	r.bsdh.len = htonl(sizeof(r));
	r.version = 0x30;
	r.conn_id = p->har.conn_id;
	r.gen = htonl(gen);
	r.rcvsz = htonl(PEER_BUF_SIZE);
	r.rx_seq = htobe64(0);
	resume_tag(&p->har, gen, 0, r.tag);
	return r;
}

/*
 * The resume listener is made by a work item after the first resumable
 * connection's request: wait for it to refuse a malformed Resume.
 */
static void wait_listening(const struct peer *p)
{
	long long t0 = now_ms();
	struct resume r;
	char what[96];

	memset(&r, 0, sizeof(r));
	r.bsdh.mid = MID_RESUME;
	while (try_resume(p, &r, ntohs(p->har.port), NULL, what,
			  sizeof(what)) != MID_RESUME_REFUSED) {
		CHECK(now_ms() - t0 < WAIT_MS, "no resume listener at port %u "
		      "within %d ms: %s", ntohs(p->har.port), WAIT_MS, what);
		usleep(10000);
	}
}

/*
 * A connection that offered resuming, accepted; its HelloAck checked;
 * the resume listener there.
 */
static void resumable(struct peer *p)
{
	static const uint8_t zero[16];
	char port[16];

	peer_setup_flags(p, 0, HF_RESUME);
	CHECK(p->ha.flags & HF_RESUME, "HelloAck flags %#x: no HF_RESUME",
	      p->ha.flags);
	CHECK(p->ha_len >= sizeof(p->ha) + sizeof(p->har),
	      "HelloAck of %zu bytes with HF_RESUME", p->ha_len);
	CHECK(p->har.conn_id != 0, "conn_id 0");
	CHECK(read_file(RESUME_PORT, port, sizeof(port)) >= 0 &&
	      ntohs(p->har.port) == atoi(port), "resume port %u, sysctl %s",
	      ntohs(p->har.port), port);
	CHECK(memcmp(p->har.secret, zero, sizeof(zero)) != 0,
	      "the secret is all zero");
	wait_listening(p);
}

/* The connection carries data both ways, and nothing else happened. */
static void expect_healthy(struct peer *p, const char *when)
{
	struct msg *m;

	sdp_expect_healthy(p);
	peer_send_data(p, "hello");
	peer_sends_ok(p);
	sdp_expect_data(p, "hello");
	CHECK(send(p->sock, "world", 5, MSG_NOSIGNAL) == 5, "%s: send: %s",
	      when, strerror(errno));
	m = peer_expect_msg(p, MID_DATA, p->tx_mseq);
	CHECK(m->paylen == 5 && !memcmp(m->payload, "world", 5),
	      "%s: payload \"%.*s\"", when, (int)m->paylen, m->payload);
}

/* ---- Tests -------------------------------------------------------------- */

/* The refusal counters: ResumeRefused, then one per reason. */
static const char *const refusals[] = {
	"ResumeRefused", "ResumeBadFormat", "ResumeBadConn", "ResumeBadGen",
	"ResumeBadTag", "ResumeBadAddr",
};
#define N_REFUSALS	(sizeof(refusals) / sizeof(refusals[0]))

static void refusal_counts(long long *n)
{
	unsigned int i;

	for (i = 0; i < N_REFUSALS; i++)
		n[i] = sdp_stat(refusals[i]);
}

/*
 * One Resume the listener must refuse: ResumeRefused and @counter (NULL:
 * none, a Resume that passed every check) go up by one, no other; the
 * log line @log comes; the connection of @p still works.
 */
static void forged(struct peer *p, const struct resume *r,
		   const struct sockaddr_storage *src, const char *counter,
		   const char *log, const char *case_name)
{
	long long before[N_REFUSALS], after[N_REFUSALS];
	unsigned int i;
	char what[96];
	int mid;

	refusal_counts(before);
	klog_start();
	mid = try_resume(p, r, ntohs(p->har.port), src, what, sizeof(what));
	tap_diag("%s: %s", case_name, what);
	CHECK(mid == MID_RESUME_REFUSED, "%s: answered %s (mid %d)", case_name,
	      what, mid);
	refusal_counts(after);
	for (i = 0; i < N_REFUSALS; i++)
		CHECK(after[i] == before[i] +
		      (!i || (counter && !strcmp(counter, refusals[i]))),
		      "%s: %s %lld, was %lld (counted under %s)", case_name,
		      refusals[i], after[i], before[i],
		      counter ? counter : "none but ResumeRefused");
	klog_expect(log);
	expect_healthy(p, case_name);
}

/*
 * Offered only when both ask; a name and a secret per connection; the
 * listener goes with the last resumable connection.
 */
static void test_resume_offered(void)
{
	long long offered = sdp_stat("ResumeOffered");
	struct peer a, b;
	struct resume r;

	resume_on();
	/* A Hello without the flag: today's HelloAck. */
	peer_setup(&a, 0);
	CHECK(!(a.ha.flags & HF_RESUME), "HF_RESUME to a peer that did not ask");
	peer_teardown(&a);

	if (test_device_iwarp()) {
		peer_setup_flags(&a, 0, HF_RESUME);
		CHECK(!(a.ha.flags & HF_RESUME) && a.ha_len >= sizeof(a.ha),
		      "HF_RESUME offered over iWARP");
		peer_teardown(&a);
		CHECK(sdp_stat("ResumeOffered") == offered,
		      "ResumeOffered %lld over iWARP, was %lld",
		      sdp_stat("ResumeOffered"), offered);
		resume_restore();
		return;
	}
	resumable(&a);
	resumable(&b);
	CHECK(sdp_stat("ResumeOffered") == offered + 2,
	      "ResumeOffered %lld, was %lld", sdp_stat("ResumeOffered"),
	      offered);
	CHECK(a.har.conn_id != b.har.conn_id, "two connections, one conn_id");
	CHECK(memcmp(a.har.secret, b.har.secret, 16) != 0,
	      "two connections, one secret");
	/* The listener answers while they are there. */
	r = resume_of(&a, 2);
	forged(&a, &r, NULL, "ResumeBadGen",
	       "Resume refused: not the generation due", "two connections");
	peer_teardown(&b);
	forged(&a, &r, NULL, "ResumeBadGen",
	       "Resume refused: not the generation due", "one of two left");
	/* A closed connection's name is forgotten with its socket. */
	r = resume_of(&b, 1);
	forged(&a, &r, NULL, "ResumeBadConn",
	       "Resume refused: no such connection", "a closed connection");
	/* peer_teardown() checks that its CM id is gone with the last. */
	peer_teardown(&a);

	/* Off on the module's side: not offered, whatever the peer asks. */
	CHECK(write_file(RESUME, "0") == 0, "net.sdp.resume=0");
	peer_setup_flags(&a, 0, HF_RESUME);
	CHECK(!(a.ha.flags & HF_RESUME) && a.ha_len >= sizeof(a.ha),
	      "HF_RESUME offered with net.sdp.resume=0");
	peer_teardown(&a);
	CHECK(sdp_stat("ResumeOffered") == offered + 2,
	      "ResumeOffered %lld with resume off", sdp_stat("ResumeOffered"));
	resume_restore();
}

/*
 * The flags of the Hello the module sends when a socket connects to a
 * user-space CM listener here, which then rejects the request.
 */
static uint8_t module_hello_flags(void)
{
	struct rdma_event_channel *ec = rdma_create_event_channel();
	struct sockaddr_storage addr;
	struct rdma_cm_id *lid = NULL;
	struct rdma_cm_event *ev;
	const struct hello *hh;
	uint8_t flags;
	int fd;

	CHECK(ec, "rdma_create_event_channel: %s", strerror(errno));
	CHECK(rdma_create_id(ec, &lid, NULL, RDMA_PS_TCP) == 0,
	      "rdma_create_id: %s", strerror(errno));
	test_sockaddr(&addr, 0);
	CHECK(rdma_bind_addr(lid, (struct sockaddr *)&addr) == 0 &&
	      rdma_listen(lid, 1) == 0, "rdma listener: %s", strerror(errno));
	sockaddr_set_port(&addr, ntohs(rdma_get_src_port(lid)));
	fd = CHECK_OK(test_socket(SOCK_NONBLOCK));
	CHECK(connect(fd, (struct sockaddr *)&addr, sockaddr_len(&addr)) < 0 &&
	      errno == EINPROGRESS, "connect: %s", strerror(errno));
	CHECK(cm_event(ec, &ev) && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST,
	      "no connect request from the module within %d ms", WAIT_MS);
	hh = ev->param.conn.private_data;
	CHECK(hh && ev->param.conn.private_data_len >= sizeof(*hh) &&
	      hh->bsdh.mid == MID_HELLO, "a request without a Hello (%u bytes)",
	      ev->param.conn.private_data_len);
	flags = hh->flags;
	CHECK(rdma_reject(ev->id, NULL, 0) == 0, "rdma_reject: %s",
	      strerror(errno));
	rdma_destroy_id(ev->id);
	rdma_ack_cm_event(ev);
	CHECK(wait_fd(fd, POLLOUT, WAIT_MS) & (POLLOUT | POLLERR),
	      "the refused connect() not over within %d ms", WAIT_MS);
	CHECK(sockopt_get(fd, SOL_SOCKET, SO_ERROR) == ECONNREFUSED,
	      "a rejected connect(): %s, expected ECONNREFUSED",
	      strerror(sockopt_get(fd, SOL_SOCKET, SO_ERROR)));
	close(fd);
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ec);
	return flags;
}

/*
 * The active side asks for the capability with net.sdp.resume on, but
 * not over iWARP: there a Send completes once the local TCP took it, so
 * the stream positions a resume rewinds to cannot be trusted
 * (sdp-resume.rst, "Stream positions").  The passive side's answer over
 * iWARP is in test_resume_offered.
 */
static void test_resume_hello_flag(void)
{
	uint8_t flags;

	if (!test_is_sdp())
		tap_skip("SDP only: the module's Hello");
	resume_on();
	flags = module_hello_flags();
	CHECK(!(flags & HF_RESUME) == test_device_iwarp(),
	      "net.sdp.resume=1 on %s: Hello flags %#x", test_device_iwarp() ?
	      "an iWARP device" : "InfiniBand or RoCE", flags);
	CHECK(write_file(RESUME, "0") == 0, "net.sdp.resume=0");
	flags = module_hello_flags();
	CHECK(!(flags & HF_RESUME), "net.sdp.resume=0: Hello flags %#x", flags);
	resume_restore();
}

/* The rest needs a resumable connection, which iWARP does not make. */
static void resumable_device(void)
{
	if (test_device_iwarp())
		tap_skip("no resumable connection over iWARP (test_resume_offered checks that)");
}

static void test_resume_forged_refused(void)
{
	struct sockaddr_storage other;
	struct resume r;
	struct peer p;

	resumable_device();
	resume_on();
	resumable(&p);

	r = resume_of(&p, 1);
	r.conn_id ^= htonl(0x5a5a5a5a);
	forged(&p, &r, NULL, "ResumeBadConn", "Resume refused: no such connection",
	       "a connection nobody has");

	r = resume_of(&p, 2);
	forged(&p, &r, NULL, "ResumeBadGen",
	       "Resume refused: not the generation due", "generation 2 first");

	r = resume_of(&p, 1);
	r.tag[15] ^= 1;
	forged(&p, &r, NULL, "ResumeBadTag", "Resume refused: wrong tag",
	       "a tag one bit off");

	r = resume_of(&p, 1);
	memset(r.tag, 0, sizeof(r.tag));
	forged(&p, &r, NULL, "ResumeBadTag", "Resume refused: wrong tag",
	       "a zero tag");

	r = resume_of(&p, 1);
	r.version = 0x20;
	forged(&p, &r, NULL, "ResumeBadFormat", "Resume refused: malformed",
	       "version 2.0");

	r = resume_of(&p, 1);
	r.bsdh.mid = MID_HELLO;
	forged(&p, &r, NULL, "ResumeBadFormat", "Resume refused: malformed",
	       "a Hello at the resume port");

	/*
	 * The right tag, from an address the peer never announced: an
	 * address of our own on the test netdev (not on a real host's).
	 */
	if (!test_host_mode() && p.addr.ss_family == AF_INET) {
		CHECK(run((const char *const[]){ "ip", "addr", "add",
						OTHER_ADDR "/32", "dev",
						TEST_NETDEV(), NULL }) == 0,
		      "ip addr add " OTHER_ADDR);
		CHECK(make_sockaddr(&other, OTHER_ADDR, 0), OTHER_ADDR);
		r = resume_of(&p, 1);
		forged(&p, &r, &other, "ResumeBadAddr",
		       "Resume refused: from an address the peer did not announce",
		       "the right tag from an unannounced address");
		CHECK(run((const char *const[]){ "ip", "addr", "del",
						OTHER_ADDR "/32", "dev",
						TEST_NETDEV(), NULL }) == 0,
		      "ip addr del " OTHER_ADDR);
	} else {
		tap_diag("the unannounced address case needs IPv4 and a guest");
	}
	/*
	 * Everything right: no connection suspends yet, so refused too, but
	 * under no reason (the tag was taken).
	 */
	r = resume_of(&p, 1);
	forged(&p, &r, NULL, NULL, "Resume refused: no connection suspends yet",
	       "a Resume that passes every check");
	orderly_close(&p);
	peer_teardown(&p);
	resume_restore();
}

static bool listen_failed(void *arg)
{
	return sdp_stat("ResumeListenFailed") > *(long long *)arg;
}

/*
 * The resume listener's port is taken (an SDP listener of ours holds
 * it): the connection that had it made was offered the capability, the
 * failure is counted and logged, the next connection within 10 s is not
 * offered it (no retry on each request), and one after that is, with
 * the port free again, and gets its listener.
 */
static void test_resume_listen_failed(void)
{
	long long failed = sdp_stat("ResumeListenFailed"), offered;
	struct sockaddr_storage sq;
	struct peer a, b;
	char port[16];
	long long t;
	int squat;

	resumable_device();
	resume_on();
	squat = net_listener(&sq, 1, 0);
	snprintf(port, sizeof(port), "%u", sockaddr_port(&sq));
	CHECK(write_file(RESUME_PORT, port) == 0, "net.sdp.resume_port=%s",
	      port);
	klog_start();
	offered = sdp_stat("ResumeOffered");
	peer_setup_flags(&a, 0, HF_RESUME);
	CHECK(a.ha.flags & HF_RESUME, "the first connection was not offered "
	      "the capability while its listener was being made");
	CHECK(ntohs(a.har.port) == sockaddr_port(&sq), "port %u announced, "
	      "net.sdp.resume_port %s", ntohs(a.har.port), port);
	CHECK(wait_until(listen_failed, &failed, WAIT_MS),
	      "ResumeListenFailed %lld, was %lld, with port %s taken",
	      sdp_stat("ResumeListenFailed"), failed, port);
	t = now_ms();
	klog_expect("resume listener at port");
	peer_setup_flags(&b, 0, HF_RESUME);
	if (now_ms() - t < 10000) {
		CHECK(!(b.ha.flags & HF_RESUME),
		      "offered again %lld ms after the listener failed",
		      now_ms() - t);
		CHECK(sdp_stat("ResumeOffered") == offered + 1,
		      "ResumeOffered %lld, was %lld",
		      sdp_stat("ResumeOffered"), offered);
		/* ... nor tried to listen again. */
		CHECK(sdp_stat("ResumeListenFailed") == failed + 1,
		      "ResumeListenFailed %lld, was %lld: tried again",
		      sdp_stat("ResumeListenFailed"), failed);
	}
	peer_teardown(&b);
	peer_teardown(&a);
	CHECK(close(squat) == 0, "close: %s", strerror(errno));
	/* After 10 s the next request tries again, and the port is free. */
	if (now_ms() - t < 10500)
		usleep((useconds_t)(10500 - (now_ms() - t)) * 1000);
	resumable(&b);
	CHECK(sdp_stat("ResumeListenFailed") == failed + 1,
	      "ResumeListenFailed %lld, was %lld, with the port free",
	      sdp_stat("ResumeListenFailed"), failed);
	peer_teardown(&b);
	resume_restore();
}

/* ---- A failed QP --------------------------------------------------- */

#define QP_ERROR	"/sys/kernel/debug/sdp/qp_error"

/* Fail the QP of the connection at local port @port (sdp_fault.c). */
static int qp_error(unsigned int port)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", port);
	return write_file(QP_ERROR, v);
}

static unsigned int local_port(int fd)
{
	struct sockaddr_storage ss;

	local_addr(fd, &ss);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* The connection of @fd ended with a reset: the socket says ECONNRESET. */
static void expect_reset(const char *who, int fd, long long t0)
{
	char b;
	int ev = wait_fd(fd, POLLIN, WAIT_MS);

	CHECK(ev & (POLLERR | POLLHUP),
	      "%s: no reset within %d ms of the QP failing (poll %#x)", who,
	      WAIT_MS, ev);
	tap_diag("%s: reset %lld ms after the QP failed", who, now_ms() - t0);
	CHECK_ERRNO(recv(fd, &b, 1, MSG_DONTWAIT), ECONNRESET);
}

/*
 * Without the resume capability (net.sdp.resume 0, the default), a
 * connection whose QP fails ends as it did before resumes existed: both
 * sockets get ECONNRESET, as TCP's do from a reset, within seconds, and
 * the QP is gone from the fault injection's view (an aborted connection
 * is not live).  Over InfiniBand and RoCE the end whose QP failed finds
 * its receive buffers flushed with nothing to explain it, aborts after
 * the grace a CM event has (1 s) and disconnects (AbortOnCqError); the
 * peer, disconnected without DisConn or AbortConn, aborts too.  Over
 * iWARP the failed QP's TCP stream closes with it, so both ends are
 * disconnected at once (AbortOnCmDisconnect).  The fault injection
 * itself: a port with no connection, 0 and 65536 are refused.
 */
static void test_qp_error_not_resumable(void)
{
	const char *why = test_device_iwarp() ? "AbortOnCmDisconnect" :
						"AbortOnCqError";
	long long cq0, t0;
	unsigned int port;
	int c, s;

	if (access(QP_ERROR, W_OK))
		tap_skip("no %s (debugfs)", QP_ERROR);
	if (access(RESUME, F_OK) == 0)
		CHECK(write_file(RESUME, "0") == 0, "net.sdp.resume=0");
	net_pair(&c, &s);
	CHECK(send(c, "ab", 2, 0) == 2 && recv(s, (char[2]){ 0 }, 2,
						 MSG_WAITALL) == 2,
	      "no data before the failure: %s", strerror(errno));
	port = local_port(c);
	CHECK(qp_error(1) == -ENOENT,
	      "port 1, without a connection, was not refused");
	CHECK(qp_error(0) == -EINVAL && qp_error(65536) == -EINVAL,
	      "ports 0 and 65536 were not refused");
	cq0 = sdp_stat(why);
	t0 = now_ms();
	CHECK(qp_error(port) == 0, "qp_error %u: %s", port, strerror(errno));
	expect_reset("the end whose QP failed", c, t0);
	expect_reset("its peer", s, t0);
	CHECK(sdp_stat(why) - cq0 >= 1, "%s +%lld", why, sdp_stat(why) - cq0);
	CHECK(qp_error(port) == -ENOENT,
	      "the failed connection's QP is still there");
	close(c);
	close(s);
}

static const struct tap_test tests[] = {
	TAP_TEST(test_siphash_vector),
	TAP_TEST(test_resume_hello_flag),
	TAP_TEST(test_resume_offered),
	TAP_TEST(test_resume_forged_refused),
	TAP_TEST(test_resume_listen_failed),
	TAP_TEST(test_qp_error_not_resumable),
};

/*
 * Each case runs in a child of its own (tap_main()): a case that failed
 * leaves net.sdp.resume as it set it, and maybe its address; put back
 * here, from what they were before any case.
 */
int main(int argc, char **argv)
{
	char resume[16] = "", port[16] = "";
	int ret;

	if (read_file(RESUME, resume, sizeof(resume)) < 0 ||
	    read_file(RESUME_PORT, port, sizeof(port)) < 0)
		resume[0] = port[0] = 0;
	ret = peer_tap_main(tests, sizeof(tests) / sizeof(tests[0]), argc,
			    argv);
	if (resume[0] && port[0]) {
		write_file(RESUME, resume);
		write_file(RESUME_PORT, port);
	}
	if (!test_host_mode())
		run((const char *const[]){ "ip", "addr", "flush", "dev",
					   TEST_NETDEV(), "to",
					   OTHER_ADDR "/32", NULL });
	return ret;
}
