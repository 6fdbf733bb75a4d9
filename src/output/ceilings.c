/* Ceilings file: {"parbench_ceilings": 1, "date", "commit", "devices": [...]}. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/core.h"
#include "output/ceilings.h"

bool pb__ceilings_default_path(char *buf, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0])
        snprintf(buf, len, "%s/parbench/ceilings.json", xdg);
    else if (home && home[0])
        snprintf(buf, len, "%s/.cache/parbench/ceilings.json", home);
    else
        return false;
    return true;
}

/* A ceiling of the file: absent or null = not measured (NAN); anything but a
 * positive finite number up to max is a damaged or hand-edited file, which
 * would give every row an absurd fraction. */
static pb_status num_of(const cJSON *o, const char *key, double max, const char *unit, const char *name, size_t index,
                        double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = NAN;
    if (!v || cJSON_IsNull(v))
        return PB_OK;
    if (!cJSON_IsNumber(v))
        return pb__fail(PB_ERR_PARSE, "%s: devices[%zu]: %s is not a number", name, index, key);
    const double min = 1e-3;
    if (!isfinite(v->valuedouble) || v->valuedouble < min || v->valuedouble > max)
        return pb__fail(PB_ERR_PARSE, "%s: devices[%zu]: %s is %g, not a plausible ceiling (%g to %g %s)", name,
                        index, key, v->valuedouble, min, max, unit);
    *out = v->valuedouble;
    return PB_OK;
}

static void str_of(const cJSON *o, const char *key, char *buf, size_t len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    snprintf(buf, len, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

pb_status pb__ceilings_read(const char *path, struct pb_ceilings *out)
{
    memset(out, 0, sizeof *out);
    char *text;
    pb_status st = pb__read_file(path, &text);
    if (st != PB_OK)
        return st;
    st = pb__ceilings_parse(text, path, out);
    free(text);
    return st;
}

pb_status pb__ceilings_parse(const char *text, const char *name, struct pb_ceilings *out)
{
    memset(out, 0, sizeof *out);
    cJSON *doc = cJSON_Parse(text);
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(doc, "devices");
    if (!doc || !cJSON_IsArray(devs) || !cJSON_GetObjectItemCaseSensitive(doc, "parbench_ceilings")) {
        cJSON_Delete(doc);
        return pb__fail(PB_ERR_PARSE, "%s is not a parbench ceilings file", name);
    }
    str_of(doc, "date", out->date, sizeof out->date);
    str_of(doc, "commit", out->commit, sizeof out->commit);
    pb_status st = PB_OK;
    const cJSON *d;
    size_t i = 0;
    cJSON_ArrayForEach(d, devs)
    {
        struct pb_ceiling c = {.derived_copy = false};
        str_of(d, "backend", c.backend, sizeof c.backend);
        str_of(d, "device", c.device, sizeof c.device);
        const double gbps_max = 1e7, gflops_max = 1e9; /* GB/s, GFLOP/s: far above any device */
        if ((st = num_of(d, "copy_gbps", gbps_max, "GB/s", name, i, &c.copy_gbps)) != PB_OK ||
            (st = num_of(d, "read_gbps", gbps_max, "GB/s", name, i, &c.read_gbps)) != PB_OK ||
            (st = num_of(d, "h2d_gbps", gbps_max, "GB/s", name, i, &c.h2d_gbps)) != PB_OK ||
            (st = num_of(d, "d2h_gbps", gbps_max, "GB/s", name, i, &c.d2h_gbps)) != PB_OK ||
            (st = num_of(d, "fp32_gflops", gflops_max, "GFLOP/s", name, i, &c.fp32_gflops)) != PB_OK ||
            (st = num_of(d, "fp64_gflops", gflops_max, "GFLOP/s", name, i, &c.fp64_gflops)) != PB_OK ||
            (st = pb__ceilings_put(out, &c)) != PB_OK)
            break;
        i++;
    }
    cJSON_Delete(doc);
    if (st != PB_OK)
        pb__ceilings_free(out);
    return st;
}

static void add_num(cJSON *o, const char *key, double x)
{
    if (isfinite(x))
        cJSON_AddNumberToObject(o, key, x);
    else
        cJSON_AddNullToObject(o, key);
}

/* mkdir -p of the parent: the default path is under a cache directory that
 * may not exist yet. */
static pb_status make_parent(const char *path)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(dir, 0755) != 0 && errno != EEXIST)
                return pb__fail(PB_ERR_IO, "cannot create %s: %s", dir, strerror(errno));
            *p = '/';
        }
    return PB_OK;
}

