"""NLTK's English stop-word list, shipped as data so that no corpus download is needed.

Source: the ``english`` list of NLTK's ``stopwords`` corpus (nltk_data,
``corpora/stopwords/english``; Bird, Klein and Loper, "Natural Language Processing with
Python", O'Reilly 2009; https://www.nltk.org/nltk_data/), the 179 words it has held
since NLTK 3.4. nltk_data is distributed under the Apache License 2.0, the stop-word
lists under their own terms as stated in the corpus's README. The words are written out
here as data, one group per line, in the corpus's order.

Example:
    >>> len(ENGLISH_STOP_WORDS)
    179
    >>> "the" in ENGLISH_STOP_WORDS, "heart" in ENGLISH_STOP_WORDS
    (True, False)
"""

from __future__ import annotations

from typing import Final

_WORDS = """
i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
yourselves he him his himself she she's her hers herself it it's its itself they them their
theirs themselves what which who whom this that that'll these those am is are was were be been
being have has had having do does did doing a an the and but if or because as until while of
at by for with about against between into through during before after above below to from up
down in out on off over under again further then once here there when where why how all any
both each few more most other some such no nor not only own same so than too very s t can will
just don don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn
didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn
mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn
wouldn't
"""

#: The lower-case English stop words (compare with ``word.lower()``).
ENGLISH_STOP_WORDS: Final[frozenset[str]] = frozenset(_WORDS.split())
