// SPDX-License-Identifier: GPL-2.0
/*
 * The misbehaving SDP peer of the test suites: see peer.h.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "ops.h"
#include "peer.h"
#include "tap.h"

/* ---- Kernel log ---------------------------------------------------- */

static struct {
	int fd;
	char text[256 * 1024];
	size_t len;
} klog = { .fd = -1 };

void klog_start(void)
{
	klog.fd = kmsg_open();
	CHECK(klog.fd >= 0, "/dev/kmsg: %s", strerror(errno));
	klog.len = 0;
	klog.text[0] = '\0';
}

/* kmsg_read(): append a record's text to the collected log. */
static bool klog_append(void *arg, const char *text, size_t tl)
{
	(void)arg;
	if (klog.len + tl + 2 <= sizeof(klog.text)) {
		memcpy(klog.text + klog.len, text, tl);
		klog.len += tl;
		klog.text[klog.len++] = '\n';
		klog.text[klog.len] = '\0';
	}
	return false;
}

/* Append the message text of every record logged since. */
static void klog_read(void)
{
	kmsg_read(klog.fd, klog_append, NULL);
}

bool klog_has(const char *needle)
{
	klog_read();
	return strstr(klog.text, needle) != NULL;
}

void klog_show(void)
{
	const char *line = klog.text;

	klog_read();
	while (*line) {
		size_t l = strcspn(line, "\n");

		if (!strncmp(line, "sdp", 3) || strstr(line, "suppressed"))
			tap_diag("kernel: %.*s", (int)l, line);
		line += l + (line[l] == '\n');
	}
}

void klog_expect(const char *needle)
{
	if (!klog_has(needle)) {
		klog_show();
		CHECK(false, "no kernel log line with \"%s\"", needle);
	}
}

/* Nothing in the log should say a completion failed. */
static void klog_no_completion_errors(void)
{
	if (klog_has("completion error")) {
		klog_show();
		CHECK(false, "the module logged a completion error");
	}
}

/* ---- The peer: CM events and completions --------------------------- */

static bool cm_error_event(enum rdma_cm_event_type e)
{
	return e == RDMA_CM_EVENT_ADDR_ERROR ||
	       e == RDMA_CM_EVENT_ROUTE_ERROR ||
	       e == RDMA_CM_EVENT_CONNECT_ERROR ||
	       e == RDMA_CM_EVENT_UNREACHABLE ||
	       e == RDMA_CM_EVENT_REJECTED ||
	       e == RDMA_CM_EVENT_DEVICE_REMOVAL;
}

/* Take every pending CM event (the channel's fd is non-blocking). */
static void peer_cm_drain(struct peer *p)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(p->ec, &ev) == 0) {
		if ((unsigned int)ev->event < 32)
			p->seen[ev->event]++;
		if (ev->event == RDMA_CM_EVENT_ESTABLISHED ||
		    ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE) {
			const void *pd = ev->param.conn.private_data;
			size_t len = ev->param.conn.private_data_len;

			p->ha_len = len;
			if (pd)
				memcpy(&p->ha, pd, len < sizeof(p->ha) ?
				       len : sizeof(p->ha));
			if (pd && len >= sizeof(p->ha) + sizeof(p->har))
				memcpy(&p->har,
				       (const uint8_t *)pd + sizeof(p->ha),
				       sizeof(p->har));
		}
		if (cm_error_event(ev->event) || ev->status)
			tap_diag("CM event %s, status %d",
				 rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
	}
}

static int peer_post_recv(struct peer *p, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(p->buf + (size_t)i * PEER_BUF_SIZE),
		.length = PEER_BUF_SIZE,
		.lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = WR_RECV | i,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	return ibv_post_recv(p->qpp, &wr, &bad);
}

static void peer_record(struct peer *p, unsigned int i,
			const struct ibv_wc *wc)
{
	const uint8_t *data = p->buf + (size_t)i * PEER_BUF_SIZE;
	uint32_t byte_len = wc->byte_len;
	struct msg *m;
	struct bsdh h;

	if (p->rx_n >= PEER_MAX_MSGS) {
		p->rx_n++;
		return;
	}
	m = &p->rx[p->rx_n++];
	memset(m, 0, sizeof(*m));
	m->byte_len = byte_len;
	/*
	 * Soft-RoCE in Linux 6.1 hands user space the kernel's flag
	 * (IB_WC_WITH_INVALIDATE, 1 << 2), which reads as IBV_WC_IP_CSUM_OK;
	 * that flag has no meaning on an RC receive, so take it as well.
	 */
	if (wc->wc_flags & (IBV_WC_WITH_INV | IBV_WC_IP_CSUM_OK)) {
		m->inv = true;
		m->inv_rkey = wc->invalidated_rkey;
	}
	if (byte_len < sizeof(h)) {
		m->mid = byte_len ? data[0] : 0;
		return;
	}
	memcpy(&h, data, sizeof(h));
	m->mid = h.mid;
	m->flags = h.flags;
	m->bufs = ntohs(h.bufs);
	m->len = ntohl(h.len);
	m->mseq = ntohl(h.mseq);
	m->mseq_ack = ntohl(h.mseq_ack);
	m->paylen = byte_len - sizeof(h);
	if (m->paylen > sizeof(m->payload))
		m->paylen = sizeof(m->payload);
	memcpy(m->payload, data + sizeof(h), m->paylen);
	p->rx_mseq = m->mseq;
}

