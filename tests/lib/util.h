/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the SDP test suites: the module, the kernel log,
 * /proc/net/sdp and the test bed's environment.
 */
#ifndef SDP_TEST_UTIL_H
#define SDP_TEST_UTIL_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Environment set up by tests/vm/guest-init or tests/run_tests (defaults
 * for other hosts).
 */
const char *env_or(const char *name, const char *dflt);
#define TEST_ADDR()	env_or("SDP_TEST_ADDR", "10.55.0.1")
/* The test's RDMA device: SDP_TEST_DEVICE, or by its older name SDP_TEST_IBDEV. */
const char *test_device(void);
#define TEST_IBDEV()	test_device()
#define TEST_NETDEV()	env_or("SDP_TEST_NETDEV", "d0")
/*
 * The RDMA provider of TEST_IBDEV(): "rxe" (Soft-RoCE) or "siw"
 * (soft-iWARP) in the test guest; on a real host the driver that
 * tests/run_tests found ("mlx5_core", say).
 */
#define TEST_PROVIDER()	env_or("SDP_TEST_PROVIDER", "rxe")
/* Is the test device soft-iWARP's (its connections run over kernel TCP)? */
bool test_provider_siw(void);
/* Is it Soft-RoCE's? */
bool test_provider_rxe(void);
/* Is it an iWARP device (an RNIC: siw, cxgb4, irdma in iWARP mode)? */
bool test_device_iwarp(void);
/* The device's completion vectors (ibv_devinfo -v), or -1 if unknown. */
int test_device_comp_vectors(void);

/*
 * Host mode (SDP_TEST_HOST=1, set by tests/run_tests: make check-host):
 * the suites run on a real host against its own device and address, and
 * leave the host as they found it.  A test that would change the host's
 * RDMA devices, addresses, links, routes or firewall, load or unload a
 * module other than sdp, or write a setting outside net.sdp, skips with
 * what it would do (TESTING.md, "On a real host").
 */
bool test_host_mode(void);
#define TAP_SKIP_IF_HOST(...)						\
	do {								\
		if (test_host_mode())					\
			tap_skip("host mode: " __VA_ARGS__);		\
	} while (0)
/*
 * For a test that unloads sdp: in host mode it runs only if the harness
 * loaded sdp for this run (SDP_TEST_OWN_MODULE=1) and will unload it
 * again; the host's own sdp, with its parameters and settings, is left
 * alone (the test skips).
 */
void test_need_own_module(void);

/* An errno's name ("ECONNRESET"); "0" for none. */
const char *errname(int err);

/* SIGURGs caught since sigurg_catch(); a test may set it to 0. */
extern volatile sig_atomic_t sigurgs;
/* Count SIGURG in sigurgs; the action it replaces goes to @old. */
void sigurg_catch(struct sigaction *old);
/* A SIGURG came (for wait_until()). */
bool got_sigurg(void *arg);

/* Is the sdp module loaded (and live)? */
bool sdp_loaded(void);
/* Unload sdp; waits up to timeout_ms for its users to go.  0 or -errno. */
int sdp_unload(int timeout_ms);
/* Load sdp.ko ($SDP_KO) with module parameters @params.  0 or -errno. */
int sdp_load(const char *params);
/* Make sure sdp is loaded (with default parameters); 0 or -errno. */
int sdp_ensure_loaded(void);
/* The module's reference count, or -1 if it is not loaded. */
int sdp_refcnt(void);

/* A counter of /proc/net/sdp_stats ("Name value" lines), -1 if absent. */
long long sdp_stat(const char *name);

/* Number of socket lines in /proc/net/sdp, or -1 if it cannot be read. */
int proc_net_sdp_count(void);
/* Is there a /proc/net/sdp line for the socket with inode @ino? */
bool proc_net_sdp_has_inode(unsigned long ino);
/*
 * Every SDP socket, its state, timers and counters (/proc/net/sdp and
 * sdpstat -a -e), as TAP comments: what a test that finds sockets left
 * over shows.
 */
void diag_sdp_sockets(void);

/*
 * Kernel log: kmsg_open() positions a reader at the end of the log;
 * kmsg_read() hands @fn the text of each record logged since (its first
 * line, without the "prio,seq,usec,flags;" prefix) until @fn returns true
 * (and then returns true) or there is no more; kmsg_find() reads what was
 * logged since and returns whether a message containing @needle is
 * among it.
 */
