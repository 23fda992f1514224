// SPDX-License-Identifier: GPL-2.0
/*
 * A fuzzer that plays a hostile SDP peer.  For a bounded time it runs
 * many short sessions, each with its own seed drawn from the run's seed:
 *
 *   - the test process makes an SDP listener of the module and forks the
 *     peer: a child that speaks SDP from user space (tests/lib/peer.c),
 *     connects with a valid Hello (random flags) and then sends a random
 *     sequence of messages;
 *   - meanwhile a thread of the test process uses the accepted SDP socket
 *     with random send/recv/poll/SO_ERROR/shutdown/close calls, every one
 *     bounded (SO_SNDTIMEO/SO_RCVTIMEO, poll timeouts);
 *   - the peer's sequence draws from: valid Data (small, empty as credit
 *     updates, up to the module's buffer size), messages with one or more
 *     BSDH fields mutated (mid, known and unknown ids; flags; bufs; len
 *     too short, too long; mseq duplicated, skipped, out of window;
 *     mseq_ack ahead of the module), messages shorter than a BSDH,
 *     truncated and oversized ones (larger than the module's buffers),
 *     SrcAvails (valid ones over a readable key of its own, and with bad,
 *     stale and read-only keys, bad lengths and addresses, inline data, a
 *     second one while one is outstanding), answers to the module's own
 *     SrcAvails (valid RDMA reads and RdmaRdCompl, SendSM, reads past the
 *     advertised range, writes through the read-only key, reads through
 *     stale or random keys, RdmaRdCompl for the wrong length, a SEND with
 *     Invalidate of the wrong key), SendSM/RdmaRdCompl/SrcAvailCancel out
 *     of the blue, duplicated messages, bursts beyond the credits,
 *     DisConn and AbortConn at odd moments, pauses;
 *   - the session ends one of several ways: an orderly DisConn, an
 *     AbortConn, rdma_disconnect(), the peer's QP destroyed first, or the
 *     peer process exiting without any teardown -- at the end or in the
 *     middle of the sequence.
 *
 * A third of the sessions are polite: valid messages only, the module's
 * SrcAvails answered.  The oracle, for every session:
 *   - every socket call returns within its bound (a call still running
 *     long after it is a hang, and the session fails naming it), with a
 *     result or errno TCP could give (send: EAGAIN, EPIPE, ECONNRESET,
 *     ETIMEDOUT; recv: EAGAIN, ECONNRESET, ETIMEDOUT; shutdown:
 *     ENOTCONN; SO_ERROR: 0, ECONNRESET, ETIMEDOUT, EPIPE);
 *   - after the sequence the peer sends a marker as valid Data when its
 *     QP can still carry it: the socket must then, within a bound, either
 *     read the marker (the connection keeps working) or report the end
 *     (a reset, or EOF after a DisConn) -- never neither; in a polite
 *     session the marker must arrive, and no call may see a reset;
 *   - every message of the module is well formed (a BSDH whose len is the
 *     bytes that arrived, mseq one more than the last, a known mid);
 *   - once the peer is gone the socket reports the end within a bound;
 *   - after each session nothing leaks: /proc/net/sdp and the RDMA
 *     resources (tests/lib/util.h) are back to their counts before the
 *     run within a bound, and the kernel logged no Oops, BUG, WARNING,
 *     KASAN, UBSAN or lockdep report.
 *
 * Knobs (environment):
 *   SDP_FUZZ_SEED     the run's seed (default: from the clock), always
 *                     printed at the start and in every failure; it
 *                     replays the same sessions (the same choices, not
 *                     the same interleaving with the module).
 *   SDP_FUZZ_SESSION  run only session N of that seed (the failure
 *                     message names it), for a replay.
 *   SDP_FUZZ_SECONDS  how long to start new sessions (default 30); the
 *                     test's alarm (SDP_TEST_TIMEOUT) is extended to fit.
 *
 * A failed session prints what the peer did (its trace) and the line to
 * replay it.  Link with tests/lib/peer.c, -lrdmacm -libverbs -lpthread.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <linux/sdp.h>

#include "net.h"
#include "peer.h"
#include "tap.h"
#include "util.h"

/* The peer's own buffer: [0, 64K) for big messages, the rest for RDMA. */
#define FZ_BUF		(256 * 1024)
#define FZ_MSGBUF	0
#define FZ_ADVBUF	(64 * 1024)	/* what our SrcAvails advertise */
#define FZ_RDBUF	(128 * 1024)	/* where our RDMA reads land */
#define FZ_CHUNK	(64 * 1024)
/* How long a socket call may take beyond its own timeout. */
#define FZ_SLACK_MS	15000
/* How long the socket has to show the marker or the end. */
#define FZ_END_MS	(2 * PEER_WAIT_MS)
/* The peer process's own bound (alarm), and one sequence's. */
#define FZ_PEER_MAX_S	90
#define FZ_SEQ_MAX_MS	20000
#define FZ_MARK_LEN	16

/* Which way a session ends. */
enum ending {
	END_ORDERLY, END_ABORT, END_DISCONNECT, END_DESTROY_QP, END_EXIT,
	END_NONE,
};

static const char *const ending_names[] = {
	"orderly DisConn", "AbortConn", "rdma_disconnect", "QP destroyed",
	"exit without teardown", "-",
};

/* What the peer tells the test process, over a pipe. */
enum {
	ST_SEQ_DONE = 'S',	/* sequence over: stop the socket's user */
	ST_CLEAN = 'C',		/* marker sent, polite session */
	ST_PING = 'P',		/* marker sent after misbehaving */
	ST_NOPING = 'N',	/* no marker: the QP cannot carry it */
	GO_FINAL = 'G',		/* the socket's user has stopped */
	GO_END = 'D',		/* the marker was checked: end now */
};

static struct {
	uint64_t seed;
	int seconds;
	long only;		/* SDP_FUZZ_SESSION, -1: all */
	int base_sockets;
	struct rdma_res base_res;
	int kmsg;
	unsigned long sessions, polite, pings, marks, resets;
	unsigned long msgs, mutated, calls, unaccepted;
} G = { .only = -1 };

/* ---- The peer (a child process) -------------------------------------- */

struct hdr {
	uint8_t mid;
	uint8_t flags;
	uint16_t bufs;
	uint32_t len;
	uint32_t mseq;
	uint32_t mseq_ack;
};

struct fz {
	struct peer p;
	struct rng rng;
	long long t0;
	int in, out;			/* pipes from and to the test process */
	bool polite;
	struct ibv_mr *mr;		/* FZ_BUF: local write, remote read */
	struct ibv_mr *stale;		/* registered, advertised, gone */
	uint32_t stale_rkey;
	uint64_t stale_vaddr;
	uint8_t *buf;
	uint32_t tx;			/* mseq of our last in-sequence message */
	uint32_t win;			/* the module's window: mseq_ack + bufs */
	uint32_t rcvsz;			/* the module's receive buffer size */
	uint32_t rx_last;		/* mseq of the module's last message */
	bool rx_lost;			/* more messages than peer.c records */
	unsigned int rx_since_tx;	/* its messages since our last one */
	bool dirty;			/* we broke the protocol */
	bool broken;			/* our QP cannot send any more */
	bool gone;			/* CM disconnected, or we tore down */
	bool got_abort, got_disconn, sent_disconn;
	unsigned int tx_errors_seen;
	/* The module's advertisement to us. */
	bool adv, adv_cancelled;
	uint32_t adv_len, adv_done, adv_rkey;
	uint64_t adv_vaddr;
	uint32_t old_rkey;		/* of one that ended */
	uint64_t old_vaddr;
	bool module_rinv;
	/* Ours to the module. */
	bool our_adv;
	uint32_t our_len, our_read;
	unsigned long msgs, mutated;
};

