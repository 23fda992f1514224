/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- the per-socket counters, listed once.  No
 * include guard: a user defines SDP_SOCK_COUNTER(name, info, diag),
 * includes this file and undefines it.  name gives SDP_SC_<name>, the
 * counter's index in struct sdp_sock_stats; info is its field in struct
 * sdp_info (uapi sdp.h, getsockopt SDP_INFO), diag its field in struct
 * sdp_diag_stats (uapi sdp_diag.h, SDP_DIAG_STATS).  Both uapi structs
 * hold every counter (asserted in sdp_stats.c); their kernel-doc says
 * what each counts.  New counters go at the end of the uapi structs.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */

SDP_SOCK_COUNTER(BCOPY_TX_BYTES, sdpi_bcopy_tx_bytes, bcopy_tx_bytes)
SDP_SOCK_COUNTER(BCOPY_TX_MSGS, sdpi_bcopy_tx_msgs, bcopy_tx_msgs)
SDP_SOCK_COUNTER(BCOPY_RX_BYTES, sdpi_bcopy_rx_bytes, bcopy_rx_bytes)
SDP_SOCK_COUNTER(BCOPY_RX_MSGS, sdpi_bcopy_rx_msgs, bcopy_rx_msgs)
SDP_SOCK_COUNTER(ZCOPY_TX_BYTES, sdpi_zcopy_tx_bytes, zcopy_tx_bytes)
SDP_SOCK_COUNTER(ZCOPY_TX_MSGS, sdpi_zcopy_tx_msgs, zcopy_tx_msgs)
SDP_SOCK_COUNTER(ZCOPY_RX_BYTES, sdpi_zcopy_rx_bytes, zcopy_rx_bytes)
SDP_SOCK_COUNTER(ZCOPY_RX_MSGS, sdpi_zcopy_rx_msgs, zcopy_rx_msgs)
SDP_SOCK_COUNTER(RDMA_READS, sdpi_rdma_reads, rdma_reads)
SDP_SOCK_COUNTER(SENDSM_TX, sdpi_sendsm_tx, sendsm_tx)
SDP_SOCK_COUNTER(SENDSM_RX, sdpi_sendsm_rx, sendsm_rx)
SDP_SOCK_COUNTER(SRCAVAIL_CANCEL_TX, sdpi_cancel_tx, srcavail_cancel_tx)
SDP_SOCK_COUNTER(SRCAVAIL_CANCEL_RX, sdpi_cancel_rx, srcavail_cancel_rx)
SDP_SOCK_COUNTER(SRCAVAIL_TX, sdpi_srcavail_tx, srcavail_tx)
SDP_SOCK_COUNTER(SRCAVAIL_RX, sdpi_srcavail_rx, srcavail_rx)
SDP_SOCK_COUNTER(ZCOPY_FALLBACKS, sdpi_zcopy_fallbacks, zcopy_fallbacks)
SDP_SOCK_COUNTER(RINV_TX, sdpi_rinv_tx, rinv_tx)
SDP_SOCK_COUNTER(RINV_RX, sdpi_rinv_rx, rinv_rx)
SDP_SOCK_COUNTER(CREDIT_UPDATES_TX, sdpi_credit_updates_tx, credit_updates_tx)
SDP_SOCK_COUNTER(CREDIT_UPDATES_RX, sdpi_credit_updates_rx, credit_updates_rx)
SDP_SOCK_COUNTER(CREDIT_STALLS, sdpi_credit_stalls, credit_stalls)
