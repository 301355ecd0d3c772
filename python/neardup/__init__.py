"""neardup: near-duplicate text detection (SimHash; Chinese first, English too).

The Python face of the neardup C++ library; doc/python.md is the guide.

    import neardup
    fp = neardup.fingerprint("湖人消息比赢球开心10倍")           # an int (128 bits)
    fps = neardup.fingerprint_batch(texts, threads=4)            # numpy array
    neardup.distance(text_a, text_b, method="tfidf")             # Hamming distance
    for record in neardup.dedup(rows):                           # as `neardup dedup`
        ...

A method is None (the default, chars5u), its text form as on the command line
(``"tfidf,bits=64"``, see doc/methods.md) or a :class:`Method`. Library errors
raise :class:`Error` (:class:`InvalidArgumentError` is also a ValueError,
:class:`NotFoundError` also a FileNotFoundError) with the library's message.
Every call that fingerprints or searches releases the GIL.
"""

import math as _math
import os as _os

from . import _neardup
from ._neardup import __version__  # CMake's project version, as `neardup --version`
from ._neardup import (
    Error,
    Index,
    InvalidArgumentError,
    Method,
    NotFoundError,
    distance,
    explain,
    fingerprint,
)

# A wheel (pip install .) carries the data files (the marker words of the
# `improved` method) in neardup/data; the CLI's install keeps them in
# <prefix>/share/neardup, where the library looks by itself.
_DATA_DIR = _os.path.join(_os.path.dirname(__file__), "data")
if _os.path.isdir(_DATA_DIR) and "NEARDUP_DATA_DIR" not in _os.environ:
    _os.environ["NEARDUP_DATA_DIR"] = _DATA_DIR

try:
    import numpy as _numpy
except ImportError:  # python3-numpy is optional
    _numpy = None

__all__ = [
    "Error",
    "Index",
    "InvalidArgumentError",
    "Method",
    "NotFoundError",
    "dedup",
    "distance",
    "explain",
    "fingerprint",
    "fingerprint_batch",
    "to_hex",
]


def to_hex(fp, bits=128):
    """The CLI's hex form of a fingerprint int: bits // 4 lower-case digits."""
    return format(int(fp), "0%dx" % (bits // 4))


def fingerprint_batch(texts, *, method=None, threads=0):
    """Fingerprints of many texts, computed on `threads` threads (0: all cores)
    with the GIL released.

    Returns, when numpy is importable, a numpy array of dtype uint64: shape
    (n,) for 64-bit methods, (n, 2) for 128-bit ones (column 0 the high 64
    bits, column 1 the low ones). Without numpy: a list of ints as
    fingerprint() returns them. texts: an iterable of str (or UTF-8 bytes)."""
    bits, raw = _neardup._fingerprint_batch(texts, method, threads)
    if _numpy is not None:
        array = _numpy.frombuffer(raw, dtype=_numpy.uint64)
        return array if bits == 64 else array.reshape(-1, 2)
    words = [int.from_bytes(raw[i : i + 8], "little") for i in range(0, len(raw), 8)]
    if bits == 64:
        return words
    return [(words[i] << 64) | words[i + 1] for i in range(0, len(words), 2)]


def _score(value):
    # As the CLI: a number, or a string that is one number; else None (ranks
    # below every number).
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        value = float(value)
    elif isinstance(value, str):
        if value != value.rstrip():  # strtod stops at trailing space
            return None
        try:
            value = float(value)
        except ValueError:
            return None
    else:
        return None
    return value if _math.isfinite(value) else None


def dedup(
    docs,
    *,
    method=None,
    k=None,
    mode="cluster",
    keep="first",
    threads=0,
    text_field="text",
    id_field="id",
    title_field="title",
    unique=False,
    summary=None,
):
    """Near-duplicate detection over documents, as `neardup dedup`.

    docs: an iterable of str or of dicts (the text under text_field, the id
    under id_field, an optional title under title_field). A generator: it
    reads the whole input first (cluster mode needs every pair) and then
    yields, in input order, one record per document, the CLI's JSON record:

        {"id", "fingerprint" (hex), "cluster" (input position of the
         cluster's first member), "duplicate", "nearest" (id of the kept copy,
         None when kept), "distance" (None when kept), "empty": True (only
         for documents without features)}

    With unique=True it yields the input items that are kept, unchanged.
    An id is the dict's id_field value, else the position (0, 1, ...).

    k: largest Hamming distance of a near duplicate (default: the method's).
    mode: "cluster" (centres, the library's default rule: every member within
    k of its cluster's kept copy) or "stream" (keep a document only if no kept
    one lies within k). keep: "first", "longest" (most UTF-8 bytes)
    or "field:NAME" (largest number in the field NAME). summary: a dict to fill
    with the counts the CLI prints (documents, kept, duplicates, clusters,
    empty, k, method). Bad arguments raise InvalidArgumentError, a dict
    without its text field KeyError, a non-str text TypeError."""
    score_field = None
    if not isinstance(keep, str):
        raise TypeError("keep must be a str")
    if keep.startswith("field:") and len(keep) > 6:
        score_field, keep = keep[6:], "field"
    elif keep not in ("first", "longest"):
        raise InvalidArgumentError(
            "unknown keep '%s' (expected first, longest or field:NAME)" % keep
        )
    if mode not in ("cluster", "stream"):
        raise InvalidArgumentError("unknown mode '%s' (expected cluster or stream)" % mode)
    if isinstance(docs, (str, bytes, dict)):
        raise TypeError("docs must be an iterable of str or of dicts, not a single %s"
                        % type(docs).__name__)
    return _dedup_records(docs, method, k, mode, keep, score_field, threads, text_field,
                          id_field, title_field, unique, summary)


def _dedup_records(docs, method, k, mode, keep, score_field, threads, text_field, id_field,
                   title_field, unique, summary):
    items, ids, texts, titles, scores = [], [], [], [], []
    for position, doc in enumerate(docs):
        if isinstance(doc, (str, bytes)):
            text, title, doc_id, score = doc, "", position, None
        elif isinstance(doc, dict):
            if text_field not in doc:
                raise KeyError("document %d has no field '%s'" % (position, text_field))
            text = doc[text_field]
            title = doc.get(title_field) or ""
            doc_id = doc.get(id_field, position)
            score = _score(doc.get(score_field)) if score_field else None
        else:
            raise TypeError("document %d is a %s, not a str or a dict"
                            % (position, type(doc).__name__))
        if unique:
            items.append(doc)
        ids.append(doc_id)
        texts.append(text)
        titles.append(title if isinstance(title, (str, bytes)) else "")
        scores.append(score)
    records, counts = _neardup._dedup(texts, titles, scores, method, k, mode, keep, threads)
    if summary is not None:
        summary.update(counts)
    for i, (fp, cluster, duplicate, nearest, dist, empty) in enumerate(records):
        if unique:
            if not duplicate:
                yield items[i]
            continue
        record = {
            "id": ids[i],
            "fingerprint": fp,
            "cluster": cluster,
            "duplicate": duplicate,
            "nearest": ids[nearest] if duplicate else None,
            "distance": dist if duplicate else None,
        }
        if empty:
            record["empty"] = True
        yield record
