/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- the per-namespace counters, listed once, in
 * the order /proc/net/sdp_stats shows them.  No include guard: a user
 * defines SDP_MIB(name, str) and SDP_MIB_ABORT(reason, str), includes this
 * file, and undefines them (sdp_stats.h makes enum sdp_mib_field,
 * sdp_stats.c the names).  name gives SDP_MIB_<name>; str is the name in
 * /proc/net/sdp_stats.  The abort counters are one per abort reason of
 * uapi sdp_diag.h (enum sdp_abort_reason): reason gives
 * SDP_MIB_ABORT_<reason>, counted for SDP_ABORT_REASON_<reason>.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */

/* connections */
SDP_MIB(ACTIVE_OPENS, "ActiveOpens")		/* connect() started */
SDP_MIB(ACTIVE_ESTAB, "ActiveEstab")		/* ... and was established */
SDP_MIB(ACTIVE_REFUSED, "ActiveRefused")	/* ... failed: ECONNREFUSED */
SDP_MIB(ACTIVE_FAILS, "ActiveFails")		/* ... and failed otherwise */
SDP_MIB(PASSIVE_OPENS, "PassiveOpens")		/* request taken by a listener */
SDP_MIB(PASSIVE_ESTAB, "PassiveEstab")		/* ... established (accepted) */
SDP_MIB(PASSIVE_FAILS, "PassiveFails")		/* ... failed before that */
SDP_MIB(PASSIVE_REFUSED, "PassiveRefused")	/* refused by a listener */
/* ... of them, refused by the host's firewall (sdp_filter.c) */
SDP_MIB(PASSIVE_FILTERED, "PassiveFiltered")
SDP_MIB(LISTEN_OVERFLOWS, "ListenOverflows")	/* ... of which: backlog full */
SDP_MIB(CURR_ESTAB, "CurrEstab")		/* gauge: ESTABLISHED+CLOSE_WAIT */
/* connect()s that went on over TCP (sdp_fallback.c), by reason */
SDP_MIB(FB_NO_DEVICE, "FallbackNoDevice")	/* no RDMA device for it */
SDP_MIB(FB_ADDR_ERROR, "FallbackAddrError")	/* address resolution */
SDP_MIB(FB_ROUTE_ERROR, "FallbackRouteError")	/* route resolution */
SDP_MIB(FB_UNREACHABLE, "FallbackUnreachable")	/* no answer */
SDP_MIB(FB_REJECTED, "FallbackRejected")	/* no SDP listener */
SDP_MIB(FB_TCP_CLIENT, "FallbackTcpClient")	/* accepted over TCP */
SDP_MIB(FB_CACHED, "FallbackCached")		/* negative cache hit */
SDP_MIB(FB_IWARP, "FallbackIwarp")		/* SDP_NO_IWARP, iWARP route */
SDP_MIB(FB_ESTAB, "FallbackEstab")		/* ... TCP connected */
SDP_MIB(FB_FAILS, "FallbackFails")		/* ... TCP failed too */
SDP_MIB(FB_LISTEN_FAILS, "FallbackListenFails")	/* listen() had no TCP */
/* memory and half-open connections (sdp_mem.c) */
SDP_MIB(MEM_PAGES, "MemPages")			/* gauge: pages of buffers */
SDP_MIB(MEM_REFUSED, "MemRefused")		/* buffers refused: mem max */
SDP_MIB(MEM_PRESSURE_CONNS, "MemPressureConns")	/* made small: pressure */
SDP_MIB(TX_RING_RELEASES, "TxRingReleases")	/* send buffers given back */
SDP_MIB(RX_RING_GROWS, "RxRingGrows")		/* receive rings grown */
SDP_MIB(RX_RING_SHRINKS, "RxRingShrinks")	/* ... shrinking back when quiet */
SDP_MIB(RX_BUF_WAITS, "RxBufWaits")		/* no memory to replace one */
SDP_MIB(CHRCVBUF_ACK_TX, "ChRcvBufAckTx")	/* our buffers grew or shrank */
SDP_MIB(CHRCVBUF_ACK_RX, "ChRcvBufAckRx")	/* the peer's did */
SDP_MIB(HALF_OPEN, "HalfOpen")			/* gauge: not established yet */
SDP_MIB(HALF_OPEN_REFUSED, "HalfOpenRefused")	/* refused: max_half_open */
/* aborts, by reason */
SDP_MIB_ABORT(CLOSE, "AbortOnClose")
SDP_MIB_ABORT(DATA, "AbortOnData")
SDP_MIB_ABORT(TIMEOUT, "AbortOnTimeout")
SDP_MIB_ABORT(PEER, "AbortByPeer")
SDP_MIB_ABORT(PROTO, "AbortOnProtoError")
SDP_MIB_ABORT(CQ_ERROR, "AbortOnCqError")
SDP_MIB_ABORT(CM_DISCONNECT, "AbortOnCmDisconnect")
SDP_MIB_ABORT(DEVICE_REMOVAL, "AbortOnDeviceRemoval")
/* connections whose QP, CQ or device reported an error event */
SDP_MIB(ASYNC_ERRORS, "AsyncErrors")
/* buffered-copy path */
SDP_MIB(BCOPY_TX_BYTES, "BcopyTxBytes")
SDP_MIB(BCOPY_TX_MSGS, "BcopyTxMsgs")
SDP_MIB(BCOPY_RX_BYTES, "BcopyRxBytes")
SDP_MIB(BCOPY_RX_MSGS, "BcopyRxMsgs")
/* zero-copy path */
SDP_MIB(ZCOPY_TX_BYTES, "ZcopyTxBytes")
SDP_MIB(ZCOPY_TX_MSGS, "ZcopyTxMsgs")
SDP_MIB(ZCOPY_RX_BYTES, "ZcopyRxBytes")
SDP_MIB(ZCOPY_RX_MSGS, "ZcopyRxMsgs")
SDP_MIB(ZCOPY_RDMA_READS, "ZcopyRdmaReads")
SDP_MIB(ZCOPY_RDMA_READ_BYTES, "ZcopyRdmaReadBytes")
SDP_MIB(SENDSM_TX, "SendSmTx")
SDP_MIB(SENDSM_RX, "SendSmRx")
SDP_MIB(SRCAVAIL_CANCEL_TX, "SrcAvailCancelTx")
SDP_MIB(SRCAVAIL_CANCEL_RX, "SrcAvailCancelRx")
SDP_MIB(ZCOPY_FALLBACKS, "ZcopyFallbacks")	/* not pinnable: buffered */
SDP_MIB(ZCOPY_RINV_TX, "ZcopyRemoteInvTx")	/* RdmaRdCompl + Invalidate */
SDP_MIB(ZCOPY_RINV_RX, "ZcopyRemoteInvRx")	/* our key invalidated */
SDP_MIB(ZCOPY_TX_SPLICED_BYTES, "ZcopyTxSplicedBytes")	/* of sendfile() */
SDP_MIB(ZCOPY_SLOW_READS, "ZcopySlowReads")	/* as if retried: sdp_zc_pace.h */
SDP_MIB(ZCOPY_BACKOFFS, "ZcopyBackoffs")	/* ... so reads stopped a while */
/* control messages and flow control */
SDP_MIB(CREDIT_UPDATES_TX, "CreditUpdatesTx")
SDP_MIB(CREDIT_UPDATES_RX, "CreditUpdatesRx")
SDP_MIB(CREDIT_STALLS, "CreditStalls")
SDP_MIB(DISCONN_TX, "DisConnTx")
SDP_MIB(DISCONN_RX, "DisConnRx")
SDP_MIB(ABORTCONN_TX, "AbortConnTx")
SDP_MIB(ABORTCONN_RX, "AbortConnRx")
/* dead-peer detection (sdp_keepalive.c) */
SDP_MIB(KEEPALIVE_PROBES, "KeepaliveProbes")	/* SO_KEEPALIVE probes */
SDP_MIB(PERSIST_PROBES, "PersistProbes")	/* ... while data waits */
SDP_MIB(PINGS_RX, "PingsRx")		/* the peer's pings (SDP_PING) */
/* busy polling (sdp_busy_poll()) */
SDP_MIB(BUSY_POLL_HITS, "BusyPollHits")		/* found what it waited for */
SDP_MIB(BUSY_POLL_YIELDS, "BusyPollYields")	/* another task was runnable */
SDP_MIB(CQ_HANDOFFS, "CqHandoffs")	/* a CQ event handed to the reader */
/* resuming after an outage (sdp_resume.c) */
SDP_MIB(RESUME_OFFERED, "ResumeOffered")	/* passive: connection named */
/* ... the listener could not be made (none offered for 10 s) */
SDP_MIB(RESUME_LISTEN_FAILED, "ResumeListenFailed")
SDP_MIB(RESUME_REFUSED, "ResumeRefused")	/* a Resume refused, of which: */
SDP_MIB(RESUME_BAD_FORMAT, "ResumeBadFormat")	/* ... malformed */
SDP_MIB(RESUME_BAD_CONN, "ResumeBadConn")	/* ... no such connection */
SDP_MIB(RESUME_BAD_GEN, "ResumeBadGen")		/* ... stale generation */
SDP_MIB(RESUME_BAD_TAG, "ResumeBadTag")		/* ... wrong tag */
SDP_MIB(RESUME_BAD_ADDR, "ResumeBadAddr")	/* ... unannounced address */
