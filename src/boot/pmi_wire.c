/* pmi_wire.c — parse and format PMI-1 wire lines (see pmi_wire.h). */
#include "boot/pmi_wire.h"

#include <string.h>

/* Removes backslash escapes in place: "a\ b" -> "a b", "a\\b" -> "a\b". */
static void pmi_wire_unescape(char *s)
{
    char *out = s;
    for (; *s; s++) {
        if (*s == '\\' && s[1])
            s++;
        *out++ = *s;
    }
    *out = 0;
}

int pmi_wire_parse(char *line, pmi_msg_t *msg)
{
    msg->cmd = NULL;
    msg->ntokens = 0;
    if (strncmp(line, "cmd=", 4) != 0)
        return -1;
    char *p = line;
    for (;;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        char *key = p;
        while (*p && *p != ' ' && *p != '=')
            p++;
        char *val = NULL;
        if (*p == '=') {
            *p++ = 0;
            val = p;
            while (*p && *p != ' ') {
                if (*p == '\\' && p[1])
                    p++;
                p++;
            }
        }
        if (*p)
            *p++ = 0;
        if (val)
            pmi_wire_unescape(val);
        if (!msg->cmd && strcmp(key, "cmd") == 0 && val) {
            msg->cmd = val;
            continue;
        }
        if (msg->ntokens >= PMI_WIRE_TOKENS_MAX)
            return -1;
        msg->tokens[msg->ntokens].key = key;
        msg->tokens[msg->ntokens].val = val;
        msg->ntokens++;
    }
    return msg->cmd ? 0 : -1;
}

const char *pmi_wire_find(const pmi_msg_t *msg, const char *key)
{
    for (int i = 0; i < msg->ntokens; i++)
        if (msg->tokens[i].val && strcmp(msg->tokens[i].key, key) == 0)
            return msg->tokens[i].val;
    return NULL;
}

int pmi_wire_append(char *buf, size_t cap, size_t *len, const char *key, const char *val)
{
    size_t n = *len;
    size_t klen = strlen(key);
    if (n + (n ? 1 : 0) + klen + 2 > cap)
        goto no_room;
    if (n)
        buf[n++] = ' ';
    memcpy(buf + n, key, klen);
    n += klen;
    buf[n++] = '=';
    for (const char *s = val; *s; s++) {
        char c = *s == '\n' ? ' ' : *s;
        int escape = c == ' ' || c == '\\';
        if (n + (size_t)escape + 2 > cap)
            goto no_room;
        if (escape)
            buf[n++] = '\\';
        buf[n++] = c;
    }
    buf[n] = 0;
    *len = n;
    return 0;
no_room:
    if (*len < cap)
        buf[*len] = 0;
    return -1;
}

int pmi_wire_end(char *buf, size_t cap, size_t *len)
{
    if (*len + 2 > cap)
        return -1;
    buf[(*len)++] = '\n';
    buf[*len] = 0;
    return 0;
}
