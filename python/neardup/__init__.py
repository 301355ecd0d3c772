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

import json as _json
import os as _os

from . import _neardup
from ._neardup import __version__  # CMake's project version, as `neardup --version`
from ._neardup import (
    Error,
    Index,
    InvalidArgumentError,
    Method,
    NotFoundError,
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
    "CheckResult",
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


class CheckResult(tuple):
    """Index.check's answer for one document: the pair ``(added, matches)``
    (so ``added, matches = idx.check(id, text)`` unpacks it) with the names
    ``added``, ``matches`` and ``empty``. ``empty`` is True for a document
    without features (empty, or nothing left after normalization): it is
    never added and matches nothing, the text index's one policy, which
    ``neardup index check`` and serve's /v1/check answer as ``"empty": true``.
    """

    def __new__(cls, added, matches, empty=False):
        self = super().__new__(cls, (added, matches))
        self._empty = bool(empty)
        return self

    @property
    def added(self):
        return self[0]

    @property
    def matches(self):
        return self[1]

    @property
    def empty(self):
        return self._empty

    def __repr__(self):
        return "CheckResult(added=%r, matches=%r, empty=%r)" % (self[0], self[1], self._empty)

    def __reduce__(self):
        return (CheckResult, (self[0], self[1], self._empty))


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


# The module-level functions are Python functions (not the extension's
# builtins, which hold a capsule that pickle refuses), so that they cross to
# multiprocessing.Pool's workers by name: pool.map(neardup.fingerprint, texts).
def fingerprint(text, *, method=None, title=None):
    """The SimHash fingerprint of one document as an int (bits 0..63 or
    0..127; ``to_hex(fp, bits)`` is the CLI's hex form). A document with no
    features has fingerprint 0. title only matters to the improved weights."""
    return _neardup.fingerprint(text, method=method, title=title)


def explain(a, b, *, method=None, top=10):
    """Why two texts are (not) near duplicates, as `neardup explain`: both
    fingerprints and feature counts, the distance, similarity, the differing
    bits and the `top` features (0: all) that push the fingerprints apart
    most, each {"feature", "weight_a", "weight_b" (None when absent), "push"}."""
    return _neardup.explain(a, b, method=method, top=top)


def _method_from_state(text, jieba_dir="", data_dir=""):
    # Method.__reduce__: a Method from its text form and this machine's
    # locations (pickle, multiprocessing).
    return Method(text, jieba_dir=jieba_dir, data_dir=data_dir)


def _as_fingerprint(value):
    # What fingerprint_batch returns, as distance takes it: a numpy uint64
    # (64 bits) or a row of two (128 bits: high, low) becomes an int.
    if isinstance(value, (str, bytes, int)):
        return value
    if _numpy is not None:
        if isinstance(value, _numpy.integer):
            return int(value)
        if isinstance(value, _numpy.ndarray):
            if value.shape == ():
                return int(value)
            if value.shape == (2,):
                return (int(value[0]) << 64) | int(value[1])
            raise ValueError("a fingerprint row has shape (2,) (128 bits: high, low), not %s"
                             % (value.shape,))
    return value


def distance(a, b, *, method=None):
    """The Hamming distance of two texts (fingerprinted with method) or of two
    fingerprints: ints as fingerprint() returns them, or the values
    fingerprint_batch() returns (a numpy uint64, or a row of two for 128
    bits)."""
    return _neardup.distance(_as_fingerprint(a), _as_fingerprint(b), method=method)


def _refuse_data_frame(docs):
    # Iterating a DataFrame yields its column names: a silent wrong answer.
    if hasattr(docs, "columns") and (hasattr(docs, "iterrows") or hasattr(docs, "to_dict")):
        raise TypeError(
            "docs is a %s (a table): dedup takes an iterable of str or of dicts; pass "
            "df.to_dict(\"records\") for a pandas DataFrame (or df[\"text\"] for texts alone)"
            % type(docs).__name__)


def dedup(
    docs,
    *,
    method=None,
    k=None,
    mode="cluster",
    keep="first",
    cluster="center",
    boilerplate=None,
    boilerplate_min_docs=0,
    short_features=None,
    short_jaccard=None,
    short_rule=None,
    verify_jaccard=_neardup._DEFAULT_VERIFY_JACCARD,
    verify_short_features=_neardup._DEFAULT_VERIFY_SHORT_FEATURES,
    verify_short_jaccard=_neardup._DEFAULT_VERIFY_SHORT_JACCARD,
    join="auto",
    recall=0.99,
    band_seed=None,
    threads=0,
    text_field="text",
    id_field="id",
    title_field="title",
    unique=False,
    summary=None,
):
    """Near-duplicate detection over documents: the job of `neardup dedup`
    (the library's, neardup/dedup_job.h), with its options and defaults.

    docs: an iterable of str or of dicts (the text under text_field, the id
    under id_field, an optional title under title_field); a pandas DataFrame
    is a TypeError (pass df.to_dict("records")). A generator: it reads the
    whole input first (cluster mode needs every pair) and then yields, in
    input order, one record per document, the CLI's JSON record:

        {"id", "fingerprint" (hex; not for minhash), "cluster" (input
         position of the cluster's first member), "duplicate", "nearest" (id
         of the kept copy, None when kept), "distance" (minhash: "jaccard";
         None when kept), "jaccard" (SimHash with verified pairs: the
         estimated Jaccard to "nearest", 4 decimals; None when kept),
         "empty": True (only for documents without features)}

    With unique=True it yields the input items that are kept, unchanged.
    An id is the dict's id_field value, else the position (0, 1, ...).

    The options are the CLI's (`neardup dedup --help`), with its defaults:
    method (None: chars5u; "minhash" too), k (-k; default: the method's),
    mode ("cluster" | "stream"), keep ("first" | "longest" | "field:NAME"),
    cluster ("center" | "components"), boilerplate (None: lines unless the
    method names boilerplate=...; "off" | "lines"), boilerplate_min_docs
    (0: the method's), short_features / short_jaccard / short_rule (the
    short-document rule: short_features None is the CLI's auto, every
    document by the "sketch" rule at short_jaccard 0.52 (None: 0.52 for
    that default, 0.5 for features or a rule given; a value is taken as given)
    for 128-bit SimHash methods that keep every feature in
    cluster mode at k >= the method's default, off otherwise; 0: off; a
    number: on, rule "exact" unless short_rule says "sketch"), verify_jaccard (verified pairs, SimHash methods: a pair within k
    is a near-duplicate only when its estimated Jaccard is at least this;
    0: off), verify_short_features / verify_short_jaccard (the threshold of
    short documents), join ("auto" | "exact" | "banded": --exact /
    --banded), recall and
    band_seed (the banded join). summary: a dict to fill with the counts the
    CLI prints (documents, kept, duplicates, clusters, largest_cluster,
    empty, k, method, mode, cluster_rule, boilerplate_lines, short_features
    and short_rule: the rule that ran, "off" when it did not). Bad arguments
    raise InvalidArgumentError, a dict without its text field KeyError, a
    non-str text TypeError."""
    if not isinstance(keep, str):
        raise TypeError("keep must be a str")
    if keep not in ("first", "longest") and not (keep.startswith("field:") and len(keep) > 6):
        raise InvalidArgumentError(
            "unknown keep '%s' (expected first, longest or field:NAME)" % keep
        )
    if mode not in ("cluster", "stream"):
        raise InvalidArgumentError("unknown mode '%s' (expected cluster or stream)" % mode)
    if isinstance(docs, (str, bytes, dict)):
        raise TypeError("docs must be an iterable of str or of dicts, not a single %s"
                        % type(docs).__name__)
    _refuse_data_frame(docs)
    options = dict(method=method, k=k, mode=mode, keep=keep, cluster=cluster,
                   boilerplate=boilerplate, boilerplate_min_docs=boilerplate_min_docs,
                   short_features=short_features, short_jaccard=short_jaccard,
                   short_rule=short_rule,
                   verify_jaccard=verify_jaccard, verify_short_features=verify_short_features,
                   verify_short_jaccard=verify_short_jaccard, join=join,
                   recall=recall, band_seed=band_seed, threads=threads)
    return _dedup_records(docs, options, text_field, id_field, title_field, unique, summary)


def _score_text(value):
    # The keep field as the CLI's JSONL reader keeps it: a str as it is, a
    # number as its JSON text; the library parses it (a non-number ranks
    # below every number).
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _json.dumps(value)
    return _json.dumps(value, ensure_ascii=False, default=str)


def _dedup_records(docs, options, text_field, id_field, title_field, unique, summary):
    keep = options["keep"]
    score_field = keep[6:] if keep.startswith("field:") else None
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
            score = _score_text(doc.get(score_field)) if score_field else None
        else:
            raise TypeError("document %d is a %s, not a str or a dict"
                            % (position, type(doc).__name__))
        if not isinstance(text, (str, bytes)):
            raise TypeError("document %d: the text must be str or bytes, not %s"
                            % (position, type(text).__name__))
        if unique:
            items.append(doc)
        ids.append(doc_id)
        texts.append(text)
        titles.append(title if isinstance(title, (str, bytes)) else "")
        scores.append(score)
    method = options["method"]
    method_text = method if isinstance(method, str) else ""
    band_seed = options["band_seed"]
    records, counts, verifies = _neardup._dedup(
        texts, titles, scores, method, method_text, options["k"], options["mode"], keep,
        options["cluster"], options["boilerplate"] or "", options["boilerplate_min_docs"],
        options["short_features"], options["short_jaccard"], options["short_rule"],
        options["verify_jaccard"],
        options["verify_short_features"], options["verify_short_jaccard"], options["join"],
        options["recall"], _neardup._DEFAULT_BAND_SEED if band_seed is None else band_seed,
        options["threads"])
    if summary is not None:
        summary.update(counts)
    score_key = "distance" if counts["k"] is not None else "jaccard"
    for i, (fp, cluster, duplicate, nearest, score, empty, jaccard) in enumerate(records):
        if unique:
            if not duplicate:
                yield items[i]
            continue
        record = {"id": ids[i]}
        if fp is not None:
            record["fingerprint"] = fp
        record["cluster"] = cluster
        record["duplicate"] = duplicate
        record["nearest"] = ids[nearest] if duplicate else None
        record[score_key] = score if duplicate else None
        if verifies:
            record["jaccard"] = jaccard
        if empty:
            record["empty"] = True
        yield record
