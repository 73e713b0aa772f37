// gzip bodies (RFC 1952) decoded by syncd with the zlib libcurl already loaded, instead of by libcurl:
// libcurl takes a gzip body that stops before its 8-byte trailer (CRC-32 and length) as whole, so a
// response cut there would replace a cache (docs/syncd.8.md, GUARANTEES). zlib is found through
// libcurl's handle (it is one of libcurl's libraries), so syncd links nothing more.
#include "cshim.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct cshim_gunzip {
    z_stream stream;
    int (*inflate_)(z_streamp, int);
    int (*inflate_end)(z_streamp);
    int (*inflate_reset)(z_streamp);
    int complete;   /* the input so far ends right after a member's checked trailer */
    int started;    /* a member has begun (some input after the last complete member) */
};

cshim_gunzip *cshim_gunzip_new(const cshim_curl *api) {
    int (*init)(z_streamp, int, const char *, int) = (int (*)(z_streamp, int, const char *, int))cshim_curl_symbol(api, "inflateInit2_");
    cshim_gunzip *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    *(void **)&g->inflate_ = cshim_curl_symbol(api, "inflate");
    *(void **)&g->inflate_end = cshim_curl_symbol(api, "inflateEnd");
    *(void **)&g->inflate_reset = cshim_curl_symbol(api, "inflateReset");
    /* 16 + MAX_WBITS: a gzip wrapper only, its CRC-32 and length checked by zlib. */
    if (!init || !g->inflate_ || !g->inflate_end || !g->inflate_reset
        || init(&g->stream, 16 + MAX_WBITS, ZLIB_VERSION, (int)sizeof(z_stream)) != Z_OK) {
        free(g);
        return NULL;
    }
    return g;
}

int cshim_gunzip_feed(cshim_gunzip *g, const unsigned char *data, size_t length, cshim_gunzip_output output, void *user,
                      char *error, size_t error_size) {
    unsigned char buffer[16384];
    g->stream.next_in = (unsigned char *)data;
    g->stream.avail_in = (uInt)length;
    while (g->stream.avail_in > 0) {
        if (g->complete) {
            /* Another member follows (RFC 1952 §2.2): decoded after the first. */
            g->inflate_reset(&g->stream);
            g->complete = 0;
        }
        g->started = 1;
        g->stream.next_out = buffer;
        g->stream.avail_out = sizeof buffer;
        int status = g->inflate_(&g->stream, Z_NO_FLUSH);
        size_t produced = sizeof buffer - g->stream.avail_out;
        if (produced > 0 && output(user, buffer, produced) != 0) return -2;
        if (status == Z_STREAM_END) {
            g->complete = 1;
        } else if (status != Z_OK && !(status == Z_BUF_ERROR && produced == 0 && g->stream.avail_in == 0)) {
            snprintf(error, error_size, "%s", g->stream.msg ? g->stream.msg : "invalid compressed data");
            return -1;
        }
    }
    /* Output zlib still holds for input already given: drained before returning. */
    for (;;) {
        g->stream.next_out = buffer;
        g->stream.avail_out = sizeof buffer;
        int status = g->inflate_(&g->stream, Z_NO_FLUSH);
        size_t produced = sizeof buffer - g->stream.avail_out;
        if (produced > 0 && output(user, buffer, produced) != 0) return -2;
        if (status == Z_STREAM_END) g->complete = 1;
        if (produced == 0 || status != Z_OK) break;
    }
    return 0;
}

int cshim_gunzip_complete(const cshim_gunzip *g) { return g->complete || !g->started; }

void cshim_gunzip_free(cshim_gunzip *g) {
    if (!g) return;
    g->inflate_end(&g->stream);
    free(g);
}
