// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- the tracepoints of sdp_trace.h are made here;
 * the rest of the module calls them through the sdp_stat_*() hooks
 * (sdp_stats.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#define CREATE_TRACE_POINTS
#include "sdp_trace.h"
