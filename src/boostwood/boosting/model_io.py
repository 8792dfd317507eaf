"""The JSON model format (documented in docs/model-format.md).

Reading a model is plain JSON parsing plus validation: no code is executed,
no pickle is involved. The file carries a SHA-256 checksum of its ``model``
section, so a truncated or edited file is rejected with a clear error.
"""
import hashlib
import json
import math
import os
import stat
import tempfile

FORMAT_NAME = "boostwood-model"
#: Version written. 2 added split kinds and category sets to trees, and feature types,
#: category dictionaries and a (reserved) certificates section to the model; version 1
#: files are read as all-numeric models. 3 records only the parameters that differ from
#: their defaults (1 and 2 recorded every parameter that existed when they were written).
FORMAT_VERSION = 3
FEATURE_TYPES = ("numeric", "categorical")
#: Largest model file read (bytes): a model of a million trees of 255 leaves is ~1.5 GB.
MAX_MODEL_BYTES = 4 << 30


def read_text(path, limit=MAX_MODEL_BYTES):
    """The text of a model file: only a regular file (a FIFO, device or directory would
    block or never end) of at most ``limit`` bytes, as UTF-8."""
    source = os.fspath(path)
    fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{source} is not a regular file; a model is read only from one")
        if info.st_size > limit:
            raise ValueError(f"{source} is {info.st_size} bytes, more than the {limit} bytes a "
                             "model file may have")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = _read_at_most(fh, info.st_size, limit)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ValueError(f"{source} grew past {limit} bytes while it was read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{source} is not a boostwood model file (not UTF-8 text)") from None


