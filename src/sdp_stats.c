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

#include "sdp.h"

#define CREATE_TRACE_POINTS
#include "sdp_trace.h"

unsigned int sdp_net_id __read_mostly;

const char *const sdp_mib_names[SDP_MIB_MAX] = {
	[SDP_MIB_ACTIVE_OPENS]		= "ActiveOpens",
	[SDP_MIB_ACTIVE_ESTAB]		= "ActiveEstab",
	[SDP_MIB_ACTIVE_REFUSED]	= "ActiveRefused",
	[SDP_MIB_ACTIVE_FAILS]		= "ActiveFails",
	[SDP_MIB_PASSIVE_OPENS]		= "PassiveOpens",
	[SDP_MIB_PASSIVE_ESTAB]		= "PassiveEstab",
	[SDP_MIB_PASSIVE_FAILS]		= "PassiveFails",
	[SDP_MIB_PASSIVE_REFUSED]	= "PassiveRefused",
	[SDP_MIB_LISTEN_OVERFLOWS]	= "ListenOverflows",
	[SDP_MIB_CURR_ESTAB]		= "CurrEstab",
	[SDP_MIB_MEM_PAGES]		= "MemPages",
	[SDP_MIB_MEM_REFUSED]		= "MemRefused",
	[SDP_MIB_MEM_PRESSURE_CONNS]	= "MemPressureConns",
	[SDP_MIB_HALF_OPEN]		= "HalfOpen",
	[SDP_MIB_HALF_OPEN_REFUSED]	= "HalfOpenRefused",
	[SDP_MIB_ABORT_ON_CLOSE]	= "AbortOnClose",
	[SDP_MIB_ABORT_ON_DATA]		= "AbortOnData",
	[SDP_MIB_ABORT_ON_TIMEOUT]	= "AbortOnTimeout",
	[SDP_MIB_ABORT_BY_PEER]		= "AbortByPeer",
	[SDP_MIB_ABORT_ON_PROTO]	= "AbortOnProtoError",
	[SDP_MIB_ABORT_ON_CQ_ERROR]	= "AbortOnCqError",
	[SDP_MIB_ABORT_ON_CM_DISCONNECT] = "AbortOnCmDisconnect",
	[SDP_MIB_ABORT_ON_DEVICE_REMOVAL] = "AbortOnDeviceRemoval",
	[SDP_MIB_BCOPY_TX_BYTES]	= "BcopyTxBytes",
	[SDP_MIB_BCOPY_TX_MSGS]		= "BcopyTxMsgs",
	[SDP_MIB_BCOPY_RX_BYTES]	= "BcopyRxBytes",
	[SDP_MIB_BCOPY_RX_MSGS]		= "BcopyRxMsgs",
	[SDP_MIB_ZCOPY_TX_BYTES]	= "ZcopyTxBytes",
	[SDP_MIB_ZCOPY_TX_MSGS]		= "ZcopyTxMsgs",
	[SDP_MIB_ZCOPY_RX_BYTES]	= "ZcopyRxBytes",
	[SDP_MIB_ZCOPY_RX_MSGS]		= "ZcopyRxMsgs",
	[SDP_MIB_ZCOPY_RDMA_READS]	= "ZcopyRdmaReads",
	[SDP_MIB_ZCOPY_RDMA_READ_BYTES]	= "ZcopyRdmaReadBytes",
	[SDP_MIB_SENDSM_TX]		= "SendSmTx",
	[SDP_MIB_SENDSM_RX]		= "SendSmRx",
	[SDP_MIB_SRCAVAIL_CANCEL_TX]	= "SrcAvailCancelTx",
	[SDP_MIB_SRCAVAIL_CANCEL_RX]	= "SrcAvailCancelRx",
	[SDP_MIB_ZCOPY_FALLBACKS]	= "ZcopyFallbacks",
	[SDP_MIB_ZCOPY_RINV_TX]		= "ZcopyRemoteInvTx",
	[SDP_MIB_ZCOPY_RINV_RX]		= "ZcopyRemoteInvRx",
	[SDP_MIB_CREDIT_UPDATES_TX]	= "CreditUpdatesTx",
	[SDP_MIB_CREDIT_UPDATES_RX]	= "CreditUpdatesRx",
	[SDP_MIB_CREDIT_STALLS]		= "CreditStalls",
	[SDP_MIB_DISCONN_TX]		= "DisConnTx",
	[SDP_MIB_DISCONN_RX]		= "DisConnRx",
	[SDP_MIB_ABORTCONN_TX]		= "AbortConnTx",
	[SDP_MIB_ABORTCONN_RX]		= "AbortConnRx",
	[SDP_MIB_BUSY_POLL_HITS]	= "BusyPollHits",
	[SDP_MIB_BUSY_POLL_YIELDS]	= "BusyPollYields",
};

