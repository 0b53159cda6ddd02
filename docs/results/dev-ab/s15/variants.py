"""Choice / trigger rules for the re-ask, applied to planner._Attempt for replays."""
from langchain_core.messages import AIMessage, HumanMessage
from hugginggpt.prompts import render_prompt

def apply(P, variant):
    flags = set(variant.split('+'))
    orig_error = P._Attempt._error
    if 'nowants' in flags:
        def _error(self, answer):
            w = answer.wants; answer.wants = None
            try: return orig_error(self, answer)
            finally: answer.wants = w
        P._Attempt._error = _error
    if 'notext' in flags:  # wants: text is always given by the response stage
        def _error(self, answer, _o=P._Attempt._error):
            w = answer.wants; answer.wants = [k for k in (w or []) if k != 'text'] or None
            try: return _o(self, answer)
            finally: answer.wants = w
        P._Attempt._error = _error
    def choose(self, best, second, error):
        if 'nonempty' in flags:
            if not second.plan.tasks and best.plan.tasks:
                return best
        if 'strict' in flags:
            e2 = self._error(second)
            if e2 is not None:
                # keep the answer with fewer rejections; tie: the one that keeps more tasks
                r1, r2 = len(P._rejections(best.repairs)), len(P._rejections(second.repairs))
                if (r2, -len(second.plan.tasks)) < (r1, -len(best.plan.tasks)):
                    return second
                return best
            return second
        if len(P._rejections(second.repairs)) <= len(P._rejections(best.repairs)):
            return second
        return best
    async def run(self, messages, config):
        error = None; best = None
        try:
            best = self._validate(await self._ask(messages, config, "planning"))
            error = self._error(best)
        except P.PlanError as exc:
            error = str(exc)
        if error is None and best is not None:
            return best
        reask = [*messages, AIMessage(self.raw_outputs[-1]), HumanMessage(render_prompt("planning_reask", error=error))]
        try:
            second = self._validate(await self._ask(reask, config, "planning-reask"))
        except P.PlanError as exc:
            if best is None:
                raise P.PlanError(f"planning failed twice: {error}; then: {exc}") from None
            return best
        if best is None:
            chosen = second
        else:
            chosen = choose(self, best, second, error)
        if chosen is second:
            second.repairs = [{"task_id": None, "reason": f"re-asked after: {error}", "pass": "planner"}, *second.repairs]
        return chosen
    P._Attempt.run = run