def _read_at_most(fh, size, limit, chunk=1 << 24):
    """The bytes of ``fh`` up to end of file, or ``limit + 1`` of them if it holds more.
    Read by the file's own ``size`` and then in chunks, never by ``limit``: a buffered
    ``read(n)`` asks for n bytes of memory at once, and 4 GiB fails where memory or
    address space is capped (containers, sandboxed workers) even for a 10 KB model."""
    parts, total = [], 0
    want = min(size, limit) + 1  # one more: the end of file (or a file that grew)
    while total <= limit:
        part = fh.read(min(want, limit + 1 - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
        want = chunk
    return b"".join(parts)


def _canonical(model):
    return json.dumps(model, sort_keys=True, separators=(",", ":"), allow_nan=False)


def encode_float_list(values):
    """Floats as JSON numbers; +-inf as the strings "inf" / "-inf" (strict JSON has none)."""
    return [v if math.isfinite(v) else ("inf" if v > 0 else "-inf" if v < 0 else "nan")
            for v in values]


def dumps(model):
    """Serialise a model dict into the file's text."""
    body = _canonical(model)
    return json.dumps({
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "checksum": "sha256:" + hashlib.sha256(body.encode()).hexdigest(),
        "model": model,
    }, allow_nan=False)


def loads(text, source="model"):
    """Parse and check a model file's text; return its ``model`` dict."""
    return read_model(text, source)[0]


def read_model(text, source="model"):
    """Parse and check a model file's text; return its ``model`` dict and its format
    version (a reader refuses a version newer than :data:`FORMAT_VERSION`)."""
    def reject(constant):
        raise ValueError(f"{source} is not a valid boostwood model file: it holds the "
                         f"non-standard JSON constant {constant}")

    try:
        doc = json.loads(text, parse_constant=reject)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{source} is not a valid boostwood model file "
                         f"(truncated or not JSON): {exc}") from None
    except RecursionError:
        raise ValueError(f"{source} is not a valid boostwood model file: its JSON is nested "
                         "too deeply") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise ValueError(f"{source} is not a boostwood model file (no 'format': '{FORMAT_NAME}')")
    version = doc.get("version")
    if not _is_int(version) or version < 1:
        raise ValueError(f"{source} has an invalid format version {version!r}")
    if version > FORMAT_VERSION:
        raise ValueError(f"{source} uses model format version {version}, newer than this "
                         f"boostwood reads ({FORMAT_VERSION}); upgrade boostwood")
    model = doc.get("model")
    if not isinstance(model, dict):
        raise ValueError(f"{source} has no 'model' section")
    expected = "sha256:" + hashlib.sha256(_canonical(model).encode()).hexdigest()
    if doc.get("checksum") != expected:
        raise ValueError(f"{source} failed its checksum: the file was modified or corrupted")
    return model, version


#: Keys every model section has (format version 1 on), and the keys version 2 added.
REQUIRED_KEYS = frozenset({"boostwood_version", "objective", "num_class", "n_outputs",
                           "n_features", "feature_names", "base_score", "params",
                           "best_iteration", "best_score", "trees"})
KNOWN_KEYS = REQUIRED_KEYS | {"feature_types", "category_dictionaries", "certificates"}


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_finite(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_header(model, source="model"):
    """The model section's keys and the types of its fields other than the trees: every
    required key present, no unknown key, counts are integers, names unique strings,
    scores finite numbers (a model that loads predicts finite values)."""
    missing, unknown = REQUIRED_KEYS - set(model), set(model) - KNOWN_KEYS
    if missing or unknown:
        raise ValueError(f"{source} has a malformed model section: missing keys "
                         f"{sorted(missing)}, unknown keys {sorted(unknown)}")
    n = model["n_features"]
    names = model["feature_names"]
    problems = [
        (_is_int(n) and n >= 1, "n_features must be a positive integer"),
        (isinstance(names, list) and all(isinstance(v, str) for v in names)
         and len(names) == (n if _is_int(n) else -1) and len(set(names)) == len(names),
         "feature_names must be n_features distinct strings"),
        (isinstance(model["base_score"], list) and model["base_score"]
         and all(_is_finite(v) for v in model["base_score"]),
         "base_score must be a list of finite numbers"),
        (model["best_iteration"] is None or (_is_int(model["best_iteration"])
                                             and model["best_iteration"] >= 0),
         "best_iteration must be null or a non-negative integer"),
        (model["best_score"] is None or _is_finite(model["best_score"]),
         "best_score must be null or a finite number"),
        (isinstance(model["objective"], str) and isinstance(model["params"], dict)
         and isinstance(model["trees"], list) and _is_int(model["n_outputs"])
         and isinstance(model["boostwood_version"], str),
         "objective, params, trees, n_outputs or boostwood_version has the wrong type"),
    ]
    for ok, what in problems:
        if not ok:
            raise ValueError(f"{source}: {what}")


def read_feature_types(model, n_features, source="model"):
    """(feature_types, category_dictionaries) of a model section, validated; a version-1
    model has neither and is all numeric."""
    types = model.get("feature_types", ["numeric"] * n_features)
    if not isinstance(types, list) or len(types) != n_features \
            or any(t not in FEATURE_TYPES for t in types):
        raise ValueError(f"{source}: feature_types must list 'numeric' or 'categorical' for "
                         f"each of the {n_features} features")
    raw = model.get("category_dictionaries", {})
    if not isinstance(raw, dict):
        raise ValueError(f"{source}: category_dictionaries must be an object")
    dictionaries = {}
    for key, labels in raw.items():
        if not (isinstance(key, str) and key.isdigit() and int(key) < n_features
                and types[int(key)] == "categorical"):
            raise ValueError(f"{source}: category_dictionaries has a key {key!r} that is not "
                             "the index of a categorical feature")
        if not isinstance(labels, list) or len(set(map(repr, labels))) != len(labels) \
                or any(not isinstance(v, (str, int, float)) or isinstance(v, bool)
                       for v in labels):
            raise ValueError(f"{source}: the category dictionary of feature {key} must be a "
                             "list of distinct strings or numbers")
        dictionaries[int(key)] = list(labels)
    return list(types), dictionaries


#: Certificate kinds this version can check (none yet: monotone and interaction
#: constraint certificates will be added with the constraints themselves).
CERTIFICATE_KINDS = ()


def check_certificates(model, source="model"):
    """The reserved ``certificates`` section: an object whose keys are certificate kinds
    this version knows (an unknown kind cannot be checked, so the file is refused)."""
    certs = model.get("certificates", {})
    if not isinstance(certs, dict):
        raise ValueError(f"{source}: certificates must be an object")
    unknown = sorted(set(certs) - set(CERTIFICATE_KINDS))
    if unknown:
        raise ValueError(f"{source} carries certificates of kinds {unknown} that this "
                         "version of boostwood cannot check; upgrade boostwood")


def write_atomic(path, text):
    """Write ``text`` to ``path`` via a temporary file, fsync and rename.

    A crash mid-write leaves the previous file (if any) intact. A symbolic link is
    followed (its target is replaced, the link stays); a target that exists and is not
    a regular file (a device, a FIFO, a directory) is refused, never replaced.
    """
    path = os.path.realpath(os.fspath(path))
    if os.path.lexists(path) and not os.path.isfile(path):
        raise ValueError(f"{path} exists and is not a regular file; refusing to replace it")
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".boostwood-", suffix=".tmp", dir=folder)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a model is an ordinary file
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
