/* tools/ejobctl_plan.c: a planned multi (tools/ejobctl_plan.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ejobctl_plan.h"

int plan_max_ops(void)
{
	const char *e = getenv("EJOBCTL_MULTI_OPS");
	int n = e ? atoi(e) : 0;
	return n > 0 && n <= 1000 ? n : 1000;
}

void plan_free(struct plan *p)
{
	for (int i = 0; i < p->n; i++) free(p->path[i]), free(p->data[i]);
	free(p->ops), free(p->kind), free(p->path), free(p->data);
	memset(p, 0, sizeof *p);
}

void plan_add(struct plan *p, int kind, const char *path, const char *data)
{
	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 16;
		zoo_op_t *ops = realloc(p->ops, (size_t)cap * sizeof *p->ops);
		CTL_NEED(ops);
		p->ops = ops;
		int *kind_ = realloc(p->kind, (size_t)cap * sizeof *p->kind);
		CTL_NEED(kind_);
		p->kind = kind_;
		char **path_ = realloc(p->path, (size_t)cap * sizeof *p->path);
		CTL_NEED(path_);
		p->path = path_;
		char **data_ = realloc(p->data, (size_t)cap * sizeof *p->data);
		CTL_NEED(data_);
		p->data = data_;
		p->cap = cap;
	}
	p->kind[p->n] = kind;
	CTL_NEED(p->path[p->n] = strdup(path));
	p->data[p->n] = NULL;
	if (data) CTL_NEED(p->data[p->n] = strdup(data));
	p->bytes += strlen(path) + (data ? strlen(data) : 0) + 32;
	p->n++;
}

void plan_ops(struct plan *p, int from, int to)
{
	for (int i = from; i < to; i++) {
		zoo_op_t *op = &p->ops[i];
		if (p->kind[i] == W_CREATE)
			zoo_create_op_init(op, p->path[i], p->data[i], (int)strlen(p->data[i]), p->acl, 0, NULL, 0);
		else if (p->kind[i] == W_DELETE)
			zoo_delete_op_init(op, p->path[i], -1);
		else
			zoo_set_op_init(op, p->path[i], p->data[i], (int)strlen(p->data[i]), -1, NULL);
	}
}

int plan_run(struct ctl *c, struct plan *p, int from, int to, int *bad)
{
	int n = to - from;
	*bad = -1;
	if (n <= 0) return ZOK;
	zoo_op_result_t *res = calloc((size_t)n, sizeof *res);
	if (!res) return ZSYSTEMERROR;
	plan_ops(p, from, to);
	int rc = zoo_multi(c->zh, n, p->ops + from, res);
	if (rc != ZOK)
		for (int i = 0; i < n; i++)
			if (res[i].err != ZOK && res[i].err != ZRUNTIMEINCONSISTENCY) {
				*bad = from + i;
				break;
			}
	free(res);
	return rc;
}

int plan_racy(int rc)
{
	return rc == ZNONODE || rc == ZNODEEXISTS || rc == ZNOTEMPTY || rc == ZBADVERSION;
}

const char *plan_verb(int kind)
{
	return kind == W_CREATE ? "created" : kind == W_DELETE ? "deleted" : "set";
}

const char *plan_op_name(int kind)
{
	return kind == W_CREATE ? "create" : kind == W_DELETE ? "delete" : "set";
}

int plan_line(const struct plan *p, int i, char *buf, size_t len)
{
	if (p->kind[i] == W_DELETE) return snprintf(buf, len, "%s %s", plan_verb(p->kind[i]), p->path[i]);
	return snprintf(buf, len, "%s %s = %s", plan_verb(p->kind[i]), p->path[i], *p->data[i] ? p->data[i] : "\"\"");
}

void plan_json(struct jw *w, const struct plan *p)
{
	jw_arr(w);
	for (int i = 0; i < p->n; i++) {
		jw_obj(w);
		jw_key(w, "op"), jw_str(w, plan_op_name(p->kind[i]));
		jw_key(w, "path"), jw_str(w, p->path[i]);
		if (p->kind[i] != W_DELETE) jw_key(w, "data"), jw_str(w, p->data[i]);
		jw_end(w);
	}
	jw_end(w);
}
