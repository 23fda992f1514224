/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A misbehaving SDP peer in user space, for the test suites: it speaks
 * SDP itself with librdmacm and libibverbs to an SDP socket of the module
 * (RDMA_PS_TCP, an RC QP, a 32-byte Hello as the connect request's
 * private data) and sends hand-built messages with IBV_WR_SEND, so that
 * a suite can break the protocol on purpose and check the kernel's
 * reaction (tests/peer.c does).
 *
 *   peer_setup() / peer_listen() + peer_start() + peer_established()
 *                         an SDP listener of the module, the peer
 *                         connected to it, the SDP socket accepted
 *   peer_send*()          messages from the peer (a BSDH and payload)
 *   peer_expect_msg()     the module's next message, its BSDH checked
 *   sdp_expect_*()        what the module's socket must show
 *   klog_*()              what the module logged meanwhile
 *   peer_teardown()       every verbs and CM object released; the
 *                         module's sockets and RDMA resources must be
 *                         back where they were before the case
 *
 * Every wait is bounded (PEER_WAIT_MS).  Only a program that links
 * tests/lib/peer.c needs -lrdmacm -libverbs (the Makefile gives them to
 * tests/bin/peer and tests/bin/peerfuzz alone).
 */
#ifndef SDP_TEST_PEER_H
#define SDP_TEST_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "net.h"
#include "tap.h"
#include "util.h"

/* How long something that should happen promptly may take (slow VMs). */
#define PEER_WAIT_MS	10000

/* The peer's side: receive buffers (as the module's), send slots. */
#define PEER_RX_BUFS	8
#define PEER_BUF_SIZE	(32 * 1024)
#define PEER_TX_SLOTS	64
#define PEER_TX_SLOT	1024
#define PEER_BIG	(64 * 1024)	/* for messages too big to receive */
#define PEER_MAX_MSGS	256
#define WR_RECV		0x10000ULL

/* Wire format (src/sdp_proto.h); all fields big-endian on the wire. */
enum {
	MID_HELLO	= 0x00,
	MID_HELLO_ACK	= 0x01,
	MID_DISCONN	= 0x02,
	MID_ABORT	= 0x03,
	MID_SENDSM	= 0x04,
	MID_RDMA_RD_COMPL = 0x06,
	MID_MODE_CHANGE	= 0x07,
	MID_SRCAVAIL_CANCEL = 0x08,
	MID_CHRCVBUF	= 0x0b,
	MID_CHRCVBUF_ACK = 0x0c,
	MID_RESUME	= 0x20,
	MID_RESUME_ACK	= 0x21,
	MID_RESUME_REFUSED = 0x22,
	MID_SINKAVAIL	= 0xfd,
	MID_SRCAVAIL	= 0xfe,
	MID_DATA	= 0xff,
	MID_UPDATE	= 0x100,	/* peer_expect_msg(): a credit update */
};

/* Receive buffers of the module's connections (src/sdp.h). */
#define SDP_HALF_OPEN_BUFS	4
#define SDP_DEFAULT_BUFS	16
/* The largest advertisement the module accepts (src/sdp.h). */
#define SDP_ZC_MAX_BYTES	(1024 * 1024)
/* How long the module keeps one advertisement of its own at most. */
#define SDP_ZC_ADVERT_MAX_MS	4000

struct bsdh {
	uint8_t mid;
	uint8_t flags;
	uint16_t bufs;
	uint32_t len;
	uint32_t mseq;
	uint32_t mseq_ack;
} __attribute__((packed));

struct hello {
	struct bsdh bsdh;
	uint8_t version;
	uint8_t ipv;
	uint8_t flags;			/* HF_* */
	uint8_t max_adverts;
	uint32_t desremrcvsz;
	uint32_t localrcvsz;
	uint16_t port;
	uint16_t rsvd2;
} __attribute__((packed));

struct hello_ack {
	struct bsdh bsdh;
	uint8_t version;
	uint8_t ipv;
	uint8_t flags;
	uint8_t max_adverts;
	uint32_t actrcvsz;
} __attribute__((packed));

