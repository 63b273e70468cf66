/* hash.c — hashing: SHA-256 and HMAC-SHA256 from OpenSSL's libcrypto for
 * compile-cache keys and entry authentication (only the disk cache needs
 * them: it is off where OpenSSL cannot compute them), the kernel's random
 * source for keys, and a fast non-cryptographic hash for in-memory bucket
 * choice. */
#include "core.h"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

struct amp__sha256 {
    EVP_MD_CTX *ctx;
    bool ok;
};

amp__sha256 *amp__sha256_new(void)
{
    amp__sha256 *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->ctx = EVP_MD_CTX_new();
    h->ok = h->ctx && EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) == 1;
    if (!h->ok) {
        EVP_MD_CTX_free(h->ctx);
        free(h);
        return NULL;
    }
    return h;
}

void amp__sha256_field(amp__sha256 *h, const void *data, size_t n)
{
    uint64_t len = n;
    h->ok = h->ok && EVP_DigestUpdate(h->ctx, &len, sizeof len) == 1 && (n == 0 || EVP_DigestUpdate(h->ctx, data, n) == 1);
}

void amp__sha256_str(amp__sha256 *h, const char *s)
{
    /* NULL is its own value: a length no string has. */
    if (!s) {
        uint64_t none = UINT64_MAX;
        h->ok = h->ok && EVP_DigestUpdate(h->ctx, &none, sizeof none) == 1;
        return;
    }
    amp__sha256_field(h, s, strlen(s));
}

bool amp__sha256_final(amp__sha256 *h, uint8_t out[32])
{
    unsigned n = 0;
    bool ok = h->ok && EVP_DigestFinal_ex(h->ctx, out, &n) == 1 && n == 32;
    /* Zeros where it failed: defined bytes, but no caller may use them as
     * a digest (every build would get the one key, and load another
     * source's module). */
    if (!ok) memset(out, 0, 32);
    EVP_MD_CTX_free(h->ctx);
    free(h);
    return ok;
}

bool amp__hmac_sha256(const uint8_t key[32], const void *a, size_t na, const void *b, size_t nb, uint8_t out[32])
{
    bool ok = false;
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0), OSSL_PARAM_construct_end()};
    size_t n = 0;
    if (ctx && EVP_MAC_init(ctx, key, 32, params) == 1 && (na == 0 || EVP_MAC_update(ctx, a, na) == 1) &&
        (nb == 0 || EVP_MAC_update(ctx, b, nb) == 1) && EVP_MAC_final(ctx, out, &n, 32) == 1 && n == 32)
        ok = true;
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
    if (!ok) memset(out, 0, 32);
    return ok;
}

bool amp__crypto_usable(char *why, size_t n)
{
    uint8_t key[32] = {0}, out[32];
    amp__sha256 *h = amp__sha256_new();
    if (!h) {
        unsigned long e = ERR_peek_last_error();
        snprintf(why, n, "OpenSSL's libcrypto offers no SHA-256 (%s; is its default provider loaded? see "
                 "OPENSSL_CONF, OPENSSL_MODULES)", e ? ERR_reason_error_string(e) : "no reason given");
        ERR_clear_error();
        return false;
    }
    if (!amp__sha256_final(h, out)) {
        unsigned long e = ERR_peek_last_error();
        snprintf(why, n, "OpenSSL's libcrypto cannot finish a SHA-256 digest (%s; is its default provider loaded? see "
                 "OPENSSL_CONF, OPENSSL_MODULES)", e ? ERR_reason_error_string(e) : "no reason given");
        ERR_clear_error();
        return false;
    }
    if (!amp__hmac_sha256(key, "", 0, "", 0, out)) {
        unsigned long e = ERR_peek_last_error();
        snprintf(why, n, "OpenSSL's libcrypto cannot compute HMAC-SHA256 (%s; is its default provider loaded? see "
                 "OPENSSL_CONF, OPENSSL_MODULES)", e ? ERR_reason_error_string(e) : "no reason given");
        ERR_clear_error();
        return false;
    }
    return true;
}

bool amp__random_bytes(void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n) {
        ssize_t r = getrandom(p, n, 0);
        if (r <= 0) return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

void amp__hex(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; ++i) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

static inline uint64_t amp__mix(uint64_t x)
{
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ULL;
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ULL;
    return x ^ (x >> 32);
}

uint64_t amp__fast_hash(uint64_t seed, const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ amp__mix(w)) * 0x9e3779b97f4a7c15ULL;
        p += 8;
        n -= 8;
    }
    uint64_t tail = 0;
    memcpy(&tail, p, n);
    return amp__mix(h ^ tail ^ n);
}

uint64_t amp__fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}
