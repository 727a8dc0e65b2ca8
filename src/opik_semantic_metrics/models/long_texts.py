"""Over-long texts: tokenize the leading part the model keeps, not the whole text.

Every encoder here keeps a text's first tokens up to its limit (512 for BERT-like
models) and flags the text as cut. A fast tokenizer still reads all of a text before
it cuts, and builds ids, offsets and a token string for every token on the way, which
for a generation that never stopped costs seconds and hundreds of megabytes to keep a
few hundred tokens (figures: ``docs/design/resource-bounds.md``).

The tokenizers of these models split a text at spaces before anything else
(WordPiece, byte-level BPE and SentencePiece's Metaspace alike): the tokens of a part
that ends just before a space are then the first tokens of the whole text. Once such a
leading part has more tokens than the limit, the whole text's ids up to the limit are
the part's, and the text was cut: the same ids and the same flag, for the cost of the
part. :func:`reads_leading_parts` checks a tokenizer for this when a model loads; one
that fails reads every text whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

#: Characters a token limit's worth of text may span before a leading part is tried:
#: 16 a token, where English text averages about 4.
CHARACTERS_A_TOKEN = 16

# A part ends on a character that is not whitespace, just before a plain space. Not
# before a line break: some pre-tokenizers (Llama 3's, Qwen 2's) join a run of
# punctuation and the line breaks after it into one piece.
_END_BEFORE_SPACE = re.compile(r"\S(?= )")

# Words, numbers, punctuation before spaces and line breaks, contractions, runs of
# spaces, tabs, accents, scripts without spaces and an emoji: places where a tokenizer
# might join across a space if it were ever going to.
_PROBE = (
    "It's 3.14 o'clock,  don't   wait!\nNa\u00efve caf\u00e9 \u2014 \u00fcber-cool\t"
    "(see \u00a72) \u6771\u4eac\u30bf\u30ef\u30fc \u0645\u0631\u062d\u0628\u0627 "
    "\U0001f600 e-mail: a@b.org ... ;;; !? :) UNKNOWNISHWORDS  \n\n end.\n"
)


def reads_leading_parts(
    tokenize: Callable[[str], Sequence[int]],
    *,
    added_tokens: Iterable[str] = (),
    truncation_side: str = "right",
) -> bool:
    """Whether a tokenizer may be given only a leading part of an over-long text.

    It may where its limit keeps a text's first tokens (truncation on the right), no
    token added to its vocabulary holds whitespace (one such, "New York", would be read
    as two pieces by a part ending after "New"), and every leading part of a probe text,
    cut just before a space, tokenizes into the first tokens of the whole probe. The
    probe is a sample, not a proof: it holds the constructs that tokenizers join
    across a space when they do at all.

    Args:
        tokenize: A text's token ids, without special tokens.
        added_tokens: The tokens added to the tokenizer's vocabulary.
        truncation_side: Where the tokenizer cuts a text over its limit.

    Example:
        >>> reads_leading_parts(lambda text: [hash(word) for word in text.split()])
        True
        >>> reads_leading_parts(lambda text: [len(text)])  # one token, the whole text
        False
        >>> reads_leading_parts(lambda text: text.split(), added_tokens=["New York"])
        False
    """
    if truncation_side != "right" or any(
        character.isspace() for token in added_tokens for character in token
    ):
        return False
    whole = list(tokenize(_PROBE))
    for found in _END_BEFORE_SPACE.finditer(_PROBE):
        part = list(tokenize(_PROBE[: found.end()]))
        if part != whole[: len(part)]:
            return False
    return True


def transformers_tokenizer_reads_leading_parts(
    tokenizer: PreTrainedTokenizerBase, prepare: Callable[[str], str]
) -> bool:
    """:func:`reads_leading_parts` for a transformers tokenizer, each text passed through
    ``prepare`` first (a prefix space, lower case)."""
    return reads_leading_parts(
        lambda text: tokenizer.encode(prepare(text), add_special_tokens=False, verbose=False),
        added_tokens=[token.content for token in tokenizer.added_tokens_decoder.values()],
        truncation_side=tokenizer.truncation_side,
    )


def leading_part(text: str, count_tokens: Callable[[str], int], max_tokens: int) -> str:
    """The first leading part of ``text``, cut just before a space, with more than
    ``max_tokens`` tokens; ``text`` itself where none is found (a caller then reads it
    whole), and where the text is no longer than the first part tried.

    The first part tried has ``CHARACTERS_A_TOKEN * max_tokens`` characters. A part with
    too few tokens is followed by one long enough at its density of tokens, and at least
    twice as long. No part tried is over half the text: all those tried before reading
    a text whole add up to less than the text, so that read costs at most twice over.

    Args:
        text: The text.
        count_tokens: How many tokens a part has; anything over ``max_tokens`` will do.
        max_tokens: The model's token limit.

    Example:
        >>> text = "one two three four five six seven eight nine ten"
        >>> leading_part(text, lambda part: len(part.split()), max_tokens=0)
        'one'
        >>> leading_part(text, lambda part: len(part.split()), max_tokens=1)
        'one two three four'
        >>> leading_part(text, lambda part: len(part.split()), max_tokens=9)
        'one two three four five six seven eight nine ten'
    """
    size = CHARACTERS_A_TOKEN * max_tokens
    while size < len(text):
        found = _END_BEFORE_SPACE.search(text, max(size - 1, 0))
        if found is None or 2 * found.end() > len(text):
            break
        part = text[: found.end()]
        tokens = count_tokens(part)
        if tokens > max_tokens:
            return part
        size = len(part) * max(2, 2 * (max_tokens + 1) // max(tokens, 1))
    return text
