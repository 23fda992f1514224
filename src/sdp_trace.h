/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- tracepoints (tracefs: events/sdp/).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 *   sdp_state_change   every TCP-state change of an SDP socket
 *   sdp_abort          a connection is aborted (why, error, AbortConn sent)
 *   sdp_zcopy_send     a zero-copy send finished (the peer read it)
 *   sdp_zcopy_recv     a zero-copy receive finished (RDMA Read done)
 *   sdp_rdma_read      an RDMA Read was posted
 *   sdp_zcopy_cancel   a SrcAvailCancel was sent or received
 *   sdp_fallback       a connect() goes on over TCP (why), or accept()
 *                      returns a client that came over TCP
 *
 * Addresses are recorded as the socket stores them (struct sockaddr_in or
 * sockaddr_in6; zeros, printed as 0.0.0.0:0, before it has one).  Only
 * sdp_trace.c (CREATE_TRACE_POINTS) and sdp_stats.c include this file;
 * the rest of the module reaches the tracepoints through the sdp_stat_*()
 * hooks.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sdp

#if !defined(_SDP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SDP_TRACE_H

#include <linux/in6.h>
#include <linux/tracepoint.h>
#include <net/tcp_states.h>

#include "sdp.h"

#ifndef _SDP_TRACE_HELPERS
#define _SDP_TRACE_HELPERS
#define SDP_TRACE_ADDR_LEN	sizeof(struct sockaddr_in6)

static inline void sdp_trace_addrs(u8 *saddr, u8 *daddr,
				   const struct sdp_sock *ssk)
{
	memcpy(saddr, &ssk->saddr, SDP_TRACE_ADDR_LEN);
	memcpy(daddr, &ssk->daddr, SDP_TRACE_ADDR_LEN);
}
#endif

/* Let user-space tools (perf, trace-cmd) resolve the symbolic names. */
TRACE_DEFINE_ENUM(TCP_ESTABLISHED);
TRACE_DEFINE_ENUM(TCP_SYN_SENT);
TRACE_DEFINE_ENUM(TCP_SYN_RECV);
TRACE_DEFINE_ENUM(TCP_FIN_WAIT1);
TRACE_DEFINE_ENUM(TCP_FIN_WAIT2);
TRACE_DEFINE_ENUM(TCP_TIME_WAIT);
TRACE_DEFINE_ENUM(TCP_CLOSE);
TRACE_DEFINE_ENUM(TCP_CLOSE_WAIT);
TRACE_DEFINE_ENUM(TCP_LAST_ACK);
TRACE_DEFINE_ENUM(TCP_LISTEN);
TRACE_DEFINE_ENUM(TCP_CLOSING);
TRACE_DEFINE_ENUM(SDP_ABORT_REASON_NONE);
TRACE_DEFINE_ENUM(SDP_ABORT_REASON_CLOSE);
TRACE_DEFINE_ENUM(SDP_ABORT_REASON_DATA);
TRACE_DEFINE_ENUM(SDP_ABORT_REASON_TIMEOUT);
TRACE_DEFINE_ENUM(SDP_ABORT_REASON_PEER);
TRACE_DEFINE_ENUM(SDP_ABORT_REASON_PROTO);
TRACE_DEFINE_ENUM(SDP_ABORT_REASON_CQ_ERROR);
TRACE_DEFINE_ENUM(SDP_ABORT_REASON_CM_DISCONNECT);
TRACE_DEFINE_ENUM(SDP_ABORT_REASON_DEVICE_REMOVAL);

#define sdp_show_state(state)					\
	__print_symbolic(state,					\
			 { TCP_ESTABLISHED, "ESTABLISHED" },	\
			 { TCP_SYN_SENT, "SYN_SENT" },		\
			 { TCP_SYN_RECV, "SYN_RECV" },		\
			 { TCP_FIN_WAIT1, "FIN_WAIT1" },	\
			 { TCP_FIN_WAIT2, "FIN_WAIT2" },	\
			 { TCP_TIME_WAIT, "TIME_WAIT" },	\
			 { TCP_CLOSE, "CLOSE" },		\
			 { TCP_CLOSE_WAIT, "CLOSE_WAIT" },	\
			 { TCP_LAST_ACK, "LAST_ACK" },		\
			 { TCP_LISTEN, "LISTEN" },		\
			 { TCP_CLOSING, "CLOSING" })

