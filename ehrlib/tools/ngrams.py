"""scikit-learn's ``char_wb`` TF-IDF (2-4 grams), built from per-word n-grams.

``char_wb`` n-grams never cross a word boundary, so a label's n-gram counts are the sum
of its words' counts. MIMIC-IV's 200 k ICD titles use only ~30 k distinct words: we take
each word's n-grams once (Python) and sum them per label with one sparse product (C),
instead of scikit-learn's per-occurrence Python loop (60 s on a busy 2-core machine).
The weights are scikit-learn's, term for term (a test compares the matrices):

* lower-case, collapse whitespace, split into words, pad each word with one space;
* the n-grams of length 2..4 that fit in the padded word;
* tf = 1 + ln(count) (``sublinear_tf``); idf = ln((1 + N) / (1 + df)) + 1 (``smooth_idf``);
* rows L2-normalised.
"""
from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from scipy import sparse

__all__ = ["CharWbTfidf", "word_ngrams", "char_wb_ngrams"]

_WS = re.compile(r"\s\s+")


@functools.lru_cache(maxsize=200_000)
def word_ngrams(word: str) -> tuple[str, ...]:
    """Character 2- to 4-grams of a word padded with spaces."""
    w = f" {word} "
    return tuple(w[i:i + n] for n in range(2, min(4, len(w)) + 1) for i in range(len(w) - n + 1))


def _words(text: str) -> list[str]:
    return _WS.sub(" ", text.lower()).split()


def char_wb_ngrams(text: str) -> list[str]:
    """scikit-learn's char_wb analyzer output (n = 2..4) for one text."""
    return [g for w in _words(text) for g in word_ngrams(w)]



def _l2_rows(m: sparse.csr_matrix) -> sparse.csr_matrix:
    """Rows scaled to unit L2 norm; all-zero rows stay zero (scipy only: sklearn costs seconds to import)."""
    import numpy as np  # deferred: fitting only; a search of a cached index needs no SciPy
    from scipy import sparse

    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sparse.csr_matrix(sparse.diags(1.0 / norms) @ m)

