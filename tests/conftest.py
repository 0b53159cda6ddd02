"""Suite-wide settings: every run's workspace goes to a temporary folder, never the checkout."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_HOME", str(tmp_path_factory.mktemp("hugginggpt-home")))
    # Prompt states of the embedded model are written under a temporary folder, not the user's cache.
    monkeypatch.setenv("HUGGINGGPT_CACHE", str(tmp_path_factory.mktemp("hugginggpt-cache")))
    # Tests never reach the Hub: fail fast instead of waiting on the network.
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "1")
    monkeypatch.setenv("HF_HUB_DOWNLOAD_TIMEOUT", "2")
