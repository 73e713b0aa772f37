// libcurl through dlopen: the daemon maps libcurl and the ~30 libraries it brings (~10 MiB resident)
// only while a transfer or a URL parse needs it (docs/architecture.md, "libcurl on demand").
// SyncRemote's CurlLibrary counts the users and calls cshim_curl_open/cshim_curl_close.
#include "cshim.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

struct cshim_curl {
    void *library;
    CURLcode (*global_init)(long);
    void (*global_cleanup)(void);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLU *(*url)(void);
    void (*url_cleanup)(CURLU *);
    CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
    CURLUcode (*url_get)(const CURLU *, CURLUPart, char **, unsigned int);
    void (*free)(void *);
};

cshim_curl *cshim_curl_open(const char *name, char *error, size_t error_size) {
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        snprintf(error, error_size, "%s", reason ? reason : "dlopen failed");
        return NULL;
    }
    cshim_curl *api = calloc(1, sizeof *api);
    if (!api) {
        snprintf(error, error_size, "out of memory");
        dlclose(library);
        return NULL;
    }
    api->library = library;
    const char *missing = NULL;
#define RESOLVE(field, symbol) \
    if (!missing && !(*(void **)&api->field = dlsym(library, symbol))) missing = symbol;
    RESOLVE(global_init, "curl_global_init")
    RESOLVE(global_cleanup, "curl_global_cleanup")
    RESOLVE(easy_init, "curl_easy_init")
    RESOLVE(easy_cleanup, "curl_easy_cleanup")
    RESOLVE(easy_reset, "curl_easy_reset")
    RESOLVE(easy_perform, "curl_easy_perform")
    RESOLVE(easy_strerror, "curl_easy_strerror")
    RESOLVE(easy_setopt, "curl_easy_setopt")
    RESOLVE(easy_getinfo, "curl_easy_getinfo")
    RESOLVE(slist_append, "curl_slist_append")
    RESOLVE(slist_free_all, "curl_slist_free_all")
    RESOLVE(url, "curl_url")
    RESOLVE(url_cleanup, "curl_url_cleanup")
    RESOLVE(url_set, "curl_url_set")
    RESOLVE(url_get, "curl_url_get")
    RESOLVE(free, "curl_free")
#undef RESOLVE
    if (missing) {
        snprintf(error, error_size, "%s has no %s (libcurl 7.85 or later is needed)", name, missing);
    } else if (api->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(error, error_size, "curl_global_init failed");
        missing = "curl_global_init";
    }
    if (missing) {
        dlclose(library);
        free(api);
        return NULL;
    }
    return api;
}

void cshim_curl_close(cshim_curl *api) {
    api->global_cleanup();
    dlclose(api->library);
    free(api);
}

CURL *cshim_curl_easy_init(const cshim_curl *api) { return api->easy_init(); }
void cshim_curl_easy_cleanup(const cshim_curl *api, CURL *h) { api->easy_cleanup(h); }
void cshim_curl_easy_reset(const cshim_curl *api, CURL *h) { api->easy_reset(h); }
CURLcode cshim_curl_easy_perform(const cshim_curl *api, CURL *h) { return api->easy_perform(h); }
const char *cshim_curl_easy_strerror(const cshim_curl *api, CURLcode code) { return api->easy_strerror(code); }
struct curl_slist *cshim_curl_slist_append(const cshim_curl *api, struct curl_slist *list, const char *line) { return api->slist_append(list, line); }
void cshim_curl_slist_free_all(const cshim_curl *api, struct curl_slist *list) { api->slist_free_all(list); }
CURLU *cshim_curl_url(const cshim_curl *api) { return api->url(); }
void cshim_curl_url_cleanup(const cshim_curl *api, CURLU *u) { api->url_cleanup(u); }
CURLUcode cshim_curl_url_set(const cshim_curl *api, CURLU *u, CURLUPart part, const char *content, unsigned int flags) { return api->url_set(u, part, content, flags); }
CURLUcode cshim_curl_url_get(const cshim_curl *api, CURLU *u, CURLUPart part, char **out, unsigned int flags) { return api->url_get(u, part, out, flags); }
void cshim_curl_free(const cshim_curl *api, void *p) { api->free(p); }

CURLcode cshim_curl_setopt_long(const cshim_curl *api, CURL *h, CURLoption o, long v) { return api->easy_setopt(h, o, v); }
CURLcode cshim_curl_setopt_off(const cshim_curl *api, CURL *h, CURLoption o, curl_off_t v) { return api->easy_setopt(h, o, v); }
CURLcode cshim_curl_setopt_str(const cshim_curl *api, CURL *h, CURLoption o, const char *v) { return api->easy_setopt(h, o, v); }
CURLcode cshim_curl_setopt_ptr(const cshim_curl *api, CURL *h, CURLoption o, void *v) { return api->easy_setopt(h, o, v); }
CURLcode cshim_curl_setopt_slist(const cshim_curl *api, CURL *h, CURLoption o, struct curl_slist *v) { return api->easy_setopt(h, o, v); }
CURLcode cshim_curl_setopt_writefn(const cshim_curl *api, CURL *h, cshim_curl_data_cb cb) { return api->easy_setopt(h, CURLOPT_WRITEFUNCTION, cb); }
CURLcode cshim_curl_setopt_headerfn(const cshim_curl *api, CURL *h, cshim_curl_data_cb cb) { return api->easy_setopt(h, CURLOPT_HEADERFUNCTION, cb); }
CURLcode cshim_curl_setopt_readfn(const cshim_curl *api, CURL *h, cshim_curl_data_cb cb) { return api->easy_setopt(h, CURLOPT_READFUNCTION, cb); }
CURLcode cshim_curl_setopt_xferinfofn(const cshim_curl *api, CURL *h, cshim_curl_xferinfo_cb cb) { return api->easy_setopt(h, CURLOPT_XFERINFOFUNCTION, cb); }
CURLcode cshim_curl_setopt_seekfn(const cshim_curl *api, CURL *h, cshim_curl_seek_cb cb) { return api->easy_setopt(h, CURLOPT_SEEKFUNCTION, cb); }
CURLcode cshim_curl_getinfo_long(const cshim_curl *api, CURL *h, CURLINFO i, long *out) { return api->easy_getinfo(h, i, out); }
CURLcode cshim_curl_getinfo_off(const cshim_curl *api, CURL *h, CURLINFO i, curl_off_t *out) { return api->easy_getinfo(h, i, out); }
CURLcode cshim_curl_getinfo_str(const cshim_curl *api, CURL *h, CURLINFO i, char **out) { return api->easy_getinfo(h, i, out); }
long cshim_curlauth_bearer(void) { return (long)CURLAUTH_BEARER; }
size_t cshim_curl_writefunc_error(void) { return CURL_WRITEFUNC_ERROR; }
void *cshim_curl_symbol(const cshim_curl *api, const char *name) { return dlsym(api->library, name); }