/* The file is replaced through PATH.tmp in its directory (of a link: in the
 * target's), so a full disk leaves the stored entries as they were. *dest:
 * the file replaced; both malloc'ed, false when out of memory. */
static bool temp_path(const char *path, char **dest, char **tmp)
{
    *dest = realpath(path, NULL); /* NULL where path does not exist yet */
    if (!*dest)
        *dest = strdup(path);
    size_t len = *dest ? strlen(*dest) + 5 : 0;
    *tmp = *dest ? malloc(len) : NULL;
    if (*tmp)
        snprintf(*tmp, len, "%s.tmp", *dest);
    return *tmp != NULL;
}

pb_status pb__ceilings_check_writable(const char *path)
{
    pb_status st = make_parent(path);
    if (st != PB_OK)
        return st;
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return pb__fail(PB_ERR_IO, "cannot write %s: %s", path, strerror(EISDIR));
    char *dest, *tmp;
    FILE *f = temp_path(path, &dest, &tmp) ? fopen(tmp, "w") : NULL;
    if (!tmp)
        st = pb__fail(PB_ERR_NOMEM, "out of memory");
    else if (!f)
        st = pb__fail(PB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    else
        fclose(f), remove(tmp);
    free(dest);
    free(tmp);
    return st;
}

pb_status pb__ceilings_write(const char *path, const struct pb_ceilings *c)
{
    pb_status st = make_parent(path);
    if (st != PB_OK)
        return st;
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "parbench_ceilings", 1);
    cJSON_AddStringToObject(doc, "date", c->date);
    cJSON_AddStringToObject(doc, "commit", c->commit);
    cJSON_AddStringToObject(doc, "units", "GB/s = 1e9 bytes/s; copy counts bytes read + written");
    cJSON *devs = cJSON_AddArrayToObject(doc, "devices");
    for (size_t i = 0; devs && i < c->n; i++) {
        const struct pb_ceiling *e = &c->dev[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(devs, o);
        cJSON_AddStringToObject(o, "backend", e->backend);
        cJSON_AddStringToObject(o, "device", e->device);
        add_num(o, "copy_gbps", e->copy_gbps);
        add_num(o, "read_gbps", e->read_gbps);
        add_num(o, "h2d_gbps", e->h2d_gbps);
        add_num(o, "d2h_gbps", e->d2h_gbps);
        add_num(o, "fp32_gflops", e->fp32_gflops);
        add_num(o, "fp64_gflops", e->fp64_gflops);
    }
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!text)
        return pb__fail(PB_ERR_NOMEM, "out of memory serialising the ceilings");
    char *dest, *tmp;
    FILE *f = temp_path(path, &dest, &tmp) ? fopen(tmp, "w") : NULL;
    bool ok = f && fputs(text, f) != EOF && fputc('\n', f) != EOF;
    if (f && fclose(f) != 0)
        ok = false;
    cJSON_free(text);
    if (!tmp)
        st = pb__fail(PB_ERR_NOMEM, "out of memory");
    else if (!ok)
        st = pb__fail(PB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    else if (rename(tmp, dest) != 0)
        st = pb__fail(PB_ERR_IO, "cannot replace %s: %s", path, strerror(errno));
    if (st != PB_OK && tmp)
        remove(tmp);
    free(dest);
    free(tmp);
    return st;
}

pb_status pb__ceilings_put(struct pb_ceilings *c, const struct pb_ceiling *entry)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->dev[i].backend, entry->backend) == 0 && strcmp(c->dev[i].device, entry->device) == 0) {
            c->dev[i] = *entry;
            return PB_OK;
        }
    struct pb_ceiling *bigger = realloc(c->dev, (c->n + 1) * sizeof *bigger);
    if (!bigger)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    c->dev = bigger;
    c->dev[c->n++] = *entry;
    return PB_OK;
}