static void tr(struct fz *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void tr(struct fz *f, const char *fmt, ...)
{
	va_list ap;

	printf("# %6lld ms: ", now_ms() - f->t0);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static uint64_t rnd(struct fz *f, uint64_t lo, uint64_t hi)
{
	return rng_range(&f->rng, lo, hi);
}

static bool chance(struct fz *f, unsigned int n)
{
	return rnd(f, 0, n - 1) == 0;
}

static void fill_random(struct fz *f, uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)rng_next(&f->rng);
}

static bool known_mid(uint8_t mid)
{
	return mid == MID_DATA || mid == MID_DISCONN || mid == MID_ABORT ||
	       mid == MID_SENDSM || mid == MID_RDMA_RD_COMPL ||
	       mid == MID_SRCAVAIL_CANCEL || mid == MID_SRCAVAIL ||
	       mid == MID_CHRCVBUF_ACK;
}

/* Take the messages peer.c recorded; check that they are well formed. */
static void fz_take(struct fz *f)
{
	struct peer *p = &f->p;
	unsigned int i, n = p->rx_n < PEER_MAX_MSGS ? p->rx_n : PEER_MAX_MSGS;

	if (p->rx_n > PEER_MAX_MSGS)
		f->rx_lost = true;
	for (i = 0; i < n; i++) {
		struct msg *m = &p->rx[i];

		CHECK(m->byte_len >= sizeof(struct bsdh) && m->len == m->byte_len,
		      "module message %u: %u bytes, BSDH len %u (mid %#x)",
		      f->rx_last + 1, m->byte_len, m->len, m->mid);
		CHECK(f->rx_lost || m->mseq == f->rx_last + 1,
		      "module message mseq %u after %u (mid %#x)", m->mseq,
		      f->rx_last, m->mid);
		CHECK(known_mid(m->mid), "module sent mid %#x", m->mid);
		f->rx_last = m->mseq;
		f->rx_since_tx++;
		f->win = m->mseq_ack + m->bufs;
		switch (m->mid) {
		case MID_SRCAVAIL: {
			struct srcah sa;

			CHECK(m->paylen >= sizeof(sa), "SrcAvail of %u bytes",
			      m->len);
			memcpy(&sa, m->payload, sizeof(sa));
			/* Only a polite peer knows when one is over. */
			CHECK(!f->adv || !f->polite,
			      "SrcAvail while one is outstanding");
			f->adv = true;
			f->adv_cancelled = false;
			f->adv_len = ntohl(sa.len);
			f->adv_rkey = ntohl(sa.rkey);
			f->adv_vaddr = be64toh(sa.vaddr);
			f->adv_done = 0;
			tr(f, "<- SrcAvail %u bytes rkey %#x vaddr %#llx (mseq %u)",
			   f->adv_len, f->adv_rkey,
			   (unsigned long long)f->adv_vaddr, m->mseq);
			break;
		}
		case MID_SRCAVAIL_CANCEL:
			tr(f, "<- SrcAvailCancel (mseq %u)", m->mseq);
			f->adv_cancelled = true;
			break;
		case MID_RDMA_RD_COMPL: {
			uint32_t len = 0;

			memcpy(&len, m->payload, m->paylen >= 4 ? 4 : 0);
			f->our_read += ntohl(len);
			tr(f, "<- RdmaRdCompl %u (mseq %u)", ntohl(len), m->mseq);
			if (f->our_read >= f->our_len)
				f->our_adv = false;
			break;
		}
		case MID_SENDSM:
			tr(f, "<- SendSM (mseq %u)", m->mseq);
			f->our_adv = false;
			break;
		case MID_DISCONN:
			tr(f, "<- DisConn (mseq %u)", m->mseq);
			f->got_disconn = true;
			break;
		case MID_ABORT:
			tr(f, "<- AbortConn (mseq %u)", m->mseq);
			f->got_abort = true;
			break;
		default:
			break;
		}
	}
	p->rx_n = p->rx_read = 0;
	if (p->tx_errors != f->tx_errors_seen) {
		f->tx_errors_seen = p->tx_errors;
		if (!f->broken)
			tr(f, "our send failed: %s",
			   ibv_wc_status_str(p->tx_status));
		f->broken = true;
	}
	if (p->rx_errors)
		f->broken = true;
	if (!f->gone && (p->seen[RDMA_CM_EVENT_DISCONNECTED] ||
			 p->seen[RDMA_CM_EVENT_TIMEWAIT_EXIT])) {
		tr(f, "CM: DISCONNECTED");
		f->gone = true;
	}
}

static void fz_pump(struct fz *f, int ms)
{
	long long end = now_ms() + ms;

	do {
		if (f->p.qp || f->p.ec)
			peer_pump(&f->p, ms ? 2 : 0);
		fz_take(f);
	} while (now_ms() < end);
}

static bool fz_credit(struct fz *f)
{
	return (int32_t)(f->win - (f->tx + 1)) >= 0;
}

/* Wait up to @ms for a credit; false if there is none. */
static bool fz_wait_credit(struct fz *f, int ms)
{
	long long end = now_ms() + ms;

	while (!fz_credit(f) && !f->gone && !f->got_abort && now_ms() < end)
		fz_pump(f, 2);
	return fz_credit(f);
}

/* Wait up to @ms for every send posted to complete. */
static bool fz_sends_done(struct fz *f, int ms)
{
	long long end = now_ms() + ms;

	for (;;) {
		fz_pump(f, 0);
		if (f->p.tx_done == f->p.tx_posted)
			return true;
		if (now_ms() >= end)
			return false;
		fz_pump(f, 2);
	}
}

/* Post one work request; false if it could not be. */
static bool fz_post(struct fz *f, enum ibv_wr_opcode op, void *addr,
		    uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey,
		    bool inv, uint32_t inv_rkey)
{
	struct peer *p = &f->p;
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr,
		.length = len,
		.lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = p->tx_slot,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	long long end = now_ms() + 2000;

	if (!p->qp)
		return false;
	while (p->tx_posted - p->tx_done >= PEER_TX_SLOTS - 4) {
		if (now_ms() >= end) {
			tr(f, "send queue full (%u outstanding)",
			   p->tx_posted - p->tx_done);
			return false;
		}
		fz_pump(f, 2);
	}
	if (op == IBV_WR_SEND && inv)
		peer_wr_send_inv(&wr, inv_rkey);
	if (ibv_post_send(p->qpp, &wr, &bad)) {
		tr(f, "ibv_post_send: %s", strerror(errno));
		f->broken = true;
		return false;
	}
	p->tx_slot++;
	p->tx_posted++;
	return true;
}

static struct hdr fz_hdr(struct fz *f, uint8_t mid, size_t paylen)
{
	struct hdr h = {
		.mid = mid,
		.bufs = PEER_RX_BUFS,
		.len = sizeof(struct bsdh) + paylen,
		.mseq = f->tx + 1,
		.mseq_ack = f->p.rx_mseq,
	};

	return h;
}

/*
 * Send a message: the BSDH @h, @paylen bytes of @pay (random if NULL),
 * @wire bytes on the wire (zeros after the payload, or the message cut).
 */
static bool fz_send(struct fz *f, const struct hdr *h, const void *pay,
		    size_t paylen, size_t wire, bool inv, uint32_t inv_rkey,
		    const char *what)
{
	struct peer *p = &f->p;
	struct bsdh b = {
		.mid = h->mid,
		.flags = h->flags,
		.bufs = htons(h->bufs),
		.len = htonl(h->len),
		.mseq = htonl(h->mseq),
		.mseq_ack = htonl(h->mseq_ack),
	};
	size_t room = wire > sizeof(b) + paylen ? wire : sizeof(b) + paylen;
	uint8_t *at;
	uint32_t lkey;
	bool big = room > PEER_TX_SLOT, ok;

	if (big) {
		if (room > FZ_ADVBUF - FZ_MSGBUF)
			room = wire = FZ_ADVBUF - FZ_MSGBUF;
		/* One big message at a time. */
		if (!fz_sends_done(f, 2000))
			return false;
		at = f->buf + FZ_MSGBUF;
		lkey = f->mr->lkey;
	} else {
		at = p->buf + (size_t)PEER_RX_BUFS * PEER_BUF_SIZE +
		     (size_t)(p->tx_slot % PEER_TX_SLOTS) * PEER_TX_SLOT;
		lkey = p->mr->lkey;
	}
	memset(at, 0, room);
	memcpy(at, &b, sizeof(b));
	if (paylen && pay)
		memcpy(at + sizeof(b), pay, paylen);
	else if (paylen)
		fill_random(f, at + sizeof(b),
			    paylen < room - sizeof(b) ? paylen : room - sizeof(b));
	tr(f, "-> %s: mid %#x flags %#x bufs %u len %u mseq %u ack %u, %zu bytes%s",
	   what, h->mid, h->flags, h->bufs, h->len, h->mseq, h->mseq_ack, wire,
	   inv ? " (with Invalidate)" : "");
	ok = fz_post(f, IBV_WR_SEND, at, lkey, wire, 0, 0, inv, inv_rkey);
	if (ok) {
		f->msgs++;
		if (h->mseq == f->tx + 1)
			f->tx++;
		f->rx_since_tx = 0;
	}
	if (ok && big)
		fz_sends_done(f, 2000);
	return ok;
}

/* A well-formed message with the next mseq, if there is a credit. */
static bool fz_valid(struct fz *f, uint8_t mid, const void *pay,
		     size_t paylen, const char *what)
{
	struct hdr h = fz_hdr(f, mid, paylen);

	if (f->broken || f->gone || !fz_wait_credit(f, 1000))
		return false;
	return fz_send(f, &h, pay, paylen, h.len, false, 0, what);
}

static void fz_data(struct fz *f, size_t max)
{
	size_t room = f->rcvsz - sizeof(struct bsdh);

	if (max > room)
		max = room;
	fz_valid(f, MID_DATA, NULL, rng_size(&f->rng, max), "Data");
}

/* RDMA-read @len bytes of the module's advertisement (at its @off). */
static bool fz_read(struct fz *f, uint64_t vaddr, uint32_t rkey, size_t len,
		    const char *what)
{
	tr(f, "-> RDMA read %zu bytes at %#llx rkey %#x (%s)", len,
	   (unsigned long long)vaddr, rkey, what);
	if (!fz_post(f, IBV_WR_RDMA_READ, f->buf + FZ_RDBUF, f->mr->lkey, len,
		     vaddr, rkey, false, 0))
		return false;
	fz_sends_done(f, PEER_WAIT_MS);
	return !f->broken;
}

/* Read what is left of the module's advertisement and report it. */
static void fz_answer_adv(struct fz *f, bool polite)
{
	if (!f->adv || f->broken || f->gone)
		return;
	if (f->adv_cancelled) {
		if (fz_valid(f, MID_SENDSM, NULL, 0, "SendSM for the cancel"))
			f->adv = false;
		return;
	}
	while (f->adv_done < f->adv_len && !f->broken && !f->gone) {
		uint32_t n = f->adv_len - f->adv_done;
		uint32_t rr;
		bool last;

		if (n > FZ_CHUNK)
			n = FZ_CHUNK;
		if (!polite && chance(f, 3) && n > 1)
			n = rnd(f, 1, n);
		if (!fz_read(f, f->adv_vaddr + f->adv_done, f->adv_rkey, n,
			     "the module's SrcAvail"))
			return;
		f->adv_done += n;
		last = f->adv_done == f->adv_len;
		rr = htonl(n);
		if (last && f->module_rinv && chance(f, 2)) {
			struct hdr h = fz_hdr(f, MID_RDMA_RD_COMPL, 4);

			if (!fz_wait_credit(f, 1000) ||
			    !fz_send(f, &h, &rr, 4, h.len, true, f->adv_rkey,
				     "RdmaRdCompl, invalidating"))
				return;
		} else if (!fz_valid(f, MID_RDMA_RD_COMPL, &rr, 4,
				     "RdmaRdCompl")) {
			return;
		}
		if (!polite && chance(f, 2))
			break;
	}
	if (f->adv_done == f->adv_len) {
		f->adv = false;
		f->old_rkey = f->adv_rkey;
		f->old_vaddr = f->adv_vaddr;
	}
}

/* Our own SrcAvail: a valid one, or a bad one of many kinds. */
static void fz_srcavail(struct fz *f, bool valid)
{
	struct srcah sa;
	struct hdr h;
	uint32_t len = rnd(f, 1, FZ_ADVBUF);
	uint32_t rkey = f->mr->rkey;
	uint64_t vaddr = (uintptr_t)(f->buf + FZ_ADVBUF);
	size_t extra = 0;
	const char *what = "SrcAvail";

	if (!valid || f->our_adv) {
		f->dirty = true;
		f->mutated++;
		switch (rnd(f, 0, 9)) {
		case 0: len = 0; what = "SrcAvail of 0 bytes"; break;
		case 1: len = SDP_ZC_MAX_BYTES + rnd(f, 1, 4096);
			what = "SrcAvail too long"; break;
		case 2: rkey = (uint32_t)rng_next(&f->rng);
			what = "SrcAvail, random key"; break;
		case 3: rkey = f->stale_rkey; vaddr = f->stale_vaddr;
			what = "SrcAvail, stale key"; break;
		case 4: vaddr += FZ_BUF; what = "SrcAvail past the key"; break;
		case 5: vaddr = rng_next(&f->rng); what = "SrcAvail, random address";
			break;
		case 6: len = FZ_BUF; what = "SrcAvail longer than the key";
			break;
		case 7: extra = rnd(f, 1, 64); what = "SrcAvail with inline data";
			break;
		case 8: len = (uint32_t)rng_next(&f->rng);
			what = "SrcAvail, random length"; break;
		default: what = "second SrcAvail"; break;
		}
	}
	sa.len = htonl(len);
	sa.rkey = htonl(rkey);
	sa.vaddr = htobe64(vaddr);
	h = fz_hdr(f, MID_SRCAVAIL, sizeof(sa) + extra);
	if (f->broken || f->gone || !fz_wait_credit(f, 1000))
		return;
	if (fz_send(f, &h, &sa, sizeof(sa), h.len, false, 0, what)) {
		f->our_adv = true;
		f->our_len = len;
		f->our_read = 0;
	}
}

/* A message with one or more header fields mutated. */
static void fz_mutant(struct fz *f)
{
	static const uint8_t mids[] = {
		MID_DATA, MID_DISCONN, MID_ABORT, MID_SENDSM, 0x05,
		MID_RDMA_RD_COMPL, MID_MODE_CHANGE, MID_SRCAVAIL_CANCEL, 0x09,
		0x0a, MID_CHRCVBUF, MID_CHRCVBUF_ACK, 0x0d, 0x0e,
		MID_SINKAVAIL, MID_SRCAVAIL, MID_HELLO, MID_HELLO_ACK,
	};
	size_t paylen = rng_size(&f->rng, 256) - 1;
	uint8_t mid = chance(f, 5) ? (uint8_t)rng_next(&f->rng) :
		      mids[rnd(f, 0, sizeof(mids) - 1)];
	struct hdr h = fz_hdr(f, mid, paylen);
	size_t wire = h.len;
	unsigned int fields = 0, i, n = rnd(f, 1, 3);
	char what[128] = "mutant:";

	if (mid == MID_DATA && chance(f, 2))
		fields |= 1 << rnd(f, 1, 6);	/* mid kept, another field */
	for (i = 0; i < n; i++)
		fields |= 1 << rnd(f, 0, 6);
	if (fields & 1) {
		strcat(what, " mid");
		h.mid = (uint8_t)rng_next(&f->rng);
	}
	if (fields & 2) {
		strcat(what, " flags");
		h.flags = (uint8_t)rng_next(&f->rng);
	}
	if (fields & 4) {
		static const uint16_t b[] = { 0, 1, 0xffff, 0x8000, 256 };

		strcat(what, " bufs");
		h.bufs = chance(f, 2) ? b[rnd(f, 0, 4)] : (uint16_t)rng_next(&f->rng);
	}
	if (fields & 8) {
		strcat(what, " len");
		switch (rnd(f, 0, 5)) {
		case 0: h.len = 0; break;
		case 1: h.len = rnd(f, 1, 15); break;
		case 2: h.len--; break;
		case 3: h.len++; break;
		case 4: h.len = 0xffffffff; break;
		default: h.len = (uint32_t)rng_next(&f->rng); break;
		}
	}
	if (fields & 16) {
		strcat(what, " mseq");
		switch (rnd(f, 0, 5)) {
		case 0: h.mseq = f->tx; break;		/* duplicate */
		case 1: h.mseq = f->tx + 2; break;	/* one skipped */
		case 2: h.mseq = f->tx - 1; break;
		case 3: h.mseq = f->win + rnd(f, 1, 64); break;
		case 4: h.mseq = 0; break;
		default: h.mseq = (uint32_t)rng_next(&f->rng); break;
		}
	}
	if (fields & 32) {
		strcat(what, " mseq_ack");
		switch (rnd(f, 0, 3)) {
		case 0: h.mseq_ack = f->rx_last + rnd(f, 1, 1000); break;
		case 1: h.mseq_ack = 0xffffffff; break;
		case 2: h.mseq_ack = f->rx_last ? f->rx_last - 1 : 0; break;
		default: h.mseq_ack = (uint32_t)rng_next(&f->rng); break;
		}
	}
	if (fields & 64) {
		strcat(what, " wire");
		switch (rnd(f, 0, 3)) {
		case 0: wire = rnd(f, 0, wire); break;		/* truncated */
		case 1: wire += rnd(f, 1, 64); break;		/* trailing */
		case 2: wire = f->rcvsz + rnd(f, 1, 4096); break; /* too big */
		default: wire = rnd(f, 0, 15); break;		/* short */
		}
		if (wire < sizeof(struct bsdh) && paylen)
			paylen = 0;
	}
	f->dirty = true;
	f->mutated++;
	if (f->broken || f->gone)
		return;
	fz_send(f, &h, NULL, paylen, wire, false, 0, what);
}

/* A misbehaving answer to the module's SrcAvail, or something bogus. */
static void fz_zc_bad(struct fz *f)
{
	uint32_t rr = htonl(rnd(f, 0, 2 * FZ_CHUNK));
	struct hdr h;

	f->dirty = true;
	f->mutated++;
	switch (rnd(f, 0, 7)) {
	case 0:
		if (f->adv) {
			uint32_t off = f->adv_len > 16 ? f->adv_len - 16 : 0;

			fz_read(f, f->adv_vaddr + off, f->adv_rkey,
				f->adv_len - off + 16,
				"past the advertised range");
			break;
		}
		/* fall through */
	case 1:
		if (f->adv) {
			tr(f, "-> RDMA write 16 bytes through the read-only key");
			fz_post(f, IBV_WR_RDMA_WRITE, f->buf + FZ_RDBUF,
				f->mr->lkey, 16, f->adv_vaddr, f->adv_rkey,
				false, 0);
			fz_sends_done(f, PEER_WAIT_MS);
			break;
		}
		/* fall through */
	case 2:
		if (f->old_rkey) {
			fz_read(f, f->old_vaddr, f->old_rkey, 4096,
				"through a stale key");
			break;
		}
		/* fall through */
	case 3:
		fz_read(f, rng_next(&f->rng), (uint32_t)rng_next(&f->rng),
			rnd(f, 1, 4096), "random key");
		break;
	case 4:
		fz_valid(f, MID_RDMA_RD_COMPL, &rr, 4, "RdmaRdCompl, random length");
		break;
	case 5:
		fz_valid(f, MID_SENDSM, NULL, 0, "SendSM");
		break;
	case 6:
		fz_valid(f, MID_SRCAVAIL_CANCEL, NULL, 0, "SrcAvailCancel");
		break;
	default:
		h = fz_hdr(f, chance(f, 2) ? MID_RDMA_RD_COMPL : MID_DATA, 4);
		rr = htonl(f->adv ? f->adv_len - f->adv_done : 1);
		if (!f->broken && !f->gone && fz_wait_credit(f, 1000))
			fz_send(f, &h, &rr, 4, h.len, true,
				chance(f, 2) ? f->adv_rkey + 1 :
				(uint32_t)rng_next(&f->rng),
				"SEND with Invalidate of a wrong key");
		break;
	}
}

/* Valid messages beyond the credits, back to back. */
static void fz_burst(struct fz *f)
{
	unsigned int n = (f->win - f->tx) + rnd(f, 1, 4), i;

	f->dirty = true;
	f->mutated++;
	if (n > 32)
		n = 32;
	for (i = 0; i < n && !f->broken && !f->gone; i++) {
		struct hdr h = fz_hdr(f, MID_DATA, 8);

		fz_send(f, &h, NULL, 8, h.len, false, 0, "burst");
	}
}

/* Drop our QP (the module's side is not told). */
static void fz_destroy_qp(struct fz *f)
{
	struct peer *p = &f->p;

	if (!p->qp)
		return;
	tr(f, "destroy our QP");
	rdma_destroy_qp(p->id);
	p->qp = false;
	f->broken = true;
}

static void fz_teardown(struct fz *f)
{
	struct peer *p = &f->p;

	fz_destroy_qp(f);
	if (f->stale)
		ibv_dereg_mr(f->stale);
	f->stale = NULL;
	if (f->mr)
		CHECK(ibv_dereg_mr(f->mr) == 0, "ibv_dereg_mr");
	f->mr = NULL;
	if (p->mr)
		CHECK(ibv_dereg_mr(p->mr) == 0, "ibv_dereg_mr");
	p->mr = NULL;
	if (p->cq)
		CHECK(ibv_destroy_cq(p->cq) == 0, "ibv_destroy_cq");
	p->cq = NULL;
	if (p->pd)
		CHECK(ibv_dealloc_pd(p->pd) == 0, "ibv_dealloc_pd");
	p->pd = NULL;
	if (p->id)
		CHECK(rdma_destroy_id(p->id) == 0, "rdma_destroy_id: %s",
		      strerror(errno));
	p->id = NULL;
	if (p->ec)
		rdma_destroy_event_channel(p->ec);
	p->ec = NULL;
	f->gone = true;
}

static void fz_end(struct fz *f, enum ending e)
{
	tr(f, "ending: %s", ending_names[e]);
	switch (e) {
	case END_ORDERLY:
		if (!f->sent_disconn &&
		    fz_valid(f, MID_DISCONN, NULL, 0, "DisConn"))
			f->sent_disconn = true;
		/* The module answers once its socket is closed. */
		for (long long end = now_ms() + 2000;
		     !f->got_disconn && !f->gone && now_ms() < end;)
			fz_pump(f, 2);
		if (!f->gone)
			rdma_disconnect(f->p.id);
		fz_pump(f, rnd(f, 0, 200));
		fz_teardown(f);
		break;
	case END_ABORT:
		fz_valid(f, MID_ABORT, NULL, 0, "AbortConn");
		fz_sends_done(f, 1000);
		if (chance(f, 2))
			rdma_disconnect(f->p.id);
		fz_teardown(f);
		break;
	case END_DISCONNECT:
		rdma_disconnect(f->p.id);
		fz_pump(f, rnd(f, 0, 300));
		fz_teardown(f);
		break;
	case END_DESTROY_QP:
		fz_destroy_qp(f);
		fz_pump(f, rnd(f, 0, 1500));
		fz_teardown(f);
		break;
	case END_EXIT:
	case END_NONE:
		fflush(stdout);
		_exit(0);
	}
}

/* Tell the test process @c; wait for its answer @want, pumping. */
static bool fz_handshake(struct fz *f, char c, char want)
{
	long long end = now_ms() + FZ_SEQ_MAX_MS + 2 * FZ_SLACK_MS;
	char got;

	CHECK(write(f->out, &c, 1) == 1, "pipe: %s", strerror(errno));
	while (now_ms() < end) {
		struct pollfd pfd = { .fd = f->in, .events = POLLIN };

		if (poll(&pfd, 1, 0) > 0) {
			if (read(f->in, &got, 1) != 1)
				return false;	/* the test process failed */
			CHECK(got == want, "pipe: %c, expected %c", got, want);
			return true;
		}
		fz_pump(f, 2);
		if (f->polite)
			fz_answer_adv(f, true);
		if (f->rx_since_tx >= 4 && !f->broken && !f->gone &&
		    (f->polite || chance(f, 2)))
			fz_valid(f, MID_DATA, NULL, 0, "credit update");
	}
	return false;
}

static void peer_session(struct fz *f, const struct sockaddr_storage *addr,
			 const uint8_t *mark)
{
	struct peer *p = &f->p;
	enum ending end = rnd(f, 0, 9) < 6 ? (enum ending)rnd(f, 0, END_EXIT) :
			  END_ORDERLY;
	unsigned int steps = rnd(f, 0, 24), s;
	long long stop;
	char st;

	alarm(FZ_PEER_MAX_S);
	memset(p, 0, sizeof(*p));
	p->sock = -1;
	p->listener = -1;
	p->addr = *addr;
	p->completion_errors_ok = true;
	p->hello_flags = chance(f, 2) ? HF_RESIZE : 0;
	tr(f, "%s session, %u steps, ending: %s, Hello flags %#x",
	   f->polite ? "polite" : "hostile", steps, ending_names[end],
	   p->hello_flags);
	peer_start(p, NULL);
	peer_established(p);
	f->win = ntohs(p->ha.bsdh.bufs);
	f->rcvsz = ntohl(p->ha.actrcvsz);
	f->module_rinv = p->ha.flags & HF_RINV;
	if (f->rcvsz > PEER_BIG)
		f->rcvsz = PEER_BIG;
	f->buf = aligned_alloc(4096, FZ_BUF);
	CHECK(f->buf, "out of memory");
	memset(f->buf, 0x5a, FZ_BUF);
	f->mr = ibv_reg_mr(p->pd, f->buf, FZ_BUF, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	CHECK(f->mr, "ibv_reg_mr: %s", strerror(errno));
	/* A key that was valid once: registered, then gone. */
	f->stale = ibv_reg_mr(p->pd, f->buf + FZ_ADVBUF, 4096,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(f->stale, "ibv_reg_mr: %s", strerror(errno));
	f->stale_rkey = f->stale->rkey;
	f->stale_vaddr = (uintptr_t)(f->buf + FZ_ADVBUF);
	ibv_dereg_mr(f->stale);
	f->stale = NULL;
	tr(f, "established: %u credits, %u-byte buffers, HelloAck flags %#x",
	   f->win, f->rcvsz, p->ha.flags);

	stop = now_ms() + FZ_SEQ_MAX_MS;
	for (s = 0; s < steps && now_ms() < stop; s++) {
		unsigned int c = rnd(f, 0, 99);

		fz_pump(f, 0);
		if (f->polite || c < 30) {
			if (f->adv && chance(f, 2))
				fz_answer_adv(f, f->polite);
			else if (chance(f, 6))
				fz_valid(f, MID_DATA, NULL, 0, "credit update");
			else if (chance(f, 8) && !f->our_adv)
				fz_srcavail(f, true);
			else if (chance(f, 4))
				fz_data(f, f->rcvsz);
			else
				fz_data(f, 512);
		} else if (c < 55) {
			fz_mutant(f);
		} else if (c < 65) {
			fz_srcavail(f, chance(f, 4));
		} else if (c < 75) {
			if (f->adv && chance(f, 2))
				fz_answer_adv(f, false);
			else
				fz_zc_bad(f);
		} else if (c < 79) {
			fz_burst(f);
		} else if (c < 82) {
			/* A duplicate of the last message, as it was. */
			struct hdr h = fz_hdr(f, MID_DATA, 4);

			h.mseq = f->tx;
			f->dirty = true;
			f->mutated++;
			if (!f->broken && !f->gone)
				fz_send(f, &h, NULL, 4, h.len, false, 0,
					"duplicate mseq");
		} else if (c < 84) {
			if (fz_valid(f, MID_DISCONN, NULL, 0, "DisConn")) {
				f->sent_disconn = true;
				f->dirty = true;
			}
		} else if (c < 86) {
			f->dirty = true;
			fz_valid(f, MID_ABORT, NULL, 0, "AbortConn");
		} else if (c < 88) {
			/* An abrupt end in the middle of it all. */
			f->dirty = true;
			end = (enum ending)rnd(f, END_ABORT, END_EXIT);
			tr(f, "abrupt end now");
			fz_end(f, end);
			end = END_NONE;
			break;
		} else {
			fz_pump(f, rnd(f, 1, 300));
		}
	}
	fz_pump(f, rnd(f, 0, 100));
	tr(f, "sequence over: %lu messages, %lu mutated, %s%s%s%s", f->msgs,
	   f->mutated, f->dirty ? "dirty" : "clean", f->broken ? ", QP broken" : "",
	   f->gone ? ", disconnected" : "", f->got_abort ? ", aborted" : "");
	if (!fz_handshake(f, ST_SEQ_DONE, GO_FINAL))
		_exit(0);

	/* The marker, as valid Data, if the QP can carry it. */
	st = ST_NOPING;
	if (end != END_NONE && !f->broken && !f->gone && !f->got_abort &&
	    !f->sent_disconn) {
		if (f->polite)
			fz_answer_adv(f, true);
		if (fz_valid(f, MID_DATA, mark, FZ_MARK_LEN, "marker"))
			st = f->dirty ? ST_PING : ST_CLEAN;
		else
			tr(f, "no credit for the marker");
	}
	if (!fz_handshake(f, st, GO_END))
		_exit(0);
	if (end != END_NONE)
		fz_end(f, end);
	free(f->buf);
	fflush(stdout);
	_exit(0);
}

/* ---- The module's socket (a thread of the test process) ------------ */

struct app {
	int fd;
	struct rng rng;
	int timeo_ms;
	volatile bool stop;
	const char *volatile op;	/* the call under way */
	volatile long long op_start;
	bool closed, shut_rd, shut_wr, eof;
	int reset;			/* the first reset error seen */
	char fail[256];
	unsigned long calls;
	unsigned long long sent, rcvd;
	char *buf;
};

#define APP_BUF	(256 * 1024)

static bool one_of(int e, const int *set, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (e == set[i])
			return true;
	return false;
}

#define ONE_OF(e, ...) \
	one_of(e, (const int[]){ __VA_ARGS__ }, \
	       sizeof((const int[]){ __VA_ARGS__ }) / sizeof(int))

static void app_failf(struct app *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void app_failf(struct app *a, const char *fmt, ...)
{
	va_list ap;

	if (a->fail[0])
		return;
	va_start(ap, fmt);
	vsnprintf(a->fail, sizeof(a->fail), fmt, ap);
	va_end(ap);
}

static void app_begin(struct app *a, const char *op)
{
	a->op_start = now_ms();
	a->op = op;
	a->calls++;
}

static void app_end(struct app *a, int bound_ms)
{
	long long took = now_ms() - a->op_start;

	if (took > bound_ms + FZ_SLACK_MS)
		app_failf(a, "%s took %lld ms (bound %d ms)", a->op, took,
			  bound_ms);
	a->op = NULL;
}

static void app_reset(struct app *a, int e)
{
	/* EPIPE after our own shutdown(SHUT_WR) is no reset. */
	if (e == EPIPE && a->shut_wr)
		return;
	if (!a->reset)
		a->reset = e;
}

static void app_send(struct app *a)
{
	size_t len = rng_size(&a->rng, APP_BUF);
	int flags = MSG_NOSIGNAL | (rng_range(&a->rng, 0, 3) ? 0 : MSG_DONTWAIT);
	ssize_t n;
	int e;

	app_begin(a, "send");
	n = send(a->fd, a->buf, len, flags);
	e = errno;
	app_end(a, a->timeo_ms + SDP_ZC_ADVERT_MAX_MS);
	if (n >= 0) {
		if ((size_t)n > len || (n == 0 && len))
			app_failf(a, "send(%zu) returned %zd", len, n);
		a->sent += n;
	} else if (!ONE_OF(e, EAGAIN, EPIPE, ECONNRESET, ETIMEDOUT)) {
		app_failf(a, "send(%zu, %#x): %s", len, flags, errname(e));
	} else if (e != EAGAIN) {
		app_reset(a, e);
	}
}

static void app_recv(struct app *a)
{
	static const int fl[] = { 0, MSG_DONTWAIT, MSG_PEEK | MSG_DONTWAIT,
				  MSG_WAITALL, MSG_PEEK };
	size_t len = rng_size(&a->rng, APP_BUF);
	int flags = fl[rng_range(&a->rng, 0, 4)];
	ssize_t n;
	int e;

	app_begin(a, "recv");
	n = recv(a->fd, a->buf, len, flags);
	e = errno;
	app_end(a, a->timeo_ms);
	if (n > 0) {
		if ((size_t)n > len)
			app_failf(a, "recv(%zu) returned %zd", len, n);
		if (!(flags & MSG_PEEK))
			a->rcvd += n;
	} else if (n == 0) {
		a->eof = true;
	} else if (!ONE_OF(e, EAGAIN, ECONNRESET, ETIMEDOUT)) {
		app_failf(a, "recv(%zu, %#x): %s", len, flags, errname(e));
	} else if (e != EAGAIN) {
		app_reset(a, e);
	}
	/* Put the pattern back for the sends. */
	if (n > 0)
		memset(a->buf, 0xa5, n < (ssize_t)len ? (size_t)n : len);
}

static void app_poll(struct app *a)
{
	struct pollfd pfd = { .fd = a->fd,
			      .events = POLLIN | POLLOUT | POLLRDHUP };
	int ms = rng_range(&a->rng, 0, 200), r;

	app_begin(a, "poll");
	r = poll(&pfd, 1, ms);
	app_end(a, ms);
	if (r < 0 || (r > 0 && (pfd.revents & POLLNVAL)))
		app_failf(a, "poll: %d revents %#x (%s)", r, pfd.revents,
			  errname(errno));
}

static void app_so_error(struct app *a)
{
	int v = 0;
	socklen_t len = sizeof(v);

	app_begin(a, "getsockopt(SO_ERROR)");
	if (getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &v, &len))
		app_failf(a, "SO_ERROR: %s", errname(errno));
	app_end(a, 0);
	if (v && !ONE_OF(v, ECONNRESET, ETIMEDOUT, EPIPE))
		app_failf(a, "SO_ERROR %s", errname(v));
	if (v)
		app_reset(a, v);
}

static void app_shutdown(struct app *a)
{
	int how = rng_range(&a->rng, SHUT_RD, SHUT_RDWR), r, e;

	app_begin(a, "shutdown");
	r = shutdown(a->fd, how);
	e = errno;
	app_end(a, 0);
	if (r && !ONE_OF(e, ENOTCONN))
		app_failf(a, "shutdown(%d): %s", how, errname(e));
	if (!r) {
		a->shut_rd |= how != SHUT_WR;
		a->shut_wr |= how != SHUT_RD;
	}
}

static void *app_fn(void *arg)
{
	struct app *a = arg;

	while (!a->stop && !a->fail[0] && !a->closed) {
		unsigned int c = rng_range(&a->rng, 0, 199);

		if (c < 60) {
			app_send(a);
		} else if (c < 130) {
			app_recv(a);
		} else if (c < 160) {
			app_poll(a);
		} else if (c < 175) {
			app_so_error(a);
		} else if (c < 178) {
			app_shutdown(a);
		} else if (c < 179) {
			app_begin(a, "close");
			if (close(a->fd))
				app_failf(a, "close: %s", errname(errno));
			app_end(a, 0);
			a->fd = -1;
			a->closed = true;
		} else {
			sleep_ms_poll(rng_range(&a->rng, 1, 30));
		}
	}
	return NULL;
}

/* ---- One session, from the test process ---------------------------- */

struct session {
	unsigned long idx;
	uint64_t seed;
	pid_t pid;
	int out_fd;		/* the peer's trace */
	int to_peer, from_peer;
	struct app *app;
};

static void show_trace(const struct session *s)
{
	char buf[4096];
	ssize_t n;
	off_t off = 0;

	tap_diag("---- what the peer did ----");
	while ((n = pread(s->out_fd, buf, sizeof(buf) - 1, off)) > 0) {
		buf[n] = '\0';
		fputs(buf, stdout);
		off += n;
	}
	fflush(stdout);
	tap_diag("---- end of the peer's trace ----");
}

static void session_fail(struct session *s, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

static void session_fail(struct session *s, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (s->pid > 0)
		kill(s->pid, SIGKILL);
	show_trace(s);
	if (s->app)
		tap_diag("socket: %lu calls, %llu bytes sent, %llu received, reset %s%s%s%s",
			 s->app->calls, s->app->sent, s->app->rcvd,
			 errname(s->app->reset), s->app->closed ? ", closed" : "",
			 s->app->shut_rd ? ", shut RD" : "",
			 s->app->shut_wr ? ", shut WR" : "");
	tap_fail(__FILE__, __LINE__,
		 "peerfuzz session %lu (session seed %#llx) of seed %llu: %s; replay: SDP_FUZZ_SEED=%llu SDP_FUZZ_SESSION=%lu tests/bin/peerfuzz",
		 s->idx, (unsigned long long)s->seed,
		 (unsigned long long)G.seed, msg, (unsigned long long)G.seed,
		 s->idx);
}

/* Read one status byte from the peer within @ms: the byte, 0 on EOF, -1 on timeout. */
static int from_peer(struct session *s, int ms)
{
	int r = wait_fd(s->from_peer, POLLIN, ms);
	char c;

	if (r <= 0)
		return -1;
	if (read(s->from_peer, &c, 1) != 1)
		return 0;
	return (unsigned char)c;
}

static void to_peer(struct session *s, char c)
{
	/* The peer may be gone (an abrupt end): EPIPE is fine. */
	if (write(s->to_peer, &c, 1) != 1 && errno != EPIPE)
		session_fail(s, "pipe to the peer: %s", strerror(errno));
}

/*
 * Wait for the peer process; its exit status must be clean.  Once: a peer
 * whose connection was never accepted may have been reaped already.
 */
static void reap_peer(struct session *s)
{
	long long end = now_ms() + (FZ_PEER_MAX_S + 10) * 1000LL;
	int status;
	pid_t r;

	if (!s->pid)
		return;
	while ((r = waitpid(s->pid, &status, WNOHANG)) == 0 && now_ms() < end)
		sleep_ms_poll(5);
	if (r == 0)
		session_fail(s, "the peer process did not end");
	CHECK(r == s->pid, "waitpid: %s", strerror(errno));
	s->pid = 0;
	if (WIFSIGNALED(status))
		session_fail(s, "the peer process was killed by signal %d%s",
			     WTERMSIG(status), WTERMSIG(status) == SIGALRM ?
			     " (its alarm: it hung)" : "");
	if (WEXITSTATUS(status))
		session_fail(s, "the peer process failed (exit %d): see its trace",
			     WEXITSTATUS(status));
}

static bool find_mark(const char *hay, size_t len, const uint8_t *mark)
{
	return memmem(hay, len, mark, FZ_MARK_LEN) != NULL;
}

/*
 * Read the socket until the marker, the end (EOF or a reset), or the peer
 * telling that it sent nothing; what was seen goes to *@marked / *@ended.
 * The peer's status byte goes to *@st.
 */
static void final_read(struct session *s, int fd, const uint8_t *mark,
		       int *st, bool *marked, bool *ended, bool stop_at_status)
{
	static char buf[APP_BUF + FZ_MARK_LEN];
	long long end = now_ms() + FZ_END_MS;
	size_t keep = 0;

	while (now_ms() < end) {
		struct pollfd pfd[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = s->from_peer, .events = POLLIN },
		};
		ssize_t n;

		if (*st < 0 && poll(&pfd[1], 1, 0) > 0)
			*st = from_peer(s, 0);
		if (*marked || *ended)
			break;
		if (*st >= 0 && (*st != ST_CLEAN && *st != ST_PING) &&
		    stop_at_status)
			break;
		if (fd < 0) {
			sleep_ms_poll(5);
			continue;
		}
		n = recv(fd, buf + keep, APP_BUF, MSG_DONTWAIT);
		if (n > 0) {
			size_t have = keep + n, tail;

			*marked = find_mark(buf, have, mark);
			/* Keep the last bytes, in case the marker straddles. */
			tail = have < FZ_MARK_LEN ? have : FZ_MARK_LEN - 1;
			memmove(buf, buf + have - tail, tail);
			keep = tail;
			continue;
		}
		if (n == 0) {
			*ended = true;
			break;
		}
		if (errno == EAGAIN) {
			poll(pfd, 2, 20);
			continue;
		}
		if (!ONE_OF(errno, ECONNRESET, ETIMEDOUT, EPIPE))
			session_fail(s, "recv at the end: %s", errname(errno));
		s->app->reset = s->app->reset ? s->app->reset : errno;
		*ended = true;
		break;
	}
}

static char bad_kline[256];

/* kmsg_read(): remember the first report of a kernel bug. */
static bool kernel_bug(void *arg, const char *text, size_t len)
{
	static const char *const needles[] = {
		"Oops", "BUG:", "WARNING:", "KASAN:", "UBSAN:",
		"kernel BUG at", "general protection fault",
		"possible recursive locking", "possible circular locking",
		"blocked for more than", "refcount_t:",
	};
	char line[256];
	size_t i;

	(void)arg;
	snprintf(line, sizeof(line), "%.*s", (int)len, text);
	for (i = 0; i < sizeof(needles) / sizeof(needles[0]); i++) {
		if (strstr(line, needles[i])) {
			snprintf(bad_kline, sizeof(bad_kline), "%s", line);
			return true;
		}
	}
	return false;
}

static bool sockets_at_base(void *arg)
{
	int n = proc_net_sdp_count();

	(void)arg;
	return n >= 0 && n <= G.base_sockets;
}

/* After the peer is gone the socket must show the end: EOF or a reset. */
static void expect_end(struct session *s, int fd)
{
	static char buf[APP_BUF];
	long long end = now_ms() + FZ_END_MS;
	ssize_t n;

	while (now_ms() < end) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0)
			return;
		if (n > 0)
			continue;
		if (errno != EAGAIN) {
			if (!ONE_OF(errno, ECONNRESET, ETIMEDOUT, EPIPE))
				session_fail(s, "recv after the peer went: %s",
					     errname(errno));
			G.resets++;
			return;
		}
		wait_fd(fd, POLLIN, 50);
	}
	session_fail(s, "the peer is gone, and after %d ms the socket still shows neither EOF nor a reset (poll %#x, SO_ERROR %s)",
		     FZ_END_MS, wait_fd(fd, POLLIN | POLLOUT, 0),
		     errname(sockopt_get(fd, SOL_SOCKET, SO_ERROR)));
}

static void run_session(unsigned long idx)
{
	struct session s = { .idx = idx, .out_fd = -1 };
	struct sockaddr_storage addr;
	static struct app a;
	uint8_t mark[FZ_MARK_LEN];
	uint64_t peer_seed, app_seed;
	int listener, sock, p2c[2], c2p[2], c, st = -1, i;
	bool polite, marked = false, ended = false;
	struct timeval tv;
	struct rdma_res now;
	char got[128], want[128];
	pthread_t t;
	struct rng r;

	rng_seed(&r, G.seed ^ (idx * 0x9e3779b97f4a7c15ULL));
	s.seed = rng_next(&r);
	rng_seed(&r, s.seed);
	polite = rng_range(&r, 0, 2) == 0;
	for (i = 0; i < FZ_MARK_LEN; i++)
		mark[i] = (uint8_t)rng_next(&r);
	peer_seed = rng_next(&r);
	app_seed = rng_next(&r);

	listener = net_listener(&addr, 4, 0);
	s.out_fd = memfd_create("peerfuzz-trace", MFD_CLOEXEC);
	CHECK(s.out_fd >= 0, "memfd_create: %s", strerror(errno));
	CHECK(pipe2(p2c, O_CLOEXEC) == 0 && pipe2(c2p, O_CLOEXEC) == 0,
	      "pipe2: %s", strerror(errno));
	fflush(stdout);
	s.pid = fork();
	CHECK(s.pid >= 0, "fork: %s", strerror(errno));
	if (s.pid == 0) {
		struct fz *f = calloc(1, sizeof(*f));

		CHECK(f, "out of memory");
		close(listener);
		close(p2c[1]);
		close(c2p[0]);
		if (dup2(s.out_fd, STDOUT_FILENO) < 0)
			_exit(2);
		f->in = p2c[0];
		f->out = c2p[1];
		f->polite = polite;
		f->t0 = now_ms();
		rng_seed(&f->rng, peer_seed);
		peer_session(f, &addr, mark);
		_exit(0);
	}
	close(p2c[0]);
	close(c2p[1]);
	s.to_peer = p2c[1];
	s.from_peer = c2p[0];

	/*
	 * The peer connects; the module's socket is accepted.  A connection
	 * the peer broke before the module had it in the accept queue is
	 * never accepted (sdp.rst, "Aborts and protocol errors"): the peer
	 * may finish its sequence first.
	 */
	{
		struct pollfd pf[2] = {
			{ .fd = listener, .events = POLLIN },
			{ .fd = s.from_peer, .events = POLLIN },
		};

		c = -1;
		if (poll(pf, 2, FZ_SEQ_MAX_MS + 4 * PEER_WAIT_MS) <= 0)
			session_fail(&s, "no connection to accept, no word from the peer");
		if (!(pf[0].revents & POLLIN)) {
			c = from_peer(&s, 0);
			if (wait_fd(listener, POLLIN, 2000) <= 0) {
				if (c == 0)
					reap_peer(&s);
				if (polite)
					session_fail(&s, "a polite peer's connection was not accepted");
				G.unaccepted++;
			}
		}
	}
	sock = -1;
	if (wait_fd(listener, POLLIN, 0) > 0) {
		sock = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
		if (sock < 0)
			session_fail(&s, "accept: %s", errname(errno));
	}

	memset(&a, 0, sizeof(a));
	s.app = &a;
	rng_seed(&a.rng, app_seed);
	a.fd = sock;
	a.closed = sock < 0;
	a.timeo_ms = rng_range(&a.rng, 20, 1000);
	if (sock >= 0) {
		tv.tv_sec = a.timeo_ms / 1000;
		tv.tv_usec = a.timeo_ms % 1000 * 1000;
		CHECK_OK(setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
		CHECK_OK(setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
		if (rng_range(&a.rng, 0, 2) == 0)
			sockopt_set(sock, SOL_SDP, SDP_ZCOPY_THRESH, 4096);
	}
	a.buf = xmalloc(APP_BUF);
	memset(a.buf, 0xa5, APP_BUF);
	CHECK(!pthread_create(&t, NULL, app_fn, &a), "pthread_create");

	/* The peer's sequence, the socket's user racing with it. */
	if (c < 0)
		c = from_peer(&s, FZ_SEQ_MAX_MS + 4 * PEER_WAIT_MS);
	a.stop = true;
	if (join_ms(t, a.timeo_ms + SDP_ZC_ADVERT_MAX_MS + FZ_SLACK_MS))
		session_fail(&s, "socket call %s has not returned after %lld ms",
			     a.op ? a.op : "?", now_ms() - a.op_start);
	if (a.fail[0])
		session_fail(&s, "%s", a.fail);
	if (c < 0)
		session_fail(&s, "the peer's sequence did not end");
	sock = a.closed ? -1 : a.fd;
	G.calls += a.calls;

	if (c == ST_SEQ_DONE) {
		to_peer(&s, GO_FINAL);
		final_read(&s, sock, mark, &st, &marked, &ended, true);
		/* The socket ended before the peer told: wait for its word. */
		if (st < 0)
			st = from_peer(&s, FZ_END_MS);
		if (st < 0)
			session_fail(&s, "no word from the peer after its sequence");
		if ((st == ST_CLEAN || st == ST_PING) && sock >= 0 &&
		    !a.shut_rd && !marked && !ended)
			session_fail(&s, "the socket neither read the marker nor reported the end within %d ms%s",
				     FZ_END_MS, st == ST_CLEAN ? " (polite peer)" : "");
		if (st == ST_CLEAN && sock >= 0 && !a.shut_rd) {
			if (!marked)
				session_fail(&s, "a polite peer's marker did not arrive (%s)",
					     ended ? "the socket ended" : "?");
			if (a.reset)
				session_fail(&s, "a polite peer, and a call got %s",
					     errname(a.reset));
		}
		G.pings += st == ST_CLEAN || st == ST_PING;
		G.marks += marked;
		G.polite += st == ST_CLEAN;
		if (st > 0)
			to_peer(&s, GO_END);
	}
	G.resets += a.reset != 0;

	/* The peer ends its way; the socket is closed before or after. */
	if (sock >= 0 && rng_range(&r, 0, 1)) {
		CHECK(close(sock) == 0, "close: %s", strerror(errno));
		sock = -1;
	}
	reap_peer(&s);
	if (sock >= 0 && !a.shut_rd && !ended)
		expect_end(&s, sock);
	if (sock >= 0)
		CHECK(close(sock) == 0, "close: %s", strerror(errno));
	CHECK(close(listener) == 0, "close listener: %s", strerror(errno));
	close(s.to_peer);
	close(s.from_peer);
	free(a.buf);
	a.buf = NULL;

	/* Nothing may stay behind. */
	if (!wait_until(sockets_at_base, NULL, 3 * PEER_WAIT_MS))
		session_fail(&s, "/proc/net/sdp: %d sockets %d s after the session, %d before the run",
			     proc_net_sdp_count(), 3 * PEER_WAIT_MS / 1000,
			     G.base_sockets);
	if (!rdma_res_wait(&G.base_res, &now, 3 * PEER_WAIT_MS))
		session_fail(&s, "RDMA resources after the session: %s, before the run %s",
			     rdma_res_str(&now, got, sizeof(got)),
			     rdma_res_str(&G.base_res, want, sizeof(want)));
	if (kmsg_read(G.kmsg, kernel_bug, NULL))
		session_fail(&s, "the kernel logged: %s", bad_kline);
	close(s.out_fd);
	G.sessions++;
}

static int env_int(const char *name, int dflt, int lo, int hi)
{
	const char *v = getenv(name);
	int n = v && *v ? atoi(v) : dflt;

	CHECK(n >= lo && n <= hi, "%s=%s: not in %d..%d", name, v, lo, hi);
	return n;
}

static bool no_sockets(void *arg)
{
	(void)arg;
	return proc_net_sdp_count() == 0;
}

/*
 * Sessions of a hostile peer for SDP_FUZZ_SECONDS (see the top of the
 * file for what each does and what it must show).
 */
static void test_peer_fuzz(void)
{
	const char *seed = getenv("SDP_FUZZ_SEED");
	const char *only = getenv("SDP_FUZZ_SESSION");
	struct ibv_device **devs;
	long long end;
	unsigned long i;
	int left, n = 0;

	G.seconds = env_int("SDP_FUZZ_SECONDS", 30, 1, 24 * 3600);
	G.seed = seed && *seed ? strtoull(seed, NULL, 0) :
				 (uint64_t)now_us() ^ ((uint64_t)getpid() << 32);
	if (only && *only)
		G.only = strtol(only, NULL, 0);
	tap_diag("seed %llu (SDP_FUZZ_SEED=%llu replays the sessions; SDP_FUZZ_SESSION=N only session N), %d s",
		 (unsigned long long)G.seed, (unsigned long long)G.seed,
		 G.seconds);
	if (!test_is_sdp())
		tap_skip("SDP only: the peer speaks SDP over RDMA");
	devs = ibv_get_device_list(&n);
	if (devs)
		ibv_free_device_list(devs);
	if (n <= 0)
		tap_skip("no RDMA device for the user-space peer");
	/* The sessions, and the last one's checks, must fit the alarm. */
	left = alarm(0);
	alarm(left > G.seconds + 300 ? left : G.seconds + 300);
	signal(SIGPIPE, SIG_IGN);

	CHECK_OK(sdp_ensure_loaded());
	/* Earlier suites' sockets finish their close first. */
	if (!wait_until(no_sockets, NULL, 30000))
		tap_diag("%d SDP sockets from before are still there",
			 proc_net_sdp_count());
	G.base_sockets = proc_net_sdp_count();
	CHECK(rdma_res_read(&G.base_res) == 0, "rdma resource show failed");
	G.kmsg = kmsg_open();
	CHECK(G.kmsg >= 0, "/dev/kmsg: %s", strerror(errno));

	end = now_ms() + G.seconds * 1000LL;
	if (G.only >= 0)
		run_session(G.only);
	else
		for (i = 0; now_ms() < end; i++)
			run_session(i);
	tap_diag("%lu sessions (%lu polite) in %d s: %lu markers sent, %lu read; %lu sockets reset; %lu connections ended before accept; %lu socket calls",
		 G.sessions, G.polite, G.seconds, G.pings, G.marks, G.resets,
		 G.unaccepted, G.calls);
	CHECK(G.sessions > 0, "no session ran");
}

static const struct tap_test tests[] = {
	TAP_TEST(test_peer_fuzz),
};

TAP_MAIN(tests)