#define sdp_show_abort(reason)						\
	__print_symbolic(reason,					\
			 { SDP_ABORT_REASON_NONE, "other" },			\
			 { SDP_ABORT_REASON_CLOSE, "close" },		\
			 { SDP_ABORT_REASON_DATA, "data-after-close" },	\
			 { SDP_ABORT_REASON_TIMEOUT, "timeout" },		\
			 { SDP_ABORT_REASON_PEER, "peer" },			\
			 { SDP_ABORT_REASON_PROTO, "protocol-error" },	\
			 { SDP_ABORT_REASON_CQ_ERROR, "completion-error" },	\
			 { SDP_ABORT_REASON_CM_DISCONNECT, "cm-disconnect" },	\
			 { SDP_ABORT_REASON_DEVICE_REMOVAL, "device-removal" })

TRACE_EVENT(sdp_state_change,
	    TP_PROTO(const struct sock *sk, int oldstate, int newstate),
	    TP_ARGS(sk, oldstate, newstate),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(int, oldstate)
			     __field(int, newstate)
			     __array(u8, saddr, SDP_TRACE_ADDR_LEN)
			     __array(u8, daddr, SDP_TRACE_ADDR_LEN)),
	    TP_fast_assign(__entry->skaddr = sk;
			   __entry->oldstate = oldstate;
			   __entry->newstate = newstate;
			   sdp_trace_addrs(__entry->saddr, __entry->daddr,
					   sdp_sk(sk));),
	    TP_printk("sk=%p src=%pISpc dst=%pISpc %s -> %s",
		      __entry->skaddr, __entry->saddr, __entry->daddr,
		      sdp_show_state(__entry->oldstate),
		      sdp_show_state(__entry->newstate))
);

TRACE_EVENT(sdp_abort,
	    TP_PROTO(const struct sdp_sock *ssk, int err, bool sent),
	    TP_ARGS(ssk, err, sent),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(int, state)
			     __field(int, err)
			     __field(int, reason)
			     __field(bool, sent)
			     __array(u8, saddr, SDP_TRACE_ADDR_LEN)
			     __array(u8, daddr, SDP_TRACE_ADDR_LEN)),
	    TP_fast_assign(__entry->skaddr = &ssk->sk;
			   __entry->state = READ_ONCE(ssk->sk.sk_state);
			   __entry->err = err;
			   __entry->reason = READ_ONCE(ssk->stats.abort_reason);
			   __entry->sent = sent;
			   sdp_trace_addrs(__entry->saddr, __entry->daddr,
					   ssk);),
	    TP_printk("sk=%p src=%pISpc dst=%pISpc state=%s reason=%s err=%d abortconn=%d",
		      __entry->skaddr, __entry->saddr, __entry->daddr,
		      sdp_show_state(__entry->state),
		      sdp_show_abort(__entry->reason), __entry->err,
		      __entry->sent)
);

TRACE_DEFINE_ENUM(SDP_FB_NO_DEVICE);
TRACE_DEFINE_ENUM(SDP_FB_ADDR_ERROR);
TRACE_DEFINE_ENUM(SDP_FB_ROUTE_ERROR);
TRACE_DEFINE_ENUM(SDP_FB_UNREACHABLE);
TRACE_DEFINE_ENUM(SDP_FB_REJECTED);
TRACE_DEFINE_ENUM(SDP_FB_TCP_CLIENT);
TRACE_DEFINE_ENUM(SDP_FB_CACHED);
TRACE_DEFINE_ENUM(SDP_FB_IWARP);