void pb__ceilings_free(struct pb_ceilings *c)
{
    if (!c)
        return;
    free(c->dev);
    c->dev = NULL;
    c->n = 0;
}

const struct pb_ceiling *pb__ceilings_find(const struct pb_ceilings *c, const char *backend, const char *device)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (strcmp(c->dev[i].backend, backend) == 0 && strcmp(c->dev[i].device, device) == 0)
            return &c->dev[i];
    return NULL;
}

double pb__ceiling_mem_gbps(const struct pb_ceiling *c)
{
    double a = c->copy_gbps, b = c->read_gbps;
    return isnan(a) ? b : isnan(b) ? a : fmax(a, b);
}

double pb__roof_value(const struct pb_ceiling *c, enum pb_roof_kind kind, bool double_prec)
{
    if (!c)
        return NAN;
    double v = NAN;
    switch (kind) {
    case PB_ROOF_FMA:
        v = double_prec ? c->fp64_gflops : c->fp32_gflops;
        break;
    case PB_ROOF_MEMORY:
        v = pb__ceiling_mem_gbps(c);
        break;
    case PB_ROOF_H2D:
        v = c->h2d_gbps;
        break;
    case PB_ROOF_D2H:
        v = c->d2h_gbps;
        break;
    case PB_ROOF_BIDIR:
        v = c->h2d_gbps + c->d2h_gbps;
        break;
    case PB_ROOF_NONE:
    case PB_ROOF_TENSOR:
    case PB_ROOF_ONCHIP:
        break;
    }
    return v > 0 ? v : NAN;
}

bool pb__roof_unmeasured(enum pb_roof_kind kind) { return kind == PB_ROOF_TENSOR || kind == PB_ROOF_ONCHIP; }

const char *pb__roof_name(enum pb_roof_kind kind)
{
    static const char *const names[] = {
        [PB_ROOF_NONE] = "none",     [PB_ROOF_FMA] = "FMA peak", [PB_ROOF_TENSOR] = "tensor-core peak",
        [PB_ROOF_MEMORY] = "memory", [PB_ROOF_H2D] = "H2D",      [PB_ROOF_D2H] = "D2H",
        [PB_ROOF_BIDIR] = "H2D+D2H", [PB_ROOF_ONCHIP] = "on-chip memory",
    };
    return (size_t)kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

double pb__ceiling_fraction(const struct pb_ceiling *c, struct pb_roof roof, bool double_prec, double gflops,
                            double gbps)
{
    if (!c || pb__roof_unmeasured(roof.flops) || pb__roof_unmeasured(roof.bytes))
        return NAN;
    double peak = pb__roof_value(c, roof.flops, double_prec), bw = pb__roof_value(c, roof.bytes, double_prec);
    double f_flops = gflops > 0 && peak > 0 ? gflops / peak : NAN;
    double f_bytes = gbps > 0 && bw > 0 ? gbps / bw : NAN;
    return isnan(f_flops) ? f_bytes : isnan(f_bytes) ? f_flops : fmax(f_flops, f_bytes);
}

bool pb__fp64_tensor_device(const char *device)
{
    static const char *const parts[] = {"A100", "A800", "A30",  "H100",  "H800",  "H200",
                                        "H20",  "GH200", "B100", "B200", "GB200", "B300", "GB300"};
    char word[32];
    for (const char *p = device; *p;) {
        size_t n = strcspn(p, " -_/()");
        if (n && n < sizeof word) {
            memcpy(word, p, n);
            word[n] = '\0';
            for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
                if (strcasecmp(word, parts[i]) == 0)
                    return true;
        }
        p += n + (p[n] != '\0');
    }
    return false;
}
