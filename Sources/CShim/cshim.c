#include "cshim.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

int cshim_sqlite3_bind_text_transient(sqlite3_stmt *s, int i, const char *v, int n) { return sqlite3_bind_text(s, i, v, n, SQLITE_TRANSIENT); }
int cshim_sqlite3_bind_blob_transient(sqlite3_stmt *s, int i, const void *v, int n) { return sqlite3_bind_blob(s, i, v, n, SQLITE_TRANSIENT); }
int cshim_sqlite3_no_checkpoint_on_close(sqlite3 *db) { return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0); }
int cshim_sqlite3_no_initial_page_cache(void) { return sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0); }
int cshim_sqlite3_bind_blob_static(sqlite3_stmt *s, int i, const void *v, int n) { return sqlite3_bind_blob(s, i, v, n, SQLITE_STATIC); }

int cshim_netlink_open(uint32_t groups) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -errno;
    struct sockaddr_nl sa; memset(&sa, 0, sizeof sa);
    sa.nl_family = AF_NETLINK; sa.nl_groups = groups;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) { int e = errno; close(fd); return -e; }
    return fd;
}

int cshim_netlink_request_dump(int fd, uint16_t type, uint32_t seq) {
    struct { struct nlmsghdr nh; struct rtgenmsg g; } req;
    memset(&req, 0, sizeof req);
    req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtgenmsg));
    req.nh.nlmsg_type = type;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.nh.nlmsg_seq = seq;
    req.g.rtgen_family = AF_UNSPEC;
    struct sockaddr_nl sa; memset(&sa, 0, sizeof sa); sa.nl_family = AF_NETLINK;
    ssize_t n = sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof sa);
    return n < 0 ? -errno : 0;
}
uint32_t cshim_rtmgrp_link(void) { return RTMGRP_LINK; }
uint32_t cshim_rtmgrp_ipv4_ifaddr(void) { return RTMGRP_IPV4_IFADDR; }
uint32_t cshim_rtmgrp_ipv6_ifaddr(void) { return RTMGRP_IPV6_IFADDR; }
uint32_t cshim_rtmgrp_ipv4_route(void) { return RTMGRP_IPV4_ROUTE; }
uint32_t cshim_rtmgrp_ipv6_route(void) { return RTMGRP_IPV6_ROUTE; }
// Through syscall(2) so this file needs no _GNU_SOURCE (which would change other prototypes).
#include <sys/syscall.h>
#include <linux/sched.h>
int cshim_setns_net(int fd) { return syscall(SYS_setns, fd, CLONE_NEWNET) < 0 ? -errno : 0; }
#ifndef SYNC_FILE_RANGE_WRITE
#define SYNC_FILE_RANGE_WRITE 2 /* linux/fs.h */
#endif
int cshim_start_writeback(int fd, int64_t offset, int64_t count) {
    return syscall(SYS_sync_file_range, fd, offset, count, SYNC_FILE_RANGE_WRITE) < 0 ? -errno : 0;
}

long cshim_copy_file_range(int in_fd, long long *in_offset, int out_fd, unsigned long length) {
    long long offset = *in_offset;
    long n = syscall(SYS_copy_file_range, in_fd, &offset, out_fd, (long long *)0, (size_t)length, 0u);
    if (n < 0) return -errno;
    *in_offset = offset;
    return n;
}

int cshim_prctl_set_dumpable(int value) { return prctl(PR_SET_DUMPABLE, (unsigned long)value, 0UL, 0UL, 0UL) == 0 ? 0 : -errno; }
int cshim_prctl_get_dumpable(void) { int r = prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL); return r >= 0 ? r : -errno; }

int cshim_errno(void) { return errno; }