/*
 * The message just recorded is a ping: count it, and answer it with a
 * credit update if our Hello offered that (HF_PING).
 */
static void peer_answer_ping(struct peer *p)
{
	if (p->rx_n > PEER_MAX_MSGS || !(p->rx[p->rx_n - 1].flags & BSDH_PING))
		return;
	p->pings++;
	if (p->hello_flags & HF_PING)
		peer_send(p, MID_DATA, NULL, 0);
}

/* Handle every completion there is; receive buffers are reposted. */
static void peer_poll_cq(struct peer *p)
{
	struct ibv_wc wc[16];
	int n, i;

	while ((n = ibv_poll_cq(p->cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id & WR_RECV) {
				unsigned int b = wc[i].wr_id & 0xffff;

				if (wc[i].status == IBV_WC_SUCCESS) {
					peer_record(p, b, &wc[i]);
					/* Fails only once the QP is gone. */
					peer_post_recv(p, b);
					peer_answer_ping(p);
				} else if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
					p->rx_flushed++;
				} else {
					p->rx_errors++;
					tap_diag("peer receive completion: %s",
						 ibv_wc_status_str(wc[i].status));
				}
			} else {
				p->tx_done++;
				if (wc[i].status != IBV_WC_SUCCESS) {
					p->tx_errors++;
					p->tx_status = wc[i].status;
				}
			}
		}
	}
	CHECK(n == 0, "ibv_poll_cq: %d", n);
}

void peer_pump(struct peer *p, int ms)
{
	struct pollfd pfd = { .fd = p->ec->fd, .events = POLLIN };

	if (ms)
		poll(&pfd, 1, ms);
	peer_cm_drain(p);
	if (p->qp)
		peer_poll_cq(p);
}

void peer_idle(struct peer *p, int ms)
{
	long long end = now_ms() + ms;

	while (now_ms() < end)
		peer_pump(p, 2);
}

void peer_wait_cm(struct peer *p, enum rdma_cm_event_type want)
{
	bool ok;
	int e;

	ok = PEER_WAIT(p, p->seen[want] > 0, PEER_WAIT_MS);
	for (e = 0; e < 32; e++)
		CHECK(!p->seen[e] || !cm_error_event(e),
		      "CM event %s while waiting for %s",
		      rdma_event_str(e), rdma_event_str(want));
	CHECK(ok, "no %s within %d ms", rdma_event_str(want), PEER_WAIT_MS);
}

/* ---- The peer: sending ----------------------------------------------- */

void peer_post_op(struct peer *p, enum ibv_wr_opcode op, void *addr,
		  size_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr,
		.length = len,
		.lkey = p->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = p->tx_slot,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	if (op == IBV_WR_SEND && p->inv) {
		peer_wr_send_inv(&wr, p->inv_rkey);
		p->inv = false;
	}
	CHECK(ibv_post_send(p->qpp, &wr, &bad) == 0, "ibv_post_send: %s",
	      strerror(errno));
	p->tx_slot++;
	p->tx_posted++;
}

/* Post @len bytes at @addr as one SEND. */
static void peer_post(struct peer *p, void *addr, size_t len)
{
	peer_post_op(p, IBV_WR_SEND, addr, len, 0, 0);
}

