// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- statistics: per-namespace counters,
 * /proc/net/sdp_stats, per-socket counters and the tracepoints.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * /proc/net/sdp_stats has one "Name value" line per counter of the
 * reader's network namespace, in the style of /proc/net/snmp6:
 *
 *   ActiveOpens                      3
 *   ActiveEstab                      2
 *   ...
 *
 * Every counter but the gauges CurrEstab, MemPages and HalfOpen only
 * grows, from 0 when the namespace (or the module) came up.
 * Documentation/networking/sdp.rst defines each.
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <uapi/linux/sdp.h>
#include <rdma/rdma_cm.h>

#include "sdp.h"
#include "sdp_conn.h"
#include "sdp_net.h"
#include "sdp_proto.h"
#include "sdp_stats.h"
#include "sdp_trace.h"

const char *const sdp_mib_names[SDP_MIB_MAX] = {
#define SDP_MIB(name, str) str,
#define SDP_MIB_ABORT(reason, str) str,
#include "sdp_mibs.h"
#undef SDP_MIB
#undef SDP_MIB_ABORT
};

/*
 * The counter of each abort reason (SDP_ABORT_REASON_*, uapi sdp_diag.h);
 * 0 marks a reason without one, which no abort counter can be.
 */
static_assert(SDP_MIB_ABORT_CLOSE > 0);
static const u8 sdp_abort_mib[] = {
#define SDP_MIB(name, str)
#define SDP_MIB_ABORT(reason, str) \
	[SDP_ABORT_REASON_##reason] = SDP_MIB_ABORT_##reason,
#include "sdp_mibs.h"
#undef SDP_MIB
#undef SDP_MIB_ABORT
};

/* Where each per-socket counter goes in the two uapi structs. */
static const struct sdp_sock_counter_out {
	u16 info;
	u16 diag;
} sdp_sock_counter_out[SDP_SOCK_NR_COUNTERS] = {
#define SDP_SOCK_COUNTER(name, info, diag) \
	{ offsetof(struct sdp_info, info), offsetof(struct sdp_diag_stats, diag) },
#include "sdp_sock_counters.h"
#undef SDP_SOCK_COUNTER
};

/*
 * Every field of both uapi structs is a listed counter, but for struct
 * sdp_info's last five (the transport and the stream positions, set by
 * getsockopt()).
 */
static_assert(offsetof(struct sdp_info, sdpi_transport) ==
	      SDP_SOCK_NR_COUNTERS * sizeof(__u64));
static_assert(sizeof(struct sdp_diag_stats) ==
	      SDP_SOCK_NR_COUNTERS * sizeof(__u64));

/* getsockopt(SDP_INFO); sdp_sock::lock held for a consistent copy. */
void sdp_stats_to_info(const struct sdp_sock_stats *st, struct sdp_info *info)
{
	int i;

	memset(info, 0, sizeof(*info));
	for (i = 0; i < SDP_SOCK_NR_COUNTERS; i++)
		*(__u64 *)((char *)info + sdp_sock_counter_out[i].info) =
			READ_ONCE(st->cnt[i]);
}

/* The SDP_DIAG_STATS attribute; no lock, a snapshot. */
void sdp_stats_to_diag(const struct sdp_sock_stats *st,
		       struct sdp_diag_stats *d)
{
	int i;

	for (i = 0; i < SDP_SOCK_NR_COUNTERS; i++)
		*(__u64 *)((char *)d + sdp_sock_counter_out[i].diag) =
			READ_ONCE(st->cnt[i]);
}

/* Sum the per-CPU counters of @net into @vals (SDP_MIB_MAX entries). */
void sdp_stats_fold(const struct net *net, u64 *vals)
{
	struct sdp_mib __percpu *mib = sdp_net(net)->mib;
	int cpu, i;

	memset(vals, 0, SDP_MIB_MAX * sizeof(*vals));
	for_each_possible_cpu(cpu) {
		const struct sdp_mib *m = per_cpu_ptr(mib, cpu);

		for (i = 0; i < SDP_MIB_MAX; i++)
			vals[i] += READ_ONCE(m->mibs[i]);
	}
	/* The gauges that sdp_mem.c keeps exact for its limits. */
	vals[SDP_MIB_MEM_PAGES] = atomic_long_read(&sdp_net(net)->mem_pages);
	vals[SDP_MIB_HALF_OPEN] = atomic_read(&sdp_net(net)->half_open);
}

static bool sdp_state_synchronized(int state)
{
	return (1 << state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT);
}

/*
 * Every state change (sdp_set_state()): the tracepoint, and the
 * connection counters that follow from the transition.  Any context.
 */
void sdp_stat_state(struct sock *sk, int oldstate, int newstate)
{
	struct net *net = sock_net(sk);

	trace_sdp_state_change(sk, oldstate, newstate);
	if (oldstate == newstate)
		return;

	switch (newstate) {
	case TCP_SYN_SENT:
		SDP_INC_STATS(net, SDP_MIB_ACTIVE_OPENS);
		break;
	case TCP_SYN_RECV:
		SDP_INC_STATS(net, SDP_MIB_PASSIVE_OPENS);
		break;
	case TCP_ESTABLISHED:
		if (oldstate == TCP_SYN_SENT)
			SDP_INC_STATS(net, SDP_MIB_ACTIVE_ESTAB);
		else if (oldstate == TCP_SYN_RECV)
			SDP_INC_STATS(net, SDP_MIB_PASSIVE_ESTAB);
		break;
	case TCP_CLOSE:
		/* A failed connect sets sk_err before the state changes. */
		if (oldstate == TCP_SYN_SENT)
			SDP_INC_STATS(net, READ_ONCE(sk->sk_err) == ECONNREFUSED ?
				      SDP_MIB_ACTIVE_REFUSED :
				      SDP_MIB_ACTIVE_FAILS);
		else if (oldstate == TCP_SYN_RECV)
			SDP_INC_STATS(net, SDP_MIB_PASSIVE_FAILS);
		break;
	}

	if (!sdp_state_synchronized(oldstate) &&
	    sdp_state_synchronized(newstate))
		SDP_INC_STATS(net, SDP_MIB_CURR_ESTAB);
	else if (sdp_state_synchronized(oldstate) &&
		 !sdp_state_synchronized(newstate))
		SDP_DEC_STATS(net, SDP_MIB_CURR_ESTAB);
}

/*
 * Record why the connection of @ssk is about to be aborted; called just
 * before the abort, so that only the first reason of a connection that
 * is not aborted or closed already counts.  Any context.
 */
void sdp_stat_abort(struct sdp_sock *ssk, enum sdp_abort_reason why)
{
	int state = READ_ONCE(ssk->sk.sk_state);

	if (why >= ARRAY_SIZE(sdp_abort_mib) || !sdp_abort_mib[why] ||
	    test_bit(SDP_C_ABORT, &ssk->conn.flags) ||
	    state == TCP_CLOSE || state == TCP_LISTEN)
		return;
	/* Racing reasons (a close and the peer's AbortConn): one wins. */
	if (cmpxchg(&ssk->stats.abort_reason, SDP_ABORT_REASON_NONE, why) !=
	    SDP_ABORT_REASON_NONE)
		return;
	SDP_INC_STATS(sock_net(&ssk->sk), sdp_abort_mib[why]);
}

/* From __sdp_abort(), once per connection. */
void sdp_trace_abort(struct sdp_sock *ssk, int err, bool send_abort)
{
	trace_sdp_abort(ssk, err, send_abort);
}

/* The counter of each fallback reason (enum sdp_fallback_reason). */
static const enum sdp_mib_field sdp_fb_mib[] = {
	[SDP_FB_NO_DEVICE] = SDP_MIB_FB_NO_DEVICE,
	[SDP_FB_ADDR_ERROR] = SDP_MIB_FB_ADDR_ERROR,
	[SDP_FB_ROUTE_ERROR] = SDP_MIB_FB_ROUTE_ERROR,
	[SDP_FB_UNREACHABLE] = SDP_MIB_FB_UNREACHABLE,
	[SDP_FB_REJECTED] = SDP_MIB_FB_REJECTED,
	[SDP_FB_TCP_CLIENT] = SDP_MIB_FB_TCP_CLIENT,
	[SDP_FB_CACHED] = SDP_MIB_FB_CACHED,
	[SDP_FB_IWARP] = SDP_MIB_FB_IWARP,
};

/* A connect() goes on over TCP, for @why (sdp_fb_connect()). */
void sdp_stat_fallback(struct sdp_sock *ssk, enum sdp_fallback_reason why)
{
	if (why > SDP_FB_NONE && why < ARRAY_SIZE(sdp_fb_mib))
		SDP_INC_STATS(sock_net(&ssk->sk), sdp_fb_mib[why]);
	trace_sdp_fallback(ssk, why);
}

/* The TCP connection of a fallen-back socket changed state. */
void sdp_stat_fb_state(struct sdp_sock *ssk, int oldstate, int newstate)
{
	struct net *net = sock_net(&ssk->sk);

	trace_sdp_state_change(&ssk->sk, oldstate, newstate);
	if (oldstate != TCP_SYN_SENT)
		return;
	if (newstate == TCP_ESTABLISHED)
		SDP_INC_STATS(net, SDP_MIB_FB_ESTAB);
	else if (newstate == TCP_CLOSE)
		SDP_INC_STATS(net, SDP_MIB_FB_FAILS);
}

/* A Data message with @payload bytes was posted. */
void sdp_stat_tx_data(struct sdp_sock *ssk, u32 payload)
{
	struct net *net = sock_net(&ssk->sk);

	SDP_SK_ADD(ssk, BCOPY_TX_BYTES, payload);
	SDP_SK_INC(ssk, BCOPY_TX_MSGS);
	SDP_ADD_STATS(net, SDP_MIB_BCOPY_TX_BYTES, payload);
	SDP_INC_STATS(net, SDP_MIB_BCOPY_TX_MSGS);
}

/* A control message (a bare BSDH) with message id @mid was posted. */
void sdp_stat_tx_ctrl(struct sdp_sock *ssk, u8 mid)
{
	struct net *net = sock_net(&ssk->sk);

	switch (mid) {
	case SDP_MID_DATA:
		SDP_SK_INC(ssk, CREDIT_UPDATES_TX);
		SDP_INC_STATS(net, SDP_MIB_CREDIT_UPDATES_TX);
		break;
	case SDP_MID_DISCONN:
		SDP_INC_STATS(net, SDP_MIB_DISCONN_TX);
		break;
	case SDP_MID_ABORT:
		SDP_INC_STATS(net, SDP_MIB_ABORTCONN_TX);
		break;
	case SDP_MID_SENDSM:
		SDP_SK_INC(ssk, SENDSM_TX);
		SDP_INC_STATS(net, SDP_MIB_SENDSM_TX);
		break;
	case SDP_MID_SRCAVAIL_CANCEL:
		SDP_SK_INC(ssk, SRCAVAIL_CANCEL_TX);
		SDP_INC_STATS(net, SDP_MIB_SRCAVAIL_CANCEL_TX);
		break;
	case SDP_MID_CHRCVBUF_ACK:
		SDP_INC_STATS(net, SDP_MIB_CHRCVBUF_ACK_TX);
		break;
	}
}

/* A valid message (in sequence, within credits) arrived. */
void sdp_stat_rx_msg(struct sdp_sock *ssk, u8 mid, u32 payload)
{
	struct net *net = sock_net(&ssk->sk);

	switch (mid) {
	case SDP_MID_DATA:
		if (!payload) {
			SDP_SK_INC(ssk, CREDIT_UPDATES_RX);
			SDP_INC_STATS(net, SDP_MIB_CREDIT_UPDATES_RX);
			break;
		}
		SDP_SK_ADD(ssk, BCOPY_RX_BYTES, payload);
		SDP_SK_INC(ssk, BCOPY_RX_MSGS);
		SDP_ADD_STATS(net, SDP_MIB_BCOPY_RX_BYTES, payload);
		SDP_INC_STATS(net, SDP_MIB_BCOPY_RX_MSGS);
		break;
	case SDP_MID_DISCONN:
		SDP_INC_STATS(net, SDP_MIB_DISCONN_RX);
		break;
	case SDP_MID_ABORT:
		SDP_INC_STATS(net, SDP_MIB_ABORTCONN_RX);
		break;
	case SDP_MID_SENDSM:
		SDP_SK_INC(ssk, SENDSM_RX);
		SDP_INC_STATS(net, SDP_MIB_SENDSM_RX);
		break;
	case SDP_MID_SRCAVAIL_CANCEL:
		SDP_SK_INC(ssk, SRCAVAIL_CANCEL_RX);
		SDP_INC_STATS(net, SDP_MIB_SRCAVAIL_CANCEL_RX);
		break;
	case SDP_MID_CHRCVBUF_ACK:
		SDP_INC_STATS(net, SDP_MIB_CHRCVBUF_ACK_RX);
		break;
	}
}

/* Committed data started waiting for credits (sdp_tx_credit_stall()). */
void sdp_stat_credit_stall(struct sdp_sock *ssk)
{
	SDP_SK_INC(ssk, CREDIT_STALLS);
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_CREDIT_STALLS);
}

