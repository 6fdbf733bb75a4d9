/* matinfo: structure statistics of a sparse matrix (row lengths, ELLPACK
 * fill, bandwidth, storage per format), written as a table, CSV or JSON. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "io/mmio.h"

void pb__matinfo_name(const char *path, char *buf, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    static const char *const exts[] = {".gz", ".mtx", ".mm"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t e = strlen(exts[i]);
        if (n > e && strncmp(base + n - e, exts[i], e) == 0)
            n -= e;
    }
    snprintf(buf, len, "%.*s", (int)n, base);
}

void pb__matinfo_compute(const char *path, const struct pb_coo *m, struct pb_matinfo *out)
{
    memset(out, 0, sizeof *out);
    pb__matinfo_name(path, out->name, sizeof out->name);
    out->rows = m->n_rows;
    out->cols = m->n_cols;
    out->nnz = m->nnz;
    out->file_entries = m->file_entries;
    out->field = m->field;
    out->symmetry = m->symmetry;
    /* Rows are sorted: each row is one run of m->rows. */
    double mean = m->n_rows ? (double)m->nnz / m->n_rows : 0, dev2 = 0;
    size_t nonempty = 0, max_row = 0;
    int64_t band = 0;
    for (size_t k = 0; k < m->nnz;) {
        size_t start = k;
        for (; k < m->nnz && m->rows[k] == m->rows[start]; k++) {
            int64_t d = (int64_t)m->rows[k] - m->cols[k];
            if (d < 0)
                d = -d;
            if (d > band)
                band = d;
        }
        size_t len = k - start;
        nonempty++;
        max_row = len > max_row ? len : max_row;
        dev2 += ((double)len - mean) * ((double)len - mean);
    }
    if (m->n_rows)
        dev2 += (double)((size_t)m->n_rows - nonempty) * mean * mean;
    out->avg_row = mean;
    out->row_stddev = m->n_rows ? sqrt(dev2 / m->n_rows) : 0;
    out->max_row = max_row;
    out->bandwidth = band;
    out->ell_fill = m->nnz ? (double)m->n_rows * (double)max_row / (double)m->nnz : NAN;
    out->bytes_coo = (double)m->nnz * (4 + 4 + 8);
    out->bytes_csr = (double)m->nnz * (4 + 8) + ((double)m->n_rows + 1) * 4;
    out->bytes_ell = (double)m->n_rows * (double)max_row * (4 + 8);
}

/* ---- writers ------------------------------------------------------------ */

enum mi_format { MI_TABLE, MI_CSV, MI_JSON };

struct pb_matinfo_writer {
    enum mi_format format;
    FILE *f;
    char *path; /* NULL: standard output */
    cJSON *doc;
};

static pb_status mi_flush(struct pb_matinfo_writer *w)
{
    if (fflush(w->f) != 0 || ferror(w->f))
        return pb__fail(PB_ERR_IO, "cannot write %s: %s", w->path ? w->path : "standard output",
                        strerror(errno));
    return PB_OK;
}

static const char *const csv_columns[] = {
    "name", "rows", "cols", "nnz", "file_entries", "field", "symmetry", "symmetric", "avg_row",
    "max_row", "row_stddev", "ell_fill", "bandwidth", "bytes_coo", "bytes_csr", "bytes_ell"};