void peer_send_raw(struct peer *p, uint8_t mid, uint32_t len,
		   uint32_t mseq, const void *payload, size_t paylen,
		   size_t wire_len)
{
	uint8_t *slot = p->buf + (size_t)PEER_RX_BUFS * PEER_BUF_SIZE +
			(size_t)(p->tx_slot % PEER_TX_SLOTS) * PEER_TX_SLOT;
	struct bsdh h = {
		.mid = mid,
		.flags = p->tx_flags,
		.bufs = htons(p->adv_bufs ?: PEER_RX_BUFS),
		.len = htonl(len),
		.mseq = htonl(mseq),
		.mseq_ack = htonl(p->rx_mseq),
	};

	p->tx_flags = 0;
	CHECK(sizeof(h) + paylen <= PEER_TX_SLOT && wire_len <= PEER_TX_SLOT,
	      "message too big for a send slot");
	CHECK(p->tx_posted - p->tx_done < PEER_TX_SLOTS,
	      "too many sends outstanding");
	memset(slot, 0, PEER_TX_SLOT);
	memcpy(slot, &h, sizeof(h));
	if (paylen)
		memcpy(slot + sizeof(h), payload, paylen);
	peer_post(p, slot, wire_len);
	p->tx_mseq = mseq;
}

void peer_send_big(struct peer *p, size_t size)
{
	uint8_t *big = peer_big(p);
	struct bsdh h = {
		.mid = MID_DATA,
		.bufs = htons(p->adv_bufs ?: PEER_RX_BUFS),
		.len = htonl(size),
		.mseq = htonl(p->tx_mseq + 1),
		.mseq_ack = htonl(p->rx_mseq),
	};

	CHECK(size <= PEER_BIG, "message too big");
	memset(big, 0, size);
	memcpy(big, &h, sizeof(h));
	peer_post(p, big, size);
	p->tx_mseq++;
}

void peer_send(struct peer *p, uint8_t mid, const void *payload,
	       size_t paylen)
{
	size_t len = sizeof(struct bsdh) + paylen;

	peer_send_raw(p, mid, len, p->tx_mseq + 1, payload, paylen, len);
}

void peer_wr_send_inv(struct ibv_send_wr *wr, uint32_t rkey)
{
	wr->opcode = IBV_WR_SEND_WITH_INV;
	wr->invalidate_rkey = rkey;
	/*
	 * Soft-iWARP's user-space provider sends wr.rdma.rkey as the STag to
	 * invalidate (rdma-core's libsiw, push_send_wqe()); every other
	 * provider ignores it for a Send.
	 */
	wr->wr.rdma.rkey = rkey;
}

void peer_send_data(struct peer *p, const char *text)
{
	peer_send(p, MID_DATA, text, strlen(text));
}

void peer_sends_ok(struct peer *p)
{
	CHECK(PEER_WAIT(p, p->tx_done == p->tx_posted, PEER_WAIT_MS),
	      "%u of %u sends completed within %d ms", p->tx_done,
	      p->tx_posted, PEER_WAIT_MS);
	CHECK(!p->tx_errors, "%u sends failed, last with %s", p->tx_errors,
	      ibv_wc_status_str(p->tx_status));
}

struct msg *peer_next_msg(struct peer *p)
{
	if (!PEER_WAIT(p, p->rx_n > p->rx_read, PEER_WAIT_MS))
		return NULL;
	CHECK(p->rx_read < PEER_MAX_MSGS, "too many messages received");
	return &p->rx[p->rx_read++];
}

const char *mid_name(uint8_t mid)
{
	switch (mid) {
	case MID_HELLO: return "Hello";
	case MID_HELLO_ACK: return "HelloAck";
	case MID_DISCONN: return "DisConn";
	case MID_ABORT: return "AbortConn";
	case MID_DATA: return "Data";
	case MID_SENDSM: return "SendSM";
	case MID_RDMA_RD_COMPL: return "RdmaRdCompl";
	case MID_SRCAVAIL_CANCEL: return "SrcAvailCancel";
	case MID_SRCAVAIL: return "SrcAvail";
	case MID_CHRCVBUF_ACK: return "ChRcvBufAck";
	default: return "?";
	}
}

bool is_credit_update(const struct msg *m)
{
	return m->mid == MID_DATA && m->byte_len == sizeof(struct bsdh) &&
	       m->len == m->byte_len;
}

struct msg *peer_expect_msg(struct peer *p, int want,
			    uint32_t mseq_ack)
{
	uint8_t mid = want == MID_UPDATE ? MID_DATA : want;
	struct msg *m;

	for (;;) {
		m = peer_next_msg(p);
		if (!m)		/* what the module's side was waiting for */
			diag_sdp_sockets();
		CHECK(m, "no %s from the module within %d ms",
		      want == MID_UPDATE ? "credit update" : mid_name(mid),
		      PEER_WAIT_MS);
		CHECK(m->mseq == p->rx_read, "%s: mseq %u after %u messages",
		      mid_name(m->mid), m->mseq, p->rx_read - 1);
		if (want == MID_UPDATE || !is_credit_update(m))
			break;
	}
	CHECK(want != MID_UPDATE || is_credit_update(m),
	      "mid %#x, %u bytes: not a credit update", m->mid, m->byte_len);
	CHECK(m->mid == mid, "got mid %#x (%s), expected %#x (%s)", m->mid,
	      mid_name(m->mid), mid, mid_name(mid));
	CHECK(m->byte_len >= sizeof(struct bsdh) && m->len == m->byte_len,
	      "%s: BSDH len %u, %u bytes arrived", mid_name(mid), m->len,
	      m->byte_len);
	CHECK(m->mseq_ack == mseq_ack, "%s: mseq_ack %u, expected %u",
	      mid_name(mid), m->mseq_ack, mseq_ack);
	CHECK(m->flags == 0, "%s: flags %#x", mid_name(mid), m->flags);
	return m;
}

