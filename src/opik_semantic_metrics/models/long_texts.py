"""Over-long texts: tokenize the leading part the model keeps, not the whole text.

Every encoder here keeps a text's first tokens up to its limit (512 for BERT-like
models) and flags the text as cut. A fast tokenizer still reads all of a text before
it cuts, and builds ids, offsets and a token string for every token on the way: a
5 MB output (a generation that never stopped) took BERTScore 6.8 s and 720 MB of
memory, and SemanticMatch 12 s, to keep 512 and 256 tokens of it.

The tokenizers of these models split a text at whitespace before anything else
(WordPiece, byte-level BPE and SentencePiece's Metaspace alike): the tokens of a part
that ends just before whitespace are then the first tokens of the whole text. Once
such a leading part has more tokens than the limit, the whole text's ids up to the
limit are the part's, and the text was cut: the same ids and the same flag, for the
cost of the part. :func:`splits_at_whitespace` checks this of a tokenizer on a probe
text; an engine whose tokenizer fails it reads every text whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

#: Characters a token limit's worth of text may span before a leading part is tried:
#: 16 a token, where English text averages about 4.
CHARACTERS_A_TOKEN = 16

# Whitespace every tokenizer and Python's ``str.split`` agree on; a part ends on a
# character that is not whitespace, just before one of these.
_END_BEFORE_WHITESPACE = re.compile(r"\S(?=[ \t\n\r])")

# Words, numbers, punctuation, contractions, runs of spaces, tabs, newlines, accents,
# scripts without spaces and an emoji: places where a tokenizer might join across a
# space if it were ever going to.
_PROBE = (
    "It's 3.14 o'clock,  don't   wait!\nNa\u00efve caf\u00e9 \u2014 \u00fcber-cool\t"
    "(see \u00a72) \u6771\u4eac\u30bf\u30ef\u30fc \u0645\u0631\u062d\u0628\u0627 "
    "\U0001f600 e-mail: a@b.org ... UNKNOWNISHWORDS  \n\n end."
)


def splits_at_whitespace(tokenize: Callable[[str], Sequence[int]]) -> bool:
    """Whether every leading part of a probe text, cut just before whitespace, tokenizes
    into the first tokens of the whole probe.

    Args:
        tokenize: A text's token ids, without special tokens.

    Example:
        >>> splits_at_whitespace(lambda text: [hash(word) for word in text.split()])
        True
        >>> splits_at_whitespace(lambda text: [len(text)])  # one token, the whole text
        False
    """
    whole = list(tokenize(_PROBE))
    for found in _END_BEFORE_WHITESPACE.finditer(_PROBE):
        part = list(tokenize(_PROBE[: found.end()]))
        if part != whole[: len(part)]:
            return False
    return True


def leading_part(text: str, long_enough: Callable[[str], bool], max_tokens: int) -> str:
    """The shortest leading part of ``text`` that is ``long_enough``, trying parts of
    ``CHARACTERS_A_TOKEN * max_tokens``, twice as many, four times as many ... characters,
    each cut just before whitespace; ``text`` itself where no part is (a caller then
    reads it whole), and where it is no longer than the first part.

    Args:
        text: The text.
        long_enough: Whether a part has more tokens than the model keeps.
        max_tokens: The model's token limit.

    Example:
        >>> text = "one two three four five six seven"
        >>> leading_part(text, lambda part: len(part.split()) > 3, max_tokens=0)
        'one two three four'
        >>> leading_part(text, lambda part: len(part.split()) > 9, max_tokens=0)
        'one two three four five six seven'
    """
    size = CHARACTERS_A_TOKEN * max_tokens
    while size < len(text):
        found = _END_BEFORE_WHITESPACE.search(text, max(size - 1, 0))
        if found is None:
            break
        part = text[: found.end()]
        if long_enough(part):
            return part
        size = 2 * len(part)
    return text