/* Hello(Ack) flags: the sender's advertised keys may be invalidated. */
#define HF_RINV		0x01
/* ... it understands ChRcvBufAck (its peer may start on small buffers). */
#define HF_RESIZE	0x02
/* ... and one that makes them smaller, and more than one. */
#define HF_SHRINK	0x04
/* ... and it answers a ping (BSDH_PING) at once: the peer then does. */
#define HF_PING		0x08
/* ... and it can resume the connection (HelloAck: struct hello_ack_resume). */
#define HF_RESUME	0x10
/* BSDH flag: answer this message at once (src/sdp_proto.h, SDP_PING). */
#define BSDH_PING	0x04
/* The module's receive buffers: small at first, then full (src/sdp_wire.h). */
#define SDP_BUF_SMALL	4096
#define SDP_BUF_SIZE	(32 * 1024)

/* After the BSDH of a SrcAvail. */
struct srcah {
	uint32_t len;
	uint32_t rkey;
	uint64_t vaddr;
} __attribute__((packed));

/* After a HelloAck with HF_RESUME (src/sdp_proto.h). */
struct hello_ack_resume {
	uint32_t conn_id;
	uint16_t port;
	uint16_t rsvd;
	uint8_t secret[16];
} __attribute__((packed));

/* Resume and ResumeAck: a connect request's and reply's private data. */
struct resume {
	struct bsdh bsdh;
	uint8_t version;
	uint8_t flags;
	uint16_t rsvd;
	uint32_t conn_id;
	uint32_t gen;
	uint32_t rcvsz;
	uint64_t rx_seq;
	uint8_t tag[16];
} __attribute__((packed));

_Static_assert(sizeof(struct hello_ack_resume) == 24, "24 bytes");
_Static_assert(sizeof(struct resume) == 56, "a Resume fills a REQ");
_Static_assert(sizeof(struct bsdh) == 16, "BSDH is 16 bytes");
_Static_assert(sizeof(struct srcah) == 16, "SrcAH is 16 bytes");
_Static_assert(sizeof(struct hello) == 32, "Hello is 32 bytes");
_Static_assert(sizeof(struct hello_ack) == 24, "HelloAck is 24 bytes");

/* A message the peer received from the module, header in host order. */
struct msg {
	uint8_t mid;
	uint8_t flags;
	uint16_t bufs;
	uint32_t len;
	uint32_t mseq;
	uint32_t mseq_ack;
	uint32_t byte_len;
	bool inv;			/* a SEND with Invalidate ... */
	uint32_t inv_rkey;		/* ... of this key of ours */
	char payload[64];
	size_t paylen;
};

struct peer {
	/* The module's side. */
	struct sockaddr_storage addr;
	int listener;
	int sock;
	int sockets_before;
	struct rdma_res res_before;	/* RDMA resources before the case */

	/* The peer's side. */
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t buf_len;
	bool qp;
	struct ibv_qp *qpp;		/* the QP (p->id->qp unless manual) */
	bool manual;			/* QP ours: RTU only on peer_rtu() */
	bool no_recv;			/* post no receive buffer at all */
	bool silent;			/* iWARP: no first message at once */
	unsigned int seen[32];		/* CM events seen, by type */
	struct hello_ack ha;		/* HelloAck (wire order) */
	struct hello_ack_resume har;	/* ... its extension, if any */
	size_t ha_len;

	unsigned int credits;		/* receive buffers the module posted */
	uint32_t tx_mseq;		/* mseq of our last message */
	uint32_t rx_mseq;		/* mseq of the module's last message */
	unsigned int tx_slot;
	unsigned int tx_posted, tx_done, tx_errors;
	enum ibv_wc_status tx_status;	/* last failed send's status */
	unsigned int rx_flushed, rx_errors;
	struct msg rx[PEER_MAX_MSGS];
	unsigned int rx_n;		/* messages received */
	unsigned int pings;		/* ... with BSDH_PING */
	unsigned int rx_read;		/* ... and taken by peer_next_msg() */
	bool completion_errors_ok;	/* the case makes the module log some */
	uint8_t hello_flags;		/* our Hello's flags (HF_*) */
	uint16_t adv_bufs;		/* bufs our messages say; 0: PEER_RX_BUFS */
	uint8_t tx_flags;		/* the next message's BSDH flags */
	bool inv;			/* the next SEND invalidates ... */
	uint32_t inv_rkey;		/* ... this key of the module's */
};