static const u8 sdp_abort_mib[] = {
	[SDP_ABORT_ON_CLOSE]		= SDP_MIB_ABORT_ON_CLOSE,
	[SDP_ABORT_ON_DATA]		= SDP_MIB_ABORT_ON_DATA,
	[SDP_ABORT_ON_TIMEOUT]		= SDP_MIB_ABORT_ON_TIMEOUT,
	[SDP_ABORT_BY_PEER]		= SDP_MIB_ABORT_BY_PEER,
	[SDP_ABORT_ON_PROTO]		= SDP_MIB_ABORT_ON_PROTO,
	[SDP_ABORT_ON_CQ_ERROR]		= SDP_MIB_ABORT_ON_CQ_ERROR,
	[SDP_ABORT_ON_CM_DISCONNECT]	= SDP_MIB_ABORT_ON_CM_DISCONNECT,
	[SDP_ABORT_ON_DEVICE_REMOVAL]	= SDP_MIB_ABORT_ON_DEVICE_REMOVAL,
};

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

	if (why == SDP_ABORT_NONE || why >= ARRAY_SIZE(sdp_abort_mib) ||
	    test_bit(SDP_F_ABORT, &ssk->flags) ||
	    state == TCP_CLOSE || state == TCP_LISTEN)
		return;
	/* Racing reasons (a close and the peer's AbortConn): one wins. */
	if (cmpxchg(&ssk->stats.abort_reason, SDP_ABORT_NONE, why) !=
	    SDP_ABORT_NONE)
		return;
	SDP_INC_STATS(sock_net(&ssk->sk), sdp_abort_mib[why]);
}

/* From __sdp_abort(), once per connection. */
void sdp_trace_abort(struct sdp_sock *ssk, int err, bool send_abort)
{
	trace_sdp_abort(ssk, err, send_abort);
}

/* A Data message with @payload bytes was posted. */
void sdp_stat_tx_data(struct sdp_sock *ssk, u32 payload)
{
	struct net *net = sock_net(&ssk->sk);

	SDP_SK_ADD(ssk, bcopy_tx_bytes, payload);
	SDP_SK_INC(ssk, bcopy_tx_msgs);
	SDP_ADD_STATS(net, SDP_MIB_BCOPY_TX_BYTES, payload);
	SDP_INC_STATS(net, SDP_MIB_BCOPY_TX_MSGS);
}

/* A control message (a bare BSDH) with message id @mid was posted. */
void sdp_stat_tx_ctrl(struct sdp_sock *ssk, u8 mid)
{
	struct net *net = sock_net(&ssk->sk);

	switch (mid) {
	case SDP_MID_DATA:
		SDP_SK_INC(ssk, credit_updates_tx);
		SDP_INC_STATS(net, SDP_MIB_CREDIT_UPDATES_TX);
		break;
	case SDP_MID_DISCONN:
		SDP_INC_STATS(net, SDP_MIB_DISCONN_TX);
		break;
	case SDP_MID_ABORT:
		SDP_INC_STATS(net, SDP_MIB_ABORTCONN_TX);
		break;
	case SDP_MID_SENDSM:
		SDP_SK_INC(ssk, sendsm_tx);
		SDP_INC_STATS(net, SDP_MIB_SENDSM_TX);
		break;
	case SDP_MID_SRCAVAIL_CANCEL:
		SDP_SK_INC(ssk, srcavail_cancel_tx);
		SDP_INC_STATS(net, SDP_MIB_SRCAVAIL_CANCEL_TX);
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
			SDP_SK_INC(ssk, credit_updates_rx);
			SDP_INC_STATS(net, SDP_MIB_CREDIT_UPDATES_RX);
			break;
		}
		SDP_SK_ADD(ssk, bcopy_rx_bytes, payload);
		SDP_SK_INC(ssk, bcopy_rx_msgs);
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
		SDP_SK_INC(ssk, sendsm_rx);
		SDP_INC_STATS(net, SDP_MIB_SENDSM_RX);
		break;
	case SDP_MID_SRCAVAIL_CANCEL:
		SDP_SK_INC(ssk, srcavail_cancel_rx);
		SDP_INC_STATS(net, SDP_MIB_SRCAVAIL_CANCEL_RX);
		break;
	}
}