void peer_skip_updates(struct peer *p)
{
	struct msg *m;

	for (; p->rx_read < p->rx_n && p->rx_read < PEER_MAX_MSGS; p->rx_read++) {
		m = &p->rx[p->rx_read];
		CHECK(is_credit_update(m) && m->mseq == p->rx_read + 1,
		      "message %u from the module: mid %#x, %u bytes, mseq %u",
		      p->rx_read + 1, m->mid, m->byte_len, m->mseq);
	}
}

/* ---- Setting up and tearing down -------------------------------------- */

/* A valid Hello, as the module would send it. */
static void hello_init(struct hello *hh, const struct peer *p)
{
	memset(hh, 0, sizeof(*hh));
	hh->bsdh.mid = MID_HELLO;
	hh->bsdh.bufs = htons(PEER_RX_BUFS);
	hh->bsdh.len = htonl(sizeof(*hh));
	hh->version = 0x30;
	hh->ipv = p->addr.ss_family == AF_INET6 ? 0x60 : 0x40;
	hh->flags = p->hello_flags;
	hh->max_adverts = 1;
	hh->desremrcvsz = htonl(PEER_BUF_SIZE);
	hh->localrcvsz = htonl(PEER_BUF_SIZE);
	hh->port = rdma_get_src_port(p->id);
}

void peer_start(struct peer *p, void (*mangle)(struct hello *hh))
{
	struct rdma_conn_param param = {};
	struct ibv_qp_init_attr attr = {};
	struct sockaddr_storage src;
	struct hello hh;
	unsigned int i;
	int fl;

	p->ec = rdma_create_event_channel();
	CHECK(p->ec, "rdma_create_event_channel: %s", strerror(errno));
	fl = fcntl(p->ec->fd, F_GETFL);
	CHECK(fl >= 0 && fcntl(p->ec->fd, F_SETFL, fl | O_NONBLOCK) == 0,
	      "event channel O_NONBLOCK: %s", strerror(errno));
	CHECK(rdma_create_id(p->ec, &p->id, p, RDMA_PS_TCP) == 0,
	      "rdma_create_id: %s", strerror(errno));
	test_sockaddr(&src, 0);
	CHECK(rdma_resolve_addr(p->id, (struct sockaddr *)&src,
				(struct sockaddr *)&p->addr, 2000) == 0,
	      "rdma_resolve_addr: %s", strerror(errno));
	peer_wait_cm(p, RDMA_CM_EVENT_ADDR_RESOLVED);
	CHECK(rdma_resolve_route(p->id, 2000) == 0, "rdma_resolve_route: %s",
	      strerror(errno));
	peer_wait_cm(p, RDMA_CM_EVENT_ROUTE_RESOLVED);
	CHECK(p->id->verbs, "no device after route resolution");

	p->pd = ibv_alloc_pd(p->id->verbs);
	CHECK(p->pd, "ibv_alloc_pd: %s", strerror(errno));
	p->cq = ibv_create_cq(p->id->verbs, PEER_RX_BUFS + PEER_TX_SLOTS + 8,
			      NULL, NULL, 0);
	CHECK(p->cq, "ibv_create_cq: %s", strerror(errno));
	attr.send_cq = p->cq;
	attr.recv_cq = p->cq;
	attr.cap.max_send_wr = PEER_TX_SLOTS;
	attr.cap.max_recv_wr = PEER_RX_BUFS;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.qp_type = IBV_QPT_RC;
	if (p->manual) {
		/*
		 * A QP of our own: librdmacm then leaves the transitions and
		 * the RTU (rdma_establish()) to us, so that messages can go
		 * before the module's side is established.
		 */
		struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT };
		int mask;

		p->qpp = ibv_create_qp(p->pd, &attr);
		CHECK(p->qpp, "ibv_create_qp: %s", strerror(errno));
		CHECK(rdma_init_qp_attr(p->id, &qa, &mask) == 0 &&
		      ibv_modify_qp(p->qpp, &qa, mask) == 0,
		      "QP to INIT: %s", strerror(errno));
	} else {
		CHECK(rdma_create_qp(p->id, p->pd, &attr) == 0,
		      "rdma_create_qp: %s", strerror(errno));
		p->qpp = p->id->qp;
	}
	p->qp = true;
	p->buf_len = (size_t)PEER_RX_BUFS * PEER_BUF_SIZE +
		     (size_t)PEER_TX_SLOTS * PEER_TX_SLOT + PEER_BIG;
	p->buf = aligned_alloc(4096, p->buf_len);
	CHECK(p->buf, "out of memory");
	memset(p->buf, 0, p->buf_len);
	p->mr = ibv_reg_mr(p->pd, p->buf, p->buf_len, IBV_ACCESS_LOCAL_WRITE);
	CHECK(p->mr, "ibv_reg_mr: %s", strerror(errno));
	for (i = 0; i < PEER_RX_BUFS && !p->no_recv; i++)
		CHECK(peer_post_recv(p, i) == 0, "ibv_post_recv: %s",
		      strerror(errno));

	hello_init(&hh, p);
	if (mangle)
		mangle(&hh);
	param.private_data = &hh;
	param.private_data_len = sizeof(hh);
	param.responder_resources = 1;
	param.initiator_depth = 1;
	/*
	 * The module's QP takes its retry count from our REQ: 6, as the
	 * module's own (rxe retries for ever with 7).
	 */
	param.retry_count = 6;
	/* 7: retry forever while the module has no receive buffer posted. */
	param.rnr_retry_count = 7;
	if (p->manual)
		param.qp_num = p->qpp->qp_num;
	CHECK(rdma_connect(p->id, &param) == 0, "rdma_connect: %s",
	      strerror(errno));
}

