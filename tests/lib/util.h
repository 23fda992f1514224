/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the SDP test suites: the module, the kernel log,
 * /proc/net/sdp and the test bed's environment.
 */
#ifndef SDP_TEST_UTIL_H
#define SDP_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>

/* Environment set up by tests/vm/guest-init (defaults for other hosts). */
const char *env_or(const char *name, const char *dflt);
#define TEST_ADDR()	env_or("SDP_TEST_ADDR", "10.55.0.1")
#define TEST_IBDEV()	env_or("SDP_TEST_IBDEV", "rxe0")

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

/* Number of socket lines in /proc/net/sdp, or -1 if it cannot be read. */
int proc_net_sdp_count(void);
/* Is there a /proc/net/sdp line for the socket with inode @ino? */
bool proc_net_sdp_has_inode(unsigned long ino);

/*
 * Kernel log: kmsg_open() positions a reader at the end of the log;
 * kmsg_find() reads what was logged since and returns whether a message
 * containing @needle is among it.
 */
int kmsg_open(void);
bool kmsg_find(int fd, const char *needle);

/* Read a small file into @buf (NUL-terminated, trailing newline cut). */
int read_file(const char *path, char *buf, size_t size);
/* Read an unsigned integer from a file; -1 on error. */
long long read_ull(const char *path);

/* Run a command (argv, NULL-terminated); returns its exit status or -1. */
int run(const char *const argv[]);

/*
 * Is thread *(pid_t *)@tid of this process asleep in an interruptible
 * wait (a blocking call)?  Shaped for wait_until().
 */
bool task_sleeping(void *tid);

/* Is capability @cap (CAP_*) in our effective set? */
bool has_cap(int cap);
/* Take @cap out of our effective set; 0, or -1 with errno. */
int drop_cap(int cap);

#endif /* SDP_TEST_UTIL_H */
