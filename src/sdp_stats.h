/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- statistics, per-network-namespace state and
 * the hooks the data path calls to count and trace what it does.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Two kinds of counters (the namespace state they live in, struct
 * sdp_net, is in sdp_net.h):
 *
 *  - per network namespace: enum sdp_mib_field, per-CPU u64 counters
 *    summed when /proc/net/sdp_stats is read (SDP_INC_STATS() and
 *    SDP_ADD_STATS() work in any context, no lock needed);
 *  - per socket: struct sdp_sock_stats in struct sdp_sock, changed only
 *    under sdp_sock::lock (SDP_SK_INC() / SDP_SK_ADD()) and read without
 *    it by /proc/net/sdp and the sock_diag dump.
 *
 * The data path does not use the macros directly for data messages: it
 * calls sdp_stat_tx_msg(), sdp_stat_rx_msg() and friends, which keep the
 * per-socket and the per-namespace counters in step.  The zero-copy path
 * reports each event with one call (sdp_stat_zcopy_*()), which also
 * fires its tracepoint.  Documentation/networking/sdp.rst describes each
 * counter.
 */
#ifndef _SDP_STATS_H
#define _SDP_STATS_H

#include <linux/percpu.h>
#include <linux/types.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <uapi/linux/sdp.h>
#include <uapi/linux/sdp_diag.h>

#include "sdp_net.h"

struct sdp_sock;
struct sock;

/* Per-namespace counters: SDP_MIB_<name>, listed in sdp_mibs.h. */
enum sdp_mib_field {
#define SDP_MIB(name, str) SDP_MIB_##name,
#define SDP_MIB_ABORT(reason, str) SDP_MIB_ABORT_##reason,
#include "sdp_mibs.h"
#undef SDP_MIB
#undef SDP_MIB_ABORT
	SDP_MIB_MAX
};

struct sdp_mib {
	u64 mibs[SDP_MIB_MAX];
};

#define SDP_ADD_STATS(net, field, val) \
	this_cpu_add(sdp_net(net)->mib->mibs[field], (u64)(val))
#define SDP_INC_STATS(net, field)	SDP_ADD_STATS(net, field, 1)
#define SDP_DEC_STATS(net, field)	SDP_ADD_STATS(net, field, -1)

/* Per-socket counters: SDP_SC_<name>, listed in sdp_sock_counters.h. */
enum sdp_sock_counter {
#define SDP_SOCK_COUNTER(name, info, diag) SDP_SC_##name,
#include "sdp_sock_counters.h"
#undef SDP_SOCK_COUNTER
	SDP_SOCK_NR_COUNTERS
};

/**
 * struct sdp_sock_stats - per-socket counters (see /proc/net/sdp)
 * @cnt: the counters, indexed by enum sdp_sock_counter; written under
 *	sdp_sock::lock with WRITE_ONCE() (SDP_SK_ADD()), read locklessly
 *	(sdp_sk_counter())
 * @abort_reason: enum sdp_abort_reason of the abort, if any; set once,
 *	with cmpxchg(), by the first sdp_stat_abort()
 * @id: unique among the module's sockets since it was loaded (the
 *	sock_diag cookie); set once when the socket is created
 */
struct sdp_sock_stats {
	u64 cnt[SDP_SOCK_NR_COUNTERS];
	u32 abort_reason;
	u64 id;
};

/* Per-socket counter update; sdp_sock::lock held. */
#define SDP_SK_ADD(ssk, name, val)				\
	do {							\
		u64 *__p = &(ssk)->stats.cnt[SDP_SC_##name];	\
								\
		WRITE_ONCE(*__p, *__p + (val));			\
	} while (0)
#define SDP_SK_INC(ssk, name)	SDP_SK_ADD(ssk, name, 1)

/* A per-socket counter, read without the lock. */
#define sdp_sk_counter(st, name)	READ_ONCE((st)->cnt[SDP_SC_##name])

/* The socket's counters into the uapi structs (sdp_stats.c). */
struct sdp_info;
struct sdp_diag_stats;
void sdp_stats_to_info(const struct sdp_sock_stats *st, struct sdp_info *info);
void sdp_stats_to_diag(const struct sdp_sock_stats *st,
		       struct sdp_diag_stats *d);

/* sdp_stats.c: /proc/net/sdp_stats of a namespace (sdp_net.c) */
int sdp_stats_proc_init(struct net *net);
void sdp_stats_proc_exit(struct net *net);
void sdp_stats_fold(const struct net *net, u64 *vals);
extern const char *const sdp_mib_names[SDP_MIB_MAX];

/*
 * Hooks of the connection and data paths.  Those taking a struct
 * sdp_sock and marked "lock" are called with sdp_sock::lock held.
 */
void sdp_stat_state(struct sock *sk, int oldstate, int newstate);
void sdp_stat_abort(struct sdp_sock *ssk, enum sdp_abort_reason why);
void sdp_trace_abort(struct sdp_sock *ssk, int err, bool send_abort);
void sdp_stat_fallback(struct sdp_sock *ssk, enum sdp_fallback_reason why);
void sdp_stat_fb_state(struct sdp_sock *ssk, int oldstate, int newstate);
void sdp_stat_tx_data(struct sdp_sock *ssk, u32 payload);	/* lock */
void sdp_stat_tx_ctrl(struct sdp_sock *ssk, u8 mid);		/* lock */
void sdp_stat_rx_msg(struct sdp_sock *ssk, u8 mid, u32 payload); /* lock */
void sdp_stat_credit_stall(struct sdp_sock *ssk);		/* lock */

/*
 * Zero-copy events (lock): each updates the socket's and the
 * namespace's counters and fires the matching tracepoint.
 *   sdp_stat_zcopy_tx()      a zero-copy send finished: the peer read
 *                            @bytes (RdmaRdCompl received);
 *   sdp_stat_zcopy_rx()      a SrcAvail was consumed: @bytes arrived
 *                            by RDMA Read in the user's buffer;
 *   sdp_stat_rdma_read()     one RDMA Read work request of @bytes posted;
 *   sdp_stat_zcopy_cancel()  a SrcAvailCancel was sent (@tx) or
 *                            received, for a send of @bytes.
 * SendSM and SrcAvailCancel sent through sdp_post_ctrl() and received
 * through sdp_rx_msg() are counted there already (sdp_stat_tx_ctrl(),
 * sdp_stat_rx_msg()); call sdp_stat_zcopy_cancel() only for the trace.
 */
void sdp_stat_zcopy_tx(struct sdp_sock *ssk, u32 bytes);
void sdp_stat_zcopy_rx(struct sdp_sock *ssk, u32 bytes);
void sdp_stat_rdma_read(struct sdp_sock *ssk, u32 bytes);
void sdp_stat_zcopy_cancel(struct sdp_sock *ssk, u32 bytes, bool tx);

#endif /* _SDP_STATS_H */
