/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- the net.sdp sysctls, listed once, in the
 * order of their table.  No include guard: a user defines
 * SDP_SYSCTL(name, min, max, init) and SDP_SYSCTL_MEM(name), includes this
 * file, and undefines them (sdp_sysctl.c makes the table, the ranges and
 * the initial values; tests/tunables.c and scripts/doc-sync read it too,
 * so it holds plain numbers only).
 *
 * SDP_SYSCTL: an int, /proc/sys/net/sdp/<name>, stored in struct
 * sdp_net::<name>; a write outside min..max fails with EINVAL; init is
 * what a new namespace starts with (recv_poll and zcopy_thresh: the
 * module parameter of that name, whose default init is).
 * SDP_SYSCTL_MEM: net.sdp.mem, three unsigned longs in struct
 * sdp_net::<name> (sdp_mem.c sets them from the size of RAM).
 *
 * man/sdp.7 and Documentation/networking/sdp.rst document each, with its
 * range and default; scripts/doc-sync (make lint) checks that they do.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */

/* microseconds a blocking receive polls the CQ before it sleeps */
SDP_SYSCTL(recv_poll, 0, 100000, 700)
/* seconds a closed socket waits for its peer's DisConn, then aborts */
SDP_SYSCTL(fin_timeout, 1, 3600, 60)
/* milliseconds for each of address and route resolution */
SDP_SYSCTL(resolve_timeout_ms, 100, 60000, 2000)
/* bytes: the smallest send that goes zero-copy (0: none does) */
SDP_SYSCTL(zcopy_thresh, 0, 1073741824, 65536)
/* pages: min, pressure, max of the connection buffers (sdp_mem.c) */
SDP_SYSCTL_MEM(mem)
/* connection requests held before they are established */
SDP_SYSCTL(max_half_open, 0, 65536, 256)
/*
 * receive buffers a connection posts until its peer sends faster than
 * they come back (then all of its ring); at least SDP_RX_INIT_BUFS
 */
SDP_SYSCTL(rx_init_bufs, 4, 1024, 4)
/* milliseconds without a send before the send buffers go (0: never) */
SDP_SYSCTL(tx_idle_ms, 0, 3600000, 1000)
/*
 * milliseconds without data before a grown receive ring shrinks back to
 * rx_init_bufs small buffers (0: never)
 */
SDP_SYSCTL(rx_idle_ms, 0, 3600000, 1000)
/* 1: a connect() that cannot be made over SDP goes on over TCP */
SDP_SYSCTL(tcp_fallback, 0, 1, 0)
/* seconds a destination stays in the negative cache (0: no cache) */
SDP_SYSCTL(tcp_fallback_cache_s, 0, 86400, 60)
/*
 * milliseconds the SDP attempt of a connect() may take with fallback on
 * (0: as long as the RDMA CM tries); also SDP_TCP_FALLBACK_TIMEOUT's
 * range
 */
SDP_SYSCTL(tcp_fallback_timeout_ms, 0, 600000, 3000)
/* 1: connection requests go through the host's input hook (sdp_filter.c) */
SDP_SYSCTL(netfilter, 0, 1, 1)
/*
 * 1: connections offer to resume after an outage (sdp_resume.c; being
 * built: so far they are named and Resumes are checked and refused)
 */
SDP_SYSCTL(resume, 0, 1, 0)
/* the port the namespace's resume listener takes when it is made */
SDP_SYSCTL(resume_port, 1, 65535, 1019)
