"""File names and paths found in text: the one place that reads them out of words.

- ``request_files`` / ``media_kind_of``: the media files a request names, by kind (what the planner's
  passes may read), and the media kind one value names;
- ``listed_files``: runs of media files of one kind that a request writes as a list (like inputs);
- ``table_files`` / ``web_urls``: the table files (``.csv``, ``.tsv``, ``.xlsx``, ``.json``) and the
  http(s) URLs a request writes, which a plan's table and media arguments may read;
- ``looks_like_path``: whether a value is a file name or path rather than words describing one;
- ``mentioned_paths``: every path an answer mentions (absolute and home paths, ``file:`` URLs, paths
  through hidden or parent folders, names with a media, data or document suffix), which the answer
  check holds against the files a run really has.

The kinds and their suffixes are ``sniff.py``'s. Every scan is linear in the text's length: a
pattern matches a maximal run of path characters and the run is then judged in Python.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from hugginggpt.tools.resources.sniff import MEDIA_SUFFIXES, file_kind
from hugginggpt.tools.table import MEDIA_KINDS

_MEDIA_EXTENSIONS = {kind: sorted(s.lstrip(".") for s in suffixes) for kind, suffixes in MEDIA_SUFFIXES.items()}
# A match starts only where a run of path characters starts (the lookbehind), so a long word is
# scanned once, not once per position: linear time.
# The suffix ends where no ASCII letter or digit follows: in Chinese or Japanese text the next word follows
# without a space ("example.jpg里", "flyer.jpgに").
_FILE_NAME = re.compile(r"(?<![\w\-./:%~])[\w\-./:%~]+\.(" + "|".join(e for x in _MEDIA_EXTENSIONS.values() for e in x)
                        + r")(?![A-Za-z0-9_])", re.IGNORECASE)
_TABLE_NAME = re.compile(r"(?<![\w\-./:%~])[\w\-./:%~]+\.(csv|tsv|xlsx?|json)(?![A-Za-z0-9_])", re.IGNORECASE)
#: Letters of scripts written without spaces between words (Han, kana, Hangul syllables, Thai, full-width
#: forms): a file name written in Latin letters right after them starts where they end ("一张example.jpg").
_UNSPACED_LETTER = r"[\u0e00-\u0e7f\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]"
_UNSPACED = re.compile(_UNSPACED_LETTER + "+")
#: A file suffix written right before such words ("output.png文件"): the name ends with the suffix.
_GLUED_SUFFIX = re.compile(r"(\.[A-Za-z0-9]{1,8})(?=" + _UNSPACED_LETTER + ")")
_WEB_URL = re.compile(r"https?://[^\s'\"<>()\[\]{}]+")

#: Documents, archives, keys, databases and model files: a name with one of these (or a media or data
#: suffix, ``sniff.file_kind``) is a file the answer claims. Suffixes that are also words of prose
#: (``Node.js``, ``example.com``) are not.
DOCUMENT_SUFFIXES = ("doc", "docx", "odt", "rtf", "xls", "xlsx", "ods", "ppt", "pptx", "odp", "epub", "zip", "tar",
                     "gz", "tgz", "bz2", "xz", "7z", "rar", "xml", "yaml", "yml", "toml", "ini", "cfg", "log", "db",
                     "sqlite", "pem", "key", "crt", "p12", "pfx", "kdbx", "parquet", "pkl", "h5", "pt", "pth",
                     "safetensors", "onnx", "gguf", "exe", "dll", "sh", "bat", "ps1", "html", "htm", "tsv", "srt")
# A maximal run of path characters; each run is then judged in Python (no backtracking: linear time).
_PATH_RUN = re.compile(r"[\w.\-/\\~:%+@]+")
#: A URL of any scheme (``https://...``); ``file:`` URLs have their own pattern.
URL = re.compile(r"(?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]*://\S+", re.IGNORECASE)
_FILE_URL = re.compile(r"(?<![a-z0-9+.\-])file:\S+", re.IGNORECASE)
_ROOTED = re.compile(r"(?:/|\\\\|~[\w.\-]*/|[A-Za-z]:[\\/])[\w.\-~]")  # /x, \\host, ~/x, ~user/x, C:\x
_DOCUMENT_NAME = re.compile(r"[\w\-]\.(?:" + "|".join(DOCUMENT_SUFFIXES) + r")$", re.IGNORECASE)
_SEPARATOR = re.compile(r"[\\/]")
_SHORT_SUFFIX = re.compile(r"\.\w{1,5}$")


def media_kind_of(value: str) -> str | None:
    """image / audio / video by the file extension of ``value``, None when it names no media file."""
    match = _FILE_NAME.fullmatch(value.strip().strip("'\""))
    kind = file_kind(match.group(0)) if match else None
    return kind if kind in MEDIA_KINDS else None


def _named(pattern: re.Pattern[str], text: str | None) -> list[tuple[int, str]]:
    """The names ``pattern`` (a file-name pattern ending in a suffix) finds in ``text``, with where each
    starts. A match holding several names glued by words of an unspaced script (``a.jpg和b.jpg``,
    ``a.jpgとb.jpg``) is cut after each suffix such words follow, and each part loses the words before
    it (``_unglued``)."""
    found: list[tuple[int, str]] = []
    for match in pattern.finditer(text or ""):
        whole, offset = match.group(0), match.start()
        cuts = [m.end(1) for m in _GLUED_SUFFIX.finditer(whole)]
        for begin, stop in zip([0, *cuts], [*cuts, len(whole)]):
            part = whole[begin:stop]
            if pattern.fullmatch(part) is None:  # a number or words glued to a name, not a name of this kind
                continue
            name = _unglued(part)
            found.append((offset + stop - len(name), name))
    return found


def _unglued(name: str) -> str:
    """``name`` without the words of an unspaced script written before it: ``一张example.jpg`` is
    ``example.jpg``. A name that is in such a script (``庭.jpg``), or a path through a folder before
    them (``/data/猫example.jpg``), is kept whole; words written right before an absolute or home path are
    not a folder of it (``画像は/tmp/猫/out.png`` is ``/tmp/猫/out.png``)."""
    runs = list(_UNSPACED.finditer(name))
    if not runs:
        return name
    if runs[0].start() == 0 and _ROOTED.match(name, runs[0].end()):  # 保存在/data/猫/x.jpg: the rooted path
        return name[runs[0].end():]
    cut = runs[-1].end()
    tail, head = name[cut:], name[:cut]
    if "/" in head or "\\" in head or not tail or tail[0] == "." or "." not in tail:
        return name
    return tail


def request_files(request: str) -> dict[str, list[str]]:
    """The media files and URLs a request names, by kind, in order of appearance."""
    found: dict[str, dict[str, None]] = {kind: {} for kind in MEDIA_KINDS}  # ordered sets: linear time
    for _, name, kind in _media_mentions(request or ""):
        if kind:
            found[kind].setdefault(name)
    return {kind: list(names) for kind, names in found.items()}


@lru_cache(maxsize=16)
def _media_mentions(text: str) -> tuple[tuple[int, str, str | None], ...]:
    """Each media file name ``text`` writes: where it starts, the name, its kind. Kept for the last few
    texts: planning one request reads its files many times."""
    return tuple((start, name, media_kind_of(name)) for start, name in _named(_FILE_NAME, text))


#: The most letters or digits the joiner between two listed files may hold: a conjunction ("and", "und",
#: "et", "y", "和", "と") or an item label ("A: a.jpg, B: b.jpg"); a clause between two files is no joiner.
MAX_JOINER_LETTERS = 4


def listed_files(request: str) -> list[list[str]]:
    """The runs of two or more media files of one kind that ``request`` writes one right after another,
    joined by spaces, punctuation and at most ``MAX_JOINER_LETTERS`` letters (``a.jpg, b.jpg``, ``take1.wav
    and take2.wav``, ``a.jpg和b.jpg``, ``A: a.jpg, B: b.jpg``): a list of like inputs. Read from the
    joiner's length, not its words, so it holds in any language."""
    runs: list[list[str]] = []
    run: dict[str, None] = {}  # an ordered set: linear time
    kind: str | None = None
    end = 0
    for start, name, this in _media_mentions(request or ""):
        joiner = sum(1 for ch in request[end:start] if unicodedata.category(ch)[0] in "LN")
        if run and this == kind and joiner <= MAX_JOINER_LETTERS:
            run.setdefault(name)
        else:
            if len(run) > 1:
                runs.append(list(run))
            run, kind = {name: None}, this
        end = start + len(name)
    if len(run) > 1:
        runs.append(list(run))
    return runs


