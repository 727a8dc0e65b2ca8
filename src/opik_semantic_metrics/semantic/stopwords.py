"""NLTK's English stop-word list: an alias of
:data:`opik_semantic_metrics.vocabulary.ENGLISH_STOP_WORDS`, the list's one home, kept for
the imports written before it moved there.

Example:
    >>> len(ENGLISH_STOP_WORDS)
    179
"""

from __future__ import annotations

from opik_semantic_metrics.vocabulary import ENGLISH_STOP_WORDS as ENGLISH_STOP_WORDS
