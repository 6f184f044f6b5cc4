"""Real text embeddings for `plexus-bench vectors --data debian-docs`.

Passages are the paragraphs of the plain-text documentation Debian packages
install (`/usr/share/doc`: READMEs, NEWS, changelogs, copyright notices;
gzipped or not), 12 to 400 words each, whitespace collapsed, each kept once.
They are taken in a seeded shuffle of their sorted order, so the same
machine with the same packages gives the same set. The embedding model is
WordLlama's `l2_supercat`, whose 256-dimension weights ship inside the PyPI
wheel: nothing is downloaded at run time. Vectors are normalised to unit
length (cosine is then the inner product).

Reads its job as JSON on stdin: {"roots": [...], "rows": N, "dim": D,
"seed": S, "out": path}. Writes N rows of D little-endian f32 to `out`, and
the passages, one per line, to `out` + ".txt". Prints the number of distinct
passages found on stdout; fails when fewer than N were found."""

import gzip
import json
import os
import random
import re
import sys

import numpy as np

TEXT_NAMES = (".txt", ".md", ".rst")
BATCH = 4096


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def read_text(path, name):
    if name.endswith(".gz"):
        with gzip.open(path, "rt", errors="replace") as f:
            return f.read()
    if name.endswith(TEXT_NAMES) or "." not in name:
        with open(path, errors="replace") as f:
            return f.read()
    return None


def passages(roots):
    seen = set()
    out = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                if os.path.islink(path):
                    continue
                try:
                    text = read_text(path, name)
                except (OSError, EOFError, gzip.BadGzipFile):
                    continue
                if text is None:
                    continue
                for para in re.split(r"\n\s*\n", text):
                    words = para.split()
                    if 12 <= len(words) <= 400:
                        p = " ".join(words)
                        if p not in seen:
                            seen.add(p)
                            out.append(p)
    return out


def main():
    job = json.load(sys.stdin)
    found = passages(job["roots"])
    rows = job["rows"]
    log(f"embed: {len(found)} distinct passages under {', '.join(job['roots'])}")
    if len(found) < rows:
        sys.exit(f"only {len(found)} passages found, {rows} asked for: ask for fewer (--n, --queries)")
    random.Random(job["seed"]).shuffle(found)
    chosen = found[:rows]
    from pathlib import Path

    import wordllama
    from wordllama import WordLlama

    # The wheel holds the weights and the tokenizer; as a cache folder, the
    # package's own finds both (its default looks for the tokenizer where
    # the wheel does not put it), and nothing is downloaded.
    here = Path(wordllama.__file__).parent
    model = WordLlama.load(dim=job["dim"], cache_dir=here, disable_download=True)
    with open(job["out"] + ".part", "wb") as f:
        for start in range(0, rows, BATCH):
            batch = chosen[start:start + BATCH]
            v = np.asarray(model.embed(batch, norm=True), dtype="<f4")
            norms = np.linalg.norm(v, axis=1, keepdims=True)
            # A passage of tokens the model has no weight for: a unit vector
            # on the first axis rather than a zero that cosine cannot rank.
            v = np.where(norms > 0, v / np.maximum(norms, 1e-12), np.eye(1, v.shape[1], dtype="<f4"))
            f.write(v.astype("<f4").tobytes())
            log(f"embed: {min(start + BATCH, rows)} / {rows}")
    with open(job["out"] + ".txt", "w") as f:
        for p in chosen:
            f.write(p + "\n")
    os.replace(job["out"] + ".part", job["out"])
    print(len(found), flush=True)


if __name__ == "__main__":
    main()