#define sdp_show_fb_reason(reason)					\
	__print_symbolic(reason,					\
			 { SDP_FB_NO_DEVICE, "no-device" },		\
			 { SDP_FB_ADDR_ERROR, "addr-error" },		\
			 { SDP_FB_ROUTE_ERROR, "route-error" },	\
			 { SDP_FB_UNREACHABLE, "unreachable" },	\
			 { SDP_FB_REJECTED, "rejected" },		\
			 { SDP_FB_TCP_CLIENT, "tcp-client" },	\
			 { SDP_FB_CACHED, "cached" },		\
			 { SDP_FB_IWARP, "iwarp" })

TRACE_EVENT(sdp_fallback,
	    TP_PROTO(const struct sdp_sock *ssk, int reason),
	    TP_ARGS(ssk, reason),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(int, reason)
			     __array(u8, saddr, SDP_TRACE_ADDR_LEN)
			     __array(u8, daddr, SDP_TRACE_ADDR_LEN)),
	    TP_fast_assign(__entry->skaddr = &ssk->sk;
			   __entry->reason = reason;
			   sdp_trace_addrs(__entry->saddr, __entry->daddr,
					   ssk);),
	    TP_printk("sk=%p src=%pISpc dst=%pISpc reason=%s",
		      __entry->skaddr, __entry->saddr, __entry->daddr,
		      sdp_show_fb_reason(__entry->reason))
);

DECLARE_EVENT_CLASS(sdp_zcopy_class,
		    TP_PROTO(const struct sdp_sock *ssk, u32 bytes),
		    TP_ARGS(ssk, bytes),
		    TP_STRUCT__entry(__field(const void *, skaddr)
				     __field(u32, bytes)
				     __array(u8, saddr, SDP_TRACE_ADDR_LEN)
				     __array(u8, daddr, SDP_TRACE_ADDR_LEN)),
		    TP_fast_assign(__entry->skaddr = &ssk->sk;
				   __entry->bytes = bytes;
				   sdp_trace_addrs(__entry->saddr,
						   __entry->daddr, ssk);),
		    TP_printk("sk=%p src=%pISpc dst=%pISpc bytes=%u",
			      __entry->skaddr, __entry->saddr,
			      __entry->daddr, __entry->bytes)
);

DEFINE_EVENT(sdp_zcopy_class, sdp_zcopy_send,
	     TP_PROTO(const struct sdp_sock *ssk, u32 bytes),
	     TP_ARGS(ssk, bytes)
);

DEFINE_EVENT(sdp_zcopy_class, sdp_zcopy_recv,
	     TP_PROTO(const struct sdp_sock *ssk, u32 bytes),
	     TP_ARGS(ssk, bytes)
);

DEFINE_EVENT(sdp_zcopy_class, sdp_rdma_read,
	     TP_PROTO(const struct sdp_sock *ssk, u32 bytes),
	     TP_ARGS(ssk, bytes)
);

TRACE_EVENT(sdp_zcopy_cancel,
	    TP_PROTO(const struct sdp_sock *ssk, u32 bytes, bool tx),
	    TP_ARGS(ssk, bytes, tx),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(u32, bytes)
			     __field(bool, tx)
			     __array(u8, saddr, SDP_TRACE_ADDR_LEN)
			     __array(u8, daddr, SDP_TRACE_ADDR_LEN)),
	    TP_fast_assign(__entry->skaddr = &ssk->sk;
			   __entry->bytes = bytes;
			   __entry->tx = tx;
			   sdp_trace_addrs(__entry->saddr, __entry->daddr,
					   ssk);),
	    TP_printk("sk=%p src=%pISpc dst=%pISpc bytes=%u %s",
		      __entry->skaddr, __entry->saddr, __entry->daddr,
		      __entry->bytes, __entry->tx ? "sent" : "received")
);

#endif /* _SDP_TRACE_H */

/* This part must be outside the header guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sdp_trace
#include <trace/define_trace.h>
