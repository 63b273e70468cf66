/* gpu_png.c — the GPU benchmark's built-in chart (png_chart in gpu_harness.h): grouped bars and ceiling lines from the chart rows, drawn here and written as an uncompressed PNG, for when plot_results.py cannot run (matplotlib missing). */
#include "gpu_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fallback when matplotlib is missing: bars and lines drawn here, stored
 * (uncompressed) deflate blocks, a 3x5 pixel font. */
typedef struct img { int w, h; unsigned char *px; } img;
static void fill(img *im, int x0, int y0, int x1, int y1, unsigned rgb)
{
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > im->w) x1 = im->w;
    if (y1 > im->h) y1 = im->h;
    for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x) {
            unsigned char *p = im->px + ((size_t)y * im->w + x) * 3;
            p[0] = (unsigned char)(rgb >> 16), p[1] = (unsigned char)(rgb >> 8), p[2] = (unsigned char)rgb;
        }
}
static const char *glyph(char c)
{
    static const char *const digits[10] = {"111101101101111", "010110010010111", "111001111100111",
                                           "111001111001111", "101101111001001", "111100111001111",
                                           "111100111101111", "111001001001001", "111101111101111",
                                           "111101111001111"};
    static const char *const letters[26] = {
        "010101111101101", "110101110101110", "011100100100011", "110101101101110", "111100110100111",
        "111100110100100", "011100101101011", "101101111101101", "111010010010111", "001001001101010",
        "101101110101101", "100100100100111", "101111111101101", "110101101101101", "010101101101010",
        "110101110100100", "010101101110011", "110101110101101", "011100010001110", "111010010010010",
        "101101101101111", "101101101101010", "101101111111101", "101101010101101", "101101010010010",
        "111001010100111"};
    if (c >= '0' && c <= '9') return digits[c - '0'];
    if (c >= 'a' && c <= 'z') c = (char)(c - 32);
    if (c >= 'A' && c <= 'Z') return letters[c - 'A'];
    switch (c) {
    case '.': return "000000000000010";
    case '/': return "001001010100100";
    case '-': return "000000111000000";
    case '(': return "010100100100010";
    case ')': return "010001001001010";
    case '%': return "101001010100101";
    case ':': return "000010000010000";
    case '_': return "000000000000111";
    default: return "000000000000000";
    }
}
static void text(img *im, int x, int y, const char *s, int scale, unsigned rgb)
{
    for (; *s; ++s, x += 4 * scale) {
        const char *g = glyph(*s);
        for (int r = 0; r < 5; ++r)
            for (int c = 0; c < 3; ++c)
                if (g[r * 3 + c] == '1') fill(im, x + c * scale, y + r * scale, x + (c + 1) * scale, y + (r + 1) * scale, rgb);
    }
}
static uint32_t crc32_of(const unsigned char *p, size_t n, uint32_t c)
{
    static uint32_t t[256];
    if (!t[1])
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t v = i;
            for (int k = 0; k < 8; ++k) v = v & 1 ? 0xedb88320u ^ (v >> 1) : v >> 1;
            t[i] = v;
        }
    c = ~c;
    for (size_t i = 0; i < n; ++i) c = t[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return ~c;
}
static void be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}
static void chunk(FILE *f, const char *type, const unsigned char *data, size_t n)
{
    unsigned char hdr[8];
    be32(hdr, (uint32_t)n);
    memcpy(hdr + 4, type, 4);
    fwrite(hdr, 1, 8, f);
    if (n) fwrite(data, 1, n, f);
    uint32_t c = crc32_of(hdr + 4, 4, 0);
    c = crc32_of(data, n, c);
    unsigned char cb[4];
    be32(cb, c);
    fwrite(cb, 1, 4, f);
}
static bool png_write(const char *path, const img *im)
{
    size_t raw_n = (size_t)im->h * (1 + (size_t)im->w * 3);
    unsigned char *raw = malloc(raw_n);
    size_t nblocks = (raw_n + 65534) / 65535;
    unsigned char *z = malloc(2 + raw_n + nblocks * 5 + 4);
    if (!raw || !z) return false;
    for (int y = 0; y < im->h; ++y) {
        raw[(size_t)y * (1 + im->w * 3)] = 0;
        memcpy(raw + (size_t)y * (1 + im->w * 3) + 1, im->px + (size_t)y * im->w * 3, (size_t)im->w * 3);
    }
    size_t zn = 0;
    z[zn++] = 0x78;
    z[zn++] = 0x01;
    uint32_t s1 = 1, s2 = 0;
    for (size_t off = 0; off < raw_n; off += 65535) {
        size_t len = raw_n - off < 65535 ? raw_n - off : 65535;
        z[zn++] = off + len == raw_n ? 1 : 0;
        z[zn++] = (unsigned char)len, z[zn++] = (unsigned char)(len >> 8);
        z[zn++] = (unsigned char)~len, z[zn++] = (unsigned char)(~len >> 8);
        memcpy(z + zn, raw + off, len);
        zn += len;
        for (size_t i = 0; i < len; ++i) {
            s1 = (s1 + raw[off + i]) % 65521;
            s2 = (s2 + s1) % 65521;
        }
    }
    be32(z + zn, (s2 << 16) | s1);
    zn += 4;
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    fwrite(sig, 1, 8, f);
    unsigned char ihdr[13];
    be32(ihdr, (uint32_t)im->w);
    be32(ihdr + 4, (uint32_t)im->h);
    ihdr[8] = 8, ihdr[9] = 2, ihdr[10] = 0, ihdr[11] = 0, ihdr[12] = 0;
    chunk(f, "IHDR", ihdr, 13);
    chunk(f, "IDAT", z, zn);
    chunk(f, "IEND", NULL, 0);
    bool ok = fclose(f) == 0;
    free(raw);
    free(z);
    return ok;
}

