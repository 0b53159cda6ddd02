"""The per-run workspace: where a run's downloads and generated files live, and the gate every
file or URL an LLM names must pass before a model reads it.

Confinement rule: a local path is accepted only if, after resolving ``..`` and symlinks, it lies
inside the workspace root or a folder/file the user allowed, and is a regular file. So an LLM
cannot make a task read ``/etc/passwd``, ``../../secret`` or ``/dev/zero``, whatever it writes.

Relative paths mean what they mean in a shell: an input the caller allows as ``examples/cat.jpg``
is the file of that name in the current directory when it is allowed, and a path a model writes
is tried against the run folder, the directory the caller was in when allowing inputs (so the
caller's own spelling names the allowed file), and each allowed folder (or an allowed file's
folder) -- each candidate still has to pass the confinement rule.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from uuid import uuid4

from hugginggpt.config import runs_home, var
from hugginggpt.errors import ResourceError
from hugginggpt.paths import expand_home
from hugginggpt.tools.resources.download import ALLOWED_SCHEMES, download
from hugginggpt.tools.resources.media import check_kind
from hugginggpt.tools.resources.netguard import (
    AddressPolicy,
    allow_any,
    private_urls_allowed_by_env,
    public_only,
)
from hugginggpt.tools.resources.refs import contains_resource_ref
from hugginggpt.tools.resources.sniff import KIND_SUFFIX, safe_suffix

MiB = 1 << 20
# A URL scheme; one letter is a Windows drive ("C:\..."), not a scheme.
_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]+):")


def caller_directory(base: str | os.PathLike | None = None) -> Path | None:
    """``base`` made absolute, else the current directory (None when it no longer exists)."""
    try:
        return Path(os.path.abspath(expand_home(base))) if base is not None else Path.cwd()
    except OSError:  # the current directory was removed
        return None


def new_run_id() -> str:
    """``YYYYmmdd-HHMMSS-<8 hex>``: sortable by time, unique across parallel runs."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid4().hex[:8]}"