/*
 * After the send path posted what it could: count a credit stall when
 * committed data starts waiting for credits (not while it keeps waiting).
 */
void sdp_stat_tx_credits(struct sdp_sock *ssk)
{
	bool waiting = ssk->tx_post != ssk->tx_head &&
		       ssk->tx_credits < SDP_DATA_MIN_CREDITS &&
		       test_bit(SDP_F_QP, &ssk->flags) &&
		       !test_bit(SDP_F_ABORT, &ssk->flags) &&
		       !test_bit(SDP_F_CM_DISCONNECT, &ssk->flags);

	if (waiting && !ssk->stats.stalled) {
		SDP_SK_INC(ssk, credit_stalls);
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_CREDIT_STALLS);
	}
	ssk->stats.stalled = waiting;
}

void sdp_stat_zcopy_tx(struct sdp_sock *ssk, u32 bytes)
{
	struct net *net = sock_net(&ssk->sk);

	SDP_SK_ADD(ssk, zcopy_tx_bytes, bytes);
	SDP_SK_INC(ssk, zcopy_tx_msgs);
	SDP_ADD_STATS(net, SDP_MIB_ZCOPY_TX_BYTES, bytes);
	SDP_INC_STATS(net, SDP_MIB_ZCOPY_TX_MSGS);
	trace_sdp_zcopy_send(ssk, bytes);
}

void sdp_stat_zcopy_rx(struct sdp_sock *ssk, u32 bytes)
{
	struct net *net = sock_net(&ssk->sk);

	SDP_SK_ADD(ssk, zcopy_rx_bytes, bytes);
	SDP_SK_INC(ssk, zcopy_rx_msgs);
	SDP_ADD_STATS(net, SDP_MIB_ZCOPY_RX_BYTES, bytes);
	SDP_INC_STATS(net, SDP_MIB_ZCOPY_RX_MSGS);
	trace_sdp_zcopy_recv(ssk, bytes);
}

void sdp_stat_rdma_read(struct sdp_sock *ssk, u32 bytes)
{
	struct net *net = sock_net(&ssk->sk);

	SDP_SK_INC(ssk, rdma_reads);
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

static int sdp_stats_proc_init(struct net *net)
{
	if (!proc_create_net_single("sdp_stats", 0444, net->proc_net,
				    sdp_stats_seq_show, NULL))
		return -ENOMEM;
	return 0;
}

static void sdp_stats_proc_exit(struct net *net)
{
	remove_proc_entry("sdp_stats", net->proc_net);
}
#else
static int sdp_stats_proc_init(struct net *net)
{
	return 0;
}

static void sdp_stats_proc_exit(struct net *net)
{
}
#endif /* CONFIG_PROC_FS */

static int __net_init sdp_stats_net_init(struct net *net)
{
	struct sdp_net *sn = sdp_net(net);
	int err;

	sn->mib = alloc_percpu(struct sdp_mib);
	if (!sn->mib)
		return -ENOMEM;
	err = sdp_sysctl_net_init(net, sn);
	if (err)
		goto err_mib;
	err = sdp_stats_proc_init(net);
	if (err)
		goto err_sysctl;
	return 0;

err_sysctl:
	sdp_sysctl_net_exit(sn);
err_mib:
	free_percpu(sn->mib);
	return err;
}

static void __net_exit sdp_stats_net_exit(struct net *net)
{
	struct sdp_net *sn = sdp_net(net);

	sdp_stats_proc_exit(net);
	sdp_sysctl_net_exit(sn);
	free_percpu(sn->mib);
}

static struct pernet_operations sdp_stats_net_ops = {
	.init = sdp_stats_net_init,
	.exit = sdp_stats_net_exit,
	.id = &sdp_net_id,
	.size = sizeof(struct sdp_net),
};

int sdp_stats_init(void)
{
	BUILD_BUG_ON(ARRAY_SIZE(sdp_mib_names) != SDP_MIB_MAX);
	return register_pernet_subsys(&sdp_stats_net_ops);
}

void sdp_stats_exit(void)
{
	unregister_pernet_subsys(&sdp_stats_net_ops);
}
