# SPDX-License-Identifier: GPL-3.0-or-later
"""A survey's files: each image's output names, the record written beside
its catalogues (how they were made, so that a later run can skip the
image), and the gathered table built from the catalogues."""
import hashlib
import json
import os
import time

RECORD_SUFFIX = ".survey.json"
RECORD_VERSION = 1

# The formats an image's catalogue may be written in, and their suffixes.
# The CSV is always written: it is the CLI's own file, and the gathered
# table is made from it without any library.
SUFFIXES = {"csv": ".csv", "ecsv": ".ecsv", "votable": ".vot", "regions": ".reg",
            "parquet": ".parquet"}


def output_names(paths):
    """A name per image for its files in the output folder: the file's name
    without its FITS suffixes, with a short hash of its absolute path where
    two images would otherwise share one."""
    def stem(path):
        base = os.path.basename(path)
        for suffix in (".gz", ".fz", ".bz2"):
            if base.endswith(suffix):
                base = base[: -len(suffix)]
        for suffix in (".fits", ".fit", ".fts", ".FITS", ".FIT"):
            if base.endswith(suffix):
                return base[: -len(suffix)]
        return base

    stems = [stem(p) for p in paths]
    count = {}
    for s in stems:
        count[s] = count.get(s, 0) + 1
    names = []
    for path, s in zip(paths, stems):
        if count[s] > 1:
            digest = hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:8]
            s = f"{s}-{digest}"
        names.append(s)
    return names


def output_path(out, name, fmt):
    return os.path.join(out, name + SUFFIXES[fmt])


def record_path(out, name):
    return os.path.join(out, name + RECORD_SUFFIX)


def input_identity(path):
    """What a record must match of the input: its size and modification time."""
    st = os.stat(path)
    return {"input_size": st.st_size, "input_mtime_ns": st.st_mtime_ns}


def write_record(out, name, record):
    """Writes the record atomically (a temporary renamed into place), after
    the catalogues: its presence says they are complete."""
    path = record_path(out, name)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def read_record(out, name):
    try:
        with open(record_path(out, name)) as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def matches(record, path, out, name, want):
    """Whether record says that the image at path was already handled with
    what want holds (parameters, version, formats): the record's status
    ("done" or "failed") when it matches, else None. A record matches when
    its parameters and skysift version equal want's, its input size and
    modification time equal the file's now, and (for a done image) every
    format asked for was written by that run and is still there."""
    if record is None or record.get("record_version") != RECORD_VERSION:
        return None
    try:
        now = input_identity(path)
    except OSError:
        return None
    for key in ("input_size", "input_mtime_ns"):
        if record.get(key) != now[key]:
            return None
    if record.get("params") != want["params"] or record.get("version") != want["version"]:
        return None
    status = record.get("status")
    if status == "done":
        written = record.get("outputs") or {}
        for fmt in ["csv", *want["formats"]]:
            if fmt not in written or not os.path.exists(output_path(out, name, fmt)):
                return None
    elif status != "failed":
        return None
    return status


def now_utc():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _csv_fields(line):
    """The fields of one CSV line as written by the core's writer (RFC 4180
    quoting), for the union of columns; the text itself is kept as it is."""
    import csv
    return next(csv.reader([line]))


def _quote(text):
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def gather_csv(items, path):
    """Writes the gathered table as CSV: an ``image`` column (the path as
    given), then the catalogues' columns, every row as the image's CSV has
    it (numbers keep their text, byte for byte). Images whose catalogues
    have other columns (one without a WCS has no sky columns) leave the
    missing fields empty. items: (image, csv path) in input order. Written
    atomically. Returns the number of rows."""
    tables = []
    columns = []
    for image, csv_path in items:
        with open(csv_path, newline="") as f:
            lines = f.read().splitlines()
        if not lines:
            continue
        names = _csv_fields(lines[0])
        for n in names:
            if n not in columns:
                columns.append(n)
        tables.append((image, names, lines[1:]))
    nrows = 0
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", newline="") as f:
        f.write(",".join(["image", *columns]) + "\n")
        for image, names, rows in tables:
            prefix = _quote(image) + ","
            if names == columns:
                for row in rows:
                    f.write(prefix + row + "\n")
            else:
                where = [names.index(c) if c in names else -1 for c in columns]
                for row in rows:
                    fields = _csv_fields(row)
                    f.write(prefix + ",".join(_quote(fields[k]) if k >= 0 else ""
                                              for k in where) + "\n")
            nrows += len(rows)
    os.replace(tmp, path)
    return nrows


IMAGE_DESCRIPTION = "The image the source was found in (its path as given)"


def _ecsv_split(path):
    """An ECSV file of the core's writer as (its column lines of the
    header's datatype list, its data rows without the names row)."""
    columns, rows, names_seen = [], [], False
    in_datatype = False
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                if line == "# datatype:":
                    in_datatype = True
                elif in_datatype and line.startswith("# - "):
                    columns.append(line)
                else:
                    in_datatype = False
            elif not names_seen:
                names_seen = True
            elif line:
                rows.append(line)
    return columns, rows


def _ecsv_quote(text):
    if text == "" or any(c in text for c in ' \t"'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _yaml_value(v):
    """A value as YAML that PyYAML reads back as its type (a float always
    with a decimal point: PyYAML reads 1e-05 as text)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        text = repr(v)
        if "e" in text and "." not in text.split("e")[0]:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    if isinstance(v, int):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_yaml_value(x) for x in v) + "]"
    return json.dumps(str(v))


def gather_ecsv(items, path, meta):
    """Writes the gathered table as ECSV 1.0 without astropy: the images'
    column descriptions (units, UCDs) with an ``image`` column first, meta
    (a flat dict) as the table's metadata, and every row as the image's ECSV
    has it. items: (image, ecsv path) in input order. Returns False, writing
    nothing, where the images' columns differ (another unit, no WCS): the
    caller then builds it from the CSV with astropy."""
    columns, parts = None, []
    for image, ecsv_path in items:
        cols, rows = _ecsv_split(ecsv_path)
        if columns is None:
            columns = cols
        elif cols != columns:
            return False
        parts.append((image, rows))
    if columns is None:
        return False
    names = [c.split("name: ", 1)[1].split(",", 1)[0] for c in columns]
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write("# %ECSV 1.0\n# ---\n# datatype:\n")
        f.write(f"# - {{name: image, datatype: string, description: "
                f"{json.dumps(IMAGE_DESCRIPTION)}}}\n")
        for c in columns:
            f.write(c + "\n")
        f.write("# meta:\n")
        for key, value in meta.items():
            f.write(f"#   {key}: {_yaml_value(value)}\n")
        f.write("# schema: astropy-2.0\n")
        f.write(" ".join(["image", *names]) + "\n")
        for image, rows in parts:
            prefix = _ecsv_quote(image) + " "
            for row in rows:
                f.write(prefix + row + "\n")
    os.replace(tmp, path)
    return True