/* The peer's buffer for messages too big for a send slot, and RDMA. */
static inline uint8_t *peer_big(const struct peer *p)
{
	return p->buf + (size_t)PEER_RX_BUFS * PEER_BUF_SIZE +
	       (size_t)PEER_TX_SLOTS * PEER_TX_SLOT;
}

/* Pump until @cond holds or @ms pass; the value of @cond. */
#define PEER_WAIT(p, cond, ms)						\
	({								\
		long long __end = now_ms() + (ms);			\
		bool __ok;						\
		for (;;) {						\
			peer_pump(p, 0);				\
			__ok = (cond);					\
			if (__ok || now_ms() >= __end)			\
				break;					\
			peer_pump(p, 2);				\
		}							\
		__ok;							\
	})

/* How sdp_expect_error() sees the error. */
enum how { BY_RECV, BY_SO_ERROR };

/* Start collecting the kernel log from now on. */
void klog_start(void);

bool klog_has(const char *needle);

/* Show what sdp logged during the case (for the TAP output). */
void klog_show(void);

/* The log must hold @needle; fail with what was logged otherwise. */
void klog_expect(const char *needle);

/* Process CM events and completions, waiting up to @ms for an event. */
void peer_pump(struct peer *p, int ms);

/* Just pump for @ms (to see that nothing happens). */
void peer_idle(struct peer *p, int ms);

/* Wait for CM event @want; any error event fails the test. */
void peer_wait_cm(struct peer *p, enum rdma_cm_event_type want);

/*
 * Post one work request @op of @len bytes at @addr (inside the
 * registered buffer); @raddr/@rkey for RDMA operations.
 */
void peer_post_op(struct peer *p, enum ibv_wr_opcode op, void *addr,
		  size_t len, uint64_t raddr, uint32_t rkey);

/*
 * Send @wire_len bytes: a BSDH (@mid, our credits, @len, @mseq, the
 * mseq of the last message we received), @payload, zeros after it.
 */
void peer_send_raw(struct peer *p, uint8_t mid, uint32_t len,
		   uint32_t mseq, const void *payload, size_t paylen,
		   size_t wire_len);

/* A Data message of @size bytes (BSDH included, zeros after it). */
void peer_send_big(struct peer *p, size_t size);

/* A well-formed message with the next mseq. */
void peer_send(struct peer *p, uint8_t mid, const void *payload,
	       size_t paylen);

/*
 * Make the Send @wr a Send with Invalidate of @rkey, for every provider
 * (the fuzzer's sends too: tests/peerfuzz.c).
 */
void peer_wr_send_inv(struct ibv_send_wr *wr, uint32_t rkey);

void peer_send_data(struct peer *p, const char *text);

/* Wait until every send posted so far has completed; CHECK success. */
void peer_sends_ok(struct peer *p);

/* The next message from the module, waiting up to WAIT_MS; or NULL. */
struct msg *peer_next_msg(struct peer *p);

const char *mid_name(uint8_t mid);

bool is_credit_update(const struct msg *m);

/*
 * The next message must be @want (a mid, or MID_UPDATE) acknowledging
 * @mseq_ack.  Its mseq must follow the module's previous message (1 for
 * the first): every message the module sends takes the next one.  Credit
 * updates before it (unless @want is one) are skipped: when the module
 * sends them is its own policy.
 */
struct msg *peer_expect_msg(struct peer *p, int want,
			    uint32_t mseq_ack);