void peer_rts(struct peer *p)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RTR };
	int mask;

	peer_wait_cm(p, RDMA_CM_EVENT_CONNECT_RESPONSE);
	CHECK(rdma_init_qp_attr(p->id, &qa, &mask) == 0 &&
	      ibv_modify_qp(p->qpp, &qa, mask) == 0, "QP to RTR: %s",
	      strerror(errno));
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTS;
	CHECK(rdma_init_qp_attr(p->id, &qa, &mask) == 0 &&
	      ibv_modify_qp(p->qpp, &qa, mask) == 0, "QP to RTS: %s",
	      strerror(errno));
}

void peer_established(struct peer *p)
{
	peer_wait_cm(p, RDMA_CM_EVENT_ESTABLISHED);

	CHECK(p->ha_len >= sizeof(p->ha), "HelloAck of %zu bytes", p->ha_len);
	CHECK(p->ha.bsdh.mid == MID_HELLO_ACK, "HelloAck mid %#x",
	      p->ha.bsdh.mid);
	CHECK(p->ha.version >> 4 == 3, "HelloAck version %#x", p->ha.version);
	CHECK(p->ha.ipv == (p->addr.ss_family == AF_INET6 ? 0x60 : 0x40),
	      "HelloAck ipv %#x", p->ha.ipv);
	CHECK(ntohl(p->ha.bsdh.len) == sizeof(p->ha) +
	      (p->ha.flags & HF_RESUME ? sizeof(p->har) : 0),
	      "HelloAck len %u, flags %#x", ntohl(p->ha.bsdh.len),
	      p->ha.flags);
	CHECK(!p->ha.bsdh.mseq && !p->ha.bsdh.mseq_ack,
	      "HelloAck mseq %u mseq_ack %u", ntohl(p->ha.bsdh.mseq),
	      ntohl(p->ha.bsdh.mseq_ack));
	CHECK(ntohl(p->ha.actrcvsz) >= 1024, "HelloAck actrcvsz %u",
	      ntohl(p->ha.actrcvsz));
	p->credits = ntohs(p->ha.bsdh.bufs);
	CHECK(p->credits > 0, "HelloAck grants no credits");
	if (test_provider_siw() && !p->silent)
		peer_send_rtr(p);
}

/*
 * Over iWARP the active side sends first, as the module does: an empty
 * Send, after which the passive side may send (MPA lets it only then;
 * sdp.rst, "iWARP").  No BSDH, no mseq.
 */
void peer_send_rtr(struct peer *p)
{
	peer_post(p, p->buf + (size_t)PEER_RX_BUFS * PEER_BUF_SIZE, 0);
}

