"""Helpers the dev-ab result scripts share (from session 42 on; earlier sessions' scripts keep their own copies):
a result file's rows by id, F1 of two multisets, and the steps of given tasks in every recorded real run."""
import collections
import glob
import gzip
import json


def rows(path):
    """The rows of a ``planning_quality.py`` result file (gzipped or not), by id."""
    opened = gzip.open(path) if path.endswith('.gz') else open(path, encoding='utf-8')
    return {str(r['id']): r for r in json.load(opened)['rows']}


def f1(pred, gold):
    """F1 of two multisets (task names, links); 1.0 when both are empty."""
    p, g = collections.Counter(pred), collections.Counter(gold)
    if not p and not g:
        return 1.0
    hit = sum((p & g).values())
    return 0.0 if not hit else 2 * hit / (sum(p.values()) + sum(g.values()))


def recorded_rows(kind='real', ids=None, paths=None):
    """``(request id, row)`` of every row of the recorded runs of set ``kind`` (``real`` or ``taskbench``): the
    result files under ``docs/results`` (any session, any draw) or the files ``paths``, in file order; only the
    requests in ``ids`` when given."""
    for path in paths if paths is not None else sorted(glob.glob('docs/results/**/*.json*', recursive=True)):
        try:
            d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
        except Exception:
            continue
        if not isinstance(d, dict) or d.get('set') != kind:
            continue
        for row in d.get('rows', []):
            rid = str(row.get('id'))
            if ids is None or rid in ids:
                yield rid, row


def recorded_steps(ids, names):
    """``(request id, task, step words)`` of each step written as one of the tasks ``names`` in every recorded real
    run under ``docs/results`` (any session, any draw), for the requests in ``ids``; once each, in file order."""
    seen, found = set(), []
    for rid, row in recorded_rows('real', ids):
        for t in row['harness'].get('plan') or []:
            key = (rid, t.get('task'), t.get('step'))
            if t.get('task') in names and t.get('step') and key not in seen:
                seen.add(key)
                found.append(key)
    return found
