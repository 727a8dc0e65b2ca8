"""Normal forms of short answers: text (the normalised tier) and numbers (the numeric one).

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
   ``"degrees Celsius"`` -> ``"c"``, ``"kilowatt hours"`` -> ``"kwh"``);
7. whitespace collapsed, and a leading article (``the``, ``a``, ``an``) dropped when a
   word of two or more characters follows it (the SQuAD v1.1 evaluation script drops
   articles everywhere; only the leading one is dropped here, so that ``"vitamin a"``
   keeps its ``a`` and the options ``"a, b"`` do not become ``"b"``).

Numbers (:func:`parse_number`, :func:`find_single_number`) are read as exact
:class:`~decimal.Decimal` values, so a tolerance of 0.01 accepts ``12.81`` against
``12.8`` without binary rounding deciding the boundary. Accepted: signs, thousands
separators (``"3,420"``), decimals, scientific notation (``"1.2e3"``), a currency
symbol, a percent sign or word, a scale word (``thousand``, ``million``, ``billion``,
``trillion``, ``bn``) and a short unit (at most three words, e.g. ``"tCO2e"``,
``"kWh per year"``). Not accepted, by design: decimal commas (``"12,8"`` is ambiguous
with a thousands separator), spaces and underscores as thousands separators (``"1_000"``
is Python's notation, not an answer's; the text normal form reads it as ``"1 000"``),
exponents of more than 4 digits, ranges and several numbers. A number that is not
accepted is no number at all, never a piece of one: ``"1_000"`` and ``"1e99999"`` are
not 1. A number whose digits written out would be more than :data:`MAX_DIGITS` is shown
with an exponent (``"1e9999"`` as ``1e+9999``).

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
from decimal import Context, Decimal

from opik_semantic_metrics.semantic.stopwords import ENGLISH_STOP_WORDS

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
_BOUND_SYMBOLS = ("<", ">", "\u2264", "\u2265", "\u2a7d", "\u2a7e")
_KEPT_BOUNDS = {
    **{bound: chr(0xE007 + index) for index, bound in enumerate(_BOUND_SYMBOLS)},
    "+": "\ue00d",
}
# By the time bounds are read, a sign and a decimal point are their stand-ins.
_BOUND_BEFORE_NUMBER = {
    bound: re.compile(rf"{re.escape(bound)}(?=\s?[-.{_KEPT_MINUS}{_KEPT_POINT}]?\d)")
    for bound in _BOUND_SYMBOLS
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
_CURRENCY = f"[{CURRENCY_SIGNS}]"
_SYMBOLS = "%" + CURRENCY_SIGNS
# A superscript number right after a digit is an exponent ("10\u00b2" is 100): a caret
# goes between them before NFKC turns the superscript into a plain digit.
_SUPERSCRIPT_AFTER_DIGIT = re.compile(r"[\u2070\u00b9\u00b2\u00b3\u2074-\u207b](?<=\d.)")
_THOUSANDS_COMMA = re.compile(r",(?<=\d,)(?=\d{3}(?!\d))")
# A sign: a minus before a number, but not after a word (a hyphen), except the "e" of an
# exponent ("1e-3"); at the start, a space may stand between the sign and the number.
_SIGN_MINUS = re.compile(rf"-(?={_CURRENCY}?\.?\d)(?:(?<![\w.]-)|(?<=\de-))")
_LEADING_SIGN = re.compile(rf"^-\s+(?={_CURRENCY}?\.?\d)")
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
}
_UNIT_CANONICAL = {
    spelling: canonical for canonical, spellings in UNIT_SPELLINGS.items() for spelling in spellings
}
# A text without any of these cannot hold a unit spelling: the pass is skipped.
_UNIT_HINTS = ("per", "pct", "deg", "celsius", "fahrenheit", "watt")
_UNIT_ALTERNATIVES = "|".join(map(re.escape, sorted(_UNIT_CANONICAL, key=len, reverse=True)))
# Only after a number: "Celsius" alone is a name, and "C" an option letter or a vitamin.
_UNIT_SPELLING = re.compile(r"(?<=\d )(?:" + _UNIT_ALTERNATIVES + r")\b")
# The words after a number, normalised apart from it, begin with its unit.
_UNIT_SPELLING_FIRST = re.compile(r"^(?:" + _UNIT_ALTERNATIVES + r")\b")


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
    if any(hint in text for hint in _UNIT_HINTS):
        text = _UNIT_SPELLING.sub(lambda found: _UNIT_CANONICAL[found.group()], text)
    return _LEADING_ARTICLE.sub("", text, count=1)


# --- numbers ---------------------------------------------------------------------------

#: Enough digits for any real answer, and a bound on the cost of exact arithmetic.
MAX_DIGITS = 60
#: Whole-text numbers longer than this are not numbers (a quick bail-out for long texts).
MAX_NUMBER_TEXT = 120
#: Words after a number that make the text something other than one number with a unit.
_NOT_A_UNIT = frozenset(
    {"and", "or", "to", "than", "more", "less", "between", "vs", "versus", "not", "no", "nor"}
)
#: Words just before a number that make a sentence bound or negate it, not state it.
_BOUNDS_BEFORE = frozenset(
    {"not", "no", "nor", "never", "than", "least", "most", "over", "under", "above", "below"}
    | {"fewer", "greater", "exceeding", "exceeds", "beyond", "except", "maximum", "minimum"}
    # Contractions lose their apostrophe in normal form: "isn't" is "isnt".
    | {"isnt", "arent", "wasnt", "werent", "doesnt", "dont", "didnt", "cant", "cannot"}
)
#: Phrases just before or just after a number that bound or negate it ("up to 5",
#: "not equal to 5", "5 at most").
_BOUNDING_PHRASES_BEFORE = (("up", "to"), ("not", "equal", "to"))
_BOUNDING_PAIRS_AFTER = frozenset({("at", "most"), ("at", "least")})
#: Words just after a number that bound it ("5 maximum"; not "min", which is minutes).
_BOUNDS_AFTER = frozenset({"maximum", "minimum"})
_SCALES = {
    "thousand": Decimal(10) ** 3,
    "million": Decimal(10) ** 6,
    "billion": Decimal(10) ** 9,
    "bn": Decimal(10) ** 9,
    "trillion": Decimal(10) ** 12,
}
# Exact arithmetic with room for MAX_DIGITS digits, a 4-digit exponent and a scale.
_DECIMAL_CONTEXT = Context(prec=MAX_DIGITS + 20, Emax=10**6, Emin=-(10**6))

# Bounded repeats: a run of digits longer than any answer's fails after a few steps
# instead of being matched and backtracked over in full.
_DIGITS = r"(?:\d{1,3}(?:,\d{3}){1,20}(?:\.\d{1,60})?|\d{1,60}(?:\.\d{1,60})?|\.\d{1,60})"
# Digits and exponent are read in full or not at all: never a piece of "1.2.3", "12,8" or
# "1_000" (an underscore separates, as in the text normal form), nor the mantissa of an
# exponent of more than 4 digits ("1e99999" is no number, not 1). A product or size
# ("1920x1080", "2x4") and a hexadecimal number ("0x10", "0xff") are no number either:
# read as 1920, 2 or 0 with a unit, they would match a bare "1920", "2" or "0".
_MANTISSA_AND_EXPONENT = (
    rf"(?P<digits>{_DIGITS})(?:e(?P<exponent>[-+]?\d{{1,4}}))?"
    r"(?![.,_]?\d|e[-+]?\d|x\d|(?<=(?<![\w.,])0)x[a-f])"
)
_WHOLE_NUMBER = re.compile(
    rf"(?P<currency>{_CURRENCY})?\s*(?P<sign>[-+])?\s*(?P<currency_after_sign>{_CURRENCY})?\s*"
    rf"{_MANTISSA_AND_EXPONENT}(?P<rest>.*)",
    re.DOTALL,
)
_PERCENT_WORD = re.compile(r"\s*(?:%|percent\b|per cent\b|pct\b)")
_SCALE_WORD = re.compile(r"\s*(?P<scale>thousand|million|billion|bn|trillion)\b")
# Nor is a number the exponent of one whose exponent is too long ("1e-12345": not 12345).
_NUMBER_IN_TEXT = re.compile(
    rf"(?<![\w.,])(?<!\de[-+])(?P<sign>[-+])?(?P<currency>{_CURRENCY})?{_MANTISSA_AND_EXPONENT}"
    rf"(?P<scale>\s*(?:thousand|million|billion|bn|trillion)\b)?"
    rf"(?P<percent>\s*(?:%|percent\b|per cent\b|pct\b))?"
)


@dataclass(frozen=True)
class ParsedNumber:
    """A number read from an answer.

    Attributes:
        value: The exact value, scale word applied (``"19.5 million"`` -> 19500000); a
            percent keeps its number (``"82%"`` -> 82).
        percent: Written with ``%`` or a percent word.
        unit: The unit after the number in normal form (``""`` when there is none);
            a currency symbol counts as a unit.
        scaled: Written with a scale word (``"26 million"``).
    """

    value: Decimal
    percent: bool = False
    unit: str = ""
    scaled: bool = False

    def __str__(self) -> str:
        text = _plain(self.value) + ("%" if self.percent else "")
        return f"{text} {self.unit}" if self.unit else text


def _plain(value: Decimal) -> str:
    """A Decimal without trailing zeros, and without exponent notation unless the digits
    written out would be more than an answer may have: 82, 12.8, 0.0001, 1e+9999.

    The exponent keeps what a reason or metadata shows of ``"1e9999"`` short and true;
    cut short, its 10,000 digits would read as some other number.
    """
    value = value.normalize(_DECIMAL_CONTEXT)
    if abs(value.adjusted()) >= MAX_DIGITS:
        return format(value, "e")
    text = format(value, "f")
    return text if text != "-0" else "0"


def _decimal(sign: str | None, digits: str, exponent: str | None) -> Decimal | None:
    digits = digits.replace(",", "")
    if len(digits) > MAX_DIGITS:
        return None
    value = Decimal(digits)
    if exponent is not None:
        value = _DECIMAL_CONTEXT.scaleb(value, int(exponent))
    return -value if sign == "-" else value


def number_from_value(value: int | float) -> ParsedNumber | None:
    """A Python int or finite float as a number (floats through their shortest repr).

    Example:
        >>> str(number_from_value(82.0)), str(number_from_value(3420))
        ('82', '3420')
    """
    if isinstance(value, int):
        if abs(value) >= 10**MAX_DIGITS:
            return None
        return ParsedNumber(Decimal(value))
    return ParsedNumber(Decimal(repr(value)))


def parse_number(text: str) -> ParsedNumber | None:
    """Read ``text`` as one number with an optional unit, or return ``None``.

    Example:
        >>> str(parse_number(" 3,420 ")), str(parse_number("82%")), str(parse_number("-1.2E3"))
        ('3420', '82%', '-1200')
        >>> str(parse_number("$19.5 million")), str(parse_number("12.8 tCO2e"))
        ('19500000 $', '12.8 tco2 e')
        >>> parse_number("1 and 2") is None, parse_number("Scope 1") is None
        (True, True)
    """
    text = prepare(text)
    if len(text) > MAX_NUMBER_TEXT:
        return None
    found = _WHOLE_NUMBER.fullmatch(text)
    if found is None:
        return None
    value = _decimal(found["sign"], found["digits"], found["exponent"])
    if value is None:
        return None
    rest = found["rest"]
    if rest.lstrip().startswith("+"):
        return None  # "5+" is five or more
    percent = _PERCENT_WORD.match(rest)
    if percent is not None:
        rest = rest[percent.end() :]
    scale = _SCALE_WORD.match(rest)
    if scale is not None:
        value = _DECIMAL_CONTEXT.multiply(value, _SCALES[scale["scale"]])
        rest = rest[scale.end() :]
    unit_words = _words_after_number(rest)
    if len(unit_words) > 3 or any(
        word in _NOT_A_UNIT or word in _BOUNDS_AFTER or is_number_word(word) for word in unit_words
    ):
        return None
    if len(unit_words) > 1 and any(map(_is_stop_word, unit_words)):
        # "82% of sites" and "12 sites were audited" are phrases about the number, not
        # units: read as sentences, whose unit ends at the first stop word.
        return None
    currency = found["currency"] or found["currency_after_sign"]
    unit = " ".join([*([currency] if currency else []), *unit_words])
    return ParsedNumber(value, percent=percent is not None, unit=unit, scaled=scale is not None)


def _words_after_number(text: str) -> list[str]:
    """The normal form of the words after a number, a unit spelling at their start made
    canonical ("25.0 degrees Celsius" is 25.0 c: normalised apart from the number, the
    spelling rule could not see the digit before it)."""
    words = normal_forms(text).joined
    if any(hint in words for hint in _UNIT_HINTS):
        words = _UNIT_SPELLING_FIRST.sub(lambda found: _UNIT_CANONICAL[found.group()], words)
    return words.split()


def is_number_word(word: str) -> bool:
    """Whether a word of a normal form is a plain number: digits, one point, a sign.

    Example:
        >>> is_number_word("-12.5"), is_number_word("1.2.3"), is_number_word("scope1")
        (True, False, False)
    """
    return word.lstrip("-").replace(".", "", 1).isdigit()


def _is_stop_word(word: str) -> bool:
    # NLTK's list holds the letters of contractions ("t", "s", "m", "d"): after a number
    # they are tonnes, seconds, metres and days.
    return len(word) > 1 and word in ENGLISH_STOP_WORDS


@dataclass(frozen=True)
class NumberInText:
    """A number found in a longer text (see :func:`numbers_in_text`).

    Attributes:
        number: The number, with its unit, or ``None`` when its digits cannot be read in
            full (more than :data:`MAX_DIGITS`).
        bounded: The text bounds or negates it ("not 5", "less than 5", "5+").
        label: It numbers a thing rather than counting or measuring one ("ISO 14001",
            "Scope 3", "SDG 13", "fiscal year 2022": after one of :data:`LABEL_WORDS`).
    """

    number: ParsedNumber | None
    bounded: bool
    label: bool = False


#: Words after which a number is a label ("Scope 3"), not a quantity.
LABEL_WORDS = frozenset(
    {"scope", "category", "iso", "sdg", "tier", "phase", "level", "article", "section"}
    | {"page", "pages", "table", "figure", "chapter", "annex", "appendix", "version", "goal"}
    | {"cop", "step", "item", "class", "grade", "type", "model", "unit", "building", "site"}
    | {"year", "fy"}
)


#: Most numbers :func:`numbers_in_text` reads from one text.
MAX_NUMBERS_IN_TEXT = 50


def numbers_in_text(text: str) -> tuple[NumberInText, ...] | None:
    """Every number in a text, in order, each with what it is a number of; ``None`` for a
    text of more than :data:`MAX_NUMBERS_IN_TEXT` numbers.

    Read with each number: a sign and currency symbol before it, percent and scale words
    after it, and as its unit the words that follow up to the first stop word or number
    (at most three: "12 kg of flour" is 12 kg, "12 sites were audited" 12 sites). A number
    that the text bounds or negates ("not 5", "isn't 5", "less than 5", "up to 5", "5 at
    most", ">5", "5+", "82% or more") is marked ``bounded``.

    Example:
        >>> [str(found.number) for found in numbers_in_text("In 2020, 82% of 120 sites.")]
        ['2020', '82%', '120 sites']
        >>> [found.bounded for found in numbers_in_text("not 5, but 6")]
        [True, False]
    """
    text = prepare(text)
    found_numbers: list[NumberInText] = []
    for found in _NUMBER_IN_TEXT.finditer(text):
        if len(found_numbers) == MAX_NUMBERS_IN_TEXT:
            return None
        found_numbers.append(_read_number_in_text(text, found))
    return tuple(found_numbers)


def _read_number_in_text(text: str, found: re.Match[str]) -> NumberInText:
    value = _decimal(found["sign"], found["digits"], found["exponent"])
    if value is None:
        return NumberInText(None, bounded=False)
    if found["scale"]:
        value = _DECIMAL_CONTEXT.multiply(value, _SCALES[found["scale"].strip()])
    before = tuple(normal_forms(text[: found.start()]).joined.split()[-3:])
    after = _words_after_number(text[found.end() :])
    label = bool(before) and before[-1] in LABEL_WORDS and not found["sign"]
    bounded = bool(
        _BOUNDS_BEFORE.intersection(before[-2:])
        or any(before[-len(phrase) :] == phrase for phrase in _BOUNDING_PHRASES_BEFORE)
        or _NOT_A_UNIT.intersection(after[:1])
        or _BOUNDS_AFTER.intersection(after[:1])
        or tuple(after[:2]) in _BOUNDING_PAIRS_AFTER
        or text[: found.start()].rstrip().endswith(_BOUND_SYMBOLS)
        or text[found.end() :].lstrip().startswith("+")
    )
    unit_words = []
    # A percent is its own unit: "15% compared with" is 15%, not 15% "compared".
    for word in after[:3] if not found["percent"] else ():
        if _is_stop_word(word) or is_number_word(word):
            break
        unit_words.append(word)
    unit = " ".join([*([found["currency"]] if found["currency"] else []), *unit_words])
    number = ParsedNumber(
        value, percent=bool(found["percent"]), unit=unit, scaled=bool(found["scale"])
    )
    return NumberInText(number, bounded, label)


def find_single_number(text: str) -> ParsedNumber | None:
    """The only number in a longer text, with what it is a number of, else ``None``.

    Used for ``Int`` and ``Float`` answers given as a sentence; read as
    :func:`numbers_in_text` reads it, so that a unit, as in a short answer, must agree
    with the reference's. A number that a sentence bounds or negates is not its answer:
    ``None``.

    Example:
        >>> str(find_single_number("About 82 percent of sites were audited."))
        '82%'
        >>> str(find_single_number("It weighs 12 kg."))
        '12 kg'
        >>> find_single_number("In 2020, 82% of sites were audited.") is None
        True
        >>> find_single_number("It is less than 5.") is None
        True
    """
    text = prepare(text)
    found = None
    for candidate in _NUMBER_IN_TEXT.finditer(text):
        if found is not None:
            return None
        found = candidate
    if found is None:
        return None
    single = _read_number_in_text(text, found)
    return None if single.bounded else single.number


#: Scale words a question may name, as :func:`scale_named` reads them.
_QUESTION_SCALE = re.compile(r"\b(thousand|million|billion|trillion)s?\b|\b(bn)\b")


def scale_named(question: str | None) -> Decimal | None:
    """The one scale word a question names ("in millions", "how many million hectares"),
    as a factor; ``None`` when it names none or several.

    Example:
        >>> scale_named("How many million hectares are forest?")
        Decimal('1000000')
        >>> scale_named("What was the revenue?") is None
        True
    """
    if not isinstance(question, str) or len(question) > MAX_QUESTION_TEXT:
        return None
    named = {first or second for first, second in _QUESTION_SCALE.findall(prepare(question))}
    if len(named) != 1:
        return None
    return _SCALES[named.pop()]


#: Longest question read for a scale word.
MAX_QUESTION_TEXT = 5_000


def numbers_match(
    first: ParsedNumber,
    second: ParsedNumber,
    *,
    tolerance: Decimal,
    relative_tolerance: Decimal | None = None,
    percent_as_fraction: bool = False,
    scale: Decimal | None = None,
) -> bool:
    """Whether two numbers are the same answer.

    Units must agree when both numbers have one (a percent counts as the unit
    ``percent``); a bare number agrees with any unit, as a model often drops it
    (``"82.0"`` for ``"82%"``). Values agree when ``|a - b| <= max(tolerance,
    relative_tolerance * max(|a|, |b|))``. With ``percent_as_fraction``, a percent and a
    bare number also agree when the bare number times 100 does (``"82%"``, ``"0.82"``).
    With a ``scale`` (the one a question names, :func:`scale_named`), a number written
    without a scale word also stands for itself times the scale (``"26"`` is also 26
    million when the question asks "in millions").

    Example:
        >>> tolerance = Decimal("0.01")
        >>> numbers_match(parse_number("12.8"), parse_number("12.81"), tolerance=tolerance)
        True
        >>> numbers_match(parse_number("1.3%"), parse_number("13%"), tolerance=tolerance)
        False
    """
    first_unit = _unit_of(first)
    second_unit = _unit_of(second)
    if first_unit and second_unit and first_unit != second_unit:
        return False
    values = [(first.value, second.value)]
    if percent_as_fraction and first.percent != second.percent:
        bare, percent = (second, first) if first.percent else (first, second)
        if not _unit_of(bare):
            values.append((percent.value, _DECIMAL_CONTEXT.multiply(bare.value, Decimal(100))))
    if scale is not None:
        if not first.scaled:
            values.append((_DECIMAL_CONTEXT.multiply(first.value, scale), second.value))
        if not second.scaled:
            values.append((first.value, _DECIMAL_CONTEXT.multiply(second.value, scale)))
    return any(
        _within(a, b, tolerance=tolerance, relative_tolerance=relative_tolerance) for a, b in values
    )


def _unit_of(number: ParsedNumber) -> str:
    return " ".join(filter(None, ["percent" if number.percent else "", number.unit]))


def _within(
    first: Decimal, second: Decimal, *, tolerance: Decimal, relative_tolerance: Decimal | None
) -> bool:
    difference = abs(_DECIMAL_CONTEXT.subtract(first, second))
    allowed = tolerance
    if relative_tolerance is not None:
        scale = max(abs(first), abs(second))
        allowed = max(allowed, _DECIMAL_CONTEXT.multiply(relative_tolerance, scale))
    return difference <= allowed