void peer_listen(struct peer *p, int backlog, int bufsize)
{
	struct ibv_device **devs;
	int n = 0;

	if (!test_is_sdp())
		tap_skip("SDP only: the peer speaks SDP over RDMA");
	devs = ibv_get_device_list(&n);
	if (devs)
		ibv_free_device_list(devs);
	if (n <= 0)
		tap_skip("no RDMA device for the user-space peer");
	memset(p, 0, sizeof(*p));
	p->sock = -1;
	p->sockets_before = proc_net_sdp_count();
	CHECK(rdma_res_read(&p->res_before) == 0, "rdma resource show failed");
	p->listener = net_listener(&p->addr, backlog, bufsize);
}

/*
 * An SDP listener (SO_RCVBUF/SO_SNDBUF @bufsize, 0: defaults), the peer
 * connected to it with a valid Hello, the HelloAck checked, and the SDP
 * socket accepted.
 */
/*
 * The module's passive connection posts SDP_HALF_OPEN_BUFS (4) receive
 * buffers while it is half open, and the rest of its ring (16 by default)
 * once established, announced with a credit update before accept()
 * returns: take it, so that p->credits is what the module has posted.
 */
static void peer_take_growth(struct peer *p)
{
	struct msg *m;
	int i;

	CHECK(p->credits == SDP_HALF_OPEN_BUFS,
	      "HelloAck grants %u credits, a half-open connection %u",
	      p->credits, SDP_HALF_OPEN_BUFS);
	/*
	 * Over iWARP the ring may still be growing when our first Send lets
	 * the module announce it: then more updates follow.
	 */
	for (i = 0; i < SDP_DEFAULT_BUFS; i++) {
		m = peer_expect_msg(p, MID_UPDATE, p->tx_mseq);
		if (m->bufs >= SDP_DEFAULT_BUFS || !test_provider_siw())
			break;
	}
	CHECK(m->bufs == SDP_DEFAULT_BUFS,
	      "credit update of %u buffers at establishment, expected %u",
	      m->bufs, SDP_DEFAULT_BUFS);
	p->credits = m->bufs;
}

void peer_setup_flags(struct peer *p, int bufsize, uint8_t flags)
{
	peer_listen(p, 4, bufsize);
	p->hello_flags = flags;
	peer_start(p, NULL);
	peer_established(p);
	p->sock = net_accept(p->listener, PEER_WAIT_MS);
	if (!bufsize)
		peer_take_growth(p);
}

void peer_setup(struct peer *p, int bufsize)
{
	peer_setup_flags(p, bufsize, 0);
}

void peer_also(struct peer *p, const struct peer *l)
{
	memset(p, 0, sizeof(*p));
	p->sock = -1;
	p->listener = -1;
	p->addr = l->addr;
	p->sockets_before = l->sockets_before + (l->listener >= 0);
	CHECK(rdma_res_read(&p->res_before) == 0, "rdma resource show failed");
}

void peer_expect_disconnect(struct peer *p)
{
	CHECK(PEER_WAIT(p, p->seen[RDMA_CM_EVENT_DISCONNECTED] > 0, PEER_WAIT_MS),
	      "no DISCONNECTED for the peer within %d ms", PEER_WAIT_MS);
}

void peer_expect_abort(struct peer *p, uint32_t mseq_ack)
{
	struct msg *m = NULL;
	unsigned int i;

	peer_expect_disconnect(p);
	peer_pump(p, 0);
	for (i = p->rx_read; i < p->rx_n && i < PEER_MAX_MSGS && !m; i++) {
		if (p->rx[i].mid == MID_ABORT)
			m = &p->rx[i];
		else
			CHECK(is_credit_update(&p->rx[i]),
			      "mid %#x from the module before its AbortConn",
			      p->rx[i].mid);
	}
	CHECK(m, "no AbortConn from the module (%u messages, %u flushed)",
	      p->rx_n - p->rx_read, p->rx_flushed);
	CHECK(m->byte_len == sizeof(struct bsdh) && m->len == m->byte_len,
	      "AbortConn: len %u, %u bytes", m->len, m->byte_len);
	CHECK(m->mseq == i && m->mseq_ack == mseq_ack,
	      "AbortConn: mseq %u mseq_ack %u, expected %u %u", m->mseq,
	      m->mseq_ack, i, mseq_ack);
	p->rx_read = i;
}

bool sockets_back(void *arg)
{
	const struct peer *p = arg;
	int n = proc_net_sdp_count();

	return n >= 0 && n <= p->sockets_before;
}