pb_status pb__matinfo_writer_open(const char *format, const char *path,
                                  struct pb_matinfo_writer **out)
{
    *out = NULL;
    enum mi_format fmt;
    if (strcmp(format, "table") == 0)
        fmt = MI_TABLE;
    else if (strcmp(format, "csv") == 0)
        fmt = MI_CSV;
    else if (strcmp(format, "json") == 0)
        fmt = MI_JSON;
    else
        return pb__fail(PB_ERR_INVALID, "unknown output format '%s' (table, csv, json)", format);
    struct pb_matinfo_writer *w = calloc(1, sizeof *w);
    if (!w || (path && !(w->path = strdup(path))) ||
        (fmt == MI_JSON && !(w->doc = cJSON_CreateArray()))) {
        if (w)
            free(w->path);
        free(w);
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    }
    w->format = fmt;
    w->f = stdout;
    if (path && !(w->f = fopen(path, "w"))) {
        pb_status st = pb__fail(PB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
        cJSON_Delete(w->doc);
        free(w->path);
        free(w);
        return st;
    }
    *out = w;
    if (fmt == MI_TABLE) {
        fprintf(w->f, "# nnz after symmetric expansion; per row: average, maximum, standard "
                      "deviation;\n# ell_fill = rows * max/row / nnz; bytes with 32-bit indices "
                      "and double values\n");
        fprintf(w->f, "%-20s %9s %9s %10s %8s %7s %8s %-9s %8s %9s %10s %10s %10s\n", "name",
                "rows", "cols", "nnz", "avg/row", "max/row", "std/row", "symmetry", "ell_fill",
                "bandwidth", "COO", "CSR", "ELL");
    } else if (fmt == MI_CSV) {
        for (size_t i = 0; i < sizeof csv_columns / sizeof csv_columns[0]; i++)
            fprintf(w->f, "%s%s", i ? "," : "", csv_columns[i]);
        fputc('\n', w->f);
    }
    return fmt == MI_JSON ? PB_OK : mi_flush(w);
}

/* RFC 4180: quoted when it holds a comma, quote or line break. */
static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

pb_status pb__matinfo_writer_row(struct pb_matinfo_writer *w, const struct pb_matinfo *m)
{
    const char *sym = pb_mm_symmetry_name(m->symmetry);
    bool symmetric = m->symmetry != PB_MM_GENERAL;
    switch (w->format) {
    case MI_TABLE: {
        char fill[16] = "-", coo[32], csr[32], ell[32];
        if (!isnan(m->ell_fill))
            snprintf(fill, sizeof fill, "%.2f", m->ell_fill);
        fprintf(w->f, "%-20s %9d %9d %10zu %8.2f %7zu %8.2f %-9s %8s %9lld %10s %10s %10s\n",
                m->name, m->rows, m->cols, m->nnz, m->avg_row, m->max_row, m->row_stddev,
                m->symmetry == PB_MM_SKEW_SYMMETRIC ? "skew" : sym, fill, (long long)m->bandwidth,
                pb__format_bytes(m->bytes_coo, coo, sizeof coo),
                pb__format_bytes(m->bytes_csr, csr, sizeof csr),
                pb__format_bytes(m->bytes_ell, ell, sizeof ell));
        return mi_flush(w);
    }
    case MI_CSV:
        csv_field(w->f, m->name);
        fprintf(w->f, ",%d,%d,%zu,%zu,%s,%s,%d,%.9g,%zu,%.9g,", m->rows, m->cols, m->nnz,
                m->file_entries, pb_mm_field_name(m->field), sym, symmetric ? 1 : 0, m->avg_row,
                m->max_row, m->row_stddev);
        if (!isnan(m->ell_fill))
            fprintf(w->f, "%.9g", m->ell_fill);
        fprintf(w->f, ",%lld,%.0f,%.0f,%.0f\n", (long long)m->bandwidth, m->bytes_coo, m->bytes_csr,
                m->bytes_ell);
        return mi_flush(w);
    case MI_JSON: {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return pb__fail(PB_ERR_NOMEM, "out of memory building JSON");
        cJSON_AddItemToArray(w->doc, o);
        cJSON_AddStringToObject(o, "name", m->name);
        cJSON_AddNumberToObject(o, "rows", m->rows);
        cJSON_AddNumberToObject(o, "cols", m->cols);
        cJSON_AddNumberToObject(o, "nnz", (double)m->nnz);
        cJSON_AddNumberToObject(o, "file_entries", (double)m->file_entries);
        cJSON_AddStringToObject(o, "field", pb_mm_field_name(m->field));
        cJSON_AddStringToObject(o, "symmetry", sym);
        cJSON_AddBoolToObject(o, "symmetric", symmetric);
        cJSON_AddNumberToObject(o, "avg_row", m->avg_row);
        cJSON_AddNumberToObject(o, "max_row", (double)m->max_row);
        cJSON_AddNumberToObject(o, "row_stddev", m->row_stddev);
        if (isnan(m->ell_fill))
            cJSON_AddNullToObject(o, "ell_fill");
        else
            cJSON_AddNumberToObject(o, "ell_fill", m->ell_fill);
        cJSON_AddNumberToObject(o, "bandwidth", (double)m->bandwidth);
        cJSON *bytes = cJSON_AddObjectToObject(o, "bytes");
        cJSON_AddNumberToObject(bytes, "coo", m->bytes_coo);
        cJSON_AddNumberToObject(bytes, "csr", m->bytes_csr);
        cJSON_AddNumberToObject(bytes, "ell", m->bytes_ell);
        return PB_OK;
    }
    }
    return PB_OK;
}

pb_status pb__matinfo_writer_close(struct pb_matinfo_writer *w)
{
    if (!w)
        return PB_OK;
    pb_status st = PB_OK;
    if (w->format == MI_JSON) {
        char *text = cJSON_Print(w->doc);
        if (!text) {
            st = pb__fail(PB_ERR_NOMEM, "out of memory serialising JSON");
        } else {
            fprintf(w->f, "%s\n", text);
            cJSON_free(text);
            st = mi_flush(w);
        }
    }
    if (w->f != stdout && fclose(w->f) != 0 && st == PB_OK)
        st = pb__fail(PB_ERR_IO, "cannot write %s: %s", w->path, strerror(errno));
    cJSON_Delete(w->doc);
    free(w->path);
    free(w);
    return st;
}
