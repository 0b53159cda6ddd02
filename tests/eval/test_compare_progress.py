"""`hugginggpt compare`'s progress: plain lines when piped (done, failed, requests per minute, ETA),
at most one per interval and always the last; the figures themselves."""

from __future__ import annotations

import io

from rich.console import Console

from hugginggpt.cli.compare_progress import ComparisonProgress, clock_text, rate_and_eta


def test_plain_lines_say_done_failed_rate_and_eta_at_most_once_per_interval():
    now = [100.0]
    text = io.StringIO()
    progress = ComparisonProgress(Console(file=text, width=200), live=False, every=10, clock=lambda: now[0])
    bar = progress("react (plan)", 4, 2)
    for failed, step in [(False, 6.0), (True, 6.0), (False, 6.0), (False, 6.0)]:
        now[0] += step
        bar.update(failed)
    bar.close()
    assert text.getvalue().splitlines() == [
        "react (plan): 4 request(s) to run (2 done before)",
        "react (plan): 1/4 done, 0 failed, 10.0 req/min, ETA 18s",  # the first
        # 2/4 at 12 s: within 10 s of the last line, not shown
        "react (plan): 3/4 done, 1 failed, 10.0 req/min, ETA 6s",  # 12 s after the last line
        "react (plan): 4/4 done, 1 failed, 10.0 req/min, ETA 0s",  # the last, always
    ]


def test_the_live_bar_counts_on_a_terminal():
    text = io.StringIO()
    progress = ComparisonProgress(Console(file=text, width=150, force_terminal=True), clock=lambda: 0.0)
    bar = progress("tools (plan)", 2, 0)
    bar.update(True)
    bar.update(False)
    bar.close()
    assert "2/2" in text.getvalue() and "1 failed" in text.getvalue()


def test_rate_and_eta():
    assert rate_and_eta(0, 10, 5.0) == (None, None)
    assert rate_and_eta(5, 10, 30.0) == (10.0, 30.0)
    assert [clock_text(s) for s in (None, 4, 245, 3720)] == ["?", "4s", "4m05s", "1h02m"]
