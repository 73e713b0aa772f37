#include "cshim.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

CURLcode cshim_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
CURLcode cshim_curl_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
CURLcode cshim_curl_setopt_str(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
CURLcode cshim_curl_setopt_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
CURLcode cshim_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
CURLcode cshim_curl_setopt_writefn(CURL *h, cshim_curl_data_cb cb) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cb); }
CURLcode cshim_curl_setopt_headerfn(CURL *h, cshim_curl_data_cb cb) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, cb); }
CURLcode cshim_curl_setopt_readfn(CURL *h, cshim_curl_data_cb cb) { return curl_easy_setopt(h, CURLOPT_READFUNCTION, cb); }
CURLcode cshim_curl_setopt_xferinfofn(CURL *h, cshim_curl_xferinfo_cb cb) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, cb); }
CURLcode cshim_curl_setopt_seekfn(CURL *h, cshim_curl_seek_cb cb) { return curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, cb); }
CURLcode cshim_curl_getinfo_long(CURL *h, CURLINFO i, long *out) { return curl_easy_getinfo(h, i, out); }
CURLcode cshim_curl_getinfo_off(CURL *h, CURLINFO i, curl_off_t *out) { return curl_easy_getinfo(h, i, out); }
CURLcode cshim_curl_getinfo_str(CURL *h, CURLINFO i, char **out) { return curl_easy_getinfo(h, i, out); }
long cshim_curlauth_bearer(void) { return (long)CURLAUTH_BEARER; }
size_t cshim_curl_writefunc_error(void) { return CURL_WRITEFUNC_ERROR; }

int cshim_sqlite3_bind_text_transient(sqlite3_stmt *s, int i, const char *v, int n) { return sqlite3_bind_text(s, i, v, n, SQLITE_TRANSIENT); }
int cshim_sqlite3_bind_blob_transient(sqlite3_stmt *s, int i, const void *v, int n) { return sqlite3_bind_blob(s, i, v, n, SQLITE_TRANSIENT); }
int cshim_sqlite3_no_checkpoint_on_close(sqlite3 *db) { return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0); }
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

int cshim_errno(void) { return errno; }