def table_files(text: str) -> list[str]:
    """The table files ``text`` names (``.csv``, ``.tsv``, ``.xls``/``.xlsx``, ``.json``), in order."""
    return [name for _, name in _named(_TABLE_NAME, text)]


def web_urls(text: str) -> list[str]:
    """The http(s) URLs ``text`` writes, trailing punctuation left out, in order."""
    return [url.rstrip(".,;:!?") for url in _WEB_URL.findall(text or "")]


def last_part(path: str) -> str:
    """The last part of a path written with either separator (``dir\\x.png`` and ``dir/x.png``: ``x.png``)."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def same_file(value: str, file: str) -> bool:
    """Whether ``value`` (an argument, quotes and spaces around it aside) names ``file``: as written, or by
    its last path part (``./photos/a.jpg`` names ``a.jpg``)."""
    name = value.strip().strip("'\"")
    return bool(name) and (name == file or last_part(name) == last_part(file))


def looks_like_path(value: str) -> bool:
    """A file name or path of any kind (``notes.txt``, ``dir/x``), as opposed to words describing one."""
    text = value.strip()
    return bool(text) and " " not in text and ("/" in text or "\\" in text or _SHORT_SUFFIX.search(text) is not None)


def file_urls(text: str) -> list[str]:
    """The ``file:`` URLs in ``text``, trailing punctuation left out."""
    return [match.group(0).rstrip(".,;:)]}'\"") for match in _FILE_URL.finditer(text)]


def mentioned_paths(text: str) -> list[str]:
    """The paths ``text`` mentions outside URLs (``file:`` URLs: ``file_urls``), in order, each once:
    every absolute or home path (``/etc/passwd``, ``~/.ssh/id_rsa``, ``C:\\x``), relative path through
    a hidden or parent folder (``.ssh/id_rsa``, ``../secret``), and file name with a media, data
    (``sniff.file_kind``) or document suffix (``out.png``, ``report.docx``). In Chinese, Japanese or
    Korean text a name glued to the words around it is read alone (``生成了output.png文件``: ``output.png``)."""
    found: list[str] = []
    text = _GLUED_SUFFIX.sub(r"\1 ", URL.sub(" ", _FILE_URL.sub(" ", text)))
    for match in _PATH_RUN.finditer(text):
        mention = _mentioned_path(match.group(0))
        if mention is not None and mention not in found:
            found.append(mention)
    return found


def _mentioned_path(run: str) -> str | None:
    """The path a run of path characters names (see ``mentioned_paths``), else None."""
    run = _unglued(run.rstrip(".:,").lstrip(":,"))
    if run.startswith("..."):  # an ellipsis before a name
        run = run.lstrip(".")
    if _ROOTED.match(run) or file_kind(run) is not None or _DOCUMENT_NAME.search(run):
        return run
    parts = _SEPARATOR.split(run)
    if len(parts) > 1 and any(part == ".." or (part.startswith(".") and part.strip(".")) for part in parts):
        return run
    return None