class Workspace:
    """A run's folder plus the user's allowed inputs; safe to share between parallel tasks.

    ``root`` defaults to ``$HUGGINGGPT_HOME/<run id>`` (``HUGGINGGPT_HOME`` defaults to
    ``hugginggpt-runs`` in the current directory) and is created on first use; ``run_id`` is the
    root folder's name.
    Generated files go to ``root/outputs``, downloads to ``root/inputs``.

    Relative ``inputs`` are taken against ``base`` (default: the current directory when the workspace
    is made), as a shell would; that directory is also where relative paths in task arguments are
    looked for (after the run folder), so ``examples/cat.jpg`` names the input allowed by that name.
    A ``base`` given explicitly is such a directory even when every input is absolute (a server's
    working directory: a client's relative path means what it means in a shell started there).

    URL downloads connect to public addresses only, unless ``allow_private_urls`` is true (``None``
    reads ``HUGGINGGPT_ALLOW_PRIVATE_URLS``). ``address_policy`` replaces that choice with any
    ``netguard.AddressPolicy`` (e.g. one that also allows a single known local port).
    """

    def __init__(self, root: str | os.PathLike | None = None, inputs: Iterable[str | os.PathLike] = (), *,
                 max_download_bytes: int = 50 * MiB, download_timeout: float = 30.0,
                 allow_private_urls: bool | None = None, address_policy: AddressPolicy | None = None,
                 base: str | os.PathLike | None = None):
        if root is None:
            root = runs_home() / new_run_id()
        self._root = expand_home(root).resolve()
        self.run_id = self._root.name  # callers that pick the root usually name it with new_run_id()
        self.max_download_bytes = int(max_download_bytes)
        self.download_timeout = float(download_timeout)
        if address_policy is None:
            allowed = private_urls_allowed_by_env() if allow_private_urls is None else allow_private_urls
            address_policy = allow_any if allowed else public_only
        self.address_policy: AddressPolicy = address_policy
        self._lock = threading.Lock()
        self._inputs: list[Path] = []
        self._bases: list[Path] = []  # the caller's directories: where its relative spellings start
        if base is not None and (folder := caller_directory(base)) is not None:
            self._bases.append(folder)
        for path in inputs:
            self.allow(path, base=base)

    def __repr__(self) -> str:
        return f"Workspace(root={str(self._root)!r}, inputs={[str(p) for p in self.inputs]!r})"

    @property
    def root(self) -> Path:
        """The run folder (absolute, symlinks resolved), created on first access."""
        try:
            self._root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # one line that says which setting placed it there, not a traceback
            raise ResourceError(None, f"cannot make the run folder {self._root}: {exc.strerror or exc} "
                                      f"(its parent comes from --trace-dir or {var('home')})") from None
        return self._root

    @property
    def inputs(self) -> tuple[Path, ...]:
        """Files and folders the user allowed tasks to read (resolved)."""
        with self._lock:
            return tuple(self._inputs)

    def allow(self, path: str | os.PathLike, *, base: str | os.PathLike | None = None) -> Path:
        """Let tasks read a user-given file or folder (e.g. the image the user's request names).

        A relative ``path`` is taken against ``base`` (default: the current directory), as a shell
        would, and that directory is remembered: a task argument spelled as the caller spelled the
        input names the same file.
        """
        given = expand_home(path)
        folder = None
        if not given.is_absolute():
            folder = caller_directory(base)
            if folder is None:
                raise ResourceError(None, f"file not found: {path} (the current directory no longer exists)")
            given = folder / given
        try:
            resolved = given.resolve(strict=True)
        except (FileNotFoundError, NotADirectoryError):
            raise ResourceError(None, f"file not found: {path}") from None
        except (OSError, RuntimeError) as exc:  # symlink loop, name too long, permission denied
            raise ResourceError(None, f"cannot read {str(path)[:200]!r}: {getattr(exc, 'strerror', None) or exc}") from None
        with self._lock:
            if resolved not in self._inputs:
                self._inputs.append(resolved)
            if folder is not None and folder not in self._bases:
                self._bases.append(folder)
        return resolved

    def new_path(self, suffix_or_kind: str) -> Path:
        """A fresh, unique path in ``root/outputs`` for a generated file (the file is not created).

        ``suffix_or_kind`` is a kind (``image`` -> .png, ``audio`` -> .wav, ``video`` -> .mp4,
        ``text`` -> .txt, ``table`` -> .csv) or an extension such as ``.jpg``. The name is a random
        uuid, never anything an LLM wrote.
        """
        suffix = KIND_SUFFIX.get(suffix_or_kind) or safe_suffix(suffix_or_kind)
        if suffix is None:
            raise ValueError(f"not a media kind or a file extension: {suffix_or_kind!r}")
        folder = self.root / "outputs"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{uuid4().hex}{suffix}"

    def is_allowed(self, path: str | os.PathLike) -> bool:
        """Whether a resolved path lies inside the root or an allowed input."""
        path = Path(path)
        return any(path.is_relative_to(base) for base in (self._root, *self.inputs))

    def resolve(self, value: str | os.PathLike, kind: str | None = None, *, caller: bool = False) -> Path:
        """Turn a task's media argument (URL or path) into a checked local file of ``kind``.

        http(s) URLs are downloaded into ``root/inputs``; local paths must pass the confinement
        rule; any other scheme, an unsubstituted ``<resource>-N`` or a file of the wrong kind
        raises ``ResourceError``.

        ``caller=True``: the path comes from the calling program itself (a tool called from Python
        with no workspace), not from a model: it names any regular file, a relative one in the
        current directory, as in a shell.
        """
        text = os.fspath(value) if isinstance(value, os.PathLike) else value
        if not isinstance(text, str):
            raise ResourceError(None, f"expected a file path or URL, got {type(value).__name__}")
        text = text.strip()
        if not text:
            raise ResourceError(None, "empty file path or URL")
        if "\x00" in text:  # the OS would raise ValueError deep inside stat/open
            raise ResourceError(None, f"a file path or URL cannot contain NUL bytes: {text[:200]!r}")
        if contains_resource_ref(text):
            raise ResourceError(None, f"unresolved reference {text!r}: the task it points to produced no such output")
        scheme = _SCHEME.match(text)
        if scheme and scheme.group("scheme").lower() in ALLOWED_SCHEMES:
            path = download(text, self.root / "inputs", max_bytes=self.max_download_bytes,
                            timeout=self.download_timeout, address_policy=self.address_policy)
            try:
                return check_kind(path, kind)
            except ResourceError:
                path.unlink(missing_ok=True)
                raise
        if scheme:
            raise ResourceError(None, f"unsupported URL scheme {scheme.group('scheme')!r}: "
                                      f"only http(s) URLs and local files are accepted: {text}")
        return check_kind(self._caller_file(text) if caller else self._confined_file(text), kind)

    @staticmethod
    def _caller_file(text: str) -> Path:
        """The regular file the calling program names (relative: to the current directory)."""
        given = expand_home(text)
        try:
            resolved = given.resolve(strict=True)
            mode = os.stat(resolved).st_mode
        except (FileNotFoundError, NotADirectoryError):
            raise ResourceError(None, f"file not found: {text}") from None
        except (OSError, RuntimeError) as exc:  # symlink loop, name too long, permission denied
            raise ResourceError(None, f"cannot read {text[:200]!r}: {getattr(exc, 'strerror', None) or exc}") from None
        if not stat.S_ISREG(mode):
            raise ResourceError(None, f"not a regular file: {text}")
        return resolved

    def _confined_file(self, text: str) -> Path:
        """The regular file ``text`` names inside the root or an allowed input, else ResourceError."""
        given = expand_home(text)
        if given.is_absolute():
            candidates = [given]
        else:  # relative: to the root first, then to the caller's directories (its own spelling of an
            # input), then to each allowed folder (or an allowed file's folder)
            with self._lock:
                callers = list(self._bases)
            bases = [self._root, *callers] + [p if p.is_dir() else p.parent for p in self.inputs]
            candidates = [base / given for base in dict.fromkeys(bases)]
        escaped = None
        probing = not given.is_absolute() and ".." not in given.parts
        for candidate in candidates:
            # A plain relative name that lands outside every allowed place (next to an allowed *file*,
            # or in the caller's directory) and does not lead into one: whether something exists there
            # is none of the caller's business, so it gets "file not found" like a missing file (no
            # existence oracle). Spelled with "..", or through a symlink inside an allowed place, it escapes.
            quiet = probing and not self.is_allowed(os.path.normpath(candidate))
            try:
                resolved = candidate.resolve()  # lexical + existing symlinks; no existence needed
            except (OSError, RuntimeError):  # symlink loop, unreadable folder
                if quiet:
                    continue
                raise ResourceError(None, f"cannot resolve path: {text}") from None
            if not self.is_allowed(resolved):
                if not quiet:
                    escaped = escaped or resolved
                continue
            try:
                mode = os.stat(resolved).st_mode
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as exc:  # name too long, permission denied...: one typed line, not a traceback
                raise ResourceError(None, f"cannot read {text[:200]!r}: {exc.strerror or exc}") from None
            if not stat.S_ISREG(mode):
                raise ResourceError(None, f"not a regular file: {text}")
            return resolved
        if escaped is not None:  # absolute, "..", or a symlink inside an allowed folder: never depends on
            raise ResourceError(None, f"path escapes the allowed folders: {text}")  # what exists outside
        raise ResourceError(None, f"file not found: {text}")
