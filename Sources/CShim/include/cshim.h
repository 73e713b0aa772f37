// Typed one-line wrappers for C APIs that Swift cannot call directly.
// Every symbol is prefixed `cshim_` and says why it exists.
#ifndef SYNCD_CSHIM_H
#define SYNCD_CSHIM_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include <curl/curl.h>
// glibc's allocator controls (mallopt, malloc_trim) are not in Swift's Glibc module; the daemon's
// MemoryPolicy calls them directly through this include.
#include <malloc.h>

// --- libcurl, loaded with dlopen only while it is used (docs/architecture.md, "libcurl on demand"). ---
// The headers give types and constants; every call goes through the table of an opened copy.
typedef struct cshim_curl cshim_curl;
/* Opens `name` (RTLD_NOW | RTLD_LOCAL), resolves every function syncd calls and runs curl_global_init.
   NULL on failure, with the reason (dlerror, a missing symbol, curl_global_init) in `error`. */
cshim_curl *cshim_curl_open(const char *name, char *error, size_t error_size);
/* curl_global_cleanup, then dlclose; `api` is freed. */
void cshim_curl_close(cshim_curl *api);
CURL *cshim_curl_easy_init(const cshim_curl *api);
void cshim_curl_easy_cleanup(const cshim_curl *api, CURL *h);
void cshim_curl_easy_reset(const cshim_curl *api, CURL *h);
CURLcode cshim_curl_easy_perform(const cshim_curl *api, CURL *h);
const char *cshim_curl_easy_strerror(const cshim_curl *api, CURLcode code);
struct curl_slist *cshim_curl_slist_append(const cshim_curl *api, struct curl_slist *list, const char *line);
void cshim_curl_slist_free_all(const cshim_curl *api, struct curl_slist *list);
CURLU *cshim_curl_url(const cshim_curl *api);
void cshim_curl_url_cleanup(const cshim_curl *api, CURLU *u);
CURLUcode cshim_curl_url_set(const cshim_curl *api, CURLU *u, CURLUPart part, const char *content, unsigned int flags);
CURLUcode cshim_curl_url_get(const cshim_curl *api, CURLU *u, CURLUPart part, char **out, unsigned int flags);
void cshim_curl_free(const cshim_curl *api, void *p);
// curl_easy_setopt/curl_easy_getinfo are variadic.
CURLcode cshim_curl_setopt_long(const cshim_curl *api, CURL *h, CURLoption o, long v);
CURLcode cshim_curl_setopt_off(const cshim_curl *api, CURL *h, CURLoption o, curl_off_t v);
CURLcode cshim_curl_setopt_str(const cshim_curl *api, CURL *h, CURLoption o, const char *v);
CURLcode cshim_curl_setopt_ptr(const cshim_curl *api, CURL *h, CURLoption o, void *v);
CURLcode cshim_curl_setopt_slist(const cshim_curl *api, CURL *h, CURLoption o, struct curl_slist *v);
typedef size_t (*cshim_curl_data_cb)(char *ptr, size_t size, size_t n, void *user);
typedef int (*cshim_curl_xferinfo_cb)(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);
CURLcode cshim_curl_setopt_writefn(const cshim_curl *api, CURL *h, cshim_curl_data_cb cb);
CURLcode cshim_curl_setopt_headerfn(const cshim_curl *api, CURL *h, cshim_curl_data_cb cb);
CURLcode cshim_curl_setopt_readfn(const cshim_curl *api, CURL *h, cshim_curl_data_cb cb);
CURLcode cshim_curl_setopt_xferinfofn(const cshim_curl *api, CURL *h, cshim_curl_xferinfo_cb cb);
/* CURLOPT_SEEKFUNCTION: lets libcurl rewind a request body it must send again (a retried connection, auth). */
typedef int (*cshim_curl_seek_cb)(void *user, curl_off_t offset, int origin);
CURLcode cshim_curl_setopt_seekfn(const cshim_curl *api, CURL *h, cshim_curl_seek_cb cb);
CURLcode cshim_curl_getinfo_long(const cshim_curl *api, CURL *h, CURLINFO i, long *out);
CURLcode cshim_curl_getinfo_off(const cshim_curl *api, CURL *h, CURLINFO i, curl_off_t *out);
CURLcode cshim_curl_getinfo_str(const cshim_curl *api, CURL *h, CURLINFO i, char **out);
// CURLAUTH_BEARER is a macro (an unsigned long shift).
long cshim_curlauth_bearer(void);
// CURL_WRITEFUNC_ERROR is a macro.
size_t cshim_curl_writefunc_error(void);
/* dlsym in the loaded libcurl and the libraries it brings (zlib for cshim_gunzip); NULL when absent. */
void *cshim_curl_symbol(const cshim_curl *api, const char *name);