int kmsg_open(void);
bool kmsg_read(int fd, bool (*fn)(void *arg, const char *text, size_t len),
	       void *arg);
bool kmsg_find(int fd, const char *needle);

/* malloc() that fails the running test when there is no memory. */
void *xmalloc(size_t size);

/* Is the running kernel @major.@minor or newer? */
bool kernel_at_least(int major, int minor);

/* Is the running kernel built with KASAN (its kasan_report symbol)? */
bool kernel_has_kasan(void);

/* Write @value to the file @path (a sysctl); 0 or -errno. */
int write_file(const char *path, const char *value);

/*
 * tracefs's root in @buf (/sys/kernel/tracing, mounted there if it was
 * not); false if it cannot be had.
 */
bool tracefs_root(char *buf, size_t size);

/* Read a small file into @buf (NUL-terminated, trailing newline cut). */
int read_file(const char *path, char *buf, size_t size);
/* Read an unsigned integer from a file; -1 on error. */
long long read_ull(const char *path);
/*
 * ... from @rel under the test device's port 1 in sysfs
 * (/sys/class/infiniband/<TEST_IBDEV()>/ports/1/<rel>, for example
 * "hw_counters/sent_pkts" or "cm_tx_msgs/rej"); -1 on error.
 */
long long port_read_ull(const char *rel);
/* The port's hw_counters/@name (Soft-RoCE's packet counters); -1 if absent. */
long long port_hw_counter(const char *name);

/*
 * RDMA resources of every device, as `rdma resource show` counts them
 * ("rxe0: pd 1 cq 2 qp 1 cm_id 0 mr 0 ..."), summed over the devices.
 * The counts include user-space objects (the peer suite's own).
 */
struct rdma_res {
	long pd, cq, qp, cm_id, mr;
};

/* 0, or -1 if the rdma tool cannot be run or read. */
int rdma_res_read(struct rdma_res *r);
bool rdma_res_equal(const struct rdma_res *a, const struct rdma_res *b);
/* Is every count of @r at most that of @max? */
bool rdma_res_within(const struct rdma_res *r, const struct rdma_res *max);
/* "pd 1 cq 2 qp 1 cm_id 0 mr 0" in @buf. */
const char *rdma_res_str(const struct rdma_res *r, char *buf, size_t size);
/*
 * Wait up to @timeout_ms for every count to be back at or below @max
 * (teardown of closed sockets runs in the background); true if it is.
 * *@now gets the last counts read.
 */
bool rdma_res_wait(const struct rdma_res *max, struct rdma_res *now,
		   int timeout_ms);

/* Pages this process has pinned (VmPin of /proc/self/status), in kB; -1 if unknown. */
long vm_pin_kb(void);

/* Run a command (argv, NULL-terminated); returns its exit status or -1. */
int run(const char *const argv[]);

/*
 * Is thread *(pid_t *)@tid of this process asleep in an interruptible
 * wait (a blocking call)?  Shaped for wait_until().
 */
bool task_sleeping(void *tid);

/*
 * pthread_join() with a bound: 0, or ETIMEDOUT if the thread has not
 * ended after @timeout_ms (a hang is a failure, not a stuck suite).
 */
int join_ms(pthread_t t, int timeout_ms);

/*
 * close() in a thread of its own, for a close() the module holds up
 * (release_delay_ms, sdp_fault.c: sdp_release_delay() sets it):
 * closer_start() starts it; closer_join() waits for it, bounded, and
 * gives its result, 0 or its errno; @done says whether it returned.
 */
struct closer {
	pthread_t t;
	int fd;
	int err;
	atomic_bool done;
};

void closer_start(struct closer *c, int fd);
int closer_join(struct closer *c);
/*
 * The module's pause in close() after it looked for unread data, in
 * ms (0: none); CHECKed.  sdp_release_delay_available() says whether
 * debugfs has it.
 */
#define SDP_RELEASE_DELAY	"/sys/kernel/debug/sdp/release_delay_ms"
bool sdp_release_delay_available(void);
void sdp_release_delay(int ms);

/* Is capability @cap (CAP_*) in our effective set? */
bool has_cap(int cap);
/* Take @cap out of our effective set; 0, or -1 with errno. */
int drop_cap(int cap);

#endif /* SDP_TEST_UTIL_H */