void expect_all_back(const struct peer *p, const char *when)
{
	char want[128], got[128];
	struct rdma_res now;

	CHECK(wait_until(sockets_back, (void *)p, PEER_WAIT_MS),
	      "/proc/net/sdp %s: %d sockets, %d before the case", when,
	      proc_net_sdp_count(), p->sockets_before);
	CHECK(rdma_res_wait(&p->res_before, &now, PEER_WAIT_MS),
	      "RDMA resources %s: %s, before the case %s", when,
	      rdma_res_str(&now, got, sizeof(got)),
	      rdma_res_str(&p->res_before, want, sizeof(want)));
}

void peer_teardown(struct peer *p)
{
	if (p->sock >= 0)
		CHECK(close(p->sock) == 0, "close: %s", strerror(errno));
	p->sock = -1;
	if (p->listener >= 0)
		CHECK(close(p->listener) == 0, "close listener: %s",
		      strerror(errno));
	p->listener = -1;
	if (p->qp && p->manual)
		CHECK(ibv_destroy_qp(p->qpp) == 0, "ibv_destroy_qp");
	else if (p->qp)
		rdma_destroy_qp(p->id);
	p->qp = false;
	if (p->mr)
		CHECK(ibv_dereg_mr(p->mr) == 0, "ibv_dereg_mr");
	if (p->cq)
		CHECK(ibv_destroy_cq(p->cq) == 0, "ibv_destroy_cq");
	if (p->pd)
		CHECK(ibv_dealloc_pd(p->pd) == 0, "ibv_dealloc_pd");
	if (p->id)
		CHECK(rdma_destroy_id(p->id) == 0, "rdma_destroy_id: %s",
		      strerror(errno));
	if (p->ec)
		rdma_destroy_event_channel(p->ec);
	free(p->buf);
	if (!p->completion_errors_ok)
		klog_no_completion_errors();
	expect_all_back(p, "after the case");
}

/* ---- The module's side ------------------------------------------------ */

/* poll() until POLLERR is among the events or @ms pass; last revents. */
static int wait_err(int fd, int ms)
{
	long long end = now_ms() + ms;
	int r;

	for (;;) {
		r = wait_fd(fd, POLLIN, end - now_ms() > 0 ? end - now_ms() : 0);
		if (r < 0 || (r & POLLERR) || now_ms() >= end)
			return r;
		if (r)
			sleep_ms_poll(5);	/* readable, not failed (yet) */
	}
}

void sdp_expect_error(struct peer *p, int err, enum how how,
		      size_t queued)
{
	size_t got = 0;
	char buf[4096];
	ssize_t n;
	int r;

	/* Data before the error makes the socket readable first. */
	r = wait_err(p->sock, PEER_WAIT_MS);
	if (!(r > 0 && (r & POLLERR)))
		klog_show();
	CHECK(r > 0, "socket not ready within %d ms (poll %d)", PEER_WAIT_MS, r);
	CHECK(r & POLLERR, "no POLLERR within %d ms (revents %#x)", PEER_WAIT_MS, r);
	CHECK(r & POLLHUP, "revents %#x without POLLHUP", r);

	if (how == BY_SO_ERROR) {
		r = sockopt_get(p->sock, SOL_SOCKET, SO_ERROR);
		CHECK(r == err, "SO_ERROR %s, expected %s",
		      r ? strerrorname_np(r) : "0", strerrorname_np(err));
	}
	/* The data that came before the error is still readable. */
	for (;;) {
		n = recv(p->sock, buf, sizeof(buf), MSG_DONTWAIT);
		if (n <= 0)
			break;
		got += n;
	}
	CHECK(got == queued, "read %zu bytes before the error, expected %zu",
	      got, queued);
	if (how == BY_RECV) {
		CHECK(n == -1 && errno == err, "recv: %zd/%s, expected -1/%s",
		      n, n < 0 ? strerrorname_np(errno) : "-",
		      strerrorname_np(err));
		r = sockopt_get(p->sock, SOL_SOCKET, SO_ERROR);
		CHECK(r == 0, "SO_ERROR %s after recv reported the error",
		      strerrorname_np(r));
		n = recv(p->sock, buf, sizeof(buf), MSG_DONTWAIT);
	}
	CHECK(n == 0, "recv after the error: %zd/%s, expected EOF", n,
	      n < 0 ? strerrorname_np(errno) : "-");
	r = wait_fd(p->sock, POLLIN | POLLOUT, 0);
	CHECK((r & POLLHUP) && !(r & POLLERR),
	      "revents %#x after the error was reported", r);
	CHECK_ERRNO(send(p->sock, "x", 1, MSG_NOSIGNAL), EPIPE);
	CHECK(close(p->sock) == 0, "close: %s", strerror(errno));
	p->sock = -1;
}

