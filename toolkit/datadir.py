"""The user's data folder: where the journal and the built-in sandbox's state live.

``$CAMPAIGN_TOOLKIT_DATA`` when set, else the platform's folder for a user's application data:
``$XDG_DATA_HOME/campaign-toolkit`` (by default ``~/.local/share/campaign-toolkit``), or
``%LOCALAPPDATA%\\campaign-toolkit`` on Windows.

>>> sandbox_state().name, sandbox_state().parent == data_dir()
('sandbox.db', True)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ENV_DATA = "CAMPAIGN_TOOLKIT_DATA"
APP = "campaign-toolkit"
#: The built-in sandbox's state (SQLite), in the data folder.
SANDBOX_STATE = "sandbox.db"


def user_data_dir() -> Path:
    """The platform's data folder of the toolkit for this user (``$CAMPAIGN_TOOLKIT_DATA``
    not consulted)."""
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / APP
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / APP


def data_dir() -> Path:
    """``$CAMPAIGN_TOOLKIT_DATA``, else :func:`user_data_dir`."""
    env = os.environ.get(ENV_DATA)
    return Path(env).expanduser().absolute() if env else user_data_dir()


def sandbox_state() -> Path:
    """The built-in sandbox's state file: ``sandbox.db`` in :func:`data_dir`."""
    return data_dir() / SANDBOX_STATE


__all__ = ["ENV_DATA", "SANDBOX_STATE", "data_dir", "sandbox_state", "user_data_dir"]