// --- gzip bodies decoded by syncd (cshim_gunzip.c): libcurl takes one cut before its trailer as whole. ---
typedef struct cshim_gunzip cshim_gunzip;
/* A decoder of gzip members with the zlib libcurl brings; NULL when it has none (or out of memory). */
cshim_gunzip *cshim_gunzip_new(const cshim_curl *api);
/* Receives decoded bytes; non-zero stops decoding (cshim_gunzip_feed returns -2). */
typedef int (*cshim_gunzip_output)(void *user, const unsigned char *data, size_t length);
/* Decodes `length` more bytes of the body: 0, -1 for damaged data (zlib's reason in `error`: a wrong CRC-32
   or length, a bad header), or -2 when `output` stopped it. Members that follow one another are all decoded. */
int cshim_gunzip_feed(cshim_gunzip *g, const unsigned char *data, size_t length, cshim_gunzip_output output, void *user,
                      char *error, size_t error_size);
/* Whether the body so far ends right after a member's trailer (or is empty): otherwise it was cut. */
int cshim_gunzip_complete(const cshim_gunzip *g);
void cshim_gunzip_free(cshim_gunzip *g);

// --- SQLite: SQLITE_TRANSIENT is a macro that casts -1 to a function pointer. ---
int cshim_sqlite3_bind_text_transient(sqlite3_stmt *s, int i, const char *v, int n);
int cshim_sqlite3_bind_blob_transient(sqlite3_stmt *s, int i, const void *v, int n);
// sqlite3_db_config is variadic: SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE.
int cshim_sqlite3_no_checkpoint_on_close(sqlite3 *db);
// sqlite3_config is variadic: SQLITE_CONFIG_PAGECACHE with no buffer and no initial pages.
int cshim_sqlite3_no_initial_page_cache(void);
int cshim_sqlite3_bind_blob_static(sqlite3_stmt *s, int i, const void *v, int n);

// --- Netlink: NLMSG_*/RTA_* are macros; the constants are mirrored here. ------
int cshim_netlink_open(uint32_t groups);              // socket + bind; -errno on failure
int cshim_netlink_request_dump(int fd, uint16_t type, uint32_t seq); // RTM_GETLINK/GETADDR dump request
uint32_t cshim_rtmgrp_link(void);
uint32_t cshim_rtmgrp_ipv4_ifaddr(void);
uint32_t cshim_rtmgrp_ipv6_ifaddr(void);
uint32_t cshim_rtmgrp_ipv4_route(void);
uint32_t cshim_rtmgrp_ipv6_route(void);
// setns(2) and CLONE_NEWNET are declared only under _GNU_SOURCE, which Swift's Glibc module lacks.
int cshim_setns_net(int fd);                          // 0, or -errno on failure
// copy_file_range(2), also declared only under _GNU_SOURCE: copies `length` bytes from `in_fd` at
// *in_offset to `out_fd` at its file position; the count copied, or -errno on failure.
long cshim_copy_file_range(int in_fd, long long *in_offset, int out_fd, unsigned long length);
// sync_file_range(2) with SYNC_FILE_RANGE_WRITE (starts writeback, waits for nothing); also _GNU_SOURCE only.
int cshim_start_writeback(int fd, int64_t offset, int64_t count); // 0, or -errno on failure

// prctl(2) is variadic. PR_SET_DUMPABLE 0: no core dump, no ptrace by other users (the token stays in memory).
int cshim_prctl_set_dumpable(int value);              // 0, or -errno on failure
int cshim_prctl_get_dumpable(void);                   // the flag (0, 1 or 2), or -errno on failure

// --- errno is a macro over a thread-local function in glibc. -----------------
int cshim_errno(void);

#endif