/* Everything the module sent since was a credit update, in sequence. */
void peer_skip_updates(struct peer *p);

/*
 * The peer's CM id, QP and buffers, resolved to the SDP listener at
 * p->addr, and rdma_connect() under way with a valid Hello, changed by
 * @mangle if not NULL.
 */
void peer_start(struct peer *p, void (*mangle)(struct hello *hh));

/*
 * Manual QP: wait for the connect response and move the QP to RTS; the
 * module's side is not established until peer_rtu().
 */
void peer_rts(struct peer *p);

/* Wait for ESTABLISHED and check the HelloAck. */
void peer_established(struct peer *p);
void peer_send_rtr(struct peer *p);

/* An SDP listener with @backlog and @bufsize (SO_RCVBUF/SO_SNDBUF). */
void peer_listen(struct peer *p, int backlog, int bufsize);

void peer_setup_flags(struct peer *p, int bufsize, uint8_t flags);

void peer_setup(struct peer *p, int bufsize);

/* Another peer for the listener of @l (which keeps it). */
void peer_also(struct peer *p, const struct peer *l);

/* The peer sees the connection end: DISCONNECTED within WAIT_MS. */
void peer_expect_disconnect(struct peer *p);

/*
 * After an abort by the module: the peer gets an AbortConn with the
 * module's next mseq, acknowledging @mseq_ack (the module disconnects only
 * once its AbortConn is delivered), and sees the connection end.
 */
void peer_expect_abort(struct peer *p, uint32_t mseq_ack);

bool sockets_back(void *arg);

/*
 * The module's sockets and RDMA resources (QP, CQ, MR, PD, CM id) are
 * back where they were before the case: a closed connection must free
 * everything, not only leave /proc/net/sdp.
 */
void expect_all_back(const struct peer *p, const char *when);

/* Release everything; the module's sockets must go too. */
void peer_teardown(struct peer *p);

/*
 * tap_main() for a suite of peer cases: for its run, net.sdp.rx_init_bufs
 * is 16, so that a connection's whole receive ring is posted once it is
 * established (peer_setup()), and net.core.message_burst 1000, so that
 * every case's rate-limited log line gets through; both put back after.
 */
int peer_tap_main(const struct tap_test *tests, size_t n, int argc,
		  char **argv);

/*
 * The module aborted the connection: within WAIT_MS poll says POLLERR and
 * POLLHUP; the unread data (@queued bytes) is still there and then the
 * error @err is reported once, by recv() or SO_ERROR (@how); after it
 * recv() gives EOF, send() EPIPE, and close() works.
 */
void sdp_expect_error(struct peer *p, int err, enum how how,
		      size_t queued);

/* recv() on the SDP socket must give exactly @text (within WAIT_MS). */
void sdp_expect_data(struct peer *p, const char *text);

/* recv() on the SDP socket must give EOF (the peer's DisConn). */
void sdp_expect_eof(struct peer *p);

/* The SDP socket is healthy: no error, nothing to read, writable. */
void sdp_expect_healthy(struct peer *p);

/*
 * Orderly close from the peer's side: DisConn; the SDP socket reads EOF
 * and is closed; the module's DisConn comes (its mseq @mseq) and then
 * the module disconnects.
 */
void orderly_close(struct peer *p);

/*
 * Post an RDMA read (into) or write (from, filled with 0xee) of @len
 * bytes of our big buffer at @raddr/@rkey of the module.
 */
void peer_rdma(struct peer *p, enum ibv_wr_opcode op, size_t len,
	       uint64_t raddr, uint32_t rkey);

/* Wait for the module's SrcAvail; its header in host order. */
struct srcah peer_expect_srcavail(struct peer *p);

/* A readable MR of the peer over the first @len bytes of its big buffer. */
struct ibv_mr *peer_reg_readable(struct peer *p, size_t len);

/* Bytes of Data that arrive from the module within WAIT_MS, up to @want. */
size_t peer_expect_data_bytes(struct peer *p, size_t want);

#endif /* SDP_TEST_PEER_H */