class CharWbTfidf:
    """Fit once over labels: the L2-normalised (texts x n-grams) matrix, kept as CSC arrays
    (``indptr``, ``indices``, ``data``) so a search reads only its own n-grams' postings.

    Fitting uses SciPy; reading a fitted index back and searching it use NumPy alone
    (:meth:`similarities`), so a process that only searches a cached index never imports
    SciPy (about 0.15 s of CPU).
    """

    def __init__(self, texts: Sequence[str]) -> None:
        import numpy as np  # deferred: a process that never fits an index pays no SciPy import
        from scipy import sparse

        word_index: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        for i, text in enumerate(texts):
            for w in _words(text):
                rows.append(i)
                cols.append(word_index.setdefault(w, len(word_index)))
        words = list(word_index)
        vocab: dict[str, int] = {}
        w_rows: list[int] = []
        w_cols: list[int] = []
        for j, w in enumerate(words):
            for g in word_ngrams(w):
                w_rows.append(j)
                w_cols.append(vocab.setdefault(g, len(vocab)))
        n_texts, n_words, n_grams = len(texts), len(words), len(vocab)
        text_words = sparse.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(n_texts, n_words))
        word_grams = sparse.csr_matrix((np.ones(len(w_rows), np.float32), (w_rows, w_cols)), shape=(n_words, n_grams))
        counts = (text_words @ word_grams).tocsr()       # duplicates summed: n-gram counts per text
        counts.sum_duplicates()
        df = np.bincount(counts.indices, minlength=n_grams)
        self.idf = (np.log((1.0 + n_texts) / (1.0 + df)) + 1.0).astype(np.float32)
        counts.data = (1.0 + np.log(counts.data)).astype(np.float32)
        weighted = counts @ sparse.diags(self.idf)
        fitted = _l2_rows(weighted.tocsr()).astype(np.float32).tocsc()
        self._set_columns(fitted.data, fitted.indices, fitted.indptr, fitted.shape)
        self.vocabulary = vocab

    def _set_columns(self, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, int]) -> None:
        self.data, self.indices, self.indptr = data, indices, indptr
        self.shape = (int(shape[0]), int(shape[1]))
        self._starts: list[int] | None = None

    @property
    def columns(self) -> sparse.csc_matrix:
        """The matrix as a SciPy CSC matrix (imports SciPy; the search does not use it)."""
        from scipy import sparse  # deferred: the SciPy view only (tests, fitting)

        return sparse.csc_matrix((self.data, self.indices, self.indptr), shape=self.shape)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The fitted state as plain arrays (the disk cache stores them; no pickle)."""
        import numpy as np  # deferred: NumPy loads with the first index

        encoded = [g.encode("utf-8") for g in self.vocabulary]   # exact bytes: numpy str arrays drop trailing NULs
        return {"idf": self.idf, "vocab_utf8": np.frombuffer(b"".join(encoded), dtype=np.uint8),
                "vocab_ends": np.cumsum([len(e) for e in encoded], dtype=np.int64),
                "data": self.data, "indices": self.indices, "indptr": self.indptr,
                "shape": np.array(self.shape, dtype=np.int64)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> CharWbTfidf:
        """The vectorizer :meth:`to_arrays` described, without refitting (and without SciPy)."""
        import numpy as np  # deferred: NumPy loads with the first index

        self = cls.__new__(cls)
        self.idf = np.asarray(arrays["idf"], dtype=np.float32)
        raw, ends = arrays["vocab_utf8"].tobytes(), arrays["vocab_ends"].tolist()
        starts = [0, *ends[:-1]] if ends else []
        self.vocabulary = {raw[a:b].decode("utf-8"): i for i, (a, b) in enumerate(zip(starts, ends, strict=True))}
        shape = tuple(int(x) for x in arrays["shape"])
        if len(shape) != 2 or shape[1] != len(self.vocabulary) or len(self.idf) != shape[1]:
            raise ValueError("n-gram arrays disagree in size")
        data, indices, indptr = arrays["data"], arrays["indices"], arrays["indptr"]
        if (data.ndim != 1 or indices.shape != data.shape or indptr.shape != (shape[1] + 1,)
                or int(indptr[0]) != 0 or int(indptr[-1]) != len(data) or bool((np.diff(indptr) < 0).any())
                or (len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= shape[0]))):
            raise ValueError("n-gram arrays are not a CSC matrix of their shape")
        self._set_columns(data, indices, indptr, (shape[0], shape[1]))
        return self

    def weights(self, text: str) -> tuple[list[int], list[float]]:
        """One text's L2-normalised tf-idf over the fitted vocabulary: its n-gram columns in
        ascending order and their weights (unknown n-grams dropped).
        """
        counts = Counter(self.vocabulary[g] for g in char_wb_ngrams(text) if g in self.vocabulary)
        row = {col: (1.0 + math.log(c)) * float(self.idf[col]) for col, c in counts.items()}
        norm = math.sqrt(sum(v * v for v in row.values())) or 1.0
        cols = sorted(row)
        return cols, [row[col] / norm for col in cols]

    def transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """L2-normalised tf-idf rows over the fitted vocabulary, as a SciPy CSR matrix."""
        import numpy as np  # deferred: the SciPy view only (tests)
        from scipy import sparse

        data: list[float] = []
        indices: list[int] = []
        indptr = [0]
        for text in texts:
            cols, values = self.weights(text)
            indices += cols
            data += values
            indptr.append(len(indices))
        return sparse.csr_matrix((np.asarray(data, np.float32), np.asarray(indices, np.int64), np.asarray(indptr)),
                                 shape=(len(texts), len(self.vocabulary)))

    def similarities(self, texts: Sequence[str]) -> np.ndarray:
        """Cosines of every fitted text (rows) with each of ``texts`` (columns), float32.

        The same numbers, bit for bit, as SciPy's ``columns @ transform(texts).T``: its
        sparse product adds, for each query, the products ``weight * posting`` (float32)
        into the text's sum one query n-gram at a time in ascending column order, and so
        does this loop; float addition is not associative, so the order is what keeps
        rankings and tie-breaks identical.
        """
        import numpy as np  # deferred: NumPy loads with the first index

        if self._starts is None:
            self._starts = self.indptr.tolist()
        starts = self._starts
        sims = np.zeros((len(texts), self.shape[0]), dtype=np.float32)
        for j, text in enumerate(texts):
            cols, values = self.weights(text)
            if not cols:
                continue
            spans = [(starts[col], starts[col + 1]) for col in cols]
            rows = np.concatenate([self.indices[a:b] for a, b in spans])
            weights = np.repeat(np.asarray(values, np.float32), [b - a for a, b in spans])
            # products in float32, then added one at a time in n-gram order (ufunc.at is unbuffered)
            np.add.at(sims[j], rows, weights * np.concatenate([self.data[a:b] for a, b in spans]))
        return sims.T
