"""Helpers the dev-ab result scripts share (from session 42 on; earlier sessions' scripts keep their own copies):
a result file's rows by id, and F1 of two multisets."""
import collections
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