void sdp_stat_zcopy_tx(struct sdp_sock *ssk, u32 bytes)
{
	struct net *net = sock_net(&ssk->sk);

	SDP_SK_ADD(ssk, ZCOPY_TX_BYTES, bytes);
	SDP_SK_INC(ssk, ZCOPY_TX_MSGS);
	SDP_ADD_STATS(net, SDP_MIB_ZCOPY_TX_BYTES, bytes);
	SDP_INC_STATS(net, SDP_MIB_ZCOPY_TX_MSGS);
	trace_sdp_zcopy_send(ssk, bytes);
}

void sdp_stat_zcopy_rx(struct sdp_sock *ssk, u32 bytes)
{
	struct net *net = sock_net(&ssk->sk);

	SDP_SK_ADD(ssk, ZCOPY_RX_BYTES, bytes);
	SDP_SK_INC(ssk, ZCOPY_RX_MSGS);
	SDP_ADD_STATS(net, SDP_MIB_ZCOPY_RX_BYTES, bytes);
	SDP_INC_STATS(net, SDP_MIB_ZCOPY_RX_MSGS);
	trace_sdp_zcopy_recv(ssk, bytes);
}

void sdp_stat_rdma_read(struct sdp_sock *ssk, u32 bytes)
{
	struct net *net = sock_net(&ssk->sk);

	SDP_SK_INC(ssk, RDMA_READS);
	SDP_INC_STATS(net, SDP_MIB_ZCOPY_RDMA_READS);
	SDP_ADD_STATS(net, SDP_MIB_ZCOPY_RDMA_READ_BYTES, bytes);
	trace_sdp_rdma_read(ssk, bytes);
}

