"""Replay (``../s15/replay.py``) with one re-ask rule switched off, to measure what the rule does on recorded
answers. Run from the repository root: python docs/results/dev-ab/s17/rule.py RULE IN.json OUT.json
RULE: ``unread`` (no re-ask when a file the request gives is read by no task) or ``empty`` (no re-ask for
an empty plan of a request that gives files)."""
import os, runpy, sys
sys.path.insert(0, '.')
from hugginggpt.agent.plan import planner as P
rule, sys.argv = sys.argv[1], [sys.argv[0], *sys.argv[2:]]
if rule == 'unread':
    P.unread_files = lambda plan, files: []
elif rule == 'empty':
    _error = P._Attempt._error
    def _no_empty(self, answer):
        given, self.given = self.given, (self.given if answer.plan.tasks else [])
        try:
            return _error(self, answer)
        finally:
            self.given = given
    P._Attempt._error = _no_empty
else:
    raise SystemExit(f"unknown rule {rule}")
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 's15', 'replay.py'), run_name='__main__')
