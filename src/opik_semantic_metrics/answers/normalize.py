"""Text normal forms of short answers, for the ``normalized`` method; numbers are read in
:mod:`~opik_semantic_metrics.answers.numbers`.

Text normal form (:func:`normal_forms`), in this order:

1. markup tags of rich text deleted (``"<b>5</b>"`` -> ``"5"``: a tag's ``>`` is not a
   bound) and HTML character references read (``"&gt;5"`` -> ``">5"``), Unicode NFKC
   (``"ﬁ"`` -> ``"fi"``, ``"℃"`` -> ``"°C"``, ``"CO₂"`` -> ``"CO2"``), curly quotes made
   straight, every dash and the minus sign made ``"-"``; a superscript
   number right after a digit is an exponent, kept apart from it (``"10²"`` -> ``"10^2"``,
   not ``"102"``);
2. case folded;
3. apostrophes deleted (``"don't"`` -> ``"dont"``), thousands separators deleted
   (``"3,420"`` -> ``"3420"``);
4. a hyphen touching a letter is a joiner *or* a separator, so there are two forms,
   ``joined`` (``"net-zero"`` -> ``"netzero"``) and ``spaced`` (``"net zero"``); two
   answers are equal when either form is. A hyphen between digits (``"1-2"``) separates;
   one before a number (``"-5"``, the exponent's in ``"1e-3"``, and ``"- 5"`` at the
   start) is a sign and is kept;
5. a period between letters is deleted (``"U.S."`` -> ``"us"``), one before a digit and
   not after a letter (``"12.8"``, ``".5"``) is a decimal point and is kept; every other
   punctuation mark separates words, except ``%`` and the currency signs (all of
   Unicode's, :data:`CURRENCY_SIGNS`), which are kept as words (so ``"$5"`` and
   ``"€5"`` stay different), and ``/``, ``+``, ``:`` and ``^`` between digits, which are
   kept as words too (``"3/4"`` -> ``"3 / 4"``: a fraction is not the range ``"3-4"``,
   nor ``"2+3"`` ``"2-3"``, nor ``"10²"`` ``"10-2"``), and so are ``<``, ``>``, ``≤`` and
   ``≥`` before a number and ``+`` after one (``">5"`` -> ``"> 5"``, ``"5+"`` ->
   ``"5 +"``: a bound is not the number it bounds);
6. a number is split from a word or symbol glued after it (``"12kWh"`` -> ``"12 kwh"``,
   ``"82%"`` -> ``"82 %"``, ``"CO2e"`` -> ``"co2 e"``, the same on both sides) and a
   symbol from what follows it (``"$5"`` -> ``"$ 5"``); units spelled out after a number
   are written one way (:data:`UNIT_SPELLINGS`: ``"percent"`` and ``"per cent"`` -> ``"%"``,
   ``"degrees Celsius"`` -> ``"c"``, ``"kilowatt hours"`` -> ``"kwh"``, ``"kilometres"``
   -> ``"km"``, ``"feet"`` -> ``"ft"``);
7. whitespace collapsed, and a leading article (``the``, ``a``, ``an``) dropped when a
   word of two or more characters follows it (the SQuAD v1.1 evaluation script drops
   articles everywhere; only the leading one is dropped here, so that ``"vitamin a"``
   keeps its ``a`` and the options ``"a, b"`` do not become ``"b"``).

Every step is a linear pass (``str.translate``, ``str.replace`` or a regular expression
without nested quantifiers and with a fixed replacement string, which CPython applies
without calling back into Python for each match), so a 1 MB answer is normalised in a
fraction of a second (``benchmarks/answer_match_speed.py`` prints the figures).
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass

from opik_semantic_metrics.answers.spelled_numbers import digits_for_words

#: Private-use characters that stand in for kept signs and decimal points while the
#: other punctuation is removed; they are deleted from the input first.
_KEPT_MINUS = "\ue000"
_KEPT_POINT = "\ue001"
#: Marks a joining hyphen until the two forms are cut from one normalised text.
_JOINER = "\ue002"
#: Stand-ins for the operators kept between digits ("3/4", "2+3", "3:1", "10^2"): they
#: are what tells a fraction, a sum, a ratio and a power from a range or from each other.
_KEPT_OPERATORS = {"/": "\ue003", "+": "\ue004", ":": "\ue005", "^": "\ue006"}
_OPERATOR_BETWEEN_DIGITS = {
    operator: re.compile(rf"(?<=\d)\s?{re.escape(operator)}\s?(?=\d)")
    for operator in _KEPT_OPERATORS
}
#: Stand-ins for the bounds kept before a number (">5", "\u2264 3.5") and the plus kept
#: after one ("5+"): a bound is not the number it bounds.
BOUND_SYMBOLS = ("<", ">", "\u2264", "\u2265", "\u2a7d", "\u2a7e")
_KEPT_BOUNDS = {
    **{bound: chr(0xE007 + index) for index, bound in enumerate(BOUND_SYMBOLS)},
    "+": "\ue00d",
}
# By the time bounds are read, a sign and a decimal point are their stand-ins.
_BOUND_BEFORE_NUMBER = {
    bound: re.compile(rf"{re.escape(bound)}(?=\s?[-.{_KEPT_MINUS}{_KEPT_POINT}]?\d)")
    for bound in BOUND_SYMBOLS
}
_PLUS_AFTER_NUMBER = re.compile(r"(?<=\d)\s?\+(?!\s?\d)")

_CHARACTER_MAP = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u0060\u00b4", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212", "-"),
        # Fraction and division slashes: NFKC writes "½" with the first.
        **dict.fromkeys("\u2044\u2215", "/"),
        **dict.fromkeys(
            [_KEPT_MINUS, _KEPT_POINT, _JOINER, *_KEPT_OPERATORS.values(), *_KEPT_BOUNDS.values()]
        ),
    }
)

# Patterns that start with the character they look for (the lookarounds come after it)
# let the regex engine skip ahead to that character instead of trying every position.
_LETTER = r"[^\W\d_]"
#: Unicode's currency signs (category Sc) that NFKC leaves as they are (it turns the
#: fullwidth ones into these, and "\u20a8" into "Rs").
CURRENCY_SIGNS = (
    "$\u00a2\u00a3\u00a4\u00a5\u058f\u060b\u07fe\u07ff\u09f2\u09f3\u09fb\u0af1\u0bf9"
    "\u0e3f\u17db\ua838\U0001e2ff\U0001ecb0"
    + "".join(chr(code) for code in range(0x20A0, 0x20C1) if code != 0x20A8)
    + "".join(chr(code) for code in range(0x11FDD, 0x11FE1))
)
CURRENCY_CLASS = f"[{CURRENCY_SIGNS}]"
_SYMBOLS = "%" + CURRENCY_SIGNS
# A superscript number right after a digit is an exponent ("10\u00b2" is 100): a caret
# goes between them before NFKC turns the superscript into a plain digit.
_SUPERSCRIPT_AFTER_DIGIT = re.compile(r"[\u2070\u00b9\u00b2\u00b3\u2074-\u207b](?<=\d.)")
_THOUSANDS_COMMA = re.compile(r",(?<=\d,)(?=\d{3}(?!\d))")
# A sign: a minus before a number, but not after a word (a hyphen), except the "e" of an
# exponent ("1e-3"); at the start, a space may stand between the sign and the number.
_SIGN_MINUS = re.compile(rf"-(?={CURRENCY_CLASS}?\.?\d)(?:(?<![\w.]-)|(?<=\de-))")
_LEADING_SIGN = re.compile(rf"^-\s+(?={CURRENCY_CLASS}?\.?\d)")
# A decimal point: a period before a digit, but not after a letter ("v.2" is two words).
_DECIMAL_POINT = re.compile(r"\.(?<![^\W\d_]\.)(?=\d)")
_JOINING_PERIOD = re.compile(rf"\.(?<={_LETTER}\.)(?={_LETTER})")
_JOINING_HYPHEN = re.compile(rf"-(?:(?<={_LETTER}-)(?=\w)|(?<=\w-)(?={_LETTER}))")
_KEPT_CHARACTERS = "".join([*_KEPT_OPERATORS.values(), *_KEPT_BOUNDS.values()])
_OTHER_PUNCTUATION = re.compile(
    rf"[^\w\s{_SYMBOLS}{_KEPT_MINUS}{_KEPT_POINT}{_JOINER}{_KEPT_CHARACTERS}]|_"
)
_OPERATORS_BACK = str.maketrans(
    {kept: operator for operator, kept in (*_KEPT_OPERATORS.items(), *_KEPT_BOUNDS.items())}
)
_GLUED = re.compile(
    rf"(?<=\d)(?=[^\W\d_]|[{_SYMBOLS}])|(?<=[{_SYMBOLS}])(?=[\w{_KEPT_MINUS}{_KEPT_POINT}])"
)
# A text without any of these has nothing for _GLUED to split.
_GLUE_HINT = re.compile(rf"[\d{_SYMBOLS}]")
_LEADING_ARTICLE = re.compile(r"^(?:the|an|a) (?=\w\w)")
#: HTML character references ("&gt;", "&#62;"), read as the characters they stand for.
_CHARACTER_REFERENCE = re.compile(r"&(?:[A-Za-z]{2,8}|#\d{1,7}|#[xX][0-9A-Fa-f]{1,6});")
#: HTML tags that format an answer's text (a chat model's output is often rich text).
_MARKUP_TAG = re.compile(
    r"</?(?:b|i|u|s|em|strong|mark|small|big|sup|sub|code|tt|pre|kbd|samp|var|span|div|p|br"
    r"|hr|li|ul|ol|dl|dt|dd|h[1-6]|td|tr|th|table|thead|tbody|blockquote|q|font|a|del|ins)"
    r"(?:\s[^<>]{0,200})?\s?/?>",
    re.IGNORECASE,
)

#: Units written several ways, and the one spelling each is normalised to. They are
#: matched after case folding, punctuation removal and the hyphen step, so
#: "kilowatt-hours" arrives as "kilowatthours" (joined form) and "kilowatt hours" (spaced).
UNIT_SPELLINGS: dict[str, tuple[str, ...]] = {
    "%": ("percent", "per cent", "pct"),
    "c": ("degrees celsius", "degree celsius", "celsius", "degrees c", "degree c", "deg c"),
    "f": ("degrees fahrenheit", "degree fahrenheit", "fahrenheit", "degrees f", "deg f"),
    "wh": ("watt hours", "watt hour", "watthours", "watthour"),
    "kwh": ("kilowatt hours", "kilowatt hour", "kilowatthours", "kilowatthour"),
    "mwh": ("megawatt hours", "megawatt hour", "megawatthours", "megawatthour"),
    "gwh": ("gigawatt hours", "gigawatt hour", "gigawatthours", "gigawatthour"),
    "km": ("kilometres", "kilometre", "kilometers", "kilometer"),
    "cm": ("centimetres", "centimetre", "centimeters", "centimeter"),
    "mm": ("millimetres", "millimetre", "millimeters", "millimeter"),
    "m": ("metres", "metre", "meters", "meter"),
    "kg": ("kilograms", "kilogram", "kilos", "kilo"),
    "g": ("grams", "gram"),
    "mph": ("miles per hour", "miles an hour", "mile per hour"),
    "mi": ("miles", "mile"),
    "ft": ("feet", "foot"),
}
UNIT_CANONICAL = {
    spelling: canonical for canonical, spellings in UNIT_SPELLINGS.items() for spelling in spellings
}
# A text without any of these cannot hold a unit spelling: the pass is skipped.
UNIT_HINTS = (
    "per", "pct", "deg", "celsius", "fahrenheit", "watt", "met", "gram", "kilo", "mile",
    "feet", "foot",
)  # fmt: skip
_UNIT_ALTERNATIVES = "|".join(map(re.escape, sorted(UNIT_CANONICAL, key=len, reverse=True)))
# Only after a number: "Celsius" alone is a name, and "C" an option letter or a vitamin.
_UNIT_SPELLING = re.compile(r"(?<=\d )(?:" + _UNIT_ALTERNATIVES + r")\b")
# The words after a number, normalised apart from it, begin with its unit.
UNIT_SPELLING_FIRST = re.compile(r"^(?:" + _UNIT_ALTERNATIVES + r")\b")


@dataclass(frozen=True)
class NormalForms:
    """The two normal forms of a text (see the module docstring, step 4).

    Attributes:
        joined: Hyphens touching letters deleted: ``"net-zero"`` -> ``"netzero"``.
        spaced: Those hyphens read as spaces: ``"net-zero"`` -> ``"net zero"``.
    """

    joined: str
    spaced: str

    def equals(self, other: NormalForms) -> bool:
        """Whether two texts are equal in either normal form."""
        return self.joined == other.joined or self.spaced == other.spaced


def prepare(text: str) -> str:
    """Steps 1 and 2: markup tags, NFKC, straight quotes, one dash, case folded, stripped.

    Example:
        >>> prepare("  \u201cNet\u2013Zero\u201d CO\u2082  ")
        '"net-zero" co2'
    """
    if "<" in text:
        text = _MARKUP_TAG.sub(" ", text)
    if "&" in text:
        text = _CHARACTER_REFERENCE.sub(lambda found: html.unescape(found.group()), text)
    if not text.isascii():  # an O(1) test: superscripts are rare, sub() is not free
        text = _SUPERSCRIPT_AFTER_DIGIT.sub("^\\g<0>", text)
    return unicodedata.normalize("NFKC", text).translate(_CHARACTER_MAP).casefold().strip()


def normal_forms(text: str) -> NormalForms:
    """The joined and spaced normal forms of ``text`` (the whole pipeline above).

    Each step is one linear pass, and the passes a text cannot need (no comma, no
    hyphen, no period) are skipped.

    Example:
        >>> forms = normal_forms("The Net-Zero target: 3,420 tCO2e (25°C)")
        >>> forms.joined
        'netzero target 3420 tco2 e 25 c'
        >>> forms.spaced
        'net zero target 3420 tco2 e 25 c'
        >>> normal_forms("82%") == normal_forms("82 per cent")
        True
    """
    text = prepare(text).replace("'", "")
    if "," in text:
        text = _THOUSANDS_COMMA.sub("", text)
    if "." in text:
        text = _JOINING_PERIOD.sub("", _DECIMAL_POINT.sub(_KEPT_POINT, text))
    hyphens = 0
    if "-" in text:
        if text.startswith("-"):
            text = _LEADING_SIGN.sub("-", text)
        text = _SIGN_MINUS.sub(_KEPT_MINUS, text)
        text, hyphens = _JOINING_HYPHEN.subn(_JOINER, text)
    for operator, pattern in _OPERATOR_BETWEEN_DIGITS.items():
        if operator in text:
            text = pattern.sub(f" {_KEPT_OPERATORS[operator]} ", text)
    for bound, pattern in _BOUND_BEFORE_NUMBER.items():
        if bound in text:
            text = pattern.sub(f" {_KEPT_BOUNDS[bound]} ", text)
    if "+" in text:
        text = _PLUS_AFTER_NUMBER.sub(f" {_KEPT_BOUNDS['+']} ", text)
    if _GLUE_HINT.search(text):
        text = _GLUED.sub(" ", text)
    text = _OTHER_PUNCTUATION.sub(" ", text).replace(_KEPT_MINUS, "-").replace(_KEPT_POINT, ".")
    text = text.translate(_OPERATORS_BACK)
    if not hyphens:
        joined = spaced = _tidy(text)
        return NormalForms(joined, spaced)
    return NormalForms(_tidy(text.replace(_JOINER, "")), _tidy(text.replace(_JOINER, " ")))


def _tidy(text: str) -> str:
    """Step 7, and the unit spellings of step 6, on a text whose hyphens are decided."""
    text = " ".join(text.split())
    if any(hint in text for hint in UNIT_HINTS):
        text = _UNIT_SPELLING.sub(lambda found: UNIT_CANONICAL[found.group()], text)
    return _LEADING_ARTICLE.sub("", text, count=1)


_COMBINING_MARK = re.compile(r"[\u0300-\u036f]")
_POSSESSIVE = re.compile(r"(?<=\w)['\u2019]s\b")
_THE = re.compile(r"\bthe\b", re.IGNORECASE)
#: "&" as a word, not an HTML character reference ("&gt;").
_AMPERSAND = re.compile(r"&(?![#a-zA-Z0-9]+;)")
#: A footnote number glued to a word ("Becquerel1.", "1780s1."), or in brackets ("[2]").
_FOOTNOTE = re.compile(r"(?<=[^\W\d_]{2})\d{1,2}(?=[\s.,;:!?)]|$)|\[\d{1,3}\]")


#: Names written short, and the long form both sides are searched in: "U.S." and "USA"
#: are "United States" (in capitals only: "us" is a pronoun), "Mt. Everest" is "Mount
#: Everest", "St. Louis" "Saint Louis" (before a capitalised word only: "Baker St." is a
#: street).
_SHORT_NAMES = (
    (re.compile(r"(?<![\w.])(?:U\.S\.A\.?|U\.S\.|U\.S|USA|US)(?!\w)"), "United States"),
    (re.compile(r"\bUnited States of America\b"), "United States"),
    (re.compile(r"(?<![\w.])(?:U\.K\.|U\.K|UK)(?!\w)"), "United Kingdom"),
    (re.compile(r"\bMt\.?\s+(?=[A-Z])"), "Mount "),
    (re.compile(r"\bSt\.?\s+(?=[A-Z])"), "Saint "),
    (re.compile(r"\bFt\.?\s+(?=[A-Z])"), "Fort "),
)
_SHORT_NAME_HINT = re.compile(r"U\.?[SK]|United States|[MSF]t\b")


def search_text(text: str, *, footnotes: bool = False) -> str:
    """``text`` as the gold is looked for in it: accents dropped (``"Beyoncé"`` is
    ``"Beyonce"``), ``&`` read as ``and``, a possessive ``'s`` and the word ``the``
    deleted, short names written long (``"U.S."``, ``"Mt. Everest"``:
    :data:`_SHORT_NAMES`), number words in digits (``"sixteenth"`` is ``"16th"``), and
    with ``footnotes`` the footnote numbers that chat assistants glue to words
    (``"Becquerel1."``, ``"[2]"``; for outputs searched for a gold without digits).

    Example:
        >>> search_text("It was Becquerel1, Beyoncé's friend.", footnotes=True)
        'It was Becquerel, Beyonce friend.'
    """
    if not text.isascii():
        # Canonical decomposition only: "é" is "e" and a mark, but "²" stays "²".
        text = _COMBINING_MARK.sub("", unicodedata.normalize("NFD", text))
    if "&" in text:
        text = _AMPERSAND.sub(" and ", text)
    if footnotes:
        text = _FOOTNOTE.sub("", text)
    if "'" in text or "\u2019" in text:
        text = _POSSESSIVE.sub("", text)
    if _SHORT_NAME_HINT.search(text):
        for pattern, long_form in _SHORT_NAMES:
            text = pattern.sub(long_form, text)
    return digits_for_words(_THE.sub(" ", text))