void sdp_stat_zcopy_cancel(struct sdp_sock *ssk, u32 bytes, bool tx)
{
	trace_sdp_zcopy_cancel(ssk, bytes, tx);
}

#ifdef CONFIG_PROC_FS
static int sdp_stats_seq_show(struct seq_file *seq, void *v)
{
	u64 *vals;
	int i;

	vals = kmalloc_array(SDP_MIB_MAX, sizeof(*vals), GFP_KERNEL);
	if (!vals)
		return -ENOMEM;
	sdp_stats_fold(seq_file_single_net(seq), vals);
	for (i = 0; i < SDP_MIB_MAX; i++) {
		if (i == SDP_MIB_CURR_ESTAB)	/* a gauge, summed over CPUs */
			seq_printf(seq, "%-32s %lld\n", sdp_mib_names[i],
				   (s64)vals[i]);
		else
			seq_printf(seq, "%-32s %llu\n", sdp_mib_names[i],
				   vals[i]);
	}
	kfree(vals);
	return 0;
}

int sdp_stats_proc_init(struct net *net)
{
	if (!proc_create_net_single("sdp_stats", 0444, net->proc_net,
				    sdp_stats_seq_show, NULL))
		return -ENOMEM;
	return 0;
}

void sdp_stats_proc_exit(struct net *net)
{
	remove_proc_entry("sdp_stats", net->proc_net);
}
#else
int sdp_stats_proc_init(struct net *net)
{
	return 0;
}

void sdp_stats_proc_exit(struct net *net)
{
}
#endif /* CONFIG_PROC_FS */