void sdp_expect_data(struct peer *p, const char *text)
{
	size_t len = strlen(text), got = 0;
	char buf[256];
	ssize_t n;
	int r;

	while (got < len) {
		r = wait_fd(p->sock, POLLIN, PEER_WAIT_MS);
		CHECK(r > 0 && !(r & POLLERR), "waiting for \"%s\": revents %d",
		      text, r);
		n = recv(p->sock, buf + got, sizeof(buf) - got, MSG_DONTWAIT);
		CHECK(n > 0, "recv: %zd %s", n,
		      n < 0 ? strerror(errno) : "EOF");
		got += n;
	}
	CHECK(got == len && !memcmp(buf, text, len), "got \"%.*s\", expected \"%s\"",
	      (int)got, buf, text);
}

void sdp_expect_eof(struct peer *p)
{
	char c;
	int r;

	r = wait_fd(p->sock, POLLIN, PEER_WAIT_MS);
	CHECK(r > 0 && (r & POLLRDHUP || r & POLLIN) && !(r & POLLERR),
	      "waiting for EOF: revents %#x", r);
	CHECK(recv(p->sock, &c, 1, MSG_DONTWAIT) == 0, "recv: not EOF (%s)",
	      strerror(errno));
}

void sdp_expect_healthy(struct peer *p)
{
	int r = wait_fd(p->sock, POLLIN | POLLOUT, 0);

	CHECK(r == POLLOUT, "revents %#x, expected POLLOUT only", r);
	r = sockopt_get(p->sock, SOL_SOCKET, SO_ERROR);
	CHECK(r == 0, "SO_ERROR %s", strerrorname_np(r));
}

void orderly_close(struct peer *p)
{
	uint32_t ours;

	peer_send(p, MID_DISCONN, NULL, 0);
	ours = p->tx_mseq;
	peer_sends_ok(p);
	sdp_expect_eof(p);
	CHECK(close(p->sock) == 0, "close: %s", strerror(errno));
	p->sock = -1;
	peer_expect_msg(p, MID_DISCONN, ours);
	peer_expect_disconnect(p);
}

void peer_rdma(struct peer *p, enum ibv_wr_opcode op, size_t len,
	       uint64_t raddr, uint32_t rkey)
{
	uint8_t *big = peer_big(p);

	CHECK(len <= PEER_BIG, "RDMA operation too big");
	if (op == IBV_WR_RDMA_WRITE)
		memset(big, 0xee, len);
	peer_post_op(p, op, big, len, raddr, rkey);
}

struct srcah peer_expect_srcavail(struct peer *p)
{
	struct srcah sa;
	struct msg *m = peer_expect_msg(p, MID_SRCAVAIL, p->tx_mseq);

	CHECK(m->paylen == sizeof(sa) && m->len == 32, "SrcAvail of %u bytes",
	      m->len);
	memcpy(&sa, m->payload, sizeof(sa));
	sa.len = ntohl(sa.len);
	sa.rkey = ntohl(sa.rkey);
	sa.vaddr = be64toh(sa.vaddr);
	return sa;
}

struct ibv_mr *peer_reg_readable(struct peer *p, size_t len)
{
	uint8_t *big = peer_big(p);
	struct ibv_mr *mr = ibv_reg_mr(p->pd, big, len, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_READ);

	CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
	return mr;
}

size_t peer_expect_data_bytes(struct peer *p, size_t want)
{
	size_t got = 0;

	while (got < want) {
		struct msg *m = peer_expect_msg(p, MID_DATA, p->tx_mseq);

		got += m->byte_len - sizeof(struct bsdh);
	}
	CHECK(got == want, "%zu bytes of Data, expected %zu", got, want);
	return got;
}

/* ---- A suite's main ------------------------------------------------------ */

#define BURST_SYSCTL	"/proc/sys/net/core/message_burst"
#define RX_INIT_BUFS	"/proc/sys/net/sdp/rx_init_bufs"

int peer_tap_main(const struct tap_test *tests, size_t n, int argc,
		  char **argv)
{
	char burst[32], rx_init[32];
	bool raised, whole;
	int ret;

	raised = read_file(BURST_SYSCTL, burst, sizeof(burst)) == 0 &&
		 write_file(BURST_SYSCTL, "1000") == 0;
	whole = read_file(RX_INIT_BUFS, rx_init, sizeof(rx_init)) == 0 &&
		write_file(RX_INIT_BUFS, "16") == 0;
	ret = tap_main(tests, n, argc, argv);
	if (raised)
		write_file(BURST_SYSCTL, burst);
	if (whole)
		write_file(RX_INIT_BUFS, rx_init);
	return ret;
}