/* One panel per distinct chart panel: grouped bars (hipamp, raw), ceiling
 * lines. */
bool png_chart(const char *path, const char *title)
{
    const char *panels[8];
    int np = 0;
    for (int i = 0; i < ncrows; ++i) {
        int k = 0;
        while (k < np && strcmp(panels[k], crows[i].panel)) ++k;
        if (k == np && np < 8) panels[np++] = crows[i].panel;
    }
    if (!np) return false;
    const int pw = 420, ph = 360, top = 40;
    img im = {pw * (np < 3 ? np : 3), top + ph * ((np + 2) / 3), NULL};
    im.px = malloc((size_t)im.w * im.h * 3);
    if (!im.px) return false;
    fill(&im, 0, 0, im.w, im.h, 0xffffff);
    text(&im, 10, 10, title, 3, 0x000000);
    const unsigned series_rgb[2] = {0x1f77b4, 0xff7f0e};
    for (int p = 0; p < np; ++p) {
        int ox = (p % 3) * pw, oy = top + (p / 3) * ph;
        const char *labels[16];
        int nl = 0;
        double vmax = 0;
        for (int i = 0; i < ncrows; ++i) {
            if (strcmp(crows[i].panel, panels[p])) continue;
            if (crows[i].value > vmax) vmax = crows[i].value;
            if (!strcmp(crows[i].series, "ceiling")) continue;
            int k = 0;
            while (k < nl && strcmp(labels[k], crows[i].label)) ++k;
            if (k == nl && nl < 16) labels[nl++] = crows[i].label;
        }
        if (vmax <= 0) continue;
        vmax *= 1.1;
        text(&im, ox + 10, oy + 8, panels[p], 2, 0x000000);
        const int x0 = ox + 30, x1 = ox + pw - 20, y0 = oy + 40, y1 = oy + ph - 40;
        fill(&im, x0, y1, x1, y1 + 1, 0x000000);
        fill(&im, x0, y0, x0 + 1, y1, 0x000000);
        int gw = nl ? (x1 - x0) / nl : 1;
        for (int l = 0; l < nl; ++l) {
            int s = 0;
            for (int i = 0; i < ncrows; ++i) {
                if (strcmp(crows[i].panel, panels[p]) || strcmp(crows[i].label, labels[l]) ||
                    !strcmp(crows[i].series, "ceiling") || s >= 2)
                    continue;
                int bw = (gw - 12) / 2, bx = x0 + l * gw + 6 + s * bw;
                int by = y1 - (int)((y1 - y0) * crows[i].value / vmax);
                fill(&im, bx, by, bx + bw - 2, y1, series_rgb[s]);
                char v[24];
                snprintf(v, sizeof v, "%.0f", crows[i].value);
                text(&im, bx, by - 8, v, 1, 0x000000);
                ++s;
            }
            text(&im, x0 + l * gw + 6, y1 + 8, labels[l], 2, 0x000000);
        }
        for (int i = 0; i < ncrows; ++i) {
            if (strcmp(crows[i].panel, panels[p]) || strcmp(crows[i].series, "ceiling")) continue;
            int y = y1 - (int)((y1 - y0) * crows[i].value / vmax);
            for (int x = x0; x < x1; x += 8) fill(&im, x, y, x + 5, y + 2, 0xd62728);
            char v[48];
            snprintf(v, sizeof v, "%s %.0f", crows[i].label, crows[i].value);
            text(&im, x1 - 4 * 2 * (int)strlen(v), y - 14, v, 2, 0xd62728);
        }
        char legend[96];
        snprintf(legend, sizeof legend, "BLUE: HIPAMP  ORANGE: RAW %s", rg.launch); /* the font has capitals only */
        text(&im, ox + 30, oy + ph - 14, legend, 1, 0x444444);
    }
    bool ok = png_write(path, &im);
    free(im.px);
    return ok;
}
